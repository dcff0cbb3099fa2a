"""A training run killed with SIGKILL while it writes a checkpoint — plus a torn last line in its
``metrics.jsonl`` — resumes with ``--resume`` to bit-identical final weights; so does one trained in parts
(``--until``).

The kill is real: ``abstain train sft`` runs in a subprocess whose trainer sends itself SIGKILL between
writing ``checkpoint-2``'s weights and its optimizer and ``trainer_state.json`` (the state ``kill -9`` or a
power cut leaves mid-write). The tiny recipe with a small LoRA keeps each run under a minute.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from safetensors.torch import load_file
from typer.testing import CliRunner

from abstain.cli import app
from abstain.train.trainers.runner import TrainRun

pytestmark = pytest.mark.slow

ARGS = ["train", "sft", "--recipe", "tiny-sft", "--set", "steps=2", "--set", "lora={r: 4, alpha: 8}",
        "--set", "data.synth.n=4", "--set", "batch_size=2", "--set", "save_steps=1"]

KILL_MID_CHECKPOINT = textwrap.dedent("""
    import os, signal, sys
    import transformers

    own = transformers.Trainer._save_optimizer_and_scheduler

    def killed(self, output_dir):  # checkpoint-2's weights are on disk; its optimizer and state are not
        if output_dir.endswith("checkpoint-2"):
            os.kill(os.getpid(), signal.SIGKILL)
        return own(self, output_dir)

    transformers.Trainer._save_optimizer_and_scheduler = killed
    from abstain.cli import main
    sys.argv = ["abstain", *sys.argv[1:]]
    main()
""")


def _tensors(folder):
    return {name: load_file(str(folder / name)) for name in ("model.safetensors", "adapter/adapter_model.safetensors")}


def test_killed_while_writing_a_checkpoint_resumes_to_identical_weights(tmp_path, small_model_dir):
    args = [*ARGS, "--set", f"model={small_model_dir}"]  # the small model of the bundled one's kind: the path, not it
    runner = CliRunner()
    reference = tmp_path / "reference"
    r = runner.invoke(app, [*args, "--out", str(reference)])
    assert r.exit_code == 0, r.output

    out = tmp_path / "killed"
    env = {**os.environ, "ABSTAIN_NO_PROGRESS": "1"}
    proc = subprocess.run([sys.executable, "-c", KILL_MID_CHECKPOINT, *args, "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    run = TrainRun(out)
    half = run.checkpoints / "checkpoint-2"
    assert half.exists() and not (half / "trainer_state.json").exists()
    assert [p.name for p in run.checkpoint_folders()] == ["checkpoint-1", "checkpoint-2"]
    assert run.last_checkpoint().name == "checkpoint-1"  # the half-written one does not count
    with (out / "metrics.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"step": 2, "loss": 0.')  # a kill mid-write of the log

    r = runner.invoke(app, [*args, "--out", str(out)])
    assert r.exit_code == 2 and "--resume" in r.output  # never silently restarted over a checkpoint
    r = runner.invoke(app, [*args, "--out", str(out), "--resume"])
    assert r.exit_code == 0, r.output

    got, want = _tensors(out / "final"), _tensors(reference / "final")
    for name in want:
        assert set(got[name]) == set(want[name])
        different = [k for k in want[name] if not bool((got[name][k] == want[name][k]).all())]
        assert not different, f"{name}: {len(different)} tensors differ, e.g. {different[:3]}"
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2]  # the torn line is gone and no step is logged twice

    # trained in parts: --until 1 stops with checkpoint-1 and no final/, --resume finishes to the same weights
    parts = tmp_path / "parts"
    r = runner.invoke(app, [*args, "--set", "save_steps=5", "--out", str(parts), "--until", "1"])
    assert r.exit_code == 0 and "stopped after step 1" in r.output, r.output
    assert [p.name for p in TrainRun(parts).checkpoint_folders()] == ["checkpoint-1"] and not (parts / "final").exists()
    r = runner.invoke(app, [*args, "--set", "save_steps=5", "--out", str(parts), "--resume"])
    assert r.exit_code == 0, r.output
    got = _tensors(parts / "final")
    for name in want:
        assert all(bool((got[name][k] == want[name][k]).all()) for k in want[name]), name


def test_a_torn_metrics_line_elsewhere_is_an_error_naming_the_file(tmp_path):
    run = TrainRun(tmp_path)
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "lo\n{"step": 2}\n')
    with pytest.raises(Exception) as err:
        run.read_metrics()
    assert "metrics.jsonl:1" in str(err.value) and "invalid JSON" in str(err.value)
