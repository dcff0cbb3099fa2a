"""The printed headline: AbstentionBench's own numbers, ``ab.macro.f1`` and ``ab.macro.recall``, follow the headline
metrics in ``abstain metrics``, ``abstain eval``'s table and ``abstain compare`` wherever the rows hold
AbstentionBench items (its Inspect port's, or abstain's loaders of its datasets), and nowhere else.

Real items (BBQ and CoCoNot through abstain's loaders, FreshQA through AbstentionBench's port, GSM8K and its MiP
twins), hand-written responses, the rule judge.
"""

from __future__ import annotations

import pytest
from rich.console import Console
from typer.testing import CliRunner

from abstain.cli import app
from abstain.cli.eval import protocols_table
from abstain.data import dataset_of, load_benchmark
from abstain.data.abstentionbench import is_abstentionbench
from abstain.records.runs import RunDir, write_json
from abstain.judges import RuleJudge
from abstain.metrics import AB_HEADLINE, HEADLINE, MetricsConfig, compute_metrics, headline
from abstain.report import run_metrics
from abstain.schema import ResponseRow, write_jsonl
from abstain.scoring import score_rows


def _scored(items, protocol: str = "idk"):
    """Refuses every other item, answers the rest with the reference (or 42 where there is none)."""
    rows = [ResponseRow(**item.model_dump(), model="hand-written", protocol=protocol,
                        response="\\boxed{I don't know.}" if n % 2 else f"\\boxed{{{(item.answers or ['42'])[0]}}}")
            for n, item in enumerate(items)]
    return list(score_rows(rows, RuleJudge()))


def _two(name: str, label: str, k: int = 2):
    return [i for i in load_benchmark(name) if i.label == label][:k]


def _abstentionbench_items():
    coconot = [i for i in load_benchmark("coconot") if dataset_of(i) == "coconot/unknowns"][:2]
    return [*_two("bbq", "answerable"), *_two("bbq", "unanswerable"), *coconot]


def _other_items():
    return [*_two("gsm8k", "answerable"), *_two("mip_gsm8k", "unanswerable")]


def _printed(table) -> str:
    console = Console(record=True, width=200)
    console.print(table)
    return console.export_text()


def _metric_rows(text: str) -> list[str]:
    """The metric names of a printed table, in order (the first cell of each row)."""
    keys = set(HEADLINE) | set(AB_HEADLINE)
    return [cells[0] for line in text.splitlines()
            if (cells := [c.strip() for c in line.strip("│┃ ").split("│")]) and cells[0] in keys]


def test_which_items_are_abstentionbenchs():
    assert all(is_abstentionbench(i) for i in _abstentionbench_items())
    assert not any(is_abstentionbench(i) for i in _other_items())
    assert not any(is_abstentionbench(i) for i in load_benchmark("bigbench_sufficient_information")[:3])  # not in it
    rows = _scored([*_abstentionbench_items(), *_other_items()])
    m = compute_metrics(rows, MetricsConfig(resamples=0))
    assert m["n.abstentionbench"] == 6 and headline(m) == HEADLINE + AB_HEADLINE
    assert headline(compute_metrics(_scored(_other_items()), MetricsConfig(resamples=0))) == HEADLINE


def test_abstain_metrics_prints_the_macro_rows_only_for_abstentionbench_rows(tmp_path):
    runner = CliRunner()
    for name, items, want in (("ab", _abstentionbench_items(), [*HEADLINE, *AB_HEADLINE]),
                              ("other", _other_items(), list(HEADLINE))):
        path = tmp_path / f"{name}.jsonl"
        write_jsonl(path, _scored(items))
        result = runner.invoke(app, ["metrics", "--input", str(path), "--resamples", "20"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert _metric_rows(result.output) == want, result.output
    m = compute_metrics(_scored(_abstentionbench_items()), MetricsConfig(resamples=0))
    assert m["ab.macro.f1"] is not None and m["ab.macro.datasets"] == 2  # bbq, coconot/unknowns


def _run(path, items):
    record = {"model": "hand-written", "data": "test", "protocols": ["idk"], "items": {"count": len(items)},
              "judge": "rule", "resamples": 20}
    RunDir(path).prepare(record)
    metrics = run_metrics(_scored(items), record)
    write_json(path / "metrics.json", metrics)
    return metrics


def test_eval_and_compare_print_the_macro_rows_when_a_run_holds_abstentionbench_items(tmp_path):
    ab = _run(tmp_path / "ab", _abstentionbench_items())
    other = _run(tmp_path / "other", _other_items())
    printed = _printed(protocols_table(ab, "ab"))  # what `abstain eval` prints at its end
    assert _metric_rows(printed) == [*HEADLINE, *AB_HEADLINE]
    assert f"{ab['protocols']['idk']['ab.macro.f1']:.3f}" in printed
    assert _metric_rows(_printed(protocols_table(other, "other"))) == list(HEADLINE)

    runner = CliRunner()
    result = runner.invoke(app, ["compare", str(tmp_path / "other"), str(tmp_path / "other"), "--out",
                                 str(tmp_path / "cmp-other")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "ab.macro" not in result.output
    result = runner.invoke(app, ["compare", str(tmp_path / "other"), str(tmp_path / "ab"), "--out",
                                 str(tmp_path / "cmp")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "ab.macro.f1" in result.output and "ab.macro.recall" in result.output  # one of the runs holds them


def test_the_ports_items_count_as_abstentionbenchs(tmp_path):
    pytest.importorskip("inspect_evals.abstention_bench")
    from abstain.data.abstentionbench_port import load_abstentionbench

    items = load_abstentionbench("freshqa:fast")[:6]  # the port's FreshQA ships with it: offline
    assert {i.label for i in items} == {"answerable", "unanswerable"}
    metrics = _run(tmp_path / "freshqa", items)
    assert metrics["protocols"]["idk"]["n.abstentionbench"] == len(items)
    assert _metric_rows(_printed(protocols_table(metrics, "freshqa"))) == [*HEADLINE, *AB_HEADLINE]
