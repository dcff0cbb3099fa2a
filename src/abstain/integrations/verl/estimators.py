"""TIAR as veRL advantage estimators: ``algorithm.adv_estimator=tiar`` (or ``tiar_coupled``).

veRL 0.9.1 calls a registered estimator as ``fn(token_level_rewards=(bs, L), response_mask=(bs, L),
config=<the algorithm section>, index=<uid per row>[, reward_baselines=...])`` and stores the returned
``(advantages, returns)``, both ``(bs, L)`` (``verl/trainer/ppo/ray_trainer.py``, ``compute_advantage``). It
does *not* pass ``norm_adv_by_std_in_grpo``: it is read from ``config``, as veRL's own estimators do, and so
is the strength: ``config.get("tiar_lambda", 1.0)`` (set it with ``+algorithm.tiar_lambda=0.5``;
``+algorithm.tiar_coupled_decimals=3`` gives the TIAR authors' ``round(1 - 2p, 3)``).

The math is :func:`abstain.train.rewards.advantages.advantages_by_uid`, the code the TRL trainer runs, with veRL's
``grpo`` conventions (``flavor="verl"``: ``epsilon=1e-6``, a group of one row has mean 0 and std 1, the std is
``torch.std``'s). With ``tiar_lambda=0``, ``tiar`` gives veRL's ``grpo`` advantages bit for bit.

An estimator sees only the summed score of each response, so the outcome is read from it: +1 correct,
-1 wrong, 0 abstain (NaN: unscored, advantage 0). That needs the ``ternary`` reward preset alone and
``algorithm.use_kl_in_reward=False`` (a KL penalty in the reward moves the score off those values); any
other score raises.

Example:
    >>> import numpy as np, torch
    >>> rewards = torch.zeros(4, 3)
    >>> rewards[:, -1] = torch.tensor([1.0, -1.0, -1.0, 0.0])  # veRL puts the score on the last token
    >>> adv, returns = compute_tiar_outcome_advantage(rewards, torch.ones(4, 3), np.array(["q"] * 4, dtype=object))
    >>> [round(a, 4) for a in adv[:, 0].tolist()]  # GRPO's advantages; the abstention gets + (1 - 2 * 1/3)
    [1.3056, -0.7833, -0.7833, 0.5944]
"""

from __future__ import annotations

from typing import Any

from abstain.train.rewards.advantages import AdvantageConfig, advantages_by_uid, ternary_outcomes

__all__ = ["ESTIMATORS", "compute_tiar_coupled_outcome_advantage", "compute_tiar_outcome_advantage", "register"]

VERL_EPSILON = 1e-6  # compute_grpo_outcome_advantage's default


def _setting(config: Any, key: str, default: Any) -> Any:
    return default if config is None else config.get(key, default)


def _estimate(advantage: str, token_level_rewards: Any, response_mask: Any, index: Any, epsilon: float,
              config: Any) -> tuple[Any, Any]:
    import torch

    if index is None:
        raise ValueError(f"the {advantage!r} advantage estimator groups responses by uid: veRL passed no index")
    if _setting(config, "use_kl_in_reward", False):
        raise ValueError(f"the {advantage!r} advantage estimator reads correct/wrong/abstain from ternary scores: "
                         "set algorithm.use_kl_in_reward=False (use actor_rollout_ref.actor.use_kl_loss for KL)")
    norm = bool(_setting(config, "norm_adv_by_std_in_grpo", True))
    decimals = _setting(config, "tiar_coupled_decimals", None) if advantage == "coupled" else None
    settings = AdvantageConfig(
        advantage=advantage, tiar_lambda=float(_setting(config, "tiar_lambda", 1.0)),
        scale_rewards="group" if norm else "none", epsilon=epsilon, flavor="verl",
        coupled_decimals=None if decimals is None else int(decimals))
    with torch.no_grad():
        scores = token_level_rewards.sum(dim=-1)
        outcomes = ternary_outcomes(scores)
        scalars = advantages_by_uid(scores, index, outcomes, settings)
        advantages = scalars.unsqueeze(-1) * response_mask
    return advantages, advantages


def compute_tiar_outcome_advantage(token_level_rewards: Any, response_mask: Any, index: Any = None,
                                   epsilon: float = VERL_EPSILON, config: Any = None,
                                   **kwargs: Any) -> tuple[Any, Any]:
    """TIAR (Algorithm 1): veRL's GRPO advantages plus tiar_lambda * (1 - 2 p-hat) on each abstention."""
    return _estimate("tiar", token_level_rewards, response_mask, index, epsilon, config)


def compute_tiar_coupled_outcome_advantage(token_level_rewards: Any, response_mask: Any, index: Any = None,
                                           epsilon: float = VERL_EPSILON, config: Any = None,
                                           **kwargs: Any) -> tuple[Any, Any]:
    """The coupled variant: each abstention's score becomes tiar_lambda * (1 - 2 p-hat) before GRPO."""
    return _estimate("coupled", token_level_rewards, response_mask, index, epsilon, config)


ESTIMATORS = {"tiar": compute_tiar_outcome_advantage, "tiar_coupled": compute_tiar_coupled_outcome_advantage}


def register() -> None:
    """Add the estimators to veRL's ``ADV_ESTIMATOR_REGISTRY`` (again is fine: same names, same functions)."""
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, register_adv_est

    for name, fn in ESTIMATORS.items():
        current = ADV_ESTIMATOR_REGISTRY.get(name)
        if current is not None and getattr(current, "__module__", None) == fn.__module__:
            ADV_ESTIMATOR_REGISTRY[name] = fn  # this module imported twice (e.g. reloaded): take the new one
        else:
            register_adv_est(name)(fn)  # raises if someone else's estimator holds the name
