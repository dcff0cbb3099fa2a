"""``abstain compare``: several runs side by side, with deltas against the first; runs that generated with
different settings (max tokens, temperature, stop strings, chat template ...) are flagged, each setting with
every run's value."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from abstain.cli.common import console, friendly_errors, out_console
from abstain.metrics import headline
from abstain.report import columns, generation_differences, load_run, write_compare
from abstain.report.paired import paired_table


def compare_tables(run_dirs: list[Path], labels: list[str] | None = None) -> list[Table]:
    """Headline metrics per protocol: one column per run, deltas against the first run; then the deltas'
    paired CIs (:func:`abstain.report.paired.paired_table`)."""
    runs = [load_run(d, labels[i] if labels else None) for i, d in enumerate(run_dirs)]
    cols = columns(runs)
    tables = []
    for protocol in dict.fromkeys(c.protocol for c in cols):
        mine = [c for c in cols if c.protocol == protocol]
        table = Table(title=f"{protocol}")
        table.add_column("metric")
        for col in mine:
            table.add_column(col.header.split(" · ", 1)[-1], justify="right")
        for key in headline(*(c.metrics for c in mine)):
            cells = []
            for col in mine:
                value = col.metrics.get(key)
                base = None if col.baseline is None or col.baseline is col.metrics else col.baseline.get(key)
                text = "—" if value is None else f"{value:.3f}"
                if value is not None and base is not None:
                    text += f" ({value - base:+.3f})"
                cells.append(text)
            table.add_row(key, *cells)
        tables.append(table)
    paired = paired_table(runs)
    if paired is not None:  # each delta's paired bootstrap CI
        table = Table(title=paired.title, caption=paired.caption)
        for name in paired.header:
            table.add_column(name, justify="left" if name == "metric" else "right")
        for key, cells in paired.rows:
            table.add_row(key, *(c.plain() for c in cells))
        tables.append(table)
    return tables


def register(app: typer.Typer) -> None:
    @app.command()
    def compare(
        runs: list[Path] = typer.Argument(..., help="Two or more run directories of `abstain eval`."),
        out: Path = typer.Option(Path("runs/compare"), "--out", "-o", help="Where to write compare.md/.html."),
        label: list[str] = typer.Option(None, help="Column labels, one per run (default: folder names)."),
    ) -> None:
        """Render runs side by side (tables with CIs and deltas, the plots) as Markdown and HTML."""
        with friendly_errors():
            html_path = write_compare(runs, out, labels=label or None)
            tables = compare_tables(runs, label or None)
            views = [load_run(d, label[i] if label else None) for i, d in enumerate(runs)]
        for line in generation_differences([(v.label, v.config) for v in views]):
            console.print(f"warning: generation settings differ: {line}", markup=False, highlight=False)
        for table in tables:
            out_console.print(table)
        out_console.print(f"comparison: {html_path}")
