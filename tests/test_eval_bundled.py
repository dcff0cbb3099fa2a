"""`abstain eval` end to end with the real bundled model and the real llama.cpp server (a few items, few tokens).

The resume test kills a real `abstain eval` process with SIGKILL once rows are in responses.jsonl, leaves
half a line at the end of the file as a crash mid-write would, reruns the same command and compares
metrics.json byte for byte with an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.records.runs import RESPONSES, SCORED, row_key
from abstain.evaluation.run import EvalConfig, evaluate
from abstain.schema import ResponseRow, ScoredRow, read_jsonl

ABSTAIN = str(Path(sys.executable).with_name("abstain"))
# 6 items x 2 protocols = 12 prompts in 6 chunks of 2: room to kill the process between chunks
ARGS = ["eval", "--model", "bundled", "--suite", "quick", "--limit", "6", "--protocol", "idk,aca",
        "--max-tokens", "8", "--batch-size", "2", "--resamples", "200"]


def _eval(out: Path, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, ABSTAIN_NO_PROGRESS="1", HF_HUB_OFFLINE="1", OMP_WAIT_POLICY="PASSIVE")
    return subprocess.Popen([ABSTAIN, *ARGS, "--out", str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_kill_9_then_rerun_gives_the_metrics_of_an_uninterrupted_run(tmp_path, bundled_model_dir):
    whole = _eval(tmp_path / "whole")
    output, _ = whole.communicate(timeout=600)
    assert whole.returncode == 0, output
    assert "report:" in output and "idk" in output

    crashed = tmp_path / "crashed"
    proc = _eval(crashed)
    responses = crashed / RESPONSES
    deadline = time.monotonic() + 600
    while _lines(responses) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    rows_at_kill = _lines(responses)
    assert proc.returncode == -signal.SIGKILL
    assert 2 <= rows_at_kill < 12, "the kill must land mid-run"
    assert not (crashed / "metrics.json").exists()
    with responses.open("ab") as handle:  # a crash in the middle of a write leaves half a line
        handle.write(b'{"id": "quick-half", "question": "Ho')

    rerun = _eval(crashed)
    output, _ = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, output
    assert "resumed" in output

    assert (crashed / "metrics.json").read_bytes() == (tmp_path / "whole" / "metrics.json").read_bytes()
    for name, model in ((RESPONSES, ResponseRow), (SCORED, ScoredRow)):
        rows = read_jsonl(crashed / name, model)
        assert len(rows) == len({row_key(r) for r in rows}) == 12  # nothing lost, nothing duplicated
        assert (crashed / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    sessions = json.loads((crashed / "timing.json").read_text())["sessions"]
    assert sessions[-1]["prompts_skipped"] >= 2  # the rerun skipped the chunks written before the kill


@pytest.mark.slow
def test_eval_in_process_with_demonstrations_then_resume_and_compare(tmp_path, bundled_backend):
    config = EvalConfig(model="bundled", suite="quick", limit=4, protocols=("attribution", "clarify"),
                        max_tokens=8, batch_size=8, shots=2, shots_unanswerable=1, resamples=100)
    result = evaluate(config, tmp_path / "shots", backend=bundled_backend)
    assert result.generated == 8 and result.skipped == 0
    record = json.loads((tmp_path / "shots" / "config.json").read_text())
    assert record["shots"] == 2 and record["demos"] and all(len(d) == 2 for d in record["demos"].values())
    evaluated = {r.id for r in read_jsonl(tmp_path / "shots" / RESPONSES, ResponseRow)}
    assert not evaluated & {d for ds in record["demos"].values() for d in ds}
    metrics = json.loads((tmp_path / "shots" / "metrics.json").read_text())
    assert list(metrics["protocols"]) == ["attribution", "clarify"]
    assert metrics["protocols"]["clarify"]["n.answerable"] == 2
    assert result.timing["sessions"][-1]["generated_tokens"] > 0
    page = (tmp_path / "shots" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 4  # ACC bars, calibration, U-Ref vs A-FU, per-dataset

    before = (tmp_path / "shots" / "metrics.json").read_bytes()
    again = evaluate(config, tmp_path / "shots", backend=bundled_backend)
    assert again.generated == 0 and again.skipped == 8
    assert (tmp_path / "shots" / "metrics.json").read_bytes() == before

    zero = EvalConfig(model="bundled", suite="quick", limit=4, protocols=("attribution",), max_tokens=8,
                      batch_size=8, resamples=100)
    evaluate(zero, tmp_path / "zero", backend=bundled_backend)
    r = CliRunner().invoke(app, ["compare", str(tmp_path / "zero"), str(tmp_path / "shots"),
                                 "--out", str(tmp_path / "cmp")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "cmp" / "compare.md").read_text()
    assert "attribution · zero" in md and "attribution · shots" in md and "clarify · shots" in md


@pytest.mark.slow
def test_eval_against_an_openai_compatible_server_keeps_no_secret(tmp_path, llama_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-store")
    out = tmp_path / "served"
    r = CliRunner().invoke(app, ["eval", "--model", "openai:smollm2-135m", "--base-url", llama_server.base_url,
                                 "--suite", "quick", "--limit", "2", "--protocol", "idk", "--max-tokens", "8",
                                 "--resamples", "100", "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = read_jsonl(out / SCORED, ScoredRow)
    assert len(rows) == 2 and {row.model.removeprefix("openai:") for row in rows} == {"smollm2-135m"}
    assert all(row.response for row in rows)
    # the server's address (host:port), not its bare port: five digits turn up by chance in a report's base64 plots
    address = f"127.0.0.1:{llama_server.port}".encode()
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"sk-test-do-not-store" not in data and address not in data, path


@pytest.mark.slow
def test_eval_on_a_uabench_checkout_pools_the_official_tasks(tmp_path, bundled_backend, fixtures_dir):
    config = EvalConfig(model="bundled", data=f"uabench:{fixtures_dir / 'uabench'}", protocols=("attribution",),
                        max_tokens=8, batch_size=12, resamples=0)
    result = evaluate(config, tmp_path / "ua", backend=bundled_backend)
    assert result.generated == 12
    metrics = json.loads((tmp_path / "ua" / "metrics.json").read_text())
    m = metrics["protocols"]["attribution"]
    assert (m["by_category.knowledge.n.answerable"], m["by_category.knowledge.n.unanswerable"]) == (4, 3)
    assert (m["by_category.reasoning.n.answerable"], m["by_category.reasoning.n.unanswerable"]) == (2, 3)
    assert set(metrics["by_benchmark"]["attribution"]) == {
        "uabench/gaia", "uabench/musique_1000", "uabench/selfaware", "uabench/olympiadbench-math",
        "uabench/gsm8k-mip", "uabench/math-mip"}
    assert all(m[f"by_category.{c}.ua.{k}"] is not None for c in ("knowledge", "reasoning")
               for k in ("du_f1", "mu_f1", "avg_f1"))  # UA-Bench numbers are never null
