"""Hard variants (UA-Bench's model-uncertainty side): well-posed, certified, much harder problems.

UA-Bench rewrites problems into "extremely difficult" versions that still have one answer, to see
whether a model admits its own limits (``MODEL_UNCERTAIN``) instead of guessing. Here the same graph
machinery draws them directly: deeper chains (6-8 facts on the solution path), more variables (side
values pulled in by sums, 2-3 distractor facts), numbers 10-40x larger and factors up to nine.
Every item is certified (the target is determined and equals the answer) before it is emitted.
The ``ages`` theme has no hard variants (nobody is 900 years old).

Example:
    >>> item = make_hard(seed=3, index=0)
    >>> item.category, item.label, item.depth >= 6
    ('hard', 'answerable', True)
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from abstain.schema import Item
from abstain.synth.certify import certify_answerable
from abstain.synth.graph import GraphSpec
from abstain.synth.missing_premise import MAX_DRAWS, draw_problem, themes_with_room
from abstain.synth.seeds import check_seed
from abstain.synth.themes import THEMES, Theme

__all__ = ["HARD_DEPTHS", "HARD_DISTRACTORS", "HARD_THEMES", "HardConfig", "generate_hard", "hard_spec", "make_hard"]

#: themes with hard variants
HARD_THEMES = tuple(name for name, theme in THEMES.items() if theme.hard_scale)
#: solution-path depths and distractor counts of hard variants (round robin)
HARD_DEPTHS, HARD_DISTRACTORS = (6, 7, 8), (2, 3)


@dataclass(frozen=True)
class HardConfig:
    """What ``abstain synth --kind hard`` generates."""

    n: int = field(metadata={"help": "items to write"})
    seed: int = field(default=0, metadata={"help": "same seed -> byte-identical output"})
    themes: tuple[str, ...] = field(default=HARD_THEMES, metadata={"help": "themes to draw from"})
    depths: tuple[int, ...] = field(default=HARD_DEPTHS, metadata={"help": "solution-path depths, round robin"})
    distractors: tuple[int, ...] = field(default=HARD_DISTRACTORS, metadata={"help": "distractor facts per problem"})
    allow_heldout_seed: bool = field(default=False, metadata={"help": "only the held-out build sets it"})
    exclude_questions: frozenset[str] = field(default=frozenset(), metadata={"help": "never emit these texts"})

    def __post_init__(self) -> None:
        check_seed(self.seed, self.allow_heldout_seed)
        if self.n < 1:
            raise ValueError("--n must be >= 1")
        bad = sorted(set(self.themes) - set(HARD_THEMES))
        if bad or not self.themes:
            raise ValueError(f"themes {bad} have no hard variants; choose from {list(HARD_THEMES)}")


def hard_spec(theme: Theme, depth: int, distractors: int) -> GraphSpec:
    """The theme's ranges scaled up: larger numbers, factors 2-9, more sums and products."""
    s = theme.hard_scale
    lo, hi = theme.value_range
    olo, ohi = theme.offset_range
    return GraphSpec(depth=depth, distractors=distractors, value_range=(lo * s, hi * s),
                     offset_range=(olo * s, ohi * s), factors=(2, 3, 4, 5, 6, 7, 8, 9),
                     max_value=theme.max_value * s * 4, sum_prob=0.45, rate_prob=0.5,
                     rate_factors=theme.hard_rate_ranges)


def make_hard(seed: int, index: int, themes: Sequence[str] = HARD_THEMES, depth: int = 6,
              distractors: int = 2) -> Item:
    """Hard item ``index`` of ``seed`` (certified)."""
    rng = random.Random(f"abstain-synth:hard:{seed}:{index}")
    item_id = f"synth-hard-s{seed}-{index:05d}"
    usable = themes_with_room(themes, depth, distractors)
    reasons: list[str] = []
    for _ in range(MAX_DRAWS):
        theme = THEMES[rng.choice(usable)]
        try:
            drawn = draw_problem(rng, theme, hard_spec(theme, depth, distractors))
        except RuntimeError as exc:
            reasons.append(str(exc))
            continue
        graph = drawn.graph_dict()
        answer = str(drawn.graph.values[drawn.graph.target])
        cert = certify_answerable(graph, answer)
        if not cert.ok:
            reasons.append(cert.reason)
            continue
        return Item(id=item_id, question=drawn.text(), answers=[answer], label="answerable", category="hard",
                    source="synth/hard", graph=graph, pair_id=None, depth=drawn.graph.depth_of(drawn.graph.target),
                    theme=theme.name, gap_variable=None, meta={})
    raise RuntimeError(f"hard item {index} of seed {seed}: {MAX_DRAWS} draws failed ({reasons[-3:]})")


def generate_hard(cfg: HardConfig) -> Iterator[Item]:
    """Yield ``cfg.n`` certified hard items (depths and distractor counts round robin), skipping any whose
    question is in ``cfg.exclude_questions``."""
    made, i = 0, 0
    while made < cfg.n:
        item = make_hard(cfg.seed, i, cfg.themes, cfg.depths[i % len(cfg.depths)],
                         cfg.distractors[i % len(cfg.distractors)])
        i += 1
        if item.question not in cfg.exclude_questions:
            made += 1
            yield item
