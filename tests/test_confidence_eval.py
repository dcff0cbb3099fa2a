"""Confidence per response on the real bundled model: log-probabilities from transformers and from the llama.cpp
server (the ``openai`` backend), ``abstain eval --confidence`` end to end, rescoring that keeps the values.

vLLM's log-probabilities (and the ``openai`` backend against a vLLM server) are checked in ``tests/test_vllm.py``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from typer.testing import CliRunner

from abstain.backends.base import GenerationConfig
from abstain.backends.openai import OpenAIBackend
from abstain.cli import app
from abstain.confidence import response_confidence
from abstain.records.runs import RESPONSES, SCORED
from abstain.outcomes import Outcome, outcome
from abstain.report import write_compare
from abstain.schema import ResponseRow, ScoredRow, read_jsonl

PROMPTS = [[{"role": "user", "content": "What is 2 + 3? Put the final answer in \\boxed{}."}],
           [{"role": "user", "content": "Name a colour."}]]


def test_transformers_log_probabilities(bundled_backend):
    plain = bundled_backend.generate(PROMPTS, GenerationConfig(max_new_tokens=24))
    scored = bundled_backend.generate(PROMPTS, GenerationConfig(max_new_tokens=24, logprobs=5))
    for (text,), (s,) in zip(plain, scored, strict=True):
        assert s == text  # recording the scores does not change greedy decoding
        assert len(s.token_logprobs) == len(s.token_entropies) == len(s.token_ends) > 0
        assert list(s.token_ends) == sorted(s.token_ends) and s.token_ends[-1] == len(s)
        assert max(s.token_logprobs) <= 0 and min(s.token_entropies) >= 0
        assert bundled_backend.count_tokens(s) == len(s.token_logprobs)
    sampled = bundled_backend.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=16, logprobs=5, temperature=1.0,
                                                                      n=2, seed=3))
    assert all(len(t.token_logprobs) > 0 for t in sampled[0])


def test_llama_server_log_probabilities_match_transformers(llama_server, bundled_backend):
    """The llama.cpp server's (Q4_1 arithmetic) log-probabilities track the dequantized float model's."""
    backend = OpenAIBackend("smollm2-135m", base_url=llama_server.base_url)
    try:
        served = backend.generate(PROMPTS, GenerationConfig(max_new_tokens=24, logprobs=5))
    finally:
        backend.close()
    local = bundled_backend.generate(PROMPTS, GenerationConfig(max_new_tokens=24, logprobs=5))
    for (a,), (b,) in zip(served, local, strict=True):
        assert a.token_ends[-1] == len(a) and max(a.token_logprobs) <= 0
        shared = 0  # tokens up to where the two texts part
        while (shared < min(len(a.token_ends), len(b.token_ends)) and a.token_ends[shared] == b.token_ends[shared]
               and a[:a.token_ends[shared]] == b[:b.token_ends[shared]]):
            shared += 1
        assert shared >= 5
        diff = np.abs(np.subtract(a.token_logprobs[:shared], b.token_logprobs[:shared]))
        assert diff.mean() < 0.15, diff
    first = served[0][0]
    values = response_confidence(first, ("logprob", "entropy", "answer_prob"))
    assert values["logprob"] == pytest.approx(np.mean(first.token_logprobs))
    if "\\boxed{" in first:
        assert 0 < values["answer_prob"] <= 1


def test_eval_confidence_end_to_end_and_rescoring(tmp_path, fixtures_dir):
    """``--confidence`` stores the values per row; conf.logprob.auroc is a Mann–Whitney over the answered rows;
    consistency:2 samples twice more per prompt and p_true asks once more per answer; ``abstain score`` keeps the
    values without generating.

    The bundled model rarely boxes its answers, so the judge reads unboxed tails (``--lenient-format``): then some
    answers are right and some wrong, and the AUROC is defined."""
    out = tmp_path / "run"
    runner = CliRunner()
    estimators = "logprob,answer_prob,consistency:2,p_true"
    args = ["eval", "--model", "bundled", "--data", str(fixtures_dir / "easy_arithmetic.jsonl"), "--protocol",
            "answer_only,idk", "--max-tokens", "24", "--batch-size", "20", "--resamples", "100", "--lenient-format",
            "--confidence", estimators, "--out", str(out)]  # one batch of 20 prompts: the test's time is sampling
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    rows = read_jsonl(out / SCORED, ScoredRow)
    assert all(set(row.confidence) == {"logprob", "answer_prob", "consistency:2", "p_true"} for row in rows)
    assert {row.confidence["consistency:2"] for row in rows} <= {0.0, 0.5, 1.0}
    assert all(0 <= row.confidence["p_true"] <= 1 for row in rows if row.confidence["p_true"] is not None)
    assert any(row.confidence["p_true"] is not None for row in rows)
    metrics = json.loads((out / "metrics.json").read_text())
    config = json.loads((out / "config.json").read_text())
    assert config["confidence"] == estimators.split(",") and f"--confidence {estimators}" in config["command"]
    timing = json.loads((out / "timing.json").read_text())["sessions"][-1]
    assert timing["consistency_tokens"] > 0 and timing["p_true_tokens"] > 0
    both = 0
    for protocol in ("answer_only", "idk"):
        answered = [row for row in rows if row.protocol == protocol and outcome(row) in (Outcome.CORRECT, Outcome.WRONG)]
        right = [row.confidence["logprob"] for row in answered if outcome(row) is Outcome.CORRECT]
        wrong = [row.confidence["logprob"] for row in answered if outcome(row) is Outcome.WRONG]
        got = metrics["protocols"][protocol]["conf.logprob.auroc"]
        if right and wrong:
            both += 1
            assert got == pytest.approx(mannwhitneyu(right, wrong).statistic / (len(right) * len(wrong)))
        else:
            assert got is None
        assert metrics["protocols"][protocol]["conf.logprob.n"] == len(answered)
        assert metrics["protocols"][protocol]["conf.logprob.aurc"] is not None
    assert both  # the AUROC was checked somewhere, not only found undefined
    assert metrics["protocols"]["idk"]["conf.consistency:2.ece"] is not None  # a probability: calibration too
    matched = metrics["protocols"]["idk"]
    assert matched["conf.logprob.matched.n"] == len({row.id for row in rows})
    assert "conf.logprob.matched.risk_delta_ci" in matched
    assert "risk_coverage_logprob" in (out / "report.md").read_text()
    assert "Explicit abstention vs a logprob threshold" in (out / "report.html").read_text()
    drawn = {name: any(metrics["confidence"][name]["reliability"].values()) for name in ("answer_prob", "p_true")}
    for name, binned in drawn.items():  # a reliability diagram only where there are bins (no empty chart)
        assert (out / "plots" / f"reliability_{name}.png").exists() == binned
    assert any(drawn.values())
    compared = write_compare([out, out], tmp_path / "compare", labels=["base", "again"])  # the overlay of two runs
    assert (tmp_path / "compare" / "plots" / "risk_coverage_logprob.png").exists()
    assert "idk · again" in compared.read_text() and "Confidence: p_true" in compared.read_text()

    r = runner.invoke(app, args)  # a finished run: nothing is generated or sampled again
    assert r.exit_code == 0, r.output
    assert json.loads((out / "timing.json").read_text())["sessions"][-1]["prompts_generated"] == 0
    assert "consistency_tokens" not in json.loads((out / "timing.json").read_text())["sessions"][-1]

    rescored = tmp_path / "rescored.jsonl"
    r = runner.invoke(app, ["score", "-i", str(out / RESPONSES), "-o", str(rescored), "--lenient-format"])
    assert r.exit_code == 0, r.output
    again = {(row.id, row.protocol): row.confidence for row in read_jsonl(rescored, ScoredRow)}
    assert again == {(row.id, row.protocol): row.confidence for row in rows}
    assert all(math.isfinite(v) for c in again.values() for v in c.values() if v is not None)


def test_a_backend_without_log_probabilities_is_refused_before_generating(tmp_path):
    from abstain.evaluation.run import EvalConfig, evaluate

    class Plain:
        name = "plain"
        generated = 0

        def generate(self, prompts, config):  # pragma: no cover - must not be reached
            Plain.generated += 1
            return [["x"] * config.n for _ in prompts]

        def close(self):
            pass

    config = EvalConfig(model="plain", suite="quick", limit=2, protocols=("idk",), confidence=("logprob",))
    with pytest.raises(ValueError, match="cannot return token log-probabilities"):
        evaluate(config, tmp_path / "run", backend=Plain())
    assert Plain.generated == 0
    assert not (tmp_path / "run" / RESPONSES).exists() or not read_jsonl(tmp_path / "run" / RESPONSES, ResponseRow)
