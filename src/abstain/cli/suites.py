"""``abstain suites``: every suite of the registry (:data:`abstain.data.suites.REGISTRY`) with its size, role, whether
training may use it and its licenses.

Example (shell)::

    abstain suites
"""

from __future__ import annotations

import typer

from abstain.cli.common import out_console

__all__ = ["markdown_table", "register", "suite_help"]


def suite_help() -> str:
    """The ``--suite`` help every command shows, from the registry."""
    from abstain.data.suites import REGISTRY

    return f"Suite: {' | '.join(REGISTRY)} (abstain suites lists them)."


def _licenses(entry: object) -> str:
    from abstain.data.suites import BENCHMARK_LICENSES

    names = sorted({BENCHMARK_LICENSES[b].split(",")[0].split(" (")[0] for b in entry.benchmarks})  # type: ignore[attr-defined]
    research = entry.research_only  # type: ignore[attr-defined]
    free = ", ".join(n for n in names if n != "research only")
    return "; ".join(part for part in (free, "research only" if research else "") if part)


def markdown_table() -> str:
    """The suites as the Markdown table docs/suites.md holds (a test checks that they agree)."""
    from abstain.data.suites import REGISTRY

    lines = ["| suite | items | role | training | license | what |", "|---|---|---|---|---|---|"]
    for e in REGISTRY.values():
        training = "kept out" if e.reserved else "may train"
        lines.append(f"| `{e.name}` | {e.size:,} | {e.role} | {training} | {_licenses(e)} | {e.description} |")
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("suites")
    def suites(describe: bool = typer.Option(False, help="Also each suite's description and benchmarks."),
               markdown: bool = typer.Option(False, help="Print the Markdown table of docs/suites.md instead.")) -> None:
        """List the suites: items, role (evaluation / validation / final table), training, licenses."""
        from rich.table import Table

        from abstain.data.suites import REGISTRY

        if markdown:
            print(markdown_table(), end="")
            return

        table = Table(title="suites (abstain eval --suite NAME)", title_justify="left")
        for column, justify in (("suite", "left"), ("items", "right"), ("role", "left"), ("training", "left"),
                                ("license", "left")):
            table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for entry in REGISTRY.values():
            training = "kept out" if entry.reserved else "may train"
            table.add_row(entry.name, f"{entry.size:,}", entry.role, training, _licenses(entry))
            if describe:
                table.add_row("", "", f"[dim]{entry.description}; from {', '.join(entry.benchmarks)}[/]", "", "")
        out_console.print(table)
        out_console.print("kept out: abstain.data.guard refuses its questions (and near-duplicates) as training data "
                          "unless a run opts in (allow_eval_suites / --allow-eval-suite).", highlight=False)
