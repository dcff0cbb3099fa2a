"""Shared test set-up. Each area appends its fixtures in a clearly separated block below."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ABSTAIN_NO_PROGRESS", "1")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
BENCHMARKS = ROOT / "src" / "abstain" / "data" / "benchmarks"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def benchmarks_dir() -> Path:
    return BENCHMARKS


# ---- core (schema, parsing, metrics) ------------------------------------------------------------
