"""Training recipes: YAML files validated with pydantic, one schema per trainer (``grpo``, ``sft``, ``dpo``).

A recipe says everything that decides a training run — the model, the data (a suite, a synthesis spec
or a JSONL file), the protocol the prompts use, the reward and advantage (GRPO), the optimizer and
LoRA settings, the seed. ``abstain train grpo --recipe NAME|FILE [--set key=value …]`` loads one:
``NAME`` is a recipe shipped in ``abstain/train/recipes/``; ``--set`` overrides a field (dotted keys
reach into sections: ``--set data.synth.n=64``, values are read as YAML). A bad recipe fails with the
file, the field and what is allowed.

Example:
    >>> recipe = load_recipe("tiny-grpo", overrides=["steps=3", "advantage=coupled"])
    >>> recipe.kind, recipe.steps, recipe.advantage, recipe.data.synth.n
    ('grpo', 3, 'coupled', 4)
    >>> load_recipe("tiny-grpo", overrides=["advantage=tair"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: .../tiny-grpo.yaml (with --set advantage=tair): field 'advantage': Input should be 'grpo', 'tiar' or 'coupled'

A recipe that loads but would likely waste its run gets one warning at load: a LoRA adapter trained at a full
fine-tune's learning rate (below :data:`LORA_MIN_LEARNING_RATE`; :func:`lora_rate_warning`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from abstain.judges.options import JudgeConfig
from abstain.protocols import PROTOCOLS
from abstain.schema import DataError
from abstain.train.data.spec import STRICT, DataSpec, SynthSpec, UMWPSpec, ValidationSpec

__all__ = [
    "DPORecipe",
    "DataSpec",
    "LORA_MIN_LEARNING_RATE",
    "UMWPSpec",
    "GRPORecipe",
    "LoraSpec",
    "PipelineRecipe",
    "Recipe",
    "SFTRecipe",
    "Stage",
    "SynthSpec",
    "TRACKING_FIELDS",
    "Truncation",
    "load_recipe",
    "lora_rate_warning",
    "recipe_path",
    "shipped_recipes",
]

log = logging.getLogger(__name__)

_STRICT = STRICT  # one strictness for every section

#: below this learning rate a LoRA adapter barely trains: LoRA's best rate is about ten times a full fine-tune's
#: (Thinking Machines' "LoRA Without Regret", Schulman et al. 2025; TRL's guide of that name), about 1e-5 to 2e-4
LORA_MIN_LEARNING_RATE = 5e-6
#: recipe fields that say where a run's curves go, not what it trains: a rerun may change them
#: (:mod:`abstain.train.trainers.runner` leaves them out of the comparison with ``config.json``)
TRACKING_FIELDS = ("report_to", "run_name")
#: what an SFT / DPO row longer than ``max_length`` does (:mod:`abstain.train.data.lengths`)
Truncation = Literal["error", "drop", "cut"]


def _truncation() -> Any:
    return Field(default="error", description="a row longer than max_length tokens (its prompt through the chat "
                 "template + its completion, DPO: the longer answer; TRL would cut its end, the decision with it): "
                 "error (default) refuses the run naming the length it needs; drop leaves such rows out; cut lets TRL "
                 "cut them, with a warning (smoke tests, speed checks); counted in config.json's lengths")


class LoraSpec(BaseModel):
    """LoRA adapters (PEFT) instead of a full fine-tune."""

    model_config = _STRICT
    r: int = Field(default=16, ge=1, description="rank")
    alpha: int = Field(default=32, ge=1, description="scaling numerator (lora_alpha)")
    dropout: float = Field(default=0.0, ge=0, lt=1, description="dropout on the adapter input")
    target_modules: list[str] | Literal["all-linear"] = Field(default="all-linear", description="modules to adapt")

    def peft_config(self) -> Any:
        try:
            from peft import LoraConfig
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise DataError(f"LoRA needs PEFT: pip install 'abstain[train]' ({exc})") from None
        return LoraConfig(r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout,
                          target_modules=self.target_modules, task_type="CAUSAL_LM")


class Recipe(BaseModel):
    """Fields every trainer shares."""

    model_config = _STRICT
    kind: str = Field(description="the trainer: grpo | sft | dpo (pipeline: a recipe of stages)")
    name: str = Field(description="the recipe's name (the default run folder: runs/<name>)")
    description: str = Field(default="", description="one line on what the recipe trains (abstain train recipes)")
    model: str = Field(default="bundled", description="bundled | hf:<dir or hub id> | a training run folder")
    data: DataSpec | None = Field(default=None, description="the training items (GRPO; SFT unless sft_file)")
    validation: ValidationSpec | None = Field(default=None, description="items the policy answers while it trains "
                                              "(every N steps, at the end), scored like abstain eval (a suite is "
                                              "allowed: validation is not training)")
    protocol: str = Field(default="idk", description="the protocol whose prompts the model is trained on")
    seed: int = Field(default=0, description="training seed (sampling, shuffling, LoRA init)")
    steps: int | None = Field(default=None, ge=1, description="optimizer steps (max_steps); or give epochs")
    epochs: float | None = Field(default=None, gt=0, description="passes over the data (when steps is not set)")
    learning_rate: float = Field(gt=0, description="peak learning rate")
    lr_scheduler: str = Field(default="linear", description="transformers scheduler name")
    warmup_ratio: float = Field(default=0.0, ge=0, lt=1, description="share of the steps over which the learning "
                                "rate rises linearly from 0 to its peak")
    batch_size: int = Field(ge=1, description="the global batch: rows per optimizer step over all processes (GRPO: "
                            "completions; SFT / DPO: examples), split over the processes (abstain.train.trainers.distributed)")
    micro_batch_size: int | None = Field(default=None, ge=1, description="rows per process per forward pass: the "
                                         "gradient accumulation follows (default: batch_size / processes)")
    gradient_accumulation_steps: int = Field(default=1, ge=1, description="forward passes per optimizer step "
                                             "(with micro_batch_size: leave it at 1, it follows)")
    max_grad_norm: float = Field(default=1.0, gt=0, description="gradients are clipped to this global norm")
    weight_decay: float = Field(default=0.0, ge=0, description="AdamW's decoupled weight decay")
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        default="auto", description="the weights' precision (base, reference model, rollouts, final/): auto is "
        "bfloat16 on a GPU that supports it, float32 on a CPU (abstain.train.trainers.policy)")
    master_weights: Literal["auto", "float32", "bfloat16"] = Field(
        default="auto", description="a full fine-tune's trainable weights and optimizer state: auto is float32 (with "
        "dtype bfloat16: float32 masters, bfloat16 autocast compute, as mixed precision does); bfloat16 trains pure "
        "bfloat16 weights (an update below a weight's precision is lost: at lr 1e-6 most of them). LoRA: leave it at "
        "auto (the adapter trains in float32 on its base, PEFT's convention)")
    attn_implementation: str | None = Field(default=None, description="transformers' attention (eager, sdpa, "
                                            "flash_attention_2, ...); null: transformers' choice")
    gradient_checkpointing: bool | Literal["auto"] = Field(
        default="auto", description="recompute activations in the backward pass (memory for time): auto is on on a "
        "GPU (TRL's default), off on a CPU")
    lora: LoraSpec | None = Field(default=None, description="LoRA settings, or null for a full fine-tune")
    adapter: str | None = Field(default=None, description="continue training this LoRA adapter (a run folder "
                                "or an adapter folder) on top of `model`")
    save_steps: int = Field(default=50, ge=1, description="checkpoint every N steps (--resume starts there)")
    save_total_limit: int = Field(default=2, ge=1, description="checkpoints kept (the oldest go first; the best "
                                  "validation's is always kept)")
    threads: int = Field(default=2, ge=1, description="torch CPU threads of the machine (N processes on it: "
                         "threads // N each)")
    report_to: list[str] = Field(default_factory=list, description="experiment trackers the main process reports "
                                 "to (transformers' report_to: tensorboard, wandb, mlflow, ...; all: every one "
                                 "installed); TensorBoard writes to <run folder>/tensorboard")
    run_name: str | None = Field(default=None, description="the run's name in the trackers (default: the run "
                                 "folder's name)")
    trl: dict[str, Any] = Field(default_factory=dict, description="any other field of the TRL config, as is")
    allow_eval_suites: list[str] = Field(default_factory=list, description="suites this run may train on although "
                                         "abstain keeps every evaluation suite out of training (abstain.data.guard): "
                                         "their names, or all; recorded in config.json")

    @field_validator("allow_eval_suites")
    @classmethod
    def _known_suites(cls, names: list[str]) -> list[str]:
        from abstain.data.guard import allowed_suites

        allowed_suites(names)
        return names

    @field_validator("protocol")
    @classmethod
    def _known_protocol(cls, value: str) -> str:
        if value not in PROTOCOLS:
            raise ValueError(f"unknown protocol {value!r}; choose one of {sorted(PROTOCOLS)}")
        return value

    @model_validator(mode="after")
    def _length(self) -> Recipe:
        if (self.steps is None) == (self.epochs is None):
            raise ValueError("give exactly one of steps or epochs")
        if self.adapter is not None and self.lora is not None:
            raise ValueError("give lora (a new adapter) or adapter (continue one), not both")
        from abstain.data.guard import allowed_suites

        allowed = allowed_suites(self.allow_eval_suites)
        spec = self.data  # validation may name any suite: it is not trained on
        if spec is not None and spec.suite is not None and spec.suite not in allowed:
            raise ValueError(f"data.suite {spec.suite!r} is an evaluation suite abstain keeps out of training "
                             f"(abstain.data.guard); train on a synth spec, umwp or a file, or opt in with "
                             f"allow_eval_suites: [{spec.suite}]")
        check = self.validation
        if check is not None:
            if check.protocol is not None and check.protocol not in PROTOCOLS:
                raise ValueError(f"validation.protocol: unknown protocol {check.protocol!r}; choose one of "
                                 f"{sorted(PROTOCOLS)}")
            if check.final == "best" and (check.every is None or check.every % self.save_steps):
                raise ValueError(f"validation.final: best keeps the best validation's checkpoint, so validation.every "
                                 f"({check.every}) must be a multiple of save_steps ({self.save_steps})")
        split = sorted({"per_device_train_batch_size", "gradient_accumulation_steps"} & set(self.trl))
        if split:
            raise ValueError(f"trl: {', '.join(split)} is abstain's to set: give the global batch_size, and "
                             "micro_batch_size or gradient_accumulation_steps, in the recipe itself")
        own = sorted((set(TRACKING_FIELDS) | ({"max_length"} if hasattr(self, "max_length") else set())) & set(self.trl))
        if own:
            raise ValueError(f"trl: {', '.join(own)} is a field of the recipe itself: set it there, not under trl")
        if "none" in self.report_to or ("all" in self.report_to and len(self.report_to) > 1):
            raise ValueError(f"report_to: {self.report_to} — give trackers by name, [all] (every one installed), "
                             "or [] (none)")
        return self


class GRPORecipe(Recipe):
    """``abstain train grpo``: GRPO with an abstain reward preset and GRPO / TIAR / coupled advantages."""

    kind: Literal["grpo"] = Field(description="grpo: GRPO with an abstain reward")
    reward: str | dict[str, float] = Field(default="ternary", description="a preset or {preset: weight}")
    reward_modules: list[str] = Field(default_factory=list, description="where presets of your own are registered "
                                      "(register_preset): .py files (beside the recipe) or module names, imported "
                                      "before `reward` is checked (abstain.train.rewards.user_presets)")
    reward_config: dict[str, Any] = Field(default_factory=dict, description="RewardConfig fields")
    judge: dict[str, Any] = Field(default_factory=dict, description="JudgeConfig fields (default: the rule judge "
                                  "with the preset's settings, e.g. lenient_format and answer_match math_verify for "
                                  "abstain_r1, its authors' judge)")
    advantage: Literal["grpo", "tiar", "coupled"] = Field(
        default="tiar", description="grpo: TRL's group-normalized advantage; tiar: plus lambda(1 - 2p) on each "
        "abstention, p the group's share of correct answers (TIAR); coupled: the authors' code, lambda(1 - 2p) folded "
        "into the abstentions' rewards before normalizing (abstain.train.rewards.advantages)")
    tiar_lambda: float = Field(default=1.0, description="lambda of tiar and coupled (TruthRL's tira_lambda: 0.3)")
    coupled_decimals: int | None = Field(default=None, description="coupled only: round lambda(1 - 2p) to this many "
                                         "decimals (the authors' code: 3)")
    num_generations: int = Field(default=4, ge=2, description="completions per prompt (the GRPO group)")
    max_completion_length: int = Field(default=64, ge=1, description="generation budget per completion")
    temperature: float = Field(default=1.0, gt=0, description="sampling temperature of the rollouts")
    top_p: float = Field(default=1.0, gt=0, le=1, description="nucleus sampling mass of the rollouts")
    beta: float = Field(default=0.0, ge=0, description="KL coefficient (TRL's default 0)")
    loss_type: str = Field(default="dapo", description="TRL's loss_type")
    scale_rewards: Literal["group", "batch", "none"] = Field(
        default="group", description="TRL's scale_rewards: divide the advantages by the group's reward std, the "
        "batch's, or not at all (Dr. GRPO)")
    rollout: Literal["transformers", "vllm"] = Field(default="transformers", description="who samples the "
                                                     "completions: TRL's generate, or vLLM fed the policy's weights "
                                                     "every step (abstain.train.trainers.rollout)")
    dynamic_sampling: bool | Literal["refill"] = Field(
        default=False, description="DAPO's dynamic sampling: true drops from the loss every group whose completions all "
        "got the same reward (no learning signal, only dilution); refill samples more prompts until the batch holds "
        "batch_size / num_generations such informative groups (abstain.train.trainers.dynamic_sampling)")
    max_generation_batches: int = Field(default=4, ge=1, description="refill: generation rounds a step may sample, "
                                        "the first included (veRL's filter_groups.max_num_gen_batches)")

    @field_validator("reward_modules")
    @classmethod
    def _import_reward_modules(cls, entries: list[str]) -> list[str]:
        from abstain.train.rewards.user_presets import import_reward_modules

        import_reward_modules(entries)
        return entries

    @model_validator(mode="after")
    def _check_reward(self) -> GRPORecipe:
        from abstain.train.rewards.presets import make_reward

        if self.data is None:
            raise ValueError("a GRPO recipe needs data (a suite, a file or a synth spec)")
        if self.batch_size % self.num_generations:
            raise ValueError(f"batch_size ({self.batch_size}) must be a multiple of num_generations "
                             f"({self.num_generations}): each prompt's group is trained together")
        make_reward(self.reward, **{**self.reward_config, "judge": self.judge_config()})
        return self

    def judge_config(self) -> JudgeConfig:
        """The judge of the reward: the rule judge with the preset's settings, then the recipe's ``judge``."""
        from dataclasses import replace

        from abstain.train.rewards.presets import preset_judge

        try:
            return replace(preset_judge(self.reward), **self.judge)
        except TypeError as exc:  # an unknown field
            raise ValueError(f"judge: {exc}".replace("JudgeConfig.__init__() got ", "")) from None


class SFTRecipe(Recipe):
    """``abstain train sft``: supervised fine-tuning on prompt/completion data, completion-only loss.

    The rows come from ``data`` (items whose verifiable targets :mod:`abstain.train.data.sft_data` builds and
    self-checks, with ``targets`` settings) or from ``sft_file`` (rows made by ``abstain sft-data``,
    ``abstain probe-data`` …).
    """

    kind: Literal["sft"] = Field(description="sft: supervised fine-tuning")
    targets: dict[str, Any] = Field(default_factory=dict, description="TargetConfig fields, plus aca_mix "
                                    "('ELICIT=0.4,COND=0.3,ABS=0.3') and on_fail (error | drop)")
    sft_file: str | None = Field(default=None, description="prompt/completion JSONL instead of building targets")
    max_length: int = Field(default=512, ge=16, description="longest prompt + completion in tokens")
    truncation: Truncation = _truncation()

    @model_validator(mode="after")
    def _one_source(self) -> SFTRecipe:
        if (self.data is None) == (self.sft_file is None):
            raise ValueError("an SFT recipe needs exactly one of data (targets are built) or sft_file")
        return self

    def sft_config(self) -> Any:
        from abstain.train.data.sft_data import SFTConfig, parse_aca_mix
        from abstain.train.data.targets.build import TargetConfig

        options = dict(self.targets)
        extra: dict[str, Any] = {}
        if "aca_mix" in options:
            extra["aca_mix"] = parse_aca_mix(str(options.pop("aca_mix")))
        if "on_fail" in options:
            extra["on_fail"] = options.pop("on_fail")
        return SFTConfig(protocol=self.protocol, targets=TargetConfig(**options), seed=self.seed, **extra)


class DPORecipe(Recipe):
    """``abstain train dpo``: DPO on prompt/chosen/rejected pairs (e.g. from a probe file)."""

    kind: Literal["dpo"] = Field(description="dpo: DPO on preference pairs")
    pairs_file: str | None = Field(default=None, description="DPO pairs JSONL (prompt, chosen, rejected)")
    beta: float = Field(default=0.1, gt=0, description="DPO's beta")
    max_length: int = Field(default=512, ge=16, description="longest prompt + chosen (or rejected) in tokens")
    truncation: Truncation = _truncation()

    @model_validator(mode="after")
    def _pairs(self) -> DPORecipe:
        if self.pairs_file is None:
            raise ValueError("a DPO recipe needs pairs_file (made by `abstain probe-data --kind dpo`)")
        return self


class Stage(BaseModel):
    """One stage of a pipeline: a recipe (with overrides) trained into ``<pipeline out>/<name>``."""

    model_config = _STRICT
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="the stage's folder under the pipeline's")
    recipe: str = Field(description="a shipped recipe's name or a YAML file")
    set: list[str] = Field(default_factory=list, description="overrides; {out} is the pipeline's folder")


class PipelineRecipe(BaseModel):
    """``abstain train pipeline``: recipes run one after another (e.g. cold-start SFT, then GRPO on its adapter).

    A stage whose ``final/`` exists is done and skipped; a stage with checkpoints resumes — so rerunning the
    pipeline continues where it stopped.
    """

    model_config = _STRICT
    kind: Literal["pipeline"]
    name: str = Field(description="the pipeline's name (the default run folder: runs/<name>)")
    description: str = Field(default="", description="one line on what the pipeline trains")
    stages: list[Stage] = Field(min_length=1, description="the stages in order, each a recipe with overrides "
                                "(a later stage names an earlier one's output, e.g. adapter={out}/sft)")

    def stage_recipes(self, out: str) -> list[tuple[Stage, Recipe]]:
        """Each stage with its loaded recipe (``{out}`` in overrides replaced); errors name the stage."""
        loaded = []
        for stage in self.stages:
            overrides = [o.replace("{out}", out) for o in stage.set]
            try:
                recipe = load_recipe(stage.recipe, overrides)
            except DataError as exc:
                raise DataError(f"pipeline {self.name!r}, stage {stage.name!r}: {exc}") from None
            if isinstance(recipe, PipelineRecipe):
                raise DataError(f"pipeline {self.name!r}, stage {stage.name!r}: a stage cannot be a pipeline")
            loaded.append((stage, recipe))
        return loaded


KINDS: dict[str, type[BaseModel]] = {"grpo": GRPORecipe, "sft": SFTRecipe, "dpo": DPORecipe,
                                     "pipeline": PipelineRecipe}


def _recipes_dir() -> Path:
    return Path(str(resources.files("abstain") / "train" / "recipes"))


def shipped_recipes() -> dict[str, Path]:
    """The recipes that ship with abstain, by name."""
    return {p.stem: p for p in sorted(_recipes_dir().glob("*.yaml"))}


def recipe_path(name_or_file: str | os.PathLike[str]) -> Path:
    """A shipped recipe's file, or the given file."""
    path = Path(name_or_file)
    if path.suffix in (".yaml", ".yml") or path.is_file():  # a folder of that name is no recipe (runs/cpu-demo)
        if not path.is_file():
            raise DataError(f"{path}: no such recipe file")
        return path
    shipped = shipped_recipes()
    if str(name_or_file) not in shipped:
        raise DataError(f"unknown recipe {str(name_or_file)!r}; shipped: {', '.join(shipped)} (or give a .yaml file)")
    return shipped[str(name_or_file)]


