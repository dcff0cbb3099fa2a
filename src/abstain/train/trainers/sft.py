"""``abstain train sft``: supervised fine-tuning on TRL's ``SFTTrainer``, completion-only loss.

The rows are TRL's conversational prompt/completion format (:mod:`abstain.train.data.sft_data`): the prompt is
exactly what the protocol sends in evaluation, the completion a verifiable target. TRL masks the prompt
tokens out of the loss for prompt/completion data (``completion_only_loss``), which is what SmolLM2 needs:
its chat template has no ``{% generation %}`` markers, so ``assistant_only_loss`` cannot work. Full
fine-tune or LoRA (``lora:`` in the recipe); the run folder, resume and progress are those of
``abstain train grpo`` (:mod:`abstain.train.trainers.runner`). With ``validation:`` the trained model answers those
items greedily at the end and ``validation.json`` holds the headline numbers.

Example::

    abstain train sft --recipe tiny-sft --out runs/sft
"""

from __future__ import annotations

from typing import Any

from abstain.backends.base import MissingDependencyError
from abstain.schema import write_json
from abstain.train.trainers.distributed import main_first
from abstain.train.recipe import SFTRecipe
from abstain.train.trainers.runner import ProgressFn, TrainResult, build_config, finish, policy, start, training_arguments

try:
    from trl import SFTConfig, SFTTrainer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs TRL and torch: pip install 'abstain[train]' ({exc})") from exc

__all__ = ["run_sft", "sft_rows"]


def sft_rows(recipe: SFTRecipe) -> list[dict[str, Any]]:
    """The recipe's prompt/completion rows: built and self-checked from its items, or read from its file."""
    if recipe.sft_file is not None:
        from abstain.train.data.rows import PromptCompletionRow, read_training_rows

        return read_training_rows(recipe.sft_file, PromptCompletionRow, recipe.allow_eval_suites)
    from abstain.train.data.sft_data import build_sft

    from abstain.train.data.build import load_items

    built = build_sft(load_items(recipe.data, recipe.allow_eval_suites), recipe.sft_config())
    return [{"prompt": r.prompt, "completion": r.completion} for r in built.rows]


def run_sft(recipe: SFTRecipe, out: str, resume: bool = False, progress: ProgressFn | None = None,
            until: int | None = None) -> TrainResult:
    """Train an :class:`~abstain.train.recipe.SFTRecipe` into the run folder ``out`` (resumable)."""
    from datasets import Dataset

    run, checkpoint = start(recipe, out, resume, until)
    rows = sft_rows(recipe)
    args = build_config(SFTConfig, training_arguments(
        recipe, run, max_length=recipe.max_length, completion_only_loss=True, packing=False,
    ))
    model, peft_config = policy(recipe)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), peft_config=peft_config,
                         callbacks=run.callbacks(progress))
    result = finish(trainer, run, recipe, checkpoint)
    if recipe.validation is not None:
        from abstain.train.trainers.validate import validate

        def validation() -> None:  # on the main process only, as the final model was saved
            from abstain.train.data.build import load_items

            items = load_items(recipe.validation, recipe.allow_eval_suites)
            report = validate(trainer.model, trainer.processing_class, items, recipe.protocol,
                              recipe.validation_tokens, resamples=1000)
            write_json(run.path / "validation.json", report)

        main_first(validation)
    return result
