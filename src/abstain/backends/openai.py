"""Generation through any OpenAI-compatible server (vLLM ``serve``, SGLang, llama.cpp server, hosted APIs).

Built on :class:`abstain.llm.ChatClient`: bounded concurrency, retries with back-off, the key from
``api_key`` or ``ABSTAIN_API_KEY`` / ``OPENAI_API_KEY`` (never stored), the URL from ``base_url`` or
``ABSTAIN_BASE_URL`` / ``OPENAI_BASE_URL``. Each of the ``n`` samples of a prompt is its own request
with a seed derived from the prompt text, the sample index and ``GenerationConfig.seed`` — so results
do not depend on batching or on which rows a resumed run still has to do (servers that honor
``seed``, such as vLLM and llama.cpp, are then reproducible). Reasoning that a server returns apart
(``reasoning_content``) is kept as ``<think>…</think>`` in front of the text, so parsing skips it.

Example:
    >>> backend = OpenAIBackend("Qwen/Qwen2.5-7B-Instruct", base_url="http://127.0.0.1:8000/v1")
    >>> backend.name
    'Qwen/Qwen2.5-7B-Instruct'
    >>> backend.close()
"""

from __future__ import annotations

from collections.abc import Sequence

from abstain.backends.base import GenerationConfig, Message, sample_seed
from abstain.llm import BACKEND_ENV, ChatClient, ClientConfig, LLMError, resolve_endpoint

__all__ = ["OpenAIBackend", "sample_seed"]


class OpenAIBackend:
    """A :class:`~abstain.backends.base.Backend` over an OpenAI-compatible chat endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 600.0,
        retries: int = 4,
        cache: bool = False,
    ) -> None:
        self.endpoint = resolve_endpoint(base_url=base_url, model=model, api_key=api_key, env=BACKEND_ENV)
        self.name = model
        self.client = ChatClient(
            self.endpoint,
            ClientConfig(concurrency=concurrency, timeout_s=timeout_s, retries=retries, cache=cache, trip_after=3),
        )

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts per prompt, in prompt order.

        Raises :class:`~abstain.llm.LLMError` when some request failed for good (with ``cache=True`` the
        answered ones are kept on disk, so a rerun only pays for the rest).
        """
        jobs = [(i, k) for i in range(len(prompts)) for k in range(config.n)]
        results = self.client.chat_many(
            [prompts[i] for i, _ in jobs],
            per_item=[{"seed": sample_seed(prompts[i], k, config.seed)} for i, k in jobs],
            temperature=config.temperature,
            top_p=config.top_p if config.top_p < 1 else None,
            max_tokens=config.max_new_tokens,
        )
        errors = [r.error for r in results if not r.ok]
        if errors:
            raise LLMError(f"{len(errors)} of {len(results)} requests failed; first: {errors[0]}")
        out: list[list[str]] = [[] for _ in prompts]
        for (i, _), result in zip(jobs, results, strict=True):
            text = result.text or ""
            out[i].append(f"<think>{result.reasoning}</think>{text}" if result.reasoning else text)
        return out

    def close(self) -> None:
        self.client.close()
