"""``abstain train sft``: supervised fine-tuning on TRL's ``SFTTrainer``, completion-only loss.

The rows are TRL's conversational prompt/completion format (:mod:`abstain.train.data.sft_data`): the prompt is
exactly what the protocol sends in evaluation, the completion a verifiable target. TRL masks the prompt
tokens out of the loss for prompt/completion data (``completion_only_loss``), which is what SmolLM2 needs:
its chat template has no ``{% generation %}`` markers, so ``assistant_only_loss`` cannot work. Full
fine-tune or LoRA (``lora:`` in the recipe); the run folder, resume and progress are those of
``abstain train grpo`` (:mod:`abstain.train.trainers.runner`). With ``validation:`` the policy answers those items
every N steps and at the end, and ``validation.json`` holds the numbers (:mod:`abstain.train.trainers.validate`).
Before anything is written the rows are measured against ``max_length``: TRL would cut a longer row's end, the
target's decision with it, so such rows are refused or, with ``truncation: drop``, left out and counted
(:mod:`abstain.train.data.lengths`).

Example::

    abstain train sft --recipe tiny-sft --out runs/sft
"""

from __future__ import annotations

from typing import Any

from abstain.backends.base import MissingDependencyError
from abstain.train.recipe import SFTRecipe
from abstain.train.trainers.arguments import trl_config
from abstain.train.trainers.runner import ProgressFn, TrainResult, TrainRun, finish, start
from abstain.train.trainers.validate import validation_callback

try:
    from trl import SFTConfig, SFTTrainer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs TRL and torch: pip install 'abstain[train]' ({exc})") from exc

__all__ = ["run_sft", "sft_rows", "sft_trainer"]


def sft_rows(recipe: SFTRecipe) -> list[dict[str, Any]]:
    """The recipe's prompt/completion rows: built and self-checked from its items, or read from its file."""
    if recipe.sft_file is not None:
        from abstain.train.data.rows import PromptCompletionRow, read_training_rows

        return read_training_rows(recipe.sft_file, PromptCompletionRow, recipe.allow_eval_suites)
    from abstain.train.data.sft_data import build_sft

    from abstain.train.data.build import load_items

    built = build_sft(load_items(recipe.data, recipe.allow_eval_suites), recipe.sft_config())
    return [{"prompt": r.prompt, "completion": r.completion} for r in built.rows]


def sft_trainer(recipe: SFTRecipe, run: TrainRun, progress: ProgressFn | None = None) -> SFTTrainer:
    """The trainer :func:`run_sft` trains, for a run folder :func:`~abstain.train.trainers.runner.start` prepared."""
    from datasets import Dataset

    rows = run.rows if run.rows is not None else run.fit(recipe, sft_rows(recipe))
    args = trl_config(SFTConfig, recipe, run, max_length=recipe.max_length, completion_only_loss=True, packing=False)
    model, peft_config = run.policy.load()
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), peft_config=peft_config,
                         callbacks=run.callbacks(progress))
    validation_callback(recipe, run, trainer)
    return trainer


def run_sft(recipe: SFTRecipe, out: str, resume: bool = False, progress: ProgressFn | None = None,
            until: int | None = None) -> TrainResult:
    """Train an :class:`~abstain.train.recipe.SFTRecipe` into the run folder ``out`` (resumable)."""
    run, checkpoint = start(recipe, out, resume, until, rows=lambda: sft_rows(recipe))
    trainer = sft_trainer(recipe, run, progress)
    return finish(trainer, run, recipe, checkpoint)
