"""What a harness generated with, as an imported run records it, and what abstain refuses before a harness starts.

``abstain eval`` decides its own decoding (``--max-tokens``, ``--temperature``, ``--top-p``, no stop strings, the
protocol's chat messages). Inside Inspect or lm-evaluation-harness the harness decides it, from its own flags
(Inspect's ``--max-tokens`` / ``--temperature`` / ``-M``; lm-eval's ``--gen_kwargs``, ``--apply_chat_template``,
``--num_fewshot``). :class:`InspectRun` and :class:`LmEvalRun` hold what the harness actually used;
``generation()`` is the block an import writes into ``config.json`` under ``generation``:

* ``max_tokens``, ``temperature``, ``top_p`` — the settings ``abstain eval`` has flags for (None: not set, the
  provider's default), also written into the run's own fields of those names;
* ``stop`` — the stop strings sent; ``chat_template`` — whether the messages went as chat turns rendered by the
  model's template (``abstain eval`` always sends them so);
* ``settings`` — every other decoding setting the harness sent (``top_k``, ``seed``, ``frequency_penalty`` ...),
  which ``abstain eval`` cannot set: ``abstain compare`` names them when runs differ;
* ``as_given`` — the harness's own names and values (lm-eval's ``gen_kwargs``, Inspect's generate config and
  model arguments without keys, tokens or URLs).

``check()`` refuses what would make the run something other than the abstain task it records (a plain-text
prompt, another number of demonstrations, a system message put before the protocol's, a token budget given
twice with two values) with an error that names the flag, and returns warnings for what is only recorded.

Example:
    >>> run = LmEvalRun(gen_kwargs={"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": 32},
    ...                 apply_chat_template=True, num_fewshot=0)
    >>> run.check(shots=0)
    []
    >>> g = run.generation()
    >>> g["max_tokens"], g["temperature"], g["stop"], g["chat_template"], g["settings"]
    (32, 0.0, [], True, {})
    >>> LmEvalRun(gen_kwargs={}, apply_chat_template=False, num_fewshot=0).check(shots=0)
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: abstain's lm-eval tasks need --apply_chat_template: without it lm-eval sends ...
    >>> InspectRun({"max_tokens": 32, "temperature": 0.0, "top_k": 5}).generation()["settings"]
    {'top_k': 5}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from abstain.schema import DataError

__all__ = ["INSPECT_OPERATIONAL", "InspectRun", "LmEvalRun", "public_args"]

#: Inspect generate-config fields that do not decide the text (connections, retries, caching, logging)
INSPECT_OPERATIONAL = frozenset({
    "max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections", "adaptive_connections",
    "cache_prompt", "cache", "batch", "extra_headers", "parallel_tool_calls", "internal_tools", "max_tool_output",
    "logprobs", "top_logprobs", "prompt_logprobs", "fail_on_refusal", "modalities"})
#: the settings with a field of their own in the record (the rest go to ``settings``)
_INSPECT_OWN = {"max_tokens", "temperature", "top_p", "stop_seqs"}
_LM_EVAL_OWN = {"max_gen_toks", "temperature", "top_p", "until", "do_sample"}
_SECRET = ("key", "token", "secret", "password", "url", "header")


def public_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` without the entries a record must not hold (keys, tokens, URLs).

    Example:
        >>> public_args({"do_sample": False, "api_key": "sk-x", "base_url": "http://h"})
        {'do_sample': False}
    """
    return {k: v for k, v in args.items() if not any(s in k.lower() for s in _SECRET)}


def _record(harness: str, own: dict[str, Any], settings: dict[str, Any], as_given: dict[str, Any]) -> dict[str, Any]:
    return {"harness": harness, **own, "settings": settings, "as_given": as_given}


