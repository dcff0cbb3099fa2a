"""AbstentionBench through its maintained Inspect port (``inspect_evals.abstention_bench``), offline here with the
FreshQA data the port ships: the items are the port's own samples; ``inspect eval inspect_evals/abstention_bench``
against the test llama.cpp server (the bundled model answers, the same server grades) imports to the numbers its
log reports, beside ``abstain eval --data abstentionbench:freshqa --protocol plain --judge abstentionbench`` on the
same items."""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.records.runs import RunDir
from abstain.protocols import get_protocol
from abstain.schema import Behavior, DataError, ScoredRow

pytest.importorskip("inspect_evals.abstention_bench")

from abstain.data.abstentionbench_port import load_abstentionbench  # noqa: E402
from abstain.integrations.abstentionbench_log import log_metrics, verdict  # noqa: E402
from abstain.integrations.import_common import read_inspect_log  # noqa: E402
from abstain.judges.abstentionbench import grader_prompt  # noqa: E402

BIN = Path(sys.executable).parent
REFS = "[REFERENCE ANSWERS]:"
MODEL = "smollm2-135m"


def test_freshqa_items_are_the_ports_samples_and_its_fast_subset():
    from inspect_evals.abstention_bench.utils import load_abstention_bench_dataset

    sizes = []
    for spec, fast in (("freshqa", False), ("freshqa:fast", True)):
        port = list(load_abstention_bench_dataset("freshqa", fast, 42))
        items = load_abstentionbench(spec)
        sizes.append(len(items))
        assert [i.id for i in items] == [str(s.id) for s in port], spec  # the port's subsample, in its order
        assert [i.label == "unanswerable" for i in items] == [bool(s.metadata["abstention_label"]) for s in port]
        assert [i.question for i in items] == [s.input for s in port]
        assert {(i.meta["dataset"], i.meta["scenario"], i.meta["benchmark"], i.source) for i in items} == \
            {("FreshQADataset", "stale", "abstentionbench/freshqa", "abstentionbench/freshqa")}
        answerable = [(i, s) for i, s in zip(items, port, strict=True) if i.label == "answerable"]
        assert answerable and all(i.answers == sorted(map(str, s.metadata["ref_answer"])) for i, s in answerable)
        assert all(not i.answers for i in items if i.label == "unanswerable")
    assert sizes[1] < sizes[0]  # the fast subset is smaller than the subsample


def test_a_dataset_that_cannot_load_is_an_error_naming_it_and_how_to_get_it(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError) as err:
        load_abstentionbench("gpqa,freshqa")
    message = str(err.value)
    assert message.startswith("abstentionbench:gpqa: could not load") and "gated" in message
    assert "freshqa" not in message  # the dataset that loads is not an error
    with pytest.raises(DataError, match="unknown AbstentionBench dataset 'fresh_qa'"):
        load_abstentionbench("fresh_qa")


def _refs_as_set(prompt: str) -> tuple[str, frozenset]:
    line = next(x for x in prompt.splitlines() if x.startswith(REFS))
    return prompt.replace(line, REFS), frozenset(ast.literal_eval(line[len(REFS):].strip()))


def _same(ours: float | None, log: float, name: str) -> None:
    """abstain's value is the log's: null where the log has NaN (no row with a verdict), 0.0 where scikit-learn sets
    an undefined ratio to 0.0 and abstain to null (nothing abstained)."""
    if math.isnan(log):
        assert ours is None, name
    else:
        assert (0.0 if ours is None else ours) == pytest.approx(log), name


