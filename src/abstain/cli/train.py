"""``abstain train grpo|sft|dpo --recipe NAME|FILE``: train on TRL from a validated recipe, resumably."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from abstain.cli.common import console, fail, friendly_errors
from abstain.train.trainers.distributed import MainProcessFailed, is_main_process, quiet_replica
from abstain.train.recipe import load_recipe, shipped_recipes
from abstain.train.trainers.runner import TrainResult
from abstain.train.trainers.entry import train

__all__ = ["TrainProgress", "register"]

RecipeOpt = typer.Option(..., "--recipe", "-r", help="A shipped recipe's name or a recipe YAML file.")
SetOpt = typer.Option(None, "--set", help="Override a recipe field: key=value (dotted keys reach into "
                                           "sections, e.g. data.synth.n=64); repeatable.")
OutOpt = typer.Option(None, "--out", "-o", help="Run folder (default runs/<recipe name>).")
ResumeOpt = typer.Option(False, "--resume", help="Continue from the run folder's last checkpoint.")
JudgeUrlOpt = typer.Option(None, "--judge-base-url", help="Server of an LLM judge in the recipe (never recorded; "
                                                          "env ABSTAIN_JUDGE_BASE_URL).")
UntilOpt = typer.Option(None, "--until", help="Stop after this optimizer step with a checkpoint (train a long run "
                                           "in parts; --resume continues it).")
JudgeKeyOpt = typer.Option(None, "--judge-api-key", help="Its API key (never written anywhere).", show_default=False)


class TrainProgress:
    """Rich progress bars over optimizer steps (one per stage) with the latest reward and abstention share."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
            console=console, disable=os.environ.get("ABSTAIN_NO_PROGRESS") == "1" or not is_main_process(),
        )

    def __enter__(self) -> TrainProgress:
        self.progress.start()
        _show_training_notes()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def stage(self, title: str) -> Any:
        """A callback ``(step, total, logs)`` that drives one bar."""
        task: list[Any] = []

        def update(step: int, total: int, logs: dict[str, Any]) -> None:
            if not task:
                task.append(self.progress.add_task(title, total=total or None, completed=step, info=""))
            parts = [f"{label} {logs[key]:.3f}" for key, label in (
                ("reward", "reward"), ("loss", "loss"), ("abstain/abstain", "abstain"), ("abstain/correct", "correct"))
                if isinstance(logs.get(key), (int, float))]
            self.progress.update(task[0], completed=step, total=total or None, info="  ".join(parts))

        return update


def _show_training_notes() -> None:
    """Show what the trainers say at INFO (e.g. the GRPO reward's always-abstain margin) on the console: on the
    main process (the others show errors only)."""
    import logging

    from rich.logging import RichHandler

    logger = logging.getLogger("abstain.train")
    if not is_main_process():
        quiet_replica()
        return
    if not any(isinstance(h, RichHandler) for h in logger.handlers):
        handler = RichHandler(console=console, show_time=False, show_path=False, markup=False)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _out(recipe: Any, out: Path | None) -> Path:
    return out if out is not None else Path("runs") / recipe.name


def _finish(result: TrainResult) -> None:
    if not is_main_process():
        return
    if not result.complete:
        console.print(f"stopped after step {result.steps} -> {result.final}; continue with --resume")
        return
    console.print(f"trained {result.steps} steps -> {result.final}")
    console.print(f"evaluate it: abstain eval --model hf:{result.final} --suite heldout --out {result.out}/eval")


def _say_stage(name: str, state: str) -> None:
    if is_main_process():
        console.print(f"stage {name}: {state}")


@contextmanager
def _replica_exit() -> Iterator[None]:
    """On the other processes, a failure of the main one (which printed it) ends this one quietly."""
    try:
        yield
    except MainProcessFailed:
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    train_app = typer.Typer(help="Train with TRL from a recipe (GRPO with TIAR, SFT, DPO).", no_args_is_help=True)
    app.add_typer(train_app, name="train")

    def _train(kind: str, recipe: str, set_: list[str] | None, out: Path | None, resume: bool,
               **options: Any) -> None:
        with friendly_errors(), _replica_exit():
            loaded = load_recipe(recipe, set_ or [], kind=kind)
            folder = _out(loaded, out)
            with TrainProgress() as bars:
                try:
                    result = train(loaded, folder, resume=resume, progress=bars.stage(f"{kind} {loaded.name}"),
                                   **options)
                except KeyboardInterrupt:
                    raise fail(f"interrupted; rerun with --resume to continue from the last checkpoint in {folder}",
                               code=130) from None
        _finish(result)

    @train_app.command("grpo")
    def grpo(recipe: str = RecipeOpt, set_: list[str] = SetOpt, out: Path | None = OutOpt,
             resume: bool = ResumeOpt, judge_base_url: str | None = JudgeUrlOpt,
             judge_api_key: str | None = JudgeKeyOpt, until: int | None = UntilOpt) -> None:
        """GRPO with an abstain reward preset and GRPO / TIAR / coupled advantages."""
        _train("grpo", recipe, set_, out, resume, judge_server=(judge_base_url, judge_api_key), until=until)

    @train_app.command("sft")
    def sft(recipe: str = RecipeOpt, set_: list[str] = SetOpt, out: Path | None = OutOpt,
            resume: bool = ResumeOpt, until: int | None = UntilOpt) -> None:
        """Supervised fine-tuning on verifiable targets (or a prompt/completion file), completion-only loss."""
        _train("sft", recipe, set_, out, resume, until=until)

    @train_app.command("dpo")
    def dpo(recipe: str = RecipeOpt, set_: list[str] = SetOpt, out: Path | None = OutOpt,
            resume: bool = ResumeOpt, until: int | None = UntilOpt) -> None:
        """DPO on prompt/chosen/rejected pairs (e.g. from `abstain probe-data --kind dpo`)."""
        _train("dpo", recipe, set_, out, resume, until=until)

    @train_app.command("pipeline")
    def pipeline(recipe: str = RecipeOpt, out: Path | None = OutOpt,
                 rerun_changed: bool = typer.Option(False, "--rerun-changed", help="A stage whose recipe changed "
                                                    "since it was trained is trained again, with the stages after "
                                                    "it (their folders are replaced); without it, it is refused."),
                 judge_base_url: str | None = JudgeUrlOpt, judge_api_key: str | None = JudgeKeyOpt) -> None:
        """Run a pipeline recipe's stages in order (e.g. cpu-demo: SFT, then GRPO); rerun to resume."""
        with friendly_errors(), _replica_exit():
            loaded = load_recipe(recipe, kind="pipeline")
            folder = _out(loaded, out)
            with TrainProgress() as bars:
                try:
                    result = train(loaded, folder, progress=lambda name, kind: bars.stage(f"{name} ({kind})"),
                                   on_stage=_say_stage,
                                   rerun_changed=rerun_changed, judge_server=(judge_base_url, judge_api_key))
                except KeyboardInterrupt:
                    raise fail(f"interrupted; rerun the same command to continue {folder}", code=130) from None
        _finish(result)

    @train_app.command("recipes")
    def recipes() -> None:
        """List the shipped recipes."""
        for name, path in shipped_recipes().items():
            first = next((line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#")), "")
            console.print(f"[bold]{name}[/]  {first}")
