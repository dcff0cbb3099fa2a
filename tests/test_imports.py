"""Every module imports cleanly in a fresh interpreter, and the package's imports form no cycle and point down.

A cycle hides until a user imports the modules in an unlucky order (``from abstain.scoring import
score_rows`` once failed that way), so: each ``abstain.*`` module is imported first, alone, in
its own subprocess; and the graph of imports inside the package is acyclic — counting imports inside
functions too (a lazy import is a dependency all the same: two modules that need each other are one
module split in two), only ``if TYPE_CHECKING:`` blocks left out (they never run). On the same graph, no module
imports a higher layer of :data:`LAYERS` (docs/design.md's dependency direction), and the package root holds only
the shared core (:data:`ROOT_MODULES`), every other unit a package.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "abstain"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = sorted(_module_name(p) for p in PACKAGE.rglob("*.py"))


def _is_package(name: str) -> bool:
    return (SRC / Path(*name.split(".")) / "__init__.py").exists()


def _resolve(current: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    base = base if _is_package(current) else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def package_imports(name: str) -> set[str]:
    """abstain modules that ``name`` imports anywhere — at module level or inside functions and classes —
    except under ``if TYPE_CHECKING:``."""
    path = SRC / Path(*name.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    known = set(MODULES)

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            for child in (node.orelse if _type_checking(node) else [*node.body, *node.orelse]):
                self.visit(child)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(a.name for a in node.names if a.name in known)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            target = _resolve(name, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)

    Visitor().visit(tree)
    # Python initializes every parent package before a submodule: importing abstain.judges.base from
    # outside abstain.judges runs abstain/judges/__init__.py first (the cycle that once broke
    # `from abstain.scoring import score_rows`). From inside the package the parent is already set up.
    for target in list(found):
        parts = target.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if not (name == parent or name.startswith(parent + ".")):
                found.add(parent)
    return {m for m in found if m in known and m != name}


def test_the_package_is_found():
    assert "abstain.scoring" in MODULES and "abstain.outcomes" in MODULES and len(MODULES) > 60


#: the layers, lowest first: a module may import its own layer and those below, never one above. A module is in the
#: layer of the longest name here that is it or a package holding it (``abstain.backends.verbosity`` below the other backends).
LAYERS: tuple[tuple[str, ...], ...] = (
    # the formats everything reads: the run folder and the probe file (abstain.records) import only the schema
    ("abstain.schema", "abstain.paths", "abstain.records"),
    ("abstain.parsing", "abstain.outcomes", "abstain.protocols", "abstain.llm", "abstain.backends.verbosity",
     "abstain.data.cues"),
    ("abstain.backends", "abstain.judges"),
    ("abstain.data", "abstain.scoring", "abstain.confidence"),
    ("abstain.metrics", "abstain.synth"),
    ("abstain.train",),  # never the report, the evaluation run or the command line
    ("abstain.report",),
    ("abstain.evaluation",),
    ("abstain.probing",),
    ("abstain.integrations",),
    ("abstain", "abstain.cli", "abstain.__main__"),  # abstain: its public names, each loaded on first use
)
#: what the package root holds besides packages: the shared core
ROOT_MODULES = {"__init__", "__main__", "schema", "parsing", "outcomes", "scoring", "paths"}


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer."""
    names = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    if module in names:
        return names[module]
    holders = [name for name in names if name != "abstain" and module.startswith(name + ".")]
    if not holders:
        raise KeyError(f"{module} is in no layer of tests/test_imports.py's LAYERS: add it there")
    return names[max(holders, key=len)]


def test_no_module_imports_a_higher_layer():
    upward = [f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
              for m in MODULES for t in sorted(package_imports(m)) if layer_of(t) > layer_of(m)]
    assert not upward, "\n".join(upward)


def test_the_root_holds_only_the_shared_core():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert modules == ROOT_MODULES, f"modules at the root besides the core: {sorted(modules - ROOT_MODULES)}"
    assert {"evaluation", "probing", "judges", "cli"} <= packages


def test_imports_form_no_cycle_lazy_ones_included():
    graph = {m: package_imports(m) for m in MODULES}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = 2

    for module in MODULES:
        if module not in state:
            walk(module)


def test_every_module_imports_first_in_a_fresh_interpreter():
    # tests/import_alone.py: each module in a fork of one process that holds the third-party libraries but no
    # abstain module (abstain's own import order is a fresh interpreter's)
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "import_alone.py"), *MODULES],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert sorted(r["module"] for r in results) == MODULES
    failures = [f"{r['module']}:\n{r['error']}" for r in results if r["code"] != 0]
    assert not failures, "\n\n".join(failures)


def test_light_modules_do_not_load_torch_or_a_judge_client():
    code = (
        "import sys, abstain, abstain.outcomes, abstain.parsing, abstain.metrics, abstain.scoring; "
        "heavy = [m for m in ('torch', 'transformers', 'trl') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
