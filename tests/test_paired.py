"""Paired differences between two runs (abstain.metrics.paired) and their table in `abstain compare`, on real
scored responses: the point difference is the difference of the metrics each run reports, and the paired CI
sees what two separate CIs cannot."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.records.runs import SCORED, RunDir, write_json
from abstain.judges import RuleJudge
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.paired import PAIRED_KEYS, PairedConfig, PairedCounts, paired_delta
from abstain.metrics.within_count import within_count_point
from abstain.report import run_metrics, write_compare
from abstain.schema import Pred, ResponseRow, read_jsonl, write_jsonl
from abstain.scoring import score_rows


@pytest.fixture(scope="module")
def scored(fixtures_dir):
    rows = read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow)
    return [r.model_copy(update={"protocol": "idk"}) for r in score_rows(rows, RuleJudge())]


def _refuse(rows, ids):
    """The same rows with the items ``ids`` refused (a boxed data-uncertainty abstention) instead."""
    return [r.model_copy(update={"pred": Pred.DATA_UNCERTAIN, "correct": None, "format_ok": True}) if r.id in ids else r
            for r in rows]


def test_point_difference_is_the_difference_of_each_runs_own_metrics(scored):
    changed = _refuse(scored, {"umwp-1", "umwp-2502", "selfaware-2338"})
    a, b = compute_metrics(scored, MetricsConfig(resamples=0)), compute_metrics(changed, MetricsConfig(resamples=0))
    for key in PAIRED_KEYS:
        d = paired_delta(scored, changed, key, PairedConfig(resamples=0))
        assert d.n_items == len(scored) and d.ci is None
        assert d.a == pytest.approx(a[key]) if a[key] is not None else d.a is None, key
        assert d.b == pytest.approx(b[key]) if b[key] is not None else d.b is None, key
    within = paired_delta(scored, changed, "r1.discrimination_within_count", PairedConfig(resamples=0))
    assert within.delta == pytest.approx(within_count_point(changed) - within_count_point(scored))


def test_identical_runs_differ_by_exactly_zero_in_every_resample(scored):
    for key in ("r1.discrimination", "r1.discrimination_within_count", "ua.acc"):
        d = paired_delta(scored, scored, key, PairedConfig(resamples=300))
        assert d.delta == 0 and d.ci == [0.0, 0.0]


def test_a_run_that_refuses_a_superset_is_never_behind_in_a_resample(scored):
    """B refuses every item A refuses and one answerable item more: B's A-FU is >= A's on every paired resample,
    so the paired CI's lower end is 0, while the two runs' separate CIs overlap almost entirely."""
    answerable = next(r.id for r in scored if r.label == "answerable" and r.pred.value == "ANSWER")
    changed = _refuse(scored, {answerable})
    d = paired_delta(scored, changed, "r1.a_fu", PairedConfig(resamples=1000))
    n_a = len({r.id for r in scored if r.label == "answerable"})
    assert d.delta == pytest.approx(1 / n_a) and d.ci[0] >= 0 and d.ci[1] > 0
    separate = [compute_metrics(rows, MetricsConfig(resamples=1000))["r1.a_fu_ci"] for rows in (scored, changed)]
    assert separate[1][0] < separate[0][1]  # overlapping: the unpaired view cannot tell them apart


def test_items_are_matched_by_id_whatever_the_order_and_only_shared_ones_count(scored):
    shuffled = list(reversed(scored))
    assert paired_delta(scored, shuffled, "r1.u_ref", PairedConfig(resamples=200)).ci == [0.0, 0.0]
    some = scored[:6]
    d = paired_delta(scored, some, "ua.acc", PairedConfig(resamples=0))
    assert d.n_items == 6 and d.delta == 0
    counts = PairedCounts.from_rows(scored, some)
    assert counts.n_items == 6
    assert paired_delta(scored[:6], scored[6:], "ua.acc", PairedConfig(resamples=0)).n_items == 0


def test_an_unknown_metric_names_the_ones_it_can_compute(scored):
    with pytest.raises(ValueError, match="r1.discrimination_within_count"):
        paired_delta(scored, scored, "r1.nonsense")


def _run(path, rows):
    record = {"model": path.name, "suite": None, "data": "real_responses.jsonl", "protocols": ["idk"],
              "items": {"count": 12}, "judge": "rule", "resamples": 500, "command": "abstain eval ..."}
    RunDir(path).prepare(record)
    write_jsonl(path / SCORED, rows)
    write_json(path / "metrics.json", run_metrics(rows, record))
    return path


def test_compare_shows_each_delta_with_its_paired_ci(tmp_path, scored):
    answerable = [r.id for r in scored if r.label == "answerable" and r.pred.value == "ANSWER"][:2]
    first, second = _run(tmp_path / "base", scored), _run(tmp_path / "tuned", _refuse(scored, set(answerable)))
    write_compare([first, second], tmp_path / "cmp")
    md = (tmp_path / "cmp" / "compare.md").read_text()
    d = paired_delta(scored, _refuse(scored, set(answerable)), "r1.a_fu", PairedConfig(resamples=500))
    a = json.loads((first / "metrics.json").read_text())["protocols"]["idk"]["r1.a_fu"]
    b = json.loads((second / "metrics.json").read_text())["protocols"]["idk"]["r1.a_fu"]
    assert d.delta == pytest.approx(b - a)
    assert "### Paired differences against the first run" in md and "| metric | idk · tuned − base |" in md
    assert f"| r1.a_fu | {d.delta:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}] |" in md
    assert f"| shared items | {len(scored)} |" in md

    (second / SCORED).unlink()  # a run without its scored rows: the deltas stay, their paired CIs show —
    result = CliRunner().invoke(app, ["compare", str(first), str(second), "--out", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert "Paired differences" in result.output and "| r1.a_fu | — |" in (tmp_path / "cli" / "compare.md").read_text()
