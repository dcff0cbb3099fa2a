"""The training mix drawn from synthesis: the shares asked for, all six perturbations, hard variants,
and never a seed or a question of the held-out benchmark."""

from __future__ import annotations

from collections import Counter

import pytest

from abstain.synth import HELDOUT_SEED, OPERATORS, heldout_questions
from abstain.train.data.mix import MixConfig, build_training_mix, training_items
from abstain.train.data.sft_data import SFTConfig


def test_shares_perturbations_and_determinism():
    cfg = MixConfig(n=400, seed=5, unanswerable_ratio=0.3, hard_ratio=0.1)
    assert cfg.deep_twins == round(40 * 108 / 292) == 15  # 15 of the twins at the hard variants' depths
    items = training_items(cfg)
    # 40 hard rows (10%), 360 missing-premise rows, round(0.3 * 360) = 108 twins: 18 of each perturbation
    assert Counter((i.category, i.label) for i in items) == {
        ("hard", "answerable"): 40, ("reasoning", "answerable"): 252, ("reasoning", "unanswerable"): 108}
    assert Counter(i.perturbation for i in items if i.label == "unanswerable") == {op: 18 for op in OPERATORS}
    assert len({i.id for i in items}) == 400
    assert [i.id for i in items] == [i.id for i in training_items(cfg)]  # same seed, same mix
    assert [i.id for i in items] != sorted(i.id for i in items)  # shuffled: hard rows are not all at the end


def test_pair_twins_brings_each_original():
    items = training_items(MixConfig(n=100, seed=5, unanswerable_ratio=0.3, hard_ratio=0.0, pair_twins=True))
    twins = [i for i in items if i.label == "unanswerable"]
    assert len(items) == 100 and len(twins) == 30
    originals = {i.pair_id for i in items if i.label == "answerable"}
    assert all(t.pair_id in originals for t in twins)


def test_never_the_heldout_benchmark():
    with pytest.raises(ValueError, match="reserved for the held-out benchmark"):
        MixConfig(seed=HELDOUT_SEED)
    held = heldout_questions()
    assert held  # the shipped file is there
    items = training_items(MixConfig(n=300, seed=2))
    assert not {i.question for i in items} & held


def test_build_training_mix_builds_checked_rows():
    built = build_training_mix(MixConfig(n=50, seed=3), SFTConfig(protocol="attribution"))
    # 5 hard, 45 missing-premise rows, round(13.5) = 14 twins (round half to even)
    assert built.counts == {"answer": 31, "data_uncertain": 14, "hard_abstain": 5}
    with pytest.raises(ValueError, match="pair_twins needs unanswerable_ratio <= 0.5"):
        MixConfig(unanswerable_ratio=0.6, pair_twins=True)
