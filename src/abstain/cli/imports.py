"""``abstain import inspect|lm-eval``: a harness's log of an abstain task as an abstain run folder.

Prints where the folder is, the generation settings that ran (max tokens, temperature, chat template ...) and how
many samples are unscored (judge errors in the log, samples without a score), which the metrics count.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from abstain.cli.common import console, friendly_errors

if TYPE_CHECKING:
    from abstain.integrations.import_common import Imported

__all__ = ["register", "summary"]

OutOpt = typer.Option(..., "--out", "-o", help="The run folder to write (abstain report / compare read it).")


def summary(source: Path, done: Imported) -> str:
    """What ``abstain import`` says about an import (plain text: stop strings may hold brackets)."""
    lines = [f"imported {source} -> {done.path}: {done.rows} rows"]
    g = done.generation
    if g is None:
        lines.append("generation settings: not in this log (the task's own are recorded)")
    else:
        chat = {True: "yes", False: "no", None: "not recorded"}[g.get("chat_template")]
        lines.append(f"generation ({g['harness']}): max_tokens {g.get('max_tokens')}, temperature "
                     f"{g.get('temperature')}, top_p {g.get('top_p')}, stop {g.get('stop')}, chat template {chat}"
                     + "".join(f", {k} {v}" for k, v in (g.get("settings") or {}).items()))
    if done.unscored:
        lines.append(f"warning: {done.unscored} of {done.rows} rows unscored ({done.no_score} without a score in "
                     "the log, the rest judge errors): counted as abstain eval counts a judge error "
                     "(n.judge_errors), left out of the metrics that need the field")
    lines.append(f"(abstain report {done.path}; abstain compare ... {done.path})")
    return "\n".join(lines)


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
            done = import_inspect(log, out)
        console.print(summary(log, done), markup=False, highlight=False)

    @import_app.command("lm-eval")
    def lm_eval_samples(samples: Path = typer.Argument(..., help="lm-eval's --log_samples file of an abstain_ task "
                                                                  "(samples_abstain_<suite>_<protocol>_<date>.jsonl)."),
                        out: Path = OutOpt,
                        model: str | None = typer.Option(None, help="The model's name (default: the folder lm-eval "
                                                                    "wrote the file in).")) -> None:
        """An lm-eval samples file of an abstain_ task as a run folder."""
        from abstain.integrations.imports import import_lm_eval

        with friendly_errors():
            done = import_lm_eval(samples, out, model)
        console.print(summary(samples, done), markup=False, highlight=False)
