"""AbstentionBench's per-dataset macro averages on a hand-built scored file, numbers worked out by hand.

Three datasets (meta.dataset), abstention = is_abstention (a refusal box, or ABS / COND / ELICIT):

  d1: 3 unanswerable (2 abstain, 1 answers), 2 answerable (1 correct, 1 abstains by asking)
      TP 2, FP 1 -> P 2/3, R 2/3, F1 2/3; accuracy 1/2
  d2: 2 unanswerable (none abstains), 2 answerable (both correct)
      nothing abstained -> P 0 (undefined -> 0), R 0, F1 0; accuracy 1
  d3: 1 unanswerable (abstains), 1 answerable whose correctness judgment failed (counted wrong),
      1 unanswerable whose behavior judgment failed on a definite answer (unknown label: dropped)
      TP 1, FP 0 -> P 1, R 1, F1 1; accuracy 0/1
macro: P = (2/3 + 0 + 1)/3 = 5/9, R = 5/9, F1 = 5/9, accuracy = (1/2 + 1 + 0)/3 = 1/2
pooled ab.*: TP 3, abstained 4 -> P 3/4; recall 3/6 over the 6 unanswerable rows with a known label.
"""

from __future__ import annotations

import pytest

from abstain.metrics import MetricsConfig, compute_metrics
from abstain.schema import ScoredRow


def _row(i, dataset, label, pred="ANSWER", correct=None, behavior=None, errors=None):
    return ScoredRow(id=f"{dataset}-{i}", question="q", answers=["1"] if label == "answerable" else [],
                     label=label, response="r", model="m", pred=pred, answer="1", format_ok=True, correct=correct,
                     behavior=behavior, judge_errors=errors or {}, meta={"dataset": dataset})


ROWS = [
    _row(1, "d1", "unanswerable", "MODEL_UNCERTAIN", behavior="ABS"),
    _row(2, "d1", "unanswerable", behavior="ELICIT", correct=False),
    _row(3, "d1", "unanswerable", behavior="SH", correct=False),
    _row(4, "d1", "answerable", correct=True, behavior="SH"),
    _row(5, "d1", "answerable", correct=False, behavior="ELICIT"),  # asking on an answerable item
    _row(1, "d2", "unanswerable", correct=False, behavior="SH"),
    _row(2, "d2", "unanswerable", correct=False, behavior="EA"),
    _row(3, "d2", "answerable", correct=True, behavior="SH"),
    _row(4, "d2", "answerable", correct=True, behavior="SH"),
    _row(1, "d3", "unanswerable", "DATA_UNCERTAIN", behavior="ABS"),
    _row(2, "d3", "answerable", behavior="SH", errors={"correct": "math-verify: timeout"}),
    _row(3, "d3", "unanswerable", correct=False, errors={"behavior": "llm behavior: timeout"}),
]


def test_macro_averages_reproduce_abstentionbench_by_hand():
    m = compute_metrics(ROWS, MetricsConfig(resamples=200))
    assert m["ab.macro.datasets"] == 3
    assert m["ab.macro.precision"] == pytest.approx(5 / 9)
    assert m["ab.macro.recall"] == pytest.approx(5 / 9)
    assert m["ab.macro.f1"] == pytest.approx(5 / 9)
    assert m["ab.macro.accuracy"] == pytest.approx(1 / 2)
    low, high = m["ab.macro.f1_ci"]
    assert 0 <= low <= 5 / 9 <= high <= 1
    # the pooled view stays beside it
    assert m["ab.precision"] == pytest.approx(3 / 4) and m["ab.recall"] == pytest.approx(3 / 6)


def test_by_source_holds_every_family_per_dataset():
    m = compute_metrics(ROWS, MetricsConfig(resamples=0))
    assert m["by_source.d1.ab.precision"] == pytest.approx(2 / 3)
    assert m["by_source.d2.ab.precision"] is None  # pooled convention inside a block: undefined is null
    assert m["by_source.d2.ab.f1"] == 0.0
    assert m["by_source.d1.r1.a_fu"] == 0.0 and m["by_source.d1.r1.u_ref"] == pytest.approx(1 / 3)
    assert m["by_source.d3.n.judge_errors"] == 2
    for family in ("ua.acc", "r1.u_ref", "aca.behavior_score", "ab.f1"):
        assert all(f"by_source.{d}.{family}" in m for d in ("d1", "d2", "d3"))


def test_one_dataset_has_no_per_source_copies():
    m = compute_metrics([r for r in ROWS if r.meta["dataset"] == "d1"], MetricsConfig(resamples=0))
    assert not any(k.startswith("by_source.") for k in m)
    assert m["ab.macro.f1"] == pytest.approx(2 / 3) and m["ab.macro.datasets"] == 1
