"""How well a confidence estimate separates correct from wrong answers: AUROC, risk–coverage, PRR, ECE, Brier.

The population is the rows that *gave an answer* (outcome ``correct`` or ``wrong``, :func:`abstain.outcomes.outcome`;
an answer to an unanswerable item is wrong) and carry a value for the estimator; the target is whether the answer was
correct — the judge's decision, the same one every other metric reads. Higher confidence means more confident.

* ``auroc`` — P(a correct answer is more confident than a wrong one), ties counting one half: the Mann–Whitney U
  statistic over the two groups (scikit-learn's ``roc_auc_score`` gives the same number).
* ``aurc`` — the area under the risk–coverage curve: keep the ``k`` most confident answers, risk = the share of them
  that is wrong, averaged over ``k = 1..n`` (LM-Polygraph's ``RiskCoverageCurveAUC`` with risk = 1 − target).
* ``prr`` — the prediction–rejection ratio, LM-Polygraph's normalised ``PredictionRejectionArea``: the area
  ``mean_k(accuracy of the k most confident)``, placed between a random order (0; its expectation, the accuracy)
  and the oracle order (1): ``(area − random) / (oracle − random)``.
* ``ece`` and ``brier`` — for estimators whose values are probabilities: the expected calibration error over 10
  equal-width bins, ``sum_b (n_b / n) |accuracy_b − mean confidence_b|``, and the mean squared error of the
  probability against correct (0/1).

Tied confidences are ordered at random *in expectation*: the risk at a cut inside a block of ties is the block's
average, so a metric never depends on the order the rows came in.

Every value has a bootstrap CI over items (all samples of an item move together), seeded per estimator and group.

Example:
    >>> scores, correct = [0.9, 0.8, 0.3, 0.2], [True, True, False, True]
    >>> auroc(scores, correct), round(aurc(scores, correct), 4), round(prr(scores, correct), 4)
    (0.6666666666666666, 0.1458, 0.5556)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from abstain.outcomes import Outcome, outcome
from abstain.schema import ScoredRow

__all__ = ["BINS", "answered_scores", "aurc", "auroc", "bootstrap_cis", "brier", "confidence_metrics", "ece", "prr",
           "reliability",
           "resample_items", "risk_coverage", "top_sum"]

#: equal-width bins of the expected calibration error and the reliability diagram
BINS = 10


def _arrays(scores: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    s, c = np.asarray(scores, dtype=float), np.asarray(correct, dtype=float)
    if s.shape != c.shape or s.ndim != 1:
        raise ValueError(f"scores ({s.shape}) and correct ({c.shape}) must be two lists of one length")
    return s, c


def auroc(scores: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Mann–Whitney AUROC of ``scores`` for ``correct``; None unless both classes occur."""
    s, c = _arrays(scores, correct)
    pos, neg = int(c.sum()), int(len(c) - c.sum())
    if pos == 0 or neg == 0:
        return None
    values, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    average = np.cumsum(counts) - (counts - 1) / 2  # the mean 1-based rank of each tied block
    ranks = average[inverse]
    u = ranks[c == 1].sum() - pos * (pos + 1) / 2
    return float(u / (pos * neg))


def _blocks(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order by confidence, descending; start of each tie block; its size) in sorted positions."""
    order = np.argsort(-scores, kind="mergesort")
    sorted_s = scores[order]
    if not len(scores):
        return order, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(sorted_s)) + 1))  # (np.r_ costs more than the work here)
    sizes = np.diff(np.append(starts, len(scores)))
    return order, starts, sizes


def top_sum(scores: Sequence[float], values: Sequence[float], k: np.ndarray | float) -> np.ndarray:
    """The expected sum of ``values`` over the ``k`` most confident rows, ties broken at random (``k`` may be an
    array of cuts, or fractional).

    Example:
        >>> top_sum([0.9, 0.5, 0.5], [1, 0, 1], np.array([1, 2, 3])).tolist()
        [1.0, 1.5, 2.0]
    """
    s, v = np.asarray(scores, dtype=float), np.asarray(values, dtype=float)
    order, starts, sizes = _blocks(s)
    block_sums = np.add.reduceat(v[order], starts) if len(s) else np.zeros(0)
    before = np.concatenate(([0.0], np.cumsum(block_sums)))  # sum of the blocks before block j
    edges = np.append(starts, len(s))
    cuts = np.clip(np.asarray(k, dtype=float), 0, len(s))
    j = np.clip(np.searchsorted(edges, cuts, side="right") - 1, 0, max(len(starts) - 1, 0))
    if not len(s):
        return np.zeros_like(cuts)
    inside = np.clip(cuts - edges[j], 0, sizes[j])
    return before[j] + inside * block_sums[j] / sizes[j]


def risk_coverage(scores: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """(coverage k/n, risk among the k most confident) for k = 1..n."""
    s, c = _arrays(scores, correct)
    k = np.arange(1, len(s) + 1, dtype=float)
    return k / max(len(s), 1), top_sum(s, 1 - c, k) / k


def aurc(scores: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Area under the risk–coverage curve (lower is better); None without rows."""
    if not len(scores):
        return None
    return float(risk_coverage(scores, correct)[1].mean())


