"""Benchmark loaders against the raw shipped files (each expectation re-derived from the raw data)."""

from __future__ import annotations

import json
import logging
from collections import Counter

import pytest

from abstain.data import BENCHMARKS, SELFAWARE_NOTICE, UMWP_PERTURBATIONS, load_benchmark
from abstain.data import loaders
from abstain.schema import Item


PERTURBED = ("umwp", "mip_gsm8k", "mip_svamp", "mip_formula", "treecut")


def _raw_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_benchmark_loads_with_stable_unique_ids(name):
    items = load_benchmark(name)
    assert items and all(isinstance(i, Item) for i in items)
    assert len({i.id for i in items}) == len(items)
    own = [i for i in items if i.meta["benchmark"] == name]
    assert own and all(i.id.startswith(f"{name}-") for i in own)
    assert all(i.category in ("knowledge", "reasoning") for i in items)
    assert all(i.answers for i in items if i.label == "answerable" and name != "coconot")  # CoCoNot has none
    assert all(not i.answers for i in items if i.label == "unanswerable")
    if name in PERTURBED:  # the reasoning benchmarks made by perturbing an answerable question
        assert all(i.perturbation for i in items if i.label == "unanswerable")
    assert [i.id for i in load_benchmark(name)] == [i.id for i in items]  # same order every time


def test_gsm8k_reference_is_the_number_after_hashes(benchmarks_dir):
    raw = _raw_jsonl(benchmarks_dir / "gsm8k" / "test.jsonl")
    items = load_benchmark("gsm8k")
    assert len(items) == len(raw) == 1319
    with_commas = 0
    for row, item in zip(raw, items, strict=True):
        after = row["answer"].split("####")[-1].strip()
        with_commas += "," in after
        assert item.question == row["question"]
        assert float(item.answers[0]) == float(after.replace(",", ""))
        assert "," not in item.answers[0]
    assert with_commas > 0  # the file has "1,600"-style answers, and they were normalized
    assert items[0].answers == ["18"] and items[0].id == "gsm8k-0"


def test_math500_uses_answer_field_and_unique_ids(benchmarks_dir):
    raw = _raw_jsonl(benchmarks_dir / "math500" / "test.jsonl")
    items = load_benchmark("math500")
    assert [i.answers[0] for i in items] == [r["answer"] for r in raw]
    assert items[0].id == "math500-precalculus/807"
    assert {i.meta["subject"] for i in items} == {r["subject"] for r in raw}


def test_umwp_twins_and_perturbations(benchmarks_dir):
    raw = _raw_jsonl(benchmarks_dir / "umwp" / "StandardDataset.jsonl")
    items = {i.id: i for i in load_benchmark("umwp")}
    assert Counter(i.label for i in items.values()) == Counter(
        "answerable" if r["answerable"] else "unanswerable" for r in raw
    )
    expected = Counter(UMWP_PERTURBATIONS[r["category"]] for r in raw if not r["answerable"])
    assert Counter(i.perturbation for i in items.values() if i.label == "unanswerable") == expected
    assert set(expected) == {"missing_key_info", "ambiguous_key_info", "unrealistic_conditions",
                             "unrelated_object", "question_missing"}
    for row in raw:
        item = items[f"umwp-{row['id']}"]
        assert item.meta["scenario"] == "underspecified_context"
        if not row["answerable"]:
            twin = items[item.meta["pair_id"]]
            assert twin.id == f"umwp-{row['relevant_ids'][0]}" and twin.label == "answerable"
            assert twin.meta["pair_id"] == twin.id


def test_umwp_matches_the_hand_checked_fixture(fixtures_dir):
    items = {i.id: i for i in load_benchmark("umwp")}
    for line in (fixtures_dir / "real_responses.jsonl").read_text().splitlines():
        row = json.loads(line)
        if not row["id"].startswith("umwp-"):
            continue
        item = items[row["id"]]
        assert (item.question, item.label, item.perturbation, item.source) == (
            row["question"], row["label"], row["perturbation"], row["source"]
        )
        assert item.answers == Item(**{k: row[k] for k in ("id", "question", "answers", "label")}).answers


def test_mip_gsm8k_pairs_each_insufficient_question_with_its_gsm8k_original(benchmarks_dir):
    raw = json.loads((benchmarks_dir / "mip" / "mip_gsm8k.json").read_text())
    items = load_benchmark("mip_gsm8k")
    gsm8k = {i.id: i for i in load_benchmark("gsm8k")}
    unans = [i for i in items if i.label == "unanswerable"]
    assert len(unans) == len(raw) == 582
    assert sum(i.label == "answerable" for i in items) == 582
    for row, item in zip(raw, unans, strict=True):
        original = gsm8k[item.meta["pair_id"]]
        assert item.question == row["insufficient_question"]
        assert original.question == row["question"]
        assert original.meta["twin"] == item.id and item.meta["twin"] == original.id
        assert item.meta["original_answer"] == original.answers[0]
        assert item.perturbation == "missing_premise"


def test_mip_svamp_and_formula_are_insufficient_only(benchmarks_dir):
    for name, file, n in (("mip_svamp", "mip_svamp.json", 300), ("mip_formula", "mip_formula.json", 50)):
        raw = json.loads((benchmarks_dir / "mip" / file).read_text())
        items = load_benchmark(name)
        assert len(items) == len(raw) == n
        assert all(i.label == "unanswerable" for i in items)
        assert [i.question for i in items] == [r["insufficient_question"] for r in raw]
    assert load_benchmark("mip_svamp")[0].meta["original_answer"] == "91"  # 91.0 in the file


def test_treecut_unknown_is_unanswerable_and_meta_has_the_tree_shape(benchmarks_dir):
    items = load_benchmark("treecut")
    files = sorted((benchmarks_dir / "treecut").glob("*.jsonl"))
    raw = [r for f in files for r in _raw_jsonl(f)]
    assert len(items) == len(raw) == 4000
    for row, item in zip(raw, items, strict=True):
        assert (item.label == "unanswerable") == (row["answer"] == "unknown")
        assert item.question == row["problem"]
    assert {i.meta["numVars"] for i in items} == {4, 6, 8, 10}
    assert {i.meta["ansDepth"] for i in items} == {2, 4, 6, 8}
    assert all("cutDepth" in i.meta for i in items if i.label == "unanswerable")


def test_selfaware_is_knowledge_and_logs_its_research_only_license(benchmarks_dir, caplog):
    loaders._cached.cache_clear()
    loaders._notified.clear()
    with caplog.at_level(logging.WARNING, logger="abstain.data.loaders"):
        items = load_benchmark("selfaware")
    assert SELFAWARE_NOTICE in caplog.text and "research use only" in SELFAWARE_NOTICE
    raw = json.loads((benchmarks_dir / "selfaware" / "SelfAware.json").read_text())["example"]
    assert Counter(i.label for i in items) == Counter({"answerable": 2337, "unanswerable": 1032})
    assert len(raw) == len(items)
    assert {i.category for i in items} == {"knowledge"}
    assert {i.meta["scenario"] for i in items} == {"answer_unknown"}


def test_unknown_benchmark_names_the_choices():
    with pytest.raises(ValueError, match="gsm8k"):
        load_benchmark("nope")
