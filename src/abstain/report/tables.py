"""Report tables built from run directories' ``metrics.json``, rendered to Markdown or HTML.

A report has one column per protocol; a comparison one column per (protocol, run), the runs of a
protocol side by side, each later run showing its delta against the first. Cells carry the value, its
bootstrap 95% CI and the delta. Every table is rectangular: its header has one cell per body column
(the row-name column included). Tables come in sections: the metric families, categories,
perturbations, one row per dataset (:func:`abstain.data.suites.dataset_of`), and the knowledge suites'
AbstentionBench view; the first, ``Headline``, holds the metrics every summary shows first
(:func:`abstain.metrics.headline`).

Example:
    >>> cols = [Column("idk", "idk", {"ua.acc": 0.5, "ua.acc_ci": [0.25, 0.75]}, None)]
    >>> t = metric_table("accuracy", ["ua.acc"], cols)
    >>> print(t.markdown())
    ### accuracy
    <BLANKLINE>
    | metric | idk |
    |---|---|
    | ua.acc | 0.500 [0.250, 0.750] |
    <BLANKLINE>
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abstain.records.runs import CONFIG, METRICS
from abstain.metrics import AB_HEADLINE, headline
from abstain.report.summary import ANSWERABLE_OUTCOMES, BEHAVIOR_OUTCOMES, UNANSWERABLE_OUTCOMES

__all__ = [
    "CATEGORY_KEYS",
    "Cell",
    "Column",
    "FAMILY_KEYS",
    "RunView",
    "Table",
    "columns",
    "headline_table",
    "load_run",
    "metric_table",
    "report_tables",
]

FAMILY_KEYS: dict[str, tuple[str, ...]] = {
    "UA-Bench": ("ua.acc", "ua.du_precision", "ua.du_recall", "ua.du_f1", "ua.du_rate", "ua.mu_precision",
                 "ua.mu_recall", "ua.mu_f1", "ua.mu_rate", "ua.avg_f1", "ua.sd_precision", "ua.balanced_accuracy"),
    "Abstain-R1": ("r1.a_acc", "r1.a_fu", "r1.a_acc_c", "r1.u_ref", "r1.u_clar", "r1.u_clar_c"),
    "ACA-RL": ("aca.behavior_score", "aca.behavior_reward", "aca.idk_score", "aca.dist.SH", "aca.dist.EA",
               "aca.dist.ABS", "aca.dist.COND", "aca.dist.ELICIT"),
    "AbstentionBench / TIAR": ("ab.f1", "ab.precision", "ab.recall", "ab.accuracy"),
}
FAMILY_CAPTIONS = {
    "UA-Bench": "as UA-Bench's released code computes them: recall normalizes its false negatives too "
                "(du_recall = (TP/N) / (TP/N + FN/M)); du_rate = TP/N, mu_rate = TP/M are the plain detection "
                "rates; every division by zero gives 0, not — (read the counts)",
    "AbstentionBench / TIAR": "pooled over all rows; AbstentionBench's own headline is the unweighted mean over "
                              "datasets (see Per dataset)",
}
CATEGORY_KEYS = ("ua.acc", "ua.du_f1", "ua.mu_f1", "ua.avg_f1", "r1.a_fu", "r1.u_ref", "aca.behavior_score",
                 "ab.f1")
#: discrimination, the part the numeral-count shortcut cannot explain, and the shortcut's own score (cue baseline)
SHORTCUT_KEYS = ("r1.discrimination", "r1.discrimination_within_count", "ua.du_discrimination",
                 "ua.du_discrimination_within_count", "cue.le2_discrimination", "cue.best_discrimination",
                 "cue.best_threshold", "cue.number_count_auc")
SHORTCUT_CAPTION = ("discrimination = U-Ref - A-FU; du_discrimination = P(DATA_UNCERTAIN | unanswerable) - "
                    "P(DATA_UNCERTAIN | answerable); within_count = each among the questions that state the same "
                    "number of numerals (one bin per count), averaged (weights min(n_A, n_U)): 0 for any rule "
                    "\"refuse iff <= k numbers\"; cue.* = the rule \"refuse iff the question "
                    "states <= 2 numbers\" and the best such threshold on these items (no model: a shortcut "
                    "baseline), and how well the numeral count alone separates the labels (AUC)")
HEADLINE_CAPTION = ("the metrics every summary shows first; ua.* is 0 where a count is 0 (UA-Bench's code), every "
                    "other metric — where its denominator is 0")
#: what the headline caption adds where the columns hold AbstentionBench items
AB_CAPTION = ("; ab.macro.* = AbstentionBench's own headline, the unweighted mean over its datasets of the "
              "abstention F1 and recall")
COUNT_KEYS = ("n.answerable", "n.unanswerable", "n.format_errors", "n.judge_errors")
KNOWLEDGE_KEYS = ("ab.f1", "ab.precision", "ab.recall", "ab.accuracy", "r1.a_fu")


@dataclass(frozen=True)
class RunView:
    """A finished run directory: its label, config and metrics."""

    label: str
    path: Path
    config: dict[str, Any]
    metrics: dict[str, Any]

    @property
    def protocols(self) -> list[str]:
        return list(self.metrics.get("protocols", {}))


def load_run(path: str | Path, label: str | None = None) -> RunView:
    """Read ``config.json`` and ``metrics.json`` of a run directory (clear errors when missing)."""
    path = Path(path)
    data = {}
    for name in (CONFIG, METRICS):
        file = path / name
        if not file.exists():
            raise FileNotFoundError(f"{file}: missing - is {path} a finished `abstain eval` run?")
        try:
            data[name] = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{file}: invalid JSON ({exc})") from None
    if "protocols" not in data[METRICS]:
        raise ValueError(f"{path / METRICS}: no 'protocols' block - not written by `abstain eval`")
    return RunView(label or path.resolve().name, path, data[CONFIG], data[METRICS])


@dataclass(frozen=True)
class Column:
    """One column: a protocol of a run, and the column its deltas are taken against (None: no delta)."""

    header: str
    protocol: str
    metrics: dict[str, Any]
    baseline: dict[str, Any] | None
    distribution: dict[str, Any] = field(default_factory=dict)
    by_benchmark: dict[str, Any] = field(default_factory=dict)
    datasets: dict[str, Any] = field(default_factory=dict)


def columns(runs: Sequence[RunView]) -> list[Column]:
    """Protocol-major columns: each protocol's runs side by side; deltas against the first run."""
    protocols: list[str] = []
    for run in runs:
        protocols += [p for p in run.protocols if p not in protocols]
    out = []
    for protocol in protocols:
        base = None
        for run in runs:
            if protocol not in run.metrics["protocols"]:
                continue
            metrics = run.metrics["protocols"][protocol]
            header = protocol if len(runs) == 1 else f"{protocol} · {run.label}"
            out.append(Column(header, protocol, metrics, base if len(runs) > 1 else None,
                              run.metrics.get("distribution", {}).get(protocol, {}),
                              run.metrics.get("by_benchmark", {}).get(protocol, {}),
                              run.metrics.get("datasets", {})))
            base = metrics if base is None else base
    return out


