"""Scored rows as a count tensor, and the cluster bootstrap over it.

Every metric of the four protocols is a function of how many rows fall in each cell of

    label (answerable, unanswerable) x pred (ANSWER, DU, MU) x correct (False, True, None)
    x behavior (None, SH, EA, ABS, COND, ELICIT) x clarification_correct (None, False, True)

so metrics are written once as vectorized functions of a tensor ``C[..., 2, 3, 3, 6, 3]``: the
point estimate passes one tensor, the bootstrap passes ``B`` of them stacked on a leading axis.

The bootstrap resamples *items* (all samples and rows of an item move together). Items with the same
multiset of cells are interchangeable, so resampling n items with replacement is a multinomial draw
over the distinct item patterns — exact, and fast for any number of rows.

Example:
    >>> c = Counts.from_cells([cell("answerable", "ANSWER", True, None, None)], ["a"])
    >>> int(total(c.tensor, label=ANS, pred=ANSWER, correct=TRUE))
    1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from abstain.schema import ScoredRow

__all__ = [
    "ABST_BEHAVIORS",
    "ANS",
    "ANSWER",
    "BEHAVIORS",
    "Counts",
    "DU",
    "FALSE",
    "MU",
    "NONE",
    "SHAPE",
    "TRUE",
    "UNANS",
    "cell",
    "f1",
    "ratio",
    "total",
]

# axis 0: label
ANS, UNANS = 0, 1
# axis 1: pred
ANSWER, DU, MU = 0, 1, 2
# axis 2: correct / axis 4: clarification_correct
FALSE, TRUE, NONE = 0, 1, 2
CLAR_NONE, CLAR_FALSE, CLAR_TRUE = 0, 1, 2
# axis 3: behavior (index 0 = no behavior)
BEHAVIORS = ("SH", "EA", "ABS", "COND", "ELICIT")
ABST_BEHAVIORS = [BEHAVIORS.index(b) + 1 for b in ("ABS", "COND", "ELICIT")]

SHAPE = (2, 3, 3, 6, 3)
_PRED_INDEX = {"ANSWER": ANSWER, "DATA_UNCERTAIN": DU, "MODEL_UNCERTAIN": MU}


def cell(label: str, pred: str, correct: bool | None, behavior: str | None, clar: bool | None) -> int:
    """Flat index of one row's cell in the count tensor."""
    idx = (
        ANS if label == "answerable" else UNANS,
        _PRED_INDEX[pred],
        NONE if correct is None else (TRUE if correct else FALSE),
        0 if behavior is None else BEHAVIORS.index(behavior) + 1,
        CLAR_NONE if clar is None else (CLAR_TRUE if clar else CLAR_FALSE),
    )
    return int(np.ravel_multi_index(idx, SHAPE))


def _value(x: object) -> str | None:
    return None if x is None else str(getattr(x, "value", x))


def row_cell(row: ScoredRow) -> int:
    """Flat cell index of a scored row (enum or plain-string fields)."""
    pred = _value(row.pred)
    assert pred is not None
    return cell(row.label, pred, row.correct, _value(row.behavior), row.clarification_correct)


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
        for i, (pattern, count) in enumerate(freq.items()):
            np.add.at(patterns[i], list(pattern), 1)
            weights[i] = count
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
