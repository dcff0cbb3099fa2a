"""GRPO / TIAR / coupled advantages: hand-computed groups, vectorized == per group, and TRL's own lines."""

from __future__ import annotations

import inspect
import math
import random
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

from abstain.train.rewards.advantages import (
    AdvantageConfig,
    advantages_by_uid,
    advantages_grouped,
    combine_rewards,
    coupled_rewards,
    group_advantages,
    group_success_rates,
    outcome_codes,
    success_rate,
    tiar_bonus,
)

EPS = 1e-4  # TRL's
C, W, A, U = "correct", "wrong", "abstain", "unscored"


def close(got, want, tol=1e-12):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert math.isclose(g, w, rel_tol=tol, abs_tol=tol), (got, want)


# ---- tiar_bonus ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "outcomes,lam,want",
    [
        ([C, W, W, W, A], 1.0, [0, 0, 0, 0, 0.5]),  # p = 1/4 -> 1 - 1/2
        ([C, C, A], 0.5, [0, 0, -0.5]),  # p = 1 -> 0.5 * (1 - 2)
        ([W, A, A], 1.0, [0, 1, 1]),  # p = 0: abstaining on a question nobody gets right
        ([A, A, A, A], 1.0, [0, 0, 0, 0]),  # nothing attempted: no adjustment
        ([C, C, C, C], 1.0, [0, 0, 0, 0]),  # no abstention: nothing to adjust
        ([C, U, A, W], 1.0, [0, 0, 0, 0]),  # unscored rows do not count: p = 1/2
        ([A, C], 1.0, [-1, 0]),  # G = 2
        ([C, W, W, A], 0.0, [0, 0, 0, 0]),  # lambda = 0 is plain GRPO
        ([C, W, W, A, A], 2.0, [0, 0, 0, 2 / 3, 2 / 3]),  # p = 1/3 -> 2 * (1/3)
    ],
)
def test_tiar_bonus_by_hand(outcomes, lam, want):
    close(tiar_bonus(outcomes, lam), want)


def test_tiar_bonus_rejects_unknown_outcomes():
    with pytest.raises(ValueError, match=r"outcome 1 is 'idk'.*correct, wrong, abstain, unscored"):
        tiar_bonus([C, "idk"])
    assert success_rate([A, U]) is None and success_rate([C, W, A]) == 0.5


# ---- GRPO normalization -------------------------------------------------------------------------------------


def test_grpo_mixed_group():
    std = math.sqrt(2 / 3)  # [1, -1, 0, 0]: mean 0, unbiased variance 2/3
    close(group_advantages([1, -1, 0, 0]), [1 / (std + EPS), -1 / (std + EPS), 0, 0])


def test_grpo_constant_groups_are_zero():
    for rewards in ([1, 1, 1, 1], [-1, -1, -1, -1], [0, 0, 0, 0]):
        close(group_advantages(rewards), [0, 0, 0, 0])


def test_grpo_g2():
    close(group_advantages([1, -1]), [1 / (math.sqrt(2) + EPS), -1 / (math.sqrt(2) + EPS)])


def test_grpo_none_rewards_drop_out():
    std = 2 / math.sqrt(3)  # [1, -1, 1]: mean 1/3, variance ((2/3)^2 + (4/3)^2 + (2/3)^2) / 2 = 4/3
    want = [(2 / 3) / (std + EPS), 0, (-4 / 3) / (std + EPS), (2 / 3) / (std + EPS)]
    close(group_advantages([1, None, -1, 1]), want)
    close(group_advantages([None, None]), [0, 0])


def test_grpo_single_scored_row():
    close(group_advantages([None, 0.5, None]), [0, 0, 0])  # TRL: std of one value is NaN -> 0
    close(group_advantages([None, 0.5, None], config=AdvantageConfig(flavor="verl", epsilon=1e-6)),
          [0, 0.5 / (1 + 1e-6), 0])  # veRL: a group of one has mean 0, std 1


