"""Training: reward presets, TIAR advantages, GRPO / SFT / DPO trainers on TRL, recipes.

Importing this package loads no torch and no TRL; the trainers import them when built (with an
install hint when missing: ``pip install 'abstain[train]'``).
"""

from abstain.train.rewards import PRESETS, RewardConfig, RewardFunction, RewardResult, make_reward, score_one

__all__ = ["PRESETS", "RewardConfig", "RewardFunction", "RewardResult", "make_reward", "score_one"]
