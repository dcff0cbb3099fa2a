"""Answer correctness as every judge decides it: what needs no comparison, then the rule comparison.

:func:`correctness_precheck` decides ``correct`` without comparing answers — a refusal has none, a
definite answer to an unanswerable item is wrong by its label, an unboxed answer is wrong by format, an
answerable item without references cannot be judged (an error). The LLM and hybrid judges use it too,
so a response can never talk a model judge into those verdicts. :func:`judge_correctness` adds the rule
comparison (:func:`abstain.judges.answer.check_answer`); a Math-Verify failure becomes an error of the
``correct`` field.

Example:
    >>> from abstain.parsing import parse_response
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="2+2?", answers=["4"], label="answerable",
    ...                   response="\\\\boxed{4}", model="m")
    >>> judge_correctness(row, parse_response(row.response)).correct
    True
    >>> judge_correctness(row, parse_response("four")).judged_by
    {'correct': 'format'}
"""

from __future__ import annotations

from abstain.judges.answer import DEFAULT, AnswerConfig, MathVerifyError, check_answer
from abstain.judges.base import Judgment
from abstain.parsing import Prediction
from abstain.schema import Pred, ResponseRow

__all__ = ["correctness_precheck", "judge_correctness"]


def correctness_precheck(row: ResponseRow, pred: Prediction, lenient_format: bool = False) -> Judgment | None:
    """Correctness decided without comparing answers (refusal, label, format, no reference), or None
    when the answer has to be compared with the references (by rules or by an LLM judge)."""
    if pred.pred is not Pred.ANSWER:
        return Judgment()
    if row.label == "unanswerable":  # nothing to get right: any definite answer is wrong
        return Judgment(correct=False, judged_by={"correct": "label"})
    if not row.answers:
        return Judgment(errors={"correct": "answerable row has no reference answers"})
    if not pred.format_ok and not lenient_format:
        return Judgment(correct=False, judged_by={"correct": "format"})
    return None


def judge_correctness(
    row: ResponseRow, pred: Prediction, config: AnswerConfig = DEFAULT, lenient_format: bool = False
) -> Judgment:
    """Rule-decided correctness of one row (``correct`` stays None when the row refused)."""
    decided = correctness_precheck(row, pred, lenient_format)
    if decided is not None:
        return decided
    try:
        verdict = check_answer(pred.answer or "", row.answers, config)
    except MathVerifyError as exc:
        return Judgment(errors={"correct": f"math-verify: {exc}"})
    return Judgment(correct=verdict, judged_by={"correct": "rule"})
