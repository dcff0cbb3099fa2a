"""Training: advantages (GRPO, TIAR, coupled) for the TRL trainer and the veRL plugin.

Importing this package loads neither torch nor TRL; names are loaded from their module on first use.

Example:
    >>> from abstain.train import tiar_bonus
    >>> tiar_bonus(["correct", "abstain"])  # p = 1: abstaining on a question the group got right
    [0.0, -1.0]
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AdvantageConfig",
    "advantages_by_uid",
    "advantages_grouped",
    "combine_rewards",
    "coupled_rewards",
    "group_advantages",
    "group_success_rates",
    "tiar_bonus",
]

_LAZY = {name: "abstain.train.advantages" for name in __all__}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'abstain.train' has no attribute {name!r}")
