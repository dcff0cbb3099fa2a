"""The one small interface every model backend implements.

A backend turns a batch of chat prompts into texts: ``n`` samples per prompt, with the sampling
settings of a :class:`GenerationConfig`. Runs, synthesis and training all talk to models through it.

Example:
    >>> GenerationConfig(temperature=0.0).greedy
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Backend", "GenerationConfig", "Message"]

Message = dict[str, str]


@dataclass(frozen=True)
class GenerationConfig:
    """Sampling settings of one generate call.

    Attributes:
        max_new_tokens: generation budget per sample.
        temperature: 0 means greedy decoding.
        top_p: nucleus sampling mass.
        n: samples per prompt.
        seed: base seed; backends derive a per-prompt seed from it so results do not depend on batching.
    """

    max_new_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be >= 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0 (0 = greedy)")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        if self.n < 1:
            raise ValueError("n (samples per prompt) must be >= 1")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@runtime_checkable
class Backend(Protocol):
    """Generates texts for chat prompts."""

    #: a name for run records (model path, hub id or served model), never a secret
    name: str

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts for each prompt, in prompt order."""
        ...

    def close(self) -> None:
        """Release the model, threads or connections."""
        ...
