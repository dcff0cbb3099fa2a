"""TIAR estimators against veRL's own GRPO, modelled on veRL's tests/trainer/ppo/test_core_algos_on_cpu.py."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

verl = pytest.importorskip("verl")
pytestmark = pytest.mark.verl

import torch  # noqa: E402 - veRL brings torch
from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage, get_adv_estimator_fn  # noqa: E402
from verl.trainer.ppo.ray_trainer import compute_advantage  # noqa: E402

EPS = 1e-6  # veRL's


def _make_group_index(batch_size: int, num_groups: int) -> np.ndarray:
    """veRL's helper: uneven groups of at least 2, shuffled (interleaved)."""
    counts = [2] * num_groups
    for _ in range(batch_size - 2 * num_groups):
        counts[random.randrange(num_groups)] += 1
    index = [f"uid-{g}" for g, c in enumerate(counts) for _ in range(c)]
    random.shuffle(index)
    return np.asarray(index, dtype=object)


def _rand_mask(batch_size: int, seq_len: int) -> torch.Tensor:
    mask = torch.randint(0, 2, (batch_size, seq_len)).float()
    mask[mask.sum(dim=-1) == 0, -1] = 1.0
    return mask


def _ternary_rewards(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The score on each response's last valid token, as veRL's reward manager puts it."""
    rewards = torch.zeros_like(mask)
    last = mask.shape[1] - 1 - torch.argmax(mask.flip(dims=[1]), dim=1)
    rewards[torch.arange(len(scores)), last] = scores
    return rewards


def _config(**values) -> OmegaConf:
    """The algorithm section as Hydra hands it over: a struct DictConfig (extra keys need `+algorithm.k=v`)."""
    cfg = OmegaConf.create({"adv_estimator": "tiar", "norm_adv_by_std_in_grpo": True, "use_kl_in_reward": False,
                            **values})
    OmegaConf.set_struct(cfg, True)
    return cfg


TERNARY = {1.0: "correct", -1.0: "wrong", 0.0: "abstain"}


def _outcomes(scores) -> np.ndarray:
    """What abstain's compute_score puts in non_tensor_batch for ternary scores."""
    return np.asarray([TERNARY[float(s)] for s in scores], dtype=object)


def _via_verl(scores, uids, estimator: str, config, mask=None, outcomes=None) -> torch.Tensor:
    """veRL's own dispatcher (ray_trainer.compute_advantage) on a DataProto, as the trainer calls it, with the
    outcome column compute_score's extra info leaves in non_tensor_batch (``outcomes=False``: none)."""
    scores = torch.as_tensor(scores, dtype=torch.float32)
    mask = torch.ones(len(scores), 3) if mask is None else mask
    non_tensors = {"uid": np.asarray(uids, dtype=object)}
    if outcomes is not False:
        non_tensors["outcome"] = _outcomes(scores) if outcomes is None else np.asarray(outcomes, dtype=object)
    data = DataProto.from_dict(tensors={"token_level_rewards": _ternary_rewards(scores, mask), "response_mask": mask},
                               non_tensors=non_tensors)
    out = compute_advantage(data, adv_estimator=estimator, config=config)
    assert torch.equal(out.batch["advantages"], out.batch["returns"])
    return out.batch["advantages"]


@pytest.mark.parametrize("batch_size,seq_len,num_groups,seed", [(64, 128, 5, 0), (128, 256, 8, 1), (512, 64, 10, 2)])
@pytest.mark.parametrize("name", ["tiar", "tiar_coupled"])
@pytest.mark.parametrize("norm", [True, False])
def test_lambda_zero_equals_verl_grpo_bit_for_bit(batch_size, seq_len, num_groups, seed, name, norm):
    torch.manual_seed(seed)
    random.seed(seed)
    index = _make_group_index(batch_size, num_groups)
    mask = _rand_mask(batch_size, seq_len)
    rewards = _ternary_rewards(torch.randint(-1, 2, (batch_size,)).float(), mask)
    want, want_returns = compute_grpo_outcome_advantage(rewards.clone(), mask, index, norm_adv_by_std_in_grpo=norm)
    outcomes = {"outcome": _outcomes(rewards.sum(-1))}  # veRL's keyword for GDPO, taken when given
    got, returns = get_adv_estimator_fn(name)(token_level_rewards=rewards.clone(), response_mask=mask, index=index,
                                              config=_config(tiar_lambda=0.0, norm_adv_by_std_in_grpo=norm),
                                              non_tensor_batch=outcomes)
    assert got.shape == want.shape == (batch_size, seq_len)
    assert torch.equal(got, want) and torch.equal(returns, want_returns)


UIDS = ["a", "b", "a", "b", "b", "c"]  # interleaved, groups of 2, 3 and 1
SCORES = [1.0, -1.0, 0.0, 0.0, -1.0, 0.0]  # a: correct, abstain   b: wrong, abstain, wrong   c: abstain


def test_tiar_hand_computed_groups():
    got = _via_verl(SCORES, UIDS, "tiar", _config(tiar_lambda=0.5))[:, -1]
    sa, sb = math.sqrt(0.5), math.sqrt(1 / 3)  # a: [1, 0]   b: [-1, 0, -1], mean -2/3
    want = [0.5 / (sa + EPS), (-1 / 3) / (sb + EPS), -0.5 / (sa + EPS) - 0.5,  # a: p = 1 -> 0.5 * (1 - 2)
            (2 / 3) / (sb + EPS) + 0.5, (-1 / 3) / (sb + EPS), 0.0]  # b: p = 0 -> +0.5; c: one row, no attempt
    torch.testing.assert_close(got, torch.tensor(want), rtol=1e-6, atol=1e-6)


def test_tiar_unscaled():
    got = _via_verl(SCORES, UIDS, "tiar", _config(tiar_lambda=1.0, norm_adv_by_std_in_grpo=False))[:, -1]
    want = [0.5, -1 / 3, -0.5 - 1.0, 2 / 3 + 1.0, -1 / 3, 0.0]
    torch.testing.assert_close(got, torch.tensor(want), rtol=1e-6, atol=1e-6)


def test_coupled_hand_computed_groups():
    got = _via_verl(SCORES, UIDS, "tiar_coupled", AlgoConfig(adv_estimator="tiar_coupled"))[:, -1]
    # a: abstain -> 1 - 2 = -1: [1, -1]   b: abstain -> 1 - 0 = 1: [-1, 1, -1]   c: all abstain -> 0
    sa, sb = math.sqrt(2), 2 / math.sqrt(3)
    want = [1 / (sa + EPS), (-2 / 3) / (sb + EPS), -1 / (sa + EPS), (4 / 3) / (sb + EPS), (-2 / 3) / (sb + EPS), 0.0]
    torch.testing.assert_close(got, torch.tensor(want), rtol=1e-6, atol=1e-6)


def test_coupled_rounded_like_the_authors_code():
    got = _via_verl([1.0, -1.0, -1.0, 0.0], ["q"] * 4, "tiar_coupled", _config(tiar_coupled_decimals=3))[:, -1]
    r = torch.tensor([1.0, -1.0, -1.0, 0.333], dtype=torch.float64)  # p = 1/3 -> round(1/3, 3)
    torch.testing.assert_close(got, ((r - r.mean()) / (r.std() + EPS)).float(), rtol=1e-6, atol=1e-6)


def test_advantages_follow_the_response_mask():
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    adv = _via_verl([1.0, 1.0, 0.0], ["q"] * 3, "tiar", _config(), mask=mask)
    assert bool((adv[mask == 0] == 0).all())  # padding gets nothing
    for row in range(3):  # every valid token of a response carries the same advantage, non-zero here
        assert len(set(adv[row][mask[row] == 1].tolist())) == 1 and adv[row, 0] != 0


def test_without_the_scorers_outcomes_the_estimator_refuses_at_the_first_step():
    with pytest.raises(ValueError, match=r"'tiar' advantage estimator takes each response's outcome.*no 'outcome' "
                                         r"column.*pkg://abstain.integrations.verl.reward"):
        _via_verl([1.0, 0.0], ["q", "q"], "tiar", _config(), outcomes=False)
    with pytest.raises(ValueError, match=r"outcomes \['maybe'\].*not abstain's compute_score"):
        _via_verl([1.0, 0.0], ["q", "q"], "tiar_coupled", _config(), outcomes=["correct", "maybe"])


def test_outcomes_come_from_the_scorer_not_the_score():
    # idk_binary: correct 1, wrong 0, refusal 0. Read from the score, the two wrong answers would be abstentions
    # (bonus -1 each) and the abstention would get -1 instead of +1/3 (p = 1/3 over the three attempts).
    scores, outcomes = [1.0, 0.0, 0.0, 0.0], ["correct", "wrong", "abstain", "wrong"]
    got = _via_verl(scores, ["q"] * 4, "tiar", _config(norm_adv_by_std_in_grpo=False), outcomes=outcomes)[:, -1]
    torch.testing.assert_close(got, torch.tensor([0.75, -0.25, -0.25 + 1 / 3, -0.25]), rtol=1e-6, atol=1e-6)
    # ternary_ook: a refusal of an unanswerable item scores +1 and is still an abstention
    got = _via_verl([1.0, 1.0, -1.0, -1.0], ["q"] * 4, "tiar", _config(norm_adv_by_std_in_grpo=False),
                    outcomes=["abstain", "correct", "wrong", "wrong"])[:, -1]
    torch.testing.assert_close(got, torch.tensor([1.0 + 1 / 3, 1.0, -1.0, -1.0]), rtol=1e-6, atol=1e-6)


def test_a_kl_penalty_in_the_reward_moves_the_scores_not_the_outcomes():
    scores = [0.95, -0.03, -1.02, -0.98]  # ternary scores moved by a KL penalty (algorithm.use_kl_in_reward)
    outcomes = ["correct", "abstain", "wrong", "wrong"]
    grpo = _via_verl(scores, ["q"] * 4, "tiar", _config(use_kl_in_reward=True, tiar_lambda=0.0), outcomes=outcomes)
    tiar = _via_verl(scores, ["q"] * 4, "tiar", _config(use_kl_in_reward=True, tiar_lambda=1.0), outcomes=outcomes)
    torch.testing.assert_close((tiar - grpo)[:, -1], torch.tensor([0.0, 1 / 3, 0.0, 0.0]), rtol=1e-6, atol=1e-6)
