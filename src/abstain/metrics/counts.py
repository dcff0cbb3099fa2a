"""Scored rows as a count tensor, and the cluster bootstrap over it.

Every metric of the four protocols is a function of how many rows fall in each cell of

    label (answerable, unanswerable) x pred (ANSWER, DU, MU) x correct (False, True, None, error)
    x behavior (None, SH, EA, ABS, COND, ELICIT, error) x clarification_correct (None, False, True, error)

so metrics are written once as vectorized functions of a tensor ``C[..., 2, 3, 4, 7, 4]``: the
point estimate passes one tensor, the bootstrap passes ``B`` of them stacked on a leading axis.
"error" is a field the judge failed to decide; a family that needs that field drops the cell
(:func:`keep_fields`), the others still count the row.

What a cell *is* — refused, abstained, correct, its outcome — is not written here again: the masks
:data:`REFUSED`, :data:`ABSTAINED`, :data:`CORRECT` and :data:`OUTCOMES` evaluate the predicates of
:mod:`abstain.outcomes` on one representative row per cell (:data:`CELLS`).

The bootstrap resamples *items* (all samples and rows of an item move together). Items with the same
multiset of cells are interchangeable, so resampling n items with replacement is a multinomial draw
over the distinct item patterns — exact, and fast for any number of rows.

Example:
    >>> c = Counts.from_cells([cell("answerable", "ANSWER", True, None, None)], ["a"])
    >>> int(total(c.tensor, label=ANS, pred=ANSWER, correct=TRUE)), int(count(c.tensor, CORRECT))
    (1, 1)
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from abstain.outcomes import Outcome, is_abstention, is_clarified, is_correct, is_refusal, outcome
from abstain.schema import Behavior, Pred, ScoredRow

__all__ = [
    "ABSTAINED",
    "ANS",
    "ANSWER",
    "BEHAVIORS",
    "CELLS",
    "CLARIFIED",
    "CORRECT",
    "Counts",
    "DU",
    "ERROR",
    "FALSE",
    "MU",
    "NONE",
    "OUTCOMES",
    "REFUSED",
    "SHAPE",
    "TRUE",
    "UNANS",
    "cell",
    "count",
    "f1",
    "keep_fields",
    "kept",
    "ratio",
    "row_cell",
    "total",
]

# axis 0: label
ANS, UNANS = 0, 1
# axis 1: pred
ANSWER, DU, MU = 0, 1, 2
# axis 2: correct (ERROR: the judge failed to decide it)
FALSE, TRUE, NONE, ERROR = 0, 1, 2, 3
# axis 3: behavior (index 0 = no behavior, then the enum's order, then ERROR)
BEHAVIORS: tuple[Behavior, ...] = tuple(Behavior)
BEHAVIOR_ERROR = len(BEHAVIORS) + 1
# axis 4: clarification_correct
CLAR_NONE, CLAR_FALSE, CLAR_TRUE, CLAR_ERROR = 0, 1, 2, 3

SHAPE = (2, 3, 4, len(BEHAVIORS) + 2, 4)
_PREDS = (Pred.ANSWER, Pred.DATA_UNCERTAIN, Pred.MODEL_UNCERTAIN)
_PRED_INDEX = {p.value: i for i, p in enumerate(_PREDS)}
_BEHAVIOR_INDEX = {b.value: i + 1 for i, b in enumerate(BEHAVIORS)}
_ERROR_INDEX = {"correct": (2, ERROR), "behavior": (3, BEHAVIOR_ERROR), "clarification_correct": (4, CLAR_ERROR)}


def _bool_index(value: bool | None, none: int, false: int, true: int) -> int:
    return none if value is None else (true if value else false)


def cell(
    label: str, pred: str, correct: bool | None, behavior: str | None, clar: bool | None,
    errors: Sequence[str] = (),
) -> int:
    """Flat index of one row's cell in the count tensor (``errors``: the fields the judge failed on)."""
    idx = [
        ANS if label == "answerable" else UNANS,
        _PRED_INDEX[str(getattr(pred, "value", pred))],
        _bool_index(correct, NONE, FALSE, TRUE),
        0 if behavior is None else _BEHAVIOR_INDEX[str(getattr(behavior, "value", behavior))],
        _bool_index(clar, CLAR_NONE, CLAR_FALSE, CLAR_TRUE),
    ]
    for name in errors:
        axis, index = _ERROR_INDEX[name]
        idx[axis] = index
    return int(np.ravel_multi_index(tuple(idx), SHAPE))


