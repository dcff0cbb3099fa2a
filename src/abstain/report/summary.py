"""``metrics.json`` of a run: every metric per protocol, the decision/behavior counts and a per-benchmark view.

Only deterministic content (no timestamps, no timings): the same scored rows in the same order give the
same bytes.

Layout::

    {"run": {model, suite, data, limit, items, protocols, samples, judge, shots, shots_unanswerable},
     "protocols": {name: compute_metrics(rows of that protocol)},          # flat dict, ``<key>_ci`` CIs
     "distribution": {name: {"answerable": {...}, "unanswerable": {...}, "behavior": {...}}},
     "by_benchmark": {name: {dataset: the top-level metrics of its rows}},
     "datasets": {dataset: {"category": ..., "scenario": ...}}}

``by_benchmark`` groups rows by :func:`abstain.data.suites.dataset_of` (the benchmark, or the
AbstentionBench dataset where a loader names one, e.g. ``coconot/subjective``); ``datasets`` says each
dataset's ``category`` and AbstentionBench ``scenario`` (``null`` when absent, ``"mixed"`` when its rows
disagree), for the report's per-dataset and knowledge sections.

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
from abstain.schema import ScoredRow

__all__ = ["ANSWERABLE_OUTCOMES", "BEHAVIOR_OUTCOMES", "UNANSWERABLE_OUTCOMES", "outcome", "run_metrics"]

ANSWERABLE_OUTCOMES = ("correct", "wrong", "no_box", "DATA_UNCERTAIN", "MODEL_UNCERTAIN", "judge_error")
UNANSWERABLE_OUTCOMES = ("answered", "no_box", "DATA_UNCERTAIN", "MODEL_UNCERTAIN", "judge_error")
BEHAVIOR_OUTCOMES = ("SH", "EA", "ABS", "COND", "ELICIT", "unlabeled")
RUN_FIELDS = ("model", "suite", "data", "limit", "items", "protocols", "samples", "temperature", "max_tokens",
              "judge", "shots", "shots_unanswerable")


def _value(x: object) -> str | None:
    return None if x is None else str(getattr(x, "value", x))


def outcome(row: ScoredRow) -> str:
    """What one row did, in the words of the distribution plot."""
    pred = _value(row.pred)
    if row.judge_error is not None:
        return "judge_error"
    if pred != "ANSWER":
        return str(pred)
    if not row.format_ok:
        return "no_box"
    if row.label == "unanswerable":
        return "answered"
    return "correct" if row.correct else "wrong"


def _distribution(rows: Sequence[ScoredRow]) -> dict[str, dict[str, int]]:
    answerable = dict.fromkeys(ANSWERABLE_OUTCOMES, 0)
    unanswerable = dict.fromkeys(UNANSWERABLE_OUTCOMES, 0)
    behavior = dict.fromkeys(BEHAVIOR_OUTCOMES, 0)
    for row in rows:
        if row.label == "answerable":
            answerable[outcome(row)] += 1
        else:
            unanswerable[outcome(row)] += 1
            behavior[_value(row.behavior) or "unlabeled"] += 1
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
        out["protocols"][name] = compute_metrics(group, config)
        out["distribution"][name] = _distribution(group)
        benches: dict[str, list[ScoredRow]] = {}
        for row in group:
            benches.setdefault(dataset_of(row), []).append(row)
        out["by_benchmark"][name] = {
            bench: _top_level(compute_metrics(benches[bench], config)) for bench in sorted(benches)
        }
    return out
