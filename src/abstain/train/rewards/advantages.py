r"""GRPO advantages, TIAR's decoupled abstention adjustment and the coupled variant.

Three ways to turn one step's rewards into advantages (``AdvantageConfig.advantage``):

``grpo``
    GRPO's group normalization, exactly as TRL 1.16 computes it (see below).
``tiar``
    TIAR, Algorithm 1 of the paper: GRPO's advantages first, then every abstaining trajectory of a group gets
    :math:`\lambda(1 - 2\hat p)` *added*, with :math:`\hat p = n_c/(n_c + n_w)` the group's success rate among
    the trajectories that attempted an answer; nothing when :math:`n_c + n_w = 0`.
``coupled``
    The paper's Section 3.3 ablation, and what the TIAR authors' released code does: the abstention *reward*
    is replaced by :math:`\lambda(1 - 2\hat p)` *before* normalization (an all-abstain group keeps reward 0).
    The released code uses ``round(1 - 2p, 3)`` with no :math:`\lambda`: ``tiar_lambda=1.0,
    coupled_decimals=3``.

Forms. The per-group functions (:func:`tiar_bonus`, :func:`coupled_rewards`, :func:`group_advantages`) are
plain Python, written straight from the paper: they are the reference. The trainers use the vectorized
form: :func:`advantages_grouped` over a ``(groups x G)`` array (TRL: groups are contiguous runs of
``num_generations``) and :func:`advantages_by_uid` over rows grouped by an arbitrary uid array (veRL groups by
``index``: uneven sizes, interleaved). Both run the same code: the uid form packs its rows into a
``(groups x largest group)`` array padded with NaN, which every reduction below ignores, exactly as it
ignores an unscorable row.

Arrays. Pass numpy arrays or lists and get numpy back (float64); pass a torch tensor and the same
operations run in torch on its device and dtype, so TRL's float32 tensors give TRL's float32 results bit
for bit. torch is imported only when you hand in a tensor.

What TRL 1.16 does (``trl/trainer/grpo_trainer.py``, ``_generate_and_score_completions``, the default
``multi_objective_aggregation="sum_then_normalize"``) and what is matched here::

    unscorable_mask = torch.isnan(rewards_per_func).all(dim=1)
    rewards = (rewards_per_func * self.reward_weights.to(device).unsqueeze(0)).nansum(dim=1)
    rewards[unscorable_mask] = torch.nan
    mean_grouped_rewards = torch.nanmean(rewards.view(-1, num_generations), dim=1)
    mean_grouped_rewards = mean_grouped_rewards.repeat_interleave(num_generations, dim=0)
    if self.scale_rewards in ["group", "none"]:
        if num_generations > 1:
            std_rewards = nanstd(rewards.view(-1, num_generations), dim=1)
            ...
        else:
            std_rewards = torch.zeros_like(rewards)
    elif self.scale_rewards == "batch":
        if rewards.numel() > 1:
            std_rewards = nanstd(rewards).expand_as(rewards)
        else:
            std_rewards = torch.zeros_like(rewards)
    advantages = rewards - mean_grouped_rewards
    if self.scale_rewards != "none":
        advantages = advantages / (std_rewards + 1e-4)
    ...
    advantages = torch.nan_to_num(advantages, nan=0.0)

and ``trl.trainer.utils.nanstd``: ``variance = nanmean((x - nanmean(x))**2) * count / (count - 1)``, NaN
when ``count <= 1`` (the unbiased std over the non-NaN values). So: a reward function's ``None`` is NaN and
drops out of the weighted sum (:func:`combine_rewards`); a row where *every* function returned ``None`` is
NaN, left out of its group's mean and std, and gets advantage 0; a group with a single scored row has std
NaN and its advantage is 0 too. ``normalize_then_sum`` is not reproduced.

veRL 0.9.1's ``grpo`` (``compute_grpo_outcome_advantage``) is ``flavor="verl", epsilon=1e-6``: a group of one
row has mean 0 and std 1, and the std is ``torch.std``'s, which accumulates in float64 before rounding to
float32 (TRL's ``nanstd`` computes in the rewards' dtype); the mean and everything else is the same.

Example:
    >>> tiar_bonus(["correct", "wrong", "wrong", "wrong", "abstain"], lam=1.0)  # p = 1/4 -> 1 - 2/4
    [0.0, 0.0, 0.0, 0.0, 0.5]
    >>> [round(a, 4) for a in group_advantages([1, -1, 0, 0])]  # mean 0, unbiased std sqrt(2/3)
    [1.2246, -1.2246, 0.0, 0.0]
    >>> cfg = AdvantageConfig(advantage="tiar")
    >>> advantages_grouped([[1, -1, 0, 0]], [["correct", "wrong", "abstain", "abstain"]], cfg).round(4)
    array([[ 1.2246, -1.2246,  0.    ,  0.    ]])
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from abstain.train.rewards._arrays import Ops, as_float_array, is_tensor

__all__ = [
    "ADVANTAGES",
    "OUTCOMES",
    "SCALES",
    "AdvantageConfig",
    "advantages_by_uid",
    "advantages_grouped",
    "combine_rewards",
    "coupled_rewards",
    "group_advantages",
    "group_success_rates",
    "outcome_codes",
    "success_rate",
    "tiar_bonus",
]

#: The outcome vocabulary; an outcome's code is its index here.
OUTCOMES = ("correct", "wrong", "abstain", "unscored")
CORRECT, WRONG, ABSTAIN, UNSCORED = range(4)
ADVANTAGES = ("grpo", "tiar", "coupled")
SCALES = ("group", "batch", "none")
FLAVORS = ("trl", "verl")


@dataclass(frozen=True)
class AdvantageConfig:
    """How advantages are computed; the defaults are TRL's GRPO with plain advantages.

    Example:
        >>> AdvantageConfig(advantage="tiar", tiar_lambda=0.5).tiar_lambda
        0.5
        >>> AdvantageConfig(scale_rewards="std")
        Traceback (most recent call last):
        ...
        ValueError: scale_rewards must be one of group, batch, none (got 'std')
    """

    advantage: str = field(default="grpo", metadata={"help": "grpo | tiar (bonus after normalizing) | coupled"})
    tiar_lambda: float = field(default=1.0, metadata={"help": "lambda of lambda*(1 - 2p); the paper uses 1.0"})
    scale_rewards: str = field(default="group", metadata={"help": "TRL's: divide by the group std, batch std, or none"})
    epsilon: float = field(default=1e-4, metadata={"help": "added to the std: TRL 1e-4, veRL 1e-6"})
    flavor: str = field(default="trl", metadata={
        "help": "whose GRPO to reproduce: trl (std in the rewards' dtype; one scored row: advantage 0) | "
                "verl (std accumulated in float64 as torch.std does; a group of one: mean 0, std 1)"})
    coupled_decimals: int | None = field(default=None, metadata={
        "help": "coupled only: round lambda*(1 - 2p) to this many decimals (the authors' code: 3)"})

    def __post_init__(self) -> None:
        for name, allowed in (("advantage", ADVANTAGES), ("scale_rewards", SCALES), ("flavor", FLAVORS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {getattr(self, name)!r})")
        if not math.isfinite(self.tiar_lambda):
            raise ValueError(f"tiar_lambda must be a finite number (got {self.tiar_lambda!r})")
        if not (self.epsilon >= 0 and math.isfinite(self.epsilon)):
            raise ValueError(f"epsilon must be >= 0 (got {self.epsilon!r}); TRL uses 1e-4, veRL 1e-6")
        if self.flavor == "verl" and self.scale_rewards == "batch":
            raise ValueError("scale_rewards='batch' is TRL's; veRL normalizes per group: use flavor='trl'")
        if self.coupled_decimals is not None and (self.advantage != "coupled" or self.coupled_decimals < 0):
            raise ValueError("coupled_decimals applies only to advantage='coupled' and must be >= 0")


# ---- the reference: one group, plain Python, straight from the paper --------------------------------------


def _check_outcomes(outcomes: Iterable[str]) -> list[str]:
    out = list(outcomes)
    for i, o in enumerate(out):
        if o not in OUTCOMES:
            raise ValueError(f"outcome {i} is {o!r}; expected one of {', '.join(OUTCOMES)}")
    return out


def success_rate(outcomes: Iterable[str]) -> float | None:
    """TIAR's p-hat = n_c / (n_c + n_w): the success rate among attempts; None when nothing was attempted.

    Example:
        >>> success_rate(["correct", "wrong", "abstain"]), success_rate(["abstain", "unscored"])
        (0.5, None)
    """
    out = _check_outcomes(outcomes)
    n_c, n_w = out.count("correct"), out.count("wrong")
    return n_c / (n_c + n_w) if n_c + n_w else None


def tiar_bonus(outcomes: Sequence[str], lam: float = 1.0) -> list[float]:
    """TIAR's adjustment for one group: lam * (1 - 2 p-hat) for each abstention, 0 for the rest.

    All zeros when no trajectory attempted an answer. It is added to GRPO's advantages *after* the group
    normalization (Algorithm 1, lines 4-9).

    Example:
        >>> tiar_bonus(["abstain", "correct", "correct", "wrong"])  # p = 2/3: abstaining on an easy question
        [-0.33333333333333326, 0.0, 0.0, 0.0]
        >>> tiar_bonus(["abstain", "abstain"])
        [0.0, 0.0]
    """
    p = success_rate(outcomes)
    value = 0.0 if p is None else lam * (1.0 - 2.0 * p)
    return [value if o == "abstain" else 0.0 for o in outcomes]


def coupled_rewards(rewards: Sequence[float | None], outcomes: Sequence[str], lam: float = 1.0,
                    decimals: int | None = None) -> list[float | None]:
    """The coupled variant for one group: each abstention's reward becomes lam * (1 - 2 p-hat), before
    normalization; 0 when the whole group abstained. Unscorable rewards (None) stay None.

    Example:
        >>> coupled_rewards([1, -1, -1, 0], ["correct", "wrong", "wrong", "abstain"], decimals=3)  # p = 1/3
        [1, -1, -1, 0.333]
    """
    if len(rewards) != len(outcomes):
        raise ValueError(f"{len(rewards)} rewards but {len(outcomes)} outcomes")
    p = success_rate(outcomes)
    value = 0.0 if p is None else lam * (1.0 - 2.0 * p)
    if decimals is not None:
        value = round(value, decimals)
    return [value if o == "abstain" and not _missing(r) else r for r, o in zip(rewards, outcomes)]


def _missing(reward: float | None) -> bool:
    return reward is None or math.isnan(reward)


def group_advantages(rewards: Sequence[float | None], outcomes: Sequence[str] | None = None,
                     config: AdvantageConfig = AdvantageConfig()) -> list[float]:
    """Advantages of one group (plain Python; ``scale_rewards='batch'`` needs the whole batch: use
    :func:`advantages_grouped`). ``None`` rewards are unscorable: left out of the statistics, advantage 0.

    Example:
        >>> group_advantages([1, 1, -1, None])  # mean 1/3, std sqrt(4/3) over the three scored rows
        [0.5773002..., 0.5773002..., -1.1546005..., 0.0]
    """
    if config.scale_rewards == "batch":
        raise ValueError("scale_rewards='batch' needs the whole batch: use advantages_grouped")
    if config.advantage != "grpo" and outcomes is None:
        raise ValueError(f"advantage={config.advantage!r} needs the outcomes of the group")
    if config.advantage == "coupled":
        assert outcomes is not None
        rewards = coupled_rewards(rewards, outcomes, config.tiar_lambda, config.coupled_decimals)
    scored = [float(r) for r in rewards if not _missing(r)]
    n = len(scored)
    if n == 0:
        return [0.0] * len(rewards)
    if n == 1:
        mean, std = (0.0, 1.0) if config.flavor == "verl" else (scored[0], math.nan)
    else:
        mean = sum(scored) / n
        std = math.sqrt(sum((r - mean) ** 2 for r in scored) / (n - 1))
    out = []
    for r in rewards:
        if _missing(r):
            out.append(0.0)
            continue
        a = float(r) - mean
        if config.scale_rewards == "group":
            a = a / (std + config.epsilon)
        out.append(0.0 if math.isnan(a) else a)
    if config.advantage == "tiar":
        assert outcomes is not None
        bonus = tiar_bonus(outcomes, config.tiar_lambda)
        out = [a + (0.0 if _missing(r) else b) for a, b, r in zip(out, bonus, rewards)]
    return out




# ---- the vectorized form: numpy or torch, (groups x G) or by uid ---------------------------------------------


def outcome_codes(outcomes: Any) -> np.ndarray:
    """Outcome names (or their codes, the index in :data:`OUTCOMES`) as an int8 array of the same shape.

    Example:
        >>> outcome_codes([["correct", "abstain"], ["wrong", "unscored"]]).tolist()
        [[0, 2], [1, 3]]
    """
    arr = np.asarray(outcomes.detach().cpu().numpy() if is_tensor(outcomes) else outcomes)
    if arr.dtype.kind in "iu":
        bad = (arr < 0) | (arr >= len(OUTCOMES))
        if bad.any():
            raise ValueError(f"outcome code {arr[bad].flat[0]} at {np.argwhere(bad)[0].tolist()} is not 0-3")
        return arr.astype(np.int8)
    lookup = {name: code for code, name in enumerate(OUTCOMES)}
    codes = np.empty(arr.size, dtype=np.int8)
    for i, name in enumerate(arr.reshape(-1).tolist()):
        if name not in lookup:
            where = [int(j) for j in np.unravel_index(i, arr.shape)]
            raise ValueError(f"outcome {name!r} at {where}; expected one of {', '.join(OUTCOMES)}")
        codes[i] = lookup[name]
    return codes.reshape(arr.shape)


def combine_rewards(rewards_per_func: Any, weights: Any = None) -> Any:
    """TRL's weighted sum over reward functions: a NaN (``None``) drops out; an all-NaN row stays NaN.

    Example:
        >>> combine_rewards([[1.0, None], [None, None], [0.5, 2.0]], weights=[1.0, 0.5]).tolist()
        [1.0, nan, 1.5]
    """
    r = as_float_array(rewards_per_func)
    if r.ndim != 2:
        raise ValueError(f"rewards_per_func must be (rows, functions), got shape {tuple(r.shape)}")
    n_funcs = r.shape[1]
    if Ops(r).torch:
        import torch

        w = torch.ones(n_funcs) if weights is None else torch.as_tensor(weights, dtype=torch.float32)
        unscorable_mask = torch.isnan(r).all(dim=1)
        rewards = (r * w.to(r.device).unsqueeze(0)).nansum(dim=1)
        rewards[unscorable_mask] = torch.nan
        return rewards
    w = np.ones(n_funcs) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n_funcs,):
        raise ValueError(f"{w.size} weights for {n_funcs} reward functions")
    out = np.nansum(r * w[None, :], axis=1)
    out[np.isnan(r).all(axis=1)] = np.nan
    return out


def _one_minus_2p(ops: Ops, codes: Any, lam: float, like: Any) -> tuple[Any, Any]:
    """Per group, shape (K, 1): lam * (1 - 2 p-hat), and whether any trajectory attempted an answer."""
    n_c = ops.sum_rows(codes == CORRECT)
    n_w = ops.sum_rows(codes == WRONG)
    if ops.torch:  # counts in the rewards' dtype (torch would divide in its default float32)
        n_c, n_w = n_c.to(like.dtype), n_w.to(like.dtype)
    attempted = (n_c + n_w) > 0
    denom = n_c + n_w + ~attempted  # 1 where nothing was attempted: no division by zero
    return lam * (1.0 - 2.0 * (n_c / denom)), attempted


def group_success_rates(outcomes: Any) -> np.ndarray:
    """p-hat of each group of a ``(groups x G)`` outcome array, NaN where nothing was attempted (for logging).

    Example:
        >>> group_success_rates([["correct", "wrong", "abstain"], ["abstain", "abstain", "unscored"]]).tolist()
        [0.5, nan]
    """
    codes = outcome_codes(outcomes)
    if codes.ndim != 2:
        raise ValueError(f"outcomes must be (groups, G), got shape {codes.shape}")
    ops = Ops(codes)
    one_minus_2p, attempted = _one_minus_2p(ops, codes, 1.0, codes)
    return np.where(attempted, (1.0 - one_minus_2p) / 2.0, np.nan)[:, 0]


def _abstention_value(r: Any, outcomes: Any, config: AdvantageConfig) -> tuple[Any, Any]:
    """Per group lambda(1 - 2 p-hat) (0 where nothing was attempted), and the scored abstentions' mask."""
    if outcomes is None:
        raise ValueError(f"advantage={config.advantage!r} needs the outcomes")
    ops = Ops(r)
    codes = ops.like(outcome_codes(outcomes), r)
    if tuple(codes.shape) != tuple(r.shape):
        raise ValueError(f"outcomes have shape {tuple(codes.shape)} but rewards {tuple(r.shape)}")
    value, attempted = _one_minus_2p(ops, codes, config.tiar_lambda, r)
    value = ops.where(attempted, value, 0.0)  # nothing attempted: no bonus, and the coupled reward is 0
    if config.coupled_decimals is not None:
        value = ops.round(value, config.coupled_decimals)
    value = value.to(r.dtype) if ops.torch else value
    return value, (codes == ABSTAIN) & ~ops.isnan(r)