@dataclass(frozen=True)
class Cell:
    text: str
    ci: str = ""
    delta: str = ""

    @classmethod
    def metric(cls, metrics: dict[str, Any], key: str, baseline: dict[str, Any] | None = None) -> Cell:
        value = metrics.get(key)
        if value is None:
            return cls("—")
        if isinstance(value, int) and not isinstance(value, bool):  # counts (n.*)
            return cls(str(value))
        ci = metrics.get(f"{key}_ci")
        delta = ""
        if baseline is not None and baseline is not metrics and baseline.get(key) is not None:
            delta = f"{value - baseline[key]:+.3f}"
        return cls(f"{value:.3f}", f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "", delta)

    def plain(self) -> str:
        parts = [self.text, self.ci, f"(Δ {self.delta})" if self.delta else ""]
        return " ".join(p for p in parts if p)


@dataclass
class Table:
    """A titled table: ``header`` names every column, the row-name column first; ``section`` groups tables."""

    title: str
    header: list[str]
    rows: list[tuple[str, list[Cell]]]
    caption: str = ""
    section: str = ""

    def __post_init__(self) -> None:
        for name, cells in self.rows:
            if len(cells) + 1 != len(self.header):
                raise ValueError(f"table {self.title!r}: row {name!r} has {len(cells)} cells for "
                                 f"{len(self.header) - 1} value columns")

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if self.caption:
            lines += [self.caption, ""]
        lines.append("| " + " | ".join(self.header) + " |")
        lines.append("|" + "---|" * len(self.header))
        for name, cells in self.rows:
            lines.append("| " + " | ".join([name, *(c.plain().replace("|", "\\|") for c in cells)]) + " |")
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = []
        for name, cells in self.rows:
            tds = "".join(
                f"<td>{html.escape(c.text)}"
                + (f' <span class="ci">{html.escape(c.ci)}</span>' if c.ci else "")
                + (f' <span class="delta {"up" if c.delta.startswith("+") else "down"}">Δ {html.escape(c.delta)}</span>'
                   if c.delta else "")
                + "</td>"
                for c in cells
            )
            body.append(f"<tr><th>{html.escape(name)}</th>{tds}</tr>")
        caption = f"<p class=\"caption\">{html.escape(self.caption)}</p>" if self.caption else ""
        return (f"<h3>{html.escape(self.title)}</h3>{caption}<table><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")


