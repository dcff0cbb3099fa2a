"""The outcome vocabulary: what a scored response *is*, defined once for metrics, reports and rewards.

Every number abstain reports or hands to a trainer derives from these predicates over one scored row
(parse -> judge, :mod:`abstain.scoring`):

* :func:`is_refusal` — the response boxed a refusal: ``pred != ANSWER`` (``I don't know``,
  ``<DATA_UNCERTAIN>``, ``<MODEL_UNCERTAIN>``). Abstain-R1's U-Ref / A-FU, UA-Bench's attribution.
* :func:`is_abstention` — the TIAR / AbstentionBench notion: a refusal, or a response whose ACA behavior
  is ABS, COND or ELICIT (asking for the missing premise or answering conditionally is not answering),
  unless the judge found its answer correct.
* :func:`is_clarified` — a refusal whose clarifying question the judge found right (Abstain-R1's U-Clar).
* :func:`is_correct` — a definite answer (``pred == ANSWER``) that the judge found correct.
* :func:`outcome` — ``correct | wrong | abstain | unscored``: the ternary outcome TIAR's advantage and
  the ``ternary`` reward use; ``unscored`` when a judge error leaves it open (never guessed).

The ACA-RL behavior taxonomy is the :class:`~abstain.schema.Behavior` enum; its value tables (the ACA
reward V and the Behavior Score S) are keyed by it, and :func:`as_behavior` / :func:`behavior_scope`
validate the strings users pass. The metric count tensor (:mod:`abstain.metrics.counts`) builds its cell
masks by calling these same functions on one representative row per cell, so a metric cannot disagree
with a reward about what a response is.

Nothing here imports torch, a judge or a backend.

Example:
    >>> from abstain.schema import ScoredRow
    >>> row = ScoredRow(id="1", question="q", answers=[], label="unanswerable", response="\\\\boxed{3x}",
    ...                 model="m", pred="ANSWER", answer="3x", format_ok=True, correct=False, behavior="COND")
    >>> is_refusal(row), is_abstention(row), outcome(row).value
    (False, True, 'abstain')
    >>> BEHAVIOR_REWARD[Behavior.COND], BEHAVIOR_SCORE[as_behavior("cond")]
    (0.6, 0.75)
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType
from typing import Any, Protocol

from abstain.schema import JUDGED_FIELDS, Behavior, Pred

__all__ = [
    "ABSTAINING_BEHAVIORS",
    "BEHAVIOR_REWARD",
    "BEHAVIOR_SCORE",
    "Behavior",
    "BehaviorScope",
    "JUDGED_FIELDS",
    "Outcome",
    "Pred",
    "as_behavior",
    "behavior_scope",
    "field_error",
    "is_abstention",
    "is_clarified",
    "is_correct",
    "is_refusal",
    "outcome",
]


class Outcome(str, Enum):
    """The ternary outcome of a response (TIAR, TruthRL), or ``unscored`` when a judge error leaves it open."""

    CORRECT = "correct"
    WRONG = "wrong"
    ABSTAIN = "abstain"
    UNSCORED = "unscored"


class BehaviorScope(str, Enum):
    """Which rows get an ACA behavior label from the judge."""

    UNANSWERABLE = "unanswerable"
    ALL = "all"
    NONE = "none"


#: behaviors that do not commit to a definite answer (AbstentionBench counts them as abstentions)
ABSTAINING_BEHAVIORS = frozenset({Behavior.ABS, Behavior.COND, Behavior.ELICIT})

#: ACA-RL's reward V per behavior (in [-1, 1])
BEHAVIOR_REWARD: Mapping[Behavior, float] = MappingProxyType(
    {Behavior.ELICIT: 1.0, Behavior.COND: 0.6, Behavior.ABS: 0.3, Behavior.EA: -0.3, Behavior.SH: -1.0}
)
#: ACA-RL's Behavior Score S per behavior (in [0, 1]); the paper's Table 9 is not in its text, see docs/metrics.md
BEHAVIOR_SCORE: Mapping[Behavior, float] = MappingProxyType(
    {Behavior.ELICIT: 1.0, Behavior.COND: 0.75, Behavior.ABS: 0.5, Behavior.EA: 0.0, Behavior.SH: 0.0}
)


def as_behavior(value: Any) -> Behavior:
    """A :class:`Behavior` from an enum member or its name (any case); a clear error otherwise.

    Example:
        >>> as_behavior("elicit")
        <Behavior.ELICIT: 'ELICIT'>
        >>> as_behavior("ASK")
        Traceback (most recent call last):
        ...
        ValueError: unknown behavior 'ASK'; choose one of SH, EA, ABS, COND, ELICIT
    """
    if isinstance(value, Behavior):
        return value
    if isinstance(value, str) and value.strip().upper() in Behavior.__members__:
        return Behavior[value.strip().upper()]
    raise ValueError(f"unknown behavior {value!r}; choose one of {', '.join(b.value for b in Behavior)}")


def behavior_scope(value: Any) -> BehaviorScope:
    """A :class:`BehaviorScope` from its name; a clear error otherwise (``"al"`` is not ``"all"``).

    Example:
        >>> behavior_scope("all").value
        'all'
        >>> behavior_scope("al")
        Traceback (most recent call last):
        ...
        ValueError: behaviors must be one of unanswerable, all, none - not 'al'
    """
    if isinstance(value, BehaviorScope):
        return value
    try:
        return BehaviorScope(value)
    except ValueError:
        raise ValueError(
            f"behaviors must be one of {', '.join(s.value for s in BehaviorScope)} - not {value!r}"
        ) from None


def behavior_values(values: Mapping[Any, float], what: str) -> dict[Behavior, float]:
    """A complete behavior -> value table keyed by the enum (names accepted); a clear error when incomplete.

    Example:
        >>> behavior_values({"SH": 0, "EA": 0, "ABS": 1, "COND": 1, "ELICIT": 1}, "score")[Behavior.ABS]
        1.0
    """
    table = {as_behavior(k): float(v) for k, v in values.items()}
    missing = [b.value for b in Behavior if b not in table]
    if missing:
        raise ValueError(f"behavior {what} values miss {missing}; give all of {[b.value for b in Behavior]}")
    return table


class ScoredLike(Protocol):
    """What the predicates read from a row (a :class:`~abstain.schema.ScoredRow`, or any object alike)."""

    label: str
    pred: Pred
    correct: bool | None
    behavior: Behavior | None
    judge_errors: dict[str, str]


def field_error(row: ScoredLike, name: str) -> bool:
    """Whether the judge failed to decide field ``name`` (``correct``, ``behavior``, ``clarification_correct``)."""
    return name in row.judge_errors


def is_refusal(row: ScoredLike) -> bool:
    """The response boxed a refusal or uncertainty token (``pred != ANSWER``)."""
    return row.pred != Pred.ANSWER


def is_correct(row: ScoredLike) -> bool:
    """A definite answer (``pred == ANSWER``) the judge found correct."""
    return row.pred == Pred.ANSWER and row.correct is True


def is_abstention(row: ScoredLike) -> bool:
    """A refusal, or a behavior that does not commit to an answer (ABS, COND, ELICIT) — unless the judge
    found the answer correct: a right answer answers, whatever its form (``x^2 + 1`` is not a condition)."""
    return row.pred != Pred.ANSWER or (row.behavior in ABSTAINING_BEHAVIORS and not is_correct(row))


def is_clarified(row: ScoredLike) -> bool:
    """A refusal whose clarification the judge found correct (Abstain-R1's U-Clar)."""
    return is_refusal(row) and getattr(row, "clarification_correct", None) is True


def outcome(row: ScoredLike) -> Outcome:
    """``correct`` | ``wrong`` | ``abstain`` | ``unscored`` (see the module docstring).

    Any definite answer to an unanswerable item is wrong. A definite-looking answer whose behavior the
    judge failed to label may have been an abstention in words, and an answer whose correctness failed
    may have been right: both are ``unscored``.
    """
    if is_abstention(row):
        return Outcome.ABSTAIN
    if is_correct(row):
        return Outcome.CORRECT
    if field_error(row, "behavior"):
        return Outcome.UNSCORED
    if row.label == "unanswerable":
        return Outcome.WRONG
    if field_error(row, "correct") or row.correct is None:
        return Outcome.UNSCORED
    return Outcome.WRONG
