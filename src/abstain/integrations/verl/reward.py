"""``compute_score`` for veRL's ``reward.custom_reward_function``: abstain's reward presets, same scorer as eval.

veRL 0.9.1's reward loop calls ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=,
**kwargs)``, ``kwargs`` being ``reward.custom_reward_function.reward_kwargs`` merged over anything veRL adds
itself (``reward_router_address`` ...; the naive manager puts ``num_turns`` into ``extra_info``). Set it up
with::

    reward.custom_reward_function.path=pkg://abstain.integrations.verl.reward
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.preset=ternary

Reward kwargs read here: ``preset`` (default ``ternary``), ``preset_kwargs`` (a dict handed to the preset,
e.g. ``+reward.custom_reward_function.reward_kwargs.preset_kwargs.false_refusal_penalty=-0.5``) and
``unscored_score``; every other key is veRL's and ignored.

The item comes back whole from ``extra_info["item"]`` (written by ``abstain export verl``), so the preset sees
exactly what the TRL trainer and the evaluation see.

The result is a dict with the same keys on every call (veRL takes the key set from the first sample):
``score``, ``acc`` (1.0 when correct: veRL's validation accuracy), ``correct``, ``wrong``, ``abstain``,
``unscored`` (0/1 each, so veRL's per-data-source means are the outcome shares), ``format_ok`` (0/1),
``outcome``, ``behavior`` ("" when none) and ``pred`` (veRL's majority vote key).

An unscorable response (the preset's score is None, e.g. a judge error) has no number, but veRL needs one:
it gets ``unscored_score``, 0.0 by default, and ``unscored=1``. 0.0 is the reward that claims nothing (it is
what ``ternary`` gives an abstention, so TIAR counts such a response as one); with the ``tiar`` estimators
you may set ``unscored_score=nan`` instead, which they treat as TRL treats a ``None``: left out of the
group's statistics, advantage 0 (veRL's logged reward means then show NaN).

The preset is :func:`abstain.train.rewards.presets.make_reward` — the very function the TRL trainer uses — built
once per process for each (preset, preset_kwargs).

Example:
    >>> sorted(RESULT_KEYS)[:4]
    ['abstain', 'acc', 'behavior', 'correct']
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

from abstain.integrations.verl.dataset import item_from_verl
from abstain.train.rewards.presets import RewardFunction, make_reward, score_one

__all__ = ["RESULT_KEYS", "compute_score"]

RESULT_KEYS = ("score", "acc", "correct", "wrong", "abstain", "unscored", "format_ok", "outcome", "behavior", "pred")


@lru_cache(maxsize=32)
def _reward(preset: str, preset_kwargs: str) -> RewardFunction:
    spec = json.loads(preset)
    return make_reward(spec, **json.loads(preset_kwargs))


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None,
                  **kwargs: Any) -> dict[str, Any]:
    """Score one response with an abstain reward preset; the fixed key set of :data:`RESULT_KEYS`."""
    preset = kwargs.get("preset", "ternary")
    preset_kwargs = dict(kwargs.get("preset_kwargs") or {})
    unscored_score = float(kwargs.get("unscored_score", 0.0))
    item = item_from_verl(extra_info)
    reward = _reward(json.dumps(preset, sort_keys=True), json.dumps(preset_kwargs, sort_keys=True))
    result = score_one(reward, item, solution_str)
    scored = result.score is not None and math.isfinite(result.score)
    outcome = result.outcome if scored else "unscored"
    return {
        "score": float(result.score) if scored else unscored_score,
        "acc": float(outcome == "correct"),
        "correct": float(outcome == "correct"),
        "wrong": float(outcome == "wrong"),
        "abstain": float(outcome == "abstain"),
        "unscored": float(outcome == "unscored"),
        "format_ok": float(bool(result.format_ok)),
        "outcome": outcome,
        "behavior": str(result.behavior or ""),
        "pred": str(result.pred),
    }
