"""Whether runs generated alike: the generation settings a comparison flags when they differ.

A run's settings come from its ``config.json``: ``max_tokens``, ``temperature``, ``top_p``, ``samples`` and the
demonstrations in each prompt, ``shots`` and ``shots_unanswerable`` (an ``abstain eval`` run's flags, or what an
imported harness run actually used: lm-eval's ``--num_fewshot``), and an imported run's
``generation`` block (:mod:`abstain.integrations.generation`): its stop strings, whether the chat template
rendered the messages, and any other decoding setting the harness sent (``top_k``, ``seed`` ...). An ``abstain
eval`` run has no stop strings and always sends chat messages. :func:`generation_differences` names each setting
on which the runs disagree, with every run's value, so ``abstain compare`` says so instead of comparing them
silently.

Example:
    >>> a = {"max_tokens": 512, "temperature": 0.0, "top_p": 1.0, "samples": 1}
    >>> b = {**a, "max_tokens": 32, "generation": {"stop": [], "chat_template": True, "settings": {"top_k": 5}}}
    >>> generation_settings(b)["top_k"]
    5
    >>> generation_differences([("base", a), ("inspect", b)])
    ['max_tokens: base 512, inspect 32', 'top_k: base unset, inspect 5']
    >>> generation_differences([("zero-shot", a), ("two-shot", {**a, "shots": 2})])
    ['shots: zero-shot 0, two-shot 2']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["generation_differences", "generation_settings"]

#: the settings every run has, with ``abstain eval``'s defaults for a config that predates one
DEFAULTS: dict[str, Any] = {"max_tokens": 512, "temperature": 0.0, "top_p": 1.0, "samples": 1, "shots": 0,
                            "shots_unanswerable": 0, "stop": [], "chat_template": True}


def generation_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's generation settings from its ``config.json`` (the fixed ones first, then the harness's others)."""
    block = config.get("generation") or {}
    out = {name: DEFAULTS[name] if config.get(name) is None else config[name]
           for name in ("max_tokens", "temperature", "top_p", "samples", "shots", "shots_unanswerable")}
    out["stop"] = list(block.get("stop") or [])
    out["chat_template"] = block.get("chat_template", True)
    out.update(block.get("settings") or {})
    return out


def _show(value: Any) -> str:
    return "unset" if value is None else str(value)


def generation_differences(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """``setting: label value, label value, ...`` for each setting the runs (``(label, config)`` pairs) differ in."""
    settings = [generation_settings(config) for _, config in runs]
    names = list(dict.fromkeys(name for s in settings for name in s))
    out = []
    for name in names:
        values = [s.get(name) for s in settings]
        if any(v != values[0] for v in values[1:]):
            out.append(f"{name}: " + ", ".join(f"{label} {_show(v)}" for (label, _), v in zip(runs, values)))
    return out
