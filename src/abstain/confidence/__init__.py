"""Per-response confidence beside explicit abstention: the estimators (:mod:`~abstain.confidence.estimators`) and
the passes that ask again (``consistency:K``, :mod:`~abstain.confidence.consistency`; ``p_true``,
:mod:`~abstain.confidence.p_true`). Their metrics live in
:mod:`abstain.metrics.confidence` and :mod:`abstain.metrics.selective`.

Example:
    >>> from abstain.confidence import parse_confidence
    >>> parse_confidence("logprob,consistency:5")
    ('logprob', 'consistency:5')
"""

from abstain.confidence.estimators import (
    ESTIMATORS,
    TOP_LOGPROBS,
    VERBALIZED_INSTRUCTION,
    Estimator,
    asks_verbalized,
    estimator_of,
    parse_confidence,
    response_confidence,
    samples_of,
    with_verbalized,
)

__all__ = ["ESTIMATORS", "TOP_LOGPROBS", "VERBALIZED_INSTRUCTION", "Estimator", "asks_verbalized", "estimator_of",
           "parse_confidence", "response_confidence", "samples_of", "with_verbalized"]