def metric_table(title: str, keys: Sequence[str], cols: Sequence[Column], prefix: str = "",
                 caption: str = "", section: str = "") -> Table:
    """Rows = metric keys (looked up under ``prefix``), one column per :class:`Column`."""
    rows = [(key, [Cell.metric(c.metrics, prefix + key, c.baseline) for c in cols]) for key in keys]
    return Table(title, ["metric", *(c.header for c in cols)], rows, caption, section)


def _names(cols: Sequence[Column], marker: str, suffix: str) -> list[str]:
    found = {k[len(marker):-len(suffix)] for c in cols for k in c.metrics
             if k.startswith(marker) and k.endswith(suffix)}
    return sorted(n for n in found if "." not in n)


def _by_row(title: str, names: Sequence[str], cols: Sequence[Column], key_of, caption: str,  # type: ignore[no-untyped-def]
            section: str = "") -> Table:
    rows = [(name, [Cell.metric(c.metrics, key_of(name), c.baseline) for c in cols]) for name in names]
    return Table(title, ["perturbation", *(c.header for c in cols)], rows, caption, section)


def _datasets(cols: Sequence[Column], category: str | None = None) -> list[str]:
    names = sorted({d for c in cols for d in c.by_benchmark})
    if category is None:
        return names
    info = {d: i for c in cols for d, i in c.datasets.items()}
    return [d for d in names if info.get(d, {}).get("category") == category]


def _dataset_cells(cols: Sequence[Column], dataset: str, key: str) -> list[Cell]:
    cells = []
    for c in cols:
        base = None
        if c.baseline is not None:
            base = next((o.by_benchmark.get(dataset) for o in cols
                         if o.protocol == c.protocol and o.metrics is c.baseline), None)
        cells.append(Cell.metric(c.by_benchmark.get(dataset, {}), key, base))
    return cells


def _dataset_table(title: str, key: str, cols: Sequence[Column], names: Sequence[str], caption: str,
                   section: str, needs: str | None = None,
                   extra: Sequence[tuple[str, str]] = ()) -> Table:
    """Rows = datasets (only those with ``needs`` > 0 in some column), then ``extra`` (label, metrics key) rows."""
    rows = [(name, _dataset_cells(cols, name, key)) for name in names
            if needs is None or any((c.by_benchmark.get(name, {}).get(needs) or 0) > 0 for c in cols)]
    for label, total_key in extra:
        if any(total_key in c.metrics for c in cols):
            rows.append((label, [Cell.metric(c.metrics, total_key, c.baseline) for c in cols]))
    return Table(title, ["dataset", *(c.header for c in cols)], rows, caption, section)


def _datasets_table(cols: Sequence[Column], names: Sequence[str], section: str) -> Table:
    info = {d: i for c in cols for d, i in c.datasets.items()}
    rows = []
    for name in names:
        counts = [c.by_benchmark.get(name, {}) for c in cols]
        cells = [Cell(str(info.get(name, {}).get("category") or "—")),
                 Cell(str(info.get(name, {}).get("scenario") or "—")),
                 *(Cell(f"{m.get('n.answerable', 0)} / {m.get('n.unanswerable', 0)}" if m else "—") for m in counts)]
        rows.append((name, cells))
    return Table("Datasets", ["dataset", "category", "scenario", *(f"items · {c.header}" for c in cols)], rows,
                 "items = answerable / unanswerable rows scored (judge errors left out); scenario = AbstentionBench's",
                 section)


def _distribution_table(cols: Sequence[Column]) -> Table:
    rows = []
    for group, outcomes in (("answerable", ANSWERABLE_OUTCOMES), ("unanswerable", UNANSWERABLE_OUTCOMES),
                            ("behavior", BEHAVIOR_OUTCOMES)):
        for name in outcomes:
            cells = [Cell(str(c.distribution.get(group, {}).get(name, 0))) for c in cols]
            if any(cell.text != "0" for cell in cells):
                rows.append((f"{group}: {name}", cells))
    return Table("Decisions and behaviors (row counts)", ["outcome", *(c.header for c in cols)], rows,
                 "behavior = ACA-RL behavior of unanswerable rows (unlabeled when the judge does not classify it)",
                 "Metrics")


def headline_table(cols: Sequence[Column]) -> Table:
    """The headline metrics of the columns (:func:`abstain.metrics.headline`: with AbstentionBench's macro F1 and
    recall when a column holds its items), with CIs and deltas, in section ``Headline``."""
    keys = headline(*(c.metrics for c in cols))
    caption = HEADLINE_CAPTION + (AB_CAPTION if set(AB_HEADLINE) <= set(keys) else "")
    return metric_table("Headline", keys, cols, caption=caption, section="Headline")


