"""`abstain eval` input checks that need no model: bad files, bad options, a changed config refused."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from abstain.cli import app
from abstain.data import load_suite
from abstain.records.runs import RunDir
from abstain.evaluation.run import EvalConfig, parse_protocols
from abstain.judges import JudgeConfig
from abstain.protocols import MAIN_PROTOCOLS


def _invoke(*args: str):
    result = CliRunner().invoke(app, ["eval", *args])
    result.text = result.output.replace("\n", "")  # rich wraps long error lines (keeping the spaces)
    return result


def test_protocol_all_is_the_four_main_protocols():
    assert parse_protocols("all") == MAIN_PROTOCOLS
    assert parse_protocols("idk, answer_only") == ("idk", "answer_only")


def test_bad_options_are_clear_errors(tmp_path):
    out = str(tmp_path / "run")
    r = _invoke("--model", "bundled", "--suite", "quick", "--data", "x.jsonl", "--out", out)
    assert r.exit_code == 2 and "exactly one of --suite" in r.text
    r = _invoke("--model", "bundled", "--suite", "quick", "--protocol", "vibes", "--out", out)
    assert r.exit_code == 2 and "unknown protocol 'vibes'" in r.text
    r = _invoke("--model", "bundled", "--suite", "quick", "--samples", "3", "--out", out)
    assert r.exit_code == 2 and "--temperature" in r.text
    r = _invoke("--model", "bundled", "--suite", "nope", "--out", out)
    assert r.exit_code == 2 and "unknown suite" in r.text
    assert not (tmp_path / "run").exists()


def test_a_malformed_data_file_names_file_and_line(tmp_path):
    data = tmp_path / "items.jsonl"
    data.write_text('{"id": "1", "question": "q", "answers": ["1"], "label": "answerable"}\n{"id": 2, "question": \n')
    r = _invoke("--model", "bundled", "--data", str(data), "--out", str(tmp_path / "run"))
    assert r.exit_code == 2 and "items.jsonl:2: invalid JSON" in r.text


def test_a_rerun_with_another_config_is_refused_before_any_model_loads(tmp_path):
    config = EvalConfig(model="bundled", suite="quick", limit=4, protocols=("idk",), max_tokens=16)
    items = load_suite("quick", limit=4).items
    RunDir(tmp_path / "run").prepare(config.record(items, {}))
    before = (tmp_path / "run" / "config.json").read_text()
    # a model spec that cannot load proves the refusal comes first
    r = _invoke("--model", "hf:/nonexistent/model", "--suite", "quick", "--limit", "4", "--protocol", "idk",
                "--max-tokens", "32", "--out", str(tmp_path / "run"))
    assert r.exit_code == 2, r.output
    assert "another configuration" in r.text and "max_tokens: 16 in config.json, 32 now" in r.text
    assert (tmp_path / "run" / "config.json").read_text() == before


def test_config_record_is_reproducible_and_keeps_no_server_or_secret(tmp_path):
    config = EvalConfig(model="openai:m", suite="quick", limit=2, base_url="http://user:sk-secret@host:8000/v1",
                        judge=JudgeConfig(name="hybrid", model="j", behaviors="unanswerable", concurrency=3),
                        judge_base_url="http://127.0.0.1:9/v1?key=sk-other")
    record = config.record(load_suite("quick", limit=2).items, {})
    text = json.dumps(record)
    assert "sk-secret" not in text and "sk-other" not in text and "host:8000" not in text
    assert "base_url" not in record and record["model"] == "openai:m"
    assert record["judge"] == JudgeConfig(name="hybrid", model="j", behaviors="unanswerable", concurrency=3).record()
    assert JudgeConfig.from_record(record["judge"]) == config.judge  # `abstain score --from-run` rebuilds it
    assert "--judge hybrid --judge-model j --behaviors unanswerable --judge-concurrency 3" in record["command"]
    assert record["command"].startswith("abstain eval --model openai:m --suite quick --protocol attribution,idk")
    assert "--base-url URL" in record["command"]
    assert record["items"]["count"] == 2 and len(record["items"]["sha256"]) == 64
    assert record == config.record(load_suite("quick", limit=2).items, {})


def test_uabench_data_dir_is_read_and_recorded(tmp_path, fixtures_dir):
    r = _invoke("--model", "bundled", "--data", f"uabench:{tmp_path / 'nowhere'}", "--out", str(tmp_path / "run"))
    assert r.exit_code == 2 and "nowhere:" in r.text and "uabench:DIR" in r.text and "checkout" in r.text
    config = EvalConfig(model="bundled", data=f"uabench:{fixtures_dir / 'uabench'}", protocols=("attribution",))
    assert f"--data uabench:{fixtures_dir / 'uabench'}" in config.command()
