"""Shared test set-up. Each area appends its fixtures in a clearly separated block below."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ABSTAIN_NO_PROGRESS", "1")
# A pytest-xdist worker starts with COLUMNS=80 in its environment, which rich would fix as the CLI consoles' width when
# they are made; without it they read the width when they print, as in one process (tests pass COLUMNS per call).
os.environ.pop("COLUMNS", None)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
BENCHMARKS = ROOT / "src" / "abstain" / "data" / "benchmarks"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def benchmarks_dir() -> Path:
    return BENCHMARKS


# ---- scheduling (pytest-xdist: `make test` runs 2 workers, --dist loadscope) ------------------------------------
# Each module is one unit of work: its module-scoped fixtures (a vLLM engine, a training run several tests inspect)
# are built once, on one worker, and a module's multi-process tests never run beside each other (two at once would
# hold ~20 GiB and fight for the same 2 cores). The long modules go first (the longest-processing-time-first rule:
# no worker is left with a long module at the end while the other idles); the rest keep their alphabetical order.
# (--dist loadgroup would group finer, but pytest-xdist 3.8 names a group by rewriting the test's node id, which
# pytest 9.2 no longer lets a plugin do: its groups are silently ignored.) Without xdist only the order changes.
# ABSTAIN_TEST_ORDER=random:SEED shuffles the modules and the tests within each (tests must not depend on order).
LONG_FIRST = (  # the longest modules on 2 workers (docs/development.md#where-the-time-goes), longest first
    "test_train_distributed", "test_vllm", "test_gpu_check", "test_train_sft_dpo", "test_eval_bundled", "test_harness",
    "test_train_grpo", "test_harness_generation", "test_abstentionbench", "test_train_policy", "test_confidence_eval",
    "test_readme", "test_imports", "test_train_resume", "test_harness_tasks", "test_backends_bundled",
)


def _module_of(item: pytest.Item) -> str:
    return Path(item.nodeid.split("::")[0]).stem


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order = os.environ.get("ABSTAIN_TEST_ORDER", "")
    if order.startswith("random:"):  # the independence check: modules, and the tests in each, shuffled by a seed
        import random

        rng = random.Random(order.partition(":")[2])
        rng.shuffle(items)
        first = {name: rng.random() for name in sorted({_module_of(item) for item in items})}
        items.sort(key=lambda item: first[_module_of(item)])  # a module's tests stay together, in shuffled order
        return
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(_module_of(item), len(rank)))  # stable sort


@pytest.hookimpl(trylast=True)  # after pytest's own teardown of the module's fixtures
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """At the end of a module, what its fixtures freed goes back to the system (glibc keeps freed heap otherwise: a
    worker that ran a vLLM engine and a few trainings held ~11 GiB, beside the other worker's training processes)."""
    if nextitem is None or _module_of(nextitem) != _module_of(item):
        import ctypes
        import gc

        gc.collect()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
            pass


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


# ---- a small model of the bundled one's kind (training mechanics) --------------------------------
#: the bundled SmolLM2's architecture (Llama, tied embeddings, its tokenizer and chat template) shrunk to 2 layers:
#: what sharding, resuming, checkpointing and precision tests check needs no trained weights, and a step of this
#: model costs a fraction of the 135M one's (its checkpoints ~25 MB instead of ~1.6 GB with the optimizer state)
SMALL = {"num_hidden_layers": 2, "hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 2,
         "num_key_value_heads": 1, "head_dim": 64}


@pytest.fixture(scope="session")
def small_model_dir(tmp_path_factory, bundled_model_dir) -> Path:
    """The bundled model's config shrunk by ``SMALL``, random weights (seeded), saved with the bundled tokenizer.

    A recipe takes it as ``model: <dir>`` (``--set model=<dir>``). Tests of what a trained model says keep the
    bundled model; tests of how training runs (processes, checkpoints, dtypes) use this one.
    """
    import shutil

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    out = tmp_path_factory.mktemp("small-model")
    config = AutoConfig.from_pretrained(bundled_model_dir)
    for key, value in SMALL.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"):
        if (bundled_model_dir / name).exists():
            shutil.copy(bundled_model_dir / name, out / name)
    return out
