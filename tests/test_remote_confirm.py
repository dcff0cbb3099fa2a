"""Before a run against a remote ``openai:`` server: the request count and token estimate first, then ``--yes``, a
question on a terminal, or a refusal that writes nothing (abstain.evaluation.estimate, abstain.cli.confirm).

The refusals need no server: the remote URL (TEST-NET-3, never routed) is never contacted. The runs that go ahead
send to the real llama.cpp server, made to count as remote with ``ABSTAIN_TREAT_AS_REMOTE=1``, through the
recording gateway of tests/openai_gateway.py.
"""

from __future__ import annotations

import logging
import os
import pty
import re
import subprocess
import sys
import time

import pytest
from llama_server import MODEL_ALIAS
from openai_gateway import Gateway
from typer.testing import CliRunner

from abstain.cli import app
from abstain.evaluation.estimate import REMOTE_ENV, estimate_requests, is_remote
from abstain.records.runs import RESPONSES
from abstain.evaluation.run import EvalConfig, eval_prompts
from abstain.judges import JudgeConfig
from abstain.probing.run import ProbeConfig
from abstain.schema import ResponseRow, dump_row

REMOTE = "http://203.0.113.7:9/v1"  # TEST-NET-3: documentation only, never routed
SECRET = "sk-remote-confirm-never-shown-4b1d"


def _eval_args(out, *extra: str, url: str = REMOTE) -> list[str]:
    return ["eval", "--model", f"openai:{MODEL_ALIAS}", "--base-url", url, "--suite", "quick", "--limit", "4",
            "--max-tokens", "50", "--resamples", "0", "--out", str(out), *extra]


def _invoke(args: list[str]):
    result = CliRunner().invoke(app, args)
    result.text = result.output.replace("\n", " ")  # rich folds long lines
    return result


def test_the_estimate_counts_every_protocol_sample_and_pass():
    def requests(**options) -> int:
        config = EvalConfig(model="openai:m", suite="quick", limit=4, max_tokens=50, **options)
        return estimate_requests(config).requests

    assert requests(protocols=("idk",)) == 4
    assert requests() == 16  # --protocol all: the four main protocols, four times the prompts
    assert requests(samples=3, temperature=0.7) == 48
    both = estimate_requests(EvalConfig(model="openai:m", suite="quick", limit=4, max_tokens=50,
                                        confidence=("consistency:2", "p_true", "logprob"),
                                        judge=JudgeConfig(name="llm", model="j")))
    assert [(p.name, p.requests) for p in both.passes] == [("responses", 16), ("consistency:2", 32), ("p_true", 16)]
    assert both.completion_tokens == 16 * 50 + 32 * 50 + 16 and both.judged == 16
    assert both.passes[1].prompt_tokens == 2 * both.passes[0].prompt_tokens  # the same prompts, twice each
    probe = ProbeConfig(model="openai:m", protocol="idk", suite="quick", limit=4, k=3).eval_config()
    assert estimate_requests(probe).requests == 12  # K samples an item
    lines = "\n".join(both.lines())
    assert "4 items x 4 protocols (attribution, idk, clarify, aca) = 16 prompts, 1 sample each" in lines
    assert "in all: 64 requests" in lines and "the LLM judge reads 16 responses" in lines


def test_a_resumed_run_counts_only_what_is_left(tmp_path):
    config = EvalConfig(model="openai:m", suite="quick", limit=4, protocols=("idk",), batch_size=2, max_tokens=10)
    work = eval_prompts(config).work
    rows = [ResponseRow(**item.model_dump(), response="x", model="m", protocol=p, sample=0) for p, item in work]
    (tmp_path / RESPONSES).write_text("\n".join(dump_row(r) for r in rows[:3]) + "\n" + '{"id": "cut sh')
    estimate = estimate_requests(config, tmp_path)
    # the first chunk is done; the second has one row of two: generated again whole, as the run does
    assert (estimate.requests, estimate.done) == (2, 2)
    assert "2 of the 4 prompts were answered by an earlier call" in "\n".join(estimate.lines())
    assert (tmp_path / RESPONSES).read_text().endswith('{"id": "cut sh')  # read only: the cut line is left alone


