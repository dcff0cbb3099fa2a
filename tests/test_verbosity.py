"""Third-party engines are quiet unless asked: vLLM's, transformers' and torch's warnings show only with
``abstain eval --verbose`` or ``ABSTAIN_VERBOSE=1``; their errors always, and a level the user set is kept.

The vLLM test imports vLLM the way ``vllm:`` models do (:func:`abstain.backends.vllm._import_vllm`) in a fresh
process and builds the engine configuration of the bundled model as ``VLLMBackend`` asks for it (eager, chunked
prefill off): vLLM's own code then warns as it does at every engine start (Triton, chunked prefill, eager mode),
without loading weights (~12 s a process instead of ~50 s for an engine).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import warnings

import pytest
from typer.testing import CliRunner

from abstain.backends.verbosity import LIBRARIES, VERBOSE_ENV, quiet_third_party
from abstain.cli import app

#: the environment variables quiet_third_party may set (restored after each in-process test)
TOUCHED = (VERBOSE_ENV, "VLLM_LOGGING_LEVEL", "TRANSFORMERS_VERBOSITY", "TORCH_CPP_LOG_LEVEL")


@pytest.fixture
def clean_env(monkeypatch):
    """No verbosity setting of the user's; the variables and logger levels put back afterwards."""
    for name in TOUCHED:
        monkeypatch.delenv(name, raising=False)
    levels = {name: logging.getLogger(name).level for name in LIBRARIES}
    yield monkeypatch
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)


def _warns_from(module: str) -> bool:
    """Whether a FutureWarning raised in ``module``'s code shows under the filters now in place."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # what Python shows by default, once per place: here every time
        quiet_third_party()
        warnings.warn_explicit("deprecated", FutureWarning, f"{module.replace('.', '/')}.py", 1, module=module)
    return bool(seen)


def test_quiet_by_default_loud_when_asked_and_the_users_own_level_is_kept(clean_env):
    quiet_third_party()
    assert os.environ["VLLM_LOGGING_LEVEL"] == "ERROR" and os.environ["TRANSFORMERS_VERBOSITY"] == "error"
    assert logging.getLogger("vllm").level == logging.ERROR and logging.getLogger("torch").level == logging.ERROR
    assert not _warns_from("torch.distributed") and _warns_from("abstain.evaluation.run")  # abstain's own still show

    clean_env.setenv(VERBOSE_ENV, "1")  # a later call follows the switch, over its own earlier choice
    quiet_third_party()
    assert os.environ["VLLM_LOGGING_LEVEL"] == "WARNING" and logging.getLogger("vllm").level == logging.WARNING
    assert _warns_from("torch.distributed") and _warns_from("vllm.platforms")

    clean_env.delenv(VERBOSE_ENV)
    clean_env.setenv("VLLM_LOGGING_LEVEL", "DEBUG")  # the user's own choice
    quiet_third_party()
    assert os.environ["VLLM_LOGGING_LEVEL"] == "DEBUG" and os.environ["TRANSFORMERS_VERBOSITY"] == "error"


def test_eval_verbose_turns_the_switch_on_before_anything_runs(clean_env, tmp_path):
    r = CliRunner().invoke(app, ["eval", "--model", "bundled", "--data", str(tmp_path / "missing.jsonl"),
                                 "--out", str(tmp_path / "run"), "--verbose"])
    assert r.exit_code == 2 and "missing.jsonl" in r.output  # a clean input error, after the switch was set
    assert os.environ[VERBOSE_ENV] == "1" and os.environ["VLLM_LOGGING_LEVEL"] == "WARNING"
    clean_env.delenv(VERBOSE_ENV)
    r = CliRunner().invoke(app, ["eval", "--model", "bundled", "--data", str(tmp_path / "missing.jsonl"),
                                 "--out", str(tmp_path / "run")])
    assert r.exit_code == 2 and VERBOSE_ENV not in os.environ and os.environ["VLLM_LOGGING_LEVEL"] == "ERROR"
    assert "--verbose" in CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"}).output


ENGINE_CONFIG = """
from abstain.backends import bundled_model_dir
from abstain.backends.vllm import _import_vllm
_import_vllm()
from vllm.engine.arg_utils import EngineArgs
EngineArgs(model=str(bundled_model_dir()), enforce_eager=True, enable_chunked_prefill=False, dtype="float32",
           kv_cache_memory_bytes=1 << 30).create_engine_config()
print("configured")
"""


@pytest.mark.slow
def test_vllm_warns_only_when_verbose(bundled_model_dir):
    if importlib.util.find_spec("vllm") is None:
        if os.environ.get("ABSTAIN_REQUIRE_VLLM") == "1":
            raise RuntimeError("vllm is not installed but ABSTAIN_REQUIRE_VLLM=1: run `make install-vllm`")
        pytest.skip("vllm is not installed (make install-vllm)")
    env = {k: v for k, v in os.environ.items() if k not in TOUCHED}
    printed = {}
    for verbose in ("0", "1"):  # vLLM logs to stdout, Python warnings go to stderr: both are what a user sees
        done = subprocess.run([sys.executable, "-c", ENGINE_CONFIG], capture_output=True, text=True, timeout=300,
                              env={**env, VERBOSE_ENV: verbose})
        assert done.returncode == 0 and "configured" in done.stdout, done.stderr[-3000:]
        printed[verbose] = done.stdout + done.stderr
    loud = [line for line in printed["1"].splitlines() if " WARNING " in line]
    assert any("chunked prefill" in line for line in loud) and len(loud) >= 3, printed["1"][-3000:]
    assert "DeprecationWarning" in printed["1"]  # torch's, raised while vLLM loads
    assert printed["0"].split() == ["configured"], printed["0"][-3000:]  # nothing but the script's own line
