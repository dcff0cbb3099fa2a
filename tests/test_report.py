"""metrics.json of a run, report tables/plots/HTML and `abstain compare`, on real scored responses."""

from __future__ import annotations

import base64
import json
import re

import pytest
from typer.testing import CliRunner

import abstain.report.plots
import abstain.report.summary
import abstain.report.tables
from abstain.cli import app
from abstain.records.runs import RunDir, write_json
from abstain.judges import RuleJudge
from abstain.outcomes import is_abstention, is_refusal
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.report import load_run, report_tables, run_metrics, write_compare, write_report
from abstain.schema import ResponseRow, read_jsonl
from abstain.scoring import score_rows

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def scored(fixtures_dir):
    """The real responses scored by the rule judge, once as `attribution` and once as `idk`."""
    rows = read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow)
    both = rows + [r.model_copy(update={"protocol": "idk"}) for r in rows]
    return list(score_rows(both, RuleJudge()))


def _record(protocols):
    return {"model": "hand-written", "suite": None, "data": "real_responses.jsonl", "protocols": protocols,
            "items": {"count": 12}, "judge": "rule", "resamples": 200, "command": "abstain eval ..."}


def _run_dir(path, rows, protocols):
    record = _record(protocols)
    RunDir(path).prepare(record)
    write_json(path / "metrics.json", run_metrics(rows, record))
    return path


def test_run_metrics_per_protocol_equals_compute_metrics(scored):
    m = run_metrics(scored, _record(["attribution", "idk"]))
    assert list(m["protocols"]) == ["attribution", "idk"]
    attribution = [r for r in scored if r.protocol == "attribution"]
    full = compute_metrics(attribution, MetricsConfig(resamples=200))
    assert m["protocols"]["attribution"] == {k: v for k, v in full.items() if not k.startswith("by_source.")}
    # the per-dataset blocks live in by_benchmark, key for key
    for bench, block in m["by_benchmark"]["attribution"].items():
        assert block["ab.f1"] == full[f"by_source.{bench}.ab.f1"] and block["r1.u_ref"] == full[f"by_source.{bench}.r1.u_ref"]
    assert m["run"]["model"] == "hand-written"
    json.dumps(m)  # serializable as is


def test_distribution_counts_match_the_rows(scored):
    m = run_metrics(scored, _record(["attribution", "idk"]), resamples=0)
    dist = m["distribution"]["attribution"]
    rows = [r for r in scored if r.protocol == "attribution"]
    ans = [r for r in rows if r.label == "answerable"]
    una = [r for r in rows if r.label == "unanswerable"]
    assert sum(dist["answerable"].values()) == len(ans) and sum(dist["unanswerable"].values()) == len(una)
    assert dist["answerable"]["correct"] == sum(r.pred.value == "ANSWER" and r.correct is True for r in ans)
    # an unboxed answer that abstains in words ("not enough information") is an abstention, not a wrong answer
    assert dist["answerable"]["no_box"] == sum(not r.format_ok and not is_abstention(r) for r in ans)
    assert dist["answerable"]["abstained"] == sum(is_abstention(r) and not is_refusal(r) for r in ans)
    for pred in ("DATA_UNCERTAIN", "MODEL_UNCERTAIN"):
        assert dist["unanswerable"][pred] == sum(r.pred.value == pred for r in una)
    for behavior in ("SH", "EA", "ABS", "COND", "ELICIT"):
        assert dist["behavior"][behavior] == sum(r.behavior is not None and r.behavior.value == behavior for r in una)
    assert dist["behavior"]["unlabeled"] == sum(r.behavior is None for r in una)
    by_bench = m["by_benchmark"]["attribution"]
    assert set(by_bench) == {"umwp", "selfaware"}
    assert by_bench["umwp"]["n.answerable"] + by_bench["umwp"]["n.unanswerable"] == 10


def test_report_has_every_protocol_table_and_its_embedded_plots(tmp_path, scored):
    run = _run_dir(tmp_path / "run", scored, ["attribution", "idk"])
    html_path = write_report(run)
    page = html_path.read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == len(abstain.report.plots.PLOTS) == 4 and all(base64.b64decode(i).startswith(PNG) for i in images)
    for title in ("UA-Bench metrics", "Abstain-R1 metrics", "ACA-RL metrics", "AbstentionBench / TIAR metrics",
                  "Category: knowledge", "Category: reasoning", "per perturbation", "per dataset"):
        assert title in page
    assert "<th>attribution</th>" in page and "<th>idk</th>" in page
    md = (run / "report.md").read_text()
    for name in ("behavior_distribution", "refusal_vs_accuracy", "du_f1_vs_mu_f1"):
        assert f"(plots/{name}.png)" in md and (run / "plots" / f"{name}.png").read_bytes().startswith(PNG)
    m = json.loads((run / "metrics.json").read_text())["protocols"]["attribution"]
    value, (low, high) = m["ua.du_f1"], m["ua.du_f1_ci"]
    assert f"| ua.du_f1 | {value:.3f} [{low:.3f}, {high:.3f}]" in md
    for p in ("missing_key_info", "ambiguous_key_info", "unrealistic_conditions", "unrelated_object",
              "question_missing"):
        assert f"| {p} |" in md


