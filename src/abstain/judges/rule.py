"""The offline default judge: rules only, no model calls.

* correctness: :func:`abstain.judges.answer.check_answer` on the boxed answer of ``pred == ANSWER``
  rows (an unboxed response committed to nothing and is incorrect unless ``lenient_format``, which
  judges its 200-character tail instead);
* behavior and clarification: pluggable rule functions, applied to unanswerable rows by default —
  :func:`abstain.judges.behavior.classify_behavior` and
  :func:`abstain.judges.clarification.check_clarification` unless replaced.

The ``llm`` and ``hybrid`` judges are registered here too (built lazily, see :mod:`abstain.judges.llm`).

Example:
    >>> from abstain.parsing import parse_response
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="2+2?", answers=["4"], label="answerable",
    ...                   response="\\\\boxed{4}", model="m")
    >>> RuleJudge().judge([row], [parse_response(row.response)])[0].correct
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from abstain.judges.answer import DEFAULT, AnswerConfig, check_answer
from abstain.judges.base import Judge, Judgment, register_judge
from abstain.judges.behavior import classify_behavior as rule_classify_behavior
from abstain.judges.clarification import check_clarification as rule_check_clarification
from abstain.parsing import Prediction
from abstain.schema import Behavior, Pred, ResponseRow

__all__ = ["RuleJudge", "correctness_precheck", "judge_correctness"]

BehaviorFn = Callable[[ResponseRow, Prediction], Behavior | None]
ClarificationFn = Callable[[ResponseRow, Prediction], bool | None]


def correctness_precheck(row: ResponseRow, pred: Prediction, lenient_format: bool = False) -> Judgment | None:
    """Correctness decided without comparing answers (refusal, label, format, no reference), or None
    when the answer has to be compared with the references (by rules or by an LLM judge)."""
    if pred.pred is not Pred.ANSWER:
        return Judgment()
    if row.label == "unanswerable":  # nothing to get right: any definite answer is wrong
        return Judgment(correct=False, judged_by={"correct": "label"})
    if not row.answers:
        return Judgment(error="answerable row has no reference answers")
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
    return Judgment(correct=check_answer(pred.answer or "", row.answers, config), judged_by={"correct": "rule"})


@dataclass
class RuleJudge:
    """Rule-based correctness, behavior and clarification.

    Attributes:
        answer: answer comparison settings.
        lenient_format: judge the tail of responses without a box instead of marking them wrong.
        behaviors: which rows get a behavior label: ``unanswerable`` rows, ``all`` or ``none``.
        classify_behavior: behavior rules (default :func:`~abstain.judges.behavior.classify_behavior`;
            None leaves ``behavior`` null).
        check_clarification: clarification rules (default
            :func:`~abstain.judges.clarification.check_clarification`; None leaves it null).
    """

    answer: AnswerConfig = DEFAULT
    lenient_format: bool = False
    behaviors: Literal["unanswerable", "all", "none"] = "unanswerable"
    classify_behavior: BehaviorFn | None = rule_classify_behavior
    check_clarification: ClarificationFn | None = rule_check_clarification
    name: str = "rule"

    def judge(self, rows: Sequence[ResponseRow], preds: Sequence[Prediction]) -> list[Judgment]:
        out = []
        for row, pred in zip(rows, preds, strict=True):
            j = judge_correctness(row, pred, self.answer, self.lenient_format)
            wants_behavior = self.behaviors == "all" or (
                self.behaviors == "unanswerable" and row.label == "unanswerable"
            )
            if wants_behavior and self.classify_behavior is not None:
                j.behavior = self.classify_behavior(row, pred)
                if j.behavior is not None:
                    j.judged_by["behavior"] = "rule"
            if row.label == "unanswerable" and self.check_clarification is not None:
                j.clarification_correct = self.check_clarification(row, pred)
                if j.clarification_correct is not None:
                    j.judged_by["clarification_correct"] = "rule"
            out.append(j)
        return out


@register_judge("rule")
def _rule_factory(**options: object) -> RuleJudge:
    return RuleJudge(**options)  # type: ignore[arg-type]


@register_judge("llm")
def _llm_factory(**options: object) -> Judge:
    from abstain.judges.llm import LLMJudge

    return LLMJudge.from_options(**options)


@register_judge("hybrid")
def _hybrid_factory(**options: object) -> Judge:
    from abstain.judges.hybrid import HybridJudge

    return HybridJudge.from_options(**options)
