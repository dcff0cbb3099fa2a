"""``abstain report``: re-render a run directory's report.md / report.html from its metrics.json."""

from __future__ import annotations

from pathlib import Path

import typer

from abstain.cli.common import friendly_errors, out_console
from abstain.report import write_report


def register(app: typer.Typer) -> None:
    @app.command()
    def report(run: Path = typer.Argument(..., help="A run directory of `abstain eval`.")) -> None:
        """Re-render the report of a finished run (tables, plots, Markdown and HTML)."""
        with friendly_errors():
            html_path = write_report(run)
        out_console.print(f"report: {html_path}")
