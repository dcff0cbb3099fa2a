"""The judge flags, declared once for every command that judges (``score``, ``audit``, ``eval`` …).

``@judge_flags`` adds the flags below to a typer command and hands the command one :class:`JudgeFlags`
(``judge``): the :class:`~abstain.judges.options.JudgeConfig` they describe plus the judge server's URL
and key, which are never recorded. ``--base-url`` is never a judge flag: it always means the evaluated
model's server.

=======================  ===========================================================================
flag                     meaning
=======================  ===========================================================================
``--judge``              rule (offline default) | llm | hybrid | abstentionbench
``--judge-model``        model the judge server serves (env ``ABSTAIN_JUDGE_MODEL``)
``--judge-base-url``     OpenAI-compatible server of the LLM judge (env ``ABSTAIN_JUDGE_BASE_URL``)
``--judge-api-key``      its API key (env ``ABSTAIN_JUDGE_API_KEY`` / ``OPENAI_API_KEY``); never written
``--behaviors``          rows with an ACA behavior label: unanswerable | all | none
``--lenient-format``     judge the tail of unboxed responses instead of marking them wrong
``--answer-match``       stated (default) | math_verify: how a numeric reference is compared
``--math-timeout``       Math-Verify timeout per comparison step (seconds)
``--judge-concurrency``  LLM judge requests in flight
``--judge-retries``      retries per LLM request on connection errors, timeouts and 5xx
``--judge-timeout``      seconds to wait for one LLM answer
``--judge-cache``        reuse cached LLM judge answers (``--no-judge-cache`` to ask again)
=======================  ===========================================================================
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import typer

from abstain.cli.common import fail
from abstain.judges.base import Judge
from abstain.judges.options import JudgeConfig

__all__ = ["JudgeFlags", "judge_flags"]

_DEFAULT = JudgeConfig()
_HELP = {f.name: f.metadata.get("help", "") for f in fields(JudgeConfig)}

#: (parameter name, flag, type, default, help, JudgeConfig field or None for server settings)
_FLAGS: tuple[tuple[str, str, Any, Any, str, str | None], ...] = (
    ("judge_name", "--judge", str, _DEFAULT.name, "Judge: rule (offline default), llm (every field by an LLM), "
     "hybrid (rules where certain, the LLM for the rest), abstentionbench (AbstentionBench's grader decides "
     "abstention, from its installed Inspect port).", "name"),
    ("judge_model", "--judge-model", str | None, None, "Model name the judge server serves "
     "(env ABSTAIN_JUDGE_MODEL).", "model"),
    ("judge_base_url", "--judge-base-url", str | None, None, "OpenAI-compatible server of the LLM judge, e.g. "
     "http://127.0.0.1:8000/v1 (env ABSTAIN_JUDGE_BASE_URL); never recorded.", None),
    ("judge_api_key", "--judge-api-key", str | None, None, "API key of the judge server (env ABSTAIN_JUDGE_API_KEY "
     "or OPENAI_API_KEY); never written anywhere.", None),
    ("behaviors", "--behaviors", str, _DEFAULT.behaviors.value, "Rows that get an ACA behavior label: all "
     "(default: asking or conditioning on an answerable item is then a false abstention in ab.*, as "
     "AbstentionBench's judge counts it), unanswerable (only what the ACA metrics need), or none.", "behaviors"),
    ("lenient_format", "--lenient-format/--strict-format", bool, False, "Judge the tail of responses without a "
     "\\boxed{} instead of marking them wrong.", "lenient_format"),
    ("answer_match", "--answer-match", str, _DEFAULT.answer_match, "How an answer is compared with a numeric "
     "reference: stated (the answer the response states: its box; lenient, the last 'answer is ...', else the "
     "right-hand side of the last '=', else the last number; an unevaluated expression such as 93+59 is no answer) "
     "or math_verify (Math-Verify over the whole text, which credits an echo of the question's arithmetic: "
     "Abstain-R1's released reward).", "answer_match"),
    ("math_timeout", "--math-timeout", int, _DEFAULT.math_timeout_s, _HELP["math_timeout_s"], "math_timeout_s"),
    ("judge_concurrency", "--judge-concurrency", int, _DEFAULT.concurrency, "LLM judge requests in flight at once.",
     "concurrency"),
    ("judge_retries", "--judge-retries", int, _DEFAULT.retries, "Retries per LLM judge request on connection "
     "errors, timeouts and 5xx.", "retries"),
    ("judge_timeout", "--judge-timeout", float, _DEFAULT.timeout_s, "Seconds to wait for one LLM judge answer.",
     "timeout_s"),
    ("judge_cache", "--judge-cache/--no-judge-cache", bool, _DEFAULT.cache, "Reuse cached LLM judge answers "
     "(keyed by model and prompt).", "cache"),
)


@dataclass(frozen=True)
class JudgeFlags:
    """What the judge flags say: the recorded config and the unrecorded server settings."""

    config: JudgeConfig
    base_url: str | None = None
    api_key: str | None = None

    def build(self) -> Judge:
        return self.config.build(self.base_url, self.api_key)

    def explicit(self) -> list[str]:
        """The flags given with a non-default value (``--from-run`` refuses them: the run decides)."""
        ours = self.config.record()
        default = _DEFAULT.record()
        by_field = {field_name: flag for _, flag, _, _, _, field_name in _FLAGS if field_name}
        return [by_field[k].split("/")[0] for k in ours if ours[k] != default[k] and k in by_field]

    def __repr__(self) -> str:  # the key never reaches a log
        return f"JudgeFlags(config={self.config!r}, base_url={'set' if self.base_url else None}, api_key=***)"


def judge_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the judge flags to a typer command; it receives them as ``judge: JudgeFlags``."""
    signature = inspect.signature(command)
    kept = [p for p in signature.parameters.values() if p.name != "judge"]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                          default=typer.Option(default, *flag.split(" "), help=help_, show_default=name != "judge_api_key"))
        for name, flag, kind, default, help_, _ in _FLAGS
    ]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name, *_ in _FLAGS}
        try:
            config = JudgeConfig(**{f: values[n] for n, _, _, _, _, f in _FLAGS if f}).with_env_model()
        except ValueError as exc:
            raise fail(str(exc)) from None
        flags = JudgeFlags(config, values["judge_base_url"], values["judge_api_key"])
        return command(*args, **kwargs, judge=flags)

    wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
    return wrapper
