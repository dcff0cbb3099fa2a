"""The LLM judge: correctness, behavior and clarification decided by a model behind any
OpenAI-compatible server (vLLM, SGLang, llama.cpp, hosted APIs) through :class:`abstain.llm.ChatClient`.

What the LLM decides, and what it never touches:

* ``pred``, ``answer``, ``format_ok`` come from parsing; refusals, definite answers to unanswerable
  items (wrong by label) and unboxed answers (wrong by format) are decided without the LLM
  (:func:`abstain.judges.rule.correctness_precheck`) — a response cannot talk the judge into those.
* correctness of a boxed answer to an answerable item: :data:`~abstain.judges.prompts.ANSWER_CORRECTNESS`;
* behavior of unanswerable rows (``behaviors``): :data:`~abstain.judges.prompts.BEHAVIOR`;
* clarification of refusals on items with a ``gap``: :data:`~abstain.judges.prompts.CLARIFICATION`.

Verdicts are parsed strictly (:func:`parse_verdict`): exactly one allowed token, case-insensitive,
after stripping whitespace and one final period. Anything else, and any request that failed after its
retries, becomes the row's ``judge_error`` (with the raw text) — never a guess. ``judged_by`` records
``llm`` for each field the model decided.

Example:
    >>> parse_verdict(" yes. ", ("Yes", "No"))
    'Yes'
    >>> try:
    ...     parse_verdict("Yes, because the totals match", ("Yes", "No"))
    ... except VerdictError as exc:
    ...     print(exc)
    expected one of Yes/No, got 'Yes, because the totals match'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from abstain.judges.base import Judgment
from abstain.judges.clarification import clarification_applies, clarification_messages, clarification_text
from abstain.judges.correctness import correctness_precheck
from abstain.judges.prompts import ABSTENTION, ANSWER_CORRECTNESS, BEHAVIOR, CLARIFICATION, judge_messages
from abstain.judges.registry import register_judge
from abstain.judges.rule import wants_behavior
from abstain.llm import JUDGE_ENV, ChatClient, ClientConfig, resolve_endpoint
from abstain.outcomes import BehaviorScope, as_behavior, behavior_scope
from abstain.parsing import Prediction
from abstain.schema import ResponseRow

__all__ = ["Ask", "Decided", "LLMJudge", "LLMJudgeConfig", "VerdictError", "detect_abstention", "parse_verdict"]

Field = Literal["correct", "behavior", "clarification_correct"]


class VerdictError(ValueError):
    """The judge's reply is not exactly one allowed token."""


def parse_verdict(raw: str, allowed: Sequence[str]) -> str:
    """The allowed token ``raw`` is (canonical spelling), or :class:`VerdictError`."""
    text = raw.strip()
    if text.endswith("."):
        text = text[:-1]
    for token in allowed:
        if text.lower() == token.lower():
            return token
    raise VerdictError(f"expected one of {'/'.join(allowed)}, got {raw!r}")


@dataclass(frozen=True)
class Ask:
    """A question for the LLM about one field of one row."""

    field: Field
    messages: list[dict[str, str]]
    allowed: tuple[str, ...]


@dataclass(frozen=True)
class Decided:
    """A field decided without the LLM (by ``source``: rule, label, format), or an error."""

    field: Field
    value: Any = None
    source: str | None = None
    error: str | None = None


Plan = Ask | Decided | None

_CONVERT = {
    "correct": lambda token: token == "Yes",
    "behavior": as_behavior,
    "clarification_correct": lambda token: token == "Correct",
}


@dataclass(frozen=True)
class LLMJudgeConfig:
    """What the LLM judge decides.

    Attributes:
        behaviors: which rows get a behavior: ``unanswerable`` rows, ``all`` or ``none``.
        lenient_format: judge the tail of unboxed responses instead of marking them wrong.
        clarification: judge clarifications of refusals on items with a ``gap``.
        max_quote_chars: longest quoted model text (longer text keeps its end).
    """

    behaviors: BehaviorScope | str = BehaviorScope.ALL
    lenient_format: bool = False
    clarification: bool = True
    max_quote_chars: int = 6000

    def __post_init__(self) -> None:
        object.__setattr__(self, "behaviors", behavior_scope(self.behaviors))
        if self.max_quote_chars < 100:
            raise ValueError("max_quote_chars must be >= 100 (the judge needs to see the response)")


