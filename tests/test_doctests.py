"""Every module's docstring examples run (they are the first documentation a reader tries)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import abstain

# modules whose import needs an optional extra that this machine lacks, or that start work on import
SKIP = {"abstain.cli.demo"}
MODULES = ["abstain"] + sorted(
    m.name for m in pkgutil.walk_packages(abstain.__path__, "abstain.")
    if m.name not in SKIP and ".data.judge_dev" not in m.name
)


def test_every_module_is_collected():
    assert {"abstain.schema", "abstain.parsing", "abstain.metrics.counts", "abstain.synth.exact"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} docstring example(s) failed"