@dataclass(frozen=True)
class InspectRun:
    """What an Inspect run generated with: the merged generate config (the model's ``-M``-level config overlaid
    with the task's and the command line's), the model arguments and the epochs."""

    generate_config: Mapping[str, Any]
    model_args: Mapping[str, Any] = field(default_factory=dict)
    epochs: int = 1

    def decoding(self) -> dict[str, Any]:
        """The set fields that decide the text (operational ones, and unset ones, left out)."""
        return {k: v for k, v in self.generate_config.items() if v is not None and k not in INSPECT_OPERATIONAL}

    def check(self) -> None:
        """Refuse what changes the protocol's prompt: a ``--system-message`` goes before the protocol's own."""
        message = self.generate_config.get("system_message")
        if message:
            raise DataError(f"--system-message {message!r} would be put before the protocol's system message, and "
                            "the prompt would not be the abstain task's: drop it (the protocol sets the system "
                            "message)")

    def generation(self) -> dict[str, Any]:
        """The ``generation`` block of an imported run's ``config.json``."""
        config = self.decoding()
        own = {"max_tokens": config.get("max_tokens"), "temperature": config.get("temperature"),
               "top_p": config.get("top_p"), "stop": list(config.get("stop_seqs") or []), "chat_template": True}
        settings = {k: v for k, v in config.items() if k not in _INSPECT_OWN}
        as_given = {"generate_config": config, "model_args": public_args(self.model_args), "epochs": self.epochs}
        return _record("inspect", own, settings, as_given)


@dataclass(frozen=True)
class LmEvalRun:
    """What an lm-eval run sends for a task: its ``generation_kwargs`` after ``--gen_kwargs``, and the request
    options lm-eval hands a task when it builds the requests."""

    gen_kwargs: Mapping[str, Any]
    apply_chat_template: bool
    num_fewshot: int
    fewshot_as_multiturn: bool = True
    system_instruction: str | None = None

    def check(self, shots: int, max_tokens: int | None = None) -> list[str]:
        """Refuse what the task would not honour (``shots``: the task's demonstrations; ``max_tokens``: the
        budget ``--metadata abstain.max_tokens`` asked for, if any); return warnings for what is only recorded."""
        if not self.apply_chat_template:
            raise DataError("abstain's lm-eval tasks need --apply_chat_template: without it lm-eval sends the system "
                            "message and the question as one plain text, which is not the protocol's prompt")
        if self.num_fewshot != shots:
            raise DataError(f"--num_fewshot {self.num_fewshot} but the task's shots is {shots}: lm-eval would send "
                            f"{self.num_fewshot} demonstrations where the record says {shots}; give the same number "
                            f"to both (--metadata '{{\"abstain\": {{\"shots\": N}}}}', or leave --num_fewshot out)")
        if shots and not self.fewshot_as_multiturn:
            raise DataError("--fewshot_as_multiturn false puts the demonstrations into the question's message; "
                            "the protocol sends them as earlier turns: leave it at its default (true)")
        if self.system_instruction:
            raise DataError("--system_instruction would be put before the protocol's system message, and the "
                            "prompt would not be the abstain task's: drop it (the protocol sets the system message)")
        sent = self.gen_kwargs.get("max_gen_toks")
        if max_tokens is not None and sent != max_tokens:
            raise DataError(f"--metadata abstain.max_tokens {max_tokens} but --gen_kwargs max_gen_toks={sent}: "
                            "give the token budget once")
        warnings = []
        temperature = self.gen_kwargs.get("temperature") or 0
        if isinstance(temperature, (int, float)) and temperature > 0 and not self.gen_kwargs.get("do_sample"):
            warnings.append(f"temperature {temperature} with do_sample false: hf and vllm decode greedily, the API "
                            "backends sample (add do_sample=true to --gen_kwargs to sample everywhere)")
        other = sorted(set(self.gen_kwargs) - _LM_EVAL_OWN)
        if other:
            warnings.append(f"--gen_kwargs {', '.join(other)}: abstain eval has no such setting; sent as given and "
                            "recorded under generation.settings")
        return warnings

    def generation(self) -> dict[str, Any]:
        """The ``generation`` block of an imported run's ``config.json``."""
        kwargs = dict(self.gen_kwargs)
        until = kwargs.get("until") or []
        own = {"max_tokens": kwargs.get("max_gen_toks"), "temperature": kwargs.get("temperature"),
               "top_p": kwargs.get("top_p"), "stop": [until] if isinstance(until, str) else list(until),
               "chat_template": bool(self.apply_chat_template)}
        settings = {k: v for k, v in kwargs.items() if k not in _LM_EVAL_OWN}
        as_given = {"gen_kwargs": kwargs, "apply_chat_template": bool(self.apply_chat_template),
                    "num_fewshot": self.num_fewshot, "fewshot_as_multiturn": bool(self.fewshot_as_multiturn),
                    "system_instruction": self.system_instruction}
        return _record("lm-eval", own, settings, as_given)
