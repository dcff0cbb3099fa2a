"""UA-Bench as released: the official ``code/summarize_attr_results.py`` formulas over a count tensor.

Let A be the answerable rows, U the unanswerable rows (N = |U|), and M = |A| - correct the answerable
rows that are not correct (wrong, unparsed or refused). Every count is normalized by the size of its
set, the false negatives of the recall too, so that N and M, which can differ by orders of magnitude,
weigh equally::

    TP_du = |{u in U : pred = DATA_UNCERTAIN}|    FP_du = |{a in A : pred = DATA_UNCERTAIN}|   FN_du = N - TP_du
    TP_mu = |{a in A : pred = MODEL_UNCERTAIN}|   FP_mu = |{u in U : pred = MODEL_UNCERTAIN}|  FN_mu = M - TP_mu

    acc               = correct / |A|
    du_precision      = (TP_du/N) / (TP_du/N + FP_du/M)
    du_recall         = (TP_du/N) / (TP_du/N + FN_du/M)
    mu_precision      = (TP_mu/M) / (TP_mu/M + FP_mu/N)
    mu_recall         = (TP_mu/M) / (TP_mu/M + FN_mu/N)
    du_f1, mu_f1      = 2PR / (P + R)
    avg_f1            = (du_f1 + mu_f1) / 2
    sd_precision      = (TP_mu/M + TP_du/N) / (TP_mu/M + TP_du/N + FP_mu/N + FP_du/M)
    balanced_accuracy = (TP_mu / (TP_mu + FN_mu) + TP_du / (TP_du + FP_mu)) / 2
    du_rate, mu_rate  = TP_du / N, TP_mu / M        (the plain detection rates; not in the official code)

Not in the official code either, and **not** under its ``safe_div`` (undefined, ``null``, without both labels):
``ua.du_discrimination = P(DATA_UNCERTAIN | unanswerable) − P(DATA_UNCERTAIN | answerable) = TP_du/N − FP_du/|A|``
(:func:`du_discrimination_metrics`), the skill of saying a premise is missing *whatever the model can solve*:
an answerable item the model cannot solve is rightly MODEL_UNCERTAIN, never DATA_UNCERTAIN. It reads only the
decision, so a judge error on ``correct`` does not drop the row. Its version within numeral-count bins is
``ua.du_discrimination_within_count`` (:mod:`abstain.metrics.within_count`), and the cue baseline "box
DATA_UNCERTAIN iff <= 2 numerals" scores exactly ``cue.le2_discrimination`` (the same rule, the same formula).

As in the official code, **every division by zero gives 0** (its ``safe_div``), not the ``null`` the other
families report: a UA-Bench number is never undefined, so read ``n.answerable`` / ``n.unanswerable`` to
tell "no rows" from "zero". ``balanced_accuracy``'s second term is the official code's (TN = TP_du,
FP = FP_mu), kept as released. The normalized recall equals the plain rate TP/N only when M = N.

Worked example (the issue's, N = 100 unanswerable, M = 50 answerable errors, TP_du = 80, FP_du = 5):
precision = 0.8 / (0.8 + 0.1) = 8/9, recall = 0.8 / (0.8 + 20/50) = 2/3, DU-F1 = 16/21 = 0.762, while the
harmonic mean with the plain rate 0.8 would be 16/19 = 0.842.

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import ANS, ANSWER, DU, FALSE, SHAPE, UNANS
    >>> c = np.zeros(SHAPE)
    >>> c[UNANS, DU, FALSE, 0, 0] = 80; c[UNANS, ANSWER, FALSE, 0, 0] = 20
    >>> c[ANS, DU, FALSE, 0, 0] = 5; c[ANS, ANSWER, FALSE, 0, 0] = 45
    >>> m = ua_metrics(c)
    >>> round(float(m["du_f1"]), 3), float(m["du_rate"]), float(m["mu_f1"])
    (0.762, 0.8, 0.0)
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import ANS, CORRECT, DU, MU, UNANS, count, ratio, total

__all__ = ["du_discrimination_metrics", "safe_div", "ua_metrics"]


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, and 0 where den is 0 (the official code's ``safe_div``).

    Example:
        >>> import numpy as np
        >>> safe_div(np.array([1.0, 3.0]), np.array([0.0, 4.0])).tolist()
        [0.0, 0.75]
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    positive = den > 0
    return np.where(positive, num / np.where(positive, den, 1.0), 0.0)


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    return safe_div(2.0 * p * r, p + r)


def ua_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """UA-Bench metrics from a count tensor (formulas in the module docstring)."""
    n_a = total(c, label=ANS)
    n = total(c, label=UNANS)
    correct = count(c, CORRECT, label=ANS)  # abstain.outcomes.is_correct
    m = np.maximum(n_a - correct, 0.0)
    tp_du = total(c, label=UNANS, pred=DU)
    fp_du = total(c, label=ANS, pred=DU)
    tp_mu = total(c, label=ANS, pred=MU)
    fp_mu = total(c, label=UNANS, pred=MU)
    fn_du = np.maximum(n - tp_du, 0.0)
    fn_mu = np.maximum(m - tp_mu, 0.0)

    tp_du_n, fp_du_m, fn_du_m = safe_div(tp_du, n), safe_div(fp_du, m), safe_div(fn_du, m)
    tp_mu_m, fp_mu_n, fn_mu_n = safe_div(tp_mu, m), safe_div(fp_mu, n), safe_div(fn_mu, n)
    du_precision = safe_div(tp_du_n, tp_du_n + fp_du_m)
    du_recall = safe_div(tp_du_n, tp_du_n + fn_du_m)
    mu_precision = safe_div(tp_mu_m, tp_mu_m + fp_mu_n)
    mu_recall = safe_div(tp_mu_m, tp_mu_m + fn_mu_n)
    du_f1 = _f1(du_precision, du_recall)
    mu_f1 = _f1(mu_precision, mu_recall)
    detected = tp_mu_m + tp_du_n
    return {
        "acc": safe_div(correct, n_a),
        "du_precision": du_precision,
        "du_recall": du_recall,
        "du_f1": du_f1,
        "du_rate": tp_du_n,
        "mu_precision": mu_precision,
        "mu_recall": mu_recall,
        "mu_f1": mu_f1,
        "mu_rate": tp_mu_m,
        "avg_f1": 0.5 * (du_f1 + mu_f1),
        "sd_precision": safe_div(detected, detected + fp_mu_n + fp_du_m),
        "balanced_accuracy": 0.5 * (safe_div(tp_mu, tp_mu + fn_mu) + safe_div(tp_du, tp_du + fp_mu)),
    }


def du_discrimination_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """``du_discrimination``: P(DATA_UNCERTAIN | unanswerable) − P(DATA_UNCERTAIN | answerable) (NaN without
    both labels).

    Example:
        >>> import numpy as np
        >>> from abstain.metrics.counts import ANS, ANSWER, DU, FALSE, MU, SHAPE, UNANS
        >>> c = np.zeros(SHAPE)
        >>> c[UNANS, DU, FALSE, 0, 0] = 3; c[UNANS, MU, FALSE, 0, 0] = 1     # 3 of 4 unanswerable say DU
        >>> c[ANS, DU, FALSE, 0, 0] = 1; c[ANS, MU, FALSE, 0, 0] = 3         # 1 of 4 answerable say DU
        >>> float(du_discrimination_metrics(c)["du_discrimination"])
        0.5
    """
    du_u = ratio(total(c, label=UNANS, pred=DU), total(c, label=UNANS))
    du_a = ratio(total(c, label=ANS, pred=DU), total(c, label=ANS))
    return {"du_discrimination": du_u - du_a}
