"""A TRL trainer's config from a recipe: the fields every trainer shares, the policy's, the trainer's own, then the
recipe's ``trl`` section, built into TRL's config class with unknown fields named.

Example::

    args = trl_config(SFTConfig, recipe, run, max_length=recipe.max_length, completion_only_loss=True)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from abstain.schema import DataError
from abstain.train.trainers.distributed import World, recipe_split
from abstain.train.trainers.policy import resolve_policy

if TYPE_CHECKING:  # pragma: no cover
    from abstain.train.recipe import Recipe
    from abstain.train.trainers.runner import TrainRun

__all__ = ["build_config", "training_arguments", "trl_config"]


def training_arguments(recipe: Recipe, run: TrainRun, **fields: Any) -> dict[str, Any]:
    """The TRL config fields of ``recipe`` trained in ``run``: shared ones, ``fields`` (the trainer's own),
    ``recipe.trl``, then the run's policy's (precision, checkpointing, how the model loads:
    :meth:`~abstain.train.trainers.policy.Policy.trl_fields`; a ``trl`` section that contradicts them was refused by
    :func:`~abstain.train.trainers.policy.resolve_policy`)."""
    import torch

    cuda = torch.cuda.is_available()
    split = run.split or recipe_split(recipe, World.from_env())
    out: dict[str, Any] = {
        "output_dir": str(run.checkpoints),
        "learning_rate": recipe.learning_rate,
        "lr_scheduler_type": recipe.lr_scheduler,
        "warmup_steps": recipe.warmup_ratio,  # transformers 5: a float in [0, 1) is a ratio of the steps
        "per_device_train_batch_size": split.per_device,
        "gradient_accumulation_steps": split.accumulation,
        "max_grad_norm": recipe.max_grad_norm,
        "weight_decay": recipe.weight_decay,
        "save_strategy": "steps",
        "save_steps": recipe.save_steps,
        "save_total_limit": recipe.save_total_limit,
        "logging_steps": 1,
        "seed": recipe.seed,
        "data_seed": recipe.seed,
        "use_cpu": not cuda,
        "report_to": list(recipe.report_to),  # transformers reports from the main process only
        "run_name": recipe.run_name or run.path.resolve().name,
        "disable_tqdm": True,
        "dataloader_num_workers": 0,
        "log_level_replica": "error",  # the other processes stay quiet (abstain.train.trainers.distributed)
    }
    if split.world_size > 1:  # every trainable parameter takes part in every forward (and torch says so per process)
        out["ddp_find_unused_parameters"] = False
    if recipe.steps is not None:
        out["max_steps"] = recipe.steps
    else:
        out["num_train_epochs"] = recipe.epochs
    out.update(fields)
    out.update({k: v for k, v in recipe.trl.items() if k != "model_init_kwargs"})
    out.update((run.policy or resolve_policy(recipe)).trl_fields())  # model_init_kwargs: the policy's, merged
    return out


def build_config(cls: type, values: dict[str, Any]) -> Any:
    """``cls(**values)`` with unknown fields reported by name (a recipe's ``trl`` section is free-form)."""
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise DataError(f"recipe field 'trl': {cls.__name__} has no field(s) {unknown}")
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise DataError(f"recipe: {cls.__name__} refused the settings: {exc}") from None


def trl_config(cls: type, recipe: Recipe, run: TrainRun, **fields: Any) -> Any:
    """TRL's config ``cls`` for ``recipe`` in ``run`` (:func:`training_arguments`, then :func:`build_config`)."""
    return build_config(cls, training_arguments(recipe, run, **fields))
