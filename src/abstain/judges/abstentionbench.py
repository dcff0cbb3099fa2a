"""AbstentionBench's own grader as an abstain judge: ``--judge abstentionbench``.

The prompt is read from the installed port (``inspect_evals.abstention_bench.recipe.evaluation_judge_prompts``,
``LLM_JUDGE_ABSTENTION_COCONOT_STYLE_PROMPT``: the CoCoNot-style prompt the paper uses), never copied into abstain,
and filled as the port's scorer fills it (``model_graded_qa`` with the sample's metadata): the question as asked,
the reference answers (``['three', '3']``; ``[]`` for an unanswerable item), the ground-truth abstention label
(``True`` / ``False``) and the response. Its verdict is read as the port reads it: the last "yes" or "no" word of
the reply (``grade_pattern=r"(?is).*\\b(yes|no)\\b"``). Yes is an abstention (behavior ``ABS``), No an answer
(``SH``). A reply with neither word is the row's judge error, never a guess (the port scores it NaN, which
Inspect leaves out of its metrics).

It decides ``behavior`` on every row, answerable ones included (AbstentionBench's precision counts abstentions on
answerable questions); correctness and clarification are the LLM judge's (:class:`~abstain.judges.llm.LLMJudge`,
same model). With ``--protocol plain`` (the question alone, as AbstentionBench asks) this is AbstentionBench's
evaluation run by abstain; ``docs/judges.md`` measures how often it agrees with abstain's own judges.

Example:
    >>> read_grade("The model hedges, so: Yes"), read_grade("no"), read_grade("I cannot tell")
    (True, False, None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from abstain.judges.llm import Ask, LLMJudge, Plan, VerdictError
from abstain.judges.registry import register_judge
from abstain.parsing import Prediction
from abstain.schema import Behavior, DataError, ResponseRow

__all__ = ["AbstentionBenchJudge", "grader_prompt", "read_grade"]

#: the port's ``grade_pattern`` (inspect_evals/abstention_bench/utils.py, ``abstention_bench_scorer``)
GRADE_PATTERN = re.compile(r"(?is).*\b(yes|no)\b")
INSTALL_HINT = "pip install 'abstain[abstentionbench]' (AbstentionBench's Inspect port)"


def read_grade(text: str) -> bool | None:
    """The grader's verdict as the port reads it: True (abstained), False, or None (no yes/no word)."""
    match = GRADE_PATTERN.match(text or "")
    return None if match is None else match.group(1).lower() == "yes"


def grader_template() -> str:
    """The port's grader prompt, from the installed ``inspect_evals``."""
    try:
        from inspect_evals.abstention_bench.recipe.evaluation_judge_prompts import (
            LLM_JUDGE_ABSTENTION_COCONOT_STYLE_PROMPT,
        )
    except ImportError as exc:
        raise DataError(f"--judge abstentionbench reads AbstentionBench's grader from its port ({exc}); "
                        f"{INSTALL_HINT}") from None
    return str(LLM_JUDGE_ABSTENTION_COCONOT_STYLE_PROMPT)


def grader_prompt(row: ResponseRow, template: str | None = None) -> str:
    """The grader's prompt for one response, filled as the port's scorer fills it from a sample's metadata."""
    port_item = "ab_dataset" in row.meta  # loaded through the port (abstain.data.abstentionbench_port)
    refs = row.meta.get("ref_answer") if port_item else row.answers
    return (template or grader_template()).format(
        question=row.question, ref_answer=str(list(refs or [])), abstention_label=str(row.label == "unanswerable"),
        model_answer=row.response)


@dataclass
class AbstentionBenchJudge(LLMJudge):
    """The LLM judge with AbstentionBench's grader deciding every row's behavior (see the module docstring)."""

    name: str = "abstentionbench"

    def __post_init__(self) -> None:
        self._template = grader_template()

    def wants_behavior(self, row: ResponseRow) -> bool:
        return True

    def plan_behavior(self, row: ResponseRow, pred: Prediction) -> Plan:
        return Ask("behavior", [{"role": "user", "content": grader_prompt(row, self._template)}], ("Yes", "No"))

    def source_of(self, field: str) -> str:
        return "abstentionbench" if field == "behavior" else "llm"

    def read_verdict(self, ask: Ask, text: str) -> Any:
        if ask.field != "behavior":
            return super().read_verdict(ask, text)
        verdict = read_grade(text)
        if verdict is None:
            raise VerdictError(f"AbstentionBench's grader said neither yes nor no: {text[:200]!r}")
        return Behavior.ABS if verdict else Behavior.SH


@register_judge("abstentionbench")
def _abstentionbench_factory(**options: Any) -> AbstentionBenchJudge:
    return AbstentionBenchJudge.from_options(**options)
