"""The trainer side of DAPO's dynamic sampling (:mod:`abstain.train.trainers.dynamic_sampling` decides which groups
and prompts): what one generation step scored (:class:`ScoredStep`), and the batch the loss sees — refilled from
further rounds of fresh prompts (``dynamic_sampling: refill``) or with the groups that teach nothing dropped
(``dynamic_sampling: true``).

:class:`DynamicSamplingMixin` goes before TRL's ``GRPOTrainer`` in
:class:`~abstain.train.trainers.grpo.AbstainGRPOTrainer`; it calls the trainer's ``_score_round`` (one TRL generation
and scoring, with the TIAR bonus) for each refill round.

torch and accelerate load with the trainer (:mod:`abstain.train.trainers.grpo` says how to install them).

Example::

    class AbstainGRPOTrainer(DynamicSamplingMixin, GRPOTrainer): ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from abstain.schema import ScoredRow
from abstain.train.trainers.dynamic_sampling import (
    choose_groups,
    informative_groups,
    loss_scale,
    refill_rows,
    stack_rows,
)

__all__ = ["DynamicSamplingMixin", "ScoredStep"]


@dataclass
class ScoredStep:
    """What ``_calculate_rewards`` scored and derived, for ``_generate_and_score_completions`` of the same step."""

    rows: list[ScoredRow]  # this process's completions, in order
    outcomes: list[str]  # gathered over processes, in TRL's order
    behaviors: list[str | None]
    group_size: int
    returned: Any  # (global batch, functions): the reward functions' values
    used: Any  # what TRL normalizes (coupled: the abstentions' rewards replaced)
    bonus: Any  # (global batch,): tiar's lambda(1 - 2p) for each scored abstention, else 0
    process_slice: slice = field(default_factory=lambda: slice(0))  # this process's rows in the gathered batch
    trl_advantages: Any = None  # this process's advantages as TRL computed them (before the TIAR bonus)
    rounds: int = 1  # generation rounds sampled (refill)
    sampled_groups: int = 0  # groups sampled over the rounds (0: one round's)


class DynamicSamplingMixin:
    """Refill and drop for a GRPO trainer whose ``_score_round(inputs)`` returns (TRL's output, its ScoredStep)."""

    def _refill(self, inputs: list[dict[str, Any]], output: dict[str, Any],
                step: ScoredStep) -> tuple[dict[str, Any], ScoredStep]:
        """DAPO's refill: further rounds of fresh prompts (:func:`refill_rows`) until the gathered batch holds
        ``batch_size / num_generations`` informative groups or ``max_generation_batches`` rounds were sampled, then
        the batch of the chosen groups (:func:`choose_groups`), this process's share of it. The number of rounds is
        decided on the gathered groups, so every process samples every round."""
        g = step.group_size
        target = len(step.outcomes) // g
        rounds = [(output, step)]
        flags = [informative_groups(step.used, self.reward_weights, step.bonus, g).tolist()]
        while sum(map(sum, flags)) < target and len(rounds) < self.args.max_generation_batches:
            more, scored = self._score_round(self._refill_inputs(len(inputs), g, len(rounds)))
            assert scored is not None
            rounds.append((more, scored))
            flags.append(informative_groups(scored.used, self.reward_weights, scored.bonus, g).tolist())
        chosen, hit = choose_groups(flags, target)
        metrics = self._abstain_metrics[self._mode()]
        metrics["abstain/generation_batches"].append(float(len(rounds)))
        metrics["abstain/refill_bound_hit"].append(float(hit))
        if len(rounds) == 1:  # nothing to refill, or a bound of one round: the batch as TRL made it
            step.rounds, step.sampled_groups = 1, target
            return output, step
        return self._assemble(rounds, chosen, g)

    def _refill_inputs(self, rows: int, g: int, round_index: int) -> list[dict[str, Any]]:
        """This process's ``rows`` dataset rows for refill round ``round_index`` of this step (seeded by the run's
        seed, the step and the round: a resumed run draws the same prompts)."""
        dataset = self.train_dataset
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise ValueError("dynamic_sampling=refill draws further prompts by index: it needs a map-style dataset")
        world = self.accelerator.num_processes
        seed = (self.args.seed * 1_000_003 + self.state.global_step) * 101 + round_index
        picks = refill_rows(len(dataset), rows * world // g, g, seed, world, self.accelerator.process_index)
        return [dataset[i] for i in picks]

    def _assemble(self, rounds: list[tuple[dict[str, Any], ScoredStep]], chosen: list[tuple[int, int]],
                  g: int) -> tuple[dict[str, Any], ScoredStep]:
        """The chosen groups of several rounds as one batch of TRL's size: every round's rows gathered from every
        process, this process's contiguous share of the chosen rows taken, padded and stacked
        (:func:`stack_rows`); the step's gathered records (outcomes, rewards, bonus) follow the same rows."""
        import torch
        from accelerate.utils import gather_object

        first_output, first = rounds[0]
        device = first_output["advantages"].device
        n = len(first_output["advantages"])
        parts = []  # per round, per process: (tensors, scored rows)
        for output, step in rounds:
            other = [k for k, v in output.items() if k != "num_items_in_batch" and not (
                isinstance(v, torch.Tensor) and v.dim() > 0 and len(v) == n)]
            if other:  # multimodal or tool inputs: not rows stack_rows can join
                raise ValueError(f"dynamic_sampling=refill cannot join TRL's {', '.join(map(repr, other))} across "
                                 "generation rounds (multimodal or tool inputs); use dynamic_sampling=true")
            local = {k: v.detach().cpu() for k, v in output.items() if k != "num_items_in_batch"}
            local["abstain_trl_advantages"] = step.trl_advantages.detach().cpu()
            parts.append(gather_object([(local, step.rows)]))
        picks = [(r, k * g + j) for r, k in chosen for j in range(g)]  # (round, index in that round's gathered batch)
        index = self.accelerator.process_index
        mine = picks[index * n:(index + 1) * n]
        rows = [{k: v[i % n] for k, v in parts[r][i // n][0].items()} for r, i in mine]
        stacked = stack_rows(rows, self._tokenizer.pad_token_id, self.pad_to_multiple_of)
        batch = {k: v.to(device) for k, v in stacked.items()}
        trl_advantages = batch.pop("abstain_trl_advantages")
        mask = batch["completion_mask"] if batch.get("tool_mask") is None else batch["completion_mask"] * batch["tool_mask"]
        batch["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()  # as TRL counts it
        steps = [s for _, s in rounds]
        merged = ScoredStep(
            rows=[parts[r][i // n][1][i % n] for r, i in mine],
            outcomes=[steps[r].outcomes[i] for r, i in picks],
            behaviors=[steps[r].behaviors[i] for r, i in picks],
            group_size=g,
            returned=torch.stack([steps[r].returned[i] for r, i in picks]),
            used=torch.stack([steps[r].used[i] for r, i in picks]),
            bonus=torch.stack([steps[r].bonus[i] for r, i in picks]),
            process_slice=slice(index * n, (index + 1) * n), trl_advantages=trl_advantages,
            rounds=len(rounds), sampled_groups=len(rounds) * (len(first.outcomes) // g))
        return batch, merged

    def _drop_uniform_groups(self, output: dict[str, Any], step: ScoredStep,
                             informative: Any) -> tuple[dict[str, Any], Any]:
        """DAPO's dynamic sampling without the refill (``dynamic_sampling: true``): the rows of groups that teach
        nothing (:func:`informative_groups`) leave the batch, so they neither dilute the loss's token
        normalization nor pull through the KL term. A batch with no such group is returned as it is; one with
        nothing else keeps every row (their advantages are all 0).

        On N processes the groups are judged on the gathered batch, so every process drops the same groups (a
        group split over processes leaves each of them), however unevenly that leaves the processes. Every
        process is then padded to the same number of rows (the most any process kept, at least 1) with rows
        whose tokens are all masked out and whose advantage is 0: TRL gathers per-row tensors during the loss,
        which needs equal sizes on every process, and a process left with no row of its own runs the same
        forward and backward as the others (gradients are averaged over processes) and adds nothing to the loss.
        The loss's token count is the kept tokens of all processes, and ``abstain_loss_scale`` (see
        :meth:`_compute_loss`) makes the per-row and per-process normalizations of ``grpo``, ``bnpo``,
        ``dr_grpo`` ... those of one process on the gathered kept batch.
        """
        import torch

        g = step.group_size
        uniform = ~informative  # informative_groups of this step, one flag per group
        metrics = self._abstain_metrics[self._mode()]
        metrics["abstain/dropped_groups"].append(float(uniform.float().mean()))
        if not uniform.any() or uniform.all():
            return output, None
        n = len(output["advantages"])
        index = self.accelerator.process_index
        device = output["advantages"].device
        keep = (~uniform).repeat_interleave(g)[index * n:(index + 1) * n].to(device)
        kept = keep.nonzero().flatten()
        counts = self.accelerator.gather(torch.tensor([len(kept)], device=device)).cpu()
        rows = max(int(counts.max()), 1)
        real = torch.arange(rows, device=device) < len(kept)  # False: a padding row
        take = torch.cat([kept, torch.zeros(rows - len(kept), dtype=torch.long, device=device)])
        out = {k: (v[take] if isinstance(v, torch.Tensor) and v.dim() > 0 and len(v) == n else v)
               for k, v in output.items()}
        out["completion_mask"] = out["completion_mask"] * real.unsqueeze(1).to(out["completion_mask"].dtype)
        out["advantages"] = torch.where(real.view(-1, *([1] * (out["advantages"].dim() - 1))), out["advantages"],
                                        torch.zeros_like(out["advantages"]))
        mask = out["completion_mask"] if out.get("tool_mask") is None else out["completion_mask"] * out["tool_mask"]
        tokens = mask.sum()
        out["num_items_in_batch"] = self.accelerator.gather(tokens).sum().to(output["num_items_in_batch"].dtype)
        out["abstain_loss_scale"] = torch.tensor(loss_scale(
            self.loss_type, world=self.accelerator.num_processes, rows=rows, kept_rows=int(counts.sum()),
            tokens=float(tokens), kept_tokens=float(out["num_items_in_batch"])), device=device)
        return out, kept.cpu()

    def _compute_loss(self, model, inputs):  # type: ignore[override]
        """TRL's loss, times ``abstain_loss_scale`` when dynamic sampling left the processes uneven (else as is)."""
        loss = super()._compute_loss(model, inputs)
        scale = inputs.get("abstain_loss_scale")
        return loss if scale is None else loss * scale
