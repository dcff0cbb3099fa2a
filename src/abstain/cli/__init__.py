"""The ``abstain`` command line: one typer app, one module per command.

Each command module in this package that defines ``register(app)`` adds its command(s); a new
command is a new module, nothing else to edit. Beside the commands, and never imported here: ``demo.py``
(``make demo``: ``python -m abstain.cli.demo``) and ``reference_docs/`` (``make docs``: the generated
``docs/reference/`` pages of this command line and the recipe schema), each a script run with ``python -m`` — a
module imported here before ``-m`` runs it would load twice (runpy warns).
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

__all__ = ["app", "main"]

app = typer.Typer(
    name="abstain",
    help="Measure and train when a language model should not simply answer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Commands in the order the data flows; modules not listed here come after, alphabetically.
_ORDER = ("eval", "synth", "score", "metrics", "audit", "report", "compare", "train")
#: modules of this folder that are no command (common: what commands share); subpackages are never commands
_NOT_COMMANDS = ("common", "demo")
_found = [m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg and m.name not in _NOT_COMMANDS]
for _name in sorted(_found, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n)):
    _module = importlib.import_module(f"abstain.cli.{_name}")
    if hasattr(_module, "register"):
        _module.register(app)


def main() -> None:
    """Console-script entry point."""
    from abstain.train.trainers.distributed import quiet_replica

    quiet_replica()  # under a launcher, before torch, transformers or vLLM load: the other processes stay quiet
    app()
