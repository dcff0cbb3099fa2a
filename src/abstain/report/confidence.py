"""The report's confidence section: tables of ``conf.*`` metrics and the plots of ``metrics.json``'s ``confidence``
block (:mod:`abstain.metrics.confidence_run`), for one run or a comparison.

* :func:`risk_coverage_plot` — per estimator, the risk–coverage curve of thresholding ``answer_only``'s confidence,
  with each protocol's explicit abstention as a point (coverage, risk) on it; one color per run, so a comparison
  shows whether training moved the explicit point below the threshold curve.
* :func:`reliability_plot` — per probability estimator, accuracy against mean confidence per bin (the diagonal is
  perfect calibration), one line per run and protocol.

Example:
    >>> confidence_plots([]), confidence_tables([])
    ({}, [])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

from abstain.report.plots import MARKERS, _png
from abstain.report.tables import RunView, Table, columns, metric_table

__all__ = ["confidence_plots", "confidence_tables", "reliability_plot", "risk_coverage_plot"]

PALETTE = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#37474f"]
QUALITY = ("n", "accuracy", "auroc", "aurc", "prr", "ece", "brier")
MATCHED = ("matched.n", "matched.coverage", "matched.explicit_risk", "matched.threshold_risk", "matched.risk_delta",
           "matched.explicit_refusal_u", "matched.threshold_refusal_u", "matched.refusal_u_delta")
QUALITY_CAPTION = ("over the rows that gave an answer (an answer to an unanswerable item is wrong): auroc = P(a correct "
                   "answer is more confident than a wrong one); aurc = area under the risk-coverage curve (lower is "
                   "better); prr = prediction-rejection ratio (1 oracle, 0 random); ece / brier for probabilities")
MATCHED_CAPTION = ("explicit abstention under each protocol against abstaining on answer_only's least confident "
                   "answers at the same coverage, same items; risk = wrong answers / answers; risk_delta = explicit - "
                   "threshold (below 0: explicit abstention wins), refusal_u = share of unanswerable items declined; "
                   "CIs are paired bootstrap intervals")


def _estimators(runs: Sequence[RunView]) -> list[str]:
    return list(dict.fromkeys(name for run in runs for name in run.metrics.get("confidence", {})))


def confidence_tables(runs: Sequence[RunView]) -> list[Table]:
    """One table of estimator quality and, where a run has ``answer_only`` beside another protocol, one of the
    matched-coverage comparison, per estimator."""
    cols = columns(runs)
    tables = []
    for name in _estimators(runs):
        keys = [f"conf.{name}.{k}" for k in QUALITY if any(f"conf.{name}.{k}" in c.metrics for c in cols)]
        tables.append(metric_table(f"Confidence: {name}", keys, cols, caption=QUALITY_CAPTION, section="Confidence"))
        matched = [c for c in cols if f"conf.{name}.matched.coverage" in c.metrics]
        if matched:
            tables.append(metric_table(f"Explicit abstention vs a {name} threshold at the same coverage",
                                       [f"conf.{name}.{k}" for k in MATCHED], matched, caption=MATCHED_CAPTION,
                                       section="Confidence"))
    return tables


def risk_coverage_plot(runs: Sequence[RunView], name: str) -> bytes | None:
    """Threshold curve(s) of ``answer_only`` and the explicit points, for estimator ``name``; None without either."""
    fig = Figure(figsize=(6.4, 4.6))
    ax = fig.subplots()
    drawn = False
    for r, run in enumerate(runs):
        block: dict[str, Any] = run.metrics.get("confidence", {}).get(name, {})
        color = PALETTE[r % len(PALETTE)]
        label = f" · {run.label}" if len(runs) > 1 else ""
        curve = block.get("threshold_curve") or []
        if curve:
            ax.plot([c for c, _ in curve], [v for _, v in curve], color=color, linewidth=1.4,
                    label=f"answer_only, abstain below a {name} threshold{label}")
            drawn = True
        for p, (protocol, point) in enumerate(block.get("explicit", {}).items()):
            if point[0] is None or point[1] is None:
                continue
            metrics = run.metrics["protocols"].get(protocol, {})
            cov_ci = metrics.get(f"conf.{name}.matched.coverage_ci")
            risk_ci = metrics.get(f"conf.{name}.matched.explicit_risk_ci")
            ax.errorbar([point[0]], [point[1]], fmt=MARKERS[p % len(MARKERS)], color=color, markersize=8, capsize=3,
                        xerr=[[point[0] - cov_ci[0]], [cov_ci[1] - point[0]]] if cov_ci else None,
                        yerr=[[point[1] - risk_ci[0]], [risk_ci[1] - point[1]]] if risk_ci else None,
                        label=f"{protocol}: explicit abstention{label}")
            drawn = True
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("coverage (share of items answered)")
    ax.set_ylabel("risk (share of answers wrong)")
    ax.set_title(f"Risk–coverage: explicit abstention vs {name} threshold", fontsize=10)
    if not drawn:
        return None
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)


def reliability_plot(runs: Sequence[RunView], name: str) -> bytes | None:
    """Accuracy against mean confidence per bin for probability estimator ``name``; None without bins."""
    fig = Figure(figsize=(5.6, 4.6))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="#9e9e9e", linewidth=0.8, linestyle="--")
    n = 0
    for r, run in enumerate(runs):
        for protocol, bins in run.metrics.get("confidence", {}).get(name, {}).get("reliability", {}).items():
            if bins:
                label = f"{protocol} · {run.label}" if len(runs) > 1 else protocol
                ax.plot([b[0] for b in bins], [b[1] for b in bins], marker=MARKERS[n % len(MARKERS)],
                        color=PALETTE[(r if len(runs) > 1 else n) % len(PALETTE)], label=label)
                n += 1
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"mean {name} (bin)")
    ax.set_ylabel("accuracy (bin)")
    ax.set_title(f"Reliability: {name}", fontsize=10)
    if not n:
        return None
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)


def confidence_plots(runs: Sequence[RunView]) -> dict[str, tuple[str, bytes]]:
    """file stem -> (caption, PNG) of every confidence plot the runs have data for."""
    out: dict[str, tuple[str, bytes]] = {}
    for name in _estimators(runs):
        stem = name.replace(":", "_")
        plots = {f"risk_coverage_{stem}": (f"Risk–coverage of a {name} threshold under answer_only, explicit "
                                           "abstention as points", risk_coverage_plot(runs, name)),
                 f"reliability_{stem}": (f"Reliability diagram of {name}", reliability_plot(runs, name))}
        out.update({key: (caption, png) for key, (caption, png) in plots.items() if png is not None})
    return out


