"""``abstain score``: parse and judge every response row."""

from __future__ import annotations

from pathlib import Path

import typer

from abstain.cli.common import console, friendly_errors, progress_bar
from abstain.judges import make_judge
from abstain.schema import ResponseRow, read_jsonl
from abstain.scoring import score_file


def register(app: typer.Typer) -> None:
    @app.command()
    def score(
        input: Path = typer.Option(..., "--input", "-i", help="Response rows (JSONL)."),
        output: Path = typer.Option(..., "--output", "-o", help="Where to write scored rows (JSONL)."),
        judge: str = typer.Option("rule", help="Judge: rule (offline default)."),
        lenient_format: bool = typer.Option(
            False, help="Judge the tail of responses without a \\boxed{} instead of marking them wrong."
        ),
    ) -> None:
        """Parse the last \\boxed{} of each response and judge it."""
        with friendly_errors():
            total = len(read_jsonl(input, ResponseRow))
            judge_obj = make_judge(judge, lenient_format=lenient_format)
            with progress_bar("scoring", total) as advance:
                summary = score_file(input, output, judge_obj, on_batch=advance)
        console.print(
            f"scored {summary.rows} rows -> {output} "
            f"({summary.format_errors} without a box, {summary.judge_errors} judge errors)"
        )
        if summary.judge_errors:
            raise typer.Exit(1)
