"""The held-out benchmark: certified missing-premise pairs of all six types plus a hard split.

``src/abstain/data/synth/heldout.jsonl`` holds 50 pairs per perturbation type (600 rows: each twin
with its answerable original) and 120 hard variants, all drawn with :data:`HELDOUT_SEED`, which the
generators refuse for anything else (:mod:`abstain.synth.seeds`), and training sets made with
``abstain synth`` never contain one of its questions (``exclude_questions``). It is the ``heldout``
suite of ``abstain eval``. Rebuild it, byte for byte, with::

    abstain synth --kind heldout --out src/abstain/data/synth/heldout.jsonl

Example:
    >>> rows = build_heldout(pairs_per_operator=1, hard=1)
    >>> [r.label for r in rows].count("unanswerable"), rows[-1].category
    (6, 'hard')
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path

from abstain.schema import Item, read_jsonl
from abstain.synth.hard import HardConfig, generate_hard
from abstain.synth.missing_premise import SynthConfig, generate_missing_premise
from abstain.synth.perturb import OPERATORS
from abstain.synth.seeds import HELDOUT_SEED

__all__ = ["HELDOUT_HARD", "HELDOUT_PAIRS_PER_OPERATOR", "HELDOUT_SEED", "build_heldout", "heldout_file",
           "heldout_questions", "iter_heldout"]

HELDOUT_PAIRS_PER_OPERATOR = 50
HELDOUT_HARD = 120


def heldout_file() -> Path:
    """Where the shipped held-out file lives."""
    return Path(str(resources.files("abstain") / "data" / "synth" / "heldout.jsonl"))


def iter_heldout(pairs_per_operator: int = HELDOUT_PAIRS_PER_OPERATOR, hard: int = HELDOUT_HARD) -> Iterator[Item]:
    """The held-out rows in file order: the pairs (original, twin), then the hard split."""
    yield from generate_missing_premise(SynthConfig(
        n=2 * pairs_per_operator * len(OPERATORS), seed=HELDOUT_SEED, allow_heldout_seed=True))
    yield from generate_hard(HardConfig(n=hard, seed=HELDOUT_SEED, allow_heldout_seed=True))


def build_heldout(pairs_per_operator: int = HELDOUT_PAIRS_PER_OPERATOR, hard: int = HELDOUT_HARD) -> list[Item]:
    return list(iter_heldout(pairs_per_operator, hard))


@cache
def _questions(path: str, mtime: float) -> frozenset[str]:
    return frozenset(item.question for item in read_jsonl(path, Item))


def heldout_questions() -> frozenset[str]:
    """Every question text of the shipped held-out file (empty when the file is absent)."""
    path = heldout_file()
    if not path.exists():
        return frozenset()
    return _questions(str(path), os.path.getmtime(path))
