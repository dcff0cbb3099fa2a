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


# ---- judges (LLM client, llama.cpp server) ------------------------------------------------------
# One real OpenAI-compatible server per test session: llama-cpp-python's server on the bundled GGUF, checked
# around every test that uses it (a crash is one named failure and a fresh server, tests/llama_server_plugin.py).
from llama_server_plugin import llama_server, pytest_runtest_makereport  # noqa: E402,F401


# ---- backends (bundled model) -------------------------------------------------------------------
# Before any test module loads torch: OpenMP threads must not spin-wait on a shared, busy CPU.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(scope="session")
def bundled_model_dir() -> Path:
    """The dense safetensors copy of the bundled SmolLM2 (built once per machine, ~15-40 s; then cached)."""
    from abstain.backends import bundled_model_dir as _bundled_model_dir

    return _bundled_model_dir()


@pytest.fixture(scope="session")
def bundled_backend(bundled_model_dir):
    """One ``make_backend("bundled")`` (HFBackend, batch_size 32, 2 threads) shared by the whole session.

    Its ``stats`` accumulate across tests: compare before/after, not absolute values.
    """
    from abstain.backends import make_backend

    backend = make_backend("bundled")
    yield backend
    backend.close()
