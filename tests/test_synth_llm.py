"""The LLM rewrite pipeline: stage handlers on real replies, and an end-to-end run with the bundled model."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.schema import DataError, Item, read_jsonl
from abstain.synth.llm_pipeline import PipelineConfig, load_sources, rewrite_file
from abstain.synth.llm_prompts import parse_json_reply
from abstain.synth.llm_stages import STAGES, Attempt, handle_reply, prompt_for
from abstain.synth.perturb import OPERATORS

runner = CliRunner()


def flat(text: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(text.split())


def test_sources_are_read_from_gsm8k_and_bad_lines_are_named(tmp_path: Path) -> None:
    sources = load_sources(None, 3)
    assert [s.id for s in sources] == ["gsm8k-0", "gsm8k-1", "gsm8k-2"]
    assert sources[0].answer == "18" and "16 - 3 - 4" in sources[0].solution and "####" not in sources[0].solution
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q?", "answer": "x #### 1"}\n{"question": "no answer"}\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2: expected a GSM8K row"):
        load_sources(bad)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "question": "How many?", "answers": [4], "label": "answerable"}) + "\n"
                     + json.dumps({"id": "b", "question": "Who?", "answers": [], "label": "unanswerable"}) + "\n")
    assert [(s.id, s.answer) for s in load_sources(items)] == [("a", "4")]


def test_a_good_attempt_passes_every_stage_and_each_check_rejects_what_it_should() -> None:
    """The replies a capable model gives on GSM8K #0, then the same attempt with one flaw at a time."""
    source = load_sources(None, 1)[0]
    replies = {
        "decompose": 'Here you go:\n```json\n{"background": "Janet has ducks and sells eggs at the market.", '
                     '"conditions": ["Janet\'s ducks lay 16 eggs per day.", "She eats three for breakfast every '
                     'morning.", "She bakes muffins with four every day.", "She sells each egg for $2."], '
                     '"question": "How much in dollars does she make every day at the farmers\' market?"}\n```',
        "graph": '{"steps": [{"id": "s1", "uses": ["c1", "c2", "c3"], "result": "16 - 3 - 4 = 9 eggs"}, '
                 '{"id": "s2", "uses": ["s1", "c4"], "result": "9 * 2 = 18 dollars"},], "answer": "s2"}',
        "perturb": '{"perturbed_condition": "She sells each egg at the market.", '
                   '"gap": "The price of an egg is not given."}',
        "rewrite": '{"problem": "Janet\'s ducks lay 16 eggs per day. She eats three for breakfast every morning '
                   'and bakes muffins with four every day. She sells the rest at the market. How much in dollars '
                   'does she make every day at the farmers\' market?"}',
        "validate": "{'answerable': False, 'missing': 'the price of an egg'}",
    }

    def run(**override: str) -> Attempt:
        attempt = Attempt(source.id, 1, "numerical_value_removal")
        rng = random.Random(3)
        for stage in STAGES:
            prompt = prompt_for(stage, attempt, source)
            assert prompt[0]["role"] == "user" and "JSON" in prompt[0]["content"]
            if not handle_reply(stage, attempt, source, override.get(stage, replies[stage]), rng):
                break
            if stage == "graph":
                assert attempt.condition_id in attempt.critical  # the seeded choice; break c4 (the price)
                attempt.condition_id = "c4"
        return attempt

    good = run()
    assert good.reason is None and good.stage == "validate"
    assert good.critical == ["c1", "c2", "c3", "c4"] and good.condition in good.conditions
    flaws = {
        "decompose": ('{"background": "b", "conditions": ["She has 99 ducks."], "question": "How much?"}',
                      "numbers not in the problem"),
        "graph": ('{"steps": [{"id": "s1", "uses": ["c7"], "result": "18"}], "answer": "s1"}', "uses unknown"),
        "perturb": ('{"perturbed_condition": "She sells each egg for $2 at the market.", "gap": "none"}',
                    "no number was removed"),
        "rewrite": ('{"problem": "Janet sells eggs for $2 each. How much does she make?"}', "removed number(s) [\'2\']"),
        "validate": ('{"answerable": true, "missing": ""}', "judged the rewrite answerable"),
    }
    for stage, (reply, reason) in flaws.items():
        bad = run(**{stage: reply})
        assert bad.stage == stage and reason in (bad.reason or ""), bad.reason
    cyclic = run(graph='{"steps": [{"id": "s1", "uses": ["s2"], "result": "18"}, {"id": "s2", "uses": ["s1", "c1"],'
                       ' "result": "18"}], "answer": "s2"}')
    assert "cycle" in (cyclic.reason or "")
    wrong = run(graph='{"steps": [{"id": "s1", "uses": ["c1"], "result": "16 eggs"}], "answer": "s1"}')
    assert "reference answer 18" in (wrong.reason or "")
    junk = run(rewrite="The problem is now harder.")
    assert junk.reason == "rewrite: no JSON object in the reply" and junk.replies["rewrite"] == "The problem is now harder."


