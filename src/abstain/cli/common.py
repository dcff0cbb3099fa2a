"""Shared CLI helpers: the console, clean error exits, progress bars and JSON output."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from abstain.backends.verbosity import quiet_third_party, set_verbose
from abstain.schema import DataError, write_json  # noqa: F401 - re-exported for the commands

console = Console(stderr=True)
out_console = Console()


#: the opt-in of the training guard (abstain.data.guard), shared by every command that writes training data
ALLOW_EVAL_SUITE_HELP = ("Train on this evaluation suite's questions all the same (the guard keeps every suite out "
                         "of training); repeatable, or 'all'. Said in the output.")


def allow_eval_suite_option() -> Any:
    """``--allow-eval-suite SUITE`` (repeatable): the suites a command may write training rows of."""
    return typer.Option([], "--allow-eval-suite", help=ALLOW_EVAL_SUITE_HELP)


def opted_in(allow: list[str] | tuple[str, ...]) -> None:
    """Say which evaluation suites a command was allowed to write training rows of (nothing when none)."""
    if allow:
        console.print(f"[yellow]opted in: training rows may hold questions of the evaluation suite(s) "
                      f"{', '.join(allow)} (--allow-eval-suite)[/]", highlight=False)


def verbose_option() -> Any:
    """``--verbose``: the third-party engines' warnings too (:mod:`abstain.backends.verbosity`); see
    :func:`apply_verbosity`."""
    return typer.Option(False, "--verbose", help="Show the warnings of vLLM, transformers and torch too (by default "
                                                 "only their errors; ABSTAIN_VERBOSE=1 does the same).")


def apply_verbosity(verbose: bool) -> None:
    """A command's first step: ``--verbose`` turns the engines' warnings on (``ABSTAIN_VERBOSE=1`` did already);
    without either only their errors show, before any of them loads."""
    if verbose:
        set_verbose(True)
    quiet_third_party()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``message`` as an error and return the exit to raise."""
    # a message's [..] is not markup; soft_wrap: a long path stays one unbroken line to copy (the terminal folds it)
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn input errors into one readable line and exit code 2 (no traceback)."""
    try:
        yield
    except (DataError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None


@contextmanager
def progress_bar(description: str, total: int | None) -> Iterator[Any]:
    """A rich progress bar; yields ``advance(n)``."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        disable=os.environ.get("ABSTAIN_NO_PROGRESS") == "1",
    ) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)
