"""``abstain lm-eval-path``: the folder of abstain's lm-evaluation-harness tasks, for ``--include_path``."""

from __future__ import annotations

import typer

from abstain.cli.common import out_console

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("lm-eval-path")
    def lm_eval_path() -> None:
        """Print the folder of abstain's lm-eval tasks: lm_eval --include_path "$(abstain lm-eval-path)" --tasks
        abstain_quick_idk (one task per suite x protocol, tag abstain; docs/harnesses.md)."""
        from abstain.integrations.lm_eval.task_yamls import tasks_dir

        out_console.print(str(tasks_dir()), highlight=False, soft_wrap=True)
