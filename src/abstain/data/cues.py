"""Surface cues of answerability: how much of a benchmark a shortcut solves, without reading the question.

A model can learn to refuse by *how a question looks* rather than by whether a needed fact is missing.
The strongest such cue in missing-premise math is the count of numbers the question states (a twin made by
deleting a quantity states one fewer). Everything here is a function of the question text and the label
only — no model — so it scores a benchmark, a training mix or a suite before any training:

* :func:`numerals` — ``re.findall(r"\\d+(?:[.,]\\d+)*", question)``.
* :func:`pair_auc` — the AUC of a score for the label ``unanswerable`` over all (unanswerable, answerable)
  pairs, ties counted ½ (0.5: the score says nothing; 1: it separates the labels).
* ``number_count_auc`` — :func:`pair_auc` of ``-len(numerals)`` ("fewer numbers -> unanswerable");
  ``length_auc`` — of ``-len(question)`` in characters ("shorter -> unanswerable");
  ``vague_auc`` — of the count of vague-quantity words (:data:`VAGUE_WORDS`, "more -> unanswerable").
* ``logistic_auc`` — the out-of-fold AUC of a logistic regression on every surface feature together
  (:func:`surface_features`), cross-validated with a twin and its original always in the same fold.
* The *cue baselines* (:func:`threshold_discrimination`): the discrimination (refusal rate on unanswerable
  minus on answerable items) of the rule "refuse iff the question states <= t numbers", for t = 2 and for
  the best t on that data (an upper bound of what the shortcut reaches).
* :func:`count_bin` — the numeral-count bin of :mod:`abstain.metrics.within_count`: the exact count, so that
  every rule "refuse iff <= k numbers" refuses all or none of a bin, and scores 0 within count.

:func:`audit` computes all of them per dataset and over ``all``, with bootstrap CIs that resample *clusters*
(an unanswerable twin and its original move together): ``abstain cues FILE``.

Example:
    >>> numerals("Tom has 3 apples, 1,200 pears and 2.5 kg of plums.")
    ['3', '1,200', '2.5']
    >>> round(pair_auc([-1, -3, -2, -4], ["unanswerable", "answerable", "unanswerable", "answerable"]), 3)
    1.0
    >>> threshold_discrimination([1, 3, 2, 4], ["unanswerable", "answerable", "unanswerable", "answerable"], 2)
    1.0
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from abstain.schema import Item, dataset_of

__all__ = [
    "FEATURES",
    "NUMERAL",
    "VAGUE_WORDS",
    "AuditConfig",
    "audit",
    "best_threshold",
    "count_bin",
    "numeral_count",
    "numerals",
    "pair_auc",
    "shortcut_baselines",
    "surface_features",
    "threshold_discrimination",
    "vague_count",
]

#: a numeral of a question (thousands separators and decimals belong to the number)
NUMERAL = re.compile(r"\d+(?:[.,]\d+)*")

#: vague-quantity words and phrases that unquantified twins ("some", "a few times") tend to use
VAGUE_WORDS: tuple[str, ...] = ("some", "several", "a few", "certain", "other")
_VAGUE = {w: re.compile(rf"\b{re.escape(w)}\b", re.IGNORECASE) for w in VAGUE_WORDS}

UNANSWERABLE = "unanswerable"


def numerals(question: str) -> list[str]:
    """The numbers a question states, as written (``re.findall(r"\\d+(?:[.,]\\d+)*", question)``)."""
    return NUMERAL.findall(question)


def numeral_count(question: str) -> int:
    """How many numbers a question states."""
    return len(NUMERAL.findall(question))


def count_bin(n: int) -> int:
    """The within-count bin of a numeral count: the count itself (0, 1, 2, 3, 4, 5, ...: one bin per count).

    Within-count discrimination compares the labels only among questions that state exactly as many numbers.
    Coarser bins let a count rule earn credit inside a bin: with a bin ">= 4", "refuse iff <= 5 numbers"
    refuses the 4s and 5s of that bin but not the 6s (docs/cues.md measures what that is worth). With exact
    counts every rule "refuse iff <= k numbers" refuses all of a bin or none of it, for any k, and scores 0.

    Example:
        >>> [count_bin(n) for n in (0, 2, 3, 4, 5, 17)]
        [0, 2, 3, 4, 5, 17]
    """
    if n < 0:
        raise ValueError(f"a numeral count is >= 0, not {n}")
    return int(n)


def vague_count(question: str, word: str | None = None) -> int:
    """How often the vague-quantity words (or one of them) occur in a question, as whole words, any case."""
    words = VAGUE_WORDS if word is None else (word,)
    return sum(len(_VAGUE[w].findall(question)) for w in words)


#: the surface features :func:`surface_features` returns, in order
FEATURES: tuple[str, ...] = ("numerals", "characters", "words", "sentences", "question_marks",
                             *(f"vague:{w}" for w in VAGUE_WORDS))


def surface_features(question: str) -> list[float]:
    """The question's surface features (:data:`FEATURES`): what a reader can count without understanding it."""
    return [float(numeral_count(question)), float(len(question)), float(len(question.split())),
            float(len(re.findall(r"[.!?](?:\s|$)", question))), float(question.count("?")),
            *(float(vague_count(question, w)) for w in VAGUE_WORDS)]


