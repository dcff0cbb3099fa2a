"""Seven themes that turn a problem graph into English: the sentence templates of every fact kind,
of every perturbation, the question and the phrases a gap is written with.

Placeholders: ``{a}`` the entity the sentence is about, ``{b}`` ``{c}`` the entities it refers to,
``{n}`` ``{m}`` numbers, ``{x}`` a multiplier word ("twice", "three times"), ``{f}`` a fraction word
("half", "a third"), ``{p}`` the theme's protagonist, ``{item}`` the theme's counted thing.
A key with several templates is a choice drawn per fact. No template writes a digit of its own, so
every number in a rendered problem comes from the graph.

Example:
    >>> THEMES["ages"].pick("more", 0).format(a="Ben", b="Tom", n=5)
    'Ben is 5 years older than Tom.'
    >>> sorted(THEMES)
    ['ages', 'collections', 'inventory', 'recipes', 'savings', 'shopping', 'travel']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["THEMES", "Theme", "fraction_word", "times_word"]

_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                 "fifteen sixteen seventeen eighteen nineteen twenty").split()
_ORDINALS = {2: "half", 3: "a third", 4: "a quarter", 5: "a fifth", 6: "a sixth", 7: "a seventh",
             8: "an eighth", 9: "a ninth", 10: "a tenth", 11: "an eleventh", 12: "a twelfth"}


def times_word(k: int) -> str:
    """2 -> 'twice', 3 -> 'three times' (words, so the text's digits all come from values)."""
    return "twice" if k == 2 else f"{_NUMBER_WORDS[k]} times"


def fraction_word(k: int) -> str:
    """2 -> 'half', 3 -> 'a third'."""
    return _ORDINALS[k]


@dataclass(frozen=True)
class Theme:
    """Templates and number ranges of one theme.

    ``entities`` are (variable stem, display name); ``t`` maps a template key to alternatives; keys
    missing from ``t`` mean the theme cannot render that form (a perturbation then picks another
    condition or another theme). ``unit`` is the variable suffix (``tom_marbles``).
    """

    name: str
    unit: str
    entities: tuple[tuple[str, str], ...]
    t: dict[str, tuple[str, ...]]
    protagonists: tuple[str, ...] = ("",)
    items: tuple[str, ...] = ("",)
    value_range: tuple[int, int] = (3, 40)
    offset_range: tuple[int, int] = (2, 19)
    max_value: int = 400
    hard_scale: int = 25  # hard variants multiply value ranges by this (0: no hard variants)
    rate_ranges: tuple[tuple[int, int], tuple[int, int]] = ((2, 9), (3, 20))  # the two factors of a product
    hard_rate_ranges: tuple[tuple[int, int], tuple[int, int]] = ((6, 40), (12, 99))
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)  # extra placeholder pools

    def has(self, key: str) -> bool:
        return key in self.t

    def pick(self, key: str, choice: int) -> str:
        options = self.t[key]
        return options[choice % len(options)]


