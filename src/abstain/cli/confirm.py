"""Before a run against a remote ``openai:`` server (an API that bills by the token): the number of requests and the
tokens they carry are printed (:mod:`abstain.evaluation.estimate`), then ``abstain eval`` / ``abstain probe`` ask to go
on; ``--yes`` goes on without asking, and without a terminal to ask on (a script, CI) the run is refused. Nothing is
sent and nothing is written before the answer.

A server on this machine (``localhost``, 127.0.0.1, ::1) is not asked about, unless ``ABSTAIN_TREAT_AS_REMOTE=1``.

Example (what ``abstain eval`` does before it starts)::

    confirm_remote_run(config, out, yes=False)  # prints the estimate; raises typer.Exit when not to go on
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import typer

from abstain.cli.common import console, fail

if TYPE_CHECKING:
    from abstain.evaluation.run import EvalConfig

__all__ = ["YES_HELP", "confirm_remote_run", "yes_option"]

YES_HELP = ("Run against a remote openai: server without asking first (the request count and token estimate are "
            "printed all the same); needed where there is no terminal to ask on.")


def yes_option() -> Any:
    """``--yes`` / ``-y``: go on without the question (:func:`confirm_remote_run`)."""
    return typer.Option(False, "--yes", "-y", help=YES_HELP)


def confirm_remote_run(config: EvalConfig, out: Path, yes: bool) -> None:
    """For an ``openai:`` model on a remote server: print what the run ``config`` still sends into ``out``, then go
    on when ``yes`` or when the answer is yes; raise ``typer.Exit`` otherwise (2 without a terminal to ask on, 1 when
    told no). Any other model, or a server on this machine, returns at once."""
    kind, _, model = config.model.partition(":")
    if kind.strip() != "openai" or not model.strip():  # (no model: the run itself says so)
        return
    from abstain.evaluation.estimate import estimate_requests, is_remote
    from abstain.llm import BACKEND_ENV, resolve_endpoint

    url = resolve_endpoint(base_url=config.base_url, model=model.strip(), env=BACKEND_ENV).base_url  # or no URL: said
    if not is_remote(url):
        return
    estimate = estimate_requests(config, out)
    host = urlsplit(url).hostname or "the server"  # the host alone: a URL may carry a token
    if not estimate.requests:
        console.print(f"{config.model} on {host}: nothing left to send (every request of this run was answered)",
                      highlight=False)
        return
    console.print(f"[bold]{config.model} on {host}[/] (a remote server): this run sends", highlight=False)
    for line in estimate.lines():
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    if yes:
        console.print("--yes: sending them", highlight=False)
        return
    if not sys.stdin.isatty():
        raise fail(f"no terminal to ask on: rerun with --yes to send these {estimate.requests:,} requests to {host} "
                   "(nothing was sent or written)")
    if not typer.confirm("Send them?", default=False, err=True):
        raise fail("not sent (nothing was written)", code=1)