def test_parse_json_reply_tolerates_small_model_junk() -> None:
    assert parse_json_reply('{"a": [1, 2,], "b": "x"') == {"a": [1, 2], "b": "x"}
    assert parse_json_reply("prefix [1, 2] then {'k': True} suffix") == {"k": True}
    assert parse_json_reply("{}") is None and parse_json_reply("") is None


@pytest.mark.slow
def test_pipeline_runs_end_to_end_with_the_bundled_model(bundled_backend, tmp_path: Path) -> None:
    sources = load_sources(None, 2)
    out, log = tmp_path / "rewrites.jsonl", tmp_path / "attempts.jsonl"
    cfg = PipelineConfig(seed=1, max_new_tokens=32, max_attempts=3, batch_size=2)
    done: list[int] = []
    summary = rewrite_file(sources, bundled_backend, cfg, out, log, on_done=done.append)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == summary.attempts and sum(done) == len(sources)
    by_source: dict[str, list[dict]] = {}
    for r in records:
        by_source.setdefault(r["source_id"], []).append(r)
        assert r["stage"] in STAGES and r["stage"] in r["replies"] and r["operator"] in OPERATORS
        assert r["accepted"] == (r["reason"] is None)
        if not r["accepted"]:  # the reason names the stage it stopped at
            assert r["reason"].startswith(f"{r['stage']}: ")
        assert list(r["replies"]) == list(STAGES[: STAGES.index(r["stage"]) + 1])
    for sid, attempts in by_source.items():
        assert [a["attempt"] for a in attempts] == list(range(1, len(attempts) + 1))
        assert sum(a["accepted"] for a in attempts) <= 1 and (attempts[-1]["accepted"] or len(attempts) == 3)
        assert len({a["operator"] for a in attempts}) == len(attempts)  # operators rotate on retries
    items = read_jsonl(out, Item)
    originals = [i for i in items if i.label == "answerable"]
    twins = [i for i in items if i.label == "unanswerable"]
    assert [i.question for i in originals] == [s.question for s in sources]
    assert len(twins) == summary.accepted <= len(sources)
    for twin in twins:
        assert twin.perturbation in OPERATORS and twin.gap and twin.meta["certified"] is False


def test_cli_llm_rewrite_needs_a_model(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synth", "--kind", "llm-rewrite", "--n", "1", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "needs --model" in flat(result.output)
    bad = tmp_path / "src.jsonl"
    bad.write_text("{not json\n")
    result = runner.invoke(app, ["synth", "--kind", "llm-rewrite", "--n", "1", "--model", "bundled",
                                 "--source", str(bad), "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "invalid JSON" in flat(result.output)
    assert "src.jsonl:1:" in "".join(result.output.split())  # the file and line, even where rich wrapped them
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.slow
def test_cli_llm_rewrite_against_a_real_openai_compatible_server(llama_server, tmp_path: Path) -> None:
    from llama_server import MODEL_ALIAS

    out = tmp_path / "rw.jsonl"
    args = ["synth", "--kind", "llm-rewrite", "--model", f"openai:{MODEL_ALIAS}", "--base-url", llama_server.base_url,
            "--n", "1", "--max-new-tokens", "48", "--seed", "3", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "rw.attempts.jsonl").read_text().splitlines()]
    assert 1 <= len(records) <= 5 and all(r["source_id"] == "gsm8k-0" for r in records)
    assert all(r["accepted"] or r["reason"].split(":")[0] in STAGES for r in records)
    assert len(records) == 5 or records[-1]["accepted"]  # up to 5 attempts, stopping at the first accepted
    items = read_jsonl(out, Item)
    assert items[0].id == "synth-llm-gsm8k-0-a" and items[0].answers == ["18"]
    assert len(items) == 1 + sum(r["accepted"] for r in records)