def coupled_rewards_grouped(rewards: Any, outcomes: Any, config: AdvantageConfig) -> Any:
    """The coupled variant's rewards for a ``(groups x G)`` array: each scored abstention's reward becomes
    lambda(1 - 2 p-hat) (0 when nothing in its group was attempted); what :func:`advantages_grouped` normalizes.

    Example:
        >>> coupled_rewards_grouped([[1, -1, -1, 0]], [["correct", "wrong", "wrong", "abstain"]],
        ...                         AdvantageConfig(advantage="coupled", coupled_decimals=3)).tolist()
        [[1.0, -1.0, -1.0, 0.333]]
    """
    r = as_float_array(rewards)
    value, abstained = _abstention_value(r, outcomes, config)
    return Ops(r).where(abstained, value, r)


def tiar_bonus_grouped(rewards: Any, outcomes: Any, config: AdvantageConfig) -> Any:
    """TIAR's bonus for a ``(groups x G)`` array: lambda(1 - 2 p-hat) for each scored abstention, else 0 —
    what ``advantage='tiar'`` adds to GRPO's advantages.

    Example:
        >>> tiar_bonus_grouped([[1, -1, -1, 0]], [["correct", "wrong", "wrong", "abstain"]],
        ...                    AdvantageConfig(advantage="tiar")).round(4).tolist()
        [[0.0, 0.0, 0.0, 0.3333]]
    """
    r = as_float_array(rewards)
    value, abstained = _abstention_value(r, outcomes, config)
    return Ops(r).where(abstained, value, 0.0)