def test_what_counts_as_remote(monkeypatch):
    monkeypatch.delenv(REMOTE_ENV, raising=False)
    assert not any(is_remote(u) for u in ("http://127.0.0.1:8000/v1", "http://127.3.2.1/v1", "http://localhost/v1",
                                          "http://[::1]:8000/v1"))
    assert all(is_remote(u) for u in ("https://api.openai.com/v1", "http://10.0.0.5:8000/v1", "http://gpu-host/v1"))
    monkeypatch.setenv(REMOTE_ENV, "1")
    assert is_remote("http://127.0.0.1:8000/v1")


def test_without_yes_or_a_terminal_a_remote_run_is_refused_after_the_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    r = _invoke(_eval_args(tmp_path / "run", "--protocol", "all"))
    assert r.exit_code == 2, r.output
    assert "openai:smollm2-135m on 203.0.113.7 (a remote server)" in r.text
    assert "responses: 16 requests" in r.text and "at most 800 completion tokens" in r.text
    assert r.text.index("16 requests") < r.text.index("rerun with --yes")
    assert "nothing was sent or written" in r.text and SECRET not in r.output
    assert not (tmp_path / "run").exists()

    r = _invoke(["probe", "--model", f"openai:{MODEL_ALIAS}", "--base-url", REMOTE, "--suite", "quick", "--limit",
                 "4", "--protocol", "idk", "--k", "3", "--out", str(tmp_path / "probe")])
    assert r.exit_code == 2 and "responses: 12 requests" in r.text and "--yes" in r.text, r.output
    assert not (tmp_path / "probe").exists()

    monkeypatch.setenv("OPENAI_BASE_URL", REMOTE)  # the URL from the environment is asked about the same way
    args = _eval_args(tmp_path / "run", "--protocol", "idk")
    r = _invoke(args[:3] + args[5:])
    assert r.exit_code == 2 and "responses: 4 requests" in r.text and not (tmp_path / "run").exists(), r.output


def test_told_no_on_a_terminal_nothing_is_sent_or_written(tmp_path):
    """The question on a real terminal (a pty): the estimate, then 'Send them?'; 'n' stops before anything."""
    primary, secondary = pty.openpty()
    env = {**os.environ, "ABSTAIN_NO_PROGRESS": "1", "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "abstain", *_eval_args(tmp_path / "run", "--protocol", "idk")],
                            stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    os.close(secondary)
    try:
        os.write(primary, b"n\n")
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(primary)
    text = (out + err).decode()
    assert proc.returncode == 1, text
    assert text.index("responses: 4 requests") < text.index("Send them?") < text.index("not sent")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_yes_prints_the_estimate_then_sends_exactly_that(tmp_path, llama_server, monkeypatch, caplog):
    """A reasoning model's API (the gateway) taken for remote: --yes goes ahead, the count printed first is what the
    server gets (and the prompt tokens near its own count), the key reaches the server and nothing else; a rerun has
    nothing left to send and does not ask."""
    monkeypatch.setenv(REMOTE_ENV, "1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run"
    with Gateway.serving(llama_server.base_url, reasoning_model=True) as gateway:
        args = _eval_args(out, "--protocol", "idk", "--limit", "2", "--max-tokens", "4", "--confidence",
                          "consistency:2", "--backend-option", "reasoning=true", url=gateway.url)
        with caplog.at_level(logging.DEBUG):
            r = _invoke([*args, "--yes"])
        assert r.exit_code == 0, r.output
        assert "responses: 2 requests" in r.text and "consistency:2: 4 requests" in r.text
        assert "in all: 6 requests" in r.text and "--yes: sending them" in r.text
        assert r.text.index("in all: 6 requests") < r.text.index("report:")
        assert len(gateway.bodies) == 6 and not gateway.refused
        assert set(gateway.authorization) == {f"Bearer {SECRET}"}
        assert all(u["completion_tokens"] <= 4 for u in gateway.usage)
        estimated = int(re.search(r"in all: 6 requests, ~([\d,]+) prompt tokens", r.text)[1].replace(",", ""))
        counted = sum(u["prompt_tokens"] for u in gateway.usage)  # the server's tokenizer and chat template
        assert 0.67 < estimated / counted < 1.5, (estimated, counted)

        started = time.monotonic()
        again = _invoke(args)  # no --yes, no terminal: nothing is left, so nothing to ask about
        assert again.exit_code == 0 and "nothing left to send" in again.text, again.output
        assert len(gateway.bodies) == 6 and time.monotonic() - started < 60
    assert SECRET not in r.output + again.output and SECRET not in caplog.text
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
