"""``abstain train pipeline``: a pipeline recipe's stages in order, each in its own run folder, resumable.

Stage ``s`` trains into ``<out>/<s>``; ``{out}`` in a stage's overrides is the pipeline folder, so a GRPO
stage continues the SFT stage's adapter with ``adapter={out}/sft``. A stage whose ``final/`` exists is
skipped; one with checkpoints resumes from the last; ``pipeline.json`` records the stages' results.

Example::

    abstain train pipeline --recipe cpu-demo --out runs/cpu-demo     # rerun the same command to resume
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from abstain.schema import write_json
from abstain.train.recipe import PipelineRecipe
from abstain.train.runner import TrainResult, TrainRun, trainer

__all__ = ["run_pipeline"]

StageProgress = Callable[[str, str], Any]  # (stage name, kind) -> a progress callback for that stage


def run_pipeline(pipeline: PipelineRecipe, out: str, progress: StageProgress | None = None,
                 on_stage: Callable[[str, str], None] | None = None) -> list[TrainResult]:
    """Run (or continue) every stage; ``on_stage(name, state)`` reports skipped / started / done."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    stages = pipeline.stage_recipes(str(folder))  # every stage validated before anything trains
    results: list[TrainResult] = []
    record: dict[str, Any] = {"pipeline": pipeline.model_dump(mode="json"), "stages": {}}
    if (folder / "pipeline.json").exists():  # a resumed pipeline keeps what the earlier sessions recorded
        import json

        record["stages"] = json.loads((folder / "pipeline.json").read_text(encoding="utf-8")).get("stages", {})
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
        result = trainer(recipe.kind)(recipe, str(run.path), resume=run.last_checkpoint() is not None,
                                      progress=callback)
        results.append(result)
        record["stages"][stage.name] = {"steps": result.steps, "seconds": round(time.time() - start, 1),
                                        "final": str(result.final.relative_to(folder))}
        write_json(folder / "pipeline.json", record)
        if on_stage:
            on_stage(stage.name, "done")
    return results
