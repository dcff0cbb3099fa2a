"""``consistency:K``: how many of ``K`` sampled responses reach the same decision as the evaluated one.

The evaluated response (greedy, or the run's own sample) and each of the ``K`` extra samples are parsed by the one
parser (:func:`abstain.parsing.parse_response`). Two decisions agree when both refuse with the same label
(``I don't know`` / ``<DATA_UNCERTAIN>`` …) or both answer and the rule judge's comparison finds the answers equal
(:func:`abstain.judges.answer.check_answer`: normalised match, numbers, Math-Verify for math — the equivalence
the correctness judge uses). The share of agreeing samples is the confidence, a probability-like value in [0, 1].

It costs ``K`` more generations per prompt (sampled at the run's temperature, or 1.0 when the run is greedy, with a
seed apart from the run's own samples).

Example:
    >>> agreement("so \\\\boxed{5}", ["\\\\boxed{5.0}", "\\\\boxed{6}", "it is \\\\boxed{5}", "\\\\boxed{I don't know}"])
    0.5
    >>> agreement("\\\\boxed{I don't know}", ["\\\\boxed{I don't know}", "\\\\boxed{3}"])
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence

from abstain.judges.answer import MathVerifyError, check_answer
from abstain.parsing import Prediction, parse_response
from abstain.schema import Pred

__all__ = ["SAMPLING_SEED_OFFSET", "agreement", "same_decision"]

#: added to the run's seed for the consistency samples, so they never repeat the run's own samples
SAMPLING_SEED_OFFSET = 7_777


def same_decision(a: Prediction, b: Prediction) -> bool:
    """Whether two parsed responses decide alike: the same refusal, or answers the rule judge finds equal."""
    if a.pred != Pred.ANSWER or b.pred != Pred.ANSWER:
        return a.pred == b.pred
    if not a.answer or not b.answer:
        return False
    try:
        return check_answer(b.answer, [a.answer])
    except MathVerifyError:  # undecidable comparison: not counted as agreement
        return False


def agreement(response: str, samples: Sequence[str]) -> float | None:
    """The share of ``samples`` whose decision equals ``response``'s; None without samples."""
    if not samples:
        return None
    reference = parse_response(response)
    return sum(same_decision(reference, parse_response(s)) for s in samples) / len(samples)
