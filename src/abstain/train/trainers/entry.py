"""One entry point for every recipe kind: :func:`train` (``abstain.train.train``, ``abstain train ...``).

A recipe's ``kind`` picks its trainer — ``grpo`` (:func:`abstain.train.trainers.grpo.run_grpo`), ``sft``
(:func:`abstain.train.trainers.sft.run_sft`), ``dpo`` (:func:`abstain.train.trainers.dpo.run_dpo`) or ``pipeline``
(:func:`abstain.train.trainers.pipeline.run_pipeline`, whose stages come back here) — imported only when used, so
loading a recipe never loads TRL. This module sits above the trainers: nothing they import imports it.

Example::

    from abstain.train import load_recipe, train
    result = train(load_recipe("tiny-sft"), "runs/tiny-sft")   # rerun with resume=True after a crash
    result.steps, result.final                                 # 2, runs/tiny-sft/final
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Union

from abstain.train.recipe import DPORecipe, GRPORecipe, PipelineRecipe, SFTRecipe
from abstain.train.trainers.runner import ProgressFn, TrainResult

__all__ = ["JudgeServer", "StageProgress", "train"]

#: (URL, API key) of the LLM judge a GRPO recipe names: never recorded
JudgeServer = tuple[Union[str, None], Union[str, None]]
#: (stage name, kind) -> the progress callback of that stage of a pipeline
StageProgress = Callable[[str, str], Union[ProgressFn, None]]
AnyRecipe = Union[GRPORecipe, SFTRecipe, DPORecipe, PipelineRecipe]


def train(
    recipe: AnyRecipe,
    out: str | os.PathLike[str],
    *,
    resume: bool = False,
    progress: ProgressFn | StageProgress | None = None,
    judge_server: JudgeServer = (None, None),
    rerun_changed: bool = False,
    on_stage: Callable[[str, str], None] | None = None,
    until: int | None = None,
) -> TrainResult:
    """Train ``recipe`` into the run folder ``out`` and say what came out.

    ``resume`` continues from the folder's last complete checkpoint. ``progress(step, total, logs)``
    follows the optimizer steps (for a pipeline: ``progress(stage, kind)`` returns each stage's callback).
    A pipeline resumes by itself; its result is the last stage's, with every stage's in ``stages``.
    ``rerun_changed`` and ``on_stage`` are a pipeline's (see :func:`abstain.train.trainers.pipeline.run_pipeline`).
    ``until`` (not for a pipeline) stops after that step with a checkpoint: a long run trained in parts, each
    continued with ``resume=True``; the result then has ``complete=False`` and ``final`` is the checkpoint.
    """
    if until is not None and isinstance(recipe, PipelineRecipe):
        raise ValueError("until applies to one training run, not a pipeline (run its stages one by one)")
    out = str(out)
    if isinstance(recipe, PipelineRecipe):
        from abstain.train.trainers.pipeline import run_pipeline

        def stage(one: AnyRecipe, folder: str, resume: bool, progress: ProgressFn | None) -> TrainResult:
            return train(one, folder, resume=resume, progress=progress, judge_server=judge_server)

        return run_pipeline(recipe, out, stage, progress=progress, on_stage=on_stage,  # type: ignore[arg-type]
                            rerun_changed=rerun_changed)
    step_progress: ProgressFn | None = progress  # type: ignore[assignment]
    if isinstance(recipe, GRPORecipe):
        from abstain.train.trainers.grpo import run_grpo

        return run_grpo(recipe, out, resume=resume, progress=step_progress, judge_server=judge_server,
                        until=until)
    if isinstance(recipe, SFTRecipe):
        from abstain.train.trainers.sft import run_sft

        return run_sft(recipe, out, resume=resume, progress=step_progress, until=until)
    if isinstance(recipe, DPORecipe):
        from abstain.train.trainers.dpo import run_dpo

        return run_dpo(recipe, out, resume=resume, progress=step_progress, until=until)
    raise TypeError(f"not a recipe: {type(recipe).__name__} (load one with abstain.train.load_recipe)")
