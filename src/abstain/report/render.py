"""Reports and comparisons as Markdown (plots linked from ``plots/``) and HTML (plots embedded as base64 PNG).

``write_report(run_dir)`` renders one run's ``report.md`` / ``report.html`` from its ``config.json`` and
``metrics.json``; ``write_compare([dir1, dir2, ...], out)`` renders ``compare.md`` / ``compare.html``
with the runs side by side and deltas against the first, and the paired CI of each delta from the runs'
``scored.jsonl`` (:mod:`abstain.report.paired`); runs that generated with different settings are flagged at the
top, each setting with every run's value (:mod:`abstain.report.generation`). Both are pure functions of those
files, so ``abstain report DIR`` can re-render a run at any time.

A page opens with the runs' settings and the headline table with its CIs (:data:`LEAD`), then the plots the
runs define (:mod:`abstain.report.plots`: none that would say "undefined"), then every other table by section.

Example::

    write_report("runs/demo")                        # runs/demo/report.html
    write_compare(["runs/base", "runs/sft"], "runs/cmp")  # runs/cmp/compare.html
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Sequence
from pathlib import Path

from abstain.records.runs import REPORT_HTML, REPORT_MD
from abstain.judges.options import JudgeConfig
from abstain.report.confidence import confidence_plots, confidence_tables
from abstain.report.generation import generation_differences
from abstain.report.paired import paired_table
from abstain.report.plots import PLOTS
from abstain.report.tables import Cell, RunView, Table, columns, load_run, report_tables
from abstain.schema import write_text

__all__ = ["write_compare", "write_report"]

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.9rem}
th,td{border:1px solid #ddd;padding:0.3rem 0.6rem;text-align:right;white-space:nowrap}
thead th{background:#f3f3f3}thead th:first-child,tbody th{text-align:left}tbody th{font-weight:500}
.ci{color:#777;font-size:0.8em}.delta{font-size:0.8em;font-weight:600}.up{color:#2e7d32}.down{color:#c62828}
.caption{color:#555;font-size:0.9rem}img{max-width:100%;border:1px solid #eee;margin:0.5rem 0}
code{background:#f6f6f6;padding:0.1rem 0.3rem}.warn{color:#b45309}
"""
#: the sections shown before the plots: the runs' settings, then the headline metrics
LEAD = ("Run", "Headline")
#: the heading of a comparison's list of generation settings the runs differ in
DIFFER = ("Generation settings differ: the runs did not generate alike, so their differences mix the models with "
          "these settings")


def _judge_rows(runs: Sequence[RunView]) -> list[tuple[str, list[Cell]]]:
    """The judge as readable rows: its name, then each setting some run changed from the default."""
    records = [r.config["judge"] if isinstance(r.config.get("judge"), dict) else {"name": r.config.get("judge")}
               for r in runs]
    default = JudgeConfig().record()
    rows = [("judge", [Cell(str(rec.get("name"))) for rec in records])]
    for key in sorted(set().union(*records) - {"name"}):
        values = [rec.get(key) for rec in records]
        if any(v != default.get(key) for v in values):
            rows.append((f"judge {key.replace('_', ' ')}", [Cell("—" if v is None else str(v)) for v in values]))
    return rows


def _runs_table(runs: Sequence[RunView]) -> Table:
    fields = ("model", "suite", "data", "limit", "protocols", "max_tokens", "temperature", "samples", "judge",
              "shots", "shots_unanswerable", "seed")
    rows = []
    for name in fields:
        if name == "judge":
            rows += _judge_rows(runs)
            continue
        values = [r.config.get(name) for r in runs]
        if any(v not in (None, 0) for v in values) or name == "model":
            rows.append((name, [Cell(", ".join(v) if isinstance(v, list) else str(v)) for v in values]))
    rows.append(("items", [Cell(str(r.config.get("items", {}).get("count", "?"))) for r in runs]))
    return Table("Runs" if len(runs) > 1 else "Run", ["setting", *(r.label for r in runs)], rows, section="Run")


def _plots(runs: Sequence[RunView], out: Path) -> dict[str, tuple[str, bytes]]:
    """The plots the runs define, written to ``out/plots``; a plot they no longer define is removed there."""
    cols = columns(runs)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    images = {}
    plots = {stem: (caption, fn(cols)) for stem, (caption, fn) in PLOTS.items()} | confidence_plots(runs)
    for stem, (caption, png) in plots.items():
        target = out / "plots" / f"{stem}.png"
        if png is None:
            target.unlink(missing_ok=True)
            continue
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(png)
        os.replace(tmp, target)  # atomic, as every file of a run
        images[stem] = (caption, png)
    return images


