"""A small client for any OpenAI-compatible ``/chat/completions`` endpoint (vLLM, SGLang, llama.cpp
server, hosted APIs), for LLM judges and the ``openai`` generation backend.

* temperature 0 by default; bounded concurrency (a thread pool of ``concurrency`` workers sharing one
  ``httpx.Client``);
* retries with exponential back-off and jitter (tenacity) on connection errors, timeouts, HTTP 5xx,
  408 and 429 — never on other 4xx or on an unreadable body, which fail at once;
* a circuit breaker: after ``trip_after`` consecutive requests failed even with retries, further
  requests fail immediately (for ``cooldown_s``) so a dead server costs seconds, not hours;
* an on-disk cache (:mod:`abstain.llm.cache`) keyed by (model, messages, sampling settings);
* OpenAI's reasoning models (:mod:`abstain.llm.reasoning`): ``max_completion_tokens`` and no temperature, from the
  start (``reasoning="on"``) or once the server refuses ``max_tokens``/``temperature`` (``"auto"``).

Per-request failures never raise from :meth:`ChatClient.chat` / :meth:`ChatClient.chat_many`: they come
back as a :class:`ChatResult` whose ``error`` says what happened, so a caller can record a judge error
for that row and carry on. The API key is sent as a bearer header and nowhere else.

Example:
    >>> from abstain.llm import ChatClient, ClientConfig, Endpoint
    >>> client = ChatClient(Endpoint("http://127.0.0.1:9/v1", "m"), ClientConfig(retries=0, cache=False))
    >>> result = client.chat([{"role": "user", "content": "hi"}])
    >>> result.ok, result.error.split(":")[0]
    (False, 'request failed after 1 attempt')
    >>> client.close()
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_any,
    wait_exponential,
    wait_random,
)

from abstain.llm.cache import ResponseCache, cache_key
from abstain.llm.endpoint import Endpoint
from abstain.llm.reasoning import ReasoningMode, reasoning_mode, reasoning_params, rejects_classic
from abstain.paths import cache_dir

__all__ = ["ChatClient", "ChatResult", "ClientConfig", "ClientStats", "LLMError", "Messages"]

log = logging.getLogger("abstain.llm")

Messages = Sequence[Mapping[str, str]]
_RETRY_STATUS = frozenset({408, 429})


class LLMError(RuntimeError):
    """A request that failed for good (after retries, or at once for non-transient errors)."""


class _Transient(Exception):
    """An HTTP status worth retrying (5xx, 408, 429)."""


class _RefusesClassic(LLMError):
    """HTTP 400: the model refuses ``max_tokens``/``temperature`` (a reasoning model: :mod:`abstain.llm.reasoning`)."""


@dataclass(frozen=True)
class ClientConfig:
    """How requests are made.

    Attributes:
        temperature: sampling temperature (0 = greedy; the judge default).
        max_tokens: completion budget per request.
        timeout_s: read timeout per HTTP attempt (connecting gets at most 10 s).
        concurrency: requests in flight at once.
        retries: extra attempts after the first on transient errors.
        backoff_s: first back-off wait; doubles each retry (with jitter) up to ``backoff_max_s``.
        backoff_max_s: longest single wait between attempts.
        trip_after: consecutive failed requests (retries exhausted) that open the circuit breaker.
        cooldown_s: how long an open breaker fails requests at once before letting one through again.
        cache: read and write the on-disk cache.
        cache_path: cache file (default ``cache_dir("llm")/chat.sqlite``).
        reasoning: ``off`` (``max_tokens``, ``temperature``), ``on`` (``max_completion_tokens``, no temperature or
            top_p: OpenAI's reasoning models) or ``auto`` (off until the server refuses ``max_tokens`` or
            ``temperature``, then on): :mod:`abstain.llm.reasoning`.
    """

    temperature: float = 0.0
    max_tokens: int = 16
    timeout_s: float = 120.0
    concurrency: int = 8
    retries: int = 4
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    trip_after: int = 5
    cooldown_s: float = 30.0
    cache: bool = True
    cache_path: Path | None = None
    reasoning: ReasoningMode = "off"

    def __post_init__(self) -> None:
        object.__setattr__(self, "reasoning", reasoning_mode(self.reasoning))
        if self.concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if self.retries < 0:
            raise ValueError("retries must be >= 0 (0 = a single attempt)")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be > 0 seconds")
        if self.trip_after < 1:
            raise ValueError("trip_after must be >= 1")


@dataclass(frozen=True)
class ChatResult:
    """One completion: its text (and reasoning, when the server separates it) or an error."""

    text: str | None
    error: str | None = None
    reasoning: str | None = None
    cached: bool = False
    #: ``choices[0].logprobs.content`` when the request asked for ``logprobs``: per token ``token``, ``logprob``,
    #: ``top_logprobs``
    logprobs: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ClientStats:
    """Counters since the client was made (thread-safe increments via :meth:`add`)."""

    calls: int = 0  # chat() calls, cache hits included
    cache_hits: int = 0
    requests: int = 0  # HTTP attempts sent
    succeeded: int = 0  # chat() calls answered by the server
    failed: int = 0  # chat() calls that ended in an error
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


class _Breaker:
    """Opens after ``trip_after`` consecutive failures; stays open for ``cooldown_s``."""

    def __init__(self, trip_after: int, cooldown_s: float) -> None:
        self.trip_after, self.cooldown_s = trip_after, cooldown_s
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None

    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None and time.monotonic() - self._opened_at < self.cooldown_s

    def record(self, ok: bool) -> None:
        with self._lock:
            if ok:
                self._failures, self._opened_at = 0, None
            else:
                self._failures += 1
                if self._failures >= self.trip_after:
                    self._opened_at = time.monotonic()


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, (httpx.TransportError, _Transient))


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ChatClient:
    """Chat completions from one :class:`~abstain.llm.endpoint.Endpoint` (see the module docstring)."""

    def __init__(self, endpoint: Endpoint, config: ClientConfig | None = None) -> None:
        self.endpoint = endpoint
        self.config = config or ClientConfig()
        self.stats = ClientStats()
        self._breaker = _Breaker(self.config.trip_after, self.config.cooldown_s)
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.config.timeout_s, connect=min(10.0, self.config.timeout_s)),
            limits=httpx.Limits(max_connections=self.config.concurrency, max_keepalive_connections=self.config.concurrency),
            headers=endpoint.headers(),
        )
        #: requests go in the reasoning shape (``config.reasoning`` on, or auto after a refusal: kept from then on)
        self.reasoning = self.config.reasoning == "on"
        self._switch = threading.Lock()
        self._cache: ResponseCache | None = None
        if self.config.cache:
            self._cache = ResponseCache(self.config.cache_path or cache_dir("llm") / "chat.sqlite")

    # -- one request -------------------------------------------------------------------------------

    def _params(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.config.temperature, "max_tokens": self.config.max_tokens}
        params.update({k: v for k, v in overrides.items() if v is not None})
        return reasoning_params(params) if self.reasoning else params

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        self.stats.add(requests=1)
        response = self._http.post(f"{self.endpoint.base_url}/chat/completions", json=body)
        status = response.status_code
        if status >= 500 or status in _RETRY_STATUS:
            raise _Transient(f"HTTP {status}: {response.text[:200]}")
        if status == 400 and self.config.reasoning == "auto" and "max_tokens" in body \
                and rejects_classic(response.text):  # a classic request to a reasoning model
            raise _RefusesClassic(f"HTTP 400: {response.text[:300]}")
        if status >= 400:
            hint = " (does the base URL end with /v1?)" if status == 404 else ""
            raise LLMError(f"HTTP {status}{hint}: {response.text[:300]}")
        try:
            return response.json()
        except ValueError:
            raise LLMError(f"the server answered with something that is not JSON: {response.text[:200]!r}") from None

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST with retries; raises :class:`LLMError` when it gives up."""
        if self._breaker.is_open():
            raise LLMError(
                f"not sent: the server failed {self.config.trip_after} requests in a row "
                f"(circuit open for {self.config.cooldown_s:g} s)"
            )

        def give_up(state: RetryCallState) -> bool:
            return self._breaker.is_open()

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning("LLM request attempt %d failed (%s); retrying", state.attempt_number, exc and _describe(exc))

        retrying = Retrying(
            stop=stop_any(stop_after_attempt(self.config.retries + 1), give_up),
            wait=wait_exponential(multiplier=self.config.backoff_s, max=self.config.backoff_max_s)
            + wait_random(0, self.config.backoff_s),
            retry=retry_if_exception(_retryable),
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            data = retrying(self._post, body)
        except LLMError:
            raise
        except (httpx.TransportError, _Transient) as exc:
            self._breaker.record(False)
            n = retrying.statistics.get("attempt_number", 1)
            raise LLMError(f"request failed after {n} attempt{'s' if n != 1 else ''}: {_describe(exc)}") from None
        self._breaker.record(True)
        return data

    @staticmethod
    def _logprobs(data: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The answer's per-token log-probabilities (``choices[0].logprobs.content``), where the server sent them."""
        try:
            content = (data["choices"][0].get("logprobs") or {}).get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            return None
        return list(content) if isinstance(content, list) else None

    @staticmethod
    def _extract(data: Mapping[str, Any]) -> tuple[str, str | None]:
        try:
            message = data["choices"][0]["message"]
            text = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(f"the server's answer has no choices[0].message: {json.dumps(data)[:200]}") from None
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise LLMError(f"the message content is not text: {str(text)[:200]}")
        return text, reasoning if isinstance(reasoning, str) and reasoning else None

    def _use_reasoning(self, why: str) -> None:
        """Send every request from now on in the reasoning shape (said once)."""
        with self._switch:
            if self.reasoning:
                return
            self.reasoning = True
        log.warning("%s refused max_tokens or temperature (%s): requests now carry max_completion_tokens and no "
                    "temperature or top_p; a reasoning model samples at its own temperature", self.endpoint.model,
                    why[:200])

    def chat(self, messages: Messages, **overrides: Any) -> ChatResult:
        """One completion for ``messages``; ``overrides`` (temperature, max_tokens, top_p, seed) win
        over the config. Never raises for a failed request: see ``ChatResult.error``."""
        self.stats.add(calls=1)
        params = self._params(overrides)
        key = cache_key(self.endpoint.model, messages, params) if self._cache is not None else None
        if key is not None and self._cache is not None:
            hit = self._cache.get(key)
            if hit is not None:
                stored = json.loads(hit)
                self.stats.add(cache_hits=1)
                return ChatResult(text=stored["text"], reasoning=stored.get("reasoning"), cached=True,
                                  logprobs=stored.get("logprobs"))
        body = {"model": self.endpoint.model, "messages": [dict(m) for m in messages], **params}
        try:
            try:
                data = self._send(body)
            except _RefusesClassic as refused:  # reasoning="auto": this request once more, and every later one,
                self._use_reasoning(str(refused))  # in the reasoning shape
                params = self._params(overrides)
                key = cache_key(self.endpoint.model, messages, params) if self._cache is not None else None
                data = self._send({"model": self.endpoint.model, "messages": body["messages"], **params})
            text, reasoning = self._extract(data)
        except LLMError as exc:
            self.stats.add(failed=1)
            return ChatResult(text=None, error=str(exc))
        logprobs = self._logprobs(data) if params.get("logprobs") else None
        if params.get("logprobs") and logprobs is None:
            self.stats.add(failed=1)
            return ChatResult(text=None, error="the server ignored logprobs=true (no choices[0].logprobs.content in "
                                               "its answer); this server cannot give confidence estimates")
        self.stats.add(succeeded=1)
        if key is not None and self._cache is not None:
            self._cache.put(key, self.endpoint.model,
                            json.dumps({"text": text, "reasoning": reasoning, "logprobs": logprobs}))
        return ChatResult(text=text, reasoning=reasoning, logprobs=logprobs)

    def chat_many(
        self,
        batch: Sequence[Messages],
        on_done: Callable[[int], None] | None = None,
        per_item: Sequence[Mapping[str, Any]] | None = None,
        **overrides: Any,
    ) -> list[ChatResult]:
        """Completions for many prompts, ``config.concurrency`` at a time, in input order.

        ``overrides`` apply to every request; ``per_item`` (one mapping per prompt, e.g. a seed) on top.
        """
        if per_item is not None and len(per_item) != len(batch):
            raise ValueError(f"per_item has {len(per_item)} entries for {len(batch)} prompts")
        if not batch:
            return []

        def one(index: int) -> ChatResult:
            extra = {**overrides, **(per_item[index] if per_item is not None else {})}
            result = self.chat(batch[index], **extra)
            if on_done is not None:
                on_done(1)
            return result

        if self.config.concurrency == 1 or len(batch) == 1:
            return [one(i) for i in range(len(batch))]
        workers = min(self.config.concurrency, len(batch))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
            return list(pool.map(one, range(len(batch))))

    def chat_stream(
        self,
        batch: Sequence[Messages],
        per_item: Sequence[Mapping[str, Any]] | None = None,
        **overrides: Any,
    ) -> Iterator[tuple[int, ChatResult]]:
        """``(index, result)`` of every prompt as soon as it is answered, ``config.concurrency`` in flight at once
        (:meth:`chat_many` in completion order: a caller that waits for groups of prompts is not held up by the
        slowest of each group)."""
        if per_item is not None and len(per_item) != len(batch):
            raise ValueError(f"per_item has {len(per_item)} entries for {len(batch)} prompts")
        if not batch:
            return

        def one(index: int) -> tuple[int, ChatResult]:
            return index, self.chat(batch[index], **{**overrides, **(per_item[index] if per_item is not None else {})})

        workers = min(self.config.concurrency, len(batch))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
            futures = [pool.submit(one, i) for i in range(len(batch))]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                for future in futures:  # a caller that stops early (an error, an interrupt) sends nothing more
                    future.cancel()

    # -- lifecycle ---------------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