def row_cell(row: ScoredRow) -> int:
    """Flat cell index of a scored row."""
    return cell(row.label, row.pred, row.correct, row.behavior, row.clarification_correct, tuple(row.judge_errors))


@dataclass(frozen=True)
class CellRow:
    """The representative row of one cell: what the outcome predicates see of every row in it."""

    label: str
    pred: Pred
    correct: bool | None
    behavior: Behavior | None
    clarification_correct: bool | None
    judge_errors: dict[str, str]


def _cell_rows() -> tuple[CellRow, ...]:
    rows = []
    for flat in range(int(np.prod(SHAPE))):
        lab, pred, cor, beh, clar = np.unravel_index(flat, SHAPE)
        errors = {}
        if cor == ERROR:
            errors["correct"] = "error"
        if beh == BEHAVIOR_ERROR:
            errors["behavior"] = "error"
        if clar == CLAR_ERROR:
            errors["clarification_correct"] = "error"
        rows.append(CellRow(
            label="answerable" if lab == ANS else "unanswerable",
            pred=_PREDS[pred],
            correct=None if cor in (NONE, ERROR) else bool(cor == TRUE),
            behavior=None if beh in (0, BEHAVIOR_ERROR) else BEHAVIORS[beh - 1],
            clarification_correct=None if clar in (CLAR_NONE, CLAR_ERROR) else bool(clar == CLAR_TRUE),
            judge_errors=errors,
        ))
    return tuple(rows)


#: one representative row per flat cell (``CELLS[row_cell(row)]`` sees what ``row`` shows the predicates)
CELLS = _cell_rows()


def cell_mask(predicate: Callable[[CellRow], bool]) -> np.ndarray:
    """A boolean array over the flat cells: ``predicate`` of each cell's representative row."""
    return np.array([bool(predicate(r)) for r in CELLS])


#: the outcome predicates as cell masks (:mod:`abstain.outcomes`): metrics count with these
REFUSED = cell_mask(is_refusal)
ABSTAINED = cell_mask(is_abstention)
CORRECT = cell_mask(is_correct)
CLARIFIED = cell_mask(is_clarified)
OUTCOMES = {o: cell_mask(lambda r, o=o: outcome(r) is o) for o in Outcome}


@functools.lru_cache(maxsize=None)
def keep_fields(needs: tuple[str, ...]) -> np.ndarray:
    """0/1 weights over the flat cells: 0 where the judge failed on one of the ``needs`` fields.

    A metric family that reads a field multiplies its counts by this, so a row whose field is missing
    is left out of that family only.
    """
    return cell_mask(lambda r: not any(name in r.judge_errors for name in needs)).astype(float)


def kept(c: np.ndarray, needs: tuple[str, ...]) -> np.ndarray:
    """``c`` with the rows whose judge failed on one of the ``needs`` fields taken out (same shape)."""
    flat = c.reshape(c.shape[: c.ndim - len(SHAPE)] + (-1,)) * keep_fields(needs)
    return flat.reshape(c.shape)


def count(c: np.ndarray, mask: np.ndarray, label: int | None = None) -> np.ndarray:
    """Rows in the cells of ``mask`` (of ``label`` when given), over the leading axes of ``c``."""
    flat = c.reshape(c.shape[: c.ndim - len(SHAPE)] + (-1,))
    if label is not None:
        mask = mask & (_LABELS == label)
    return flat @ mask.astype(float)


