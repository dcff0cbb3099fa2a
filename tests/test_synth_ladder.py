"""The arithmetic ladder (``abstain synth --kind ladder``): right answers, twins that miss a quantity, disjoint splits,
a transfer split of its own templates, determinism, and the one scorer's verdicts on its items."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.outcomes import outcome
from abstain.scoring import score_completions
from abstain.synth.ladder import LADDER_SPLITS, RUNGS, LadderConfig, generate_ladder, split_of

NUMBER = re.compile(r"\d+")


def _rows(split: str, n: int = 12, seed: int = 3) -> list:
    return list(generate_ladder(LadderConfig(n_per_rung=n, seed=seed, split=split)))


def _skeleton(question: str) -> str:
    """A question's template: numbers, names and objects blanked (what a split's templates share)."""
    words = [w for w in re.findall(r"[A-Za-z']+", NUMBER.sub("#", question)) if not w[0].isupper() or w in ("A",)]
    return " ".join(w for w in words if w not in {"pencils", "apples", "stickers", "marbles", "cookies", "stamps",
                                                  "shells", "coins", "buttons", "postcards", "beads", "s"})


@pytest.mark.parametrize("split", LADDER_SPLITS)
def test_every_answer_is_its_expression_and_every_twin_misses_a_quantity(split):
    rows = _rows(split)
    answerable = [r for r in rows if r.label == "answerable"]
    twins = {r.pair_id: r for r in rows if r.label == "unanswerable"}
    assert len(twins) == len(answerable) and {r.category for r in answerable} <= set(RUNGS)
    for item in answerable:
        rung = RUNGS[item.meta["rung"]]
        a, op, b = item.meta["expression"].split()
        a, b = int(a), int(b)
        assert op == rung.op and rung.left[0] <= a <= rung.left[1] and rung.right[0] <= b <= rung.right[1]
        assert item.answers == [str(a + b if op == "+" else a - b if op == "-" else a * b)] and int(item.answers[0]) > 0
        assert [int(x) for x in NUMBER.findall(item.question)] == [a, b]  # both operands stated, nothing else
        twin = twins[item.pair_id]
        assert twin.answers == [] and twin.perturbation == "vague_quantity"
        assert len(NUMBER.findall(twin.question)) == 1  # one of the two quantities is gone


def test_train_validation_and_test_never_share_a_question_and_transfer_never_shares_a_template():
    rows = {split: _rows(split, n=40) for split in LADDER_SPLITS}
    questions = {split: {r.question for r in rs if r.label == "answerable"} for split, rs in rows.items()}
    for split in ("train", "validation", "test"):
        assert all(split_of(q) == split for q in questions[split])
    assert not questions["train"] & questions["validation"] and not questions["train"] & questions["test"]
    assert not questions["validation"] & questions["test"]
    shared = {_skeleton(r.question) for split in ("train", "validation", "test") for r in rows[split]}
    transfer = {_skeleton(r.question) for r in rows["transfer"]}
    assert len(transfer) >= 8 and not shared & transfer, shared & transfer


def test_the_same_seed_gives_the_same_rows_and_another_seed_others():
    first, again, other = _rows("train", seed=5), _rows("train", seed=5), _rows("train", seed=6)
    assert [r.model_dump() for r in first] == [r.model_dump() for r in again]
    assert [r.question for r in first] != [r.question for r in other]


def test_the_one_scorer_credits_the_stated_answer_of_a_ladder_item_and_not_an_echo():
    item = next(r for r in _rows("test") if r.meta["rung"] == "add2-bare" and r.label == "answerable")
    a, _, b = item.meta["expression"].split()
    said = [f"\\boxed{{{item.answers[0]}}}", f"{a} + {b}", f"\\boxed{{{a}+{b}}}", "\\boxed{I don't know.}"]
    outcomes = [outcome(row).value for row in score_completions([item] * len(said), said, protocol="idk")]
    assert outcomes == ["correct", "wrong", "wrong", "abstain"], outcomes


def test_the_cli_writes_a_split_and_names_what_does_not_apply(tmp_path):
    out = tmp_path / "ladder.jsonl"
    done = CliRunner().invoke(app, ["synth", "--kind", "ladder", "--n", "4", "--split", "validation", "--rungs",
                                    "add1-word,mul2-bare", "--seed", "2", "--out", str(out)])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 16 and {r["meta"]["rung"] for r in rows} == {"add1-word", "mul2-bare"}
    assert {r["meta"]["split"] for r in rows} == {"validation"} and {r["source"] for r in rows} == {"synth/ladder"}
    for args, message in ((["--split", "nope"], "split 'nope': choose from train, validation, test, transfer"),
                          (["--rungs", "add9"], "rungs ['add9']: choose from"),
                          (["--themes", "ages"], "do not apply to --kind ladder")):
        done = CliRunner().invoke(app, ["synth", "--kind", "ladder", "--n", "2", *args, "--out", str(tmp_path / "x")])
        assert done.exit_code != 0 and message in " ".join(done.output.split()), done.output
        assert not (tmp_path / "x").exists()
    done = CliRunner().invoke(app, ["synth", "--kind", "hard", "--n", "2", "--split", "test", "--out", str(tmp_path / "h")])
    assert done.exit_code != 0 and "--split and --rungs apply to --kind ladder" in done.output


def test_sft_targets_of_ladder_items_show_their_one_line_of_work(tmp_path):
    items = tmp_path / "ladder.jsonl"
    from abstain.schema import write_jsonl

    write_jsonl(items, _rows("train", n=2))
    out = tmp_path / "rows.jsonl"
    done = CliRunner().invoke(app, ["sft-data", "--data", str(items), "--protocol", "idk", "--no-graph", "plain",
                                    "--no-tokens", "--out", str(out)])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:  # every target was confirmed by the scorer before it was written
        text = row["completion"][0]["content"]
        if row["label"] == "answerable":
            assert text.endswith(f"\\boxed{{{row['answers'][0]}}}") and f" = {row['answers'][0]}." in text, text
        else:
            assert text.endswith("\\boxed{I don't know.}")
    assert any("×" in r["completion"][0]["content"] for r in rows)  # products written as a reader writes them
