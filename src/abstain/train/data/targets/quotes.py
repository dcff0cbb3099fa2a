"""Where a fact is given: the sentence of the problem text that states each equation of its graph.

A synthesized problem writes each fact with one of its theme's templates (:mod:`abstain.synth.themes`).
:func:`fact_sentences` renders every template a fact could have been written with and keeps the one
that occurs in the question, so a trace can quote the sentence it read a number from; the twin's
perturbed sentence (``meta.perturbed_sentence``) is the sentence about the missing premise (except
under entity disruption, where it is about another entity). Facts of other graphs get no quote.

Example:
    >>> from abstain.synth import make_pair
    >>> pair = make_pair(seed=3, index=0, operator="numerical_value_removal")
    >>> quotes = fact_sentences(pair.original)
    >>> quotes["blois_km"]
    'Lena drove 143 km to reach Blois.'
    >>> fact_sentences(pair.twin)["blois_km"]
    'Lena also drove the leg to Blois.'
"""

from __future__ import annotations

import re
from collections import defaultdict

from abstain.schema import Item
from abstain.synth.themes import fraction_word, times_word
from abstain.train.data.targets.words import Vocabulary, capitalize, vocabulary

__all__ = ["fact_sentences"]

_KINDS = (
    ("value", re.compile(r"(?P<n>\d+)")),
    ("rate", re.compile(r"(?P<n>\d+)\*(?P<m>\d+)")),
    ("more", re.compile(r"(?P<b>\w+) \+ (?P<n>\d+)")),
    ("less", re.compile(r"(?P<b>\w+) - (?P<n>\d+)")),
    ("times", re.compile(r"(?P<n>\d+)\*(?P<b>[A-Za-z_]\w*)")),
    ("part", re.compile(r"(?P<b>\w+)/(?P<n>\d+)")),
    ("sum", re.compile(r"(?P<b>[A-Za-z_]\w*) \+ (?P<c>[A-Za-z_]\w*)")),
)


def _kind(expr: str) -> tuple[str, dict[str, str]] | None:
    for kind, pattern in _KINDS:
        m = pattern.fullmatch(expr.strip())
        if m:
            return kind, m.groupdict()
    return None


def fact_sentences(item: Item, words: Vocabulary | None = None) -> dict[str, str]:
    """Variable -> the question's sentence that states its fact (only those found verbatim).

    ``words``: the item's :func:`vocabulary` when the caller has it (its naming style does not matter here).
    """
    extra = item.model_extra or {}
    graph = extra.get("graph") or {}
    words = words if words is not None else vocabulary(item)
    theme = words.theme
    out: dict[str, str] = {}
    if theme is None or not isinstance(graph, dict):
        return out
    for eq in graph.get("equations") or ():
        var, _, expr = str(eq).partition("=")
        var = var.strip()
        parsed = _kind(expr)
        if parsed is None or var not in words.display or not theme.has(parsed[0]):
            continue
        kind, groups = parsed
        slots: dict[str, object] = defaultdict(str, a=words.display[var], p=words.protagonist,
                                               item=words.units[var])
        slots.update({k: v for k, v in groups.items() if k in ("n", "m")})
        for key in ("b", "c"):
            if key in groups:
                slots[key] = words.display.get(groups[key], groups[key])
        if kind == "times":
            slots["x"] = times_word(int(groups["n"]))
        if kind == "part":
            slots["f"] = fraction_word(int(groups["n"]))
        for template in theme.t[kind]:
            text = capitalize(template.format_map(slots))
            if text in item.question:
                out[var] = text
                break
    perturbed = (item.meta or {}).get("perturbed_sentence")
    gap = extra.get("gap_variable")
    # entity disruption's perturbed sentence is about another entity: nothing in the twin states the gap
    if gap and isinstance(perturbed, str) and perturbed in item.question and item.perturbation != "entity_disruption":
        out[gap] = perturbed
    return out
