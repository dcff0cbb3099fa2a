"""abstain inside Inspect and lm-evaluation-harness: one recorded ``abstain eval`` run replayed through both gives
the same per-item outcomes and the same metrics, CIs included; both logs come back as run folders that
``abstain compare`` reads, recording the token budget the harness sent (Inspect's task argument, lm-eval's
``--gen_kwargs max_gen_toks``); the shipped lm-eval tasks are exactly suites × protocols and lm-eval accepts them.

The replay is offline: Inspect's ``mockllm`` with a callable that answers each sample with the run's response
(its usage set, so Inspect counts no tokens with a tokenizer it would download), and an lm-eval ``LM`` whose
``generate_until`` looks the response up by the document's item id.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from lm_eval_stub import answering_lm
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.suites import SUITES
from abstain.records.runs import RunDir
from abstain.integrations.harness import HarnessTask, flat_metrics, top_level
from abstain.integrations.lm_eval.task_yamls import metric_names, task_name, task_yamls, tasks_dir
from abstain.outcomes import outcome
from abstain.protocols import PROTOCOLS
from abstain.schema import DataError, ResponseRow, ScoredRow

inspect_ai = pytest.importorskip("inspect_ai")
lm_eval = pytest.importorskip("lm_eval")

LIMIT, TOKENS = 16, 48


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, bundled_model_dir):
    """``abstain eval --model bundled --suite quick --limit 16 --protocol idk --max-tokens 48``."""
    out = tmp_path_factory.mktemp("harness") / "abstain"
    r = CliRunner().invoke(app, ["eval", "--model", "bundled", "--suite", "quick", "--limit", str(LIMIT), "--protocol",
                                 "idk", "--max-tokens", str(TOKENS), "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    run = RunDir(out)
    responses = {row.id: row.response for row in run.read_rows("responses.jsonl", ResponseRow)}
    scored = run.read_rows("scored.jsonl", ScoredRow)
    metrics = json.loads((out / "metrics.json").read_text())
    return out, responses, scored, metrics


def _expected(metrics: dict) -> dict[str, float]:
    return flat_metrics({k: v for k, v in metrics["protocols"]["idk"].items() if top_level(k)})


# ---- Inspect --------------------------------------------------------------------------------------------


def _replay_model(responses: dict[str, str]):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(input, tools, tool_choice, config):  # noqa: A002 - Inspect's argument names
        question = input[-1].text
        text = next(t for q, t in _by_question.items() if q == question)
        out = ModelOutput.from_content(model="replay", content=text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    _by_question: dict[str, str] = {}
    return get_model("mockllm/model", custom_outputs=answer), _by_question


@pytest.fixture(scope="module")
def inspect_log(recorded, tmp_path_factory):
    """The run replayed through ``abstain/abstain_eval`` (``-T limit=16``), through the registry by name."""
    from inspect_ai import eval as inspect_eval

    out, responses, scored, _ = recorded
    task = HarnessTask(suite="quick", protocol="idk", limit=LIMIT)
    model, by_question = _replay_model(responses)
    for sample in task.samples():
        by_question[sample.messages[-1]["content"]] = responses[sample.item.id]
    logs = inspect_eval("abstain/abstain_eval", task_args={"suite": "quick", "protocol": "idk", "limit": LIMIT,
                                                           "max_tokens": TOKENS},
                        model=model, log_dir=str(tmp_path_factory.mktemp("inspect-logs")), display="none",
                        max_connections=4)
    (log,) = logs
    assert log.status == "success", log.error
    return log


def test_inspect_scores_the_run_as_abstain_eval_did(recorded, inspect_log):
    out, responses, scored, metrics = recorded
    from abstain.integrations.inspect import abstain_eval

    dataset = abstain_eval(suite="quick", protocol="idk", limit=LIMIT).dataset
    assert [s.id for s in dataset] == [r.id for r in scored]  # the run's items, in its order
    samples = {s.id: s for s in inspect_log.samples}  # (a log keeps its samples sorted by id)
    assert sorted(samples, key=lambda i: samples[i].metadata["index"]) == [r.id for r in scored]
    for row in scored:
        score = samples[row.id].scores["abstain_scorer"]
        assert score.value == outcome(row).value  # the same outcome for every item
        assert ScoredRow.model_validate(score.metadata["row"]).model_dump(exclude={"model"}) == \
            row.model_dump(exclude={"model"})
    (scores,) = [s for s in inspect_log.results.scores if s.name == "abstain_scorer"]
    got = {name: m.value for name, m in scores.metrics.items()}
    expected = _expected(metrics)
    assert {k: got[k] for k in expected} == expected  # every metric and CI bound, to the bit
    assert sum(got[o] for o in ("correct", "wrong", "abstain", "unscored")) == pytest.approx(1.0)  # frequency()


def test_bad_task_arguments_name_the_valid_values():
    from inspect_ai import eval as inspect_eval

    for args, wanted in (({"suite": "quik"}, "choose one of quick"), ({"protocol": "idc"}, "choose one of attribution"),
                         ({"judge": "llmm"}, "choose one of rule, llm, hybrid")):
        with pytest.raises(Exception, match=wanted):
            inspect_eval("abstain/abstain_eval", task_args=args, model="mockllm/model", display="none")


def test_a_judge_server_that_is_down_gives_counted_judge_errors(recorded, tmp_path, monkeypatch, bundled_model_dir):
    from inspect_ai import eval as inspect_eval

    from llama_server import free_port

    _, responses, _, _ = recorded
    monkeypatch.setenv("ABSTAIN_JUDGE_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # nobody listens there
    task = HarnessTask(suite="quick", protocol="idk", limit=4)
    model, by_question = _replay_model(responses)
    for sample in task.samples():
        by_question[sample.messages[-1]["content"]] = responses.get(sample.item.id, "\\boxed{4}")
    (log,) = inspect_eval("abstain/abstain_eval", task_args={"suite": "quick", "protocol": "idk", "limit": 4,
                                                             "judge": "llm", "judge_model": "judge"},
                          model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and len(log.samples) == 4  # no sample dropped
    rows = [ScoredRow.model_validate(s.scores["abstain_scorer"].metadata["row"]) for s in log.samples]
    assert all(r.judge_errors for r in rows) and {s.scores["abstain_scorer"].value for s in log.samples} == {"unscored"}
    (scores,) = [s for s in log.results.scores if s.name == "abstain_scorer"]
    assert scores.metrics["unscored"].value == 1.0 and scores.metrics["n.judge_errors"].value == 4
    r = CliRunner().invoke(app, ["import", "inspect", log.location, "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert "4 of 4 rows unscored (0 without a score in the log" in " ".join(r.output.split())  # counted, said


# ---- lm-evaluation-harness ----------------------------------------------------------------------------


def _replay_lm(responses: dict[str, str]):
    """An lm-eval model that answers each document with the recorded run's response for its item."""
    return answering_lm(lambda request: responses[request.doc["id"]], name="replay")


