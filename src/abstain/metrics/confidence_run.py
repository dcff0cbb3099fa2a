"""Every confidence metric of one run: per protocol and per benchmark, explicit abstention against the threshold,
and the curves the report draws (``metrics.json``'s ``confidence`` block).

For each estimator a run stored (``abstain eval --confidence``):

* ``protocols[p]["conf.<e>.*"]`` — AUROC, AURC, PRR (ECE and Brier for probabilities) over ``p``'s answers
  (:mod:`abstain.metrics.confidence`), and, for every protocol but ``answer_only`` when the run has ``answer_only``,
  ``conf.<e>.matched.*``: its explicit abstention against thresholding ``answer_only``'s confidence at the same
  coverage on the same items (:mod:`abstain.metrics.selective`);
* ``by_benchmark[p][dataset]`` — the same per dataset, when the run has several;
* ``confidence[e]`` — ``{"threshold_curve": [[coverage, risk], …] of answer_only, "explicit": {p: [coverage, risk]},
  "reliability": {p: [[mean confidence, accuracy, rows], …]}}`` (reliability for probabilities only).

Example:
    >>> from abstain.schema import ScoredRow
    >>> rows = {"answer_only": [ScoredRow(id="1", question="q", answers=["4"], label="answerable", response="",
    ...         model="m", protocol="answer_only", pred="ANSWER", answer="4", format_ok=True, correct=True,
    ...         confidence={"logprob": -0.2})]}
    >>> flat, curves = confidence_run(rows, ("logprob",), resamples=0)
    >>> flat["answer_only"]["conf.logprob.n"], curves["logprob"]["threshold_curve"]
    (1, [[1.0, 0.0]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from abstain.confidence import estimator_of
from abstain.metrics.confidence import answered_scores, confidence_metrics, reliability
from abstain.metrics.selective import matched_coverage, threshold_curve
from abstain.schema import ScoredRow

__all__ = ["FORCED", "confidence_run", "estimators_of"]

#: the protocol whose confidence the threshold policy ranks (UA-Bench's forced answer)
FORCED = "answer_only"


def estimators_of(rows: Sequence[ScoredRow], recorded: Sequence[str] | None = None) -> tuple[str, ...]:
    """The estimators to report: the run's ``--confidence`` list, else every name the rows carry (sorted)."""
    if recorded:
        return tuple(recorded)
    return tuple(sorted({name for r in rows for name in (r.confidence or {})}))


def _block(rows: Sequence[ScoredRow], forced: Sequence[ScoredRow] | None, protocol: str, names: Sequence[str],
           options: dict[str, Any], stream: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        out.update(confidence_metrics(rows, name, estimator_of(name).probability, stream=stream, **options))
        if forced is not None and protocol != FORCED:
            out.update(matched_coverage(rows, forced, name, stream=stream, **options))
    return out


def confidence_run(groups: Mapping[str, Sequence[ScoredRow]], names: Sequence[str], resamples: int = 1000,
                   seed: int = 0, confidence: float = 0.95,
                   datasets: Mapping[str, Mapping[str, Sequence[ScoredRow]]] | None = None,
                   ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(per protocol the flat ``conf.*`` metrics — with ``by_benchmark`` blocks under ``datasets`` when given —,
    the ``confidence`` block of curves). ``groups`` maps protocol -> rows; ``datasets`` protocol -> dataset -> rows."""
    options = {"resamples": resamples, "seed": seed, "confidence": confidence}
    forced = groups.get(FORCED)
    flat: dict[str, dict[str, Any]] = {}
    for protocol, rows in groups.items():
        flat[protocol] = _block(rows, forced, protocol, names, options, f"p:{protocol}")
        for dataset, group in (datasets or {}).get(protocol, {}).items():
            forced_group = (datasets or {}).get(FORCED, {}).get(dataset) if forced is not None else None
            block = _block(group, forced_group, protocol, names, options, f"p:{protocol}:s:{dataset}")
            flat[protocol].update({f"by_source.{dataset}.{k}": v for k, v in block.items()})
    curves: dict[str, Any] = {}
    for name in names:
        entry: dict[str, Any] = {"threshold_curve": threshold_curve(forced, name) if forced is not None else []}
        entry["explicit"] = {p: [flat[p][f"conf.{name}.matched.coverage"], flat[p][f"conf.{name}.matched.explicit_risk"]]
                             for p in groups if f"conf.{name}.matched.coverage" in flat[p]}
        if estimator_of(name).probability:
            entry["reliability"] = {p: [list(b) for b in reliability(*answered_scores(rows, name)[:2])]
                                    for p, rows in groups.items()}
        curves[name] = entry
    return flat, curves
