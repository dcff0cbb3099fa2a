"""The report's plots as PNG bytes (matplotlib, no display needed), each only where the runs define it.

* :func:`behavior_plot` — stacked bars per column (protocol, or protocol · run): what answerable and
  unanswerable rows did (correct / wrong / no box / DATA_UNCERTAIN / MODEL_UNCERTAIN) and, when the judge
  labels them, the ACA behaviors of unanswerable rows; a panel per kind of row the runs hold;
* :func:`refusal_accuracy_plot` — accuracy on answerable items against refusal on answerable items
  (over-refusal) and, where there are unanswerable items, against refusal on them, one point per column with
  95% CIs;
* :func:`f1_plot` — UA-Bench DU-F1 against MU-F1, one point per column that has a DATA_UNCERTAIN answer (its
  prompt offers one, or a response gave one) and both kinds of item, with 95% CIs;
* :func:`tradeoff_plot` — U-Ref against A-FU per benchmark with both kinds of item (the discrimination is the
  height above the diagonal), one point per column with 95% CIs.

Each function returns ``None`` where nothing of it is defined for the columns (an all-answerable run has no
unanswerable panel, no abstention-vs-accuracy panel, no DU-F1 plot and no U-Ref plot), and leaves out the
panels and points that are undefined. The data decides (which rows the columns hold, which metrics have values,
which answers were given), not a list of protocol names. Figures are built with the object API
(``matplotlib.figure.Figure``), so the global pyplot backend is never touched.

Example:
    >>> from abstain.report.tables import Column
    >>> m = {"ua.du_f1": 0.5, "ua.mu_f1": 0.25, "n.answerable": 4, "n.unanswerable": 4}
    >>> f1_plot([Column("attribution", "attribution", m, None)])[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    >>> f1_plot([Column("idk", "idk", m, None)]) is None  # no DATA_UNCERTAIN answer: DU-F1 is 0 by construction
    True
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

from abstain.protocols import PROTOCOLS
from abstain.report.summary import ANSWERABLE_OUTCOMES, BEHAVIOR_OUTCOMES, UNANSWERABLE_OUTCOMES
from abstain.report.tables import Column

__all__ = ["PLOTS", "behavior_plot", "f1_plot", "has_du_answer", "refusal_accuracy_plot", "tradeoff_plot"]

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


def _rows(cols: Sequence[Column], group: str) -> bool:
    """Whether some column has rows in ``group`` of its distribution (behaviors: labeled ones only)."""
    return any(n for c in cols for k, n in c.distribution.get(group, {}).items()
               if not (group == "behavior" and k == "unlabeled"))


def _stacked(ax: Any, cols: Sequence[Column], group: str, outcomes: Sequence[str], title: str) -> None:
    x = range(len(cols))
    bottoms = [0.0] * len(cols)
    totals = [sum(c.distribution.get(group, {}).values()) or 1 for c in cols]
    for name in outcomes:
        values = [c.distribution.get(group, {}).get(name, 0) / t for c, t in zip(cols, totals, strict=True)]
        if any(values):
            ax.bar(x, values, bottom=bottoms, color=COLORS[name], label=name, width=0.7)
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    ax.set_title(title, fontsize=10)
    ax.set_xticks(list(x), [c.header for c in cols], rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of rows")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def behavior_plot(cols: Sequence[Column]) -> bytes | None:
    """Stacked bars of decisions, a panel for answerable and one for unanswerable rows where the columns hold
    them, and one of ACA behaviors when the judge labeled some; None without rows."""
    panels = [(group, outcomes, title) for group, outcomes, title in (
        ("answerable", ANSWERABLE_OUTCOMES, "answerable items"),
        ("unanswerable", UNANSWERABLE_OUTCOMES, "unanswerable items"),
        ("behavior", BEHAVIOR_OUTCOMES, "ACA behavior (unanswerable)")) if _rows(cols, group)]
    if not panels:
        return None
    width = max(4.0, 1.1 + 0.55 * len(cols))
    fig = Figure(figsize=(width * len(panels) + 1.5 * len(panels), 4.2))
    for ax, (group, outcomes, title) in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels, strict=True):
        _stacked(ax, cols, group, outcomes, title)
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


def _defined(cols: Sequence[Column], *keys: str) -> bool:
    """Whether some column has a value for every key."""
    return any(all(c.metrics.get(k) is not None for k in keys) for c in cols)


def _scatter(ax: Any, cols: Sequence[Column], xkey: str, ykey: str, xlabel: str, ylabel: str) -> None:
    """One point per column with values for both keys, in the style of its place among ``cols``."""
    for c, (marker, color) in zip(cols, _style(cols), strict=True):
        x, y = c.metrics.get(xkey), c.metrics.get(ykey)
        if x is None or y is None:
            continue
        xci, yci = c.metrics.get(f"{xkey}_ci"), c.metrics.get(f"{ykey}_ci")
        xerr = [[x - xci[0]], [xci[1] - x]] if xci else None
        yerr = [[y - yci[0]], [yci[1] - y]] if yci else None
        ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt=marker, color=color, ecolor=color, alpha=0.85,
                    capsize=3, markersize=7, label=c.header)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def refusal_accuracy_plot(cols: Sequence[Column]) -> bytes | None:
    """Accuracy on answerable items vs refusal on answerable items and, where defined, vs refusal on unanswerable
    items; None where neither is defined."""
    panels = [(x, xlabel, title) for x, xlabel, title in (
        ("r1.a_fu", "refusal rate on answerable items (r1.a_fu)", "over-refusal vs accuracy"),
        ("r1.u_ref", "refusal rate on unanswerable items (r1.u_ref)", "abstention vs accuracy"))
        if _defined(cols, x, "r1.a_acc")]
    if not panels:
        return None
    fig = Figure(figsize=(5 * len(panels), 4.4))
    for ax, (x, xlabel, title) in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels, strict=True):
        _scatter(ax, cols, x, "r1.a_acc", xlabel, "accuracy on answerable items (r1.a_acc)")
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return _png(fig)


def has_du_answer(col: Column) -> bool:
    """Whether DATA_UNCERTAIN is an answer of the column: its protocol's prompt offers it, or a response gave it.

    Example:
        >>> has_du_answer(Column("idk", "idk", {}, None)), has_du_answer(Column("attribution", "attribution", {}, None))
        (False, True)
        >>> has_du_answer(Column("mine", "mine", {}, None, {"unanswerable": {"DATA_UNCERTAIN": 2}}))
        True
    """
    protocol = PROTOCOLS.get(col.protocol)
    offered = protocol is not None and "<DATA_UNCERTAIN>" in protocol.template
    return offered or any(col.distribution.get(group, {}).get("DATA_UNCERTAIN", 0)
                          for group in ("answerable", "unanswerable"))


def f1_plot(cols: Sequence[Column]) -> bytes | None:
    """UA-Bench: DU-F1 (data uncertainty) against MU-F1 (model uncertainty), for the columns with a DATA_UNCERTAIN
    answer and both kinds of item (elsewhere DU-F1 is 0 by construction); None when there are none."""
    defined = [c for c in cols if has_du_answer(c) and c.metrics.get("n.answerable") and c.metrics.get("n.unanswerable")
               and _defined([c], "ua.du_f1", "ua.mu_f1")]
    if not defined:
        return None
    fig = Figure(figsize=(5.2, 4.6))
    ax = fig.subplots()
    _scatter(ax, defined, "ua.du_f1", "ua.mu_f1", "DU-F1 (ua.du_f1)", "MU-F1 (ua.mu_f1)")
    ax.set_title("UA-Bench attribution: DU-F1 vs MU-F1", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def tradeoff_plot(cols: Sequence[Column]) -> bytes | None:
    """U-Ref against A-FU per benchmark with both kinds of item, one point per column (run x protocol), with 95% CIs;
    None when no benchmark has both.

    Above the diagonal a model refuses unanswerable items more often than answerable ones; the height
    above it is the discrimination U-Ref - A-FU (0 for a model that always, or never, refuses).
    """
    views = {bench: [Column(c.header, c.protocol, c.by_benchmark.get(bench, {}), None) for c in cols]
             for bench in sorted({b for c in cols for b in c.by_benchmark})}
    views = {bench: view for bench, view in views.items() if _defined(view, "r1.a_fu", "r1.u_ref")}
    if not views:
        return None
    per_row = min(len(views), 3)
    rows = (len(views) + per_row - 1) // per_row
    fig = Figure(figsize=(4.6 * per_row + 1.5, 4.2 * rows))
    axes = fig.subplots(rows, per_row, squeeze=False).reshape(-1)
    for ax, (bench, view) in zip(axes, views.items(), strict=False):
        _scatter(ax, view, "r1.a_fu", "r1.u_ref", "refusal on answerable (A-FU)", "refusal on unanswerable (U-Ref)")
        ax.plot([0, 1], [0, 1], color="#9e9e9e", linewidth=0.8, linestyle="--")
        ax.set_title(bench, fontsize=10)
    for ax in axes[len(views):]:
        ax.set_visible(False)
    fig.tight_layout()
    return _png(fig)


#: file name stem -> (caption, plot function: the PNG, or None where the columns do not define it)
PLOTS = {
    "behavior_distribution": ("Behavior distribution per protocol", behavior_plot),
    "refusal_vs_accuracy": ("Refusal vs accuracy on answerable items", refusal_accuracy_plot),
    "du_f1_vs_mu_f1": ("DU-F1 vs MU-F1", f1_plot),
    "uref_vs_afu": ("U-Ref vs A-FU per benchmark (discrimination = height above the diagonal)", tradeoff_plot),
}
