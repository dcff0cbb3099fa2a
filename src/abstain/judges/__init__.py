"""Judges: answer correctness, behavior and clarification, rule-based or model-based.

Importing the package registers the built-in judges (``rule``, ``llm``, ``hybrid``) with
:mod:`abstain.judges.registry`; :func:`make_judge` builds one by name.
"""

from abstain.judges.answer import (
    AnswerConfig,
    MathVerifyError,
    check_answer,
    exact_match,
    math_equal,
    numeric_value,
    stated_number,
)
from abstain.judges.base import Judge, Judgment
from abstain.judges.behavior import BehaviorRuling, classify_behavior, rule_behavior
from abstain.judges.clarification import check_clarification, clarification_applies, clarification_text
from abstain.judges.correctness import correctness_precheck, judge_correctness
from abstain.judges.registry import JUDGES, make_judge, register_judge
from abstain.judges.rule import RuleJudge
from abstain.judges.llm import LLMJudge, LLMJudgeConfig, VerdictError, detect_abstention, parse_verdict
from abstain.judges.hybrid import HybridJudge
from abstain.judges.abstentionbench import AbstentionBenchJudge
from abstain.judges.options import JudgeConfig
from abstain.judges.stated import StatedAnswer, stated_answer

__all__ = [
    "AbstentionBenchJudge",
    "AnswerConfig",
    "BehaviorRuling",
    "check_answer",
    "check_clarification",
    "clarification_applies",
    "clarification_text",
    "classify_behavior",
    "correctness_precheck",
    "detect_abstention",
    "exact_match",
    "HybridJudge",
    "Judge",
    "JudgeConfig",
    "judge_correctness",
    "JUDGES",
    "Judgment",
    "LLMJudge",
    "LLMJudgeConfig",
    "make_judge",
    "math_equal",
    "MathVerifyError",
    "numeric_value",
    "parse_verdict",
    "register_judge",
    "rule_behavior",
    "RuleJudge",
    "StatedAnswer",
    "stated_answer",
    "stated_number",
    "VerdictError",
]
