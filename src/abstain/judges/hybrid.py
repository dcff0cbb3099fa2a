"""The hybrid judge: rules where they are certain, the LLM judge for the rest.

* correctness: the rule comparison decides when it says *correct*, or when every reference is a plain number and the
  answer is one too, or states only an unevaluated expression of numbers (``93+59``: no answer, under the default
  stated-answer rule); then "wrong" is certain too. Other mismatches (words, units, expressions the rules may not
  equate) and Math-Verify failures go to the LLM.
* behavior: :func:`abstain.judges.behavior.rule_behavior` decides when it is certain (a boxed refusal
  token, a boxed question, a bare boxed number with no hedging); everything else goes to the LLM.
* clarification: the structured-gap rule (:func:`abstain.judges.clarification.check_clarification`)
  decides when it can; items with a free-text ``gap`` go to the LLM.

``judged_by`` says, per field, whether ``rule`` (or ``label`` / ``format``) or ``llm`` decided.

Example:
    >>> from abstain.llm import ChatClient, ClientConfig, Endpoint
    >>> from abstain.parsing import parse_response
    >>> from abstain.schema import ResponseRow
    >>> judge = HybridJudge(ChatClient(Endpoint("http://127.0.0.1:9/v1", "m"), ClientConfig(cache=False)))
    >>> row = ResponseRow(id="1", question="How many?", answers=["4"], label="answerable",
    ...                   response="2 + 2 = \\\\boxed{4}", model="m")
    >>> j = judge.judge([row], [parse_response(row.response)])[0]   # no server needed: rules are sure
    >>> j.correct, j.judged_by
    (True, {'correct': 'rule', 'behavior': 'rule'})
    >>> judge.close()
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from abstain.judges.answer import DEFAULT, AnswerConfig, MathVerifyError, check_answer, numeric_value
from abstain.judges.stated import stated_answer
from abstain.judges.behavior import rule_behavior
from abstain.judges.clarification import check_clarification
from abstain.judges.correctness import correctness_precheck
from abstain.judges.llm import Decided, LLMJudge, Plan
from abstain.judges.registry import register_judge
from abstain.parsing import Prediction
from abstain.schema import ResponseRow

__all__ = ["HybridJudge"]


@dataclass
class HybridJudge(LLMJudge):
    """Rules first, the LLM where the rules are not sure (see the module docstring)."""

    answer: AnswerConfig = DEFAULT
    name: str = "hybrid"

    def plan_correct(self, row: ResponseRow, pred: Prediction) -> Plan:
        if correctness_precheck(row, pred, self.config.lenient_format) is not None:
            return super().plan_correct(row, pred)
        answer = pred.answer or ""
        try:
            if check_answer(answer, row.answers, self.answer):
                return Decided("correct", True, "rule")
        except MathVerifyError:  # the rules could not decide: the LLM's job
            return super().plan_correct(row, pred)
        if all(numeric_value(a) is not None for a in row.answers) and (
                numeric_value(answer) is not None
                or (self.answer.match == "stated" and stated_answer(answer).kind == "expression")):
            return Decided("correct", False, "rule")
        return super().plan_correct(row, pred)

    def plan_behavior(self, row: ResponseRow, pred: Prediction) -> Plan:
        if not self.wants_behavior(row):
            return None
        ruling = rule_behavior(row, pred)
        if ruling.certain:
            return Decided("behavior", ruling.behavior, "rule")
        return super().plan_behavior(row, pred)

    def plan_clarification(self, row: ResponseRow, pred: Prediction) -> Plan:
        if not self.config.clarification:
            return None
        verdict = check_clarification(row, pred)
        if verdict is not None:
            return Decided("clarification_correct", verdict, "rule")
        return super().plan_clarification(row, pred)


@register_judge("hybrid")
def _hybrid_factory(**options: Any) -> HybridJudge:
    return HybridJudge.from_options(**options)
