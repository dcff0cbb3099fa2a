"""The shortcut audit (abstain cues), within-count discrimination and the cue baselines, on hand-computed files,
the shipped benchmarks and cue-matched synthesis."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data import load_benchmark
from abstain.data.cues import (AuditConfig, audit, best_threshold, numeral_count, numerals, pair_auc,
                          threshold_discrimination)
from abstain.data.suites import load_suite
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.within_count import within_count_point
from abstain.schema import Item, ScoredRow, write_jsonl
from abstain.synth.missing_premise import make_pair
from abstain.synth.perturb import OPERATORS
from abstain.synth.verify import verify_item
from abstain.train.data.mix import MixConfig, training_items

#: (id, question, label, refused): numerals by hand in the comment
HAND = [
    ("u1", "Tom has 3 apples and some pears. How many fruits?", "unanswerable", True),  # 1: 3
    ("a1", "Tom has 3 apples and 4 pears. How many fruits?", "answerable", True),  # 2: 3, 4
    ("u2", "Ann ran 5 km. How far did Ann and Bo run?", "unanswerable", False),  # 1: 5
    ("a2", "Ann ran 5 km and Bo ran 1,200 m. How far in all?", "answerable", False),  # 2: 5, 1,200
    ("u3", "A box holds 2.5 kg, 3 kg and 7 kg of a few fruits. How much is left?", "unanswerable", True),  # 3
    ("a3", "A box holds 2 kg of fruit. How many grams?", "answerable", False),  # 1: 2
    ("a4", "Cy has 3 cats, 4 dogs and 5 hens. How many animals?", "answerable", False),  # 3: 3, 4, 5
]
COUNTS = {"u1": 1, "a1": 2, "u2": 1, "a2": 2, "u3": 3, "a3": 1, "a4": 3}


def items() -> list[Item]:
    return [Item(id=i, question=q, answers=[] if label == "unanswerable" else ["1"], label=label)
            for i, q, label, _ in HAND]


def scored() -> list[ScoredRow]:
    return [ScoredRow(id=i, question=q, answers=[] if label == "unanswerable" else ["1"], label=label,
                      response="", model="m", pred="DATA_UNCERTAIN" if refused else "ANSWER",
                      answer=None if refused else "1", format_ok=True, correct=None if refused else False)
            for i, q, label, refused in HAND]


def test_numerals_follow_the_definition():
    assert {i.id: len(numerals(i.question)) for i in items()} == COUNTS
    assert numerals("1,200.5 and 3.0, then 7.") == ["1,200.5", "3.0", "7"]


def test_number_count_auc_and_the_cue_baselines_by_hand():
    counts = [COUNTS[i.id] for i in items()]
    labels = [i.label for i in items()]
    # U counts [1, 1, 3], A counts [2, 2, 1, 3]: over the 12 (U, A) pairs, U states fewer numbers in
    # 3 + 3 (u1, u2 vs a1, a2, a4) + 0 (u3) = 6 pairs, ties (1 vs a3: twice; 3 vs a4: once) count 1/2 -> 7.5 / 12
    assert pair_auc([-c for c in counts], labels) == pytest.approx(7.5 / 12)
    # refuse iff <= 2 numbers: U 2/3 refused, A 3/4 -> -1/12; t = 1: U 2/3, A 1/4 -> 5/12 (the best)
    assert threshold_discrimination(counts, labels, 2) == pytest.approx(2 / 3 - 3 / 4)
    assert best_threshold(counts, labels) == (1, round(2 / 3 - 1 / 4, 4))
    report = audit(items(), AuditConfig(resamples=200))
    block = report["all"]
    assert block["number_count_auc"] == round(7.5 / 12, 4)
    assert block["n_answerable"] == 4 and block["n_unanswerable"] == 3
    assert block["mean_numerals"] == {"answerable": 2.0, "unanswerable": round(5 / 3, 4)}
    # vague words: "some" in u1, "a few" in u3, none in answerable questions
    assert block["vague_words"]["some"] == {"answerable": 0.0, "unanswerable": round(1 / 3, 4)}
    assert block["vague_auc"] == round((4 + 4 + 0.5 * 4) / 12, 4)  # u1, u3 beat all 4; u2 ties all 4
    low, high = block["number_count_auc_ci"]
    assert low <= block["number_count_auc"] <= high


def test_within_count_discrimination_by_hand():
    rows = scored()
    # one bin per numeral count. 1 numeral: u1 (refused), u2 | a3 -> U-Ref 1/2, A-FU 0, weight min(1, 2) = 1;
    # 2: a1, a2 only (no unanswerable item: left out); 3: u3 (refused) | a4 -> U-Ref 1, A-FU 0, weight 1
    want = (1 * (1 / 2 - 0) + 1 * (1 - 0)) / 2
    assert within_count_point(rows) == pytest.approx(want)
    metrics = compute_metrics(rows, MetricsConfig(resamples=300))
    assert metrics["r1.discrimination_within_count"] == pytest.approx(want)
    assert metrics["r1.discrimination"] == pytest.approx(2 / 3 - 1 / 4)
    low, high = metrics["r1.discrimination_within_count_ci"]
    assert -1 <= low <= high <= 1
    assert metrics["cue.le2_discrimination"] == pytest.approx(2 / 3 - 3 / 4, abs=1e-4)
    assert metrics["cue.best_threshold"] == 1
    # undefined when no bin holds both labels
    assert within_count_point([r for r in rows if r.id in ("u1", "u2", "a4")]) is None


def _rule_rows(items, refuse) -> list[ScoredRow]:
    """Scored rows of a model that boxes DATA_UNCERTAIN on the items ``refuse`` picks and a wrong answer elsewhere."""
    return [ScoredRow(**item.model_dump(), response="", model="rule",
                      **({"pred": "DATA_UNCERTAIN", "answer": None, "correct": None} if refuse(item) else
                         {"pred": "ANSWER", "answer": "0", "correct": False}), format_ok=True)
            for item in items]


def _real_items(source: str) -> list[Item]:
    return list(load_suite(source).items) if source == "heldout" else load_benchmark(source)


@pytest.mark.parametrize("source", ["mip_gsm8k", "umwp", "heldout"])
def test_a_pure_count_rule_scores_zero_within_count_on_real_items(source):
    items = _real_items(source)
    plain = []
    for k in range(9):  # "refuse iff the question states <= k numerals"
        rows = _rule_rows(items, lambda item, k=k: numeral_count(item.question) <= k)
        for key in ("r1.discrimination_within_count", "ua.du_discrimination_within_count"):
            assert within_count_point(rows, key) == 0.0, (source, k, key)
        plain.append(threshold_discrimination([numeral_count(i.question) for i in items],
                                              [i.label for i in items], k))
    assert max(plain) > 0.15  # the rule does separate the labels; within count it gets nothing for it
    # a model that reads the problem is not held at 0: refusing exactly the unanswerable items scores 1
    oracle = _rule_rows(items, lambda item: item.label == "unanswerable")
    assert within_count_point(oracle) == within_count_point(oracle, "ua.du_discrimination_within_count") == 1.0


def test_the_count_rule_keeps_zero_in_every_resample_and_coarse_bins_would_pay_it(monkeypatch):
    items = list(load_suite("mip-gsm8k-val").items)  # the attribution round's validation split
    rows = _rule_rows(items, lambda item: numeral_count(item.question) <= 1)
    m = compute_metrics(rows, MetricsConfig(resamples=200))
    assert m["cue.best_discrimination"] > 0.3 and m["r1.discrimination"] > 0.1  # plain: the rule looks good
    for key in ("r1.discrimination_within_count", "ua.du_discrimination_within_count"):
        assert m[key] == 0.0 and m[f"{key}_ci"] == [0.0, 0.0]
    # what exact counts fix: bins that join counts let a threshold inside a bin earn credit on the same items
    import abstain.metrics.within_count as within_module

    monkeypatch.setattr(within_module, "count_bin", lambda n: 0 if n <= 2 else (3 if n <= 4 else 5))
    assert within_count_point(rows) > 0.05  # the old bins <= 2, 3-4, >= 5 and "refuse iff <= 1 numeral"
    heldout = _real_items("heldout")
    monkeypatch.setattr(within_module, "count_bin", lambda n: min(n, 4))  # 0, 1, 2, 3, 4+
    assert within_count_point(_rule_rows(heldout, lambda item: numeral_count(item.question) <= 5)) > 0.1


def test_the_shortcut_on_real_benchmarks_and_the_cli(tmp_path):
    pairs = load_benchmark("mip_gsm8k")[:120]  # 60 MiP-GSM8K twins, each after its GSM8K original
    assert sum(i.label == "unanswerable" for i in pairs) == 60
    path = tmp_path / "mip.jsonl"
    write_jsonl(path, pairs)
    out = tmp_path / "cues.json"
    result = CliRunner().invoke(app, ["cues", str(path), "--json", str(out), "--resamples", "200"],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["source"] == str(path) and set(report) == {"source", "all", "by_dataset"}
    block = report["all"]
    # a twin that deleted a number states fewer of them: the numeral count alone separates these labels
    assert block["number_count_auc"] > 0.65 and block["number_count_auc_ci"][0] > 0.5
    assert block["logistic_auc"] > 0.7
    assert block["cue_le2_discrimination"] > 0.2
    assert "numerals AUC" in result.output
    header = next(line for line in result.output.splitlines() if "numerals AUC" in line)
    assert "length AUC" in header and "cue: best threshold" in header  # wide enough: a row per dataset
    narrow = CliRunner().invoke(app, ["cues", str(path), "--resamples", "200"], env={"COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.output
    lines = narrow.output.splitlines()
    assert max(map(len, lines)) <= 80, narrow.output
    # at 80 columns a row per (dataset, measure): the value and its CI on the measure's own line, unbroken
    auc = block["number_count_auc"]
    assert any("numerals AUC" in line and f"{auc:.2f}" in line and "[" in line for line in lines), narrow.output
    bad = CliRunner().invoke(app, ["cues", str(path), "--suite", "quick"])
    assert bad.exit_code == 2 and "exactly one of FILE, --suite or --recipe" in bad.output


@pytest.mark.parametrize("operator", OPERATORS)
def test_cue_matched_twins_keep_numerals_vague_words_and_length_and_stay_certified(operator):
    from abstain.data.cues import numeral_count, vague_count

    for index in range(12):
        pair = make_pair(seed=5, index=index, operator=operator, depth=2 + index % 3, cue_match=True)
        a, u = pair.original, pair.twin
        assert numeral_count(a.question) == numeral_count(u.question), (a.question, u.question)
        assert vague_count(a.question) == vague_count(u.question), (a.question, u.question)
        assert abs(len(u.question) - len(a.question)) <= 0.1 * len(a.question)
        assert a.meta["cue_filler"] in a.question and u.meta["cue_filler"] in u.question
        # the independent sympy check: the original answerable, the twin unanswerable, fillers included
        assert verify_item(a.model_dump()) == [] and verify_item(u.model_dump()) == []
    plain = make_pair(seed=5, index=0, operator=operator)
    assert "cue_filler" not in plain.twin.meta  # without the option the output is what it always was


def test_the_cue_matched_training_mix_passes_its_own_audit():
    mixed = training_items(MixConfig(n=400, seed=21, unanswerable_ratio=0.35, hard_ratio=0.1, pair_twins=True))
    block = audit(mixed, AuditConfig(resamples=0))["all"]
    assert 0.45 <= block["number_count_auc"] <= 0.55 and block["logistic_auc"] <= 0.60
    plain = training_items(MixConfig(n=400, seed=21, unanswerable_ratio=0.35, hard_ratio=0.1, pair_twins=True,
                                     cue_match=False))
    assert audit(plain, AuditConfig(resamples=0))["all"]["number_count_auc"] > 0.58  # what cue matching removes


def test_deep_twins_balance_the_hard_variants_numerals_at_any_size():
    from abstain.data.cues import numeral_count

    cfg = MixConfig(n=1200, seed=21, unanswerable_ratio=0.35, hard_ratio=0.1, pair_twins=True)
    mixed = training_items(cfg)
    # the hard variants (answerable, ~9 numerals) alone lift a 1,200-row cue-matched mix over the bar ...
    unbalanced = training_items(MixConfig(n=1200, seed=21, unanswerable_ratio=0.35, hard_ratio=0.1, pair_twins=True,
                                          match_hard=False))
    assert audit(unbalanced, AuditConfig(resamples=0))["all"]["number_count_auc"] > 0.55
    # ... and deep twins, as large a share of the twins as the hard variants are of the answerable rows, undo it
    block = audit(mixed, AuditConfig(resamples=0))["all"]
    assert 0.45 <= block["number_count_auc"] <= 0.55 and block["logistic_auc"] <= 0.60
    hard, _, twins = cfg.counts
    deep = [i for i in mixed if i.id.startswith("synth-mpdeepc-")]
    assert len(mixed) == 1200 and sum(i.label == "unanswerable" for i in mixed) == twins
    assert len(deep) == cfg.deep_twins == round(hard * twins / (1200 - twins)) > 0
    assert {i.label for i in deep} == {"unanswerable"} and len({i.perturbation for i in deep}) == len(OPERATORS)
    hard_rows = [i for i in mixed if i.category == "hard"]
    mean = lambda rows: sum(numeral_count(i.question) for i in rows) / len(rows)  # noqa: E731
    assert abs(mean(deep) - mean(hard_rows)) < 1.5 and mean(deep) > mean(mixed) + 2
    for item in deep[:12]:  # certified: the independent sympy check finds the twin unanswerable
        assert verify_item(item.model_dump()) == []
    originals = {i.meta.get("pair_id") for i in mixed if i.label == "answerable"}
    assert not originals & {i.meta["pair_id"] for i in deep}  # unpaired, like the hard variants
    assert MixConfig(n=1200, seed=21, unanswerable_ratio=0.35, hard_ratio=0.1, cue_match=False).deep_twins == 0