def _is_unanswerable(labels: Sequence[Any]) -> np.ndarray:
    return np.array([str(getattr(label, "value", label)) == UNANSWERABLE for label in labels], dtype=bool)


def _weighted_auc(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUC (ties ½) of ``scores`` for ``positive`` under each row of ``weights`` (shape (B, n)): (B,)."""
    levels, index = np.unique(scores, return_inverse=True)
    onehot = np.zeros((scores.size, levels.size))
    onehot[np.arange(scores.size), index] = 1.0
    w_pos = (weights * positive) @ onehot  # (B, levels)
    w_neg = (weights * ~positive) @ onehot
    below = np.cumsum(w_neg, axis=1) - w_neg  # negatives strictly below each level
    pairs = w_pos.sum(axis=1) * w_neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, (w_pos * (below + 0.5 * w_neg)).sum(axis=1) / pairs, np.nan)


def pair_auc(scores: Sequence[float], labels: Sequence[Any]) -> float | None:
    """P(score of an unanswerable item > score of an answerable one) + ½ P(equal), over all such pairs.

    ``None`` when one label is absent.
    """
    positive = _is_unanswerable(labels)
    value = _weighted_auc(np.asarray(scores, dtype=float), positive, np.ones((1, len(positive))))[0]
    return None if math.isnan(value) else float(value)


def threshold_discrimination(counts: Sequence[int], labels: Sequence[Any], threshold: float) -> float | None:
    """Discrimination (U-Ref - A-FU) of "refuse iff the question states <= ``threshold`` numbers"."""
    n = np.asarray(counts)
    positive = _is_unanswerable(labels)
    if positive.all() or not positive.any():
        return None
    refuse = n <= threshold
    return float(refuse[positive].mean() - refuse[~positive].mean())


def best_threshold(counts: Sequence[int], labels: Sequence[Any]) -> tuple[int, float] | None:
    """The numeral threshold t whose rule "refuse iff <= t numbers" discriminates best on this data, and its
    discrimination (>= 0: t = -1, never refusing, scores 0). An in-sample upper bound of the shortcut.

    Example:
        >>> best_threshold([1, 3, 2, 4, 2], ["unanswerable", "answerable", "unanswerable", "answerable", "answerable"])
        (2, 0.6667)
    """
    positive = _is_unanswerable(labels)
    if positive.all() or not positive.any():
        return None
    best = (-1, 0.0)
    for t in sorted(set(int(c) for c in counts)):
        value = threshold_discrimination(counts, labels, t)
        if value is not None and value > best[1] + 1e-12:
            best = (t, value)
    return best[0], round(best[1], 4)


def cluster_of(item: Item) -> str:
    """What moves together in a bootstrap or a CV fold: an item's pair (twin and original), else the item."""
    extra = item.model_extra or {}
    return str(extra.get("pair_id") or item.meta.get("pair_id") or item.id)


@dataclass(frozen=True)
class AuditConfig:
    """Settings of :func:`audit`.

    Attributes:
        resamples: bootstrap resamples of the CIs (0: no CIs).
        seed: bootstrap and CV seed.
        confidence: two-sided interval mass.
        folds: cross-validation folds of the logistic regression (grouped by pair).
    """

    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    folds: int = 5


def _interval(samples: np.ndarray, confidence: float) -> list[float] | None:
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    return [round(float(x), 4) for x in np.percentile(finite, [tail, 100 - tail])]


def _cluster_weights(clusters: Sequence[Hashable], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, n) row weights of a cluster bootstrap: each row counts as often as its cluster is drawn."""
    names, index = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    draws = rng.multinomial(names.size, np.full(names.size, 1 / names.size), size=resamples)
    return draws[:, index].astype(float)


def _oof_scores(features: np.ndarray, positive: np.ndarray, clusters: Sequence[Hashable], config: AuditConfig
                ) -> np.ndarray | None:
    """Out-of-fold probabilities of a standardized logistic regression; twins and originals share a fold."""
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import StratifiedGroupKFold
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ImportError("the logistic cue audit needs scikit-learn: pip install scikit-learn") from exc
    groups = np.asarray([str(c) for c in clusters])
    folds = min(config.folds, int(positive.sum()), int((~positive).sum()), len(set(groups)))
    if folds < 2:
        return None
    scores = np.full(positive.size, np.nan)
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=config.seed)
    for train, test in splitter.split(features, positive, groups):
        if positive[train].all() or not positive[train].any():
            continue
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        model.fit(features[train], positive[train])
        scores[test] = model.predict_proba(features[test])[:, 1]
    return None if np.isnan(scores).any() else scores


def _aucs(scores: Mapping[str, np.ndarray | None], positive: np.ndarray, weights: np.ndarray | None,
          config: AuditConfig) -> dict[str, Any]:
    """``name`` -> the AUC of each score for ``positive`` and ``name_ci`` from the bootstrap ``weights``."""
    both = bool(positive.any() and (~positive).any())
    out: dict[str, Any] = {}
    for name, score in scores.items():
        point = math.nan if score is None or not both else _weighted_auc(score, positive, np.ones((1, positive.size)))[0]
        out[name] = None if math.isnan(point) else round(float(point), 4)
        out[f"{name}_ci"] = (_interval(_weighted_auc(score, positive, weights), config.confidence)
                             if weights is not None and out[name] is not None and score is not None else None)
    return out


def _prepare(items: Sequence[Item], config: AuditConfig, rng_key: str
             ) -> tuple[list[Item], np.ndarray, np.ndarray, np.ndarray | None]:
    """(one item per id, unanswerable mask, numeral counts, cluster-bootstrap weights or None)."""
    unique = list({item.id: item for item in items}.values())
    positive = _is_unanswerable([item.label for item in unique])
    counts = np.array([numeral_count(item.question) for item in unique], dtype=float)
    weights = None
    if config.resamples and positive.any() and (~positive).any():
        rng = np.random.default_rng([config.seed, *rng_key.encode()])
        weights = _cluster_weights([cluster_of(item) for item in unique], config.resamples, rng)
    return unique, positive, counts, weights


def _block(items: Sequence[Item], config: AuditConfig, rng_key: str) -> dict[str, Any]:
    """Every cue figure of one group of items, with cluster-bootstrap CIs."""
    items, positive, counts, weights = _prepare(items, config, rng_key)
    questions = [item.question for item in items]
    scores: dict[str, np.ndarray | None] = {
        "number_count_auc": -counts,
        "length_auc": -np.array([len(q) for q in questions], dtype=float),
        "vague_auc": np.array([vague_count(q) for q in questions], dtype=float),
        "logistic_auc": None,
    }
    if positive.any() and (~positive).any() and len(items) >= 4:
        features = np.array([surface_features(q) for q in questions])
        scores["logistic_auc"] = _oof_scores(features, positive, [cluster_of(i) for i in items], config)
    out: dict[str, Any] = {"n": len(items), "n_unanswerable": int(positive.sum()),
                           "n_answerable": int((~positive).sum()), **_aucs(scores, positive, weights, config)}
    out["mean_numerals"] = {label: _mean(counts[mask]) for label, mask in
                            (("answerable", ~positive), ("unanswerable", positive))}
    out["vague_words"] = {
        word: {label: _mean(np.array([vague_count(q, word) > 0 for q, m in zip(questions, mask, strict=True) if m]))
               for label, mask in (("answerable", ~positive), ("unanswerable", positive))}
        for word in VAGUE_WORDS}
    out.update(_baselines(counts, positive, weights, config))
    return out


def _mean(values: np.ndarray) -> float | None:
    return round(float(values.mean()), 4) if values.size else None


def _baselines(counts: np.ndarray, positive: np.ndarray, weights: np.ndarray | None,
               config: AuditConfig) -> dict[str, Any]:
    """The cue-baseline discriminations ("refuse iff <= 2 numerals", the best threshold) and their CIs."""
    labels = np.where(positive, UNANSWERABLE, "answerable")
    le2 = threshold_discrimination(counts, labels, 2)
    best = best_threshold(counts, labels)
    out: dict[str, Any] = {"cue_le2_discrimination": None if le2 is None else round(le2, 4),
                           "cue_best_threshold": None if best is None else best[0],
                           "cue_best_discrimination": None if best is None else best[1]}
    if weights is None or le2 is None or best is None:
        return {**out, "cue_le2_discrimination_ci": None, "cue_best_discrimination_ci": None}

    def disc(refuse: np.ndarray) -> np.ndarray:  # per resample
        with np.errstate(invalid="ignore", divide="ignore"):
            u = (weights * (refuse & positive)).sum(1) / (weights * positive).sum(1)
            a = (weights * (refuse & ~positive)).sum(1) / (weights * ~positive).sum(1)
        return u - a

    thresholds = sorted(set(counts.astype(int).tolist()))
    best_per_resample = np.maximum.reduce([disc(counts <= t) for t in thresholds] + [np.zeros(len(weights))])
    return {**out, "cue_le2_discrimination_ci": _interval(disc(counts <= 2), config.confidence),
            "cue_best_discrimination_ci": _interval(best_per_resample, config.confidence)}


def shortcut_baselines(items: Sequence[Item], config: AuditConfig, rng_key: str = "") -> dict[str, Any]:
    """The numeral-count shortcut on ``items`` (one per id): its AUC and cue baselines, with CIs.

    Keys: ``number_count_auc``, ``cue_le2_discrimination``, ``cue_best_threshold``, ``cue_best_discrimination``
    and ``<key>_ci`` (``None`` for the threshold, or when a label is absent).
    """
    _, positive, counts, weights = _prepare(items, config, rng_key)
    return {**_aucs({"number_count_auc": -counts}, positive, weights, config),
            **_baselines(counts, positive, weights, config), "cue_best_threshold_ci": None}


def audit(items: Sequence[Item], config: AuditConfig | None = None,
          group: Callable[[Item], str] = dataset_of) -> dict[str, Any]:
    """The shortcut audit of a set of items: ``{"all": {...}, "by_dataset": {name: {...}}}``.

    Each block holds ``number_count_auc``, ``length_auc``, ``vague_auc`` and ``logistic_auc`` (each with
    ``<name>_ci``), the mean numeral count and the share of questions with each vague word per label, and the
    cue baselines (``cue_le2_discrimination``, ``cue_best_threshold``, ``cue_best_discrimination``).

    Example:
        >>> from abstain.schema import Item
        >>> items = [Item(id=str(i), question=q, answers=["1"] if a else [], label="answerable" if a else
        ...               "unanswerable") for i, (q, a) in enumerate([("1 and 2 and 3?", 1), ("1 and some?", 0),
        ...               ("4 and 5 and 6?", 1), ("7 and several?", 0)])]
        >>> report = audit(items, AuditConfig(resamples=0))
        >>> report["all"]["number_count_auc"], report["all"]["cue_le2_discrimination"]
        (1.0, 1.0)
    """
    config = config or AuditConfig()
    if not items:
        raise ValueError("no items to audit")
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(group(item), []).append(item)
    return {"all": _block(items, config, "all"),
            "by_dataset": {name: _block(rows, config, f"d:{name}") for name, rows in sorted(groups.items())}}


def summary_rows(report: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, block) rows of an :func:`audit` report: every dataset, then ``all``."""
    rows = list(report["by_dataset"].items())
    if len(rows) != 1:
        rows.append(("all", report["all"]))
    return rows
