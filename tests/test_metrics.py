"""Metrics of the four protocols, checked against numbers worked out by hand from real rows.

The fixture holds five UMWP pairs (category "reasoning") and two SelfAware questions ("knowledge") with
hand-written responses; behaviors and clarification verdicts are the hand labels stored beside them.

reasoning rows (A = answerable, U = unanswerable):
  A umwp-1    \\boxed{460}            correct
  A umwp-2    \\boxed{3}              wrong (gold 1)
  A umwp-4    I don't know            MODEL_UNCERTAIN
  A umwp-6    <DATA_UNCERTAIN>        DATA_UNCERTAIN
  A umwp-8    no box                  format error -> wrong
  U umwp-2501 <DATA_UNCERTAIN>        ABS,    clarification wrong
  U umwp-2502 I don’t know + question ELICIT, clarification correct
  U umwp-2504 \\boxed{14}             SH
  U umwp-2506 <MODEL_UNCERTAIN>       ABS
  U umwp-2508 nested <DATA_UNCERTAIN> ABS
knowledge rows: A selfaware-1 "A song" correct; U selfaware-2338 "I dont know" ABS.
"""

from __future__ import annotations

import math

import pytest

from abstain.judges import RuleJudge
from abstain.metrics import BehaviorValues, MetricsConfig, compute_metrics
from abstain.schema import ResponseRow, read_jsonl
from abstain.scoring import score_rows

FIX = 1e-12


@pytest.fixture(scope="module")
def scored(fixtures_dir):
    rows = read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow)
    out = []
    for row, s in zip(rows, score_rows(rows, RuleJudge()), strict=True):
        extra = row.model_dump()
        out.append(s.model_copy(update={
            "behavior": extra["human_behavior"],
            "clarification_correct": extra["human_clarification_correct"],
        }))
    return out


@pytest.fixture(scope="module")
def metrics(scored):
    return compute_metrics(scored, MetricsConfig(resamples=200, seed=3))


def test_parsed_decisions(scored):
    by_id = {r.id: r for r in scored}
    assert by_id["umwp-1"].correct is True and by_id["umwp-2"].correct is False
    assert by_id["umwp-4"].pred.value == "MODEL_UNCERTAIN" and by_id["umwp-4"].correct is None
    assert by_id["umwp-8"].format_ok is False and by_id["umwp-8"].correct is False
    assert by_id["umwp-2502"].clarification == "How many storks came to join them?"
    assert by_id["selfaware-1"].correct is True


def test_ua_bench_reasoning_by_hand(metrics):
    m = {k.removeprefix("by_category.reasoning."): v for k, v in metrics.items() if k.startswith("by_category.reasoning.")}
    # |A| = 5, correct = 1, M = |A_E| = 4, N = 5 (the official UA-Bench formulas, see tests/test_metrics_ua.py)
    assert m["ua.acc"] == pytest.approx(1 / 5)
    # DU: TP = 2 (2501, 2508), FP = 1 (umwp-6), FN = 3 -> P = (2/5) / (2/5 + 1/4) = 8/13,
    # R = (2/5) / (2/5 + 3/4) = 8/23, F1 = 2 / (13/8 + 23/8) = 4/9; the plain rate TP/N = 2/5
    assert m["ua.du_precision"] == pytest.approx(8 / 13)
    assert m["ua.du_recall"] == pytest.approx(8 / 23)
    assert m["ua.du_f1"] == pytest.approx(4 / 9)
    assert m["ua.du_rate"] == pytest.approx(2 / 5)
    # MU: TP = 1 (umwp-4), FP = 2 (2502, 2506), FN = 3 -> P = (1/4) / (1/4 + 2/5) = 5/13,
    # R = (1/4) / (1/4 + 3/5) = 5/17, F1 = 2 / (13/5 + 17/5) = 1/3; the plain rate TP/M = 1/4
    assert m["ua.mu_precision"] == pytest.approx(5 / 13)
    assert m["ua.mu_recall"] == pytest.approx(5 / 17)
    assert m["ua.mu_f1"] == pytest.approx(1 / 3)
    assert m["ua.mu_rate"] == pytest.approx(1 / 4)
    assert m["ua.avg_f1"] == pytest.approx((4 / 9 + 1 / 3) / 2)


