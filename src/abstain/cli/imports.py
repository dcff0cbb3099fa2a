"""``abstain import inspect|lm-eval``: a harness's log of an abstain task as an abstain run folder."""

from __future__ import annotations

from pathlib import Path

import typer

from abstain.cli.common import console, friendly_errors

__all__ = ["register"]

OutOpt = typer.Option(..., "--out", "-o", help="The run folder to write (abstain report / compare read it).")


def register(app: typer.Typer) -> None:
    import_app = typer.Typer(help="Bring an Inspect or lm-evaluation-harness run of an abstain task into a run folder "
                                  "(responses, scored rows, metrics, report): abstain compare works on it.",
                             no_args_is_help=True)
    app.add_typer(import_app, name="import")

    @import_app.command("inspect")
    def inspect_log(log: Path = typer.Argument(..., help="An Inspect log (.eval or .json) of an abstain/ task."),
                    out: Path = OutOpt) -> None:
        """An Inspect log of abstain/abstain_eval (or another abstain/ task) as a run folder."""
        from abstain.integrations.imports import import_inspect

        with friendly_errors():
            folder = import_inspect(log, out)
        console.print(f"imported {log} -> {folder} (abstain report {folder}; abstain compare ... {folder})")

    @import_app.command("lm-eval")
    def lm_eval_samples(samples: Path = typer.Argument(..., help="lm-eval's --log_samples file of an abstain_ task "
                                                                  "(samples_abstain_<suite>_<protocol>_<date>.jsonl)."),
                        out: Path = OutOpt,
                        model: str | None = typer.Option(None, help="The model's name (default: the folder lm-eval "
                                                                    "wrote the file in).")) -> None:
        """An lm-eval samples file of an abstain_ task as a run folder."""
        from abstain.integrations.imports import import_lm_eval

        with friendly_errors():
            folder = import_lm_eval(samples, out, model)
        console.print(f"imported {samples} -> {folder} (abstain report {folder}; abstain compare ... {folder})")
