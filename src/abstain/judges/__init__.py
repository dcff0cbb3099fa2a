"""Judges: answer correctness, behavior and clarification, rule-based or model-based."""

from abstain.judges.answer import AnswerConfig, check_answer, exact_match, math_equal, numeric_value
from abstain.judges.base import JUDGES, Judge, Judgment, make_judge, register_judge
from abstain.judges.rule import RuleJudge, correctness_precheck, judge_correctness
from abstain.judges.behavior import BehaviorRuling, classify_behavior, rule_behavior
from abstain.judges.clarification import check_clarification, clarification_applies, clarification_text
from abstain.judges.llm import LLMJudge, LLMJudgeConfig, VerdictError, detect_abstention, parse_verdict
from abstain.judges.hybrid import HybridJudge
from abstain.judges.audit import DEV_SET, Agreement, agreement, audit_rows

__all__ = [
    "Agreement",
    "agreement",
    "AnswerConfig",
    "audit_rows",
    "BehaviorRuling",
    "check_answer",
    "check_clarification",
    "clarification_applies",
    "clarification_text",
    "classify_behavior",
    "correctness_precheck",
    "detect_abstention",
    "DEV_SET",
    "exact_match",
    "HybridJudge",
    "Judge",
    "judge_correctness",
    "JUDGES",
    "Judgment",
    "LLMJudge",
    "LLMJudgeConfig",
    "make_judge",
    "math_equal",
    "numeric_value",
    "parse_verdict",
    "register_judge",
    "rule_behavior",
    "RuleJudge",
    "VerdictError",
]
