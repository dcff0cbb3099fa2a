"""``consistency:K``: how many of ``K`` sampled responses reach the same decision as the evaluated one.

The evaluated response (greedy, or the run's own sample) and each of the ``K`` extra samples are parsed by the one
parser (:func:`abstain.parsing.parse_response`). Two decisions agree when both refuse with the same label
(``I don't know`` / ``<DATA_UNCERTAIN>`` …) or both answer and the rule judge's comparison finds the answers equal
(:func:`abstain.judges.answer.check_answer`: normalised match, numbers, Math-Verify for math — the equivalence
the correctness judge uses). For an item whose references are plain numbers the answers compared are the ones the
responses *state* (:func:`abstain.judges.stated.stated_answer`), as the judge compares them: an unevaluated
expression of numbers (an echo of the question's ``93+59``) states nothing, and agrees with nothing. The share of
agreeing samples is the confidence, a probability-like value in [0, 1].

It costs ``K`` more generations per prompt (sampled at the run's temperature, or 1.0 when the run is greedy, with a
seed apart from the run's own samples).

Example:
    >>> agreement("so \\\\boxed{5}", ["\\\\boxed{5.0}", "\\\\boxed{6}", "it is \\\\boxed{5}", "\\\\boxed{I don't know}"])
    0.5
    >>> agreement("\\\\boxed{I don't know}", ["\\\\boxed{I don't know}", "\\\\boxed{3}"])
    0.5
    >>> agreement("93+59", ["93+59", "152", "93 + 59 = 152"], references=["152"])   # an echo agrees with nothing
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence

from abstain.judges.answer import MathVerifyError, check_answer, numeric_value, stated_number
from abstain.parsing import Prediction, parse_response
from abstain.schema import Pred

__all__ = ["SAMPLING_SEED_OFFSET", "agreement", "same_decision"]

#: added to the run's seed for the consistency samples, so they never repeat the run's own samples
SAMPLING_SEED_OFFSET = 7_777


def same_decision(a: Prediction, b: Prediction, numeric: bool = False) -> bool:
    """Whether two parsed responses decide alike: the same refusal, or answers the rule judge finds equal
    (``numeric``: the item's references are plain numbers, so the stated answers are compared)."""
    if a.pred != Pred.ANSWER or b.pred != Pred.ANSWER:
        return a.pred == b.pred
    if not a.answer or not b.answer:
        return False
    reference = a.answer
    if numeric:
        value = stated_number(a.answer)
        if value is None:
            return False  # an expression of numbers, or no number: no answer to agree with
        reference = repr(value)
    try:
        return check_answer(b.answer, [reference])
    except MathVerifyError:  # undecidable comparison: not counted as agreement
        return False


def agreement(response: str, samples: Sequence[str], references: Sequence[str] = ()) -> float | None:
    """The share of ``samples`` whose decision equals ``response``'s; None without samples. ``references``: the
    item's reference answers (when they are all plain numbers, stated answers are compared)."""
    if not samples:
        return None
    reference = parse_response(response)
    numeric = bool(references) and all(numeric_value(r) is not None for r in references)
    return sum(same_decision(reference, parse_response(s), numeric) for s in samples) / len(samples)
