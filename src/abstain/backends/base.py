"""The one small interface every model backend implements.

A backend turns a batch of chat prompts into texts: ``n`` samples per prompt, with the sampling
settings of a :class:`GenerationConfig`. Runs, synthesis and training all talk to models through it.

Example:
    >>> GenerationConfig(temperature=0.0).greedy
    True
    >>> template_think_prefix("<|im_start|>assistant\\n<think>\\n")
    '<think>\\n'
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from abstain.schema import Message

__all__ = [
    "Backend",
    "GenerationConfig",
    "GenerationStats",
    "Message",
    "MissingDependencyError",
    "sample_seed",
    "template_think_prefix",
]


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


class MissingDependencyError(ImportError, ValueError):
    """An optional dependency of a backend is not installed; the message says what to install.

    It is an ``ImportError`` (what it is) and a ``ValueError`` (so the CLI shows it as one clean line).
    """


@dataclass
class GenerationStats:
    """Running totals of a backend: prompts, samples and generated tokens (EOS included), seconds."""

    prompts: int = 0
    samples: int = 0
    new_tokens: int = 0
    seconds: float = 0.0
    #: decoding steps (a batch runs until its longest row ends: steps x rows >= new_tokens), where a backend counts them
    steps: int = 0
    batches: int = 0

    @property
    def tokens_per_second(self) -> float | None:
        return self.new_tokens / self.seconds if self.seconds > 0 else None


def sample_seed(messages: Sequence[Message], sample: int, base_seed: int) -> int:
    """A per-(prompt, sample) seed that does not depend on the prompt's position in a batch.

    Every backend derives its sampling seeds with this function, so a prompt's samples never depend on
    which other prompts share its batch (a resumed run regenerates them identically). The value fits
    in 31 bits, which every server's ``seed`` accepts.

    Example:
        >>> m = [{"role": "user", "content": "hi"}]
        >>> sample_seed(m, 0, 0) == sample_seed(m, 0, 0) != sample_seed(m, 1, 0)
        True
    """
    digest = zlib.crc32(json.dumps(list(messages), sort_keys=True).encode("utf-8"))
    return (digest + 1_000_003 * sample + 7_919 * base_seed) % (2**31 - 1)


def template_think_prefix(prompt_text: str) -> str:
    """The ``<think>`` opening a chat template wrote at the end of a rendered prompt, else ``""``.

    Templates of some reasoning models (DeepSeek-R1 distills) open the reasoning block in the prompt,
    so the model's text holds only ``…</think>``; backends put the opening back in front of the stored
    text so reasoning stays a balanced ``<think>…</think>`` block.
    """
    stripped = prompt_text.rstrip()
    if stripped.endswith("<think>"):
        return prompt_text[len(stripped) - len("<think>") :]
    return ""
