"""GRPO with abstention-aware rewards and TIAR advantages, on TRL's ``GRPOTrainer``.

TRL (1.10 - 1.x) has no advantage hook, so :class:`AbstainGRPOTrainer` overrides as little as it can:

* ``_calculate_rewards``: runs TRL's own (every reward function, gathered over processes), then reads
  each completion's outcome (correct / wrong / abstain / unscored) and behavior from the scored rows the
  abstain reward function kept (``RewardFunction.last_rows``: the completions were scored once, by the
  same parse -> judge path as the metrics) and gathers them in the same order. For ``advantage:
  coupled`` it replaces each abstention's reward by lambda(1 - 2p) here, *before* TRL normalizes.
* ``_generate_and_score_completions``: runs TRL's own, then for ``advantage: tiar`` recomputes this
  step's advantages as TRL's group normalization plus lambda(1 - 2p) for each abstention
  (:func:`abstain.train.advantages.advantages_grouped`; groups are the contiguous runs of
  ``num_generations`` in the gathered order) and keeps this process's slice.

Per step it logs, beside TRL's own metrics: the outcome shares (``abstain/correct`` …), the mean success
rate p over groups that attempted an answer (``abstain/p_mean``), the mean TIAR bonus, the ACA behavior
shares and the mean / std of the advantages *after* the adjustment (TRL's completion table gets the
adjusted values too). ``last_step`` keeps this step's numbers for inspection.

Example (on a CPU; see ``abstain train grpo`` for the recipe-driven form)::

    args = AbstainGRPOConfig(output_dir="runs/g", advantage="tiar", reward_preset="ternary",
                             num_generations=4, per_device_train_batch_size=8, max_steps=2,
                             use_cpu=True, bf16=False)
    trainer = AbstainGRPOTrainer(model="path/to/model", args=args, train_dataset=dataset)
    trainer.train()
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from abstain.backends.base import MissingDependencyError
from abstain.outcomes import Behavior, outcome
from abstain.train.advantages import (
    ABSTAIN,
    AdvantageConfig,
    advantages_grouped,
    combine_rewards,
    coupled_rewards_grouped,
    group_success_rates,
    outcome_codes,
    tiar_bonus_grouped,
)
from abstain.train.rewards import RewardFunction, make_reward

try:
    import torch
    from accelerate.utils import gather_object
    from trl import GRPOConfig, GRPOTrainer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs TRL and torch: pip install 'abstain[train]' ({exc})") from exc

__all__ = ["AbstainGRPOConfig", "AbstainGRPOTrainer"]


@dataclass
class AbstainGRPOConfig(GRPOConfig):
    """TRL's ``GRPOConfig`` plus the abstention settings (every TRL field keeps its meaning)."""

    advantage: str = field(default="tiar", metadata={
        "help": "grpo (TRL's group normalization) | tiar (TIAR: + lambda(1-2p) for each abstention, after "
                "normalizing) | coupled (the abstention's reward replaced by lambda(1-2p), before normalizing)"})
    tiar_lambda: float = field(default=1.0, metadata={"help": "lambda of lambda(1 - 2p); TIAR uses 1.0"})
    coupled_decimals: int | None = field(default=None, metadata={
        "help": "coupled: round lambda(1-2p) to this many decimals (the TIAR authors' code: 3)"})
    reward_preset: str = field(default="ternary", metadata={
        "help": "abstain reward preset(s) when no reward_funcs are given: a name, or JSON {name: weight}, e.g. "
                '\'{"aca": 1.0, "format": 0.2}\''})
    reward_protocol: str | None = field(default=None, metadata={"help": "the protocol the prompts use (recorded)"})

    def __post_init__(self) -> None:
        super().__post_init__()
        AdvantageConfig(advantage=self.advantage, tiar_lambda=self.tiar_lambda,
                        scale_rewards=self.scale_rewards if self.scale_rewards in ("group", "batch", "none") else "group",
                        coupled_decimals=self.coupled_decimals)  # its errors say what to change
        if self.advantage != "grpo" and self.multi_objective_aggregation != "sum_then_normalize":
            raise ValueError("advantage tiar / coupled build on TRL's sum_then_normalize aggregation; "
                             "set multi_objective_aggregation='sum_then_normalize'")
        if self.num_generations is not None and self.num_generations < 2:
            raise ValueError("num_generations must be >= 2: GRPO compares the completions of one prompt")

    def reward_spec(self) -> str | dict[str, float]:
        """``reward_preset`` as ``make_reward`` takes it."""
        text = self.reward_preset.strip()
        if text.startswith("{"):
            try:
                return {str(k): float(v) for k, v in json.loads(text).items()}
            except (ValueError, AttributeError) as exc:
                raise ValueError(f"reward_preset is not a JSON object of weights: {text!r} ({exc})") from None
        return text


class AbstainGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose rewards come from abstain's scorer and whose advantages can be TIAR's."""

    def __init__(self, model: Any, reward_funcs: Any = None, args: AbstainGRPOConfig | None = None,
                 **kwargs: Any) -> None:
        if args is None or not isinstance(args, AbstainGRPOConfig):
            raise ValueError("AbstainGRPOTrainer needs args=AbstainGRPOConfig(...)")
        if reward_funcs is None:
            reward_funcs = [make_reward(args.reward_spec(), protocol=args.reward_protocol)]
        funcs = reward_funcs if isinstance(reward_funcs, list) else [reward_funcs]
        ours = [f for f in funcs if isinstance(f, RewardFunction)]
        if args.advantage != "grpo" and not ours:
            raise ValueError(f"advantage={args.advantage!r} needs the outcome of every completion: give at least "
                             "one abstain reward function (abstain.train.make_reward), e.g. the 'ternary' preset")
        if args.advantage == "coupled" and len(funcs) != 1:
            raise ValueError("advantage='coupled' replaces the abstention reward: give exactly one reward function")
        super().__init__(model=model, reward_funcs=funcs, args=args, **kwargs)
        self.outcome_source: RewardFunction | None = ours[0] if ours else None
        self.advantage_config = AdvantageConfig(
            advantage=args.advantage, tiar_lambda=args.tiar_lambda, scale_rewards=self.scale_rewards,
            coupled_decimals=args.coupled_decimals)
        self.last_step: dict[str, Any] = {}
        self._scored_step: dict[str, Any] = {}

    # -- outcomes, and the coupled reward ----------------------------------------------------------

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[override]
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._scored_step = {}
        if self.outcome_source is None:
            return rewards_per_func
        rows = self.outcome_source.last_rows
        if len(rows) != len(prompts):
            raise RuntimeError(f"the reward function kept {len(rows)} scored rows for {len(prompts)} completions")
        outcomes = gather_object([outcome(r).value for r in rows])
        behaviors = gather_object([None if r.behavior is None else Behavior(r.behavior).value for r in rows])
        self._scored_step = {"outcomes": outcomes, "behaviors": behaviors, "rewards_per_func": rewards_per_func.clone()}
        if self.args.advantage == "coupled":
            config = self.advantage_config
            rewards_per_func = rewards_per_func.clone()
            column = rewards_per_func[:, 0].view(-1, self._group_size())
            codes = outcome_codes(outcomes).reshape(tuple(column.shape))
            rewards_per_func[:, 0] = coupled_rewards_grouped(column, codes, config).view(-1)
        return rewards_per_func

    def _group_size(self) -> int:
        return self.num_generations if self.model.training else self.num_generations_eval

    # -- the TIAR adjustment and the logs ------------------------------------------------------------

    def _generate_and_score_completions(self, inputs):  # type: ignore[override]
        output = super()._generate_and_score_completions(inputs)
        if not self._scored_step:
            return output
        mode = "train" if self.model.training else "eval"
        g = self._group_size()
        local = output["advantages"]
        process_slice = slice(self.accelerator.process_index * len(local),
                              (self.accelerator.process_index + 1) * len(local))
        outcomes = self._scored_step["outcomes"]
        codes = outcome_codes(outcomes)
        trl_local = local.clone()
        bonus_all = torch.zeros(len(outcomes))
        if self.args.advantage == "tiar":
            rewards = combine_rewards(self._scored_step["rewards_per_func"], self.reward_weights).view(-1, g)
            grouped_codes = codes.reshape(-1, g)
            plain = advantages_grouped(rewards, None, AdvantageConfig(scale_rewards=self.advantage_config.scale_rewards))
            bonus = tiar_bonus_grouped(rewards, grouped_codes, self.advantage_config)
            adjusted = (plain + bonus).view(-1)  # = advantages_grouped(..., advantage="tiar")
            bonus_all = bonus.view(-1).detach().cpu()
            output["advantages"] = adjusted[process_slice].to(local.device)
            all_adv = adjusted.detach().cpu()
            logged = self._logs["advantages"]
            for i, value in enumerate(all_adv.tolist()):  # TRL logged the pre-adjustment values last
                logged[len(logged) - len(all_adv) + i] = value
        else:
            all_adv = torch.as_tensor(list(self._logs["advantages"])[-len(outcomes):])
        self._log_step(mode, outcomes, self._scored_step["behaviors"], codes, g, bonus_all, all_adv)
        self.last_step = {
            "outcomes": outcomes,
            "behaviors": self._scored_step["behaviors"],
            "rewards_per_func": self._scored_step["rewards_per_func"].detach().cpu(),
            "trl_advantages": trl_local.detach().cpu(),
            "advantages": output["advantages"].detach().cpu(),
            "prompt_ids": output["prompt_ids"].detach().cpu(),
            "completion_ids": output["completion_ids"].detach().cpu(),
            "tiar_bonus": bonus_all[process_slice],
            "process_slice": process_slice,
            "group_size": g,
        }
        return output

    def _log_step(self, mode: str, outcomes: list[str], behaviors: list[str | None], codes: Any, g: int,
                  bonus: Any, advantages: Any) -> None:
        metrics = self._metrics[mode]
        counts = Counter(outcomes)
        for name in ("correct", "wrong", "abstain", "unscored"):
            metrics[f"abstain/{name}"].append(counts[name] / len(outcomes))
        p = group_success_rates(codes.reshape(-1, g))
        finite = [x for x in p.tolist() if not math.isnan(x)]
        metrics["abstain/p_mean"].append(sum(finite) / len(finite) if finite else float("nan"))
        abstained = codes == ABSTAIN
        metrics["abstain/tiar_bonus_mean"].append(float(bonus[torch.as_tensor(abstained)].mean())
                                                  if abstained.any() else 0.0)
        labelled = [b for b in behaviors if b is not None]
        for b in Behavior:
            metrics[f"abstain/behavior/{b.value}"].append(labelled.count(b.value) / len(labelled) if labelled else 0.0)
        metrics["abstain/advantage_mean"].append(float(advantages.mean()))
        metrics["abstain/advantage_std"].append(float(advantages.std()) if len(advantages) > 1 else 0.0)



def run_grpo(recipe: Any, out: str, resume: bool = False, progress: Any = None,
             judge_server: tuple[str | None, str | None] = (None, None)) -> Any:
    """Train a :class:`~abstain.train.recipe.GRPORecipe` into the run folder ``out`` (resumable).

    ``judge_server``: (URL, key) of an LLM judge the recipe names (never recorded).
    """
    from abstain.train.data import prompt_dataset
    from abstain.train.runner import build_config, finish, policy, start, training_arguments

    run, checkpoint = start(recipe, out, resume)
    items = recipe.data.load()
    reward = make_reward(recipe.reward, protocol=recipe.protocol, judge=recipe.judge_config(), **recipe.reward_config)
    if recipe.judge_config().uses_llm:
        reward.use_judge(recipe.judge_config().build(*judge_server))
    args = build_config(AbstainGRPOConfig, training_arguments(
        recipe, run,
        advantage=recipe.advantage, tiar_lambda=recipe.tiar_lambda, coupled_decimals=recipe.coupled_decimals,
        reward_protocol=recipe.protocol, num_generations=recipe.num_generations,
        max_completion_length=recipe.max_completion_length, temperature=recipe.temperature, top_p=recipe.top_p,
        beta=recipe.beta, loss_type=recipe.loss_type, scale_rewards=recipe.scale_rewards,
    ))
    model, peft_config = policy(recipe)
    trainer = AbstainGRPOTrainer(model=model, reward_funcs=[reward], args=args,
                                 train_dataset=prompt_dataset(items, recipe.protocol), peft_config=peft_config,
                                 callbacks=run.callbacks(progress))
    return finish(trainer, run, recipe, checkpoint)
