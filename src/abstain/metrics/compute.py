"""All metrics of the four protocols for a set of scored rows, with bootstrap confidence intervals.

The result is one flat dict whose keys are the documented metric names (``ua.du_f1``,
``r1.u_clar_c``, ``aca.by_perturbation.entity_disruption.behavior_score``,
``by_category.reasoning.ab.f1`` …), each with ``<key>_ci = [low, high]``; undefined values
(zero denominators) are ``None``. A judge error is kept per field: a row whose ``correct``,
``behavior`` or ``clarification_correct`` the judge failed to decide is left out of the metric
families that read that field (:data:`FAMILIES`) and counted in ``n.judge_errors.<field>``; the other
families still count it. ``n.judge_errors`` counts the rows with any error.

Example:
    >>> from abstain.schema import ScoredRow
    >>> row = ScoredRow(id="1", question="q", answers=["4"], label="answerable", response="",
    ...                 model="m", pred="ANSWER", answer="4", format_ok=True, correct=True)
    >>> m = compute_metrics([row], MetricsConfig(resamples=10))
    >>> m["ua.acc"], m["n.answerable"]
    (1.0, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from abstain.data.abstentionbench import is_abstentionbench
from abstain.metrics.aca import BehaviorValues, aca_metrics, idk_metrics
from abstain.metrics.ab import ab_accuracy, ab_metrics
from abstain.metrics.counts import Counts, kept
from abstain.metrics.macro import macro_metrics
from abstain.metrics.r1 import r1_clarification_metrics, r1_metrics, r1_refusal_metrics
from abstain.metrics.truth import truth_metrics
from abstain.metrics.ua import du_discrimination_metrics, ua_metrics
from abstain.metrics.within_count import WITHIN_COUNT_KEYS, cue_baselines, within_count
from abstain.schema import JUDGED_FIELDS, ScoredRow, dataset_of

__all__ = ["AB_HEADLINE", "HEADLINE", "FAMILIES", "Family", "MetricsConfig", "compute_metrics", "headline",
           "metric_block"]

#: the metrics every summary shows first (``abstain metrics``, ``eval``, ``compare``, the harness tasks' tables)
HEADLINE = (
    "ua.acc", "ua.du_f1", "ua.mu_f1", "ua.avg_f1", "r1.a_acc", "r1.a_fu", "r1.u_ref", "r1.discrimination",
    "r1.discrimination_within_count", "ua.du_discrimination", "ua.du_discrimination_within_count",
    "cue.le2_discrimination", "cue.best_discrimination", "r1.u_clar",
    "aca.behavior_score", "aca.idk_score", "ab.f1", "ab.precision", "ab.recall",
)
#: AbstentionBench's own headline (:mod:`abstain.metrics.macro`), after :data:`HEADLINE` where rows are its items
AB_HEADLINE = ("ab.macro.f1", "ab.macro.recall")


def headline(*metrics: Mapping[str, object]) -> tuple[str, ...]:
    """The headline keys of one or more metric dicts (one per column): :data:`HEADLINE`, then :data:`AB_HEADLINE`
    when one of them counts AbstentionBench rows (``n.abstentionbench``, :func:`compute_metrics`).

    Example:
        >>> headline({"n.abstentionbench": 0}) == HEADLINE
        True
        >>> headline({"n.abstentionbench": 0}, {"n.abstentionbench": 4})[-2:]
        ('ab.macro.f1', 'ab.macro.recall')
    """
    return HEADLINE + AB_HEADLINE if any(m.get("n.abstentionbench") for m in metrics) else HEADLINE

Value = float | int | list[float] | None


@dataclass(frozen=True)
class MetricsConfig:
    """Bootstrap and ACA value settings.

    Attributes:
        resamples: bootstrap resamples (0 disables the CIs).
        seed: bootstrap seed; the same seed gives the same intervals.
        confidence: two-sided interval mass.
        behavior_values: ACA reward and Behavior Score values per behavior.
    """

    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    behavior_values: BehaviorValues = field(default_factory=BehaviorValues)

    def __post_init__(self) -> None:
        if self.resamples < 0:
            raise ValueError("resamples must be >= 0")
        if not 0 < self.confidence < 1:
            raise ValueError("confidence must be in (0, 1), e.g. 0.95")


@dataclass(frozen=True)
class Family:
    """A group of metrics under one prefix, and the judged fields it reads.

    ``fn(tensor, config, has_clarification)`` returns name -> values; rows whose judge failed on one of
    ``needs`` are left out of its tensor.
    """

    prefix: str
    fn: Callable[[np.ndarray, MetricsConfig, bool], dict[str, np.ndarray]]
    needs: tuple[str, ...]


#: every metric family, in output order, with the judged fields each one reads
FAMILIES: tuple[Family, ...] = (
    Family("ua", lambda c, cfg, clar: ua_metrics(c), ("correct",)),
    Family("ua", lambda c, cfg, clar: du_discrimination_metrics(c), ()),
    Family("r1", lambda c, cfg, clar: r1_metrics(c), ("correct",)),
    Family("r1", lambda c, cfg, clar: r1_refusal_metrics(c), ()),
    Family("r1", lambda c, cfg, clar: r1_clarification_metrics(c, clar), ("clarification_correct",)),
    Family("aca", lambda c, cfg, clar: aca_metrics(c, cfg.behavior_values), ("behavior",)),
    Family("aca", lambda c, cfg, clar: idk_metrics(c), ()),
    Family("ab", lambda c, cfg, clar: ab_metrics(c), ("behavior",)),
    Family("ab", lambda c, cfg, clar: ab_accuracy(c), ("correct",)),
    Family("truth", lambda c, cfg, clar: truth_metrics(c), ("correct", "behavior")),
)


def _point(value: np.ndarray) -> float | None:
    v = float(value)
    return None if math.isnan(v) else v


def _interval(samples: np.ndarray, confidence: float) -> list[float] | None:
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return [float(low), float(high)]


def _with_cis(
    rows: Sequence[ScoredRow], config: MetricsConfig, prefix: str = "", only: str | None = None
) -> dict[str, Value]:
    """Metric families (all, or ``only`` one) and their CIs; each family skips rows missing a field it needs."""
    counts = Counts.from_rows(rows)
    point_c = counts.tensor
    has_clar = any(r.clarification_correct is not None for r in rows)
    boot_c = None
    if config.resamples:
        # a stable per-group stream: the same rows give the same intervals whatever else is scored
        seed = [config.seed, *prefix.encode()]
        boot_c = counts.bootstrap(config.resamples, np.random.default_rng(seed))
    out: dict[str, Value] = {}
    for family in FAMILIES:
        if only is not None and family.prefix != only:
            continue
        point = family.fn(kept(point_c, family.needs), config, has_clar)
        boot = family.fn(kept(boot_c, family.needs), config, has_clar) if boot_c is not None else {}
        for name, value in point.items():
            key = f"{family.prefix}.{name}"
            out[key] = _point(value)
            out[f"{key}_ci"] = (
                _interval(boot[name], config.confidence) if name in boot and out[key] is not None else None
            )
    return out


def metric_block(rows: Sequence[ScoredRow], config: MetricsConfig, prefix: str = "") -> dict[str, Value]:
    """Every metric family, ACA per perturbation, and the counts for one group of rows."""
    out = _with_cis(rows, config, prefix)
    for key, stream in WITHIN_COUNT_KEYS.items():
        rng = np.random.default_rng([config.seed, *f"{stream}:{prefix}".encode()])
        point, boot = within_count(rows, config.resamples, rng, key)
        out[key] = point
        out[f"{key}_ci"] = _interval(boot, config.confidence) if boot is not None and point is not None else None
    out.update(cue_baselines(rows, config.resamples, config.seed, config.confidence, prefix))
    unanswerable = [r for r in rows if r.label == "unanswerable"]
    for name in sorted({r.perturbation for r in unanswerable if r.perturbation}):
        group = [r for r in unanswerable if r.perturbation == name]
        for key, value in _with_cis(group, config, f"{prefix}p:{name}", only="aca").items():
            out[f"aca.by_perturbation.{name}.{key[4:]}"] = value
    out["n.answerable"] = len(rows) - len(unanswerable)
    out["n.unanswerable"] = len(unanswerable)
    out["n.judge_errors"] = sum(bool(r.judge_errors) for r in rows)
    for name in JUDGED_FIELDS:
        out[f"n.judge_errors.{name}"] = sum(name in r.judge_errors for r in rows)
    out["n.format_errors"] = sum(not r.format_ok for r in rows)
    return out


def _macro(groups: dict[str, list[ScoredRow]], config: MetricsConfig) -> dict[str, Value]:
    """AbstentionBench's per-dataset macro averages (``ab.macro.*``) and their stratified-bootstrap CIs."""
    counts = [Counts.from_rows(rows) for rows in groups.values()]
    point = macro_metrics([c.tensor for c in counts])
    boot = None
    if config.resamples and counts:
        boot = macro_metrics([c.bootstrap(config.resamples, np.random.default_rng([config.seed, *f"d:{n}".encode()]))
                              for n, c in zip(groups, counts, strict=True)])
    out: dict[str, Value] = {}
    for name, value in point.items():
        key = f"ab.macro.{name}"
        out[key] = int(value) if name == "datasets" else _point(value)
        if name != "datasets":
            out[f"{key}_ci"] = _interval(boot[name], config.confidence) if boot is not None and out[key] is not None else None
    return out


