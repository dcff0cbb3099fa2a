"""``abstain train dpo``: DPO on TRL's ``DPOTrainer`` over prompt/chosen/rejected pairs.

The pairs come from a probe (``abstain probe`` then ``abstain probe-data --kind dpo``): on items the model
never got right, "I don't know" in the protocol's format is preferred over a wrong sampled answer; on items
it knows, a correct answer over "I don't know" — TIAR's DPO baseline. Conversational rows; the reference
model is the starting model (TRL copies it, or with LoRA disables the adapter). The run folder, resume and
progress are those of ``abstain train grpo``.

Example::

    abstain train dpo --recipe tiny-dpo --set pairs_file=runs/probe/dpo.jsonl --out runs/dpo
"""

from __future__ import annotations

import json
from typing import Any

from abstain.backends.base import MissingDependencyError
from abstain.schema import DataError

try:
    from trl import DPOConfig, DPOTrainer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs TRL and torch: pip install 'abstain[train]' ({exc})") from exc

__all__ = ["dpo_rows", "run_dpo"]

_COLUMNS = ("prompt", "chosen", "rejected")


def dpo_rows(path: str) -> list[dict[str, Any]]:
    """prompt/chosen/rejected rows of a JSONL file (errors name the line and the missing field)."""
    rows = []
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    with handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: invalid JSON ({exc})") from None
            missing = [c for c in _COLUMNS if c not in row]
            if missing:
                raise DataError(f"{path}:{lineno}: field(s) {missing} missing (DPO rows: prompt, chosen, rejected)")
            rows.append({c: row[c] for c in _COLUMNS})
    if not rows:
        raise DataError(f"{path}: no DPO pairs")
    return rows


def run_dpo(recipe: Any, out: str, resume: bool = False, progress: Any = None) -> Any:
    """Train a :class:`~abstain.train.recipe.DPORecipe` into the run folder ``out`` (resumable)."""
    from datasets import Dataset

    from abstain.train.runner import (
        TrainResult,
        TrainRun,
        build_config,
        quiet,
        policy,
        set_threads,
        training_arguments,
    )

    set_threads(recipe.threads)
    run = TrainRun(out)
    checkpoint = run.prepare(recipe, resume)
    if checkpoint is not None:
        run.trim_metrics(int(checkpoint.rsplit("-", 1)[-1]))
    args = build_config(DPOConfig, training_arguments(recipe, run, beta=recipe.beta, max_length=recipe.max_length))
    model, peft_config = policy(recipe)
    trainer = DPOTrainer(
        model=model, args=args, train_dataset=Dataset.from_list(dpo_rows(recipe.pairs_file)),
        peft_config=peft_config, callbacks=run.callbacks(progress),
    )
    quiet(trainer).train(resume_from_checkpoint=checkpoint)
    final = run.save_final(trainer, recipe)
    return TrainResult(run.path, final, trainer.state.global_step, run.path / "metrics.jsonl")
