"""Suites, balanced subsets, custom files and few-shot demonstrations on the shipped benchmarks."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from abstain.data import HELDOUT_PATH, benchmark_of, load_benchmark, load_custom, load_suite, select_items
from abstain.data.fewshot import choose_demos
from abstain.protocols import get_protocol
from abstain.schema import DataError


def test_quick_is_balanced_fixed_and_covers_every_benchmark():
    quick = load_suite("quick")
    assert HELDOUT_PATH.exists(), "the synthesis held-out file is part of quick"
    assert len(quick.items) == 120
    assert Counter(i.label for i in quick.items) == {"answerable": 60, "unanswerable": 60}
    assert {benchmark_of(i) for i in quick.items} == {
        "gsm8k", "math500", "umwp", "mip_gsm8k", "mip_svamp", "mip_formula", "treecut", "selfaware", "heldout"
    }
    held = {i.perturbation for i in quick.items if benchmark_of(i) == "heldout" and i.perturbation}
    assert held == {"numerical_value_removal", "relationship_removal", "relationship_unquantifiable_replacement",
                    "entity_disruption", "qualifier_disruption", "condition_contraction"}
    assert {i.category for i in quick.items} == {"knowledge", "reasoning"}
    umwp_perturbations = {i.perturbation for i in quick.items if benchmark_of(i) == "umwp" and i.perturbation}
    assert len(umwp_perturbations) == 5  # spread over all five UMWP categories
    ids = {i.id for i in quick.items}
    for item in quick.items:  # paired benchmarks bring both twins
        if benchmark_of(item) in ("umwp", "mip_gsm8k", "heldout") and item.label == "unanswerable":
            twins = [i for i in quick.items if i.meta.get("pair_id") == item.meta["pair_id"] and i is not item]
            assert len(twins) == 1 and twins[0].label == "answerable" and twins[0].id in ids
    assert [i.id for i in load_suite("quick").items] == [i.id for i in quick.items]


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 16, 33])
def test_limit_gives_a_deterministic_balanced_subset(limit):
    a = load_suite("quick", limit=limit, seed=5)
    b = load_suite("quick", limit=limit, seed=5)
    assert [i.id for i in a.items] == [i.id for i in b.items]
    assert len(a.items) == limit
    labels = Counter(i.label for i in a.items)
    assert abs(labels["answerable"] - labels["unanswerable"]) <= 1
    quick_ids = [i.id for i in load_suite("quick").items]
    assert [i.id for i in a.items] == [x for x in quick_ids if x in {i.id for i in a.items}]  # suite order kept


def test_different_seeds_draw_different_subsets():
    draws = {tuple(i.id for i in load_suite("math", limit=10, seed=s).items) for s in range(5)}
    assert len(draws) > 1
    one = load_suite("math", limit=10, seed=0).items
    assert Counter(i.label for i in one) == {"answerable": 5, "unanswerable": 5}
    assert len({benchmark_of(i) for i in one}) >= 5  # spread over benchmarks, not the first file


def test_pool_excludes_evaluated_items_and_their_twins():
    s = load_suite("quick")
    ids = {i.id for i in s.items}
    pairs = {i.meta.get("pair_id") for i in s.items} - {None}
    assert s.pool
    assert not ids & {i.id for i in s.pool}
    assert not pairs & {i.meta.get("pair_id") for i in s.pool}


def test_full_and_math_suites():
    math = load_suite("math")
    assert {i.category for i in math.items} == {"reasoning"}
    full = load_suite("full")
    assert len(full.items) == len({i.id for i in full.items})
    assert {i.id for i in math.items} < {i.id for i in full.items}
    assert sum(len(load_benchmark(b)) for b in ("selfaware",)) + len(math.items) <= len(full.items)


def test_heldout_suite_is_the_synthesis_file_and_part_of_full():
    held = load_suite("heldout")
    assert len(held.items) == sum(1 for line in HELDOUT_PATH.read_text().splitlines() if line.strip())
    assert all(i.perturbation for i in held.items if i.label == "unanswerable")
    assert {benchmark_of(i) for i in held.items} == {"heldout"}
    assert {i.id for i in held.items} <= {i.id for i in load_suite("full").items}


def test_a_missing_heldout_file_is_named(monkeypatch, tmp_path):
    from abstain.data import suite_draws

    monkeypatch.setattr(suite_draws, "heldout_path", lambda: tmp_path / "heldout.jsonl")
    with pytest.raises(DataError, match="heldout.jsonl: the heldout suite's file is missing"):
        load_suite("heldout")


def test_unknown_suite():
    with pytest.raises(ValueError, match="quick"):
        load_suite("nope")


def test_custom_data_is_validated_with_file_and_line(tmp_path):
    good = {"id": "a", "question": "What is 2+2?", "answers": ["4"], "label": "answerable"}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "label": "maybe"}) + "\n")
    with pytest.raises(DataError, match=r"items\.jsonl:2: field 'label'"):
        load_custom(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(DataError, match="duplicate item id 'a'"):
        load_custom(path)


def test_custom_data_subset_and_pool(tmp_path):
    items = load_benchmark("umwp")[:10] + load_benchmark("umwp")[2600:2610]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(i.model_dump(mode="json")) + "\n" for i in items))
    s = load_custom(path, limit=4, seed=1)
    assert Counter(i.label for i in s.items) == {"answerable": 2, "unanswerable": 2}
    assert len(s.pool) < 16 and not {i.id for i in s.pool} & {i.id for i in s.items}


def test_select_items_rejects_a_bad_limit():
    with pytest.raises(ValueError):
        select_items(load_benchmark("mip_formula"), limit=0)


def test_demos_are_disjoint_deterministic_and_one_of_five_unanswerable():
    s = load_suite("quick", limit=12, seed=0)
    demos = choose_demos(s, shots=5, unanswerable=1, seed=0)
    assert demos == choose_demos(s, shots=5, unanswerable=1, seed=0)
    assert set(demos) == {benchmark_of(i) for i in s.items}
    evaluated = {i.id for i in s.items}
    pairs = {i.meta.get("pair_id") for i in s.items} - {None}
    for bench, ds in demos.items():
        assert len(ds) == 5 and sum(d.label == "unanswerable" for d in ds) == 1
        assert not {d.id for d in ds} & evaluated
        assert not {d.meta.get("pair_id") for d in ds} & pairs
        if bench in ("umwp", "treecut", "selfaware"):  # both labels exist there: same benchmark
            assert {benchmark_of(d) for d in ds} == {bench}
    item = s.items[0]
    msgs = get_protocol("clarify").messages(item, demos[benchmark_of(item)])
    assert len(msgs) == 11 and msgs[-1]["content"].endswith(item.question.strip())
    assert sum("I don't know" in m["content"] for m in msgs if m["role"] == "assistant") == 1


def test_demos_for_a_whole_custom_file_come_from_the_shipped_benchmarks(tmp_path):
    items = load_benchmark("selfaware")[:3]
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps(i.model_dump(mode="json")) + "\n" for i in items))
    s = load_custom(path)
    assert s.pool == []
    demos = choose_demos(s, shots=3, unanswerable=2, seed=0)
    (ds,) = demos.values()
    assert Counter(d.label for d in ds) == {"unanswerable": 2, "answerable": 1}
    assert {d.category for d in ds} == {"knowledge"} and not {d.id for d in ds} & {i.id for i in items}


def test_bad_shot_counts():
    s = load_suite("quick", limit=2)
    with pytest.raises(ValueError, match="shots-unanswerable"):
        choose_demos(s, shots=1, unanswerable=2, seed=0)
    assert choose_demos(s, shots=0, unanswerable=0, seed=0) == {}
