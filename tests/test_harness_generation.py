"""The same model through three harnesses: ``abstain eval --model openai:…``, ``inspect eval abstain/abstain_eval
--model openai-api/…`` and ``lm_eval --model local-chat-completions`` against the test llama.cpp server of the
bundled GGUF, greedy, write the same response to every item and score it the same; their runs come back as
folders ``abstain compare`` reads, each recording the token budget its harness was given on its own command line
(``abstain eval --max-tokens 32``, Inspect's ``--max-tokens 32`` over the task's 512, lm-eval's ``--gen_kwargs
max_gen_toks=32`` over the YAML's 512), so compare finds no generation setting that differs.

One case, the hardest to get alike: ``clarify`` on ``heldout`` with two demonstrations as earlier chat turns (one
benchmark: lm-eval carries one list of demonstrations per task). All three send the chat messages to the server,
which renders the template, so the prompt tokens are the same. (The ``idk`` case on ``quick`` that ran beside it,
without demonstrations, went for time: ``tests/test_harness.py`` runs ``quick``, several benchmarks, through Inspect
against ``abstain eval``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.records.runs import RunDir
from abstain.integrations.lm_eval.task_yamls import task_name, tasks_dir
from abstain.outcomes import outcome
from abstain.schema import ScoredRow

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")
pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
TOKENS = 32
CASES = {
    "clarify-2shot": {"suite": "heldout", "protocol": "clarify", "limit": 4, "shots": 2, "shots_unanswerable": 1},
}


def _run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.parametrize("case", sorted(CASES))
def test_three_harnesses_write_and_score_the_same(case, llama_server, tmp_path):
    c = CASES[case]
    model = "smollm2-135m"
    ours = tmp_path / "abstain"
    r = CliRunner().invoke(app, ["eval", "--model", f"openai:{model}", "--base-url", llama_server.base_url,
                                 "--suite", c["suite"], "--protocol", c["protocol"], "--limit", str(c["limit"]),
                                 "--shots", str(c["shots"]), "--shots-unanswerable", str(c["shots_unanswerable"]),
                                 "--max-tokens", str(TOKENS), "--batch-size", "1", "--out", str(ours)])
    assert r.exit_code == 0, r.output
    expected = RunDir(ours).read_rows("scored.jsonl", ScoredRow)

    logs = tmp_path / "inspect-logs"
    _run([str(BIN / "inspect"), "eval", "abstain/abstain_eval", *[a for k in ("suite", "protocol", "limit", "shots",
         "shots_unanswerable") for a in ("-T", f"{k}={c[k]}")], "--max-tokens", str(TOKENS),
          "--model", f"openai-api/llamacpp/{model}", "--max-connections", "1", "--log-dir", str(logs),
          "--display", "none"], env={"LLAMACPP_BASE_URL": llama_server.base_url, "LLAMACPP_API_KEY": "unused"})
    (log,) = logs.glob("*.eval")

    out = tmp_path / "lm-eval-out"
    options = {k: c[k] for k in ("limit", "shots", "shots_unanswerable")}
    _run([str(BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
          f"model={model},base_url={llama_server.base_url}/chat/completions,num_concurrent=1",
          "--tasks", task_name(c["suite"], c["protocol"]), "--include_path", str(tasks_dir()),
          "--apply_chat_template", "--num_fewshot", str(c["shots"]), "--metadata", json.dumps({"abstain": options}),
          "--gen_kwargs", f"max_gen_toks={TOKENS}", "--log_samples", "--output_path", str(out)],
         env={"OPENAI_API_KEY": ""})
    (samples,) = out.rglob(f"samples_{task_name(c['suite'], c['protocol'])}_*.jsonl")
    for line in samples.read_text().splitlines():  # the demonstrations went as earlier turns
        assert str(json.loads(line)["arguments"]).count('"role": "assistant"') == c["shots"]

    runner = CliRunner()
    folders = {"inspect": tmp_path / "inspect", "lm-eval": tmp_path / "lm-eval"}
    for harness, source in (("inspect", log), ("lm-eval", samples)):
        r = runner.invoke(app, ["import", harness, str(source), "--out", str(folders[harness])])
        assert r.exit_code == 0, r.output
    for harness, folder in folders.items():
        config = json.loads((folder / "config.json").read_text())
        assert (config["max_tokens"], config["temperature"], config["shots"]) == (TOKENS, 0.0, c["shots"]), harness
        assert config["generation"]["max_tokens"] == TOKENS and config["generation"]["chat_template"] is True
        rows = RunDir(folder).read_rows("scored.jsonl", ScoredRow)
        assert [x.id for x in rows] == [x.id for x in expected], harness
        for theirs, mine in zip(rows, expected, strict=True):
            assert theirs.response == mine.response, (harness, mine.id)  # the same text, item by item
            assert outcome(theirs) == outcome(mine)
        got = json.loads((folder / "metrics.json").read_text())["protocols"]
        assert got == json.loads((ours / "metrics.json").read_text())["protocols"], harness
    assert json.loads((folders["lm-eval"] / "config.json").read_text())["generation"]["as_given"]["num_fewshot"] \
        == c["shots"]
    r = runner.invoke(app, ["compare", str(ours), *map(str, folders.values()), "--out", str(tmp_path / "compare")])
    assert r.exit_code == 0, r.output
    assert "generation settings differ" not in r.output  # 32 tokens, greedy, chat turns: all three