def report_tables(runs: Sequence[RunView]) -> list[Table]:
    """Every table of a report (one run) or a comparison (several), in sections, the headline first."""
    cols = columns(runs)
    tables = [headline_table(cols)]
    tables += [metric_table(f"{family} metrics", keys, cols, caption=FAMILY_CAPTIONS.get(family, ""),
                            section="Metrics") for family, keys in FAMILY_KEYS.items()]
    tables.append(metric_table("Discrimination and the numeral-count shortcut", SHORTCUT_KEYS, cols,
                               caption=SHORTCUT_CAPTION, section="Metrics"))
    tables.append(metric_table("Counts", COUNT_KEYS, cols, section="Metrics"))
    tables.append(_distribution_table(cols))
    for category in _names(cols, "by_category.", ".n.answerable"):
        tables.append(metric_table(f"Category: {category}", (*CATEGORY_KEYS, *COUNT_KEYS[:2]), cols,
                                   prefix=f"by_category.{category}.", section="Categories"))
    perturbations = _names(cols, "aca.by_perturbation.", ".idk_score")
    if perturbations:
        tables.append(_by_row("Refusal rate on unanswerable items, per perturbation (aca.idk_score)", perturbations,
                              cols, lambda p: f"aca.by_perturbation.{p}.idk_score",
                              "share of the unanswerable items of each perturbation that the model refused",
                              "Perturbations"))
        tables.append(_by_row("ACA Behavior Score per perturbation (aca.behavior_score)", perturbations, cols,
                              lambda p: f"aca.by_perturbation.{p}.behavior_score",
                              "null when the judge assigns no behaviors (use --judge llm or hybrid)", "Perturbations"))
    names = _datasets(cols)
    section = "Per dataset"
    tables.append(_datasets_table(cols, names, section))
    tables.append(_dataset_table("Accuracy on answerable items per dataset (ua.acc)", "ua.acc", cols, names,
                                 "datasets with answerable rows", section, needs="n.answerable"))
    tables.append(_dataset_table("Refusal on unanswerable items per dataset (r1.u_ref)", "r1.u_ref", cols, names,
                                 "datasets with unanswerable rows", section, needs="n.unanswerable"))
    for key, title, caption in (
            ("r1.discrimination", "Discrimination U-Ref - A-FU per dataset (r1.discrimination)",
             "datasets with both labels"),
            ("r1.discrimination_within_count", "Discrimination within numeral-count bins per dataset (r1.discrimination_within_count)",
             "U-Ref - A-FU among questions with the same numeral count, averaged: what the count of numbers "
             "cannot explain"),
            ("ua.du_discrimination", "DATA_UNCERTAIN discrimination per dataset (ua.du_discrimination)",
             "P(DATA_UNCERTAIN | unanswerable) - P(DATA_UNCERTAIN | answerable): saying a premise is missing "
             "only when one is (the attribution protocol)"),
            ("ua.du_discrimination_within_count", "DATA_UNCERTAIN discrimination within numeral-count bins per "
             "dataset (ua.du_discrimination_within_count)", "the same inside numeral-count bins, averaged"),
            ("cue.le2_discrimination", "Cue baseline, refuse iff <= 2 numerals, per dataset (cue.le2_discrimination)",
             "a one-line rule on the question's numeral count, no model; a model below it is beaten by the shortcut"),
            ("cue.best_discrimination", "Cue baseline, the best numeral threshold, per dataset (cue.best_discrimination)",
             "the best threshold chosen on these very items: an upper bound of the shortcut")):
        rows = [name for name in names if any(c.by_benchmark.get(name, {}).get(key) is not None for c in cols)]
        if rows:
            tables.append(_dataset_table(title, key, cols, rows, caption, section, extra=(("all", key),)))
    tables.append(_dataset_table(
        "AbstentionBench F1 per dataset (ab.f1)", "ab.f1", cols, names,
        "abstention = the positive class, per dataset; AbstentionBench's headline is the unweighted mean over "
        "datasets (macro, when computed); pooled = all rows at once", section,
        extra=(("macro: mean over datasets", "ab.macro.f1"), ("pooled: all rows", "ab.f1"))))
    knowledge = _datasets(cols, "knowledge")
    if knowledge:
        section = "Knowledge suites (AbstentionBench view)"
        pooled = "by_category.knowledge."
        for n, key in enumerate(KNOWLEDGE_KEYS):
            tables.append(_dataset_table(
                f"{key} per knowledge dataset", key, cols, knowledge,
                "" if n else "one row per dataset of category knowledge (abstain-test, abstentionbench-lite, "
                "UA-Bench's knowledge task, SelfAware ...); pooled = all knowledge rows at once", section,
                needs="n.answerable" if key in ("ab.accuracy", "r1.a_fu") else None,
                extra=(("pooled: all knowledge rows", pooled + key),)))
    return tables
