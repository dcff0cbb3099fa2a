"""Generation through any OpenAI-compatible server (vLLM ``serve``, SGLang, llama.cpp server, hosted APIs).

Built on :class:`abstain.llm.ChatClient`: bounded concurrency (32 requests in flight by default, across the chunks
of an evaluation: :meth:`OpenAIBackend.generate_chunks`), retries with back-off, the key from
``api_key`` or ``ABSTAIN_API_KEY`` / ``OPENAI_API_KEY`` (never stored), the URL from ``base_url`` or
``ABSTAIN_BASE_URL`` / ``OPENAI_BASE_URL``. Each of the ``n`` samples of a prompt is its own request
with a seed derived from the prompt text, the sample index and ``GenerationConfig.seed`` — so results
do not depend on batching or on which rows a resumed run still has to do (servers that honor
``seed``, such as vLLM and llama.cpp, are then reproducible). Reasoning that a server returns apart
(``reasoning_content``) is kept as ``<think>…</think>`` in front of the text, so parsing skips it.

OpenAI's reasoning models (o1, o3, o4-mini, the gpt-5 family) take ``max_completion_tokens`` and refuse
``temperature``: with ``reasoning="auto"`` (the default) the first request they refuse is sent again that way and so
is every later one; ``reasoning=True`` sends it so from the start, ``reasoning=False`` never
(:mod:`abstain.llm.reasoning`; ``abstain eval --backend-option reasoning=true``).

Example:
    >>> backend = OpenAIBackend("Qwen/Qwen2.5-7B-Instruct", base_url="http://127.0.0.1:8000/v1")
    >>> backend.name
    'Qwen/Qwen2.5-7B-Instruct'
    >>> backend.close()
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from abstain.backends.base import ChunkedRequests, ChunkResult, GenerationConfig, Message, sample_seed
from abstain.backends.token_scores import ScoredText, piece_ends, top_entropy
from abstain.llm import BACKEND_ENV, ChatClient, ClientConfig, LLMError, resolve_endpoint
from abstain.llm.reasoning import reasoning_mode

__all__ = ["OpenAIBackend", "sample_seed"]


class OpenAIBackend:
    """A :class:`~abstain.backends.base.Backend` over an OpenAI-compatible chat endpoint."""

    returns_logprobs = True  # GenerationConfig.logprobs > 0 gives ScoredText

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 32,
        timeout_s: float = 600.0,
        retries: int = 4,
        cache: bool = False,
        reasoning: bool | str = "auto",
    ) -> None:
        self.endpoint = resolve_endpoint(base_url=base_url, model=model, api_key=api_key, env=BACKEND_ENV)
        self.name = model
        self.client = ChatClient(
            self.endpoint,
            ClientConfig(concurrency=concurrency, timeout_s=timeout_s, retries=retries, cache=cache, trip_after=3,
                         reasoning=reasoning_mode(reasoning)),
        )

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts per prompt, in prompt order (greedy: one request, copied ``n`` times).

        Raises :class:`~abstain.llm.LLMError` when some request failed for good (with ``cache=True`` the
        answered ones are kept on disk, so a rerun only pays for the rest).
        """
        return next(self.generate_chunks([prompts], config))[1] if prompts else []

    def generate_chunks(self, chunks: Sequence[Sequence[list[Message]]],
                        config: GenerationConfig) -> Iterator[ChunkResult]:
        """Every request of every chunk sent ``concurrency`` at a time, each chunk given back as soon as its last
        request is answered (:class:`~abstain.backends.base.ChunkStream`: the server is not left waiting for a
        chunk's slowest answer); a request that failed for good stops it with :class:`~abstain.llm.LLMError`."""
        work = ChunkedRequests(chunks, config)
        stream = self.client.chat_stream(
            [work.prompts[i] for i, _, _ in work.requests],
            per_item=[{"seed": seed} for _, _, seed in work.requests],
            temperature=config.temperature,
            top_p=config.top_p if config.top_p < 1 else None,
            max_tokens=config.max_new_tokens,
            logprobs=True if config.logprobs else None,
            top_logprobs=config.logprobs or None,
        )
        for r, result in stream:
            if not result.ok:
                stream.close()
                raise LLMError(f"a request failed for good: {result.error}")
            text: str = result.text or ""
            if config.logprobs:
                text = scored_text(text, result.logprobs or [], config.logprobs)
            prefix = f"<think>{result.reasoning}</think>" if result.reasoning else ""
            text = text.with_prefix(prefix) if isinstance(text, ScoredText) else prefix + text
            finished = work.done(r, text, None)
            if finished is not None:
                yield finished

    def close(self) -> None:
        self.client.close()


def scored_text(text: str, content: list[dict], k: int) -> ScoredText:
    """``text`` with the per-token log-probabilities of an OpenAI ``logprobs.content`` list (the chosen token's
    ``logprob``, the entropy of its ``top_logprobs``); a trailing token that adds no text (an end-of-sequence
    marker some servers list) is left out.

    Example:
        >>> t = scored_text("Hi", [{"token": "Hi", "logprob": -0.5, "top_logprobs": [{"token": "Hi", "logprob": -0.5}]},
        ...                        {"token": "", "logprob": -0.1, "top_logprobs": []}], 5)
        >>> t.token_logprobs, t.token_ends
        ((-0.5,), (2,))
    """
    steps = list(content)
    while steps and not steps[-1].get("token"):
        steps.pop()
    logprobs = [float(step["logprob"]) for step in steps]
    entropies = [top_entropy(sorted((float(t["logprob"]) for t in step.get("top_logprobs") or []), reverse=True)[:k])
                 for step in steps]
    first = [(str(t.get("token") or ""), float(t["logprob"])) for t in (content[0].get("top_logprobs") or [])][:k] \
        if content else []
    return ScoredText(text, logprobs, entropies, piece_ends(step.get("token") or "" for step in steps), first)
