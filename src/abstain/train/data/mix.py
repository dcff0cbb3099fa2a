"""A training mix straight from synthesis: certified missing-premise rows of all six perturbations,
hard variants, never the held-out benchmark.

The rows are drawn with a training seed (the generators refuse the held-out seed, and no question of
the shipped held-out file is ever emitted), about ``unanswerable_ratio`` of the missing-premise rows
are twins (perturbations round robin, so all six equally often), ``hard_ratio`` of all rows are hard
variants, and the whole list is shuffled with the seed. ``pair_twins=True`` also puts each twin's
answerable original in the mix, so the model sees the same problem with and without its premise.

Cue-matched mixes (``cue_match``, the default) also balance the hard variants: those are answerable and state
about twice as many numbers as the rest (6-8 facts on the solution path, 2-3 distractors), so on their own
they make "many numbers" a sign of the label ``answerable`` (a 1,200-row mix audited at numeral-count AUC 0.57
with them, 0.51 without). With ``match_hard`` some of the twins are *deep* ones, drawn at the hard
variants' depths and distractor counts and put in without their originals, so both labels hold as many long
problems in the same proportion (``abstain cues`` on the mix: docs/training-data.md).

Example:
    >>> items = training_items(MixConfig(n=20, seed=3, hard_ratio=0.1))
    >>> len(items), sum(i.label == "unanswerable" for i in items), sum(i.category == "hard" for i in items)
    (20, 5, 2)
    >>> training_items(MixConfig(n=10, seed=90417))
    Traceback (most recent call last):
    ...
    ValueError: seed 90417 is reserved for the held-out benchmark (src/abstain/data/synth/heldout.jsonl); use another seed
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from itertools import chain
from dataclasses import dataclass, field

from abstain.data.guard import check_training
from abstain.schema import Item
from abstain.synth.hard import HARD_DEPTHS, HARD_DISTRACTORS, HardConfig, generate_hard
from abstain.synth.heldout import heldout_questions
from abstain.synth.missing_premise import SynthConfig, SynthPair, generate_missing_premise
from abstain.synth.perturb import OPERATORS
from abstain.synth.seeds import check_seed
from abstain.synth.themes import THEMES
from abstain.train.data.sft_data import SFTBuild, SFTConfig, build_sft

__all__ = ["MixConfig", "build_training_mix", "training_items"]


@dataclass(frozen=True)
class MixConfig:
    """What :func:`training_items` draws."""

    n: int = field(default=600, metadata={"help": "rows in the mix"})
    seed: int = field(default=1, metadata={"help": "training seed (never the held-out seed)"})
    unanswerable_ratio: float = field(default=0.3, metadata={"help": "share of twins among missing-premise rows"})
    hard_ratio: float = field(default=0.1, metadata={"help": "share of hard variants among all rows"})
    pair_twins: bool = field(default=False, metadata={"help": "each twin's original goes in too"})
    themes: tuple[str, ...] = field(default=tuple(THEMES), metadata={"help": "themes of missing-premise rows"})
    operators: tuple[str, ...] = field(default=OPERATORS, metadata={"help": "perturbations, round robin"})
    depths: tuple[int, ...] = field(default=(2, 3, 4), metadata={"help": "solution-path depths, round robin"})
    cue_match: bool = field(default=True, metadata={"help": "twins keep their original's numeral count, vague "
                                                            "words and length (abstain.synth.cue_match)"})
    match_hard: bool = field(default=True, metadata={"help": "with cue_match: as many of the twins are deep "
                                                             "(the hard variants' depths, unpaired) as there are "
                                                             "hard variants"})

    def __post_init__(self) -> None:
        check_seed(self.seed)
        if self.n < 1:
            raise ValueError("n must be >= 1")
        if not 0 <= self.unanswerable_ratio <= 1:
            raise ValueError("unanswerable_ratio must be between 0 and 1")
        if not 0 <= self.hard_ratio <= 1:
            raise ValueError("hard_ratio must be between 0 and 1")
        if self.pair_twins and self.unanswerable_ratio > 0.5:
            raise ValueError("pair_twins needs unanswerable_ratio <= 0.5 (every twin brings its original)")

    @property
    def counts(self) -> tuple[int, int, int]:
        """(hard rows, missing-premise rows, twins among them)."""
        hard = round(self.n * self.hard_ratio)
        mp = self.n - hard
        return hard, mp, round(mp * self.unanswerable_ratio)

    @property
    def deep_twins(self) -> int:
        """Twins drawn at the hard variants' depths (without their originals), as large a share of the twins as
        the hard variants are of the answerable rows (see the module docstring)."""
        hard, _, twins = self.counts
        if not (self.cue_match and self.match_hard and hard and twins):
            return 0
        return min(twins, round(hard * twins / (self.n - twins)))


def _deep_twins(cfg: MixConfig, exclude: frozenset[str]) -> Iterator[Item]:
    """``cfg.deep_twins`` cue-matched twins at the hard variants' depths and distractor counts (perturbations
    round robin), each certified unanswerable with its original (which stays out of the mix)."""
    if cfg.deep_twins:
        yield from generate_missing_premise(SynthConfig(
            n=cfg.deep_twins, seed=cfg.seed, themes=cfg.themes, operators=cfg.operators, depths=HARD_DEPTHS,
            distractors=HARD_DISTRACTORS, unanswerable_ratio=1.0, exclude_questions=exclude, cue_match=True,
            stream="mpdeep"))


def _missing_premise(cfg: MixConfig, exclude: frozenset[str]) -> Iterator[Item]:
    _, mp, twins = cfg.counts
    deep = cfg.deep_twins
    yield from _deep_twins(cfg, exclude)
    mp, twins = mp - deep, twins - deep
    ops = cfg.operators[deep % len(cfg.operators):] + cfg.operators[:deep % len(cfg.operators)]  # round robin on
    if mp == 0:
        return
    if not cfg.pair_twins:
        yield from generate_missing_premise(SynthConfig(
            n=mp, seed=cfg.seed, themes=cfg.themes, operators=ops, cue_match=cfg.cue_match,
            depths=cfg.depths, unanswerable_ratio=twins / mp if deep else cfg.unanswerable_ratio,
            exclude_questions=exclude))
        return
    problems = mp - twins
    last: list[SynthPair] = []
    rows = generate_missing_premise(SynthConfig(
        n=problems, seed=cfg.seed, themes=cfg.themes, operators=ops, cue_match=cfg.cue_match,
        depths=cfg.depths,
        unanswerable_ratio=twins / problems if problems else 0.0, exclude_questions=exclude), on_pair=last.append)
    for row in rows:
        yield row
        if row.label == "unanswerable":
            yield last[-1].original


def _hard(cfg: MixConfig, exclude: frozenset[str]) -> Iterator[Item]:
    if cfg.counts[0]:
        yield from generate_hard(HardConfig(n=cfg.counts[0], seed=cfg.seed, exclude_questions=exclude))


def training_items(cfg: MixConfig, on_item: Callable[[int], None] | None = None) -> list[Item]:
    """Draw the mix (shuffled with the seed); see the module docstring."""
    exclude = heldout_questions()
    items = []
    for item in chain(_missing_premise(cfg, exclude), _hard(cfg, exclude)):
        items.append(item)
        if on_item is not None:
            on_item(1)
    random.Random(f"abstain-mix:{cfg.seed}").shuffle(items)
    check_training(items, f"the training mix (seed {cfg.seed})")  # held-out questions excluded above; all checked
    return items


def build_training_mix(cfg: MixConfig, sft: SFTConfig, on_progress: Callable[[int], None] | None = None) -> SFTBuild:
    """Draw the mix and build its self-checked SFT rows under ``sft.protocol``.

    Example:
        >>> built = build_training_mix(MixConfig(n=10, seed=4), SFTConfig(protocol="attribution"))
        >>> built.counts
        {'answer': 6, 'data_uncertain': 3, 'hard_abstain': 1}
    """
    return build_sft(training_items(cfg), sft, on_progress)
