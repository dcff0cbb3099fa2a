"""The Makefile's first minutes on a new machine: a Python older than 3.11 is refused, saying so, before any venv is
made; every install step says first what it installs. Run on a copy of the Makefile in a temporary folder, with
stand-in Pythons that report a version and record what they are asked to run (nothing is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STAND_IN = """#!{python}
import sys
sys.version_info = {version!r}
sys.version = "{dotted} (a stand-in)"
if sys.argv[1:2] == ["-c"]:  # the Makefile's checks: run as that version
    exec(sys.argv[2])
else:  # anything else (python -m venv): recorded, never run
    with open("asked.log", "a") as log:
        log.write(" ".join(sys.argv[1:]) + "\\n")
    sys.exit(3)
"""


def _checkout(tmp_path: Path) -> Path:
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for version in ((3, 10, 12), (3, 12, 1)):
        dotted = ".".join(map(str, version))
        script = tmp_path / f"python{dotted}"
        script.write_text(STAND_IN.format(python=sys.executable, version=(*version, "final", 0), dotted=dotted))
        script.chmod(0o755)
    return tmp_path


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("target", ["install", "test"])
def test_a_python_older_than_3_11_is_refused_before_any_venv(tmp_path, target):
    folder = _checkout(tmp_path)
    run = _make(folder, target, "PYTHON=./python3.10.12")
    assert run.returncode != 0
    assert "abstain needs Python 3.11 or newer, and PYTHON=./python3.10.12 is 3.10.12" in run.stderr, run.stderr
    assert "make test PYTHON=python3.11" in run.stderr
    assert not (folder / "asked.log").exists()  # no `python -m venv` was run
    assert not (folder / ".venv").exists() and not (folder / ".venv-verl").exists()


def test_a_missing_python_is_named(tmp_path):
    run = _make(_checkout(tmp_path), "install", "PYTHON=./no-such-python")
    assert run.returncode != 0 and "PYTHON=./no-such-python is not found" in run.stderr, run.stderr


def test_a_new_enough_python_goes_on_to_make_the_venv_after_saying_so(tmp_path):
    folder = _checkout(tmp_path)
    run = _make(folder, "install", "PYTHON=./python3.12.1")
    assert run.returncode != 0  # the stand-in refuses to make a venv
    assert (folder / "asked.log").read_text() == "-m venv .venv\n"
    assert run.stdout.index("==> .venv: a new venv from ./python3.12.1") < run.stdout.index("-m venv .venv")


def test_every_install_step_is_announced():
    """Each recipe line that installs (pip install, a wheel build, a venv) has an ``==> what (~time)`` line before it
    in its recipe: pip runs --quiet, so without it a step is minutes of silence."""
    recipe: list[str] = []
    checked = 0
    for line in (ROOT / "Makefile").read_text().replace("\\\n", " ").splitlines():
        if not line.startswith("\t"):
            recipe = []
            continue
        if re.search(r"\$\((VERL_)?PIP\) (install|wheel)|-m venv", line):
            announced = [r for r in recipe if r.lstrip("\t").startswith('@echo "==> ')]
            assert announced and re.search(r"\(~[^)]*\)", announced[-1]), f"Makefile: {line.strip()!r} unannounced"
            checked += 1
        recipe.append(line)
    assert checked >= 14  # the venvs, pip, torch, abstain, llama.cpp, vLLM, the harnesses, veRL
