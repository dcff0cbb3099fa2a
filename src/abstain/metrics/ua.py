"""UA-Bench: answer accuracy and the attribution F1s over normalized counts.

Let A be the answerable rows, U the unanswerable rows (N = |U|), A_E the answerable rows that are
not correct (M = |A_E|). Counts are normalized by their set's size so that N and M, which can differ
by orders of magnitude, weigh equally::

    acc          = correct / |A|
    du_recall    = TP_du / N                        TP_du = |{u in U : pred = DATA_UNCERTAIN}|
    du_precision = (TP_du/N) / (TP_du/N + FP_du/M)  FP_du = |{a in A_E : pred = DATA_UNCERTAIN}|
    mu_recall    = TP_mu / M                        TP_mu = |{a in A_E : pred = MODEL_UNCERTAIN}|
    mu_precision = (TP_mu/M) / (TP_mu/M + FP_mu/N)  FP_mu = |{u in U : pred = MODEL_UNCERTAIN}|

An FP term whose set is empty counts 0; F1 is the harmonic mean of precision and recall.

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[0, 0, 1, 0, 0] = 3; c[0, 2, 2, 0, 0] = 1; c[1, 1, 2, 0, 0] = 2
    >>> {k: float(v) for k, v in ua_metrics(c).items()}["mu_f1"]
    1.0
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import ANS, ANSWER, DU, MU, TRUE, UNANS, f1, ratio, total

__all__ = ["ua_metrics"]


def _normalized_fp(fp: np.ndarray, size: np.ndarray) -> np.ndarray:
    return np.where(size > 0, ratio(fp, size), 0.0)


def ua_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """UA-Bench metrics from a count tensor (see the module docstring)."""
    n_a = total(c, label=ANS)
    n_u = total(c, label=UNANS)
    correct = total(c, label=ANS, pred=ANSWER, correct=TRUE)
    m = n_a - correct
    # a refusal is never "correct", so every answerable refusal lies in A_E
    du_recall = ratio(total(c, label=UNANS, pred=DU), n_u)
    du_precision = ratio(du_recall, du_recall + _normalized_fp(total(c, label=ANS, pred=DU), m))
    mu_recall = ratio(total(c, label=ANS, pred=MU), m)
    mu_precision = ratio(mu_recall, mu_recall + _normalized_fp(total(c, label=UNANS, pred=MU), n_u))
    return {
        "acc": ratio(correct, n_a),
        "du_precision": du_precision,
        "du_recall": du_recall,
        "du_f1": f1(du_precision, du_recall),
        "mu_precision": mu_precision,
        "mu_recall": mu_recall,
        "mu_f1": f1(mu_precision, mu_recall),
    }
