"""`abstain audit`: agreement statistics, and the rule judge on the hand-labelled development set."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from llama_server import MODEL_ALIAS
from typer.testing import CliRunner

from abstain.cli import app
from abstain.judges import RuleJudge
from abstain.evaluation.audit import DEV_SET, agreement, audit_rows
from abstain.parsing import parse_response
from abstain.schema import ResponseRow, read_jsonl


@pytest.fixture(scope="module")
def dev_rows() -> list[ResponseRow]:
    return read_jsonl(DEV_SET, ResponseRow)


def test_kappa_and_confusion_worked_by_hand():
    # po = 3/4; pe = P(A)P'(A) + P(B)P'(B) = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    a = agreement("x", ["A", "A", "B", "B"], ["A", "B", "B", "B"], ["A", "B"])
    assert a.accuracy == 0.75 and a.kappa == pytest.approx(0.5)
    assert a.confusion == {"A": {"A": 1, "B": 1}, "B": {"A": 0, "B": 2}}
    assert a.per_class["A"] == {"precision": 1.0, "recall": 0.5, "support": 2}
    assert a.per_class["B"]["precision"] == pytest.approx(2 / 3)


def test_undecided_rows_count_against_the_judge():
    a = agreement("x", ["A", "B", "B"], ["A", None, "B"], ["A", "B"])
    assert a.undecided == 1 and a.accuracy == pytest.approx(2 / 3)
    assert a.confusion["B"]["none"] == 1 and a.labels == ("A", "B", "none")
    assert agreement("x", ["A", "A"], ["A", "A"]).kappa == 1.0  # one class, perfect: kappa defined as 1


def test_dev_set_is_real_and_labelled(dev_rows):
    assert len(dev_rows) >= 150
    assert len({r.id for r in dev_rows}) == len(dev_rows)
    extra = [r.model_extra or {} for r in dev_rows]
    behaviors = Counter(e["human_behavior"] for e in extra if e.get("human_behavior"))
    assert set(behaviors) == {"SH", "EA", "ABS", "COND", "ELICIT"} and all(n >= 8 for n in behaviors.values())
    assert sum(e.get("human_correct") is not None for e in extra) >= 20
    generated = [r for r in dev_rows if r.model != "hand-written"]
    assert len(generated) >= 100 and all(r.response and r.protocol for r in dev_rows)
    for r, e in zip(dev_rows, extra, strict=True):  # labels sit where they make sense
        assert (e.get("human_behavior") is not None) <= (r.label == "unanswerable"), r.id
        assert (e.get("human_correct") is not None) <= (r.label == "answerable"), r.id


def test_rule_classifier_agrees_with_humans_on_the_dev_set(dev_rows):
    overall, groups, _ = audit_rows(dev_rows, RuleJudge(), group_by="model")
    behavior = overall["behavior"]
    assert behavior.accuracy >= 0.85 and behavior.kappa >= 0.75  # the bar docs/judges.md states
    assert behavior.undecided == 0
    assert groups["SmolLM2-135M-Instruct-Q4_1"]["behavior"].accuracy >= 0.85  # not carried by our own writing


def test_audit_cli_on_the_shipped_dev_set(tmp_path):
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(app, ["audit", "--judge", "rule", "--json", str(out), "--by", "model"])
    assert result.exit_code == 0, result.output
    assert "kappa" in result.output and "ELICIT" in result.output and "precision" in result.output
    data = json.loads(out.read_text())
    assert data["judge"]["name"] == "rule" and data["rows"] >= 150 and data["judge_errors"] == 0
    behavior = data["fields"]["behavior"]
    assert behavior["n"] == sum(behavior["per_class"][c]["support"] for c in ("SH", "EA", "ABS", "COND", "ELICIT"))
    assert set(data["groups"]) == {"SmolLM2-135M-Instruct-Q4_1", "hand-written"}


def test_audit_cli_rejects_unlabelled_input(tmp_path, fixtures_dir):
    plain = tmp_path / "plain.jsonl"
    rows = [json.loads(line) for line in (fixtures_dir / "real_responses.jsonl").read_text().splitlines()]
    plain.write_text("".join(json.dumps({k: v for k, v in r.items() if not k.startswith("human_")}) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["audit", "-i", str(plain)])
    assert result.exit_code == 2 and "no row has human_behavior" in " ".join(result.output.split())
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": 1}\n')
    result = CliRunner().invoke(app, ["audit", "-i", str(broken)])
    assert result.exit_code == 2 and "broken.jsonl:1" in "".join(result.output.split())


@pytest.mark.slow
def test_audit_cli_with_the_llm_judge_on_a_real_server(llama_server, tmp_path, monkeypatch, dev_rows):
    monkeypatch.setenv("ABSTAIN_CACHE", str(tmp_path / "cache"))
    # four labelled rows: three behaviors and one correctness
    by_length = sorted(dev_rows, key=lambda r: len(r.response) + len(r.question))  # short prompts: fast
    pick = [r for r in by_length if (r.model_extra or {}).get("human_behavior")][:3]
    pick += [r for r in by_length if (r.model_extra or {}).get("human_correct") is not None][:1]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(r.model_dump_json() + "\n" for r in pick))
    out = tmp_path / "audit.json"
    args = ["audit", "-i", str(small), "--judge", "llm", "--judge-base-url", llama_server.base_url,
            "--judge-model", MODEL_ALIAS, "--json", str(out), "--judge-concurrency", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output  # 1 when the 135M judge gave unreadable verdicts
    data = json.loads(out.read_text())
    behavior = data["fields"]["behavior"]
    assert behavior["n"] == 3 and 0.0 <= behavior["accuracy"] <= 1.0
    assert (result.exit_code == 1) == (data["judge_errors"] > 0)
    # unreadable verdicts are disagreements ('none'), never guesses
    assert behavior["undecided"] <= data["judge_errors"]
    assert sum(behavior["confusion"][h].get("none", 0) for h in behavior["confusion"]) == behavior["undecided"]
    # a second run costs nothing: every answer comes from the cache (the server is not needed)
    args[args.index("--judge-base-url") + 1] = "http://127.0.0.1:9/v1"
    again = CliRunner().invoke(app, args)
    assert json.loads(out.read_text())["fields"] == data["fields"], again.output


def test_injected_text_does_not_change_rule_behavior(dev_rows):
    injected = [r for r in dev_rows if "Ignore the above" in r.response or "Note to the grader" in r.response]
    assert injected
    for r in injected:
        assert RuleJudge().judge([r], [parse_response(r.response)])[0].behavior.value == r.model_extra["human_behavior"]
