"""``metrics.json`` of a run: every metric per protocol, the decision/behavior counts and a per-benchmark view.

Only deterministic content (no timestamps, no timings): the same scored rows in the same order give the
same bytes.

Layout::

    {"run": {model, suite, data, limit, items, protocols, samples, judge, shots, shots_unanswerable},
     "protocols": {name: compute_metrics(rows of that protocol)},          # flat dict, ``<key>_ci`` CIs
     "distribution": {name: {"answerable": {...}, "unanswerable": {...}, "behavior": {...}}},
     "by_benchmark": {name: {dataset: the top-level metrics of its rows}},
     "datasets": {dataset: {"category": ..., "scenario": ...}},
     "confidence": {estimator: curves}}      # only when the rows carry confidence (abstain eval --confidence)

``by_benchmark`` groups rows by :func:`abstain.data.suites.dataset_of` (the benchmark, or the
AbstentionBench dataset where a loader names one, e.g. ``coconot/subjective``); ``datasets`` says each
dataset's ``category`` and AbstentionBench ``scenario`` (``null`` when absent, ``"mixed"`` when its rows
disagree), for the report's per-dataset and knowledge sections. Confidence estimates add ``conf.<e>.*`` to each
protocol's and dataset's metrics and the ``confidence`` block (:mod:`abstain.metrics.confidence_run`).

Example:
    >>> from abstain.schema import ScoredRow
    >>> row = ScoredRow(id="1", question="q", answers=["4"], label="answerable", response="\\\\boxed{4}",
    ...                 model="m", protocol="idk", pred="ANSWER", answer="4", format_ok=True, correct=True)
    >>> m = run_metrics([row], {"protocols": ["idk"]}, resamples=0)
    >>> m["protocols"]["idk"]["ua.acc"], m["distribution"]["idk"]["answerable"]["correct"]
    (1.0, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstain.data.suites import dataset_of
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.confidence_run import confidence_run, estimators_of
from abstain.outcomes import Outcome, is_refusal, outcome
from abstain.schema import Behavior, ScoredRow

__all__ = ["ANSWERABLE_OUTCOMES", "BEHAVIOR_OUTCOMES", "UNANSWERABLE_OUTCOMES", "outcome_label", "run_metrics"]

ANSWERABLE_OUTCOMES = ("correct", "wrong", "no_box", "DATA_UNCERTAIN", "MODEL_UNCERTAIN", "abstained", "judge_error")
UNANSWERABLE_OUTCOMES = ("answered", "no_box", "DATA_UNCERTAIN", "MODEL_UNCERTAIN", "abstained", "judge_error")
BEHAVIOR_OUTCOMES = (*(b.value for b in Behavior), "unlabeled")
RUN_FIELDS = ("model", "suite", "data", "limit", "items", "protocols", "samples", "temperature", "max_tokens",
              "judge", "shots", "shots_unanswerable")


def outcome_label(row: ScoredRow) -> str:
    """What one row did, in the words of the distribution plot: :func:`abstain.outcomes.outcome`, refined.

    ``judge_error`` = unscored; a refusal shows its token (``DATA_UNCERTAIN`` / ``MODEL_UNCERTAIN``);
    ``abstained`` = asked, conditioned or abstained without a refusal box; a wrong answer without a box
    is ``no_box``; a definite answer to an unanswerable item is ``answered``.
    """
    result = outcome(row)
    if result is Outcome.UNSCORED:
        return "judge_error"
    if is_refusal(row):
        return str(getattr(row.pred, "value", row.pred))
    if result is Outcome.ABSTAIN:
        return "abstained"
    if result is Outcome.CORRECT:
        return "correct"
    if not row.format_ok:
        return "no_box"
    return "answered" if row.label == "unanswerable" else "wrong"


def _distribution(rows: Sequence[ScoredRow]) -> dict[str, dict[str, int]]:
    answerable = dict.fromkeys(ANSWERABLE_OUTCOMES, 0)
    unanswerable = dict.fromkeys(UNANSWERABLE_OUTCOMES, 0)
    behavior = dict.fromkeys(BEHAVIOR_OUTCOMES, 0)
    for row in rows:
        if row.label == "answerable":
            answerable[outcome_label(row)] += 1
        else:
            unanswerable[outcome_label(row)] += 1
            behavior[str(getattr(row.behavior, "value", row.behavior)) if row.behavior is not None else "unlabeled"] += 1
    return {"answerable": answerable, "unanswerable": unanswerable, "behavior": behavior}


def _top_level(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metrics.items() if not k.startswith(("by_category.", "aca.by_perturbation."))}


def _datasets(rows: Sequence[ScoredRow]) -> dict[str, dict[str, str | None]]:
    seen: dict[str, dict[str, set[str | None]]] = {}
    for row in rows:
        info = seen.setdefault(dataset_of(row), {"category": set(), "scenario": set()})
        info["category"].add(row.category)
        info["scenario"].add(row.meta.get("scenario"))
    one = lambda values: next(iter(values)) if len(values) == 1 else "mixed"  # noqa: E731
    return {name: {k: one(v) for k, v in info.items()} for name, info in sorted(seen.items())}


def run_metrics(rows: Sequence[ScoredRow], record: dict[str, Any], resamples: int | None = None) -> dict[str, Any]:
    """The ``metrics.json`` content for the scored rows of a run (rows in canonical order)."""
    config = MetricsConfig(resamples=record.get("resamples", 1000) if resamples is None else resamples)
    protocols = list(record.get("protocols") or sorted({r.protocol or "" for r in rows}))
    out: dict[str, Any] = {
        "run": {k: record[k] for k in RUN_FIELDS if k in record},
        "protocols": {},
        "distribution": {},
        "by_benchmark": {},
        "datasets": _datasets(rows),
    }
    for name in protocols:
        group = [r for r in rows if (r.protocol or "") == name]
        metrics = compute_metrics(group, config)
        out["distribution"][name] = _distribution(group)
        benches = sorted({dataset_of(row) for row in group})
        if len(benches) == 1:
            out["by_benchmark"][name] = {benches[0]: _top_level(metrics)}
        else:  # compute_metrics' per-dataset blocks, kept here (the protocol's own metrics stay pooled)
            out["by_benchmark"][name] = {
                bench: _top_level({k[len(f"by_source.{bench}."):]: v for k, v in metrics.items()
                                   if k.startswith(f"by_source.{bench}.")}) for bench in benches
            }
        out["protocols"][name] = {k: v for k, v in metrics.items() if not k.startswith("by_source.")}
    names = estimators_of(rows, record.get("confidence"))
    if names:
        _add_confidence(out, rows, protocols, names, config)
    if record.get("probe"):  # abstain eval --probe: against the base model's p̂, per protocol
        from abstain.metrics.competence import competence_metrics, probed_p_hat

        p_hat = probed_p_hat(record["probe"], rows)
        for name in protocols:
            found = competence_metrics([r for r in rows if (r.protocol or "") == name], p_hat,
                                       resamples=config.resamples, seed=config.seed)
            out["protocols"][name].update({f"competence.{key}": value for key, value in found.items()})
    return out


def _add_confidence(out: dict[str, Any], rows: Sequence[ScoredRow], protocols: Sequence[str], names: Sequence[str],
                    config: MetricsConfig) -> None:
    """The ``conf.*`` metrics into each protocol and dataset, and the ``confidence`` block of curves."""
    groups = {p: [r for r in rows if (r.protocol or "") == p] for p in protocols}
    datasets: dict[str, dict[str, list[ScoredRow]]] = {}
    for p, group in groups.items():
        for row in group:
            datasets.setdefault(p, {}).setdefault(dataset_of(row), []).append(row)
    several = {p: d for p, d in datasets.items() if len(d) > 1}
    flat, curves = confidence_run(groups, names, config.resamples, config.seed, config.confidence, several)
    for p, block in flat.items():
        for key, value in block.items():
            if key.startswith("by_source."):
                dataset, _, metric = key[len("by_source."):].partition(".conf.")
                out["by_benchmark"][p][dataset][f"conf.{metric}"] = value
            else:
                out["protocols"][p][key] = value
                if p not in several:
                    for dataset in out["by_benchmark"].get(p, {}):
                        out["by_benchmark"][p][dataset][key] = value
    out["confidence"] = curves
