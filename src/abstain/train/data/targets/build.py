"""SFT targets per protocol: check what the question needs, then decide, in the protocol's format.

Every target opens with the check — one line per needed quantity, starting with the one asked for
(:mod:`abstain.train.data.targets.trace`) — so the decision is taken only where the check finds (or does
not find) a missing premise, never in the first tokens. Then, by protocol:

==============  =====================================  ==============================================
protocol        answerable                             unanswerable (missing premise)
==============  =====================================  ==============================================
attribution     solution, ``\\boxed{N}``                ``\\boxed{<DATA_UNCERTAIN>}``
idk             solution, ``\\boxed{N}``                ``\\boxed{I don't know.}``
clarify         ``<thinking>`` check + solution         ``<thinking>`` check ``</thinking><answer>``
                ``</thinking><answer>\\boxed{N}``       ``\\boxed{I don't know.}`` + a question for it
aca             solution, ``\\boxed{N}``                ELICIT (boxed question), COND (``\\boxed{x - 10}``)
                                                       or ABS (``\\boxed{I don't know.}``), a mix
==============  =====================================  ==============================================

Hard variants (``category: hard``) stop the check after a few lines and say why the problem is beyond
reliable mental arithmetic (``\\boxed{<MODEL_UNCERTAIN>}`` under attribution, ``\\boxed{I don't know.}``
under idk), or are solved (``hard="solve"``; the default for clarify and aca, whose formats have no
model-uncertainty decision).

Example:
    >>> from abstain.synth import make_pair
    >>> pair = make_pair(seed=11, index=0, operator="numerical_value_removal")
    >>> a = build_target(pair.original, "attribution")
    >>> u = build_target(pair.twin, "attribution")
    >>> a.kind, u.kind, u.text.endswith("\\\\boxed{<DATA_UNCERTAIN>}")
    ('answer', 'data_uncertain', True)
    >>> a.text.splitlines()[0] == u.text.splitlines()[0]  # the same opening
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from abstain.schema import Behavior, Item, Pred
from abstain.train.data.targets.quotes import fact_sentences
from abstain.train.data.targets.trace import Walk, format_number, is_literal
from abstain.train.data.targets.words import Vocabulary, capitalize, vocabulary

__all__ = ["ACA_CHOICES", "Intent", "PROTOCOLS", "Target", "TargetConfig", "build_target"]

#: protocols with SFT targets (answer_only has no abstention to teach)
PROTOCOLS = ("attribution", "idk", "clarify", "aca", "abstention_only")
#: the three ACA behaviors a missing-premise target can take
ACA_CHOICES = ("ELICIT", "COND", "ABS")

MISSING = "A needed fact is missing"


@dataclass(frozen=True)
class TargetConfig:
    """How targets are written.

    Attributes:
        verbosity: ``short`` (check lines and solution only), ``normal`` (plus "All needed facts are
            given." before the solution), ``long`` (plus the opening "The question asks for ..." and
            "The answer is N.").
        names: how a quantity is named: ``short`` (its entity: "Rosa", "the blanket") or ``noun`` (the
            theme's noun phrase: "Rosa's age", "the price of the blanket").
        hard: ``auto`` (abstain under attribution/idk/abstention_only, solve under clarify/aca),
            ``abstain`` or ``solve``.
        hard_check_lines: check lines a hard target writes before it gives up.
        quote: each check line first quotes the sentence of the problem it reads the fact from
            (:mod:`abstain.train.data.targets.quotes`; ~10-15 more tokens a line, an explicit grounding step).
        no_graph: items without a ``graph``: ``error``, or ``plain`` (a short target without a trace:
            the item's ``gap`` for unanswerable items, the reference answer for answerable ones).
    """

    verbosity: Literal["short", "normal", "long"] = "normal"
    names: Literal["short", "noun"] = "short"
    hard: Literal["auto", "abstain", "solve"] = "auto"
    hard_check_lines: int = 3
    quote: bool = False
    no_graph: Literal["error", "plain"] = "error"

    def __post_init__(self) -> None:
        if self.verbosity not in ("short", "normal", "long"):
            raise ValueError(f"verbosity must be short, normal or long (got {self.verbosity!r})")
        if self.names not in ("short", "noun"):
            raise ValueError(f"names must be short or noun (got {self.names!r})")
        if self.hard not in ("auto", "abstain", "solve"):
            raise ValueError(f"hard must be auto, abstain or solve (got {self.hard!r})")
        if self.hard_check_lines < 0:
            raise ValueError("hard_check_lines must be >= 0")
        if self.no_graph not in ("error", "plain"):
            raise ValueError(f"no_graph must be error or plain (got {self.no_graph!r})")


@dataclass(frozen=True)
class Intent:
    """What abstain's scorer must find in a target (None: not checked).

    ``format_ok`` defaults to True: every built target boxes its decision (a rejected DPO sample need not).
    """

    pred: Pred
    correct: bool | None = None
    behavior: Behavior | None = None
    clarification_correct: bool | None = None
    format_ok: bool | None = True


@dataclass(frozen=True)
class Target:
    """One built completion, what kind it is and what the scorer must say about it."""

    text: str
    kind: str
    intent: Intent


_ANSWER = Intent(Pred.ANSWER, correct=True)


def _hard_abstains(protocol: str, config: TargetConfig) -> bool:
    if config.hard == "auto":
        return protocol in ("attribution", "idk", "abstention_only")
    return config.hard == "abstain"


def _box(content: str) -> str:
    return f"\\boxed{{{content}}}"


def _gap_reason(item: Item, words: Vocabulary, var: str) -> str:
    """Why ``var`` is unknown, in words the problem text supports."""
    form = (item.meta or {}).get("form")
    # these gaps name what only the original shows: the relation's other side, or that the fact now
    # stated about another entity was this quantity's; the twin's text supports "never states" alone
    if item.perturbation in ("relationship_removal", "entity_disruption") or not item.gap:
        return f"The problem never states {words.ask(var, form)}."
    return item.gap.strip()


def _question(words: Vocabulary, var: str, form: str | None) -> str:
    return f"Could you tell me {words.ask(var, form)}?"


def build_target(item: Item, protocol: str, config: TargetConfig = TargetConfig(),
                 aca_choice: str = "ELICIT") -> Target:
    """The target of ``item`` under ``protocol``; ``aca_choice`` picks the aca behavior of a twin.

    Raises ValueError (naming the item) when the item's graph cannot give a trace.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"no SFT targets for protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    if aca_choice not in ACA_CHOICES:
        raise ValueError(f"aca choice must be one of {ACA_CHOICES} (got {aca_choice!r})")
    graph = (item.model_extra or {}).get("graph")
    try:
        if not graph:
            if config.no_graph == "error":
                raise ValueError("it has no graph to derive a trace from (set no_graph='plain' for a short target)")
            return _plain(item, protocol)
        words = vocabulary(item, config.names)
        quotes = fact_sentences(item, words) if config.quote else {}
        return _Builder(item, protocol, config, Walk.of(graph), words, quotes).build(aca_choice)
    except ValueError as exc:
        raise ValueError(f"item {item.id}: {exc}") from None


@dataclass
class _Builder:
    item: Item
    protocol: str
    config: TargetConfig
    walk: Walk
    words: Vocabulary
    quotes: dict[str, str]

    def noun(self, var: str) -> str:
        return self.words.noun(var)

    def cap(self, var: str) -> str:
        return capitalize(self.words.noun(var))

    def opening(self) -> list[str]:
        if self.config.verbosity != "long":
            return []
        return [f"The question asks for {self.noun(self.walk.target)}."]

    def wrap(self, thinking: list[str], decision: str, answer_extra: str = "") -> str:
        return _wrap(self.protocol, thinking, decision, answer_extra)

    def build(self, aca_choice: str) -> Target:
        if self.item.label == "unanswerable":
            return self.unanswerable(aca_choice)
        if self.item.category == "hard" and _hard_abstains(self.protocol, self.config):
            return self.hard()
        return self.answerable()

    def answerable(self) -> Target:
        check = self.walk.check(self.noun, quotes=self.quotes)
        if check.missing is not None:
            raise ValueError(f"answerable, but nothing defines {check.missing}")
        value = self.walk.value(self.walk.target)
        if not value.is_number:
            raise ValueError("the target is not a number")
        answer = format_number(value.b)
        if self.item.answers and answer not in self.item.answers:
            raise ValueError(f"the graph gives {answer}, the reference answers are {self.item.answers}")
        lines = [*self.opening(), *check.lines]
        if self.config.verbosity != "short":
            lines.append("All needed facts are given.")
        lines += self.walk.solution(self.noun)
        if self.config.verbosity == "long":
            lines.append(f"The answer is {answer}.")
        kind = "hard_answer" if self.item.category == "hard" else "answer"
        return Target(self.wrap(lines, _box(answer)), kind, _ANSWER)

    def hard(self) -> Target:
        check = self.walk.check(self.noun, quotes=self.quotes)
        shown = check.lines[: self.config.hard_check_lines]
        needed = self.walk.needed()
        steps = sum(1 for v in needed if self.walk.parents(v) or not is_literal(self.walk.defs.get(v, "")))
        largest = format_number(max(self.walk.given_numbers(), default=0))
        reason = (f"The answer needs {len(needed)} facts and {steps} calculations with numbers up to {largest}, "
                  "too long to work out reliably in my head.")
        lines = [*self.opening(), *shown, reason]
        token = "<MODEL_UNCERTAIN>" if self.protocol == "attribution" else "I don't know."
        return Target(self.wrap(lines, _box(token)), "hard_abstain", Intent(Pred.MODEL_UNCERTAIN))

    def unanswerable(self, aca_choice: str) -> Target:
        item, words = self.item, self.words
        form = (item.meta or {}).get("form")
        gap_var = (item.model_extra or {}).get("gap_variable")

        def missing(var: str) -> str:
            said = f'"{self.quotes[var]}" ' if var in self.quotes else ""
            return f"{said}{self.cap(var)} = unknown. {_gap_reason(item, words, var)}"

        check = self.walk.check(self.noun, missing, self.quotes)
        if check.missing is None:
            raise ValueError("unanswerable, but its graph defines every quantity the target needs")
        if gap_var and check.missing != gap_var:
            raise ValueError(f"the check stops at {check.missing}, but gap_variable is {gap_var}")
        var = check.missing
        lines = [*self.opening(), *check.lines]
        question = _question(words, var, form)
        if self.protocol == "attribution":
            lines.append(f"{MISSING}, so the question cannot be answered.")
            return Target(self.wrap(lines, _box("<DATA_UNCERTAIN>")), "data_uncertain",
                          Intent(Pred.DATA_UNCERTAIN, behavior=Behavior.ABS))
        if self.protocol in ("idk", "abstention_only"):
            lines.append(f"{MISSING}, so the question cannot be answered.")
            return Target(self.wrap(lines, _box("I don't know.")), "idk",
                          Intent(Pred.MODEL_UNCERTAIN, behavior=Behavior.ABS))
        if self.protocol == "clarify":
            lines.append(f"{MISSING}, so I ask for it.")
            return Target(self.wrap(lines, _box("I don't know."), question), "clarify",
                          Intent(Pred.MODEL_UNCERTAIN, behavior=Behavior.ELICIT, clarification_correct=True))
        # aca
        if aca_choice == "ELICIT":
            lines.append(f"{MISSING}, so I ask for it.")
            return Target(self.wrap(lines, _box(question)), "elicit",
                          Intent(Pred.ANSWER, correct=False, behavior=Behavior.ELICIT, clarification_correct=True))
        if aca_choice == "COND":
            value = self.walk.value(self.walk.target, free=var)
            if value.is_number:
                raise ValueError(f"the target does not depend on the missing {var}")
            lines.append(f"{MISSING}, so I answer in terms of it. Let x be {self.words.phrase(var)}.")
            lines += self.walk.solution(self.noun, free=var)
            return Target(self.wrap(lines, _box(str(value))), "cond",
                          Intent(Pred.ANSWER, correct=False, behavior=Behavior.COND))
        lines.append(f"{MISSING}, so the question cannot be answered.")
        return Target(self.wrap(lines, _box("I don't know.")), "abs",
                      Intent(Pred.MODEL_UNCERTAIN, behavior=Behavior.ABS))


def _wrap(protocol: str, thinking: list[str], decision: str, answer_extra: str = "") -> str:
    """The protocol's layout: clarify puts the reasoning in <thinking> and the decision in <answer>."""
    if protocol == "clarify":
        answer = decision + (f" {answer_extra}" if answer_extra else "")
        return f"<thinking>{chr(10).join(thinking)}</thinking><answer>{answer}</answer>"
    return "\n".join([*thinking, decision])


def _plain(item: Item, protocol: str) -> Target:
    """A target without a trace (items without a graph); an item whose ``meta.expression`` states its computation (the
    arithmetic ladder's, ``7 * 6``) gets that one line of work: ``7 × 6 = 42.``"""
    if item.label == "answerable":
        if not item.answers:
            raise ValueError("answerable, but it has no reference answer")
        expression = item.meta.get("expression")
        work = f"{expression.replace('*', '×')} = {item.answers[0]}." if isinstance(expression, str) else None
        return Target(_wrap(protocol, [work or "The question gives what is needed."], _box(item.answers[0])), "answer",
                      _ANSWER)
    reason = (item.gap or "The question leaves out information a unique answer needs.").strip()
    lines = [reason, f"{MISSING}, so the question cannot be answered."]
    if protocol == "attribution":
        return Target(_wrap(protocol, lines, _box("<DATA_UNCERTAIN>")), "data_uncertain", Intent(Pred.DATA_UNCERTAIN))
    if protocol == "clarify":
        return Target(_wrap(protocol, lines, _box("I don't know."), "Could you give the missing information?"), "clarify",
                      Intent(Pred.MODEL_UNCERTAIN, behavior=Behavior.ELICIT))
    return Target(_wrap(protocol, lines, _box("I don't know.")), "idk" if protocol != "aca" else "abs",
                  Intent(Pred.MODEL_UNCERTAIN))
