"""Abstain-R1's six metrics: answering well, refusing when it should, clarifying correctly.

"refused" is :func:`abstain.outcomes.is_refusal` (``pred != ANSWER``); "correct" is
:func:`abstain.outcomes.is_correct`::

    a_acc    = correct answerable / |A|
    a_fu     = refused answerable / |A|                      (false unknowns, lower is better)
    a_acc_c  = correct answerable / answerable not refused
    u_ref    = refused unanswerable / N
    u_clar   = refused unanswerable with a correct clarification / N
    u_clar_c = refused unanswerable with a correct clarification / refused unanswerable
    discrimination = u_ref - a_fu                             (not the paper's; 0 for always / never refusing)

The two clarification metrics (:func:`r1_clarification_metrics`) need the clarification judgment and
are null when no row carries one.

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[1, 2, 2, 0, 2] = 1; c[1, 0, 0, 0, 0] = 1
    >>> float(r1_clarification_metrics(c)["u_clar_c"]), float(r1_refusal_metrics(c)["u_ref"])
    (1.0, 0.5)
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import ANS, CLAR_FALSE, CLAR_TRUE, CLARIFIED, CORRECT, REFUSED, UNANS, count, ratio, total

__all__ = ["r1_clarification_metrics", "r1_metrics", "r1_refusal_metrics"]


def r1_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """A-Acc and A-Acc_c from a count tensor (they need the correctness judgment)."""
    n_a = total(c, label=ANS)
    correct = count(c, CORRECT, label=ANS)
    return {"a_acc": ratio(correct, n_a), "a_acc_c": ratio(correct, n_a - count(c, REFUSED, label=ANS))}


def r1_refusal_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """A-FU, U-Ref and their difference, the discrimination, from a count tensor (they read only the decision).

    ``discrimination = u_ref - a_fu``: how much more often the model refuses what it should than what it
    should not; an always-refusing (or never-refusing) model scores 0 however high its U-Ref.
    """
    a_fu = ratio(count(c, REFUSED, label=ANS), total(c, label=ANS))
    u_ref = ratio(count(c, REFUSED, label=UNANS), total(c, label=UNANS))
    return {"a_fu": a_fu, "u_ref": u_ref, "discrimination": u_ref - a_fu}


def r1_clarification_metrics(c: np.ndarray, has_clarification: bool | None = None) -> dict[str, np.ndarray]:
    """U-Clar and U-Clar_c from a count tensor.

    ``has_clarification`` says whether the data carries clarification judgments at all; by default it
    is read from ``c`` (pass it explicitly for bootstrap tensors so every resample agrees).
    """
    if has_clarification is None:
        has_clarification = bool(np.any(total(c, clar=[CLAR_FALSE, CLAR_TRUE]) > 0))
    refused_u = count(c, REFUSED, label=UNANS)
    if not has_clarification:
        nan = np.full(np.shape(refused_u), np.nan)
        return {"u_clar": nan, "u_clar_c": nan}
    clarified = count(c, CLARIFIED, label=UNANS)
    return {"u_clar": ratio(clarified, total(c, label=UNANS)), "u_clar_c": ratio(clarified, refused_u)}
