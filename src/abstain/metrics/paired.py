"""The difference of a metric between two runs on the same items, with a paired bootstrap CI.

Two runs scored on the same items (two checkpoints of one model, a model and its fine-tune) are
correlated: most items get the same decision from both. Their separate 95% CIs overlap even when one run is
better on nearly every resample, so the question "is B better than A?" needs the CI of the *difference*
with both runs resampled together: every bootstrap draw takes the same items from A and from B
(:class:`PairedCounts`). The items are those whose id both runs scored; the resampling unit is the item,
as for every metric's own CI (:mod:`abstain.metrics.counts`). ``r1.discrimination_within_count`` (and
``ua.du_discrimination_within_count``) is resampled within its numeral-count bins with the bins' weights fixed, as its own CI is
(:mod:`abstain.metrics.within_count`).

Example:
    >>> from abstain.schema import ScoredRow
    >>> def row(i, label, refused):
    ...     return ScoredRow(id=str(i), question="q", answers=[] if label == "unanswerable" else ["1"],
    ...                      label=label, response="", model="m", pred="DATA_UNCERTAIN" if refused else "ANSWER",
    ...                      answer=None if refused else "1", format_ok=True, correct=None if refused else True)
    >>> a = [row(0, "unanswerable", False), row(1, "unanswerable", True), row(2, "answerable", False)]
    >>> b = [row(0, "unanswerable", True), row(1, "unanswerable", True), row(2, "answerable", False)]
    >>> d = paired_delta(a, b, "r1.u_ref", PairedConfig(resamples=200))
    >>> d.a, d.b, d.delta, d.n_items
    (0.5, 1.0, 0.5, 3)
    >>> d.ci[0] >= 0           # B refuses every unanswerable item A refuses: no resample favors A
    True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from abstain.metrics.compute import FAMILIES, MetricsConfig, _interval, _point
from abstain.metrics.counts import SHAPE, kept, row_cell
from abstain.metrics.within_count import WITHIN_COUNT_KEYS, _bins, discrimination_of
from abstain.schema import ScoredRow

__all__ = ["PAIRED_KEYS", "PairedConfig", "PairedCounts", "PairedDelta", "paired_delta", "paired_values"]


@dataclass(frozen=True)
class PairedConfig:
    """Paired bootstrap settings.

    Attributes:
        resamples: bootstrap resamples (0: the point difference only).
        seed: bootstrap seed; the same seed gives the same interval.
        confidence: two-sided interval mass.
    """

    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        MetricsConfig(resamples=self.resamples, confidence=self.confidence)  # the same checks


@dataclass(frozen=True)
class PairedDelta:
    """A metric of run A and of run B on their shared items, B − A, and the paired CI of B − A."""

    key: str
    a: float | None
    b: float | None
    delta: float | None
    ci: list[float] | None
    n_items: int


def _family_of(key: str):  # type: ignore[no-untyped-def]
    """The family that computes ``key`` (``prefix.name``), found by evaluating each once on an empty tensor."""
    prefix, _, name = key.partition(".")
    empty = np.zeros(SHAPE)
    for family in FAMILIES:
        if family.prefix == prefix and name in family.fn(empty, MetricsConfig(resamples=0), True):
            return family
    return None


#: every key :func:`paired_delta` computes: the count-tensor families' metrics and the within-count one
PAIRED_KEYS: tuple[str, ...] = tuple(dict.fromkeys(
    [f"{f.prefix}.{name}" for f in FAMILIES for name in f.fn(np.zeros(SHAPE), MetricsConfig(resamples=0), True)]
    + list(WITHIN_COUNT_KEYS)))


@dataclass
class PairedCounts:
    """Joint item patterns of two runs over their shared items: an item's cells in A and in B move together."""

    a: np.ndarray  # (P, cells) counts of run A's cells for each distinct joint pattern
    b: np.ndarray  # (P, cells) the same for run B
    weights: np.ndarray  # (P,) how many shared items have that joint pattern

    @classmethod
    def from_rows(cls, rows_a: Sequence[ScoredRow], rows_b: Sequence[ScoredRow]) -> PairedCounts:
        cells: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        for side, rows in zip(cells, (rows_a, rows_b), strict=True):
            for r in rows:
                side.setdefault(r.id, []).append(row_cell(r))
        shared = [i for i in cells[0] if i in cells[1]]
        freq = Counter((tuple(sorted(cells[0][i])), tuple(sorted(cells[1][i]))) for i in shared)
        size = int(np.prod(SHAPE))
        a = np.zeros((len(freq), size), dtype=np.int64)
        b = np.zeros((len(freq), size), dtype=np.int64)
        weights = np.zeros(len(freq), dtype=np.int64)
        for k, ((pa, pb), n) in enumerate(freq.items()):
            np.add.at(a[k], list(pa), 1)
            np.add.at(b[k], list(pb), 1)
            weights[k] = n
        return cls(a, b, weights)

    @property
    def n_items(self) -> int:
        return int(self.weights.sum())

    def tensors(self) -> tuple[np.ndarray, np.ndarray]:
        """The observed count tensors of A and of B, each of shape ``SHAPE``."""
        return tuple((self.weights @ p).reshape(SHAPE).astype(float) for p in (self.a, self.b))  # type: ignore[return-value]

    def bootstrap(self, resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``resamples`` item-resampled tensors of A and of B, drawn together, each ``(resamples, *SHAPE)``."""
        n = self.n_items
        if n == 0:
            return np.zeros((resamples, *SHAPE)), np.zeros((resamples, *SHAPE))
        draws = rng.multinomial(n, self.weights / n, size=resamples)
        return tuple((draws @ p).reshape((resamples, *SHAPE)).astype(float) for p in (self.a, self.b))  # type: ignore[return-value]


def paired_values(rows_a: Sequence[ScoredRow], rows_b: Sequence[ScoredRow], key: str, config: PairedConfig
                  ) -> tuple[float | None, float | None, np.ndarray | None, int]:
    """(A's value, B's value, the bootstrap values of B − A or None, the shared items) of metric ``key``.

    The building block of :func:`paired_delta`, for statistics made of several metrics (sum the bootstrap
    arrays of independently resampled parts, e.g. two datasets).
    """
    rng = np.random.default_rng([config.seed, *key.encode()])
    if key in WITHIN_COUNT_KEYS:
        return _within_count(rows_a, rows_b, config.resamples, rng, key)
    family = _family_of(key)
    if family is None:
        raise ValueError(f"{key!r} has no paired difference; one of: {', '.join(PAIRED_KEYS)}")
    name = key.partition(".")[2]
    counts = PairedCounts.from_rows(rows_a, rows_b)

    # each run's clarification metrics are null when that run carries no clarification judgment, as its own are
    clar = [any(r.clarification_correct is not None for r in rows) for rows in (rows_a, rows_b)]

    def value(tensor: np.ndarray, side: int) -> np.ndarray:
        return family.fn(kept(tensor, family.needs), MetricsConfig(resamples=0), clar[side])[name]

    point_a, point_b = (_point(value(t, side)) for side, t in enumerate(counts.tensors()))
    boot = None
    if config.resamples and point_a is not None and point_b is not None:
        boot_a, boot_b = counts.bootstrap(config.resamples, rng)
        boot = value(boot_b, 1) - value(boot_a, 0)
    return point_a, point_b, boot, counts.n_items


def _within_count(rows_a: Sequence[ScoredRow], rows_b: Sequence[ScoredRow], resamples: int,
                  rng: np.random.Generator, key: str) -> tuple[float | None, float | None, np.ndarray | None, int]:
    """A within-count discrimination (``key``) of A and B and its paired bootstrap, resampled bin by bin."""
    _discrimination = discrimination_of(key)
    shared = {r.id for r in rows_a} & {r.id for r in rows_b}
    bins = _bins([r for r in rows_a if r.id in shared])  # the same items, so the same bins and weights for B
    if not bins:
        return None, None, None, len(shared)
    point = np.zeros(2)
    boot = np.zeros(resamples) if resamples else None
    for group_a, weight in bins:
        ids = {r.id for r in group_a}
        counts = PairedCounts.from_rows(group_a, [r for r in rows_b if r.id in ids])
        point += weight * np.array([float(_discrimination(t)) for t in counts.tensors()])
        if boot is not None:
            boot_a, boot_b = counts.bootstrap(resamples, rng)
            boot += weight * (_discrimination(boot_b) - _discrimination(boot_a))
    total = sum(w for _, w in bins)
    return float(point[0] / total), float(point[1] / total), None if boot is None else boot / total, len(shared)


def paired_delta(rows_a: Sequence[ScoredRow], rows_b: Sequence[ScoredRow], key: str,
                 config: PairedConfig | None = None) -> PairedDelta:
    """Metric ``key`` (one of :data:`PAIRED_KEYS`) of runs A and B on their shared items, B − A, paired CI."""
    config = config or PairedConfig()
    a, b, boot, n = paired_values(rows_a, rows_b, key, config)
    delta = None if a is None or b is None else b - a
    return PairedDelta(key, a, b, delta, _interval(boot, config.confidence) if boot is not None and delta is not None else None, n)
