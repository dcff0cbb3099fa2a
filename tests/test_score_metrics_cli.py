"""`abstain score` then `abstain metrics` on a real responses file yields every documented key."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from abstain.cli import app

BASE_KEYS = [
    "ua.acc", "ua.du_precision", "ua.du_recall", "ua.du_f1", "ua.mu_precision", "ua.mu_recall", "ua.mu_f1",
    "ua.du_rate", "ua.mu_rate", "ua.avg_f1", "ua.sd_precision", "ua.balanced_accuracy",
    "r1.a_acc", "r1.a_fu", "r1.a_acc_c", "r1.u_ref", "r1.u_clar", "r1.u_clar_c",
    "aca.dist.SH", "aca.dist.EA", "aca.dist.ABS", "aca.dist.COND", "aca.dist.ELICIT",
    "aca.behavior_reward", "aca.behavior_score", "aca.idk_score",
    "ab.precision", "ab.recall", "ab.f1", "ab.accuracy",
]
COUNT_KEYS = ["n.answerable", "n.unanswerable", "n.judge_errors", "n.format_errors"]
PERTURBATIONS = ["missing_key_info", "ambiguous_key_info", "unrealistic_conditions", "unrelated_object", "question_missing"]


def test_score_then_metrics_gives_every_key(tmp_path, fixtures_dir):
    runner = CliRunner()
    scored = tmp_path / "scored.jsonl"
    out = tmp_path / "metrics.json"
    r = runner.invoke(app, ["score", "-i", str(fixtures_dir / "real_responses.jsonl"), "-o", str(scored)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in scored.read_text().splitlines()]
    assert len(rows) == 12
    for row in rows:
        for key in ("pred", "answer", "format_ok", "correct", "behavior", "clarification_correct", "judge_error"):
            assert key in row
    r = runner.invoke(app, ["metrics", "-i", str(scored), "--json", str(out), "--resamples", "100"])
    assert r.exit_code == 0, r.output
    assert "ua.du_f1" in r.output and "ua.avg_f1" in r.output  # the headline table
    assert "UA-Bench's code: 0" in r.output.replace("\n", " ")  # says how undefined values show
    m = json.loads(out.read_text())
    for prefix in ("", "by_category.reasoning.", "by_category.knowledge."):
        for key in BASE_KEYS:
            assert f"{prefix}{key}" in m and f"{prefix}{key}_ci" in m, prefix + key
        for key in COUNT_KEYS:
            assert isinstance(m[f"{prefix}{key}"], int)
    for name in PERTURBATIONS:
        for key in ("dist.SH", "behavior_reward", "behavior_score", "idk_score"):
            assert f"aca.by_perturbation.{name}.{key}" in m
    assert m["n.answerable"] + m["n.unanswerable"] == 12


def test_metrics_refuses_a_file_mixing_protocols(tmp_path, fixtures_dir):
    runner = CliRunner()
    scored = tmp_path / "scored.jsonl"
    runner.invoke(app, ["score", "-i", str(fixtures_dir / "real_responses.jsonl"), "-o", str(scored)])
    lines = scored.read_text().splitlines()
    lines[0] = lines[0].replace('"protocol": "attribution"', '"protocol": "idk"')
    scored.write_text("\n".join(lines) + "\n")
    r = runner.invoke(app, ["metrics", "-i", str(scored)])
    assert r.exit_code == 2 and "--protocol" in r.output
    r = runner.invoke(app, ["metrics", "-i", str(scored), "--protocol", "idk", "--resamples", "0"])
    assert r.exit_code == 0, r.output


def test_fast_scored_rows_equal_validated_rows(fixtures_dir):
    from abstain.judges import RuleJudge
    from abstain.schema import ResponseRow, ScoredRow, read_jsonl
    from abstain.scoring import score_rows

    rows = read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow)
    for scored in score_rows(rows, RuleJudge()):
        dumped = scored.model_dump(mode="json")
        assert ScoredRow.model_validate(dumped) == scored
        assert dumped["human_behavior"] == scored.model_extra["human_behavior"]  # extras survive


def test_behaviors_default_to_all_rows_so_abstention_is_symmetric(tmp_path, fixtures_dir):
    """By default an answerable row that asks or abstains in words counts as an abstention (AbstentionBench)."""
    runner = CliRunner()
    src = fixtures_dir / "real_responses.jsonl"
    default, only = tmp_path / "default.jsonl", tmp_path / "unanswerable.jsonl"
    assert runner.invoke(app, ["score", "-i", str(src), "-o", str(default)]).exit_code == 0
    assert runner.invoke(app, ["score", "-i", str(src), "-o", str(only), "--behaviors", "unanswerable"]).exit_code == 0
    rows = lambda p: {json.loads(line)["id"]: json.loads(line) for line in p.read_text().splitlines()}  # noqa: E731
    d, u = rows(default), rows(only)
    assert all(r["behavior"] is None for r in u.values() if r["label"] == "answerable")
    assert all(r["behavior"] is not None for r in d.values())
    assert d["umwp-4"]["behavior"] == "ABS"  # an answerable item refused with "I don't know"
    r = runner.invoke(app, ["score", "-i", str(src), "-o", str(tmp_path / "x.jsonl"), "--behaviors", "some"])
    assert r.exit_code == 2 and "behaviors must be one of unanswerable, all, none - not 'some'" in r.output


def test_duplicate_rows_are_an_error_naming_both_lines(fixtures_dir, tmp_path):
    lines = (fixtures_dir / "real_responses.jsonl").read_text().splitlines()
    src = tmp_path / "dup.jsonl"
    src.write_text("\n".join([lines[0], lines[1], lines[0]]) + "\n")
    out = tmp_path / "scored.jsonl"
    r = CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out)])
    assert r.exit_code == 2 and f"{src}:3: the same row as line 1" in " ".join(r.output.split())
    assert "id='umwp-1'" in r.output and not out.exists()  # nothing written
    # a second sample of the same item is a different row
    second = json.loads(lines[0]) | {"sample": 1}
    src.write_text("\n".join([lines[0], lines[1], json.dumps(second)]) + "\n")
    assert CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out)]).exit_code == 0
    assert CliRunner().invoke(app, ["metrics", "-i", str(out)]).exit_code == 0
    dup = out.read_text().splitlines()
    out.write_text("\n".join([*dup, dup[1]]) + "\n")
    r = CliRunner().invoke(app, ["metrics", "-i", str(out)])
    assert r.exit_code == 2 and "the same row as line 2" in " ".join(r.output.split())


def test_score_from_run_rebuilds_the_judge_the_run_recorded(tmp_path, fixtures_dir):
    from abstain.data import load_suite
    from abstain.records.runs import RESPONSES, RunDir
    from abstain.evaluation.run import EvalConfig
    from abstain.judges import JudgeConfig

    run = tmp_path / "run"
    config = EvalConfig(model="m", suite="quick", limit=2, judge=JudgeConfig(behaviors="unanswerable", math_timeout_s=3))
    RunDir(run).prepare(config.record(load_suite("quick", limit=2).items, {}))
    (run / RESPONSES).write_text((fixtures_dir / "real_responses.jsonl").read_text())
    out = tmp_path / "rescored.jsonl"
    r = CliRunner().invoke(app, ["score", "--from-run", str(run), "-o", str(out)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # the run's judge labelled behaviors on unanswerable rows only (the default would label every row)
    assert all(row["behavior"] is None for row in rows if row["label"] == "answerable")
    assert all(row["behavior"] is not None for row in rows if row["label"] == "unanswerable")
    r = CliRunner().invoke(app, ["score", "--from-run", str(run), "-o", str(out), "--behaviors", "none"])
    assert r.exit_code == 2 and "--from-run takes the judge from" in " ".join(r.output.split())


DECISION = ("pred", "answer", "format_ok", "correct", "behavior", "clarification", "clarification_correct",
            "judge_errors", "judge_error", "judged_by")


def test_a_scored_file_scored_again_gets_the_same_decisions(tmp_path, fixtures_dir):
    runner = CliRunner()
    first, second = tmp_path / "scored.jsonl", tmp_path / "again.jsonl"
    r = runner.invoke(app, ["score", "-i", str(fixtures_dir / "real_responses.jsonl"), "-o", str(first)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["score", "-i", str(first), "-o", str(second), "--judge", "rule", "--behaviors", "all"])
    assert r.exit_code == 0, r.output
    assert first.read_text() == second.read_text()  # same judge, same decisions, byte for byte


def test_stale_scored_fields_are_replaced_by_the_new_judgment(tmp_path, fixtures_dir):
    runner = CliRunner()
    clean = tmp_path / "clean.jsonl"
    runner.invoke(app, ["score", "-i", str(fixtures_dir / "real_responses.jsonl"), "-o", str(clean)])
    stale_rows = []
    for line in fixtures_dir.joinpath("real_responses.jsonl").read_text().splitlines():
        row = json.loads(line)  # every decision wrong, in the shapes a scored file holds them
        row.update(pred="MODEL_UNCERTAIN", answer="stale", format_ok=False, correct=True, behavior="SH",
                   clarification="stale", clarification_correct=True, judge_error="old judge failed",
                   judge_errors={"behavior": "old judge failed"}, judged_by={"correct": "llm"})
        stale_rows.append(json.dumps(row))
    stale = tmp_path / "stale.jsonl"
    stale.write_text("\n".join(stale_rows) + "\n")
    out = tmp_path / "rescored.jsonl"
    r = runner.invoke(app, ["score", "-i", str(stale), "-o", str(out)])
    assert r.exit_code == 0, r.output
    fresh = [json.loads(line) for line in clean.read_text().splitlines()]
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert [{k: row[k] for k in DECISION} for row in again] == [{k: row[k] for k in DECISION} for row in fresh]
    assert again == fresh  # nothing stale survives as an extra column


def test_scored_rows_in_memory_and_items_with_response_columns_score_afresh(fixtures_dir):
    import abstain
    from abstain.scoring import score_completions

    scored = abstain.score(fixtures_dir / "real_responses.jsonl")
    again = abstain.score(scored)
    assert [r.model_dump() for r in again] == [r.model_dump() for r in scored]
    row = scored[0]  # a scored row as a training item: its response / model / pred columns give way
    redone = score_completions([row.model_dump()], ["\\boxed{I don't know.}"])[0]
    assert redone.response == "\\boxed{I don't know.}" and redone.model == "policy" and redone.pred.value != "ANSWER"
