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
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from abstain.backends.token_scores import ScoredText
from abstain.schema import Message

__all__ = [
    "Backend",
    "ChunkedRequests",
    "ChunkStream",
    "GenerationConfig",
    "GenerationStats",
    "Message",
    "MAX_TOP_LOGPROBS",
    "MissingDependencyError",
    "ScoredText",
    "sample_requests",
    "sample_seed",
    "template_think_prefix",
]


#: the most top alternatives per token a generate call may ask log-probabilities for (OpenAI's ``top_logprobs``)
MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class GenerationConfig:
    """Sampling settings of one generate call.

    Attributes:
        max_new_tokens: generation budget per sample.
        temperature: 0 means greedy decoding.
        top_p: nucleus sampling mass.
        n: samples per prompt.
        seed: base seed; backends derive a per-prompt seed from it so results do not depend on batching.
        logprobs: 0 for plain texts; k > 0 returns :class:`~abstain.backends.token_scores.ScoredText` objects: each
            token's log-probability and the entropy of its top-k alternatives (k <= 20, what OpenAI-compatible
            servers allow).
    """

    max_new_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int = 0
    logprobs: int = 0

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be >= 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0 (0 = greedy)")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        if self.n < 1:
            raise ValueError("n (samples per prompt) must be >= 1")
        if not 0 <= self.logprobs <= MAX_TOP_LOGPROBS:
            raise ValueError(f"logprobs (top alternatives per token) must be between 0 and {MAX_TOP_LOGPROBS}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@runtime_checkable
class Backend(Protocol):
    """Generates texts for chat prompts."""

    #: a name for run records (model path, hub id or served model), never a secret
    name: str

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts for each prompt, in prompt order (:class:`ScoredText` when ``config.logprobs``)."""
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


#: what :meth:`ChunkStream.generate_chunks` yields: (chunk index, its texts per prompt, tokens generated or None)
ChunkResult = tuple[int, list[list[str]], "int | None"]


@runtime_checkable
class ChunkStream(Protocol):
    """A backend that takes many chunks of prompts at once and gives each back as soon as it is done.

    An engine that schedules hundreds of sequences (vLLM, a server) is then fed every prompt left to do instead of
    one chunk at a time, and is not left waiting for a chunk's slowest sequence; ``abstain eval`` writes each chunk
    as it comes, so the chunks stay the resume points.
    """

    def generate_chunks(self, chunks: Sequence[Sequence[list[Message]]],
                        config: GenerationConfig) -> Iterator[ChunkResult]:
        """``(chunk index, config.n texts per prompt, tokens generated or None)`` for every chunk, in the order the
        chunks finish."""
        ...


def sample_requests(prompts: Sequence[list[Message]], config: GenerationConfig) -> list[tuple[int, int, int]]:
    """The (prompt index, sample index, seed) of every request: one per sample, or one per prompt when greedy.

    Example:
        >>> p = [[{"role": "user", "content": "hi"}]]
        >>> reqs = sample_requests(p, GenerationConfig(temperature=1.0, n=2, seed=3))
        >>> [(i, k) for i, k, _ in reqs], reqs[1][2] == sample_seed(p[0], 1, 3)
        ([(0, 0), (0, 1)], True)
    """
    samples = 1 if config.greedy else config.n
    return [(i, k, sample_seed(p, k, config.seed)) for i, p in enumerate(prompts) for k in range(samples)]


class ChunkedRequests:
    """The requests of several chunks of prompts (:func:`sample_requests` over all of them), and each chunk's texts
    put together as its requests finish, in any order (what a :class:`ChunkStream` backend yields).

    Example:
        >>> p = [[{"role": "user", "content": q}] for q in "abc"]
        >>> work = ChunkedRequests([p[:2], p[2:]], GenerationConfig())
        >>> [i for i, _, _ in work.requests]
        [0, 1, 2]
        >>> work.done(2, "C", 1), work.done(0, "A", 1), work.done(1, "B", 2)
        ((1, [['C']], 1), None, (0, [['A'], ['B']], 3))
    """

    def __init__(self, chunks: Sequence[Sequence[list[Message]]], config: GenerationConfig) -> None:
        self.config = config
        self.prompts = [p for chunk in chunks for p in chunk]
        self._owner = [k for k, chunk in enumerate(chunks) for _ in chunk]
        self._start = [sum(len(c) for c in chunks[:k]) for k in range(len(chunks))]
        self._size = [len(c) for c in chunks]
        self.requests = sample_requests(self.prompts, config)
        samples = 1 if config.greedy else config.n
        self._texts: list[list[str | None]] = [[None] * samples for _ in self.prompts]
        self._left = Counter(self._owner[i] for i, _, _ in self.requests)
        self._tokens: list[int | None] = [0] * len(chunks)

    def done(self, request: int, text: str, tokens: int | None) -> ChunkResult | None:
        """Record request ``request``'s text; the chunk's result once it was the chunk's last request, else None."""
        i, k, _ = self.requests[request]
        self._texts[i][k] = text
        chunk = self._owner[i]
        counted = self._tokens[chunk]
        self._tokens[chunk] = None if tokens is None or counted is None else counted + tokens
        self._left[chunk] -= 1
        if self._left[chunk]:
            return None
        rows = [[t or "" for t in texts] for texts in self._texts[self._start[chunk]:self._start[chunk] + self._size[chunk]]]
        if self.config.greedy:
            rows = [texts * self.config.n for texts in rows]
        return chunk, rows, self._tokens[chunk]
