"""``abstain audit``: how well a judge agrees with human labels (accuracy, kappa, confusion, per class)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from abstain.cli.common import console, friendly_errors, out_console, write_json
from abstain.cli.judge_flags import JudgeFlags, judge_flags
from abstain.cli.score import close_judge
from abstain.evaluation.audit import DEV_SET, Agreement, audit_rows
from abstain.schema import ResponseRow, read_jsonl, response_key


def _fmt(value: float | int | None) -> str:
    return "—" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def summary_table(results: dict[str, Agreement], title: str) -> Table:
    table = Table(title=title)
    for name, justify in (("field", "left"), ("rows", "right"), ("accuracy", "right"), ("kappa", "right"), ("undecided", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for field, a in results.items():
        table.add_row(field, str(a.n), _fmt(a.accuracy), _fmt(a.kappa), str(a.undecided))
    return table


def confusion_table(a: Agreement) -> Table:
    table = Table(title=f"{a.field}: human (rows) × judge (columns)")
    table.add_column("human \\ judge")
    for label in a.labels:
        table.add_column(label, justify="right")
    for label in ("precision", "recall"):
        table.add_column(label, justify="right")
    for human, row in a.confusion.items():
        stats = a.per_class[human]
        cells = [f"[bold]{n}[/]" if human == judged and n else str(n) for judged, n in row.items()]
        table.add_row(human, *cells, _fmt(stats["precision"]), _fmt(stats["recall"]))
    return table


def register(app: typer.Typer) -> None:
    @app.command()
    @judge_flags
    def audit(
        judge: JudgeFlags,
        input: Path = typer.Option(DEV_SET, "--input", "-i", help="Labelled rows (JSONL with human_behavior / human_correct / human_clarification_correct); default: the shipped development set."),
        json_out: Path | None = typer.Option(None, "--json", help="Write every number here (JSON)."),
        by: str | None = typer.Option(None, "--by", help="Also report agreement per value of this field (e.g. model, source, protocol)."),
    ) -> None:
        """Agreement between a judge and human labels: accuracy, Cohen's kappa, confusion matrix, per-class P/R."""
        with friendly_errors():
            rows = read_jsonl(input, ResponseRow, key=response_key)
            judge_obj = judge.build()
            try:
                with console.status(f"judging {len(rows)} rows with the {judge.config.name} judge"):
                    overall, groups, scored = audit_rows(rows, judge_obj, group_by=by)
            finally:
                close_judge(judge_obj)
        if not overall:
            raise typer.Exit(code=_no_labels(input))
        out_console.print(summary_table(overall, f"{judge.config.name} judge vs human labels ({input.name}, {len(rows)} rows)"))
        for a in overall.values():
            out_console.print(confusion_table(a))
        for group, results in groups.items():
            if results:
                out_console.print(summary_table(results, f"{by} = {group}"))
        errors = sum(s.judge_error is not None for s in scored)
        if json_out is not None:
            write_json(json_out, {
                "judge": judge.config.record(),
                "input": str(input),
                "rows": len(rows),
                "judge_errors": errors,
                "fields": {f: a.to_json() for f, a in overall.items()},
                "groups": {g: {f: a.to_json() for f, a in r.items()} for g, r in groups.items()},
            })
        if errors:
            console.print(f"[bold red]{errors} rows got a judge error[/] (counted as 'none', i.e. disagreements)")
            raise typer.Exit(1)


def _no_labels(path: Path) -> int:
    console.print(f"[bold red]error:[/] {path}: no row has human_behavior, human_correct or human_clarification_correct",
                  soft_wrap=True)
    return 2
