"""abstain's harness tasks by name, and what a harness run records and refuses.

Every named task loads through its harness's own registry: Inspect's ``abstain/<task>`` (``ua_bench`` on UA-Bench's
own data, the fixture checkout ``tests/fixtures/uabench``) and lm-eval's 54 ``abstain_<suite>_<protocol>``. The
settings a task cannot honour are refused before a request goes out (lm-eval without a chat template, another
``--num_fewshot``, a system instruction, two token budgets; Inspect's ``--system-message``); ``--metadata
abstain.max_tokens`` is sent. An import records what ran (Inspect's ``--max-tokens`` / ``--temperature`` /
``--top-k``) and counts a sample without a score instead of aborting, and ``abstain compare`` names the settings two
runs differ in.

Offline: Inspect's ``mockllm`` (its default output, or a callable), and an lm-eval ``LM`` that answers every
request with one box and keeps the generation arguments it was sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lm_eval_stub import answering_lm
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.suites import SUITES
from abstain.records.runs import RunDir
from abstain.integrations.harness import HarnessTask
from abstain.integrations.imports import import_inspect, import_lm_eval
from abstain.integrations.lm_eval.task_yamls import task_name, tasks_dir
from abstain.protocols import PROTOCOLS
from abstain.schema import DataError, ScoredRow

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")

UABENCH = Path(__file__).parent / "fixtures" / "uabench"
ANSWER = "\\boxed{I don't know.}"


def _mock(fail_on: str | None = None):
    """Inspect's ``mockllm`` answering every sample with one box (its usage set, so Inspect counts no tokens with
    a tokenizer it would download); the sample whose question is ``fail_on`` fails."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(input, tools, tool_choice, config):  # noqa: A002 - Inspect's argument names
        if input[-1].text == fail_on:
            raise RuntimeError("the server hung up")
        out = ModelOutput.from_content(model="mock", content=ANSWER)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=answer)


def _inspect(task: str, tmp_path: Path, model=None, **kwargs):
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval(task, model=model or _mock(), log_dir=str(tmp_path), display="none", **kwargs)
    return log


# ---- Inspect: the named tasks --------------------------------------------------------------------------------


@pytest.mark.parametrize(("task", "args", "expected"), [
    ("abstain/abstain_eval", {"suite": "quick", "protocol": "idk", "limit": 2}, HarnessTask(suite="quick", limit=2)),
    ("abstain/ua_bench", {"data": str(UABENCH)},
     HarnessTask(data=f"uabench:{UABENCH}", protocol="attribution")),
    ("abstain/abstain_test_sum", {"limit": 2}, HarnessTask(suite="abstain-test-sum", protocol="clarify", limit=2)),
    ("abstain/abstentionbench_lite", {"limit": 2}, HarnessTask(suite="abstentionbench-lite", limit=2)),
])
def test_every_inspect_task_runs_by_name(task, args, expected, tmp_path):
    log = _inspect(task, tmp_path, task_args=args)
    assert log.status == "success", log.error
    samples = sorted(log.samples, key=lambda s: s.metadata["index"])
    assert [s.id for s in samples] == [s.item.id for s in expected.samples()]  # the task's items, in its order
    assert {s.metadata["protocol"] for s in samples} == {expected.protocol}
    assert all(s.scores["abstain_scorer"].value in ("correct", "wrong", "abstain", "unscored") for s in samples)


def test_ua_bench_runs_ua_benchs_own_data_and_says_where_to_get_it(tmp_path):
    log = _inspect("abstain/ua_bench", tmp_path, task_args={"data": f"uabench:{UABENCH}"})
    assert log.status == "success", log.error
    items = [s.metadata["item"] for s in log.samples]
    assert len(items) == 12 and all(i["id"].startswith("uabench-") for i in items)  # every file of the checkout
    assert {i["category"] for i in items} == {"knowledge", "reasoning"}  # UA-Bench's two tasks
    (scores,) = [s for s in log.results.scores if s.name == "abstain_scorer"]
    assert "ua.acc" in scores.metrics and "ua.du_f1" in scores.metrics
    done = import_inspect(log.location, tmp_path / "run")  # UA-Bench's per-task numbers in the run folder
    block = json.loads((done.path / "metrics.json").read_text())["protocols"]["attribution"]
    assert {"by_category.knowledge.ua.acc", "by_category.reasoning.ua.du_f1"} <= set(block)
    with pytest.raises(Exception, match="ua_bench runs UA-Bench's own data.*-T data=/path/to/UA-Bench"):
        _inspect("abstain/ua_bench", tmp_path)


