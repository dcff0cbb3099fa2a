"""An OpenAI-compatible chat client with retries, bounded concurrency and an on-disk cache.

Used by the LLM judges (:mod:`abstain.judges.llm`) and the ``openai`` generation backend.

Example:
    >>> from abstain.llm import ChatClient, ClientConfig, resolve_endpoint
    >>> endpoint = resolve_endpoint(base_url="http://127.0.0.1:8000/v1", model="Qwen/Qwen2.5-7B-Instruct")
    >>> endpoint.public()
    {'model': 'Qwen/Qwen2.5-7B-Instruct'}
"""

from abstain.llm.cache import ResponseCache, cache_key
from abstain.llm.client import ChatClient, ChatResult, ClientConfig, ClientStats, LLMError, Messages
from abstain.llm.endpoint import BACKEND_ENV, JUDGE_ENV, Endpoint, EndpointEnv, resolve_endpoint

__all__ = [
    "BACKEND_ENV",
    "ChatClient",
    "ChatResult",
    "ClientConfig",
    "ClientStats",
    "Endpoint",
    "EndpointEnv",
    "JUDGE_ENV",
    "LLMError",
    "Messages",
    "ResponseCache",
    "cache_key",
    "resolve_endpoint",
]
