"""``abstain train pipeline``: a pipeline recipe's stages in order, each in its own run folder, resumable.

Stage ``s`` trains into ``<out>/<s>``; ``{out}`` in a stage's overrides is the pipeline folder, so a GRPO
stage continues the SFT stage's adapter with ``adapter={out}/sft``. A stage whose ``final/`` exists was
trained with the recipe its ``final/abstain_train.json`` records: it is reused only when that is the
stage's recipe now. An edited stage is refused, naming the fields that changed — or, with
``rerun_changed``, trained again together with every stage after it (they build on it). A stage with
checkpoints resumes from the last complete one; ``pipeline.json`` records the stages' results. On N
processes every process runs every stage; the main one writes the records.

Example::

    abstain train pipeline --recipe cpu-demo --out runs/cpu-demo     # rerun the same command to resume
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from abstain.records.runs import differences
from abstain.schema import DataError, write_json
from abstain.train.trainers.distributed import World, barrier, main_first, recipe_split
from abstain.train.trainers.policy import resolve_policy
from abstain.train.trainers.tracking import check_report_to
from abstain.train.recipe import TRACKING_FIELDS, GRPORecipe, PipelineRecipe, Recipe
from abstain.train.trainers.runner import ProgressFn, TrainResult, TrainRun, join_processes, read_json_record

__all__ = ["StageTrainer", "run_pipeline"]

#: trains one stage: (recipe, folder, resume, progress) -> its result (``abstain.train.train``)
StageTrainer = Callable[[Recipe, str, bool, "ProgressFn | None"], TrainResult]
StageProgress = Callable[[str, str], "ProgressFn | None"]  # (stage name, kind) -> that stage's callback


def _changed(run: TrainRun, recipe: Recipe) -> list[str]:
    """How a stage's recipe differs from the one its finished run (or its started run) was trained with."""
    recorded = run.finished_recipe()
    if recorded is None and (run.path / "config.json").exists():
        recorded = read_json_record(run.path / "config.json").get("recipe")
    if recorded is None:
        return []
    return differences(recorded, recipe.model_dump(mode="json"), ignore=TRACKING_FIELDS)  # where curves go: free


def run_pipeline(pipeline: PipelineRecipe, out: str, train_stage: StageTrainer,
                 progress: StageProgress | None = None, on_stage: Callable[[str, str], None] | None = None,
                 rerun_changed: bool = False) -> TrainResult:
    """Run (or continue) every stage with ``train_stage``; ``on_stage(name, state)`` reports done before /
    started / done / changed. Returns the last stage's result, every stage's in ``stages``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    stages = pipeline.stage_recipes(str(folder))  # every stage validated before anything trains
    world = World.from_env()
    checked: dict[str, TrainRun] = {}  # each stage's policy and split, resolved once (nothing is written)
    for stage, recipe in stages:  # and every stage's policy and batch split over this launch's processes
        try:
            run = checked[stage.name] = TrainRun(folder / stage.name)
            run.policy, run.split = resolve_policy(recipe), recipe_split(recipe, world)
            check_report_to(recipe.report_to)
        except DataError as exc:
            raise DataError(f"pipeline stage {stage.name!r}: {exc}") from None
    join_processes(*(recipe for _, recipe in stages))
    for stage, recipe in stages:  # a GRPO stage's TRL config, built once now: its refusals before any stage trains
        if isinstance(recipe, GRPORecipe):
            from abstain.train.trainers.grpo import grpo_args

            run = checked[stage.name]  # the config only names its folder
            try:
                grpo_args(recipe, run)
            except (DataError, ValueError) as exc:
                raise DataError(f"pipeline stage {stage.name!r}: {exc}") from None
    record: dict[str, Any] = {"pipeline": pipeline.model_dump(mode="json"), "stages": {}}
    if (folder / "pipeline.json").exists():  # a resumed pipeline keeps what the earlier sessions recorded
        record["stages"] = read_json_record(folder / "pipeline.json").get("stages", {})
    first_changed = next((i for i, (_, recipe) in enumerate(stages)
                          if _changed(TrainRun(folder / stages[i][0].name), recipe)), None)
    if first_changed is not None:
        stage, recipe = stages[first_changed]
        changes = _changed(TrainRun(folder / stage.name), recipe)
        if not rerun_changed:
            raise DataError(
                f"{folder / stage.name} was trained with another recipe for stage {stage.name!r} ("
                + "; ".join(changes[:6]).replace("in config.json", "recorded") + (", ..." if len(changes) > 6 else "")
                + "): pass --rerun-changed to train it and the stages after it again, or choose another --out")
        for later, _ in stages[first_changed:]:
            if (folder / later.name).exists():
                barrier()  # every process has seen the folder before the main one removes it
                main_first(lambda name=later.name: shutil.rmtree(folder / name))
                record["stages"].pop(later.name, None)
                if on_stage:
                    on_stage(later.name, "changed: removed to train again")
    results: list[TrainResult] = []
    for stage, recipe in stages:
        run = TrainRun(folder / stage.name)
        if (done := run.finished()) is not None:
            if on_stage:
                on_stage(stage.name, "done before")
            results.append(done)
            continue
        if on_stage:
            on_stage(stage.name, "started")
        start = time.time()
        callback = progress(stage.name, recipe.kind) if progress else None
        result = train_stage(recipe, str(run.path), bool(run.checkpoint_folders()), callback)
        results.append(result)
        record["stages"][stage.name] = {"steps": result.steps, "seconds": round(time.time() - start, 1),
                                        "final": str(result.final.relative_to(folder))}
        main_first(lambda: write_json(folder / "pipeline.json", record))
        if on_stage:
            on_stage(stage.name, "done")
    last = results[-1]
    return TrainResult(last.out, last.final, last.steps, last.metrics, tuple(results))