def advantages_grouped(rewards: Any, outcomes: Any = None, config: AdvantageConfig = AdvantageConfig()) -> Any:
    """Advantages for a ``(groups x G)`` array of rewards (NaN or None: unscorable); same shape and kind back.

    ``outcomes`` (names or codes, same shape) are needed for ``tiar`` and ``coupled``. A row whose reward is
    NaN gets advantage 0 and no bonus; p-hat counts the outcomes.

    Example:
        >>> cfg = AdvantageConfig(advantage="coupled", coupled_decimals=3)  # p = 1/3: the abstention's reward -> 0.333
        >>> advantages_grouped([[1, -1, -1, 0]], [["correct", "wrong", "wrong", "abstain"]], cfg).round(4)
        array([[ 1.1667, -0.8332, -0.8332,  0.4997]])
    """
    r = as_float_array(rewards)
    if r.ndim != 2:
        raise ValueError(f"rewards must be (groups, G), got shape {tuple(r.shape)}; rows with uids: advantages_by_uid")
    ops = Ops(r)
    if config.advantage != "grpo":
        value, abstained = _abstention_value(r, outcomes, config)
        if config.advantage == "coupled":
            r = ops.where(abstained, value, r)
    mean = ops.nanmean(r, rows=True)
    if config.flavor == "verl":  # torch.std per group; a group of one has mean 0 and std 1
        std = ops.std_float64(r)
        one = ops.count(r, rows=True) == 1
        mean, std = ops.where(one, 0.0, mean), ops.where(one, 1.0, std)
    elif config.scale_rewards == "batch":
        std = ops.nanstd(r, rows=False) if r.shape[0] * r.shape[1] > 1 else ops.full(tuple(r.shape), 0.0, r)
    else:  # TRL: zeros when G == 1
        std = ops.nanstd(r, rows=True) if r.shape[1] > 1 else ops.full(tuple(r.shape), 0.0, r)
    advantages = r - mean
    if config.scale_rewards != "none":
        advantages = advantages / (std + config.epsilon)
    advantages = ops.nan_to_num(advantages)
    if config.advantage == "tiar":
        advantages = advantages + ops.where(abstained, value, 0.0)  # = tiar_bonus_grouped
    return advantages


