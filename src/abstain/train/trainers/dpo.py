"""``abstain train dpo``: DPO on TRL's ``DPOTrainer`` over prompt/chosen/rejected pairs.

The pairs come from a probe (``abstain probe`` then ``abstain probe-data --kind dpo``): on items the model
never got right, "I don't know" in the protocol's format is preferred over a wrong sampled answer; on items
it knows, a correct answer over "I don't know" — TIAR's DPO baseline. Conversational rows; the reference
model is the starting model (TRL copies it, or with LoRA disables the adapter). The run folder, resume and
progress are those of ``abstain train grpo``. Before anything is written the pairs are measured against
``max_length`` (prompt + the longer answer): a pair TRL would cut is refused or, with ``truncation: drop``, left out
and counted (:mod:`abstain.train.data.lengths`).

Example::

    abstain train dpo --recipe my-dpo.yaml --set pairs_file=runs/probe/dpo.jsonl --out runs/dpo
"""

from __future__ import annotations

from abstain.backends.base import MissingDependencyError
from abstain.train.recipe import DPORecipe
from abstain.train.trainers.arguments import trl_config
from abstain.train.trainers.validate import validation_callback
from abstain.train.trainers.runner import ProgressFn, TrainResult, finish, start

try:
    from trl import DPOConfig, DPOTrainer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs TRL and torch: pip install 'abstain[train]' ({exc})") from exc

__all__ = ["run_dpo"]


def run_dpo(recipe: DPORecipe, out: str, resume: bool = False, progress: ProgressFn | None = None,
            until: int | None = None) -> TrainResult:
    """Train a :class:`~abstain.train.recipe.DPORecipe` into the run folder ``out`` (resumable)."""
    from datasets import Dataset

    from abstain.train.data.rows import PreferenceRow, read_training_rows

    run, checkpoint = start(recipe, out, resume, until,
                            rows=lambda: read_training_rows(recipe.pairs_file, PreferenceRow, recipe.allow_eval_suites))
    rows = run.rows or []  # set by start (rows=...)
    args = trl_config(DPOConfig, recipe, run, beta=recipe.beta, max_length=recipe.max_length)
    model, peft_config = run.policy.load()
    trainer = DPOTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), peft_config=peft_config,
                         callbacks=run.callbacks(progress))
    validation_callback(recipe, run, trainer)
    return finish(trainer, run, recipe, checkpoint)
