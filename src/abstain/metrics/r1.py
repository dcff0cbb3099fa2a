"""Abstain-R1's six metrics: answering well, refusing when it should, clarifying correctly.

"refused" means ``pred != ANSWER``; "correct" means ``pred == ANSWER and correct``::

    a_acc    = correct answerable / |A|
    a_fu     = refused answerable / |A|                      (false unknowns, lower is better)
    a_acc_c  = correct answerable / answerable not refused
    u_ref    = refused unanswerable / N
    u_clar   = refused unanswerable with a correct clarification / N
    u_clar_c = refused unanswerable with a correct clarification / refused unanswerable

The two clarification metrics are null when no row carries a clarification judgment.

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[1, 2, 2, 0, 2] = 1; c[1, 0, 0, 0, 0] = 1
    >>> float(r1_metrics(c)["u_clar_c"])
    1.0
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import (
    ANS,
    ANSWER,
    CLAR_FALSE,
    CLAR_TRUE,
    DU,
    MU,
    TRUE,
    UNANS,
    ratio,
    total,
)

__all__ = ["r1_metrics"]


def r1_metrics(c: np.ndarray, has_clarification: bool | None = None) -> dict[str, np.ndarray]:
    """Abstain-R1 metrics from a count tensor.

    ``has_clarification`` says whether the data carries clarification judgments at all; by default it
    is read from ``c`` (pass it explicitly for bootstrap tensors so every resample agrees).
    """
    if has_clarification is None:
        has_clarification = bool(np.any(total(c, clar=[CLAR_FALSE, CLAR_TRUE]) > 0))
    n_a = total(c, label=ANS)
    n_u = total(c, label=UNANS)
    correct = total(c, label=ANS, pred=ANSWER, correct=TRUE)
    refused_a = total(c, label=ANS, pred=[DU, MU])
    refused_u = total(c, label=UNANS, pred=[DU, MU])
    out = {
        "a_acc": ratio(correct, n_a),
        "a_fu": ratio(refused_a, n_a),
        "a_acc_c": ratio(correct, n_a - refused_a),
        "u_ref": ratio(refused_u, n_u),
    }
    if has_clarification:
        clarified = total(c, label=UNANS, pred=[DU, MU], clar=CLAR_TRUE)
        out["u_clar"] = ratio(clarified, n_u)
        out["u_clar_c"] = ratio(clarified, refused_u)
    else:
        nan = np.full(np.shape(n_u), np.nan)
        out["u_clar"] = nan
        out["u_clar_c"] = nan
    return out