def _set(data: dict[str, Any], assignment: str) -> None:
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise DataError(f"--set {assignment!r}: expected key=value, e.g. --set steps=10")
    node = data
    parts = key.strip().split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise DataError(f"--set {assignment!r}: {part!r} is not a section")
        node = child
    node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else None


def _describe(error: ValidationError) -> str:
    parts = []
    for err in error.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"field '{loc}': {err['msg']}" if loc else err["msg"])
    return "; ".join(parts)


def _relative_to(data: dict[str, Any], folder: Path) -> None:
    """Data files named relative to the recipe resolve against its folder (unless they exist from here)."""
    def beside(value: str) -> str:
        path = Path(os.path.expanduser(value))
        return str(folder / path) if not path.is_absolute() and not path.exists() and (folder / path).exists() else value

    for section, key in (("data", "file"), ("validation", "file"), (None, "sft_file"), (None, "pairs_file"),
                         (None, "adapter")):
        node = data.get(section) if section else data
        if isinstance(node, dict) and isinstance(node.get(key), str):
            node[key] = beside(node[key])
    if isinstance(data.get("reward_modules"), list):  # .py files of reward presets, absolute (module names as they are)
        data["reward_modules"] = [_absolute(beside(m)) if isinstance(m, str) and m.endswith(".py") else m
                                  for m in data["reward_modules"]]