# ---- Inspect: what ran is recorded, what cannot be honoured is refused -----------------------------------------


def test_inspect_refuses_a_system_message_before_generating(tmp_path):
    log = _inspect("abstain/abstain_eval", tmp_path, task_args={"limit": 2}, system_message="Be brief.")
    assert log.status == "error"
    assert "--system-message 'Be brief.' would be put before the protocol's system message" in log.error.message
    assert not any(s.output and s.output.completion for s in log.samples or [])  # nothing was generated


def test_inspect_generation_flags_are_recorded_and_compare_names_them(tmp_path):
    plain = _inspect("abstain/abstain_eval", tmp_path / "a", task_args={"limit": 2})
    tuned = _inspect("abstain/abstain_eval", tmp_path / "b", task_args={"limit": 2}, max_tokens=32,
                     temperature=0.5, top_k=5, max_connections=2)
    a, b = import_inspect(plain.location, tmp_path / "plain"), import_inspect(tuned.location, tmp_path / "tuned")
    config = json.loads((b.path / "config.json").read_text())
    assert (config["max_tokens"], config["temperature"], config["top_p"]) == (32, 0.5, 1.0)  # not the task's 512, 0
    assert config["generation"]["settings"] == {"top_k": 5}  # max_connections decides no text: not a setting
    assert config["generation"]["as_given"]["generate_config"] == {"max_tokens": 32, "temperature": 0.5, "top_k": 5}
    assert json.loads((a.path / "config.json").read_text())["max_tokens"] == 512
    r = CliRunner().invoke(app, ["compare", str(a.path), str(b.path), "--label", "plain", "--label", "tuned",
                                 "--out", str(tmp_path / "compare")])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    for line in ("max_tokens: plain 512, tuned 32", "temperature: plain 0.0, tuned 0.5", "top_k: plain unset, tuned 5"):
        assert f"generation settings differ: {line}" in out
        assert line in (tmp_path / "compare" / "compare.md").read_text()
    r = CliRunner().invoke(app, ["compare", str(a.path), str(a.path), "--out", str(tmp_path / "same")])
    assert r.exit_code == 0 and "generation settings differ" not in r.output


def test_an_inspect_sample_without_a_score_is_counted_not_fatal(tmp_path):
    task = HarnessTask(suite="quick", protocol="idk", limit=4)
    log = _inspect("abstain/abstain_eval", tmp_path, model=_mock(fail_on=task.samples()[1].messages[-1]["content"]),
                   task_args={"limit": 4}, fail_on_error=False)
    assert len(log.samples) == 4 and sum(1 for s in log.samples if s.error) == 1
    r = CliRunner().invoke(app, ["import", "inspect", log.location, "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert "1 of 4 rows unscored (1 without a score in the log" in " ".join(r.output.split())
    rows = RunDir(tmp_path / "run").read_rows("scored.jsonl", ScoredRow)
    (lost,) = [row for row in rows if row.judge_errors]
    assert lost.id == task.samples()[1].item.id and "the server hung up" in lost.judge_errors["correct"]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())["protocols"]["idk"]
    assert metrics["n.judge_errors"] == 1 and metrics["r1.u_ref"] == 1.0  # the other unanswerable item abstained
    assert json.loads((tmp_path / "run" / "config.json").read_text())["unscored"]["count"] == 1


# ---- lm-eval: the named tasks, what is refused, what is sent ---------------------------------------------------


def _echo_lm():
    """Answers every request with one box and keeps what it was sent."""
    return answering_lm(lambda request: ANSWER, name="echo")


def _lm_eval(task: str, options: dict, lm=None, **kwargs):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata={"abstain": options})
    kwargs.setdefault("apply_chat_template", True)
    return simple_evaluate(model=lm or _echo_lm(), tasks=[task], task_manager=manager, log_samples=True,
                           bootstrap_iters=0, **kwargs)


def test_every_lm_eval_task_loads_by_name():
    from lm_eval.tasks import TaskManager

    from abstain.integrations.lm_eval.task import AbstainTask

    names = [task_name(s, p) for s in SUITES for p in PROTOCOLS]
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata={"abstain": {"limit": 2}})
    loaded = manager.load(names)["tasks"]
    assert sorted(loaded) == sorted(names)
    for name, task in loaded.items():
        assert isinstance(task, AbstainTask), name
        assert len(task.eval_docs) == 2 and task.config.generation_kwargs["max_gen_toks"] == 512, name
        assert json.loads(task.eval_docs[0]["task"])["suite"] == task.config.metadata["suite"], name


