"""GRPO rollouts through vLLM: the policy's current weights pushed into an in-process engine, then sampled.

TRL's own ``use_vllm`` does not run on vLLM's CPU build: its colocate mode writes each tensor with the
model's ``load_weights``, which fails there (vLLM repacks CPU linear weights and drops the originals), and
its server mode needs a second process and NCCL. :class:`VLLMRollout` instead keeps one
:class:`~abstain.backends.vllm.VLLMBackend` beside the trainer and, whenever the optimizer has stepped
since the last push, hands it the policy's weights under their checkpoint names (a LoRA adapter merged in
first and unmerged after) through vLLM's in-place ``reload_weights``, then empties its prefix cache —
without that a prompt the engine saw before would be continued from the old weights' keys and values
(measured: 4 of 16 greedy texts off the new policy). Every completion is its own request with a seed from
(training seed, step, position), so a run and its resume sample the same.

Example (what ``rollout: vllm`` in a GRPO recipe does each generation step)::

    rollout = VLLMRollout(model, RolloutConfig(max_tokens=64, temperature=1.0))
    rollout.sync(model, step)                         # no-op when the weights did not change
    completion_ids = rollout.sample(prompt_ids, step)
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from abstain.backends.vllm import TokenRequest, VLLMBackend, VLLMOptions

__all__ = ["RolloutConfig", "VLLMRollout", "checkpoint_weights"]


@dataclass(frozen=True)
class RolloutConfig:
    """How the completions of a GRPO step are sampled."""

    max_tokens: int = field(metadata={"help": "completion budget (max_completion_length)"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus sampling mass"})
    seed: int = field(default=0, metadata={"help": "training seed (with the step and position: each request's seed)"})
    engine: VLLMOptions = field(default_factory=lambda: VLLMOptions(dtype="float32"),
                                metadata={"help": "the engine's settings"})


def _base_name(name: str) -> str:
    return name.removeprefix("base_model.model.").replace(".base_layer.", ".")


@contextmanager
def checkpoint_weights(model: Any) -> Iterator[Iterator[tuple[str, Any]]]:
    """The model's parameters under their checkpoint names; a PEFT model's LoRA merged in for the duration.

    Example (a plain model: names as ``named_parameters`` gives them)::

        with checkpoint_weights(model) as weights:
            engine.load_weights(weights)
    """
    merged = hasattr(model, "merge_adapter")
    if merged:
        model.merge_adapter()
    try:
        yield ((_base_name(n), p.data) for n, p in model.named_parameters()
               if not merged or "lora_" not in n and "modules_to_save" not in n)
    finally:
        if merged:
            model.unmerge_adapter()


class VLLMRollout:
    """An in-process vLLM engine that samples GRPO completions from the trainer's current policy."""

    def __init__(self, model_path: str, config: RolloutConfig) -> None:
        self.config = config
        self.engine = VLLMBackend(model_path, config.engine, name=f"vllm-rollout:{model_path}")
        self.synced_step: int | None = None
        self.pushes = 0

    def sync(self, model: Any, step: int) -> bool:
        """Push ``model``'s weights unless they were pushed at this optimizer step already; True if pushed."""
        if self.synced_step == step:
            return False
        with checkpoint_weights(model) as weights:
            self.engine.load_weights(weights)
        self.synced_step = step
        self.pushes += 1
        return True

    def seed(self, step: int, position: int, prompt_ids: Sequence[int]) -> int:
        """The seed of one request: the training seed, the step, the position in the batch and the prompt."""
        digest = zlib.crc32(bytes(str(list(prompt_ids)), "utf-8"))
        return (digest + 1_000_003 * position + 7_919 * step + 104_729 * self.config.seed) % (2**31 - 1)

    def sample(self, prompt_ids: Sequence[Sequence[int]], step: int, greedy: bool = False,
               offset: int = 0) -> list[list[int]]:
        """One completion per prompt (a GRPO batch repeats each prompt once per generation), in order.

        ``offset``: the position of the first prompt in the whole batch. On N processes each drives its own
        engine on its slice, and a group split over two processes must not get the same seed twice.
        """
        c = self.config
        return self.engine.generate_tokens([
            TokenRequest(ids, c.max_tokens, 0.0 if greedy else c.temperature, c.top_p, self.seed(step, offset + i, ids))
            for i, ids in enumerate(prompt_ids)])

    def close(self) -> None:
        self.engine.close()