_LABELS = np.unravel_index(np.arange(int(np.prod(SHAPE))), SHAPE)[0]


@dataclass
class Counts:
    """Item patterns of a set of scored rows: the point tensor and its bootstrap resamples."""

    patterns: np.ndarray  # (P, cells) counts of each distinct item pattern
    weights: np.ndarray  # (P,) how many items have that pattern

    @classmethod
    def from_cells(cls, cells: Sequence[int], item_ids: Sequence[str]) -> Counts:
        per_item: dict[str, list[int]] = {}
        for c, item in zip(cells, item_ids, strict=True):
            per_item.setdefault(item, []).append(c)
        freq = Counter(tuple(sorted(v)) for v in per_item.values())
        size = int(np.prod(SHAPE))
        patterns = np.zeros((len(freq), size), dtype=np.int64)
        weights = np.zeros(len(freq), dtype=np.int64)
        for i, (pattern, n) in enumerate(freq.items()):
            np.add.at(patterns[i], list(pattern), 1)
            weights[i] = n
        return cls(patterns, weights)

    @classmethod
    def from_rows(cls, rows: Sequence[ScoredRow]) -> Counts:
        return cls.from_cells([row_cell(r) for r in rows], [r.id for r in rows])

    @property
    def n_items(self) -> int:
        return int(self.weights.sum())

    @property
    def tensor(self) -> np.ndarray:
        """Counts of the observed data, shape ``SHAPE``."""
        return (self.weights @ self.patterns).reshape(SHAPE).astype(float)

    def bootstrap(self, resamples: int, rng: np.random.Generator) -> np.ndarray:
        """``resamples`` tensors of item-resampled counts, shape ``(resamples, *SHAPE)``."""
        n = self.n_items
        if n == 0:
            return np.zeros((resamples, *SHAPE))
        draws = rng.multinomial(n, self.weights / n, size=resamples)
        return (draws @ self.patterns).reshape((resamples, *SHAPE)).astype(float)


def _select(c: np.ndarray, axis: int, index: int | Sequence[int] | None) -> np.ndarray:
    if index is None:
        return c
    index = [index] if isinstance(index, int) else list(index)
    return np.take(c, index, axis=c.ndim - len(SHAPE) + axis)


def total(
    c: np.ndarray,
    label: int | Sequence[int] | None = None,
    pred: int | Sequence[int] | None = None,
    correct: int | Sequence[int] | None = None,
    behavior: int | Sequence[int] | None = None,
    clar: int | Sequence[int] | None = None,
) -> np.ndarray:
    """Number of rows in the selected cells (``None`` = any value), over the leading axes."""
    for axis, index in enumerate((label, pred, correct, behavior, clar)):
        c = _select(c, axis, index)
    return c.sum(axis=tuple(range(c.ndim - len(SHAPE), c.ndim)))


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den is 0 (reported as null)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """Harmonic mean of precision and recall.

    0 when recall is 0 — also when precision is undefined because the class was never predicted: in
    count form F1 = 2TP / (2TP + FP + FN) is 0 there, and a model that never says DATA_UNCERTAIN should
    score 0, not "undefined". NaN only when recall is undefined (no positives to find).

    Example:
        >>> import numpy as np
        >>> float(f1(np.array(np.nan), np.array(0.0))), float(f1(np.array(0.5), np.array(1.0)))
        (0.0, 0.6666666666666666)
    """
    precision = np.asarray(precision, dtype=float)
    recall = np.asarray(recall, dtype=float)
    s = precision + recall
    with np.errstate(divide="ignore", invalid="ignore"):
        harmonic = np.where(s > 0, 2 * precision * recall / np.where(s > 0, s, 1.0), 0.0)
    return np.where(recall == 0, 0.0, np.where(np.isnan(s), np.nan, harmonic))