def test_grpo_unscaled_and_batch():
    close(group_advantages([1, 0, 0, 0], config=AdvantageConfig(scale_rewards="none")), [0.75, -0.25, -0.25, -0.25])
    # batch: group means 0 and 1; std of [1, -1, 1, 1] = sqrt(((.5)^2 + (1.5)^2 + 2 (.5)^2) / 3) = 1
    got = advantages_grouped([[1, -1], [1, 1]], config=AdvantageConfig(scale_rewards="batch"))
    close(got.reshape(-1).tolist(), [1 / (1 + EPS), -1 / (1 + EPS), 0, 0])
    with pytest.raises(ValueError, match="whole batch"):
        group_advantages([1, 0], config=AdvantageConfig(scale_rewards="batch"))


# ---- TIAR and coupled by hand -------------------------------------------------------------------------------


def test_tiar_adds_the_bonus_after_normalization():
    std = math.sqrt(11 / 12)  # [1, -1, -1, 0]: mean -1/4, squared deviations 25/16 + 9/16 + 9/16 + 1/16 = 11/4
    base = [d / (std + EPS) for d in (5 / 4, -3 / 4, -3 / 4, 1 / 4)]
    want = base[:3] + [base[3] + 1 / 3]  # p = 1/3 -> 1 - 2/3
    close(group_advantages([1, -1, -1, 0], [C, W, W, A], AdvantageConfig(advantage="tiar")), want)


@pytest.mark.parametrize(
    "rewards,outcomes,want",
    [
        # G = 2, p = 1: mean 1/2, std sqrt(1/2); the abstention pays 1
        ([1, 0], [C, A], [0.5 / (math.sqrt(0.5) + EPS), -0.5 / (math.sqrt(0.5) + EPS) - 1]),
        # all attempts wrong, p = 0: [-1, -1, 0] has mean -2/3, std 1/sqrt(3); the abstention earns 1
        ([-1, -1, 0], [W, W, A], [(-1 / 3) / (1 / math.sqrt(3) + EPS)] * 2 + [(2 / 3) / (1 / math.sqrt(3) + EPS) + 1]),
        ([0, 0, 0], [A, A, A], [0, 0, 0]),  # all abstain: std 0, nothing attempted, no bonus
        ([1, 1, 1], [C, C, C], [0, 0, 0]),  # all correct: no abstention to adjust
        ([1, None, 0], [C, U, A], [0.5 / (math.sqrt(0.5) + EPS), 0, -0.5 / (math.sqrt(0.5) + EPS) - 1]),
    ],
)
def test_tiar_groups_by_hand(rewards, outcomes, want):
    close(group_advantages(rewards, outcomes, AdvantageConfig(advantage="tiar")), want)
    got = advantages_grouped([rewards], [outcomes], AdvantageConfig(advantage="tiar"))
    close(got[0].tolist(), want)


def test_success_rates_for_logging():
    rates = group_success_rates([[C, W, W, A], [A, A, U, U], [C, C, A, U]])
    assert rates[0] == pytest.approx(1 / 3) and math.isnan(rates[1]) and rates[2] == 1.0


def test_coupled_replaces_the_reward_before_normalization():
    assert coupled_rewards([1, -1, -1, 0], [C, W, W, A]) == pytest.approx([1, -1, -1, 1 / 3], abs=1e-15)
    # [1, -1, -1, 1/3]: mean -1/6, deviations 7/6, -5/6, -5/6, 1/2, squares sum to 108/36 = 3: std 1
    want = [d / (1 + EPS) for d in (7 / 6, -5 / 6, -5 / 6, 1 / 2)]
    close(group_advantages([1, -1, -1, 0], [C, W, W, A], AdvantageConfig(advantage="coupled")), want)