@pytest.fixture(scope="module")
def lm_eval_run(recorded, tmp_path_factory):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    _, responses, _, _ = recorded
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                          metadata={"abstain": {"limit": LIMIT}})
    lm = _replay_lm(responses)
    done = simple_evaluate(model=lm, tasks=["abstain_quick_idk"], task_manager=manager, apply_chat_template=True,
                           gen_kwargs=f"max_gen_toks={TOKENS}", log_samples=True, bootstrap_iters=0)
    return {**done, "sent": [gen_kwargs for _, gen_kwargs in lm.sent]}  # the generation arguments lm-eval sent


def test_lm_eval_scores_the_run_as_abstain_eval_did(recorded, lm_eval_run):
    _, _, scored, metrics = recorded
    samples = lm_eval_run["samples"]["abstain_quick_idk"]
    assert [s["doc"]["id"] for s in samples] == [r.id for r in scored]
    first, *others = metric_names("idk")
    assert [kwargs["max_gen_toks"] for kwargs in lm_eval_run["sent"]] == [TOKENS] * LIMIT  # --gen_kwargs went out
    for sample, row in zip(samples, scored, strict=True):
        got = ScoredRow.model_validate(sample[first]["row"])
        assert outcome(got) == outcome(row) and got.model_dump(exclude={"model"}) == row.model_dump(exclude={"model"})
        assert sample[first]["generation"]["max_tokens"] == TOKENS
        # the row once per sample: every other metric's value only names it (it was 61 copies of the row)
        assert all(sample[name] == {"metric": name, "id": row.id, "sample": 0} for name in others)
        assert json.dumps(sample).count('"response"') == 1
    results = lm_eval_run["results"]["abstain_quick_idk"]
    expected = _expected(metrics)
    for name in metric_names("idk"):
        value = results[f"{name},none"]
        assert (math.isnan(value) and name not in expected) or value == expected[name], name


