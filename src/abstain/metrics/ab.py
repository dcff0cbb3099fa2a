"""AbstentionBench / TIAR: abstention as the positive class.

``should_abstain`` = the item is unanswerable; ``is_abstention`` = ``pred != ANSWER`` or the behavior
is ABS, COND or ELICIT (asking or answering conditionally is not answering)::

    precision = |abstained & unanswerable| / |abstained|
    recall    = |abstained & unanswerable| / |unanswerable|
    f1        = harmonic mean
    accuracy  = correct answerable / |A|

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[1, 0, 0, 5, 0] = 1; c[0, 1, 2, 0, 0] = 1
    >>> float(ab_metrics(c)["precision"])
    0.5
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import ABST_BEHAVIORS, ANS, ANSWER, DU, MU, TRUE, UNANS, f1, ratio, total

__all__ = ["ab_metrics", "abstained"]


def abstained(c: np.ndarray, label: int) -> np.ndarray:
    """Rows of ``label`` that abstain: refused, or answered by asking/conditioning/abstaining."""
    return total(c, label=label, pred=[DU, MU]) + total(c, label=label, pred=ANSWER, behavior=ABST_BEHAVIORS)


def ab_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """AbstentionBench metrics from a count tensor."""
    tp = abstained(c, UNANS)
    fp = abstained(c, ANS)
    precision = ratio(tp, tp + fp)
    recall = ratio(tp, total(c, label=UNANS))
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
        "accuracy": ratio(total(c, label=ANS, pred=ANSWER, correct=TRUE), total(c, label=ANS)),
    }