def _group_index(uids: Any) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Each row's group (numbered in order of first appearance) and position in it; groups, largest size."""
    seen: dict[Hashable, int] = {}
    sizes: list[int] = []
    values = uids.tolist() if hasattr(uids, "tolist") else list(uids)
    group = np.empty(len(values), dtype=np.int64)
    rank = np.empty(len(values), dtype=np.int64)
    for i, uid in enumerate(values):
        g = seen.setdefault(uid, len(seen))
        if g == len(sizes):
            sizes.append(0)
        group[i], rank[i] = g, sizes[g]
        sizes[g] += 1
    return group, rank, len(sizes), max(sizes, default=0)


def advantages_by_uid(rewards: Any, uids: Any, outcomes: Any = None,
                      config: AdvantageConfig = AdvantageConfig()) -> Any:
    """Advantages of rows grouped by ``uids`` (any hashable ids; groups of any size, in any order).

    The rows are packed into a ``(groups x largest group)`` array padded with NaN and handed to
    :func:`advantages_grouped`: both forms are one computation.

    Example:
        >>> advantages_by_uid([1.0, 1.0, -1.0, 0.0, 0.0], ["a", "b", "a", "b", "b"]).round(4)  # a: 1, -1; b: 1, 0, 0
        array([ 0.7071,  1.1545, -0.7071, -0.5773, -0.5773])
    """
    r = as_float_array(rewards)
    if r.ndim != 1 or len(uids) != r.shape[0]:
        raise ValueError(f"need one reward and one uid per row (rewards {tuple(r.shape)}, {len(uids)} uids)")
    ops = Ops(r)
    group, rank, n_groups, width = _group_index(uids)
    packed_codes = None
    if outcomes is not None:
        codes = outcome_codes(outcomes)
        if codes.shape != (r.shape[0],):
            raise ValueError(f"outcomes have shape {codes.shape} but there are {r.shape[0]} rewards")
        packed_codes = np.full((n_groups, width), UNSCORED, dtype=np.int8)
        packed_codes[group, rank] = codes
    g, k = ops.like(group, r), ops.like(rank, r)
    packed = ops.full((n_groups, width), float("nan"), r)
    packed[g, k] = r
    return advantages_grouped(packed, packed_codes, config)[g, k]
