"""The data levers of a GRPO recipe, without a model: problems matched to the policy by a probe, synthesis depths,
cue matching in the training mix."""

from __future__ import annotations

import pytest

from abstain.records.probes import PROBE, ProbeRow
from abstain.schema import DataError, Item, write_jsonl
from abstain.train.data.build import load_items
from abstain.train.recipe import DataSpec


def _pairs(n: int) -> list[Item]:
    items = []
    for i in range(n):
        pair = {"pair_id": f"p{i}"}
        items.append(Item(id=f"p{i}-a", question=f"Tom has {i + 3} apples. How many?", answers=[str(i + 3)],
                          label="answerable", meta=pair))
        items.append(Item(id=f"p{i}-u", question="Tom has some apples. How many?", answers=[], label="unanswerable",
                          meta=pair))
    return items


def _probe(folder, p_hats: dict[str, float | None]) -> None:
    rows = []
    for item in _pairs(len(p_hats)):
        if item.label != "answerable":
            continue
        p = p_hats[item.id]
        rows.append(ProbeRow(**item.model_dump(), model="m", protocol="idk", k=4, n_judged=4,
                             n_correct=0 if p is None else round(4 * p), p_hat=p, ook=p == 0, samples=[]))
    folder.mkdir()
    write_jsonl(folder / PROBE, rows)


def test_problems_matched_to_the_policy_keep_twins_with_their_original(tmp_path):
    items = tmp_path / "items.jsonl"
    write_jsonl(items, _pairs(4))
    _probe(tmp_path / "probe", {"p0-a": 0.0, "p1-a": 0.25, "p2-a": 1.0, "p3-a": 0.75})
    kept = load_items(DataSpec(file=str(items), probe=str(tmp_path / "probe")))
    # 0 < p-hat < 1: problems 1 and 3, each original with its twin, p-hat recorded on both
    assert [(i.id, i.meta["p_hat"]) for i in kept] == [("p1-a", 0.25), ("p1-u", 0.25), ("p3-a", 0.75), ("p3-u", 0.75)]
    narrow = load_items(DataSpec(file=str(items), probe=str(tmp_path / "probe"), p_range=(0.5, 1.0)))
    assert [i.id for i in narrow] == ["p3-a", "p3-u"]
    # p_range null: every problem, its p-hat recorded - p-hat 0 is what rl_ua reads as "beyond me"
    every = load_items(DataSpec(file=str(items), probe=str(tmp_path / "probe"), p_range=None))
    assert [(i.id, i.meta["p_hat"]) for i in every] == [
        (f"p{n}-{kind}", p) for n, p in enumerate((0.0, 0.25, 1.0, 0.75)) for kind in "au"]
    from abstain.train.rewards.presets import score_one

    assert score_one("rl_ua", every[0], "\\boxed{<MODEL_UNCERTAIN>}").score == 1.0  # p-hat 0: beyond me
    assert score_one("rl_ua", every[4], "\\boxed{<MODEL_UNCERTAIN>}").score == 0.0  # p-hat 1: a false refusal


def test_a_problem_missing_from_the_probe_is_an_error_naming_the_item(tmp_path):
    items = tmp_path / "items.jsonl"
    write_jsonl(items, _pairs(3))
    _probe(tmp_path / "probe", {"p0-a": 0.5, "p1-a": 0.5})
    rows = [line for line in (tmp_path / "probe" / PROBE).read_text().splitlines()]
    (tmp_path / "probe" / PROBE).write_text("\n".join(rows[:1]) + "\n")  # p1 is not probed
    with pytest.raises(DataError, match="item 'p1-a'.*not in the probe"):
        load_items(DataSpec(file=str(items), probe=str(tmp_path / "probe")))
    with pytest.raises(ValueError, match="p_range"):
        load_items(DataSpec(file=str(items), probe=str(tmp_path / "probe"), p_range=(0.5, 0.5)))


def test_synthesis_depths_and_cue_matching_reach_the_training_mix():
    from abstain.data.cues import numeral_count
    from abstain.train.recipe import SynthSpec

    spec = DataSpec(synth=SynthSpec(n=24, seed=5, unanswerable_ratio=0.5, pair_twins=True, depths=(2,)))
    items = load_items(spec)
    assert {i.model_extra["depth"] for i in items} == {2}
    by_pair: dict[str, list[Item]] = {}
    for item in items:
        by_pair.setdefault(item.meta["pair_id"], []).append(item)
    pairs = [group for group in by_pair.values() if len(group) == 2]
    assert pairs and all(numeral_count(a.question) == numeral_count(u.question) for a, u in pairs)
    plain = load_items(DataSpec(synth=SynthSpec(n=24, seed=5, unanswerable_ratio=0.5, pair_twins=True, cue_match=False)))
    assert not any("cue_filler" in i.meta for i in plain) and all("cue_filler" in i.meta for i in items)