def _absolute(value: str) -> str:
    """A file that exists, as an absolute path (a rerun from another folder names the same file); else as given."""
    path = Path(os.path.expanduser(value))
    return str(path.resolve()) if path.is_file() else value


def load_recipe(name_or_file: str | os.PathLike[str], overrides: Sequence[str] = (),
                kind: str | None = None) -> Any:
    """Load, override (``key=value``) and validate a recipe; ``kind`` checks it is for that trainer."""
    path = recipe_path(name_or_file)
    where = f"{path}" + (f" (with --set {', '.join(overrides)})" if overrides else "")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DataError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: a recipe is a mapping of fields, got {type(data).__name__}")
    for assignment in overrides:
        _set(data, assignment)
    data.setdefault("name", path.stem)
    _relative_to(data, path.parent)
    recipe_kind = data.get("kind")
    if recipe_kind not in KINDS:
        raise DataError(f"{where}: field 'kind': must be one of {', '.join(KINDS)} (got {recipe_kind!r})")
    if kind is not None and recipe_kind != kind:
        raise DataError(f"{where}: a {recipe_kind} recipe, but this is `abstain train {kind}`")
    try:
        recipe = KINDS[recipe_kind].model_validate(data)
    except ValidationError as exc:
        raise DataError(f"{where}: {_describe(exc)}") from None
    warning = lora_rate_warning(recipe)
    if warning is not None:
        log.warning("%s: %s", where, warning)
    return recipe


