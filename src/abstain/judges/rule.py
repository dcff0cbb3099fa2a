"""The offline default judge: rules only, no model calls.

* correctness: :func:`abstain.judges.answer.check_answer` on the boxed answer of ``pred == ANSWER``
  rows (an unboxed response committed to nothing and is incorrect unless ``lenient_format``, which
  judges its 200-character tail instead);
* behavior and clarification: pluggable rule functions, applied to unanswerable rows by default —
  :func:`abstain.judges.behavior.classify_behavior` and
  :func:`abstain.judges.clarification.check_clarification` unless replaced.

Example:
    >>> from abstain.parsing import parse_response
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="2+2?", answers=["4"], label="answerable",
    ...                   response="\\\\boxed{4}", model="m")
    >>> RuleJudge().judge([row], [parse_response(row.response)])[0].correct
    True
    >>> RuleJudge(behaviors="al")
    Traceback (most recent call last):
    ...
    ValueError: behaviors must be one of unanswerable, all, none - not 'al'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from abstain.judges.answer import DEFAULT, AnswerConfig
from abstain.judges.base import Judgment
from abstain.judges.behavior import classify_behavior as rule_classify_behavior
from abstain.judges.clarification import check_clarification as rule_check_clarification
from abstain.judges.correctness import judge_correctness
from abstain.judges.registry import register_judge
from abstain.outcomes import BehaviorScope, behavior_scope
from abstain.parsing import Prediction
from abstain.schema import Behavior, ResponseRow

__all__ = ["RuleJudge"]

BehaviorFn = Callable[[ResponseRow, Prediction], Behavior | None]
ClarificationFn = Callable[[ResponseRow, Prediction], bool | None]


def wants_behavior(scope: BehaviorScope, row: ResponseRow) -> bool:
    """Whether ``row`` gets a behavior label under ``scope``."""
    return scope is BehaviorScope.ALL or (scope is BehaviorScope.UNANSWERABLE and row.label == "unanswerable")


@dataclass
class RuleJudge:
    """Rule-based correctness, behavior and clarification.

    Attributes:
        answer: answer comparison settings.
        lenient_format: judge the tail of responses without a box instead of marking them wrong.
        behaviors: which rows get a behavior label: ``unanswerable`` rows, ``all`` or ``none``
            (:class:`~abstain.outcomes.BehaviorScope`; anything else is an error).
        classify_behavior: behavior rules (default :func:`~abstain.judges.behavior.classify_behavior`;
            None leaves ``behavior`` null).
        check_clarification: clarification rules (default
            :func:`~abstain.judges.clarification.check_clarification`; None leaves it null).
    """

    answer: AnswerConfig = DEFAULT
    lenient_format: bool = False
    behaviors: BehaviorScope | str = BehaviorScope.ALL
    classify_behavior: BehaviorFn | None = rule_classify_behavior
    check_clarification: ClarificationFn | None = rule_check_clarification
    name: str = "rule"

    def __post_init__(self) -> None:
        self.behaviors = behavior_scope(self.behaviors)

    def judge(self, rows: Sequence[ResponseRow], preds: Sequence[Prediction]) -> list[Judgment]:
        out = []
        scope = behavior_scope(self.behaviors)
        for row, pred in zip(rows, preds, strict=True):
            j = judge_correctness(row, pred, self.answer, self.lenient_format)
            if wants_behavior(scope, row) and self.classify_behavior is not None:
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
