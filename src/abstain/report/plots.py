"""The report's plots as PNG bytes (matplotlib, no display needed).

* :func:`behavior_plot` — stacked bars per column (protocol, or protocol · run): what answerable and
  unanswerable rows did (correct / wrong / no box / DATA_UNCERTAIN / MODEL_UNCERTAIN) and, when the judge
  labels them, the ACA behaviors of unanswerable rows;
* :func:`refusal_accuracy_plot` — accuracy on answerable items against refusal on answerable items
  (over-refusal) and against refusal on unanswerable items, one point per column with 95% CIs;
* :func:`f1_plot` — UA-Bench DU-F1 against MU-F1, one point per column with 95% CIs;
* :func:`tradeoff_plot` — U-Ref against A-FU per benchmark (the discrimination is the height above the
  diagonal), one point per column with 95% CIs.

Figures are built with the object API (``matplotlib.figure.Figure``), so the global pyplot backend is
never touched.

Example:
    >>> from abstain.report.tables import Column
    >>> col = Column("idk", "idk", {"ua.du_f1": 0.5, "ua.mu_f1": 0.25}, None)
    >>> f1_plot([col])[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

from abstain.report.summary import ANSWERABLE_OUTCOMES, BEHAVIOR_OUTCOMES, UNANSWERABLE_OUTCOMES
from abstain.report.tables import Column

__all__ = ["PLOTS", "behavior_plot", "f1_plot", "refusal_accuracy_plot", "tradeoff_plot"]

COLORS = {
    "correct": "#2e7d32", "wrong": "#c62828", "answered": "#c62828", "no_box": "#9e9e9e",
    "DATA_UNCERTAIN": "#1565c0", "MODEL_UNCERTAIN": "#f9a825", "abstained": "#7e57c2",
    "judge_error": "#000000",
    "SH": "#c62828", "EA": "#ef6c00", "ABS": "#f9a825", "COND": "#26a69a", "ELICIT": "#1565c0",
    "unlabeled": "#e0e0e0",
}
MARKERS = "osD^vP*X"


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def _stacked(ax: Any, cols: Sequence[Column], group: str, outcomes: Sequence[str], title: str) -> None:
    x = range(len(cols))
    bottoms = [0.0] * len(cols)
    totals = [sum(c.distribution.get(group, {}).values()) or 1 for c in cols]
    for name in outcomes:
        values = [c.distribution.get(group, {}).get(name, 0) / t for c, t in zip(cols, totals, strict=True)]
        if any(values):
            ax.bar(x, values, bottom=bottoms, color=COLORS[name], label=name, width=0.7)
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    if not any(bottoms):
        ax.text(0.5, 0.5, "no rows", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title, fontsize=10)
    ax.set_xticks(list(x), [c.header for c in cols], rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of rows")
    if any(bottoms):
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def behavior_plot(cols: Sequence[Column]) -> bytes:
    """Stacked bars of decisions (answerable, unanswerable) and ACA behaviors when labeled."""
    labeled = any(
        sum(v for k, v in c.distribution.get("behavior", {}).items() if k != "unlabeled") for c in cols
    )
    panels = 3 if labeled else 2
    width = max(4.0, 1.1 + 0.55 * len(cols))
    fig = Figure(figsize=(width * panels + 1.5 * panels, 4.2))
    axes = fig.subplots(1, panels)
    _stacked(axes[0], cols, "answerable", ANSWERABLE_OUTCOMES, "answerable items")
    _stacked(axes[1], cols, "unanswerable", UNANSWERABLE_OUTCOMES, "unanswerable items")
    if labeled:
        _stacked(axes[2], cols, "behavior", BEHAVIOR_OUTCOMES, "ACA behavior (unanswerable)")
    fig.tight_layout()
    return _png(fig)


def _style(cols: Sequence[Column]) -> list[tuple[str, str]]:
    """(marker, color) per column: a marker per protocol, a color per run."""
    protocols = list(dict.fromkeys(c.protocol for c in cols))
    runs = list(dict.fromkeys(c.header.split(" · ", 1)[-1] if " · " in c.header else "" for c in cols))
    palette = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#37474f"]
    out = []
    for c in cols:
        run = c.header.split(" · ", 1)[-1] if " · " in c.header else ""
        color = palette[runs.index(run) % len(palette)] if len(runs) > 1 else palette[protocols.index(c.protocol) % len(palette)]
        out.append((MARKERS[protocols.index(c.protocol) % len(MARKERS)], color))
    return out


def _scatter(ax: Any, cols: Sequence[Column], xkey: str, ykey: str, xlabel: str, ylabel: str) -> None:
    drawn = 0
    for c, (marker, color) in zip(cols, _style(cols), strict=True):
        x, y = c.metrics.get(xkey), c.metrics.get(ykey)
        if x is None or y is None:
            continue
        xci, yci = c.metrics.get(f"{xkey}_ci"), c.metrics.get(f"{ykey}_ci")
        xerr = [[x - xci[0]], [xci[1] - x]] if xci else None
        yerr = [[y - yci[0]], [yci[1] - y]] if yci else None
        ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt=marker, color=color, ecolor=color, alpha=0.85,
                    capsize=3, markersize=7, label=c.header)
        drawn += 1
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "undefined for these runs", ha="center", va="center", transform=ax.transAxes)


def refusal_accuracy_plot(cols: Sequence[Column]) -> bytes:
    """Accuracy on answerable items vs refusal on answerable (left) and on unanswerable items (right)."""
    fig = Figure(figsize=(10, 4.4))
    left, right = fig.subplots(1, 2)
    _scatter(left, cols, "r1.a_fu", "r1.a_acc", "refusal rate on answerable items (r1.a_fu)",
             "accuracy on answerable items (r1.a_acc)")
    left.set_title("over-refusal vs accuracy", fontsize=10)
    _scatter(right, cols, "r1.u_ref", "r1.a_acc", "refusal rate on unanswerable items (r1.u_ref)",
             "accuracy on answerable items (r1.a_acc)")
    right.set_title("abstention vs accuracy", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def f1_plot(cols: Sequence[Column]) -> bytes:
    """UA-Bench: DU-F1 (data uncertainty) against MU-F1 (model uncertainty)."""
    fig = Figure(figsize=(5.2, 4.6))
    ax = fig.subplots()
    _scatter(ax, cols, "ua.du_f1", "ua.mu_f1", "DU-F1 (ua.du_f1)", "MU-F1 (ua.mu_f1)")
    ax.set_title("UA-Bench attribution: DU-F1 vs MU-F1", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def tradeoff_plot(cols: Sequence[Column]) -> bytes:
    """U-Ref against A-FU per benchmark, one point per column (run x protocol), with 95% CIs.

    Above the diagonal a model refuses unanswerable items more often than answerable ones; the height
    above it is the discrimination U-Ref - A-FU (0 for a model that always, or never, refuses).
    """
    benches = sorted({b for c in cols for b in c.by_benchmark})
    panels = max(1, len(benches))
    per_row = min(panels, 3)
    rows = (panels + per_row - 1) // per_row
    fig = Figure(figsize=(4.6 * per_row + 1.5, 4.2 * rows))
    axes = fig.subplots(rows, per_row, squeeze=False).reshape(-1)
    for ax, bench in zip(axes, benches or ["(no benchmarks)"], strict=False):
        view = [Column(c.header, c.protocol, c.by_benchmark.get(bench, {}), None) for c in cols]
        _scatter(ax, view, "r1.a_fu", "r1.u_ref", "refusal on answerable (A-FU)", "refusal on unanswerable (U-Ref)")
        ax.plot([0, 1], [0, 1], color="#9e9e9e", linewidth=0.8, linestyle="--")
        ax.set_title(bench, fontsize=10)
    for ax in axes[len(benches or [0]):]:
        ax.set_visible(False)
    fig.tight_layout()
    return _png(fig)


#: file name stem -> (caption, plot function)
PLOTS = {
    "behavior_distribution": ("Behavior distribution per protocol", behavior_plot),
    "refusal_vs_accuracy": ("Refusal vs accuracy on answerable items", refusal_accuracy_plot),
    "du_f1_vs_mu_f1": ("DU-F1 vs MU-F1", f1_plot),
    "uref_vs_afu": ("U-Ref vs A-FU per benchmark (discrimination = height above the diagonal)", tradeoff_plot),
}