def _sections(tables: Sequence[Table]) -> list[tuple[str, list[Table]]]:
    """Consecutive tables of the same ``section`` (``Tables`` when unnamed), in order."""
    out: list[tuple[str, list[Table]]] = []
    for table in tables:
        name = table.section or "Tables"
        if not out or out[-1][0] != name:
            out.append((name, []))
        out[-1][1].append(table)
    return out


def _render(runs: Sequence[RunView], out: Path, stem: str, title: str) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    tables = [_runs_table(runs), *report_tables(runs), *confidence_tables(runs)]
    paired = paired_table(runs)
    if paired is not None:
        tables.append(paired)
    lead = [t for t in tables if t.section in LEAD]  # settings and headline, before the plots
    rest = [t for t in tables if t.section not in LEAD]
    images = _plots(runs, out)
    commands = [r.config.get("command") for r in runs if r.config.get("command")]
    differ = generation_differences([(r.label, r.config) for r in runs]) if len(runs) > 1 else []

    md = [f"# {title}", ""]
    md += [f"Reproduce: `{c}`" for c in commands] + [""]
    if differ:
        md += [f"**{DIFFER}**", ""] + [f"- {d}" for d in differ] + [""]
    md.append("Values are fractions with bootstrap 95% CIs in brackets (items resampled); Δ is the "
              "difference to the first run. Metric definitions: docs/metrics.md in the abstain repository.\n")
    md += [t.markdown() for t in lead]
    if images:
        md.append("## Plots\n")
        md += [f"![{caption}](plots/{name}.png)\n" for name, (caption, _) in images.items()]
    for section, group in _sections(rest):
        md.append(f"## {section}\n")
        md += [t.markdown() for t in group]
    md_path = out / f"{stem}.md"
    write_text(md_path, "\n".join(md))

    figures = "".join(
        f"<figure><img alt=\"{html.escape(caption)}\" src=\"data:image/png;base64,"
        f"{base64.b64encode(png).decode('ascii')}\"><figcaption>{html.escape(caption)}</figcaption></figure>"
        for caption, png in images.values()
    )
    body = "".join(f"<h2>{html.escape(section)}</h2>" + "".join(t.html() for t in group)
                   for section, group in _sections(rest))
    reproduce = "".join(f"<p>Reproduce: <code>{html.escape(c)}</code></p>" for c in commands)
    if differ:
        reproduce += (f"<p class=\"warn\"><strong>{html.escape(DIFFER)}</strong></p><ul class=\"warn\">"
                      + "".join(f"<li>{html.escape(d)}</li>" for d in differ) + "</ul>")
    page = (
        f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
        f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>{reproduce}"
        "<p class=\"caption\">Values are fractions with bootstrap 95% CIs (items resampled); Δ is the difference "
        "to the first run.</p>"
        + "".join(t.html() for t in lead) + (f"<h2>Plots</h2>{figures}" if figures else "")
        + f"{body}</body></html>\n"
    )
    html_path = out / f"{stem}.html"
    write_text(html_path, page)
    return md_path, html_path


def write_report(run_dir: str | Path) -> Path:
    """Render ``report.md`` and ``report.html`` of a run directory; returns the HTML path."""
    run = load_run(run_dir)
    stem = Path(REPORT_HTML).stem
    assert stem == Path(REPORT_MD).stem
    _, html_path = _render([run], Path(run_dir), stem, f"abstain report: {run.label}")
    return html_path


def write_compare(run_dirs: Sequence[str | Path], out: str | Path, labels: Sequence[str] | None = None) -> Path:
    """Render ``compare.md`` and ``compare.html`` for several runs into ``out``; returns the HTML path."""
    if len(run_dirs) < 2:
        raise ValueError("compare needs at least two run directories")
    if labels is not None and len(labels) != len(run_dirs):
        raise ValueError(f"{len(labels)} labels for {len(run_dirs)} runs")
    runs = [load_run(d, labels[i] if labels else None) for i, d in enumerate(run_dirs)]
    seen: dict[str, int] = {}
    unique = []
    for run in runs:  # two runs named alike (a/demo, b/demo) get distinct labels
        seen[run.label] = seen.get(run.label, 0) + 1
        unique.append(run if seen[run.label] == 1 else RunView(f"{run.label}#{seen[run.label]}", run.path,
                                                               run.config, run.metrics))
    title = "abstain compare: " + " vs ".join(r.label for r in unique)
    _, html_path = _render(unique, Path(out), "compare", title)
    return html_path
