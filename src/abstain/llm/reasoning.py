"""Requests for OpenAI's reasoning models (o1, o3, o4-mini, the gpt-5 family), which take
``max_completion_tokens`` instead of ``max_tokens`` and refuse sampling settings (``temperature``, ``top_p``).

:class:`~abstain.llm.ChatClient` sends every request in one of two shapes: the classic one (``max_tokens``,
``temperature``, ``top_p``: what vLLM, SGLang, llama.cpp and OpenAI's chat models read) or the reasoning one
(:func:`reasoning_params`). ``ClientConfig.reasoning`` picks it:

* ``"auto"``: classic, until the server answers HTTP 400 naming ``max_tokens``, ``temperature`` or ``top_p`` as
  unsupported (:func:`rejects_classic`); that request is sent once more in the reasoning shape, and every later
  one goes in that shape from the start;
* ``"on"``: the reasoning shape from the first request;
* ``"off"``: always classic (a 400 is an error, as any other).

A reasoning model samples at its own temperature: a run asked for greedy decoding (temperature 0) is not greedy
there, and ``top_p`` is not applied.

Example:
    >>> reasoning_params({"temperature": 0.0, "max_tokens": 64, "top_p": 0.9, "seed": 7})
    {'seed': 7, 'max_completion_tokens': 64}
    >>> rejects_classic('{"error": {"message": "Unsupported parameter: \\'max_tokens\\' is not supported with '
    ...                 'this model. Use \\'max_completion_tokens\\' instead.", "param": "max_tokens"}}')
    True
    >>> rejects_classic('{"error": {"message": "This model\\'s maximum context length is 8192 tokens"}}')
    False
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["REASONING_MODES", "ReasoningMode", "reasoning_mode", "reasoning_params", "rejects_classic"]

ReasoningMode = Literal["auto", "on", "off"]
REASONING_MODES: tuple[str, ...] = ("auto", "on", "off")

#: what the reasoning shape leaves out: the sampling settings reasoning models refuse
_DROPPED = ("temperature", "top_p")
_NAMED = re.compile(r"\b(max_tokens|temperature|top_p)\b")
_REFUSED = re.compile(r"unsupported|not supported|does not support", re.IGNORECASE)


def reasoning_mode(value: object) -> ReasoningMode:
    """``--backend-option reasoning=...`` as a mode: ``true``/``on`` -> ``on``, ``false``/``off`` -> ``off``, ``auto``.

    Example:
        >>> reasoning_mode(True), reasoning_mode("auto"), reasoning_mode(False)
        ('on', 'auto', 'off')
    """
    if value is True or value in ("on", "true"):
        return "on"
    if value is False or value in ("off", "false"):
        return "off"
    if value == "auto":
        return "auto"
    raise ValueError(f"reasoning={value!r}: use true (max_completion_tokens, no temperature), false, or auto "
                     "(switch when the server refuses max_tokens or temperature)")


def reasoning_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` in the reasoning shape: ``max_tokens`` renamed ``max_completion_tokens``, no temperature or top_p."""
    out = {k: v for k, v in params.items() if k not in _DROPPED and k != "max_tokens"}
    if "max_tokens" in params:
        out["max_completion_tokens"] = params["max_tokens"]
    return out


def rejects_classic(body: str) -> bool:
    """Whether an HTTP 400's body says the model refuses ``max_tokens``, ``temperature`` or ``top_p`` (what OpenAI
    answers a classic request to a reasoning model: ``Unsupported parameter: 'max_tokens' ...``, ``Unsupported
    value: 'temperature' does not support 0 with this model ...``)."""
    return bool(_REFUSED.search(body) and _NAMED.search(body))
