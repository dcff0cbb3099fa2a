"""Everything that rebuilds a judge, as one frozen config: recorded in a run's ``config.json``.

The judge's server URL and API key are never part of it (they may hold tokens, and a server may move);
they are passed to :meth:`JudgeConfig.build` separately, from flags or the ``ABSTAIN_JUDGE_*``
environment. ``abstain score --from-run DIR`` rebuilds the judge of a run with
:meth:`JudgeConfig.from_record`.

Example:
    >>> config = JudgeConfig(name="rule", behaviors="all")
    >>> config.record()["behaviors"], config.build().name
    ('all', 'rule')
    >>> JudgeConfig.from_record({"name": "hybrid", "model": "Qwen/Qwen2.5-7B-Instruct"}).model
    'Qwen/Qwen2.5-7B-Instruct'
    >>> JudgeConfig(name="rul")
    Traceback (most recent call last):
    ...
    ValueError: unknown judge 'rul'; choose one of abstentionbench, hybrid, llm, rule
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from abstain.judges.answer import ANSWER_MATCHES, AnswerConfig
from abstain.judges.base import Judge
from abstain.judges.registry import JUDGES, make_judge
from abstain.llm import JUDGE_ENV
from abstain.outcomes import BehaviorScope, behavior_scope

__all__ = ["RUNTIME_FIELDS", "JudgeConfig"]

#: fields that change how fast a judge works, not what it decides (a resumed run may change them)
RUNTIME_FIELDS = ("concurrency", "retries", "timeout_s", "cache")


@dataclass(frozen=True)
class JudgeConfig:
    """A judge by name and options (see the module docstring)."""

    name: str = field(default="rule", metadata={"help": "rule (offline) | llm | hybrid | abstentionbench"})
    model: str | None = field(default=None, metadata={"help": "model the LLM judge's server serves (llm, hybrid)"})
    behaviors: BehaviorScope | str = field(
        default=BehaviorScope.ALL, metadata={"help": "rows with an ACA behavior: all | unanswerable | none"}
    )
    lenient_format: bool = field(default=False, metadata={"help": "judge the tail of unboxed responses"})
    answer_match: str = field(default="stated", metadata={
        "help": "stated: a numeric reference is compared with the answer the response states, never with an "
                "expression of numbers | math_verify: Math-Verify over the whole text (Abstain-R1's released reward)"})
    math_timeout_s: int = field(default=5, metadata={"help": "Math-Verify timeout per comparison step, seconds"})
    concurrency: int = field(default=8, metadata={"help": "LLM judge requests in flight"})
    retries: int = field(default=4, metadata={"help": "retries per LLM request on transient failures"})
    timeout_s: float = field(default=120.0, metadata={"help": "seconds to wait for one LLM answer"})
    cache: bool = field(default=True, metadata={"help": "reuse cached LLM answers"})

    def __post_init__(self) -> None:
        if self.name not in JUDGES:
            raise ValueError(f"unknown judge {self.name!r}; choose one of {', '.join(sorted(JUDGES))}")
        object.__setattr__(self, "behaviors", behavior_scope(self.behaviors))
        if self.answer_match not in ANSWER_MATCHES:
            raise ValueError(f"answer_match must be one of {', '.join(ANSWER_MATCHES)} - not {self.answer_match!r}")
        if self.math_timeout_s < 1:
            raise ValueError("math_timeout_s must be >= 1 second")
        if self.concurrency < 1 or self.retries < 0 or self.timeout_s <= 0:
            raise ValueError("judge concurrency must be >= 1, retries >= 0 and timeout > 0")

    @property
    def uses_llm(self) -> bool:
        return self.name in ("llm", "hybrid", "abstentionbench")

    def with_env_model(self) -> JudgeConfig:
        """The same config with ``model`` filled from ``ABSTAIN_JUDGE_MODEL`` when an LLM judge has none,
        so a run records the model it was judged by even when the environment named it."""
        if not self.uses_llm or self.model is not None:
            return self
        model = next((os.environ[v] for v in JUDGE_ENV.model if os.environ.get(v)), None)
        return replace(self, model=model) if model else self

    def build(self, base_url: str | None = None, api_key: str | None = None) -> Judge:
        """The judge (LLM judges reach ``base_url`` with ``api_key``, else the ``ABSTAIN_JUDGE_*`` environment)."""
        options: dict[str, Any] = {"lenient_format": self.lenient_format, "behaviors": self.behaviors}
        if self.uses_llm:
            options.update(base_url=base_url, model=self.model, api_key=api_key, concurrency=self.concurrency,
                           retries=self.retries, timeout_s=self.timeout_s, cache=self.cache)
            if self.name == "hybrid":
                options["answer"] = self.answer_config()
        else:
            options["answer"] = self.answer_config()
        return make_judge(self.name, **options)

    def answer_config(self) -> AnswerConfig:
        """How the rule comparison reads answers under this config."""
        return AnswerConfig(timeout_s=self.math_timeout_s, match=self.answer_match)  # type: ignore[arg-type]

    def record(self) -> dict[str, Any]:
        """The JSON form for ``config.json`` (no URL, no key)."""
        out = asdict(self)
        out["behaviors"] = behavior_scope(self.behaviors).value
        return out

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> JudgeConfig:
        """Rebuild from :meth:`record` output (unknown keys are an error naming the allowed ones)."""
        allowed = {f.name for f in fields(cls)}
        unknown = set(data) - allowed
        if unknown:
            raise ValueError(f"judge record has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")
        return cls(**data)
