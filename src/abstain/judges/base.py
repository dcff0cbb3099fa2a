"""What a judge returns and the small interface every judge implements.

A judge looks at a response row and its parsed :class:`~abstain.parsing.Prediction` and decides the
fields a parser cannot: answer correctness, behavior, clarification quality. Judges work on batches
so that an LLM judge can run its calls concurrently. A judge that cannot decide a row says so in
``error`` — the row is then counted in ``n.judge_errors`` and left out of every metric, never guessed.

Example:
    >>> Judgment(correct=True, judged_by={"correct": "rule"}).error is None
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from abstain.parsing import Prediction
from abstain.schema import Behavior, ResponseRow

__all__ = ["Judge", "Judgment", "JUDGES", "make_judge", "register_judge"]


@dataclass(slots=True)
class Judgment:
    """A judge's verdict on one response (``None`` = not decided / not applicable)."""

    correct: bool | None = None
    behavior: Behavior | None = None
    clarification_correct: bool | None = None
    error: str | None = None
    judged_by: dict[str, str] = field(default_factory=dict)


class Judge(Protocol):
    """Decides correctness, behavior and clarification for a batch of parsed responses."""

    name: str

    def judge(self, rows: Sequence[ResponseRow], preds: Sequence[Prediction]) -> list[Judgment]:
        """One :class:`Judgment` per row, in order."""
        ...


JUDGES: dict[str, Callable[..., Judge]] = {}


def register_judge(name: str) -> Callable[[Callable[..., Judge]], Callable[..., Judge]]:
    """Register a judge factory under ``name`` so runs can be rebuilt from their config."""

    def deco(factory: Callable[..., Judge]) -> Callable[..., Judge]:
        JUDGES[name] = factory
        return factory

    return deco


def make_judge(name: str, **options: object) -> Judge:
    """Build a registered judge by name, e.g. ``make_judge("rule")``."""
    # import the built-in judges so they register themselves
    from abstain.judges import rule  # noqa: F401

    try:
        factory = JUDGES[name]
    except KeyError:
        raise ValueError(f"unknown judge {name!r}; choose one of {sorted(JUDGES)}") from None
    return factory(**options)
