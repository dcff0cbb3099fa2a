"""How a trace names a problem's quantities: the theme's own noun and question phrases.

A synthesized item stores its theme and a graph over variables named ``<entity stem>_<unit>``
(``rosa_age``, ``blanket_price``, ``tom_trading_cards``). :func:`vocabulary` maps each variable back
to the entity the problem text shows ("Rosa", "blanket") and words it with the theme's templates:
``noun`` ("Rosa's age", "the price of the blanket") and ``ask`` ("how old Rosa is", "how much the
blanket costs"), the phrases the problem's own gap sentences are written with. Themes that name a
protagonist ("how much Mia saved in May") find it in the question text. Variables of other items
(no theme) are worded from their names.

Example:
    >>> from abstain.schema import Item
    >>> item = Item(id="1", question="Rosa is 26 years old. How old is Maya?", answers=["3"],
    ...             label="answerable", theme="ages",
    ...             graph={"variables": ["rosa_age", "maya_age"], "equations": [], "target": "maya_age"})
    >>> words = vocabulary(item, names="noun")
    >>> words.noun("rosa_age"), words.ask("maya_age"), words.noun("blue_box")
    ("Rosa's age", 'how old Maya is', 'blue box')
    >>> vocabulary(item).noun("rosa_age")
    'Rosa'

"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from abstain.schema import Item
from abstain.synth.themes import THEMES, Theme

__all__ = ["SHORT_NOUNS", "Vocabulary", "capitalize", "vocabulary"]

#: the compact name of a quantity per theme (``names="short"``): the entity alone ("Tom", "the clock")
SHORT_NOUNS = {"collections": "{a}", "ages": "{a}", "shopping": "the {a}", "travel": "{a}", "savings": "{a}",
               "recipes": "the {a}", "inventory": "the {a}"}
# where a theme's own phrase does not name the quantity it asks for ("how many bags Tom has")
_OVERRIDES = {("collections", "ask_rate_n"): "how many bags of {item} {a} has"}


def capitalize(text: str) -> str:
    """First letter upper case, the rest unchanged ("the leg to Lyon" -> "The leg to Lyon")."""
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Vocabulary:
    """Noun and question phrases for the variables of one item."""

    theme: Theme | None = None
    display: dict[str, str] = field(default_factory=dict)  # variable -> entity as the text shows it
    units: dict[str, str] = field(default_factory=dict)  # variable -> its unit words (the item of a collection)
    protagonist: str = ""
    names: str = "short"  # short: the entity alone ("the blanket"); noun: the theme's noun phrase

    def _fill(self, key: str, var: str) -> str | None:
        if self.theme is None or var not in self.display:
            return None
        template = _OVERRIDES.get((self.theme.name, key))
        if template is None:
            if key == "short":
                template = SHORT_NOUNS.get(self.theme.name)
            elif self.theme.has(key):
                template = self.theme.pick(key, 0)
        if template is None:
            return None
        return template.format(a=self.display[var], p=self.protagonist, item=self.units[var])

    def noun(self, var: str) -> str:
        """The quantity as a noun phrase: "the blanket" (short names) or "the price of the blanket"."""
        return self._fill("short" if self.names == "short" else "noun", var) or var.replace("_", " ")

    def phrase(self, var: str) -> str:
        """The theme's noun phrase whatever ``names`` is ("the leg to Lyon", for "Let x be ...")."""
        return self._fill("noun", var) or var.replace("_", " ")

    def ask(self, var: str, form: str | None = None) -> str:
        """An indirect question for the quantity ("how old Rosa is"); rate forms ask for the missing factor."""
        if form in ("rate_no_n", "rate_no_m"):
            rate = self._fill("ask_rate_n" if form == "rate_no_n" else "ask_rate_m", var)
            if rate:
                return rate
        return self._fill("ask", var) or f"what {self.noun(var)} is"


def _protagonist(theme: Theme, question: str) -> str:
    for name in theme.protagonists:
        if name and re.search(rf"\b{re.escape(name)}\b", question):
            return name
    return ""


def vocabulary(item: Item, names: str = "short") -> Vocabulary:
    """The vocabulary of ``item`` (its ``theme`` and ``graph.variables``; empty for other items).

    ``names``: ``short`` names a quantity by its entity ("Rosa", "the blanket"), ``noun`` by the theme's
    noun phrase ("Rosa's age", "the price of the blanket").
    """
    if names not in ("short", "noun"):
        raise ValueError(f"names must be short or noun (got {names!r})")
    extra = item.model_extra or {}
    theme = THEMES.get(extra.get("theme") or "")
    graph = extra.get("graph") or {}
    if theme is None or not isinstance(graph, dict):
        return Vocabulary(names=names)
    stems = sorted(theme.entities, key=lambda e: -len(e[0]))  # longest first: rice_flour before flour
    display: dict[str, str] = {}
    units: dict[str, str] = {}
    for var in graph.get("variables") or ():
        for stem, shown in stems:
            if var.startswith(stem + "_"):
                display[var] = shown
                units[var] = var[len(stem) + 1 :].replace("_", " ")
                break
    return Vocabulary(theme, display, units, _protagonist(theme, item.question), names)