@pytest.mark.parametrize(
    "rewards,outcomes,lam,decimals,want",
    [
        ([1, -1, -1, 0], [C, W, W, A], 1.0, 3, [1, -1, -1, 0.333]),  # the authors' round(1 - 2p, 3)
        ([1, -1, -1, 0], [C, W, W, A], 0.5, None, [1, -1, -1, 1 / 6]),
        ([0, 0, 0], [A, A, A], 1.0, None, [0, 0, 0]),  # all abstain: reward 0
        ([1, 1, 0], [C, C, A], 1.0, None, [1, 1, -1]),  # all attempts right: abstaining costs 1
        ([-1, -1, 0], [W, W, A], 1.0, None, [-1, -1, 1]),  # all attempts wrong: abstaining earns 1
        ([0, None], [A, U], 1.0, None, [0, None]),
    ],
)
def test_coupled_rewards_by_hand(rewards, outcomes, lam, decimals, want):
    assert coupled_rewards(rewards, outcomes, lam, decimals) == pytest.approx(want, abs=1e-15)


def test_coupled_all_correct_group_normalizes_by_hand():
    std = 2 / math.sqrt(3)  # [1, 1, -1]
    want = [(2 / 3) / (std + EPS), (2 / 3) / (std + EPS), (-4 / 3) / (std + EPS)]
    close(group_advantages([1, 1, 0], [C, C, A], AdvantageConfig(advantage="coupled")), want)
    close(group_advantages([0, 0, 0], [A, A, A], AdvantageConfig(advantage="coupled")), [0, 0, 0])


def test_config_errors_say_what_to_change():
    with pytest.raises(ValueError, match="advantage must be one of grpo, tiar, coupled"):
        AdvantageConfig(advantage="dr_grpo")
    with pytest.raises(ValueError, match="coupled_decimals applies only"):
        AdvantageConfig(advantage="tiar", coupled_decimals=3)
    with pytest.raises(ValueError, match="needs the outcomes"):
        advantages_grouped([[1.0, 0.0]], config=AdvantageConfig(advantage="tiar"))
    with pytest.raises(ValueError, match=r"outcome 'maybe' at \[0, 1\]"):
        outcome_codes([[C, "maybe"]])



def test_combine_rewards_like_trl():
    got = combine_rewards([[1.0, None], [None, None], [0.5, 2.0]], weights=[1.0, 0.5])
    assert got[0] == 1.0 and math.isnan(got[1]) and got[2] == 1.5


# ---- vectorized == per group on random inputs ---------------------------------------------------------------

CONFIGS = [
    AdvantageConfig(advantage=a, scale_rewards=s, flavor=f, tiar_lambda=lam)
    for a in ("grpo", "tiar", "coupled") for s in ("group", "none") for f in ("trl", "verl") for lam in (1.0, 0.3)
] + [AdvantageConfig(advantage="coupled", coupled_decimals=3)]


def _random_group(rng: random.Random, g: int, ternary: bool) -> tuple[list, list]:
    outcomes = [rng.choice([C, W, A, A, U] if rng.random() < 0.3 else [C, W, A]) for _ in range(g)]
    if ternary:
        rewards = [{C: 1.0, W: -1.0, A: 0.0}.get(o) for o in outcomes]
    else:
        rewards = [None if o == U else rng.uniform(-2, 2) for o in outcomes]
    return rewards, outcomes


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.advantage}-{c.scale_rewards}-{c.flavor}-{c.tiar_lambda}")
def test_grouped_equals_per_group(config):
    rng = random.Random(7)
    for trial in range(30):
        g = rng.choice([2, 3, 4, 8])
        groups = [_random_group(rng, g, ternary=trial % 2 == 0) for _ in range(rng.randint(1, 6))]
        want = [group_advantages(r, o, config) for r, o in groups]
        got = advantages_grouped([r for r, _ in groups], [o for _, o in groups], config)
        for row_got, row_want in zip(got.tolist(), want):
            close(row_got, row_want, tol=1e-12)


