"""What abstain adds to accelerate's FSDP2: sharding on CPUs, and a ``final/`` save that FSDP's wrappers do not empty.

**On CPUs.** accelerate (1.16) turns FSDP on only for accelerator devices (``AcceleratorState``: MULTI_GPU, MULTI_XPU, ...):
on CPUs over gloo the same launch, from a recipe's ``trl.fsdp`` or from ``accelerate launch --config_file
fsdp2.yaml``, becomes MULTI_CPU, every process holds the whole model, the Trainer's checkpoints are unsharded, and
nothing says so. torch's FSDP2 (``fully_shard``) runs on gloo, so abstain turns accelerate's FSDP on there
(:func:`enable_fsdp_on_cpus`, before the trainer builds its Accelerator): the FSDP2 code a GPU launch runs —
sharded parameters, the gather of ``final/``, FULL or SHARDED state-dict checkpoints — is what runs on CPUs, and what
``tests/test_train_distributed.py`` checks. :func:`check_sharded` then refuses a trainer whose model is not sharded
although FSDP was asked for (the launch would otherwise run as DDP without a word).

**Saving.** A state dict gathered from FSDP's shards (accelerate's ``get_state_dict``) holds clean parameter names and
separate copies of tied weights, while the model's modules are wrapped for activation checkpointing
(``layers.0._checkpoint_wrapped_module.self_attn...``). PEFT finds an adapter's weights by walking the model's
modules, so it matched none of them and wrote an empty adapter; transformers drops a tied weight only when it shares
storage, so ``final/`` got a second copy of the embeddings as ``lm_head.weight``. :func:`without_checkpoint_wrappers`
and :func:`drop_tied_copies` are what :meth:`~abstain.train.trainers.policy.Policy.save` does about them.

Example:
    >>> enable_fsdp_on_cpus()  # idempotent; changes only launches that ask for FSDP on CPUs
    >>> enable_fsdp_on_cpus()
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["check_sharded", "drop_tied_copies", "enable_fsdp_on_cpus", "without_checkpoint_wrappers"]

_PATCHED = "_abstain_fsdp_on_cpus"


def enable_fsdp_on_cpus() -> None:
    """Let accelerate's state take FSDP on CPUs (MULTI_CPU with an FSDP plugin becomes FSDP); idempotent."""
    import accelerate.state as state
    from accelerate.utils import DistributedType

    init = state.AcceleratorState.__init__
    if getattr(init, _PATCHED, False):
        return

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        plugin = kwargs.get("fsdp_plugin")
        if plugin is not None and self.distributed_type == DistributedType.MULTI_CPU:
            # PartialState's shared state is what accelerate's prepare, gather and get_state_dict read
            state.PartialState._shared_state["distributed_type"] = DistributedType.FSDP
            self.distributed_type = DistributedType.FSDP
            self.fsdp_plugin = plugin

    setattr(__init__, _PATCHED, True)
    state.AcceleratorState.__init__ = __init__  # type: ignore[method-assign]


def check_sharded(trainer: Any, kind: str | None, world_size: int) -> None:
    """Refuse a trainer that did not shard what the policy asked to shard (``kind`` ``fsdp``) over several
    processes (on one, accelerate runs it unsharded, as it always has).

    Raises:
        RuntimeError: FSDP was asked for and the trainer's accelerator runs without it.
    """
    if kind == "fsdp" and world_size > 1 and not getattr(trainer, "is_fsdp_enabled", False):
        distributed = getattr(getattr(trainer, "accelerator", None), "distributed_type", "?")
        raise RuntimeError(f"FSDP was asked for, and the trainer's accelerator runs {distributed} without it: every "
                           "process would hold the whole model. Launch on GPUs, or report the accelerate version")


@contextmanager
def without_checkpoint_wrappers(model: Any) -> Iterator[Any]:
    """Inside, the modules that activation checkpointing wrapped are in their places unwrapped (their names lose
    ``._checkpoint_wrapped_module``); restored on exit. No collective: safe on the main process alone.

    Example:
        >>> import torch
        >>> from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
        >>> model = torch.nn.Sequential(checkpoint_wrapper(torch.nn.Linear(2, 2)))
        >>> [n for n, _ in model.named_parameters()]
        ['0._checkpoint_wrapped_module.weight', '0._checkpoint_wrapped_module.bias']
        >>> with without_checkpoint_wrappers(model):
        ...     [n for n, _ in model.named_parameters()]
        ['0.weight', '0.bias']
        >>> [n for n, _ in model.named_parameters()][0]
        '0._checkpoint_wrapped_module.weight'
    """
    swapped: list[tuple[Any, str, Any]] = []
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            inner = getattr(child, "_checkpoint_wrapped_module", None)
            if inner is not None:
                setattr(parent, name, inner)
                swapped.append((parent, name, child))
    try:
        yield model
    finally:
        for parent, name, child in reversed(swapped):
            setattr(parent, name, child)


def drop_tied_copies(state: dict[str, Any], model: Any) -> dict[str, Any]:
    """``state`` without the output embeddings' weight when the model ties it to the input embeddings (a gathered
    state dict holds it twice, as two tensors; the model's own holds it once, shared).

    Example:
        >>> from transformers import LlamaConfig, LlamaForCausalLM
        >>> model = LlamaForCausalLM(LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=8, num_hidden_layers=1,
        ...                                      num_attention_heads=2, tie_word_embeddings=True))
        >>> state = {k: v.clone() for k, v in model.state_dict().items()}  # what a gather returns
        >>> state["lm_head.weight"] = state["model.embed_tokens.weight"].clone()
        >>> sorted(set(state) - set(drop_tied_copies(state, model)))
        ['lm_head.weight']
    """
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    if not getattr(config, "tie_word_embeddings", False):
        return state
    names = {id(module): name for name, module in model.named_modules()}
    inputs, outputs = model.get_input_embeddings(), model.get_output_embeddings()
    if inputs is None or outputs is None or id(outputs) not in names:
        return state
    copy = f"{names[id(outputs)]}.weight"
    if copy in state and f"{names[id(inputs)]}.weight" in state:
        return {k: v for k, v in state.items() if k != copy}
    return state