def test_abstain_r1_reasoning_by_hand(metrics):
    m = {k.removeprefix("by_category.reasoning."): v for k, v in metrics.items() if k.startswith("by_category.reasoning.")}
    assert m["r1.a_acc"] == pytest.approx(1 / 5)
    assert m["r1.a_fu"] == pytest.approx(2 / 5)  # umwp-4, umwp-6
    assert m["r1.a_acc_c"] == pytest.approx(1 / 3)  # 1 correct of 3 answered
    assert m["r1.u_ref"] == pytest.approx(4 / 5)
    assert m["r1.u_clar"] == pytest.approx(1 / 5)  # 2502 refused with a correct clarification
    assert m["r1.u_clar_c"] == pytest.approx(1 / 4)


def test_aca_and_abstentionbench_reasoning_by_hand(metrics):
    m = {k.removeprefix("by_category.reasoning."): v for k, v in metrics.items() if k.startswith("by_category.reasoning.")}
    assert m["aca.dist.ABS"] == pytest.approx(3 / 5)
    assert m["aca.dist.ELICIT"] == pytest.approx(1 / 5)
    assert m["aca.dist.SH"] == pytest.approx(1 / 5)
    assert m["aca.dist.COND"] == 0 and m["aca.dist.EA"] == 0
    assert m["aca.behavior_reward"] == pytest.approx((3 * 0.3 + 1.0 - 1.0) / 5)
    assert m["aca.behavior_score"] == pytest.approx((3 * 0.5 + 1.0 + 0.0) / 5)
    assert m["aca.idk_score"] == pytest.approx(4 / 5)
    assert m["aca.by_perturbation.question_missing.behavior_score"] == 0.0  # 2504 answered: SH
    assert m["aca.by_perturbation.ambiguous_key_info.behavior_reward"] == 1.0
    assert m["aca.by_perturbation.question_missing.idk_score"] == 0.0
    # abstentions: U 4 (refused) + 0; A 2 (refused) -> P = 4/6, R = 4/5
    assert m["ab.precision"] == pytest.approx(2 / 3)
    assert m["ab.recall"] == pytest.approx(4 / 5)
    assert m["ab.f1"] == pytest.approx(8 / 11)
    assert m["ab.accuracy"] == pytest.approx(1 / 5)


def test_overall_combines_both_categories(metrics):
    # |A| = 6 with 2 correct; U = 6, all refused except umwp-2504
    assert metrics["ua.acc"] == pytest.approx(2 / 6)
    assert metrics["r1.u_ref"] == pytest.approx(5 / 6)
    assert metrics["by_category.knowledge.ua.acc"] == 1.0
    assert metrics["by_category.knowledge.ua.mu_recall"] == 0.0  # M = 0: UA-Bench's code gives 0, not null
    assert metrics["by_category.knowledge.ua.du_recall"] == 0.0
    counts = {k: metrics[k] for k in ("n.answerable", "n.unanswerable", "n.judge_errors", "n.format_errors")}
    assert counts == {"n.answerable": 6, "n.unanswerable": 6, "n.judge_errors": 0, "n.format_errors": 1}


def test_every_value_has_a_ci_inside_the_valid_range(metrics):
    for key, value in metrics.items():
        if key.endswith(("_ci", ".datasets", "cue.best_threshold")) or "n" in key.split("."):
            continue  # counts, and the shortcut's threshold (a numeral count, not a rate)
        ci = metrics[f"{key}_ci"]
        if value is None:
            assert ci is None
            continue
        signed = ("behavior_reward", "discrimination", "discrimination_within_count", "truthfulness")
        low, high = (-1, 1) if key.endswith(signed) else (0, 1)
        assert low - FIX <= value <= high + FIX, key
        if ci is not None:
            assert low - FIX <= ci[0] <= ci[1] <= high + FIX, key


