"""Training mixes drawn from certified synthesis: missing-premise twins and hard variants.

ACA-RL turns about 30% of its problems into missing-premise versions; UA-Bench's RL-UA adds
extremely hard variants for the model-uncertainty side. :func:`synth_mix` draws ``n`` problems: a share
``hard_ratio`` of hard items (``category: hard``), the rest one row per drawn problem with a share
``unanswerable_ratio`` of twins (of those non-hard rows), every perturbation type in turn. The held-out benchmark's seed is
refused and none of its questions is ever emitted; the same arguments give the same items.

Example:
    >>> items = synth_mix(20, seed=5, unanswerable_ratio=0.3, hard_ratio=0.1)
    >>> len(items), sum(i.label == "unanswerable" for i in items), sum(i.category == "hard" for i in items)
    (20, 5, 2)
"""

from __future__ import annotations

import random

from abstain.schema import Item
from abstain.synth import HardConfig, SynthConfig, generate_hard, generate_missing_premise, heldout_questions

__all__ = ["synth_mix"]


def synth_mix(n: int, seed: int, unanswerable_ratio: float = 0.3, hard_ratio: float = 0.0) -> list[Item]:
    """``n`` certified training items in a seeded order (see the module docstring)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    n_hard = round(n * hard_ratio)
    items: list[Item] = []
    if n - n_hard:
        config = SynthConfig(n=n - n_hard, seed=seed, unanswerable_ratio=unanswerable_ratio,
                             exclude_questions=heldout_questions())
        items += list(generate_missing_premise(config))
    if n_hard:
        held_out = heldout_questions()
        hard = [i for i in generate_hard(HardConfig(n=2 * n_hard, seed=seed)) if i.question not in held_out]
        items += hard[:n_hard]
    random.Random(seed).shuffle(items)
    return items