def prr(scores: Sequence[float], correct: Sequence[bool], area_under_risk: float | None = None) -> float | None:
    """The normalised prediction–rejection ratio (1: oracle order, 0: random); None when all answers agree.
    ``area_under_risk``: :func:`aurc` of the same rows, when the caller has it."""
    s, c = _arrays(scores, correct)
    if not len(s) or c.min() == c.max():
        return None
    area = 1 - (aurc(s, c) if area_under_risk is None else area_under_risk)  # type: ignore[operator]
    n, right = len(c), int(c.sum())
    oracle = (right + right * float(np.sum(1 / np.arange(right + 1, n + 1)))) / n  # mean_k min(k, right) / k
    random = float(c.mean())
    return float((area - random) / (oracle - random))


def reliability(probs: Sequence[float], correct: Sequence[bool], bins: int = BINS) -> list[tuple[float, float, int]]:
    """(mean confidence, accuracy, rows) of every non-empty equal-width bin over [0, 1] (the last bin is closed)."""
    p, c = _arrays(probs, correct)
    which = np.clip((p * bins).astype(int), 0, bins - 1)
    out = []
    for b in range(bins):
        mask = which == b
        if mask.any():
            out.append((float(p[mask].mean()), float(c[mask].mean()), int(mask.sum())))
    return out


def ece(probs: Sequence[float], correct: Sequence[bool], bins: int = BINS) -> float | None:
    """Expected calibration error over ``bins`` equal-width bins; None without rows."""
    if not len(probs):
        return None
    return float(sum(n * abs(acc - conf) for conf, acc, n in reliability(probs, correct, bins)) / len(probs))


def brier(probs: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Mean squared error of the probability against correct (0/1); None without rows."""
    p, c = _arrays(probs, correct)
    return float(((p - c) ** 2).mean()) if len(p) else None


def resample_items(members: Sequence[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """The row indices of one bootstrap draw of items (``members[j]``: the rows of item ``j``), items with replacement.

    Example:
        >>> resample_items([np.array([0]), np.array([1, 2])], np.random.default_rng(0)).tolist()
        [1, 2, 1, 2]
    """
    draws = rng.integers(0, len(members), len(members))
    if all(len(m) == 1 for m in members):  # one row per item: plain indexing, no concatenation
        return np.concatenate(members)[draws]
    return np.concatenate([members[j] for j in draws])


def bootstrap_cis(ids: Sequence[str], point: dict[str, float | None],
                  compute: Callable[[np.ndarray], dict[str, float | None]], resamples: int, rng: np.random.Generator,
                  confidence: float) -> dict[str, list[float] | None]:
    """Each key's bootstrap CI: ``compute(row indices)`` over ``resamples`` draws of the items ``ids`` name (all rows
    of an item move together); None where the point value or every draw is undefined."""
    from abstain.metrics.compute import _interval

    boot: dict[str, list[float]] = {key: [] for key in point}
    if resamples and len(ids):
        items = sorted(set(ids))
        index = {item: n for n, item in enumerate(items)}
        of_item = np.array([index[i] for i in ids])
        members = [np.flatnonzero(of_item == n) for n in range(len(items))]
        for _ in range(resamples):
            for key, value in compute(resample_items(members, rng)).items():
                boot[key].append(np.nan if value is None else value)
    return {key: _interval(np.asarray(boot[key]), confidence) if value is not None and boot[key] else None
            for key, value in point.items()}


def answered_scores(rows: Sequence[ScoredRow], name: str) -> tuple[list[float], list[bool], list[str]]:
    """(confidence, correct, item id) of the rows that gave an answer and carry a value for estimator ``name``."""
    scores, correct, ids = [], [], []
    for row in rows:
        value = (row.confidence or {}).get(name)
        result = outcome(row)
        if value is None or result not in (Outcome.CORRECT, Outcome.WRONG):
            continue
        scores.append(float(value))
        correct.append(result is Outcome.CORRECT)
        ids.append(row.id)
    return scores, correct, ids


def _values(scores: np.ndarray, correct: np.ndarray, probability: bool) -> dict[str, float | None]:
    area = aurc(scores, correct)
    out = {"auroc": auroc(scores, correct), "aurc": area, "prr": prr(scores, correct, area)}
    if probability:
        out["ece"], out["brier"] = ece(scores, correct), brier(scores, correct)
    return out


def confidence_metrics(rows: Sequence[ScoredRow], name: str, probability: bool, resamples: int = 1000,
                       seed: int = 0, confidence: float = 0.95, stream: str = "") -> dict[str, Any]:
    """``conf.<name>.*`` for ``rows``: the metrics above with ``_ci`` intervals, and ``conf.<name>.n`` (answers with
    a value) and ``conf.<name>.accuracy`` (their share correct). ``stream`` names the group, so each group has its
    own bootstrap stream."""
    scores, correct, ids = answered_scores(rows, name)
    s, c = np.asarray(scores, dtype=float), np.asarray(correct, dtype=float)
    point = _values(s, c, probability)
    rng = np.random.default_rng([seed, *f"conf:{name}:{stream}".encode()])
    cis = bootstrap_cis(ids, point, lambda drawn: _values(s[drawn], c[drawn], probability), resamples, rng, confidence)
    prefix = f"conf.{name}"
    out: dict[str, Any] = {f"{prefix}.n": len(s), f"{prefix}.accuracy": float(c.mean()) if len(c) else None}
    for key, value in point.items():
        out[f"{prefix}.{key}"] = value
        out[f"{prefix}.{key}_ci"] = cis[key]
    return out