@pytest.mark.parametrize("config", CONFIGS[::3], ids=lambda c: f"{c.advantage}-{c.scale_rewards}-{c.flavor}")
def test_by_uid_uneven_interleaved_equals_per_group(config):
    rng = random.Random(11)
    for _ in range(20):
        groups = {f"uid-{k}": _random_group(rng, rng.randint(1, 7), ternary=True) for k in range(rng.randint(1, 6))}
        rows = [(uid, r, o, j) for uid, (rs, os) in groups.items() for j, (r, o) in enumerate(zip(rs, os))]
        rng.shuffle(rows)
        got = advantages_by_uid([r for _, r, _, _ in rows], np.array([u for u, *_ in rows], dtype=object),
                                [o for *_, o, _ in rows], config)
        want = {uid: group_advantages(rs, os, config) for uid, (rs, os) in groups.items()}
        close(got.tolist(), [want[uid][j] for uid, _, _, j in rows], tol=1e-12)


def test_torch_in_torch_out_equals_numpy():
    torch = pytest.importorskip("torch")
    rng = random.Random(3)
    groups = [_random_group(rng, 6, ternary=False) for _ in range(5)]
    rewards = [r for r, _ in groups]
    outcomes = [o for _, o in groups]
    for config in CONFIGS:
        want = advantages_grouped(rewards, outcomes, config)
        got = advantages_grouped(torch.tensor(np.array(rewards, dtype=float)), outcomes, config)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
        # torch runs TRL's nanstd, whose Bessel factor count / (count - 1) torch divides in float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-7, atol=1e-7)
    got32 = advantages_by_uid(torch.tensor([1.0, 0.0, -1.0, 0.0]), ["a", "a", "b", "b"], [C, A, W, A],
                              AdvantageConfig(advantage="tiar"))
    assert got32.dtype == torch.float32  # TRL's rewards are float32; the advantages stay float32


# ---- equality with TRL's own lines --------------------------------------------------------------------------

START = "unscorable_mask = torch.isnan(rewards_per_func).all(dim=1)"
END = "advantages = torch.nan_to_num(advantages, nan=0.0)"


def _trl_advantage_block() -> str:
    """The lines of TRL's installed GRPOTrainer that turn rewards_per_func into advantages, verbatim."""
    from trl import GRPOTrainer

    source = inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert START in source and END in source, "TRL's advantage code moved: re-read grpo_trainer.py"
    block = source[source.index(START):source.index(END) + len(END)]
    return textwrap.dedent("        " + block)


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
@pytest.mark.parametrize("num_generations", [2, 4, 8])
def test_grpo_equals_trl_bit_for_bit(scale, num_generations):
    """Runs TRL 1.16's own advantage lines (cut from its installed source) on the same float32 rewards."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    from trl.trainer.utils import nanstd

    block = _trl_advantage_block()
    gen = torch.Generator().manual_seed(num_generations)
    for trial in range(10):
        n_funcs = 1 + trial % 3
        rows = num_generations * (1 + trial % 4)
        rpf = torch.randn(rows, n_funcs, generator=gen)
        if trial % 2:
            rpf = torch.randint(-1, 2, (rows, n_funcs), generator=gen).float()  # ternary-like ties
        rpf[torch.rand(rows, n_funcs, generator=gen) < 0.2] = torch.nan  # a function's None
        rpf[: num_generations // 2 + 1 if trial % 3 == 0 else 0] = torch.nan  # every function None
        weights = torch.rand(n_funcs, generator=gen) + 0.5
        trainer = SimpleNamespace(multi_objective_aggregation="sum_then_normalize", scale_rewards=scale,
                                  reward_weights=weights, reward_funcs=[None] * n_funcs)
        scope = {"torch": torch, "nanstd": nanstd, "self": trainer, "device": "cpu",
                 "rewards_per_func": rpf.clone(), "num_generations": num_generations}
        exec(block, scope)  # noqa: S102 - TRL's code, from its installed source
        rewards = combine_rewards(rpf, weights)
        ours = advantages_grouped(rewards.view(-1, num_generations), config=AdvantageConfig(scale_rewards=scale))
        assert torch.equal(ours.view(-1), scope["advantages"]), (trial, ours.view(-1), scope["advantages"])
