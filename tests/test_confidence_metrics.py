"""Confidence metrics against independent implementations, and explicit abstention against a threshold.

Parity: AUROC against scikit-learn's ``roc_auc_score`` and SciPy's Mann–Whitney U; AURC and PRR against
LM-Polygraph's own code (``src/lm_polygraph/ue_metrics/risk_cov_curve.py`` and ``pred_rej_area.py``, with
``ue_metric.get_random_scores`` / ``normalize_metric``, IINemo/lm-polygraph at commit ac173f3; transcribed below
because ``pip install lm-polygraph`` pulls dozens of packages this project does not need); ECE against
scikit-learn's ``calibration_curve`` bins; Brier against ``brier_score_loss``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

from abstain.metrics.confidence import aurc, auroc, brier, confidence_metrics, ece, prr, risk_coverage
from abstain.metrics.selective import matched_coverage, threshold_curve
from abstain.report.summary import run_metrics
from abstain.schema import ScoredRow


# ---- LM-Polygraph's definitions (ac173f3), estimator = uncertainty (higher = less certain) ---------------------
def _lmp_normalize(target):
    t = np.asarray(target, dtype=float)
    lo, hi = t.min(), t.max()
    if np.isclose(lo, hi):
        lo, hi = lo - 1, hi + 1
    return (t - lo) / (hi - lo)


def _lmp_prr_area(estimator, target):
    target = _lmp_normalize(target)
    ue = np.array(estimator)
    num_obs = len(ue)
    sorted_metrics = np.array(target)[np.argsort(ue)]
    cumsum = np.cumsum(sorted_metrics)
    scores = (cumsum / np.arange(1, num_obs + 1))[::-1]
    return np.sum(scores) / num_obs


def _lmp_rcc_auc(estimator, target):
    # risk_cov_curve.py sorts (estimator, risk) by the estimator *descending*; with an uncertainty that keeps the
    # least certain first, so it is called here with the confidence (= -uncertainty), the order its curve means
    risk = 1 - _lmp_normalize(target)
    pairs = sorted(zip(estimator, risk), key=lambda x: x[0], reverse=True)
    cumulative = np.cumsum([x[1] for x in pairs]) / np.arange(1, len(estimator) + 1)
    return cumulative.mean()


def _lmp_random(function, metrics, num_iter=1000, seed=42):
    rng = np.random.RandomState(seed)
    scores = np.arange(len(metrics))
    values = []
    for _ in range(num_iter):
        rng.shuffle(scores)
        values.append(function(scores, metrics))
    return np.mean(values)


def _data(seed: int, n: int = 200, ties: bool = False):
    rng = np.random.default_rng(seed)
    correct = rng.random(n) < 0.45
    conf = correct * 0.8 + rng.normal(0, 0.7, n)
    if ties:
        conf = np.round(conf, 1)
    return conf, correct


@pytest.mark.parametrize("seed,ties", [(0, False), (1, True), (2, True)])
def test_auroc_is_mann_whitney_and_sklearn(seed, ties):
    conf, correct = _data(seed, ties=ties)
    ours = auroc(conf, correct)
    assert ours == pytest.approx(roc_auc_score(correct, conf), abs=1e-12)
    u = mannwhitneyu(conf[correct], conf[~correct]).statistic
    assert ours == pytest.approx(u / (correct.sum() * (~correct).sum()), abs=1e-12)
    assert auroc(conf, np.ones_like(correct)) is None  # one class: undefined, not 0.5


@pytest.mark.parametrize("seed", [3, 4])
def test_aurc_and_prr_match_lm_polygraph(seed):
    conf, correct = _data(seed)  # continuous: no ties, so every order agrees
    target = correct.astype(float)
    assert aurc(conf, correct) == pytest.approx(_lmp_rcc_auc(conf, target), abs=1e-12)
    area = _lmp_prr_area(-conf, target)
    assert 1 - aurc(conf, correct) == pytest.approx(area, abs=1e-12)
    oracle = _lmp_prr_area(-target, target)
    random = _lmp_random(_lmp_prr_area, target)
    # LM-Polygraph averages 1000 shuffles; abstain uses their exact expectation (the accuracy)
    assert random == pytest.approx(target.mean(), abs=0.01)
    assert prr(conf, correct) == pytest.approx((area - random) / (oracle - random), abs=0.03)
    assert prr(conf, correct) == pytest.approx((area - target.mean()) / (oracle - target.mean()), abs=1e-12)


def test_ties_are_averaged_not_ordered():
    conf, correct = _data(5, ties=True)
    order = np.random.default_rng(0).permutation(len(conf))
    assert aurc(conf, correct) == pytest.approx(aurc(conf[order], correct[order]), abs=1e-12)
    coverage, risk = risk_coverage([1.0, 1.0], [True, False])
    assert risk.tolist() == [0.5, 0.5] and coverage.tolist() == [0.5, 1.0]


@pytest.mark.parametrize("seed", [6, 7])
def test_ece_and_brier_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    probs = rng.random(300)
    correct = rng.random(300) < probs**1.5  # overconfident
    true, pred = calibration_curve(correct, probs, n_bins=10, strategy="uniform")
    counts = np.histogram(probs, bins=np.linspace(0, 1, 11))[0]
    expected = np.sum(counts[counts > 0] * np.abs(true - pred)) / len(probs)
    assert ece(probs, correct) == pytest.approx(expected, abs=1e-12)
    assert brier(probs, correct) == pytest.approx(brier_score_loss(correct, probs), abs=1e-12)


def _row(i: int, protocol: str, label: str, pred: str, correct: bool | None, conf: float | None = None) -> ScoredRow:
    return ScoredRow(id=str(i), question="q", answers=["1"] if label == "answerable" else [], label=label,
                     response="", model="m", protocol=protocol, pred=pred, format_ok=True, correct=correct,
                     answer="1" if pred == "ANSWER" else None,
                     confidence=None if conf is None else {"logprob": conf})


def _policies(seed: int, n: int = 60):
    """answer_only rows with a confidence, and an explicit policy that refuses some items."""
    rng = np.random.default_rng(seed)
    forced, explicit = [], []
    for i in range(n):
        label = "unanswerable" if i % 3 == 0 else "answerable"
        right = label == "answerable" and rng.random() < 0.6
        forced.append(_row(i, "answer_only", label, "ANSWER", right, float(right) + rng.normal(0, 0.8)))
        refuse = rng.random() < (0.6 if not right else 0.15)
        explicit.append(_row(i, "idk", label, "MODEL_UNCERTAIN" if refuse else "ANSWER", None if refuse else right))
    return forced, explicit


def test_matched_coverage_point_and_paired_ci():
    forced, explicit = _policies(0)
    m = matched_coverage(explicit, forced, "logprob", resamples=300)
    answered = [r for r in explicit if r.pred == "ANSWER"]
    assert m["conf.logprob.matched.coverage"] == pytest.approx(len(answered) / len(explicit))
    assert m["conf.logprob.matched.explicit_risk"] == pytest.approx(sum(not r.correct for r in answered) / len(answered))
    kept = sorted(forced, key=lambda r: -r.confidence["logprob"])[:len(answered)]
    assert m["conf.logprob.matched.threshold_risk"] == pytest.approx(sum(not r.correct for r in kept) / len(kept))
    unans = [r.id for r in forced if r.label == "unanswerable"]
    kept_ids = {r.id for r in kept}
    assert m["conf.logprob.matched.threshold_refusal_u"] == pytest.approx(
        sum(i not in kept_ids for i in unans) / len(unans))
    delta, ci = m["conf.logprob.matched.risk_delta"], m["conf.logprob.matched.risk_delta_ci"]
    assert delta == pytest.approx(m["conf.logprob.matched.explicit_risk"] - m["conf.logprob.matched.threshold_risk"])
    assert ci[0] <= delta <= ci[1] and ci[0] < ci[1]
    # the same policy on both sides: explicit abstention = dropping the least confident answers, difference 0
    same = [_row(int(r.id), "idk", r.label, "MODEL_UNCERTAIN" if r.id not in kept_ids else "ANSWER",
                 None if r.id not in kept_ids else r.correct) for r in forced]
    m = matched_coverage(same, forced, "logprob", resamples=100)
    assert m["conf.logprob.matched.risk_delta"] == pytest.approx(0.0, abs=1e-12)
    assert m["conf.logprob.matched.risk_delta_ci"] == pytest.approx([0.0, 0.0], abs=1e-12)
    curve = threshold_curve(forced, "logprob")
    assert curve[-1][0] == 1.0 and curve[-1][1] == pytest.approx(sum(not r.correct for r in forced) / len(forced))


def test_run_metrics_carry_conf_keys_and_curves():
    forced, explicit = _policies(1)
    m = run_metrics([*forced, *explicit], {"protocols": ["answer_only", "idk"], "confidence": ["logprob"]},
                    resamples=100)
    answered = [(r.confidence["logprob"], bool(r.correct)) for r in forced]
    assert m["protocols"]["answer_only"]["conf.logprob.auroc"] == pytest.approx(
        roc_auc_score([c for _, c in answered], [s for s, _ in answered]))
    assert "conf.logprob.matched.risk_delta_ci" in m["protocols"]["idk"]
    assert "conf.logprob.matched.coverage" not in m["protocols"]["answer_only"]
    assert m["confidence"]["logprob"]["explicit"]["idk"][0] == m["protocols"]["idk"]["conf.logprob.matched.coverage"]
    single = confidence_metrics(forced, "logprob", probability=False, resamples=100)
    assert single["conf.logprob.auroc_ci"][0] <= single["conf.logprob.auroc"] <= single["conf.logprob.auroc_ci"][1]
