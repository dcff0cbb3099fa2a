"""The passes of ``abstain eval`` that ask the model again, after the responses are generated: ``consistency:K``
(``K`` more samples per response, :mod:`abstain.confidence.consistency`) and ``p_true`` (is the proposed answer
correct?, :mod:`abstain.confidence.p_true`). Each stores its value in the row's ``confidence``.

A pass works on the rows whose ``confidence`` lacks its value, chunk by chunk: each finished chunk appends its rows
again with the value (the last copy of a row wins when the run reads ``responses.jsonl``), so an interrupted pass
resumes where it stopped. What the model said in a pass is not stored, only the value.

Example::

    settings = Sampling(max_tokens=256, temperature=0.0, top_p=1.0, seed=0, batch_size=8)
    for name in query_names(("logprob", "consistency:4")):        # ('consistency:4',)
        timing.update(run_query(run, name, pending(run, name), messages, backend, settings, progress))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from abstain.backends.base import Backend, GenerationConfig
from abstain.confidence import TOP_LOGPROBS, estimator_of, samples_of
from abstain.confidence.consistency import SAMPLING_SEED_OFFSET, agreement
from abstain.confidence.p_true import p_true_messages, p_true_value
from abstain.evaluation.backend import chunk_results
from abstain.records.runs import RESPONSES, RunDir
from abstain.schema import Message, ResponseRow

__all__ = ["Progress", "Sampling", "pending", "query_names", "run_query"]

Messages = dict[tuple[str, str | None], list[Message]]


class Progress(Protocol):
    """What a pass reports to (``abstain.evaluation.run.EvalProgress``)."""

    def phase(self, name: str, total: int, done: int) -> None: ...

    def advance(self, n: int, tokens: int = 0) -> None: ...


@dataclass(frozen=True)
class Sampling:
    """The run's settings a pass generates with: budget, sampling and chunk size."""

    max_tokens: int
    temperature: float
    top_p: float
    seed: int
    batch_size: int


def query_names(confidence: Sequence[str]) -> tuple[str, ...]:
    """The estimators of a run that ask the model again (``consistency:K``, ``p_true``), in the run's order."""
    return tuple(name for name in confidence if estimator_of(name).needs in ("samples", "query"))


def pending(run: RunDir, name: str) -> list[ResponseRow]:
    """The rows of ``responses.jsonl`` still without a ``name`` value."""
    return [r for r in run.read_rows(RESPONSES, ResponseRow, keep="last") if name not in (r.confidence or {})]


@dataclass
class _Pass:
    """One estimator's pass over a run: where it writes, what it asks, how it reports."""

    run: RunDir
    name: str
    backend: Backend
    batch_size: int
    progress: Progress

    def store(self, rows: Sequence[ResponseRow], values: Sequence[float | None]) -> None:
        """Append ``rows`` again, each with its value."""
        with self.run.appender(RESPONSES) as out:
            for row, value in zip(rows, values, strict=True):
                out.append(row.model_copy(update={"confidence": {**(row.confidence or {}), self.name: value}}))

    def ask(self, rows: Sequence[ResponseRow], prompt_of: Callable[[ResponseRow], list[Message]], gen: GenerationConfig,
            value_of: Callable[[ResponseRow, list[str]], float | None]) -> int:
        """Generate for ``rows`` chunk by chunk, store ``value_of(row, texts)``; returns the tokens generated."""
        chunks = [list(rows[s:s + self.batch_size]) for s in range(0, len(rows), self.batch_size)]
        tokens = 0
        for c, texts, chunk_tokens in chunk_results(self.backend, [[prompt_of(r) for r in ch] for ch in chunks], gen):
            self.store(chunks[c], [value_of(row, samples) for row, samples in zip(chunks[c], texts, strict=True)])
            tokens += chunk_tokens
            self.progress.advance(len(chunks[c]), chunk_tokens)
        return tokens


def run_query(run: RunDir, name: str, rows: Sequence[ResponseRow], messages: Messages, backend: Backend,
              settings: Sampling, progress: Progress) -> dict[str, Any]:
    """Run the pass of estimator ``name`` over ``rows`` (their prompts in ``messages``, keyed by (item id,
    protocol)); returns its timing (``<kind>_tokens``, ``<kind>_seconds``)."""
    if not rows:
        return {}
    start = time.perf_counter()
    progress.phase(f"asking again: {name}", len(rows), 0)
    kind = estimator_of(name).name
    work = _Pass(run, name, backend, settings.batch_size, progress)
    tokens = 0
    if kind == "consistency":
        k = samples_of(name)
        for sample in sorted({r.sample for r in rows}):  # one seed per sample index of the run
            gen = GenerationConfig(max_new_tokens=settings.max_tokens, temperature=settings.temperature or 1.0,
                                   top_p=settings.top_p, n=k, seed=settings.seed + SAMPLING_SEED_OFFSET + sample)
            tokens += work.ask([r for r in rows if r.sample == sample], lambda r: messages[(r.id, r.protocol)], gen,
                               lambda r, texts: agreement(r.response, [str(t) for t in texts], r.answers))
    else:  # p_true: one token and its top alternatives, for the rows that proposed an answer
        queries = {id(r): p_true_messages(r) for r in rows}  # each response parsed once
        asked = [r for r in rows if queries[id(r)] is not None]
        silent = [r for r in rows if queries[id(r)] is None]
        work.store(silent, [None] * len(silent))
        progress.advance(len(silent))
        gen = GenerationConfig(max_new_tokens=1, logprobs=TOP_LOGPROBS)
        tokens += work.ask(asked, lambda r: queries[id(r)] or [], gen, lambda r, texts: p_true_value(texts[0]))
    return {f"{kind}_tokens": tokens, f"{kind}_seconds": time.perf_counter() - start}
