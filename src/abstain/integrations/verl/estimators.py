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

An estimator never guesses an outcome from a score: a score of 0 may be an abstention, a wrong answer
(``idk_binary``) or a refusal that earned nothing, and +1 may be a correct answer or a refusal rewarded on an
unanswerable item (``ternary_ook``, ``rl_ua``). Each response's outcome (correct / wrong / abstain / unscored) comes
from abstain's scorer: :func:`abstain.integrations.verl.reward.compute_score` returns it as ``outcome``, which
veRL keeps per sample in ``non_tensor_batch`` (its reward extra info). veRL 0.9.1 hands ``non_tensor_batch`` to
one estimator only (GDPO): the ``tiar`` estimators take it as a keyword when given, and otherwise read it from the
batch of veRL's ``compute_advantage`` that called them (:func:`outcomes_for`). No ``outcome`` column — a reward
function other than abstain's — is refused at the first step, naming it. Every reward preset then works, its scores
as they are (an unscored response is left out of its group, as TRL leaves out a ``None``), and a KL penalty in the
reward (``use_kl_in_reward``) only moves the scores, never the outcomes.

Example:
    >>> import numpy as np, torch
    >>> rewards = torch.zeros(4, 3)
    >>> rewards[:, -1] = torch.tensor([1.0, -1.0, -1.0, 0.0])  # veRL puts the score on the last token
    >>> outcomes = {"outcome": np.array(["correct", "wrong", "wrong", "abstain"], dtype=object)}  # compute_score's
    >>> adv, returns = compute_tiar_outcome_advantage(rewards, torch.ones(4, 3), np.array(["q"] * 4, dtype=object),
    ...                                               non_tensor_batch=outcomes)
    >>> [round(a, 4) for a in adv[:, 0].tolist()]  # GRPO's advantages; the abstention gets + (1 - 2 * 1/3)
    [1.3056, -0.7833, -0.7833, 0.5944]
"""

from __future__ import annotations

import sys
from typing import Any

from abstain.train.rewards.advantages import AdvantageConfig, advantages_by_uid

#: the non_tensor_batch column abstain's compute_score fills (its ``outcome`` key)
OUTCOME_KEY = "outcome"
_OUTCOMES = frozenset({"correct", "wrong", "abstain", "unscored"})

__all__ = ["ESTIMATORS", "OUTCOME_KEY", "outcomes_for", "compute_tiar_coupled_outcome_advantage", "compute_tiar_outcome_advantage", "register"]

VERL_EPSILON = 1e-6  # compute_grpo_outcome_advantage's default


def _setting(config: Any, key: str, default: Any) -> Any:
    return default if config is None else config.get(key, default)


def outcomes_for(estimator: str, rows: int, non_tensor_batch: Any = None) -> list[str]:
    """Each response's outcome as abstain's scorer gave it: from ``non_tensor_batch`` when veRL passes it, else
    from the batch of the ``compute_advantage`` call this estimator runs in. Anything else is refused.

    >>> outcomes_for("tiar", 2, {"outcome": ["correct", "abstain"]})
    ['correct', 'abstain']
    """
    batch = non_tensor_batch if non_tensor_batch is not None else _calling_batch()
    values = None if batch is None else batch.get(OUTCOME_KEY) if hasattr(batch, "get") else None
    if values is None:
        raise ValueError(
            f"the {estimator!r} advantage estimator takes each response's outcome (correct / wrong / abstain) from "
            "abstain's scorer, and the batch has no 'outcome' column: use abstain's reward function "
            "(reward.custom_reward_function.path=pkg://abstain.integrations.verl.reward, name=compute_score, any "
            "preset); a score alone is never read as an outcome (0 may be a wrong answer, +1 a rewarded refusal)")
    outcomes = [str(v) for v in values]
    if len(outcomes) != rows:
        raise ValueError(f"the {estimator!r} estimator got {rows} responses but {len(outcomes)} outcomes")
    unknown = sorted(set(outcomes) - _OUTCOMES)
    if unknown:
        raise ValueError(f"the {estimator!r} estimator got outcomes {unknown} in the batch's 'outcome' column: not "
                         "abstain's compute_score (correct / wrong / abstain / unscored)")
    return outcomes


def _calling_batch() -> Any:
    """``non_tensor_batch`` of the DataProto that veRL's ``compute_advantage`` (a caller of this estimator) holds."""
    frame = sys._getframe(1)
    for _ in range(8):
        frame = frame.f_back
        if frame is None:
            return None
        data = frame.f_locals.get("data") if frame.f_code.co_name == "compute_advantage" else None
        if data is not None and hasattr(data, "non_tensor_batch"):
            return data.non_tensor_batch
    return None


def _estimate(advantage: str, token_level_rewards: Any, response_mask: Any, index: Any, epsilon: float,
              config: Any, non_tensor_batch: Any) -> tuple[Any, Any]:
    import torch

    name = "tiar" if advantage == "tiar" else "tiar_coupled"
    if index is None:
        raise ValueError(f"the {name!r} advantage estimator groups responses by uid: veRL passed no index")
    outcomes = outcomes_for(name, len(token_level_rewards), non_tensor_batch)
    norm = bool(_setting(config, "norm_adv_by_std_in_grpo", True))
    decimals = _setting(config, "tiar_coupled_decimals", None) if advantage == "coupled" else None
    settings = AdvantageConfig(
        advantage=advantage, tiar_lambda=float(_setting(config, "tiar_lambda", 1.0)),
        scale_rewards="group" if norm else "none", epsilon=epsilon, flavor="verl",
        coupled_decimals=None if decimals is None else int(decimals))
    with torch.no_grad():
        scores = token_level_rewards.sum(dim=-1)
        unscored = torch.tensor([o == "unscored" for o in outcomes], device=scores.device)
        scores = torch.where(unscored, torch.full_like(scores, float("nan")), scores)  # as TRL's None: left out
        scalars = advantages_by_uid(scores, index, outcomes, settings)
        advantages = scalars.unsqueeze(-1) * response_mask
    return advantages, advantages


def compute_tiar_outcome_advantage(token_level_rewards: Any, response_mask: Any, index: Any = None,
                                   epsilon: float = VERL_EPSILON, config: Any = None,
                                   **kwargs: Any) -> tuple[Any, Any]:
    """TIAR (Algorithm 1): veRL's GRPO advantages plus tiar_lambda * (1 - 2 p-hat) on each abstention."""
    return _estimate("tiar", token_level_rewards, response_mask, index, epsilon, config,
                     kwargs.get("non_tensor_batch"))


def compute_tiar_coupled_outcome_advantage(token_level_rewards: Any, response_mask: Any, index: Any = None,
                                           epsilon: float = VERL_EPSILON, config: Any = None,
                                           **kwargs: Any) -> tuple[Any, Any]:
    """The coupled variant: each abstention's score becomes tiar_lambda * (1 - 2 p-hat) before GRPO."""
    return _estimate("coupled", token_level_rewards, response_mask, index, epsilon, config,
                     kwargs.get("non_tensor_batch"))


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
