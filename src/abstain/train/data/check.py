"""The self-check of built training targets: abstain's own scorer decides what each target *is*.

Every SFT / R-Tuning / RFT / DPO target is scored before it is written, exactly as a model's response
would be — :func:`abstain.scoring.score_completions`, the per-completion path the rewards use, with the
rule judge — and compared with the
:class:`~abstain.train.data.targets.build.Intent` it was built for. :func:`score_targets` is the only place
that calls the scorer, so swapping in a per-completion scoring function changes one function.

Example:
    >>> from abstain.schema import Item, Pred
    >>> from abstain.train.data.targets.build import Intent
    >>> item = Item(id="1", question="What is 2 + 3?", answers=["5"], label="answerable")
    >>> verify_targets([item], ["2 + 3 = 5. \\\\boxed{5}"], [Intent(Pred.ANSWER, correct=True)], "idk")
    [None]
    >>> verify_targets([item], ["\\\\boxed{6}"], [Intent(Pred.ANSWER, correct=True)], "idk")
    ['correct: True intended, the scorer says False']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from abstain.judges import RuleJudge
from abstain.schema import Item, ScoredRow
from abstain.scoring import score_completions
from abstain.train.data.targets.build import Intent

__all__ = ["TARGET_MODEL", "mismatch", "score_targets", "verify_targets"]

#: the ``model`` of the response rows a target is scored as
TARGET_MODEL = "sft-target"


def score_targets(items: Sequence[Item], texts: Sequence[str], protocol: str,
                  on_batch: Callable[[int], None] | None = None) -> list[ScoredRow]:
    """Score each target text as the response of a model to its item (the single scoring call)."""
    rows = score_completions(items, texts, RuleJudge(), protocol=protocol, model=TARGET_MODEL)
    if on_batch is not None:
        on_batch(len(rows))
    return rows


def mismatch(scored: ScoredRow, intent: Intent) -> str | None:
    """What differs between the scorer's verdict and the intent (None: the target is what it should be)."""
    problems = []
    if scored.judge_error:
        problems.append(f"judge error: {scored.judge_error}")
    if intent.format_ok is not None and scored.format_ok is not intent.format_ok:
        problems.append("no balanced \\boxed{}" if intent.format_ok else "a box where none was intended")
    if scored.pred is not intent.pred:
        problems.append(f"pred: {intent.pred.value} intended, the scorer says {scored.pred.value}")
    if intent.correct is not None and scored.correct is not intent.correct:
        problems.append(f"correct: {intent.correct} intended, the scorer says {scored.correct}")
    if intent.behavior is not None and scored.behavior is not intent.behavior:
        got = scored.behavior.value if scored.behavior else None
        problems.append(f"behavior: {intent.behavior.value} intended, the scorer says {got}")
    if intent.clarification_correct is not None and scored.clarification_correct is not intent.clarification_correct:
        problems.append(f"clarification_correct: {intent.clarification_correct} intended, "
                        f"the scorer says {scored.clarification_correct}")
    return "; ".join(problems) or None


def verify_targets(items: Sequence[Item], texts: Sequence[str], intents: Sequence[Intent], protocol: str,
                   on_batch: Callable[[int], None] | None = None) -> list[str | None]:
    """For each target, None when the scorer agrees with its intent, else what differs."""
    scored = score_targets(items, texts, protocol, on_batch)
    return [mismatch(s, intent) for s, intent in zip(scored, intents, strict=True)]