@pytest.mark.parametrize(("options", "kwargs", "refusal"), [
    ({"limit": 2}, {"apply_chat_template": False}, "need --apply_chat_template"),
    ({"limit": 2}, {"num_fewshot": 2}, "--num_fewshot 2 but the task's shots is 0"),
    ({"limit": 2, "shots": 2}, {"num_fewshot": 1}, "--num_fewshot 1 but the task's shots is 2"),
    ({"limit": 2, "shots": 2}, {"fewshot_as_multiturn": False}, "--fewshot_as_multiturn false"),
    ({"limit": 2}, {"system_instruction": "Be brief."}, "--system_instruction would be put before"),
    ({"limit": 2, "max_tokens": 64}, {"gen_kwargs": "max_gen_toks=32"},
     "abstain.max_tokens 64 but --gen_kwargs max_gen_toks=32"),
])
def test_lm_eval_refuses_what_the_task_would_not_honour(options, kwargs, refusal):
    lm = _echo_lm()
    with pytest.raises(DataError, match=refusal.replace("(", r"\(")):
        _lm_eval("abstain_heldout_idk", options, lm=lm, **kwargs)
    assert lm.sent == []  # refused before any request


def test_lm_eval_sends_and_records_metadata_max_tokens_and_the_task_shots(tmp_path, caplog):
    lm = _echo_lm()
    done = _lm_eval("abstain_heldout_clarify", {"limit": 3, "max_tokens": 40, "shots": 2, "shots_unanswerable": 1},
                    lm=lm, gen_kwargs="top_k=5")  # no --num_fewshot: the task's shots
    assert [(kwargs["max_gen_toks"], kwargs["top_k"]) for _, kwargs in lm.sent] == [(40, 5)] * 3
    assert "--gen_kwargs top_k: abstain eval has no such setting" in caplog.text
    assert all(context.count('"role": "assistant"') == 2 for context, _ in lm.sent)  # two demonstrations as turns
    samples = done["samples"]["abstain_heldout_clarify"]
    carrier = samples[0]["ua.acc"]
    assert carrier["generation"]["max_tokens"] == 40 and carrier["generation"]["as_given"]["num_fewshot"] == 2
    assert all(set(s["r1.u_ref"]) == {"metric", "id", "sample"} for s in samples)  # the row only once per sample
    file = tmp_path / "samples_abstain_heldout_clarify.jsonl"
    file.write_text("".join(json.dumps(s, default=str) + "\n" for s in samples))
    imported = import_lm_eval(file, tmp_path / "run", model="echo")
    config = json.loads((imported.path / "config.json").read_text())
    assert config["max_tokens"] == 40 and config["shots"] == 2 and config["generation"]["chat_template"] is True
    assert config["generation"]["settings"] == {"top_k": 5}
    assert imported.unscored == 0 and imported.rows == 3
    for sample in samples:  # a log of task files before the record: the gen_kwargs lm-eval logged with the request
        sample["ua.acc"]["generation"] = None
        sample["arguments"] = {"gen_args_0": {"arg_0": sample["arguments"][0][0], "arg_1": sample["arguments"][0][1]}}
    file.write_text("".join(json.dumps(s, default=str) + "\n" for s in samples))
    old = import_lm_eval(file, tmp_path / "old", model="echo").generation
    assert (old["max_tokens"], old["chat_template"], old["settings"]) == (40, None, {"top_k": 5})


def test_lm_eval_runs_ua_bench_data_through_a_task_of_its_protocol():
    done = _lm_eval("abstain_quick_attribution", {"data": f"uabench:{UABENCH}"})
    samples = done["samples"]["abstain_quick_attribution"]
    assert len(samples) == 12 and all(s["doc"]["id"].startswith("uabench-") for s in samples)
    assert done["results"]["abstain_quick_attribution"]["n.unanswerable,none"] == 6
