"""A difficulty ladder of arithmetic problems, each answerable one with a missing-premise twin.

Abstention pays only where a policy's chance of being right crosses the reward's threshold ((1 + r) / 2 for rewards
+1 / r / -1): a training set whose every item the model fails teaches "always abstain". The ladder spreads a small
model's per-item pass rate from near 1 (one-digit sums) to 0 (three-digit products): its rungs are an operation, a
number range and a form (a bare expression or a one-step word problem). Every answerable item has a twin whose
needed quantity is replaced by a vague one ("some", "a few"), so the same split also measures declining a question
that cannot be answered.

Splits are disjoint by construction: an item's split is a hash of its answerable question, so ``train``,
``validation`` and ``test`` draw from the same templates but never share a question. ``transfer`` uses templates,
names, objects and vague words that never occur in the other splits (the same rungs' number ranges).

Example:
    >>> rows = list(generate_ladder(LadderConfig(n_per_rung=2, seed=1, split="train", rungs=("add1-bare",))))
    >>> [(r.label, r.meta["rung"]) for r in rows]
    [('answerable', 'add1-bare'), ('unanswerable', 'add1-bare'), ('answerable', 'add1-bare'), ('unanswerable', 'add1-bare')]
    >>> rows[0].pair_id == rows[1].pair_id and rows[0].answers == [str(eval(rows[0].meta["expression"]))]
    True
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from abstain.schema import Item

__all__ = ["LADDER_SPLITS", "RUNGS", "LadderConfig", "Rung", "generate_ladder", "split_of"]

#: the splits; train / validation / test share templates (10 hash buckets: 6 / 2 / 2), transfer has its own
LADDER_SPLITS = ("train", "validation", "test", "transfer")
_BUCKETS = {"train": range(0, 6), "validation": range(6, 8), "test": range(8, 10)}
#: draws per item before a rung is declared exhausted for a split (small rungs hold few distinct questions)
_TRIES = 400


@dataclass(frozen=True)
class Rung:
    """One rung: ``op`` over operands drawn from ``left`` and ``right`` (inclusive ranges), ``form`` bare or word."""

    name: str
    op: str  # "+", "-", "*"
    left: tuple[int, int]
    right: tuple[int, int]
    form: str  # "bare" | "word"


#: easiest to hardest for a small model (measured by ``abstain probe``; see docs/experiments)
RUNGS: dict[str, Rung] = {r.name: r for r in (
    Rung("add1-bare", "+", (1, 9), (1, 9), "bare"),
    Rung("add1-word", "+", (1, 9), (1, 9), "word"),
    Rung("sub1-word", "-", (3, 9), (2, 8), "word"),
    Rung("mul1-bare", "*", (2, 9), (2, 9), "bare"),
    Rung("add2-bare", "+", (10, 99), (10, 99), "bare"),
    Rung("add2-word", "+", (10, 99), (10, 99), "word"),
    Rung("mul2-bare", "*", (11, 99), (3, 9), "bare"),
    Rung("mul3-bare", "*", (100, 999), (100, 999), "bare"),
)}

_SYMBOL = {"+": "+", "-": "-", "*": "×"}
_WORD = {"+": "plus", "-": "minus", "*": "times"}

# Templates: {a}, {b} the operands; {name}, {pron}, {obj} drawn per item. A twin replaces one quantity with {vague}.
_TRAIN = {
    "names": ("Mia", "Leo", "Ava", "Sam", "Zoe", "Ben", "Lily", "Max"),
    "objects": ("pencils", "apples", "stickers", "marbles", "cookies", "stamps"),
    "vague": ("some", "a few", "several"),
    "bare": ("What is {a} {sym} {b}?", "Compute {a} {sym} {b}."),
    "bare_twin": ("What is {a} {sym} the number of {obj} {name} has?",),
    "+": ("{name} has {a} {obj}. {pron} gets {b} more {obj}. How many {obj} does {name} have now?",),
    "-": ("{name} has {a} {obj}. {pron} gives {b} {obj} to a friend. How many {obj} does {name} have left?",),
    "*": ("{name} buys {a} bags with {b} {obj} in each bag. How many {obj} does {name} buy?",),
}
_TRANSFER = {
    "names": ("Omar", "Priya", "Hugo", "Nadia", "Kenji", "Elena"),
    "objects": ("shells", "coins", "buttons", "postcards", "beads"),
    "vague": ("an unknown number of", "a handful of"),
    "bare": ("Calculate {a} {word} {b}.", "Find the value of {a} {sym} {b}."),
    "bare_twin": ("Find the value of {a} {sym} the number of {obj} in {name}'s drawer.",),
    "+": ("A box holds {a} {obj}. {name} puts {b} more {obj} into the box. How many {obj} are in the box now?",),
    "-": ("There are {a} {obj} on a table. {name} takes {b} of them away. How many {obj} remain on the table?",),
    "*": ("Each of {a} shelves holds {b} {obj}. How many {obj} are on the shelves altogether?",),
}
_TWIN_WORD = {  # the word templates with the quantity {which} ("a" or "b") made vague
    "train": {"+": {"a": "{name} has {vague} {obj}. {pron} gets {b} more {obj}. How many {obj} does {name} have now?",
                    "b": "{name} has {a} {obj}. {pron} gets {vague} more {obj}. How many {obj} does {name} have now?"},
              "-": {"a": "{name} has {vague} {obj}. {pron} gives {b} {obj} to a friend. How many {obj} does {name} "
                         "have left?",
                    "b": "{name} has {a} {obj}. {pron} gives {vague} {obj} to a friend. How many {obj} does {name} "
                         "have left?"},
              "*": {"a": "{name} buys {vague} bags with {b} {obj} in each bag. How many {obj} does {name} buy?",
                    "b": "{name} buys {a} bags with {vague} {obj} in each bag. How many {obj} does {name} buy?"}},
    "transfer": {"+": {"a": "A box holds {vague} {obj}. {name} puts {b} more {obj} into the box. How many {obj} are "
                            "in the box now?",
                       "b": "A box holds {a} {obj}. {name} puts {vague} extra {obj} into the box. How many {obj} are "
                            "in the box now?"},
                 "-": {"a": "There are {vague} {obj} on a table. {name} takes {b} of them away. How many {obj} "
                            "remain on the table?",
                       "b": "There are {a} {obj} on a table. {name} takes {vague} {obj} away. How many {obj} "
                            "remain on the table?"},
                 "*": {"a": "Each of {vague} shelves holds {b} {obj}. How many {obj} are on the shelves altogether?",
                       "b": "Each of {a} shelves holds {vague} {obj}. How many {obj} are on the shelves altogether?"}},
}
_PRONOUNS = {"Mia": "She", "Leo": "He", "Ava": "She", "Sam": "He", "Zoe": "She", "Ben": "He", "Lily": "She",
             "Max": "He", "Omar": "He", "Priya": "She", "Hugo": "He", "Nadia": "She", "Kenji": "He", "Elena": "She"}


@dataclass(frozen=True)
class LadderConfig:
    """What ``abstain synth --kind ladder`` generates: ``n_per_rung`` pairs of each rung of one split."""

    n_per_rung: int = field(metadata={"help": "answerable items (each with its twin) per rung"})
    seed: int = field(default=0, metadata={"help": "same seed -> byte-identical output"})
    split: str = field(default="train", metadata={"help": "train | validation | test | transfer"})
    rungs: tuple[str, ...] = field(default=tuple(RUNGS), metadata={"help": "rungs to draw, in this order"})
    twins: bool = field(default=True, metadata={"help": "each answerable item followed by its twin"})

    def __post_init__(self) -> None:
        if self.n_per_rung < 1:
            raise ValueError("--n must be >= 1 (pairs per rung)")
        if self.split not in LADDER_SPLITS:
            raise ValueError(f"split {self.split!r}: choose from {', '.join(LADDER_SPLITS)}")
        bad = [r for r in self.rungs if r not in RUNGS]
        if bad or not self.rungs:
            raise ValueError(f"rungs {bad}: choose from {', '.join(RUNGS)}")


def split_of(question: str) -> str:
    """The split (train, validation or test) an answerable question of the shared templates belongs to.

    >>> split_of("What is 3 + 5?") in ("train", "validation", "test")
    True
    """
    bucket = int(hashlib.sha256(question.encode()).hexdigest(), 16) % 10
    return next(name for name, buckets in _BUCKETS.items() if bucket in buckets)


def _value(op: str, a: int, b: int) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


def _draw(rng: random.Random, rung: Rung, words: dict, transfer: bool) -> tuple[dict, str, str]:
    """Operands and fillers, the answerable question and its twin."""
    a = rng.randint(*rung.left)
    b = rng.randint(rung.right[0], min(rung.right[1], a - 1) if rung.op == "-" else rung.right[1])  # a - b > 0
    name = rng.choice(words["names"])
    slots = {"a": a, "b": b, "sym": _SYMBOL[rung.op], "word": _WORD[rung.op], "name": name,
             "pron": _PRONOUNS[name], "obj": rng.choice(words["objects"]), "vague": rng.choice(words["vague"])}
    if rung.form == "bare":
        question = rng.choice(words["bare"]).format(**slots)
        twin = rng.choice(words["bare_twin"]).format(**slots)
    else:
        question = rng.choice(words[rung.op]).format(**slots)
        which = rng.choice("ab")
        twin = _TWIN_WORD["transfer" if transfer else "train"][rung.op][which].format(**slots)
    return slots, question, twin


def generate_ladder(config: LadderConfig) -> Iterator[Item]:
    """``n_per_rung`` answerable items per rung of ``config.split`` (each followed by its twin), deterministically.

    A rung holds fewer distinct questions than asked for (one-digit sums in a split: a few dozen) gives what it has.
    """
    transfer = config.split == "transfer"
    words = _TRANSFER if transfer else _TRAIN
    for rung_name in config.rungs:
        rung = RUNGS[rung_name]
        rng = random.Random(f"abstain-synth:ladder:{config.seed}:{config.split}:{rung_name}")
        seen: set[str] = set()
        made = tries = 0
        while made < config.n_per_rung and tries < _TRIES * config.n_per_rung:
            tries += 1
            slots, question, twin = _draw(rng, rung, words, transfer)
            if question in seen or (not transfer and split_of(question) != config.split):
                continue
            seen.add(question)
            pair_id = f"ladder-{config.split}-s{config.seed}-{rung_name}-{made:04d}"
            expression = f"{slots['a']} {rung.op} {slots['b']}"
            meta = {"rung": rung_name, "split": config.split, "pair_id": pair_id, "expression": expression,
                    "form": rung.form, "op": rung.op}
            common = {"category": rung_name, "source": "synth/ladder", "pair_id": pair_id}
            yield Item(id=f"{pair_id}-a", question=question, answers=[str(_value(rung.op, slots["a"], slots["b"]))],
                       label="answerable", meta=meta, **common)
            if config.twins:
                yield Item(id=f"{pair_id}-u", question=twin, answers=[], label="unanswerable",
                           perturbation="vague_quantity", gap="a quantity the answer needs is not stated",
                           meta=meta, **common)
            made += 1
