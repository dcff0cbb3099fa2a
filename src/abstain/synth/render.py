"""Problem graph -> English: one sentence per fact, a layout (intro, varied order, a distractor
sentence) and the question.

A :class:`Voice` fixes the per-problem choices (protagonist, counted item, which template of each
fact) so that an original and its twin are worded identically except for the perturbed sentence.

Example:
    >>> import random
    >>> from abstain.synth.graph import Fact
    >>> from abstain.synth.themes import THEMES
    >>> voice = make_voice(THEMES["ages"], random.Random(1))
    >>> voice.fact_sentence(Fact("times", "ben_age", ("tom_age",), k=3), {"ben_age": "Ben", "tom_age": "Tom"})
    'Ben is three times as old as Tom.'
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from abstain.synth.graph import Fact, ProblemGraph
from abstain.synth.themes import Theme, fraction_word, times_word

__all__ = ["Layout", "Voice", "make_layout", "make_voice", "variable_name"]


def variable_name(stem: str, unit: str) -> str:
    """``("tom", "trading cards")`` -> ``"tom_trading_cards"`` (a valid sympy/python name)."""
    return f"{stem}_{unit.replace(' ', '_')}"


@dataclass
class Voice:
    """The wording choices of one problem."""

    theme: Theme
    fills: dict[str, str]
    seed: int
    choices: dict[str, int] = field(default_factory=dict)

    def choice(self, key: str) -> int:
        """A stable template choice per key (per fact, per form)."""
        if key not in self.choices:
            self.choices[key] = zlib.crc32(f"{self.seed}:{key}".encode())
        return self.choices[key]

    def say(self, key: str, slot: str = "", **values: object) -> str:
        text = self.theme.pick(key, self.choice(f"{key}:{slot}")).format(**self.fills, **values)
        return text[0].upper() + text[1:]

    def phrase(self, key: str, **values: object) -> str:
        """A phrase (no capital, no full stop) such as the ``ask`` or ``noun`` of an entity."""
        return self.theme.pick(key, 0).format(**self.fills, **values)

    @property
    def unit(self) -> str:
        return self.theme.unit.format(**self.fills)

    def fact_sentence(self, fact: Fact, display: Mapping[str, str], kind: str | None = None,
                      var: str | None = None) -> str:
        """The sentence of ``fact`` (``kind`` overrides the template key, ``var`` the subject)."""
        key = kind or fact.kind
        subject = display[var or fact.var]
        parents = [display[p] for p in fact.parents]
        slots: dict[str, object] = {"a": subject, "n": fact.k, "m": fact.m}
        if parents:
            slots["b"] = parents[0]
        if len(parents) > 1:
            slots["c"] = parents[1]
        if fact.kind in ("times", "part"):
            slots["x"] = times_word(fact.k) if fact.kind == "times" else ""
            slots["f"] = fraction_word(fact.k) if fact.kind == "part" else ""
        return self.say(key, fact.var, **slots)


def make_voice(theme: Theme, rng: random.Random) -> Voice:
    fills = {"p": rng.choice(theme.protagonists), "item": rng.choice(theme.items)}
    for key, pool in sorted(theme.extra.items()):
        fills[key] = rng.choice(pool)
    return Voice(theme, fills, rng.randrange(1 << 30))


@dataclass(frozen=True)
class Layout:
    """The order of a problem's sentences: ``("fact", var)`` slots and fixed texts."""

    slots: tuple[tuple[str, str], ...]
    question: str

    def render(self, sentences: Mapping[str, str]) -> str:
        parts = [sentences[v] if kind == "fact" else v for kind, v in self.slots]
        return " ".join(p for p in parts if p) + " " + self.question


def make_layout(graph: ProblemGraph, voice: Voice, display: Mapping[str, str], rng: random.Random,
                intro_prob: float = 0.7, flavor_prob: float = 0.35) -> Layout:
    """Varied order: dependency order or a shuffle; an optional intro and a flavor sentence."""
    order: Sequence[str] = list(graph.facts)
    if rng.random() < 0.6:
        order = list(order)
        rng.shuffle(order)
    slots: list[tuple[str, str]] = [("fact", v) for v in order]
    if voice.theme.has("flavor") and rng.random() < flavor_prob:
        slots.insert(rng.randrange(1, len(slots) + 1), ("text", voice.say("flavor")))
    if voice.theme.has("intro") and rng.random() < intro_prob:
        slots.insert(0, ("text", voice.say("intro")))
    question = voice.say("question", a=display[graph.target])
    return Layout(tuple(slots), question)
