"""Discrimination the numeral-count shortcut cannot explain, and the shortcut's own score on the same items.

``r1.discrimination_within_count``: the rows are split by the exact number of numerals their question states
(:func:`abstain.data.cues.count_bin`: one bin per count, 0, 1, 2, 3, 4, 5, ...); in every bin that holds both
labels, U-Ref - A-FU of that bin (refusal = a boxed abstention, :func:`abstain.outcomes.is_refusal`, as
``r1.u_ref``); the bins averaged with weights min(n_answerable, n_unanswerable) of the bin (items, not
samples); undefined when no bin holds both labels. Every rule "refuse iff the question states <= k numbers"
refuses all of a bin or none of it, so it scores exactly 0 here, for any k, however good its plain
discrimination looks. ``ua.du_discrimination_within_count`` is the same with P(DATA_UNCERTAIN | label) in
place of the refusal rates (:func:`abstain.metrics.ua.du_discrimination_metrics`). Its CI is a bootstrap
stratified by bin (each bin's items resampled within the bin, the weights fixed), like the per-dataset macro
averages.

(Before issue 36 the bins were <= 2, 3-4 and >= 5 numerals: a count rule with its threshold inside a bin,
"refuse iff <= 1 numeral", earned credit there. Numbers measured with those bins say so where they are
quoted.)

``cue.*``: what the shortcut itself reaches on these items, from the questions and labels alone (no
response is read) — ``cue.le2_discrimination`` ("refuse iff <= 2 numerals"), ``cue.best_discrimination`` and
``cue.best_threshold`` (the best numeral threshold on this data: an upper bound of the shortcut) and
``cue.number_count_auc`` (:mod:`abstain.data.cues`). A model's discrimination below ``cue.le2_discrimination``
is beaten by a one-line rule.

Example:
    >>> from abstain.data.cues import numeral_count
    >>> from abstain.schema import ScoredRow
    >>> def row(i, q, label, refused):
    ...     return ScoredRow(id=str(i), question=q, answers=[] if label == "unanswerable" else ["1"], label=label,
    ...                      response="", model="m", pred="DATA_UNCERTAIN" if refused else "ANSWER",
    ...                      answer=None if refused else "1", format_ok=True, correct=None if refused else False)
    >>> rows = [row(0, "1 and 2?", "unanswerable", True), row(1, "3 and 4?", "answerable", True),
    ...         row(2, "1, 2 and 3?", "unanswerable", True), row(3, "5, 6 and 7?", "answerable", False),
    ...         row(4, "1, 2, 3 and 4?", "answerable", False)]
    >>> within_count_point(rows)      # 2 numerals: 1 - 1 = 0; 3: 1 - 0 = 1; 4: one label only; weights 1, 1
    0.5
    >>> rule = [row(r.id, r.question, r.label, numeral_count(r.question) <= 2) for r in rows]  # refuse iff <= 2
    >>> within_count_point(rule), cue_baselines(rows)["cue.le2_discrimination"]   # plain: 1/2 - 1/3
    (0.0, 0.1667)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from abstain.data.cues import AuditConfig, count_bin, numeral_count, shortcut_baselines
from abstain.metrics.counts import Counts
from abstain.metrics.r1 import r1_refusal_metrics
from abstain.metrics.ua import du_discrimination_metrics
from abstain.schema import ScoredRow

__all__ = ["WITHIN_COUNT_KEYS", "cue_baselines", "discrimination_of", "within_count", "within_count_point"]

R1_WITHIN = "r1.discrimination_within_count"
DU_WITHIN = "ua.du_discrimination_within_count"
#: the within-count metrics and their bootstrap stream names (r1's stream is the one it always had)
WITHIN_COUNT_KEYS = {R1_WITHIN: "w", DU_WITHIN: "wdu"}


def _bins(rows: Sequence[ScoredRow]) -> list[tuple[list[ScoredRow], float]]:
    """(rows of the bin, weight) for every bin holding both labels, by numeral count; weight = min(items per
    label)."""
    groups: dict[int, list[ScoredRow]] = {}
    for r in rows:
        groups.setdefault(count_bin(numeral_count(r.question)), []).append(r)
    out = []
    for _, group in sorted(groups.items()):
        n_a = len({r.id for r in group if r.label == "answerable"})
        n_u = len({r.id for r in group if r.label == "unanswerable"})
        if n_a and n_u:
            out.append((group, float(min(n_a, n_u))))
    return out


def _discrimination(tensor: np.ndarray) -> np.ndarray:
    return r1_refusal_metrics(tensor)["discrimination"]


def _du_discrimination(tensor: np.ndarray) -> np.ndarray:
    return du_discrimination_metrics(tensor)["du_discrimination"]


def discrimination_of(key: str):  # type: ignore[no-untyped-def]
    """The discrimination a within-count metric averages over bins: refusal (r1) or DATA_UNCERTAIN (ua)."""
    return {R1_WITHIN: _discrimination, DU_WITHIN: _du_discrimination}[key]


def within_count_point(rows: Sequence[ScoredRow], key: str = R1_WITHIN) -> float | None:
    """``key`` (``r1.discrimination_within_count`` by default) of ``rows`` (``None`` when no bin holds both
    labels)."""
    bins = _bins(rows)
    if not bins:
        return None
    fn = discrimination_of(key)
    total = sum(w for _, w in bins)
    return float(sum(w * float(fn(Counts.from_rows(g).tensor)) for g, w in bins) / total)


def within_count(rows: Sequence[ScoredRow], resamples: int, rng: np.random.Generator, key: str = R1_WITHIN
                 ) -> tuple[float | None, np.ndarray | None]:
    """The point value and ``resamples`` bootstrap values (stratified by bin) of ``key``, or ``None``s."""
    bins = _bins(rows)
    if not bins:
        return None, None
    fn = discrimination_of(key)
    total = sum(w for _, w in bins)
    point = sum(w * float(fn(Counts.from_rows(g).tensor)) for g, w in bins) / total
    if not resamples:
        return float(point), None
    boot = sum(w * fn(Counts.from_rows(g).bootstrap(resamples, rng)) for g, w in bins) / total
    return float(point), np.asarray(boot)


def cue_baselines(rows: Sequence[ScoredRow], resamples: int = 0, seed: int = 0, confidence: float = 0.95,
                  rng_key: str = "") -> dict[str, Any]:
    """The numeral-count shortcut on these rows' items (one per item id; responses are not read), as ``cue.*``
    keys with their ``_ci`` (a cluster bootstrap: a twin and its original move together)."""
    config = AuditConfig(resamples=resamples, seed=seed, confidence=confidence)
    found = shortcut_baselines(rows, config, f"cue:{rng_key}")
    return {f"cue.{key.removeprefix('cue_')}": value for key, value in found.items()}
