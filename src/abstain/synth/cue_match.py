"""Cue-matched pairs: the twin states as many numbers as its original, as many vague words, and is as long.

A twin made by deleting a quantity states one number fewer than its original, and "some", "a few" or
"some of" appear in twins only — surface cues a model can learn instead of checking the problem
(:mod:`abstain.data.cues`). GSM-IC's remedy, applied to *both* sides of a pair: each member gets one more
sentence, in the same place, about the same entity that nothing in the problem asks about, and the two
sentences are chosen so that, with them, the pair agrees on

* the numeral count (:func:`abstain.data.cues.numeral_count`) — exactly,
* the vague-quantity words (:func:`abstain.data.cues.vague_count`) — exactly,
* the length in characters — within ``length_tolerance`` (10%) of the original's.

A twin that lost a number gets a sentence that states one ("Gina has 23 marbles.") while its original
gets one that states none ("Gina also collects marbles."), or the original gets "Gina has some bags with
7 marbles in each." (a number and a "some") while the twin, whose "some" came from the perturbation, gets
"Gina has 23 marbles." The sentences (*fillers*) are the theme's own fact templates about an entity not in
the problem; a filler that determines its quantity (a value or a product) adds its equation to the
member's ``graph``, so certification still proves the original answerable and the twin unanswerable
(:func:`abstain.synth.missing_premise.make_pair` re-certifies both with the fillers in).

Example:
    >>> from abstain.synth.missing_premise import make_pair
    >>> from abstain.data.cues import numeral_count, vague_count
    >>> pair = make_pair(seed=11, index=0, operator="numerical_value_removal", cue_match=True)
    >>> a, u = pair.original.question, pair.twin.question
    >>> numeral_count(a) == numeral_count(u), vague_count(a) == vague_count(u), abs(len(u) - len(a)) <= 0.1 * len(a)
    (True, True, True)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from abstain.data.cues import numeral_count, vague_count
from abstain.synth.graph import Fact
from abstain.synth.render import Layout, Voice

__all__ = ["Filler", "LENGTH_TOLERANCE", "MatchedFillers", "filler_options", "match_fillers"]

#: the largest relative length difference of a cue-matched twin from its original
LENGTH_TOLERANCE = 0.10

# filler kinds and the template key each is written with
_KINDS = ("value", "rate", "rate_no_n", "rate_no_m", "mention", "unq_more", "unq_times", "qual_at_least",
          "qual_some_of")


@dataclass(frozen=True)
class Filler:
    """One sentence about an entity the problem never asks about, and what it adds to the graph."""

    kind: str
    sentence: str
    equations: tuple[str, ...] = ()

    @property
    def numerals(self) -> int:
        return numeral_count(self.sentence)

    @property
    def vague(self) -> int:
        return vague_count(self.sentence)


def _number(rng: random.Random, lo: int, hi: int, taken: set[int]) -> int | None:
    choices = [n for n in range(lo, hi + 1) if n not in taken]
    return rng.choice(choices) if choices else None


def filler_options(voice: Voice, display: Mapping[str, str], entity: tuple[str, str], other: str,
                   taken: set[int], rng: random.Random) -> list[Filler]:
    """Every filler the theme can write about ``entity`` (variable, display name); ``other`` is a problem
    variable a comparison may name, ``taken`` the numbers a filler may not state (every number of the pair)."""
    theme = voice.theme
    var, name = entity
    shown = {**display, var: name}
    (alo, ahi), (blo, bhi) = theme.rate_ranges
    lo, hi = theme.value_range
    out: list[Filler] = []
    for kind in _KINDS:
        if not theme.has(kind):
            continue
        if kind == "value":
            n = _number(rng, lo, hi, taken)
            if n is not None:
                fact = Fact("value", var, k=n)
                out.append(Filler(kind, voice.fact_sentence(fact, shown), (fact.equation(),)))
        elif kind == "rate":
            a, b = _number(rng, alo, ahi, taken), _number(rng, blo, bhi, taken)
            if a is not None and b is not None and a != b:
                fact = Fact("rate", var, k=a, m=b)
                out.append(Filler(kind, voice.fact_sentence(fact, shown), (fact.equation(),)))
        elif kind in ("rate_no_n", "rate_no_m"):
            n = _number(rng, alo, ahi, taken) if kind == "rate_no_m" else _number(rng, blo, bhi, taken)
            if n is not None:
                out.append(Filler(kind, voice.fact_sentence(Fact("rate", var, k=n, m=n), shown, kind=kind)))
        elif kind == "mention":
            out.append(Filler(kind, voice.say("mention", var, a=name)))
        elif kind in ("unq_more", "unq_times"):
            out.append(Filler(kind, voice.say(kind, var, a=name, b=display[other])))
        else:  # qualified values: "at least 12", "some of the 40"
            n = _number(rng, max(lo, 3), hi, taken)
            if n is not None:
                out.append(Filler(kind, voice.say(kind, var, a=name, n=n)))
    return out


@dataclass(frozen=True)
class MatchedFillers:
    """The two fillers of a pair and the layout slot both go into."""

    original: Filler
    twin: Filler
    var: str
    slot: int

    def layout(self, layout: Layout) -> Layout:
        """``layout`` with the filler's slot inserted."""
        slots = list(layout.slots)
        slots.insert(self.slot, ("fact", self.var))
        return Layout(tuple(slots), layout.question)


def match_fillers(original: str, twin: str, options: Sequence[Filler], rng: random.Random,
                  tolerance: float = LENGTH_TOLERANCE) -> tuple[Filler, Filler] | None:
    """A random (original's, twin's) filler pair after which the texts agree on numerals and vague words
    and the twin's length is within ``tolerance`` of the original's; ``None`` when no pair does.

    Example:
        >>> fill = [Filler("value", "Gina has 23 marbles."), Filler("mention", "Gina also collects marbles.")]
        >>> pick = match_fillers("Tom has 3 and Ben 4. How many?", "Tom has some and Ben 4. How many?", fill,
        ...                      random.Random(0))
        >>> pick is None   # the twin's "some" has no counterpart among these fillers
        True
        >>> [f.kind for f in match_fillers("Tom has 3, Ben 4. Total?", "Tom has 3, Ben too. Total?", fill,
        ...                                random.Random(0))]
        ['mention', 'value']
    """
    need_numerals = numeral_count(twin) - numeral_count(original)
    need_vague = vague_count(twin) - vague_count(original)
    good = []
    for fo in options:
        for ft in options:
            if fo.numerals - ft.numerals != need_numerals or fo.vague - ft.vague != need_vague:
                continue
            lo, lt = len(original) + 1 + len(fo.sentence), len(twin) + 1 + len(ft.sentence)
            if abs(lt - lo) <= tolerance * lo:
                good.append((fo, ft))
    return rng.choice(good) if good else None