def test_the_shipped_task_yamls_are_every_suite_times_protocol_and_lm_eval_accepts_them():
    shipped = {p.name: p.read_text() for p in tasks_dir().iterdir() if p.suffix == ".yaml" or p.name.endswith("_yaml")}
    assert shipped == task_yamls()  # regenerate: python -m abstain.integrations.lm_eval.task_yamls
    names = [task_name(s, p) for s in SUITES for p in PROTOCOLS]
    assert all(f"{n}.yaml" in shipped for n in names) and len(names) == len(SUITES) * len(PROTOCOLS)
    lm_eval_cli = str(Path(sys.executable).parent / "lm-eval")
    done = subprocess.run([lm_eval_cli, "validate", "--tasks", ",".join(names), "--include_path", str(tasks_dir())],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    from lm_eval.tasks import TaskManager  # and every template builds a task (documents, prompt, metrics)

    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata={"abstain": {"limit": 4}})
    loaded = manager.load([task_name("quick", p) for p in PROTOCOLS])
    assert len(loaded["tasks"]) == len(PROTOCOLS)


def test_lm_eval_options_are_checked():
    from abstain.integrations.lm_eval.hooks import harness_task, load_docs

    with pytest.raises(DataError, match="unknown option.*'sed'.*valid"):
        harness_task({"suite": "quick", "protocol": "idk", "abstain": {"sed": 1}})
    with pytest.raises(DataError, match="several benchmarks"):
        load_docs(suite="quick", protocol="idk", abstain={"limit": 8, "shots": 2})
    docs = load_docs(suite="heldout", protocol="idk", abstain={"limit": 4, "shots": 2, "shots_unanswerable": 1},
                     model="m", base_url="http://x", seed=1234)  # what lm-eval adds from --model_args is ignored
    assert len(docs["test"]) == 4 and len(docs["demos"]) == 2


# ---- back into abstain -------------------------------------------------------------------------------------


def test_both_logs_come_back_as_run_folders_that_compare_reads(recorded, inspect_log, lm_eval_run, tmp_path):
    out, _, scored, metrics = recorded
    runner = CliRunner()
    r = runner.invoke(app, ["import", "inspect", inspect_log.location, "--out", str(tmp_path / "inspect")])
    assert r.exit_code == 0, r.output
    samples_file = tmp_path / "samples_abstain_quick_idk.jsonl"
    samples_file.write_text("".join(json.dumps(s, default=str) + "\n"
                                    for s in lm_eval_run["samples"]["abstain_quick_idk"]))
    r = runner.invoke(app, ["import", "lm-eval", str(samples_file), "--out", str(tmp_path / "lm-eval"),
                            "--model", "replay"])
    assert r.exit_code == 0, r.output
    for folder in (tmp_path / "inspect", tmp_path / "lm-eval"):
        got = json.loads((folder / "metrics.json").read_text())
        assert got["protocols"] == metrics["protocols"]  # every family, per category and perturbation too
        config = json.loads((folder / "config.json").read_text())
        assert (config["max_tokens"], config["temperature"]) == (TOKENS, 0.0)  # what the harness sent
        assert config["generation"]["chat_template"] is True and config["generation"]["stop"] == []
        assert config["unscored"]["count"] == 0
        rows = RunDir(folder).read_rows("scored.jsonl", ScoredRow)
        assert [r.model_dump(exclude={"model"}) for r in rows] == [r.model_dump(exclude={"model"}) for r in scored]
        assert (folder / "report.md").exists()
    r = runner.invoke(app, ["compare", str(out), str(tmp_path / "inspect"), str(tmp_path / "lm-eval"),
                            "--out", str(tmp_path / "compare")])
    assert r.exit_code == 0, r.output
    assert "+0.000" in r.output and (tmp_path / "compare" / "compare.html").exists()
    assert "generation settings differ" not in r.output  # the three generated alike
    r = runner.invoke(app, ["import", "inspect", str(out / "metrics.json"), "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "not an Inspect log" in " ".join(r.output.split())
