"""Judges measured like models: agreement with human labels.

A labelled file is response rows plus any of ``human_behavior`` (SH/EA/ABS/COND/ELICIT),
``human_correct`` (true/false) and ``human_clarification_correct`` (true/false). Each row is parsed and
judged exactly as ``abstain score`` does, and for every labelled field we report accuracy, Cohen's
kappa, the confusion matrix (human label × judge label) and per-class precision/recall. A row the
judge could not decide (judge error, or a null where the human gave a label) counts as the label
``none`` — a disagreement, never dropped. The shipped development set is :data:`DEV_SET`.

Example:
    >>> a = agreement("behavior", ["SH", "SH", "ABS", "ELICIT"], ["SH", "EA", "ABS", None])
    >>> a.accuracy, a.n, a.undecided
    (0.5, 4, 1)
    >>> a.confusion["SH"]["EA"]
    1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from abstain.judges.base import Judge
from abstain.schema import Behavior, ResponseRow, ScoredRow
from abstain.scoring import score_rows

__all__ = ["AUDITED", "Agreement", "DEV_SET", "agreement", "audit_rows"]

DEV_SET = Path(__file__).resolve().parents[1] / "data" / "judge_dev" / "dev.jsonl"
NONE = "none"

#: audited field -> (human label column, labels in display order)
AUDITED: dict[str, tuple[str, tuple[str, ...]]] = {
    "behavior": ("human_behavior", tuple(b.value for b in Behavior)),
    "correct": ("human_correct", ("true", "false")),
    "clarification_correct": ("human_clarification_correct", ("true", "false")),
}


@dataclass(frozen=True)
class Agreement:
    """How often a judge agrees with human labels on one field."""

    field: str
    n: int
    accuracy: float | None
    kappa: float | None
    undecided: int
    labels: tuple[str, ...]
    confusion: dict[str, dict[str, int]]  # human -> judge -> rows
    per_class: dict[str, dict[str, float | int | None]]  # label -> precision, recall, support

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def agreement(field: str, human: Sequence[str], judged: Sequence[str | None], labels: Sequence[str] | None = None) -> Agreement:
    """Accuracy, Cohen's kappa, confusion and per-class precision/recall of ``judged`` against ``human``."""
    if len(human) != len(judged):
        raise ValueError(f"{len(human)} human labels but {len(judged)} judge labels")
    got = [NONE if j is None else j for j in judged]
    order = list(labels or sorted(set(human)))
    order += sorted((set(human) | set(got)) - set(order) - {NONE})
    columns = order + ([NONE] if NONE in got else [])
    confusion = {h: {j: 0 for j in columns} for h in order}
    for h, j in zip(human, got, strict=True):
        confusion[h][j] += 1
    n = len(human)
    agree = sum(h == j for h, j in zip(human, got, strict=True))
    kappa = None
    if n:
        po = agree / n
        pe = sum((human.count(c) / n) * (got.count(c) / n) for c in columns)
        kappa = (po - pe) / (1 - pe) if pe < 1 else (1.0 if po == 1 else None)
    per_class: dict[str, dict[str, float | int | None]] = {}
    for c in order:
        tp = confusion[c][c]
        predicted = sum(confusion[h][c] for h in order)
        support = sum(confusion[c].values())
        per_class[c] = {"precision": _ratio(tp, predicted), "recall": _ratio(tp, support), "support": support}
    return Agreement(
        field=field,
        n=n,
        accuracy=_ratio(agree, n),
        kappa=kappa,
        undecided=got.count(NONE),
        labels=tuple(columns),
        confusion=confusion,
        per_class=per_class,
    )


def _label(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


def _human(row: ResponseRow, column: str) -> str | None:
    value = (row.model_extra or {}).get(column)
    if value is None:
        return None
    if isinstance(value, str) and column != "human_behavior":
        value = {"true": True, "false": False, "yes": True, "no": False}.get(value.strip().lower(), value)
    return _label(value)


def audit_rows(
    rows: Sequence[ResponseRow], judge: Judge, group_by: str | None = None
) -> tuple[dict[str, Agreement], dict[str, dict[str, Agreement]], list[ScoredRow]]:
    """Judge ``rows`` and measure agreement per labelled field, overall and per ``group_by`` value.

    Returns (field -> agreement, group -> field -> agreement, the scored rows).
    """
    scored = list(score_rows(rows, judge))
    groups: dict[str, list[int]] = {"all": list(range(len(rows)))}
    if group_by:
        for i, row in enumerate(rows):
            key = str(row.model_dump().get(group_by))
            groups.setdefault(key, []).append(i)
    results: dict[str, dict[str, Agreement]] = {}
    for group, indices in groups.items():
        results[group] = {}
        for field, (column, labels) in AUDITED.items():
            pairs = [(h, _label(getattr(scored[i], field))) for i in indices if (h := _human(rows[i], column)) is not None]
            if pairs:
                results[group][field] = agreement(field, [h for h, _ in pairs], [j for _, j in pairs], labels)
    overall = results.pop("all")
    return overall, results, scored
