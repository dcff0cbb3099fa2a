"""The outcome vocabulary: predicates, their cell masks in the count tensor, and the behavior tables.

Metrics count with cell masks built from the predicates of abstain.outcomes; these tests check that a
real scored row in every cell of the tensor gets the same answer from its cell's masks as from the
predicates themselves, and that metrics computed from the tensor equal counts taken row by row.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from abstain.judges import RuleJudge
from abstain.evaluation.audit import DEV_SET
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.counts import ABSTAINED, CLARIFIED, CORRECT, OUTCOMES, REFUSED, SHAPE, row_cell
from abstain.outcomes import (
    ABSTAINING_BEHAVIORS,
    BEHAVIOR_REWARD,
    BEHAVIOR_SCORE,
    Behavior,
    Outcome,
    as_behavior,
    behavior_scope,
    is_abstention,
    is_clarified,
    is_correct,
    is_refusal,
    outcome,
)
from abstain.schema import JUDGED_FIELDS, Pred, ResponseRow, ScoredRow, read_jsonl
from abstain.scoring import score_rows

BOOLS = (None, False, True)


def _row(label, pred, correct, behavior, clar, errors) -> ScoredRow:
    return ScoredRow(
        id="x", question="q", answers=["1"], label=label, response="r", model="m", pred=pred, answer="1",
        format_ok=True, correct=correct, behavior=behavior, clarification_correct=clar,
        judge_errors={name: f"{name} failed" for name in errors},
    )


def every_cell_row():
    """A real ScoredRow for every combination the judges can produce (errors null their field)."""
    for label, pred, correct, behavior, clar in itertools.product(
        ("answerable", "unanswerable"), list(Pred), BOOLS, (None, *Behavior), BOOLS
    ):
        for n in range(len(JUDGED_FIELDS) + 1):
            for errors in itertools.combinations(JUDGED_FIELDS, n):
                values = {"correct": correct, "behavior": behavior, "clarification_correct": clar}
                if any(values[e] is not None for e in errors):
                    continue  # a failed field is null
                yield _row(label, pred, correct, behavior, clar, errors)


def test_every_cell_is_reached_and_its_masks_agree_with_the_predicates():
    seen = set()
    for row in every_cell_row():
        c = row_cell(row)
        seen.add(c)
        assert REFUSED[c] == is_refusal(row)
        assert ABSTAINED[c] == is_abstention(row)
        assert CORRECT[c] == is_correct(row)
        assert CLARIFIED[c] == is_clarified(row)
        for o, mask in OUTCOMES.items():
            assert mask[c] == (outcome(row) is o), (row, o)
    assert len(seen) == int(np.prod(SHAPE))  # every cell of the tensor holds some row


def test_outcomes_partition_the_cells():
    total = sum(mask.astype(int) for mask in OUTCOMES.values())
    assert (total == 1).all()


@pytest.mark.parametrize(
    ("label", "pred", "correct", "behavior", "errors", "expected"),
    [
        ("answerable", "ANSWER", True, None, (), "correct"),
        ("answerable", "ANSWER", False, None, (), "wrong"),
        ("answerable", "MODEL_UNCERTAIN", None, None, (), "abstain"),
        ("answerable", "ANSWER", None, "ELICIT", (), "abstain"),  # asking is not answering
        ("answerable", "ANSWER", None, None, ("correct",), "unscored"),
        ("answerable", "ANSWER", True, None, ("behavior",), "correct"),  # a correct answer is no abstention
        ("answerable", "ANSWER", False, None, ("behavior",), "unscored"),  # could have abstained in words
        ("unanswerable", "ANSWER", False, "SH", (), "wrong"),
        ("unanswerable", "ANSWER", False, "EA", (), "wrong"),
        ("unanswerable", "ANSWER", False, "COND", (), "abstain"),
        ("unanswerable", "DATA_UNCERTAIN", None, None, ("behavior",), "abstain"),
        ("unanswerable", "ANSWER", False, None, ("behavior",), "unscored"),
        ("unanswerable", "ANSWER", False, None, (), "wrong"),  # behaviors not judged: a definite answer
    ],
)
def test_outcome_table(label, pred, correct, behavior, errors, expected):
    assert outcome(_row(label, pred, correct, behavior, None, errors)).value == expected


def test_tensor_metrics_equal_counts_taken_row_by_row():
    rows = read_jsonl(DEV_SET, ResponseRow)
    scored = list(score_rows(rows, RuleJudge(behaviors="all")))
    m = compute_metrics(scored, MetricsConfig(resamples=0))
    unans = [r for r in scored if r.label == "unanswerable"]
    ans = [r for r in scored if r.label == "answerable"]
    abstained = [r for r in scored if is_abstention(r)]
    assert len({r.label for r in abstained}) == 2 and len(abstained) > 20  # both kinds of rows abstain here
    tp = sum(is_abstention(r) for r in unans)
    assert m["ab.precision"] == pytest.approx(tp / len(abstained))
    assert m["ab.recall"] == pytest.approx(tp / len(unans))
    assert m["ab.accuracy"] == pytest.approx(sum(is_correct(r) for r in ans) / len(ans))
    assert m["r1.a_fu"] == pytest.approx(sum(is_refusal(r) for r in ans) / len(ans))
    assert m["r1.u_ref"] == pytest.approx(sum(is_refusal(r) for r in unans) / len(unans))
    assert m["ua.acc"] == pytest.approx(sum(is_correct(r) for r in ans) / len(ans))


def test_behavior_tables_are_keyed_by_the_enum():
    assert set(BEHAVIOR_REWARD) == set(BEHAVIOR_SCORE) == set(Behavior)
    assert BEHAVIOR_REWARD[Behavior.ELICIT] == 1.0 and BEHAVIOR_REWARD[Behavior.SH] == -1.0
    assert ABSTAINING_BEHAVIORS == {Behavior.ABS, Behavior.COND, Behavior.ELICIT}


def test_behavior_names_are_validated_wherever_they_are_accepted():
    assert as_behavior("cond") is Behavior.COND
    with pytest.raises(ValueError, match="unknown behavior 'ASK'"):
        as_behavior("ASK")
    with pytest.raises(ValueError, match="not 'al'"):
        behavior_scope("al")
    with pytest.raises(ValueError, match="not 'al'"):
        RuleJudge(behaviors="al")
    from abstain.judges import LLMJudgeConfig

    with pytest.raises(ValueError, match="not 'al'"):
        LLMJudgeConfig(behaviors="al")
    with pytest.raises(ValueError):
        ScoredRow(id="x", question="q", answers=[], label="unanswerable", response="r", model="m",
                  pred="ANSWER", answer=None, format_ok=False, correct=False, behavior="ASK")
