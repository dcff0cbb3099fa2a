"""DAPO's dynamic sampling for :class:`~abstain.train.trainers.grpo.AbstainGRPOTrainer`: which groups teach, which
prompts refill a batch, which groups a refilled batch keeps, and how rows of several generation rounds become one
batch.

Two modes (the recipe's ``dynamic_sampling``):

* ``true`` (``drop``): the groups that teach nothing leave the batch the loss sees, which shrinks (the trainer pads
  the processes to equal sizes and rescales the loss: :func:`loss_scale`).
* ``refill`` (DAPO; veRL's ``algorithm.filter_groups``): further generation rounds sample more prompts until the
  batch holds ``batch_size / num_generations`` informative groups, or ``max_generation_batches`` rounds (the first
  included) were sampled. The batch keeps the first informative groups in sampling order; a step that hit the
  bound fills the rest with the earliest uninformative groups (as GRPO without dynamic sampling would have them)
  and logs ``abstain/refill_bound_hit`` 1. The batch has the size TRL expects, so gradient accumulation
  (``steps_per_generation`` > 1) and N processes work unchanged.

A group is informative unless its rewards (as TRL normalizes them) are all equal *and* none of its abstentions got a
TIAR bonus: its advantages would all be 0 (:func:`informative_groups`).

Example::

    >>> import torch
    >>> informative_groups(torch.tensor([[1.0], [1.0], [0.0], [1.0]]), None, torch.zeros(4), group_size=2).tolist()
    [False, True]
    >>> # idk_binary: an abstention and a wrong answer both score 0, but TIAR gave the abstention a bonus
    >>> informative_groups(torch.tensor([[0.0], [0.0]]), None, torch.tensor([1.0, 0.0]), group_size=2).tolist()
    [True]
    >>> choose_groups([[False, True, True], [True, False, True]], target=3)
    ([(0, 1), (0, 2), (1, 0)], False)
"""

from __future__ import annotations

import math
from typing import Any

from abstain.train.rewards.advantages import combine_rewards

__all__ = ["MODES", "choose_groups", "dynamic_mode", "informative_groups", "loss_scale", "refill_rows", "stack_rows"]

#: the recipe's values and what they mean to the trainer
MODES = {False: "off", True: "drop", "off": "off", "drop": "drop", "refill": "refill"}

#: the per-row tensors of TRL 1.16's generation output and how a batch made of several rounds pads them: the side,
#: and the value (None: the tokenizer's pad token). One value per row (advantages) needs no padding.
PADDING = {
    "prompt_ids": ("left", None), "prompt_mask": ("left", 0),
    "completion_ids": ("right", None), "completion_mask": ("right", 0), "tool_mask": ("right", 1),
    "old_per_token_logps": ("right", 0.0), "ref_per_token_logps": ("right", 0.0),
    "sampling_per_token_logps": ("right", 0.0), "importance_sampling_ratio": ("right", 1.0),
}


def dynamic_mode(value: Any) -> str:
    """``off``, ``drop`` or ``refill`` from a recipe's ``dynamic_sampling`` (true means ``drop``).

    >>> dynamic_mode(True), dynamic_mode("refill"), dynamic_mode(False)
    ('drop', 'refill', 'off')
    """
    try:
        return MODES[value]
    except (KeyError, TypeError):
        raise ValueError(f"dynamic_sampling must be true (drop uninformative groups), refill (DAPO: sample more "
                         f"prompts until the batch is full of informative groups) or false, got {value!r}") from None


def informative_groups(used: Any, weights: Any, bonus: Any, group_size: int) -> Any:
    """One bool per group of the gathered batch: False where the rewards TRL normalizes (``used``, rows x reward
    functions, weighted by ``weights``) are all equal and no row got a TIAR ``bonus`` (its advantages are all 0)."""
    rewards = combine_rewards(used, weights).view(-1, group_size)
    uniform = (rewards.max(dim=1).values - rewards.min(dim=1).values <= 1e-9)
    return ~(uniform & (bonus.reshape(-1, group_size) == 0).all(dim=1))


def choose_groups(informative: list[list[bool]], target: int) -> tuple[list[tuple[int, int]], bool]:
    """The (round, group) pairs a refilled batch keeps, in sampling order, and whether the bound was hit.

    The first ``target`` informative groups over the rounds; short of them (the bound was hit), the earliest
    uninformative groups fill the batch.

    >>> choose_groups([[False, False], [False, True]], target=2)
    ([(0, 0), (1, 1)], True)
    """
    good = [(r, k) for r, flags in enumerate(informative) for k, ok in enumerate(flags) if ok][:target]
    hit = len(good) < target
    if hit:
        rest = [(r, k) for r, flags in enumerate(informative) for k, ok in enumerate(flags) if not ok]
        good = sorted(good + rest[:target - len(good)])
    return good, hit


