"""TruthRL's truthfulness: accuracy, hallucination and abstention over every row, and T = Acc − Hall.

Each row's outcome (:func:`abstain.outcomes.outcome`) is correct, wrong or abstain; any definite answer to an
unanswerable item is wrong. Over the rows whose outcome is decided (``unscored`` rows left out)::

    acc          = correct / n
    hallucination = wrong / n
    abstain      = abstained / n
    truthfulness = acc − hallucination     (TruthRL's T = w1·Acc + w2·Unc − w3·Hall with (1, 0, 1))

TruthRL (arXiv 2509.25760) reports these on all items of a benchmark, answerable and not; forced answering
scores T = Acc − Hall ≤ 0 on a hard set, always abstaining T = 0.

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE)
    >>> c[0, 0, 1, 0, 0] = 2   # answerable, answered, correct
    >>> c[0, 0, 0, 0, 0] = 1   # answerable, answered, wrong
    >>> c[1, 1, 0, 0, 0] = 1   # unanswerable, declined (DATA_UNCERTAIN)
    >>> {k: float(v) for k, v in truth_metrics(c).items()}
    {'acc': 0.5, 'hallucination': 0.25, 'abstain': 0.25, 'truthfulness': 0.25}
"""

from __future__ import annotations

import numpy as np

from abstain.metrics.counts import OUTCOMES, count, ratio
from abstain.outcomes import Outcome

__all__ = ["truth_metrics"]


def truth_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, hallucination, abstention and truthfulness (over the decided rows) from a count tensor."""
    right, wrong, declined = (count(c, OUTCOMES[o]) for o in (Outcome.CORRECT, Outcome.WRONG, Outcome.ABSTAIN))
    n = right + wrong + declined
    acc, hall = ratio(right, n), ratio(wrong, n)
    return {"acc": acc, "hallucination": hall, "abstain": ratio(declined, n), "truthfulness": acc - hall}
