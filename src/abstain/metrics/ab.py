"""AbstentionBench / TIAR: abstention as the positive class.

``should_abstain`` = the item is unanswerable; an abstention is :func:`abstain.outcomes.is_abstention`
(``pred != ANSWER`` or the behavior is ABS, COND or ELICIT: asking or answering conditionally is not
answering)::

    precision = |abstained & unanswerable| / |abstained|
    recall    = |abstained & unanswerable| / |unanswerable|
    f1        = harmonic mean
    accuracy  = correct answerable / |A|       (:func:`ab_accuracy`: needs only the correctness judgment)

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[1, 0, 0, 5, 0] = 1; c[0, 1, 2, 0, 0] = 1
    >>> float(ab_metrics(c)["precision"])
    0.5
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import ABSTAINED, ANS, CORRECT, UNANS, count, f1, ratio, total

__all__ = ["ab_accuracy", "ab_metrics"]


def ab_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """Abstention precision, recall and F1 from a count tensor."""
    tp = count(c, ABSTAINED, label=UNANS)
    precision = ratio(tp, count(c, ABSTAINED))
    recall = ratio(tp, total(c, label=UNANS))
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}


def ab_accuracy(c: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy on answerable rows from a count tensor."""
    return {"accuracy": ratio(count(c, CORRECT, label=ANS), total(c, label=ANS))}