def compute_metrics(rows: Sequence[ScoredRow], config: MetricsConfig | None = None) -> dict[str, Value]:
    """All metrics for ``rows``; the same per ``category`` under ``by_category.<name>.`` and, when the rows
    come from several datasets (:func:`abstain.schema.dataset_of`), per dataset under ``by_source.<name>.``,
    with AbstentionBench's macro average over them (``ab.macro.*``, :mod:`abstain.metrics.macro`), and how many rows
    are AbstentionBench's (``n.abstentionbench``, :func:`abstain.data.abstentionbench.is_abstentionbench`)."""
    config = config or MetricsConfig()
    out = metric_block(rows, config)
    out["n.abstentionbench"] = sum(is_abstentionbench(row) for row in rows)
    datasets: dict[str, list[ScoredRow]] = {}
    for row in rows:
        datasets.setdefault(dataset_of(row), []).append(row)
    out.update(_macro(dict(sorted(datasets.items())), config))
    for name in sorted({r.category for r in rows if r.category}):
        group = [r for r in rows if r.category == name]
        for key, value in metric_block(group, config, f"c:{name}").items():
            out[f"by_category.{name}.{key}"] = value
    if len(datasets) > 1:
        for name in sorted(datasets):
            for key, value in metric_block(datasets[name], config, f"s:{name}").items():
                out[f"by_source.{name}.{key}"] = value
    return out
