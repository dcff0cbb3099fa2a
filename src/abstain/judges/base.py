"""What a judge returns and the small interface every judge implements.

A judge looks at a response row and its parsed :class:`~abstain.parsing.Prediction` and decides the
fields a parser cannot: answer correctness, behavior, clarification quality. Judges work on batches
so that an LLM judge can run its calls concurrently. A judge that cannot decide a field says why in
``errors[field]`` — the row is then counted in ``n.judge_errors.<field>`` and left out of the metric
families that read that field, never guessed; the fields it did decide are kept.

Example:
    >>> j = Judgment(correct=True, judged_by={"correct": "rule"})
    >>> j.fail("behavior", "llm behavior: timed out")
    >>> j.correct, j.errors
    (True, {'behavior': 'llm behavior: timed out'})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from abstain.parsing import Prediction
from abstain.schema import JUDGED_FIELDS, Behavior, ResponseRow

__all__ = ["Judge", "Judgment"]


@dataclass(slots=True)
class Judgment:
    """A judge's verdict on one response (``None`` = not decided / not applicable).

    ``errors`` maps a field (``correct``, ``behavior``, ``clarification_correct``) to why the judge could
    not decide it; a failed field is left null.
    """

    correct: bool | None = None
    behavior: Behavior | None = None
    clarification_correct: bool | None = None
    errors: dict[str, str] = field(default_factory=dict)
    judged_by: dict[str, str] = field(default_factory=dict)

    def fail(self, name: str, reason: str) -> None:
        """Record that field ``name`` could not be decided (its value is cleared)."""
        if name not in JUDGED_FIELDS:
            raise ValueError(f"unknown judged field {name!r}; one of {JUDGED_FIELDS}")
        setattr(self, name, None)
        self.judged_by.pop(name, None)
        self.errors[name] = reason


class Judge(Protocol):
    """Decides correctness, behavior and clarification for a batch of parsed responses."""

    name: str

    def judge(self, rows: Sequence[ResponseRow], preds: Sequence[Prediction]) -> list[Judgment]:
        """One :class:`Judgment` per row, in order."""
        ...