def refill_rows(size: int, prompts: int, group_size: int, seed: int, world: int, rank: int) -> list[int]:
    """The dataset rows of one refill round on process ``rank``: ``prompts`` prompts drawn without replacement (then
    again, if the data holds fewer) by a generator seeded with ``seed``, each repeated ``group_size`` times, and this
    process's contiguous share of them — the layout of TRL's ``RepeatSampler``. The same on every world size.

    >>> refill_rows(10, prompts=2, group_size=2, seed=0, world=2, rank=1) == refill_rows(10, 2, 2, 0, 1, 0)[2:]
    True
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    order: list[int] = []
    while len(order) < prompts:
        order += torch.randperm(size, generator=generator).tolist()
    rows = [i for i in order[:prompts] for _ in range(group_size)]
    share = len(rows) // world
    return rows[rank * share:(rank + 1) * share]


def stack_rows(rows: list[dict[str, Any]], pad_token_id: int, multiple: int | None = None) -> dict[str, Any]:
    """Rows taken from batches of different widths as one batch: each key of :data:`PADDING` padded on its side to
    the widest row, then the columns that are padding in every row cut (to a multiple of ``multiple``, TRL's
    ``pad_to_multiple_of``). Other keys must hold one value per row.

    >>> import torch
    >>> a = {"prompt_ids": torch.tensor([5, 6]), "prompt_mask": torch.tensor([1, 1]), "advantages": torch.tensor(1.0)}
    >>> b = {"prompt_ids": torch.tensor([0, 0, 7]), "prompt_mask": torch.tensor([0, 0, 1]), "advantages": torch.tensor(2.0)}
    >>> out = stack_rows([a, b], pad_token_id=0)
    >>> out["prompt_ids"].tolist(), out["advantages"].tolist()
    ([[5, 6], [0, 7]], [1.0, 2.0])
    """
    import torch

    out: dict[str, Any] = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        if key not in PADDING:
            if any(v.dim() > 0 for v in values):
                raise ValueError(f"dynamic_sampling=refill cannot join TRL's {key!r} across generation rounds "
                                 "(multimodal or tool inputs are not supported with refill; use dynamic_sampling=true)")
            out[key] = torch.stack(values)
            continue
        side, fill = PADDING[key]
        fill = pad_token_id if fill is None else fill
        width = max(v.shape[-1] for v in values)
        padded = []
        for v in values:
            pad = v.new_full((width - v.shape[-1],), fill)
            padded.append(torch.cat([pad, v] if side == "left" else [v, pad]))
        out[key] = torch.stack(padded)
    _cut(out, "prompt_mask", "left", multiple)
    _cut(out, "completion_mask", "right", multiple)
    return out


def _cut(batch: dict[str, Any], mask_key: str, side: str, multiple: int | None) -> None:
    """Drop the columns on ``side`` where ``batch[mask_key]`` is 0 in every row, from every key padded on that side
    and as wide."""
    mask = batch.get(mask_key)
    if mask is None or mask.dim() != 2 or mask.shape[1] == 0:
        return
    width = mask.shape[1]
    used = mask.any(dim=0).nonzero().flatten()
    keep = 0 if len(used) == 0 else (width - int(used[0]) if side == "left" else int(used[-1]) + 1)
    if multiple:
        keep = min(width, math.ceil(keep / multiple) * multiple)
    if keep == width:
        return
    for key, (key_side, _) in PADDING.items():
        value = batch.get(key)
        if key_side == side and value is not None and value.dim() == 2 and value.shape[1] == width:
            batch[key] = value[:, width - keep:] if side == "left" else value[:, :keep]


#: TRL's losses by how they normalize (TRL 1.16's GRPOTrainer._compute_loss): by the tokens of the gathered batch
#: (num_items_in_batch), by this process's tokens, or by this process's rows (the mean of per-row means or sums)
_BY_GATHERED_TOKENS = frozenset({"dapo", "cispo", "vespo"})
_BY_LOCAL_TOKENS = frozenset({"bnpo"})
_BY_LOCAL_ROWS = frozenset({"grpo", "sapo", "dr_grpo", "luspo"})


def loss_scale(loss_type: str, world: int, rows: int, kept_rows: int, tokens: float, kept_tokens: float) -> float:
    """The factor that turns this process's TRL loss, after dynamic sampling dropped rows, into its share of the
    one-process loss on the gathered kept batch (the processes' gradients are averaged, so the shares are summed /
    ``world``).

    ``rows``: the rows every process holds (kept plus padding); ``kept_rows``: the kept rows of all processes;
    ``tokens``: this process's kept tokens; ``kept_tokens``: those of all processes.

    >>> loss_scale("dapo", world=2, rows=6, kept_rows=8, tokens=40, kept_tokens=100)
    1.0
    >>> loss_scale("grpo", world=2, rows=6, kept_rows=8, tokens=40, kept_tokens=100)  # 2 x 6 / 8
    1.5
    >>> loss_scale("bnpo", world=2, rows=6, kept_rows=8, tokens=40, kept_tokens=100)  # 2 x 40 / 100
    0.8
    """
    if loss_type in _BY_GATHERED_TOKENS:
        value = 1.0
    elif loss_type in _BY_LOCAL_TOKENS:
        value = world * tokens / kept_tokens if kept_tokens else 0.0
    elif loss_type in _BY_LOCAL_ROWS:
        value = world * rows / kept_rows if kept_rows else 0.0
    else:
        raise ValueError(f"dynamic_sampling does not know how TRL's loss_type {loss_type!r} normalizes; use one of "
                         f"{', '.join(sorted(_BY_GATHERED_TOKENS | _BY_LOCAL_TOKENS | _BY_LOCAL_ROWS))}")
    return value