def _run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_the_ports_log_imports_to_its_own_numbers_beside_abstains_run_on_the_same_items(llama_server, tmp_path):
    ours = tmp_path / "abstain"
    runner = CliRunner()
    r = runner.invoke(app, ["eval", "--model", f"openai:{MODEL}", "--base-url", llama_server.base_url,
                            "--data", "abstentionbench:freshqa", "--protocol", "plain", "--limit", "2",
                            "--judge", "abstentionbench", "--judge-model", MODEL,
                            "--judge-base-url", llama_server.base_url, "--max-tokens", "16", "--batch-size", "1",
                            "--out", str(ours)])
    assert r.exit_code == 0, r.output
    mine = RunDir(ours).read_rows("scored.jsonl", ScoredRow)
    assert {x.label for x in mine} == {"answerable", "unanswerable"}
    assert all(x.judged_by.get("behavior") == "abstentionbench" for x in mine), [x.judge_errors for x in mine]

    logs = tmp_path / "logs"
    endpoint = {"LLAMACPP_BASE_URL": llama_server.base_url, "LLAMACPP_API_KEY": "unused"}
    _run([str(BIN / "inspect"), "eval", "inspect_evals/abstention_bench", "-T", "dataset_name=freshqa",
          "-T", f"grader_model=openai-api/llamacpp/{MODEL}", "--model", f"openai-api/llamacpp/{MODEL}",
          "--sample-id", ",".join(x.id for x in mine), "--max-tokens", "16", "--temperature", "0",
          "--max-connections", "1", "--log-dir", str(logs), "--display", "none"], env=endpoint)
    (log,) = logs.glob("*.eval")
    theirs = tmp_path / "imported"
    r = runner.invoke(app, ["import", "inspect", str(log), "--out", str(theirs)])
    assert r.exit_code == 0, r.output

    rows = RunDir(theirs).read_rows("scored.jsonl", ScoredRow)
    # the same items by id and label on both paths, asked the same: plain is the port's prompt
    assert sorted((x.id, x.label) for x in rows) == sorted((x.id, x.label) for x in mine)
    by_id = {x.id: x for x in mine}
    eval_log = read_inspect_log(log)
    for sample in eval_log.samples:
        sent = [{"role": m.role, "content": m.text} for m in sample.messages if m.role != "assistant"]
        assert sent == get_protocol("plain").messages(by_id[str(sample.id)])
    # and graded the same: --judge abstentionbench sends the port's grader prompt, word for word but for the order of
    # the references (the port's FreshQA loader lists a set: its order changes from process to process). (The texts
    # themselves may part after a few tokens: the server's prompt cache holds other prefixes on the two paths.)
    for sample in eval_log.samples:
        (score,) = sample.scores.values()
        mine_now = by_id[str(sample.id)].model_copy(update={"response": sample.output.completion})
        assert _refs_as_set(grader_prompt(mine_now)) == _refs_as_set(score.metadata["grading"][0]["content"])
    # each row holds the grader's verdict (no verdict, a NaN score: a judge error, out of the metrics as in the log)
    imported = {x.id: x for x in rows}
    for sample in eval_log.samples:
        (score,) = sample.scores.values()
        row, said = imported[str(sample.id)], verdict(score)
        assert (row.behavior, "behavior" in row.judge_errors) == \
            ((None, True) if said is None else (Behavior.ABS if said else Behavior.SH, False)), sample.id
    # the import's numbers are the log's, computed by abstain's metric code from those rows
    reported = log_metrics(eval_log)
    got = json.loads((theirs / "metrics.json").read_text())["protocols"]["plain"]
    for name in ("recall", "precision", "f1"):
        _same(got[f"ab.{name}"], reported[name], name)
        if not math.isnan(reported[name]):  # one dataset: its group is the whole, and so is the macro average
            assert reported[f"FreshQADataset/{name}"] == pytest.approx(reported[name])
            _same(got[f"ab.macro.{name}"], reported[name], name)
    kept = json.loads((theirs / "config.json").read_text())["imported_from"]["log_metrics"]  # strict JSON: NaN -> null
    assert kept == {k: None if math.isnan(v) else v for k, v in reported.items()}

    r = runner.invoke(app, ["compare", str(ours), str(theirs), "--out", str(tmp_path / "compare")])
    assert r.exit_code == 0, r.output
    assert "plain" in r.output and "ab.f1" in r.output