def _ents(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((re.sub(r"[^a-z]+", "_", n.lower()).strip("_"), n) for n in names)


_PEOPLE = _ents("Tom", "Ben", "Cara", "Dan", "Eve", "Finn", "Gina", "Hugo", "Iris", "Jack", "Kira", "Liam",
                "Maya", "Noah", "Olga", "Paul", "Rosa", "Sam", "Tara", "Ugo", "Vera", "Will")
_TOWNS = _ents("Lyon", "Metz", "Nantes", "Dijon", "Reims", "Tours", "Nancy", "Rouen", "Brest", "Lille",
               "Amiens", "Caen", "Nice", "Arles", "Pau", "Albi", "Vichy", "Sedan", "Blois", "Colmar")
_MONTHS = _ents("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")

THEMES: dict[str, Theme] = {}


def _theme(theme: Theme) -> None:
    THEMES[theme.name] = theme


_theme(Theme(
    name="collections", unit="{item}", entities=_PEOPLE,
    items=("marbles", "stickers", "stamps", "seashells", "trading cards", "comic books"),
    t={
        "intro": ("Some friends compare how many {item} they have.", "A group of children collect {item}."),
        "flavor": ("They keep their {item} in shoe boxes.", "Nobody wants to trade their favourite {item}."),
        "value": ("{a} has {n} {item}.", "{a} owns {n} {item}."),
        "rate": ("{a} has {n} bags with {m} {item} in each.",),
        "rate_no_n": ("{a} has some bags with {m} {item} in each.",),
        "rate_no_m": ("{a} has {n} bags of {item}.",),
        "ask_rate_n": ("how many bags {a} has",), "ask_rate_m": ("how many {item} are in each of {a}'s bags",),
        "more": ("{a} has {n} more {item} than {b}.",), "less": ("{a} has {n} fewer {item} than {b}.",),
        "times": ("{a} has {x} as many {item} as {b}.",), "part": ("{a} has {f} as many {item} as {b}.",),
        "sum": ("{a} has as many {item} as {b} and {c} combined.",),
        "question": ("How many {item} does {a} have?",), "ask": ("how many {item} {a} has",),
        "noun": ("{a}'s {item}",), "mention": ("{a} also collects {item}.", "{a} has a collection of {item} too."),
        "unq_more": ("{a} has more {item} than {b}.",), "unq_less": ("{a} has fewer {item} than {b}.",),
        "unq_times": ("{a} has a few times as many {item} as {b}.",),
        "unq_part": ("{a} has only a fraction of the {item} {b} has.",),
        "unq_sum": ("{a} has more {item} than {b} and {c} combined.",),
        "qual_at_least": ("{a} has at least {n} {item}.",), "qual_about": ("{a} has about {n} {item}.",),
        "qual_at_most": ("{a} has no more than {n} {item}.",),
        "qual_some_of": ("{a} owns some of the {n} {item} in the club's shared box.",),
        "qual_more": ("{a} has at least {n} more {item} than {b}.",),
        "qual_less": ("{a} has at least {n} fewer {item} than {b}.",),
        "qual_times": ("{a} has at least {x} as many {item} as {b}.",),
        "contract": ("{n} of {a}'s {item} are from last summer.", "{n} of {a}'s {item} are kept in a tin."),
        "contract_sum": ("{a} has as many {item} in one box alone as {b} and {c} combined.",),
    },
    value_range=(3, 60), max_value=500,
))

_theme(Theme(
    name="ages", unit="age", entities=_PEOPLE, hard_scale=0,
    extra={"town": ("Oslo", "Porto", "Quebec", "Dublin", "Krakow", "Leeds")},
    t={
        "intro": ("Here are some facts about a family.", "The family is planning a birthday party."),
        "flavor": ("The family lives near the sea.", "Everyone likes chocolate cake."),
        "value": ("{a} is {n} years old.", "{a} turned {n} this year."),
        "more": ("{a} is {n} years older than {b}.",), "less": ("{a} is {n} years younger than {b}.",),
        "times": ("{a} is {x} as old as {b}.",), "part": ("{a} is {f} as old as {b}.",),
        "sum": ("{a} is as old as {b} and {c} put together.",),
        "question": ("How old is {a}?",), "ask": ("how old {a} is",), "noun": ("{a}'s age",),
        "mention": ("{a} is also part of the family.", "{a} has a birthday next month."),
        "unq_more": ("{a} is older than {b}.",), "unq_less": ("{a} is younger than {b}.",),
        "unq_times": ("{a} is a few times as old as {b}.",), "unq_part": ("{a} is much younger than {b}.",),
        "unq_sum": ("{a} is older than {b} and {c} put together.",),
        "qual_at_least": ("{a} is at least {n} years old.",), "qual_about": ("{a} is about {n} years old.",),
        "qual_at_most": ("{a} is no older than {n}.",),
        "qual_more": ("{a} is at least {n} years older than {b}.",),
        "qual_less": ("{a} is at least {n} years younger than {b}.",),
        "qual_times": ("{a} is at least {x} as old as {b}.",),
        "contract": ("{a} has lived in {town} for {n} years.",),
    },
    value_range=(3, 40), offset_range=(2, 30), max_value=99,
))

_theme(Theme(
    name="shopping", unit="price", hard_scale=40,
    entities=_ents("lamp", "kettle", "backpack", "umbrella", "notebook", "toaster", "blanket", "jacket",
                   "scarf", "teapot", "mirror", "clock", "basket", "candle", "pillow", "vase", "wallet",
                   "helmet", "radio", "skateboard"),
    t={
        "intro": ("A shop is having a sale.", "Jo is comparing prices at a department store."),
        "flavor": ("The shop closes early on Sundays.", "Every item comes gift-wrapped."),
        "value": ("The {a} costs ${n}.", "The {a} sells for ${n}."),
        "rate": ("The {a} is paid in {n} installments of ${m}.",),
        "rate_no_n": ("The {a} is paid in installments of ${m}.",),
        "rate_no_m": ("The {a} is paid in {n} equal installments.",),
        "ask_rate_n": ("how many installments the {a} is paid in",),
        "ask_rate_m": ("how much each installment for the {a} is",),
        "more": ("The {a} costs ${n} more than the {b}.",), "less": ("The {a} costs ${n} less than the {b}.",),
        "times": ("The {a} costs {x} as much as the {b}.",), "part": ("The {a} costs {f} as much as the {b}.",),
        "sum": ("The {a} costs as much as the {b} and the {c} together.",),
        "question": ("How much does the {a} cost, in dollars?",), "ask": ("how much the {a} costs",),
        "noun": ("the price of the {a}",), "mention": ("The {a} is also on sale.", "The shop has the {a} in stock too."),
        "unq_more": ("The {a} costs more than the {b}.",), "unq_less": ("The {a} is cheaper than the {b}.",),
        "unq_times": ("The {a} costs a few times as much as the {b}.",),
        "unq_part": ("The {a} costs only a fraction of what the {b} costs.",),
        "unq_sum": ("The {a} costs more than the {b} and the {c} together.",),
        "qual_at_least": ("The {a} costs at least ${n}.",), "qual_about": ("The {a} costs about ${n}.",),
        "qual_at_most": ("The {a} costs no more than ${n}.",),
        "qual_more": ("The {a} costs at least ${n} more than the {b}.",),
        "qual_less": ("The {a} costs at least ${n} less than the {b}.",),
        "qual_times": ("The {a} costs at least {x} as much as the {b}.",),
        "contract": ("Tax makes up ${n} of the price of the {a}.",),
    },
    value_range=(4, 80), offset_range=(2, 30), max_value=900,
    rate_ranges=((2, 12), (5, 60)), hard_rate_ranges=((6, 24), (25, 400)),
))

_theme(Theme(
    name="travel", unit="km", entities=_TOWNS, protagonists=("Lena", "Omar", "Priya", "Marco"),
    t={
        "intro": ("{p} drove across France in several legs.", "{p} is on a road trip."),
        "flavor": ("{p} listened to podcasts the whole way.", "It rained on most of the trip."),
        "value": ("On the leg to {a}, {p} drove {n} km.", "{p} drove {n} km to reach {a}."),
        "rate": ("On the leg to {a}, {p} drove for {n} hours at {m} km per hour.",),
        "rate_no_n": ("On the leg to {a}, {p} drove at {m} km per hour.",),
        "rate_no_m": ("On the leg to {a}, {p} drove for {n} hours.",),
        "ask_rate_n": ("for how long {p} drove on the leg to {a}",),
        "ask_rate_m": ("how fast {p} drove on the leg to {a}",),
        "more": ("The leg to {a} was {n} km longer than the leg to {b}.",),
        "less": ("The leg to {a} was {n} km shorter than the leg to {b}.",),
        "times": ("The leg to {a} was {x} as long as the leg to {b}.",),
        "part": ("The leg to {a} was {f} as long as the leg to {b}.",),
        "sum": ("The leg to {a} was as long as the legs to {b} and {c} together.",),
        "question": ("How many km did {p} drive on the leg to {a}?",),
        "ask": ("how far {p} drove on the leg to {a}",), "noun": ("the leg to {a}",),
        "mention": ("{p} also drove the leg to {a}.",),
        "unq_more": ("The leg to {a} was longer than the leg to {b}.",),
        "unq_less": ("The leg to {a} was shorter than the leg to {b}.",),
        "unq_times": ("The leg to {a} was a few times as long as the leg to {b}.",),
        "unq_part": ("The leg to {a} was much shorter than the leg to {b}.",),
        "unq_sum": ("The leg to {a} was longer than the legs to {b} and {c} together.",),
        "qual_at_least": ("On the leg to {a}, {p} drove at least {n} km.",),
        "qual_about": ("On the leg to {a}, {p} drove about {n} km.",),
        "qual_at_most": ("On the leg to {a}, {p} drove no more than {n} km.",),
        "qual_some_of": ("On the leg to {a}, {p} drove some of the {n} km of the scenic route.",),
        "qual_more": ("The leg to {a} was at least {n} km longer than the leg to {b}.",),
        "qual_less": ("The leg to {a} was at least {n} km shorter than the leg to {b}.",),
        "qual_times": ("The leg to {a} was at least {x} as long as the leg to {b}.",),
        "contract": ("On the leg to {a}, {p} drove {n} km before stopping for lunch.",),
    },
    value_range=(20, 240), offset_range=(5, 60), max_value=2000, hard_scale=10,
    rate_ranges=((2, 6), (30, 90)), hard_rate_ranges=((3, 12), (45, 95)),
))

_theme(Theme(
    name="savings", unit="saved", entities=_MONTHS, protagonists=("Mia", "Ravi", "Sofia", "Ken"),
    t={
        "intro": ("{p} is saving up for a bicycle.", "{p} keeps track of the money saved each month."),
        "flavor": ("{p} keeps the savings in a blue jar.", "{p} never spends money on snacks."),
        "value": ("In {a}, {p} saved ${n}.", "{p} put aside ${n} in {a}."),
        "rate": ("In {a}, {p} saved ${m} a week for {n} weeks.",),
        "rate_no_n": ("In {a}, {p} saved ${m} a week.",),
        "rate_no_m": ("In {a}, {p} saved the same amount each week for {n} weeks.",),
        "ask_rate_n": ("for how many weeks {p} saved in {a}",), "ask_rate_m": ("how much {p} saved each week in {a}",),
        "more": ("In {a}, {p} saved ${n} more than in {b}.",), "less": ("In {a}, {p} saved ${n} less than in {b}.",),
        "times": ("In {a}, {p} saved {x} as much as in {b}.",), "part": ("In {a}, {p} saved {f} as much as in {b}.",),
        "sum": ("In {a}, {p} saved as much as in {b} and {c} combined.",),
        "question": ("How many dollars did {p} save in {a}?",), "ask": ("how much {p} saved in {a}",),
        "noun": ("{p}'s savings in {a}",), "mention": ("{p} also saved some money in {a}.",),
        "unq_more": ("In {a}, {p} saved more than in {b}.",), "unq_less": ("In {a}, {p} saved less than in {b}.",),
        "unq_times": ("In {a}, {p} saved a few times as much as in {b}.",),
        "unq_part": ("In {a}, {p} saved only a fraction of the {b} amount.",),
        "unq_sum": ("In {a}, {p} saved more than in {b} and {c} combined.",),
        "qual_at_least": ("In {a}, {p} saved at least ${n}.",), "qual_about": ("In {a}, {p} saved about ${n}.",),
        "qual_at_most": ("In {a}, {p} saved no more than ${n}.",),
        "qual_some_of": ("In {a}, {p} saved some of the ${n} earned from a summer job.",),
        "qual_more": ("In {a}, {p} saved at least ${n} more than in {b}.",),
        "qual_less": ("In {a}, {p} saved at least ${n} less than in {b}.",),
        "qual_times": ("In {a}, {p} saved at least {x} as much as in {b}.",),
        "contract": ("In {a}, ${n} of {p}'s savings came from babysitting.",),
    },
    value_range=(5, 90), offset_range=(2, 30), max_value=1200, hard_scale=20,
    rate_ranges=((2, 4), (3, 30)), hard_rate_ranges=((2, 4), (40, 400)),
))

_theme(Theme(
    name="recipes", unit="g",
    entities=_ents("flour", "sugar", "butter", "oats", "cocoa", "almonds", "raisins", "honey", "yogurt",
                   "cream cheese", "walnuts", "cornstarch", "coconut", "milk powder", "rice flour",
                   "chocolate chips", "hazelnuts", "semolina", "pecans", "dates"),
    t={
        "intro": ("A baker is writing down a cake recipe.", "Here is a recipe for a large batch of cookies."),
        "flavor": ("The cake bakes for under an hour.", "The recipe is from a grandmother's notebook."),
        "value": ("The recipe calls for {n} grams of {a}.", "The recipe uses {n} grams of {a}."),
        "rate": ("The recipe uses {n} scoops of {a}, each weighing {m} grams.",),
        "rate_no_n": ("The recipe uses scoops of {a}, each weighing {m} grams.",),
        "rate_no_m": ("The recipe uses {n} scoops of {a}.",),
        "ask_rate_n": ("how many scoops of {a} the recipe uses",), "ask_rate_m": ("how much a scoop of {a} weighs",),
        "more": ("The recipe uses {n} grams more {a} than {b}.",),
        "less": ("The recipe uses {n} grams less {a} than {b}.",),
        "times": ("The recipe uses {x} as much {a} as {b}.",), "part": ("The recipe uses {f} as much {a} as {b}.",),
        "sum": ("The recipe uses as much {a} as {b} and {c} combined.",),
        "question": ("How many grams of {a} does the recipe use?",),
        "ask": ("how many grams of {a} the recipe uses",), "noun": ("the amount of {a}",),
        "mention": ("The recipe also uses some {a}.",),
        "unq_more": ("The recipe uses more {a} than {b}.",), "unq_less": ("The recipe uses less {a} than {b}.",),
        "unq_times": ("The recipe uses a few times as much {a} as {b}.",),
        "unq_part": ("The recipe uses only a little {a} compared with {b}.",),
        "unq_sum": ("The recipe uses more {a} than {b} and {c} combined.",),
        "qual_at_least": ("The recipe uses at least {n} grams of {a}.",),
        "qual_about": ("The recipe uses about {n} grams of {a}.",),
        "qual_at_most": ("The recipe uses no more than {n} grams of {a}.",),
        "qual_some_of": ("The recipe uses some of the {n} grams of {a} left in the jar.",),
        "qual_more": ("The recipe uses at least {n} grams more {a} than {b}.",),
        "qual_less": ("The recipe uses at least {n} grams less {a} than {b}.",),
        "qual_times": ("The recipe uses at least {x} as much {a} as {b}.",),
        "contract": ("{n} grams of the {a} go into the filling.",),
    },
    value_range=(10, 250), offset_range=(5, 60), max_value=3000, hard_scale=10,
    rate_ranges=((2, 9), (10, 60)), hard_rate_ranges=((6, 30), (12, 99)),
))

_theme(Theme(
    name="inventory", unit="boxes",
    entities=_ents("screws", "nails", "bolts", "hinges", "light bulbs", "batteries", "fuses", "gloves", "tape",
                   "washers", "zip ties", "drill bits", "paint brushes", "sandpaper", "rivets", "cables",
                   "switches", "sockets", "filters", "clamps"),
    t={
        "intro": ("A hardware warehouse is counting its stock.", "The warehouse manager is doing the inventory."),
        "flavor": ("The warehouse is cleaned every Friday.", "Deliveries arrive through the back door."),
        "value": ("The warehouse has {n} boxes of {a}.", "There are {n} boxes of {a} in stock."),
        "rate": ("The warehouse has {n} pallets of {a} with {m} boxes on each.",),
        "rate_no_n": ("The warehouse has pallets of {a} with {m} boxes on each.",),
        "rate_no_m": ("The warehouse has {n} pallets of {a}.",),
        "ask_rate_n": ("how many pallets of {a} there are",), "ask_rate_m": ("how many boxes of {a} are on each pallet",),
        "more": ("There are {n} more boxes of {a} than boxes of {b}.",),
        "less": ("There are {n} fewer boxes of {a} than boxes of {b}.",),
        "times": ("There are {x} as many boxes of {a} as boxes of {b}.",),
        "part": ("There are {f} as many boxes of {a} as boxes of {b}.",),
        "sum": ("There are as many boxes of {a} as boxes of {b} and {c} together.",),
        "question": ("How many boxes of {a} does the warehouse have?",),
        "ask": ("how many boxes of {a} the warehouse has",), "noun": ("the stock of {a}",),
        "mention": ("The warehouse also stocks {a}.",),
        "unq_more": ("There are more boxes of {a} than boxes of {b}.",),
        "unq_less": ("There are fewer boxes of {a} than boxes of {b}.",),
        "unq_times": ("There are a few times as many boxes of {a} as boxes of {b}.",),
        "unq_part": ("There are only a fraction as many boxes of {a} as boxes of {b}.",),
        "unq_sum": ("There are more boxes of {a} than boxes of {b} and {c} together.",),
        "qual_at_least": ("The warehouse has at least {n} boxes of {a}.",),
        "qual_about": ("The warehouse has about {n} boxes of {a}.",),
        "qual_at_most": ("The warehouse has no more than {n} boxes of {a}.",),
        "qual_more": ("There are at least {n} more boxes of {a} than boxes of {b}.",),
        "qual_less": ("There are at least {n} fewer boxes of {a} than boxes of {b}.",),
        "qual_times": ("There are at least {x} as many boxes of {a} as boxes of {b}.",),
        "contract": ("{n} of the boxes of {a} are on the top shelf.",),
        "contract_sum": ("The top shelf alone holds as many boxes of {a} as there are boxes of {b} and {c} together.",),
    },
    value_range=(5, 90), offset_range=(2, 30), max_value=1500, hard_scale=20,
))