def lora_rate_warning(recipe: BaseModel) -> str | None:
    """What is wrong with a LoRA recipe's ``learning_rate`` below :data:`LORA_MIN_LEARNING_RATE`, else None.

    A LoRA adapter (a new one, ``lora``, or a continued one, ``adapter``) learns best at about ten times a full
    fine-tune's rate; at a full fine-tune's 1e-6 its B matrices, which start at zero, hardly move.

    Example:
        >>> lora_rate_warning(load_recipe("tiny-grpo")) is None
        True
        >>> lora_rate_warning(load_recipe("tiny-grpo", ["lora=null", "learning_rate=1e-6"])) is None  # full fine-tune
        True
        >>> print(lora_rate_warning(load_recipe("tiny-grpo").model_copy(update={"learning_rate": 1e-6})))
        ... # doctest: +ELLIPSIS
        recipe field 'learning_rate': 1e-06 trains a LoRA adapter at a full fine-tune's rate; LoRA's usual range is ...
    """
    if not isinstance(recipe, Recipe) or (recipe.lora is None and recipe.adapter is None):
        return None
    if recipe.learning_rate >= LORA_MIN_LEARNING_RATE:
        return None
    return (f"recipe field 'learning_rate': {recipe.learning_rate:g} trains a LoRA adapter at a full fine-tune's "
            f"rate; LoRA's usual range is about 1e-5 to 2e-4 (about ten times a full fine-tune's: \"LoRA Without "
            f"Regret\", Schulman et al. 2025; TRL's guide of that name); below {LORA_MIN_LEARNING_RATE:g} an adapter "
            "barely moves (a new one's B matrices start at zero)")
