"""Discrimination the numeral-count shortcut cannot explain, and the shortcut's own score on the same items.

``r1.discrimination_within_count``: the rows are split into the numeral-count bins of
:data:`abstain.cues.COUNT_BINS` (<= 2, 3-4, >= 5 numbers in the question); in every bin that holds both
labels, U-Ref - A-FU of that bin (refusal = a boxed abstention, :func:`abstain.outcomes.is_refusal`, as
``r1.u_ref``); the bins averaged with weights min(n_answerable, n_unanswerable) of the bin (items, not
samples); undefined when no bin holds both labels. A model that refuses by how many numbers a question states
scores ~0 here however well its plain discrimination looks. Its CI is a bootstrap stratified by bin
(each bin's items resampled within the bin, the weights fixed), like the per-dataset macro averages.

``cue.*``: what the shortcut itself reaches on these items, from the questions and labels alone (no
response is read) — ``cue.le2_discrimination`` ("refuse iff <= 2 numerals"), ``cue.best_discrimination`` and
``cue.best_threshold`` (the best numeral threshold on this data: an upper bound of the shortcut) and
``cue.number_count_auc`` (:mod:`abstain.cues`). A model's discrimination below ``cue.le2_discrimination``
is beaten by a one-line rule.

Example:
    >>> from abstain.schema import ScoredRow
    >>> def row(i, q, label, refused):
    ...     return ScoredRow(id=str(i), question=q, answers=[] if label == "unanswerable" else ["1"], label=label,
    ...                      response="", model="m", pred="DATA_UNCERTAIN" if refused else "ANSWER",
    ...                      answer=None if refused else "1", format_ok=True, correct=None if refused else False)
    >>> rows = [row(0, "1 and 2?", "unanswerable", True), row(1, "3 and 4?", "answerable", True),
    ...         row(2, "1, 2, 3 and 4?", "unanswerable", True), row(3, "5, 6, 7 and 8?", "answerable", False)]
    >>> within_count_point(rows)      # bin <=2: 1 - 1 = 0; bin 3-4: 1 - 0 = 1; weights 1 and 1
    0.5
    >>> cue_baselines(rows)["cue.le2_discrimination"]
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from abstain.cues import COUNT_BINS, AuditConfig, count_bin, numeral_count, shortcut_baselines
from abstain.metrics.counts import Counts
from abstain.metrics.r1 import r1_refusal_metrics
from abstain.schema import ScoredRow

__all__ = ["cue_baselines", "within_count", "within_count_point"]


def _bins(rows: Sequence[ScoredRow]) -> list[tuple[list[ScoredRow], float]]:
    """(rows of the bin, weight) for every bin holding both labels; weight = min(items per label)."""
    out = []
    for name, _, _ in COUNT_BINS:
        group = [r for r in rows if count_bin(numeral_count(r.question)) == name]
        n_a = len({r.id for r in group if r.label == "answerable"})
        n_u = len({r.id for r in group if r.label == "unanswerable"})
        if n_a and n_u:
            out.append((group, float(min(n_a, n_u))))
    return out


def _discrimination(tensor: np.ndarray) -> np.ndarray:
    return r1_refusal_metrics(tensor)["discrimination"]


def within_count_point(rows: Sequence[ScoredRow]) -> float | None:
    """``r1.discrimination_within_count`` of ``rows`` (``None`` when no bin holds both labels)."""
    bins = _bins(rows)
    if not bins:
        return None
    total = sum(w for _, w in bins)
    return float(sum(w * float(_discrimination(Counts.from_rows(g).tensor)) for g, w in bins) / total)


def within_count(rows: Sequence[ScoredRow], resamples: int, rng: np.random.Generator
                 ) -> tuple[float | None, np.ndarray | None]:
    """The point value and ``resamples`` bootstrap values (stratified by bin), or ``None``s."""
    bins = _bins(rows)
    if not bins:
        return None, None
    total = sum(w for _, w in bins)
    point = sum(w * float(_discrimination(Counts.from_rows(g).tensor)) for g, w in bins) / total
    if not resamples:
        return float(point), None
    boot = sum(w * _discrimination(Counts.from_rows(g).bootstrap(resamples, rng)) for g, w in bins) / total
    return float(point), np.asarray(boot)


def cue_baselines(rows: Sequence[ScoredRow], resamples: int = 0, seed: int = 0, confidence: float = 0.95,
                  rng_key: str = "") -> dict[str, Any]:
    """The numeral-count shortcut on these rows' items (one per item id; responses are not read), as ``cue.*``
    keys with their ``_ci`` (a cluster bootstrap: a twin and its original move together)."""
    config = AuditConfig(resamples=resamples, seed=seed, confidence=confidence)
    found = shortcut_baselines(rows, config, f"cue:{rng_key}")
    return {f"cue.{key.removeprefix('cue_')}": value for key, value in found.items()}