def test_a_judge_error_leaves_only_the_families_that_need_the_field(scored):
    bad = [s.model_copy(update={"judge_errors": {"correct": "judge said 'Maybe'"}, "correct": None})
           if s.id == "umwp-2" else s for s in scored]
    m = compute_metrics(bad, MetricsConfig(resamples=0))
    base = compute_metrics(scored, MetricsConfig(resamples=0))
    assert m["n.judge_errors"] == 1 and m["n.judge_errors.correct"] == 1 and m["n.judge_errors.behavior"] == 0
    assert m["n.answerable"] == 6  # still a row of the file
    assert m["ua.acc"] == pytest.approx(2 / 5)  # umwp-2 (wrong) is no longer counted where correctness is read
    assert m["r1.a_acc"] == pytest.approx(2 / 5) and m["ab.accuracy"] == pytest.approx(2 / 5)
    # families that never read `correct` count the row as before
    for key in ("r1.a_fu", "r1.u_ref", "ab.precision", "ab.recall", "ab.f1", "aca.behavior_score", "aca.idk_score"):
        assert m[key] == base[key], key
    assert m["ua.acc_ci"] is None  # resamples=0: no intervals


def test_bootstrap_is_seeded_and_resamples_items_not_rows(scored):
    a = compute_metrics(scored, MetricsConfig(resamples=300, seed=1))
    b = compute_metrics(scored, MetricsConfig(resamples=300, seed=1))
    c = compute_metrics(scored, MetricsConfig(resamples=300, seed=2))
    assert a == b and a["ua.acc_ci"] != c["ua.acc_ci"]
    # a second sample of every item leaves point estimates unchanged; intervals stay item-level
    doubled = scored + [s.model_copy(update={"sample": 1}) for s in scored]
    d = compute_metrics(doubled, MetricsConfig(resamples=300, seed=1))
    assert d["ua.acc"] == a["ua.acc"]
    width = lambda m: m["ua.acc_ci"][1] - m["ua.acc_ci"][0]  # noqa: E731
    assert math.isclose(width(d), width(a), rel_tol=0.35)


def test_no_clarification_judgments_make_clar_keys_null(scored):
    plain = [s.model_copy(update={"clarification_correct": None}) for s in scored]
    m = compute_metrics(plain, MetricsConfig(resamples=50))
    assert m["r1.u_clar"] is None and m["r1.u_clar_c"] is None and m["r1.u_clar_ci"] is None


def test_behavior_score_values_are_configurable(scored):
    values = BehaviorValues(score={"ELICIT": 1.0, "COND": 1.0, "ABS": 0.0, "EA": 0.0, "SH": 0.0})
    m = compute_metrics(scored, MetricsConfig(resamples=0, behavior_values=values))
    assert m["by_category.reasoning.aca.behavior_score"] == pytest.approx(1 / 5)
    with pytest.raises(ValueError, match="miss"):
        BehaviorValues(score={"ELICIT": 1.0})


def test_a_class_never_predicted_scores_f1_zero_not_undefined(scored):
    # nobody says DATA_UNCERTAIN: recall 0, precision undefined (0/0), F1 = 2TP/(2TP+FP+FN) = 0
    no_du = [s.model_copy(update={"pred": "MODEL_UNCERTAIN"}) if s.pred.value == "DATA_UNCERTAIN" else s
             for s in scored]
    m = compute_metrics(no_du, MetricsConfig(resamples=100))
    assert m["ua.du_recall"] == 0.0 and m["ua.du_precision"] == 0.0  # UA-Bench: 0/0 -> 0
    assert m["ua.du_f1"] == 0.0 and m["ua.du_f1_ci"] == [0.0, 0.0]
