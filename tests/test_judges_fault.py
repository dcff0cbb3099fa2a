"""Judge failures end in judge_error rows, a clean non-zero exit and a rerun that completes only the
missing rows — with a real llama.cpp server killed in the middle of a scoring run."""

from __future__ import annotations

import json
import threading
import time

import pytest
from llama_server import MODEL_ALIAS, LlamaServer, free_port
from typer.testing import CliRunner

from abstain.cli import app
from abstain.judges import LLMJudge
from abstain.llm import ChatClient, ClientConfig, Endpoint
from abstain.schema import ResponseRow, ScoredRow, read_jsonl, write_jsonl
from abstain.scoring import score

SECRET = "sk-fault-test-secret-91"


def _rows(n: int) -> list[ResponseRow]:
    return [
        ResponseRow(
            id=f"u{i}", question=f"Ann buys {i + 2} bags of apples. How many apples does she have?", answers=[],
            label="unanswerable", response=f"Each bag has some apples, so she has \\boxed{{{3 * i + 4}}} apples.",
            model="m",
        )
        for i in range(n)
    ]


def _transport(error: str) -> bool:
    return "request failed after" in error or "not sent:" in error


def _client(url: str, cache_path) -> ChatClient:
    # a short retry budget keeps the test fast; the breaker stops retrying once the server is clearly gone
    config = ClientConfig(max_tokens=2, concurrency=1, retries=2, backoff_s=0.05, trip_after=2, cache_path=cache_path)
    return ChatClient(Endpoint(url, MODEL_ALIAS), config)


@pytest.mark.slow
def test_server_killed_mid_run_then_rerun_completes_missing_rows_only(tmp_path):
    src, out = tmp_path / "responses.jsonl", tmp_path / "scored.jsonl"
    write_jsonl(src, _rows(8))
    with LlamaServer.start() as server:
        client = _client(server.base_url, tmp_path / "c1.sqlite")

        def kill_after_three() -> None:
            while client.stats.succeeded < 3:
                time.sleep(0.01)
            server.stop()

        killer = threading.Thread(target=kill_after_three, daemon=True)
        killer.start()
        first = score(src, LLMJudge(client), output=out)
        killer.join(timeout=30)
        client.close()
        rows = read_jsonl(out, ScoredRow)
        assert len(rows) == 8 and len(first) == 8  # every row is written, none lost
        failed = [r for r in rows if r.judge_error]
        judged = [r for r in rows if not r.judge_error]
        assert first.judge_errors == len(failed) >= 1 and client.stats.succeeded >= 3
        for r in failed:  # a transport failure or the 135M judge's unreadable reply: named, never guessed
            assert r.judge_error.startswith("llm behavior: ")
            assert _transport(r.judge_error) or "expected one of SH/EA/ABS/COND/ELICIT, got " in r.judge_error
            assert set(r.judge_errors) == {"behavior"} and "behavior" not in r.judged_by
            assert r.correct is False and r.judged_by["correct"] == "label"  # what was decided is kept
        assert sum(_transport(r.judge_error) for r in failed) >= 1

        # restart; a fresh client and cache prove which rows are asked again
        server.restart()
        client = _client(server.base_url, tmp_path / "c2.sqlite")
        second = score(src, LLMJudge(client), output=out)
        client.close()
    assert second.reused == len(judged)
    assert client.stats.calls == len(failed)  # only the missing rows were judged again
    after = {r.id: r for r in read_jsonl(out, ScoredRow)}
    for r in judged:  # rows judged before the crash are kept byte for byte
        assert after[r.id].model_dump() == r.model_dump()
    assert not any(r.judge_error and _transport(r.judge_error) for r in after.values())


@pytest.mark.slow
def test_score_cli_with_the_server_down_writes_errors_and_exits_1(tmp_path, monkeypatch, fixtures_dir):
    monkeypatch.setenv("ABSTAIN_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "scored.jsonl"
    down = f"http://127.0.0.1:{free_port()}/v1"
    args = ["score", "-i", str(fixtures_dir / "real_responses.jsonl"), "-o", str(out), "--judge-base-url", down,
            "--judge-model", MODEL_ALIAS, "--judge-api-key", SECRET, "--judge-retries", "1"]
    start = time.monotonic()
    result = CliRunner().invoke(app, [*args, "--judge", "llm"])
    assert result.exit_code == 1, result.output
    assert time.monotonic() - start < 60  # the breaker fails the rest fast
    printed = " ".join(result.output.split())  # rich wraps long paths at the terminal width
    assert "judge error" in printed and "rerun the same command" in printed
    assert "ConnectError" in printed or "not sent" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 12
    asked = [r for r in rows if r["judge_error"]]
    # every row that needed the LLM is marked
    assert len(asked) >= 6
    for r in asked:  # each failed field is null with its own reason; fields decided without the LLM stay
        assert r["judge_errors"] and all(r[name] is None for name in r["judge_errors"])
        assert all(e.startswith(f"llm {name}: ") for name, e in r["judge_errors"].items())
    assert any(r["correct"] is False and r["judged_by"]["correct"] == "label" for r in asked)
    # a refusal of an answerable item needs no correctness verdict: only its behavior (--behaviors all) failed
    refusals = [r for r in rows if r["label"] == "answerable" and r["pred"] != "ANSWER"]
    assert refusals and all(set(r["judge_errors"]) == {"behavior"} for r in refusals)
    # the hybrid judge needs the LLM only where its rules are unsure: more rows come out judged
    result = CliRunner().invoke(app, [*args, "--judge", "hybrid", "--rescore"])
    hybrid = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(r["judge_error"] is None for r in hybrid) > sum(r["judge_error"] is None for r in rows)
    assert all(r["judged_by"].get("behavior") in (None, "rule") for r in hybrid)
    for path in [out, *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()
    assert SECRET not in result.output