def test_behavior_plot_gets_a_third_panel_when_behaviors_are_labeled(scored):
    runs_cols = abstain.report.tables.Column
    dist = run_metrics(scored, _record(["attribution"]), resamples=0)["distribution"]["attribution"]
    unlabeled = {**dist, "behavior": {"unlabeled": sum(dist["behavior"].values())}}
    plain = abstain.report.plots.behavior_plot([runs_cols("a", "a", {}, None, unlabeled)])
    labeled = {**dist, "behavior": {"SH": 2, "ABS": 1, "unlabeled": 2}}
    three = abstain.report.plots.behavior_plot([runs_cols("a", "a", {}, None, labeled)])
    width = lambda png: int.from_bytes(png[16:20], "big")  # noqa: E731 - PNG IHDR width
    assert width(three) > width(plain) * 1.3


def test_compare_shows_runs_side_by_side_with_deltas(tmp_path, scored):
    first = _run_dir(tmp_path / "base", scored, ["attribution", "idk"])
    # a second run where the last answerable response of each protocol was refused instead
    changed = [r.model_copy(update={"pred": "MODEL_UNCERTAIN", "correct": None}) if r.id == "umwp-8" else r
               for r in scored]
    second = _run_dir(tmp_path / "other", changed, ["attribution", "idk"])
    out = tmp_path / "cmp"
    html_path = write_compare([first, second], out)
    a = json.loads((first / "metrics.json").read_text())["protocols"]["idk"]["r1.a_fu"]
    b = json.loads((second / "metrics.json").read_text())["protocols"]["idk"]["r1.a_fu"]
    assert b > a
    md = (out / "compare.md").read_text()
    assert f"(Δ {b - a:+.3f})" in md
    assert "idk · base" in md and "idk · other" in md
    page = html_path.read_text()
    assert page.count("data:image/png;base64,") == 4 and "abstain compare: base vs other" in page

    result = CliRunner().invoke(app, ["compare", str(first), str(second), "--out", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cli" / "compare.html").exists() and f"({b - a:+.3f})" in result.output


def test_compare_and_report_errors_name_the_problem(tmp_path, scored):
    runner = CliRunner()
    run = _run_dir(tmp_path / "run", scored, ["idk"])
    r = runner.invoke(app, ["compare", str(run), "--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "at least two" in r.output
    r = runner.invoke(app, ["compare", str(run), str(tmp_path / "missing"), "--out", str(tmp_path / "c")])
    text = r.output.replace("\n", "")  # rich wraps long lines
    assert r.exit_code == 2 and f"{tmp_path / 'missing' / 'config.json'}: missing" in text
    r = runner.invoke(app, ["report", str(run)])
    assert r.exit_code == 0 and (run / "report.html").exists()


def test_tables_of_one_run_have_one_column_per_protocol(tmp_path, scored):
    run = load_run(_run_dir(tmp_path / "run", scored, ["attribution", "idk"]))
    for table in report_tables([run]):
        if table.title == "Datasets":  # category, scenario, then the items of each protocol
            assert table.header[1:] == ["category", "scenario", "items · attribution", "items · idk"]
            continue
        assert table.header[1:] == ["attribution", "idk"]
        assert all(len(cells) == 2 for _, cells in table.rows)


def test_a_run_without_unanswerable_items_still_renders(tmp_path, scored):
    import warnings

    answerable = [r for r in scored if r.label == "answerable" and r.protocol == "idk"]
    run = _run_dir(tmp_path / "ans", answerable, ["idk"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no empty legends, no divisions by zero
        page = write_report(run).read_text()
    # the plots it defines: decisions of answerable items, over-refusal vs accuracy (no U-Ref, no DU-F1)
    assert page.count("data:image/png;base64,") == 2
    m = json.loads((run / "metrics.json").read_text())["protocols"]["idk"]
    assert m["ua.du_f1"] == 0.0 and m["n.unanswerable"] == 0  # UA-Bench's code: 0/0 -> 0
    assert m["r1.u_ref"] is None  # the other families: null


def test_the_runs_table_shows_the_judge_as_readable_rows(tmp_path, scored):
    from abstain.judges import JudgeConfig

    rows = [r for r in scored if r.protocol == "attribution"]
    record = {**_record(["attribution"]),
              "judge": JudgeConfig(name="hybrid", model="Qwen/Qwen2.5-7B-Instruct", behaviors="unanswerable").record()}
    run = tmp_path / "hybrid"
    RunDir(run).prepare(record)
    write_json(run / "metrics.json", run_metrics(rows, record, resamples=0))
    write_report(run)
    md = (run / "report.md").read_text()
    assert "| judge | hybrid |" in md and "| judge model | Qwen/Qwen2.5-7B-Instruct |" in md
    assert "| judge behaviors | unanswerable |" in md
    assert "{'name'" not in md and '{"name"' not in md  # no raw dict
    assert "judge concurrency" not in md  # settings left at their default stay out
