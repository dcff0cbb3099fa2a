"""Training: reward presets, advantages (GRPO, TIAR, coupled), trainers on TRL, recipes, the veRL plugin.

Importing this package loads neither torch nor TRL; names load from their module on first use, and the
trainers import TRL when built (with an install hint when missing: ``pip install 'abstain[train]'``).

Train a recipe with :func:`train` (``train(load_recipe("tiny-sft"), "runs/sft") -> TrainResult``).

Example:
    >>> from abstain.train import make_reward, tiar_bonus
    >>> tiar_bonus(["correct", "abstain"])  # p = 1: abstaining on a question the group got right
    [0.0, -1.0]
    >>> make_reward("ternary").bounds
    (-1.0, 1.0)
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

# OpenMP threads that spin-wait for a peer descheduled by other work made CPU training up to 25x slower
# (measured: 8 x 24-token generations 105 s instead of 4 s); it must be set before torch loads.
if "torch" not in sys.modules:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_LAZY = {
    **{name: "abstain.train.rewards.advantages" for name in (
        "AdvantageConfig", "advantages_by_uid", "advantages_grouped", "combine_rewards", "coupled_rewards",
        "group_advantages", "group_success_rates", "tiar_bonus",
    )},
    **{name: "abstain.train.rewards.presets" for name in (
        "PRESETS", "RewardConfig", "RewardFunction", "RewardResult", "make_reward", "score_one",
    )},
    **{name: "abstain.train.recipe" for name in (
        "DPORecipe", "GRPORecipe", "PipelineRecipe", "SFTRecipe", "load_recipe", "shipped_recipes",
    )},
    "TrainResult": "abstain.train.trainers.runner",
    "train": "abstain.train.trainers.entry",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'abstain.train' has no attribute {name!r}")
