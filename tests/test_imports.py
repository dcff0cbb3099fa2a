"""Every module imports cleanly in a fresh interpreter, and the package's imports form no cycle.

A cycle hides until a user imports the modules in an unlucky order (``from abstain.scoring import
score_rows`` once failed that way), so two checks: each ``abstain.*`` module is imported first, alone, in
its own subprocess; and the graph of imports inside the package is acyclic — counting imports inside
functions too (a lazy import is a dependency all the same: two modules that need each other are one
module split in two), only ``if TYPE_CHECKING:`` blocks left out (they never run).
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