@dataclass
class LLMJudge:
    """Correctness, behavior and clarification by an LLM (see the module docstring)."""

    client: ChatClient
    config: LLMJudgeConfig = field(default_factory=LLMJudgeConfig)
    name: str = "llm"

    @classmethod
    def from_options(cls, **options: Any) -> LLMJudge:
        """Build from CLI-style options: ``base_url``, ``model``, ``api_key`` (else ``ABSTAIN_JUDGE_*`` /
        ``OPENAI_API_KEY``), ``concurrency``, ``retries``, ``timeout_s``, ``cache``, plus the fields of
        :class:`LLMJudgeConfig`."""
        endpoint = resolve_endpoint(
            base_url=options.pop("base_url", None),
            model=options.pop("model", None),
            api_key=options.pop("api_key", None),
            env=JUDGE_ENV,
        )
        client_fields = {"concurrency", "retries", "timeout_s", "cache", "backoff_s", "max_tokens", "cache_path"}
        client_options = {k: options.pop(k) for k in list(options) if k in client_fields and options[k] is not None}
        own = {k: options.pop(k) for k in list(options) if k in cls.__dataclass_fields__ and k not in ("client", "config")}
        return cls(client=ChatClient(endpoint, ClientConfig(**client_options)), config=LLMJudgeConfig(**options), **own)

    # -- what to ask, per field (the hybrid judge overrides these to try rules first) -----------------

    def wants_behavior(self, row: ResponseRow) -> bool:
        return wants_behavior(behavior_scope(self.config.behaviors), row)

    def plan_correct(self, row: ResponseRow, pred: Prediction) -> Plan:
        decided = correctness_precheck(row, pred, self.config.lenient_format)
        if decided is not None:
            if "correct" in decided.errors:
                return Decided("correct", error=decided.errors["correct"])
            return Decided("correct", decided.correct, decided.judged_by.get("correct"))
        messages = judge_messages(
            ANSWER_CORRECTNESS,
            self.config.max_quote_chars,
            question=row.question,
            references="\n".join(f"- {a}" for a in row.answers),
            answer=pred.answer,
        )
        return Ask("correct", messages, ANSWER_CORRECTNESS.allowed)

    def plan_behavior(self, row: ResponseRow, pred: Prediction) -> Plan:
        if not self.wants_behavior(row):
            return None
        messages = judge_messages(
            BEHAVIOR, self.config.max_quote_chars, question=row.question, gap=row.gap, response=row.response
        )
        return Ask("behavior", messages, BEHAVIOR.allowed)

    def plan_clarification(self, row: ResponseRow, pred: Prediction) -> Plan:
        if not self.config.clarification or not row.gap or not clarification_applies(row, pred):
            return None
        if not clarification_text(pred):
            return Decided("clarification_correct", False, "rule")  # refused and said nothing
        return Ask("clarification_correct", clarification_messages(row, pred, self.config.max_quote_chars), CLARIFICATION.allowed)

    # -- judging ---------------------------------------------------------------------------------------

    def judge(self, rows: Sequence[ResponseRow], preds: Sequence[Prediction]) -> list[Judgment]:
        judgments = [Judgment() for _ in rows]
        asks: list[tuple[int, Ask]] = []
        for i, (row, pred) in enumerate(zip(rows, preds, strict=True)):
            for plan in (self.plan_correct(row, pred), self.plan_behavior(row, pred), self.plan_clarification(row, pred)):
                if isinstance(plan, Ask):
                    asks.append((i, plan))
                elif isinstance(plan, Decided):
                    if plan.error:
                        judgments[i].fail(plan.field, plan.error)
                    elif plan.value is not None:
                        setattr(judgments[i], plan.field, plan.value)
                        judgments[i].judged_by[plan.field] = plan.source or "rule"
        asks.sort(key=lambda item: item[1].field)  # one kind after another: servers reuse the shared prefix
        results = self.client.chat_many([ask.messages for _, ask in asks])
        for (i, ask), result in zip(asks, results, strict=True):
            if not result.ok:
                judgments[i].fail(ask.field, f"llm {ask.field}: {result.error}")
                continue
            try:
                value = self.read_verdict(ask, result.text or "")
            except VerdictError as exc:
                judgments[i].fail(ask.field, f"{self.source_of(ask.field)} {ask.field}: {exc}")
                continue
            setattr(judgments[i], ask.field, value)
            judgments[i].judged_by[ask.field] = self.source_of(ask.field)
        return judgments

    def source_of(self, field: Field) -> str:
        """What ``judged_by`` (and an error) names for a field the model decided."""
        return "llm"

    def read_verdict(self, ask: Ask, text: str) -> Any:
        """The field's value from the judge's reply: exactly one allowed token (:func:`parse_verdict`), else
        :class:`VerdictError`."""
        return _CONVERT[ask.field](parse_verdict(text, ask.allowed))

    def close(self) -> None:
        self.client.close()


def detect_abstention(client: ChatClient, rows: Sequence[ResponseRow], max_chars: int = 6000) -> list[bool | str]:
    """AbstentionBench-style abstention detection of free-form responses: True/False per row, or the
    error text (failed request or unreadable verdict) — never a guess.

    For responses that follow no box protocol; with a box, ``pred`` already says whether a row refused.
    """
    messages = [judge_messages(ABSTENTION, max_chars, question=r.question, response=r.response) for r in rows]
    out: list[bool | str] = []
    for result in client.chat_many(messages):
        if not result.ok:
            out.append(f"llm abstention: {result.error}")
            continue
        try:
            out.append(parse_verdict(result.text or "", ABSTENTION.allowed) == "Yes")
        except VerdictError as exc:
            out.append(f"llm abstention: {exc}")
    return out


@register_judge("llm")
def _llm_factory(**options: Any) -> LLMJudge:
    return LLMJudge.from_options(**options)
