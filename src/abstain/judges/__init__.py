"""Judges: answer correctness, behavior and clarification, rule-based or model-based."""

from abstain.judges.answer import AnswerConfig, check_answer, exact_match, math_equal, numeric_value
from abstain.judges.base import JUDGES, Judge, Judgment, make_judge, register_judge
from abstain.judges.rule import RuleJudge, judge_correctness

__all__ = [
    "AnswerConfig",
    "JUDGES",
    "Judge",
    "Judgment",
    "RuleJudge",
    "check_answer",
    "exact_match",
    "judge_correctness",
    "make_judge",
    "math_equal",
    "numeric_value",
    "register_judge",
]
