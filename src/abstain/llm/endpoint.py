"""Where an OpenAI-compatible server lives: base URL, model name and (secret) API key.

Values come from explicit arguments (CLI flags) first, then from environment variables. The key is
kept out of ``repr`` and out of :meth:`Endpoint.public`, which is all that run records may store.

Example:
    >>> ep = resolve_endpoint(base_url="http://127.0.0.1:8000/v1/", model="judge", api_key="sk-x", env=JUDGE_ENV)
    >>> ep.base_url, ep.model
    ('http://127.0.0.1:8000/v1', 'judge')
    >>> "sk-x" in repr(ep)
    False
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["BACKEND_ENV", "Endpoint", "EndpointEnv", "JUDGE_ENV", "resolve_endpoint"]


@dataclass(frozen=True)
class EndpointEnv:
    """Environment variable names consulted, in order, for each setting."""

    base_url: tuple[str, ...]
    model: tuple[str, ...]
    api_key: tuple[str, ...]
    flag_hint: str = "--base-url / --judge-model"


#: The LLM judge: ``ABSTAIN_JUDGE_*`` first, then ``OPENAI_API_KEY`` for the key.
JUDGE_ENV = EndpointEnv(
    base_url=("ABSTAIN_JUDGE_BASE_URL",),
    model=("ABSTAIN_JUDGE_MODEL",),
    api_key=("ABSTAIN_JUDGE_API_KEY", "OPENAI_API_KEY"),
    flag_hint="--judge-base-url / --judge-model",
)

#: The generation backend (``openai:<model>``): the OpenAI SDK's own variable names.
BACKEND_ENV = EndpointEnv(
    base_url=("ABSTAIN_BASE_URL", "OPENAI_BASE_URL"),
    model=(),
    api_key=("ABSTAIN_API_KEY", "OPENAI_API_KEY"),
    flag_hint="--base-url",
)


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible chat endpoint. ``api_key`` never appears in ``repr`` or records."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)

    def public(self) -> dict[str, str]:
        """What a run record may keep: the model name only (URLs can embed tokens or private hosts)."""
        return {"model": self.model}

    def headers(self) -> dict[str, str]:
        """HTTP headers for a request (the key, when there is one, as a bearer token)."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


def _first(names: tuple[str, ...], environ: Mapping[str, str]) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def resolve_endpoint(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    env: EndpointEnv = JUDGE_ENV,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """Build an :class:`Endpoint` from arguments, falling back to ``env``'s variables.

    Raises ``ValueError`` naming the flag and variable to set when the URL or model is missing.
    """
    environ = os.environ if environ is None else environ
    url = base_url or _first(env.base_url, environ)
    name = model or _first(env.model, environ)
    key = api_key or _first(env.api_key, environ)
    if not url:
        names = " or ".join(env.base_url)
        raise ValueError(f"no server URL: pass {env.flag_hint.split(' / ')[0]} or set {names} (e.g. http://127.0.0.1:8000/v1)")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"server URL {url!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)")
    if not name:
        names = " or ".join(env.model) or "the model spec"
        raise ValueError(f"no model name: pass {env.flag_hint.split(' / ')[-1]} or set {names}")
    return Endpoint(base_url=url.rstrip("/"), model=name, api_key=key)
