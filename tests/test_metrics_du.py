"""``ua.du_discrimination`` — P(DATA_UNCERTAIN | unanswerable) − P(DATA_UNCERTAIN | answerable) — its version within
numeral-count bins and the cue baseline beside it, on a hand-computed file; in the metrics block, the report,
``abstain compare`` and the paired-difference table.

tests/fixtures/du_discrimination.scored.jsonl, by numeral count (one bin per count; U: unanswerable, A: answerable):

========  ===================================  ===========================  ==========================
numerals  unanswerable (pred)                  answerable (pred)            P(DU|U) − P(DU|A), weight
========  ===================================  ===========================  ==========================
1         u1 DU, u2 MU, u6 DU                  —                            left out (one label)
2         —                                    a1 DU, a2 ANSWER             left out
3         u3 DU, u4 DU                         a4 ANSWER                    1 − 0 = 1, min(2, 1) = 1
4         —                                    a3 MU                        left out
5         u5 DU                                —                            left out
6         —                                    a5 MU                        left out
========  ===================================  ===========================  ==========================

* ``ua.du_discrimination`` = 5/6 − 1/5 = 19/30
* ``ua.du_discrimination_within_count`` = 1 (the 3-numeral bin alone; in every resample, so its CI is [1, 1])
* ``r1.discrimination`` (any boxed abstention is a refusal: a1, a3, a5 among the answerable) = 6/6 − 3/5 = 2/5
* ``cue.le2_discrimination`` ("box DATA_UNCERTAIN iff <= 2 numerals") = P(<= 2 | U) − P(<= 2 | A) = 3/6 − 2/5 = 1/10

(The file was written for the earlier bins <= 2, 3-4, >= 5, where the within-count value was 2/3.)
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.paired import PAIRED_KEYS, PairedConfig, paired_delta
from abstain.schema import ScoredRow, read_jsonl

FILE = "du_discrimination.scored.jsonl"


@pytest.fixture
def rows(fixtures_dir):
    return read_jsonl(fixtures_dir / FILE, ScoredRow)


def test_the_metric_its_within_count_version_and_the_cue_baseline_by_hand(rows):
    m = compute_metrics(rows, MetricsConfig(resamples=300, seed=1))
    assert m["ua.du_discrimination"] == pytest.approx(19 / 30)
    assert m["ua.du_discrimination_within_count"] == pytest.approx(1.0)
    assert m["ua.du_discrimination_within_count_ci"] == pytest.approx([1.0, 1.0])
    assert m["r1.discrimination"] == pytest.approx(2 / 5)
    assert m["cue.le2_discrimination"] == pytest.approx(1 / 10)
    for key in ("ua.du_discrimination", "cue.le2_discrimination"):
        low, high = m[f"{key}_ci"]
        assert low <= m[key] <= high and low < high, key


def test_undefined_without_both_labels_and_blind_to_judge_errors(rows):
    only_unanswerable = [r for r in rows if r.label == "unanswerable"]
    assert compute_metrics(only_unanswerable, MetricsConfig(resamples=0))["ua.du_discrimination"] is None
    broken = [ScoredRow.model_validate({**r.model_dump(), "judge_errors": {"correct": "timeout"}}) for r in rows]
    assert compute_metrics(broken, MetricsConfig(resamples=0))["ua.du_discrimination"] == pytest.approx(19 / 30)


def _run_b(rows):
    """Run B: a1 answers (correctly) instead of DATA_UNCERTAIN, u2 says DATA_UNCERTAIN instead of MODEL_UNCERTAIN."""
    change = {"a1": {"pred": "ANSWER", "answer": "5", "correct": True, "response": "\\boxed{5}"},
              "u2": {"pred": "DATA_UNCERTAIN", "response": "\\boxed{<DATA_UNCERTAIN>}"}}
    return [ScoredRow.model_validate({**r.model_dump(), **change.get(r.id, {})}) for r in rows]


def test_the_paired_difference_by_hand(rows):
    b = _run_b(rows)  # B: P(DU|U) = 1, P(DU|A) = 0 -> 1; within count: a1 and u2 lie in one-label bins -> 1
    assert {"ua.du_discrimination", "ua.du_discrimination_within_count"} <= set(PAIRED_KEYS)
    plain = paired_delta(rows, b, "ua.du_discrimination", PairedConfig(resamples=300))
    assert (plain.a, plain.b, plain.delta) == pytest.approx((19 / 30, 1.0, 11 / 30))
    within = paired_delta(rows, b, "ua.du_discrimination_within_count", PairedConfig(resamples=300))
    # B's two changes are in bins with one label (1 numeral: only unanswerable items; 2: only answerable ones),
    # which no count-matched comparison reaches: the within-count difference is 0 in every resample
    assert (within.a, within.b, within.delta) == pytest.approx((1.0, 1.0, 0.0))
    assert within.ci == pytest.approx([0.0, 0.0])


def _run_folder(folder, rows):
    """A run folder as abstain eval writes one (config, scored rows, metrics), from scored rows."""
    from abstain.records.runs import RunDir
    from abstain.report.summary import run_metrics

    record = {"model": folder.name, "suite": "hand", "protocols": ["attribution"], "resamples": 200}
    run = RunDir(folder)
    run.prepare(record)
    run.rewrite("scored.jsonl", rows)
    (folder / "metrics.json").write_text(json.dumps(run_metrics(rows, record)))
    return folder


def test_the_report_compare_and_the_paired_table_show_them(rows, tmp_path):
    a, b = _run_folder(tmp_path / "a", rows), _run_folder(tmp_path / "b", _run_b(rows))
    runner = CliRunner()
    r = runner.invoke(app, ["report", str(a)])
    assert r.exit_code == 0, r.output
    report = (a / "report.md").read_text()
    assert "ua.du_discrimination" in report and "ua.du_discrimination_within_count" in report and "0.633" in report
    r = runner.invoke(app, ["compare", str(a), str(b), "--out", str(tmp_path / "cmp")])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "ua.du_discrimination" in text and "+0.367" in text  # the plain delta, paired CI
    compared = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| ua.du_discrimination_within_count | +0.000 [+0.000, +0.000] |" in compared  # paired table
    assert "one bin per count" in compared  # the caption says which bins
