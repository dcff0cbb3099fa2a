"""Shared CLI helpers: the console, clean error exits, progress bars and JSON output."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from abstain.schema import DataError, write_json  # noqa: F401 - re-exported for the commands

console = Console(stderr=True)
out_console = Console()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``message`` as an error and return the exit to raise."""
    console.print(f"[bold red]error:[/] {message}", highlight=False)
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
