"""bench/gpu_check.sh, the project's GPU check, as far as a CPU can run it: the wrapper runs without abstain
installed (its PYTHONPATH), a section in its own process writes its JSON, the goals read the figures, and the
shipped CPU reference covers the ``quick`` suite. The full dry run (every section at toy sizes, ~6 min on 2 cores:
``CUDA_VISIBLE_DEVICES= bench/gpu_check.sh --dry-run``) is run by hand, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gpu_check  # noqa: E402


def test_the_wrapper_runs_a_section_on_a_cpu_and_writes_one_json(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--dry-run", "--only", "host", "--out",
                           str(tmp_path)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report == json.loads((tmp_path / "gpu_check.json").read_text())
    host = report["sections"]["host"]
    assert host["device"] == "cpu" and host["torch"] and "section_seconds" in host
    assert set(host["cpu"]) >= {"model", "avx2", "amx"}
    assert report["goals"]["grpo_step_s <= 2"] is None  # not measured: no number


def test_goals_read_the_measured_figures():
    sections = {"eval": {"fp32": {"tokens_per_second": 2000.0}, "bf16": {"tokens_per_second": 12000.0}},
                "grpo": {"transformers": {"median_step_s_after_first": 2.5}}, "ratio": {"tiar / plain": 1.01}}
    goals = gpu_check.goals(sections)
    assert goals["eval bf16 tokens/s >= 10000"] == {"measured": 12000.0, "met": True}
    assert goals["grpo_step_s <= 2"] == {"measured": 2.5, "met": False}
    assert goals["eval bf16 at least as fast as fp32"]["met"] and goals["tiar / plain <= 1.03"]["met"]


def test_the_cpu_reference_is_the_quick_suite_under_idk():
    from abstain.data.suites import load_suite

    rows = [json.loads(line) for line in gpu_check.REFERENCE.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(item.id for item in load_suite("quick").items)
    assert {r["outcome"] for r in rows} <= {"correct", "wrong", "abstain", "unscored"}


def test_the_scale_check_dry_runs_at_a_tiny_configuration_on_a_cpu(tmp_path):
    # bench/gpu_check.sh --scale: the Qwen2.5 shapes shrunk to 2 layers (the real vocabularies), random weights,
    # bfloat16 and gradient checkpointing through abstain's recipe path; on a GPU the same code at full size
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHON": sys.executable}
    # (the 1.5B GRPO section runs the 7B one's code on another shape: left out here, as the suite's time is short)
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--scale", "--dry-run", "--only",
                           "host,scale_grpo_7b,scale_grpo_7b_recipe,scale_sft_1_5b", "--out", str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    sections = report["sections"]
    assert list(sections) == ["host", "scale_grpo_7b", "scale_grpo_7b_recipe", "scale_sft_1_5b"] and report["scale"]
    for name in ("scale_grpo_7b", "scale_grpo_7b_recipe", "scale_sft_1_5b"):
        section = sections[name]
        assert "error" not in section, section
        assert len(section["step_seconds"]) == 2 and section["peak_allocated_gb"] is None  # 2 steps; no GPU here
        assert section["policy"]["dtype"] == "bfloat16"
    grpo, sft = sections["scale_grpo_7b"], sections["scale_sft_1_5b"]
    assert grpo["policy"]["gradient_checkpointing"] and grpo["trainable"] < grpo["parameters"]  # LoRA
    assert grpo["parameters"] > 152064 * 64 * 2  # the real vocabulary, untied (embedding and head)
    assert grpo["shape"] == {"prompts": 2, "generations": 2, "max_completion_length": 8}
    assert sft["policy"]["sharding"]["kind"] == "fsdp" and sft["trainable"] == sft["parameters"]  # full fine-tune
    assert report["goals"]["7b LoRA GRPO step peak < 75 GB"] is None  # not measured: no number
    # the shipped 7B recipe at its own shape (LoRA r 64; dry run: 8 tokens), its accumulation and learning rate kept
    recipe = sections["scale_grpo_7b_recipe"]
    assert recipe["shape"] == {"lora_r": 64, "generations": 2, "micro_batch_size": 2, "accumulated": 2,
                               "max_completion_length": 8} and recipe["vllm_share"] == 0.3
    assert recipe["metrics"][0]["learning_rate"] > 0 and recipe["trainable"] > grpo["trainable"]  # r 64 > r 16
    assert report["goals"]["grpo-7b.yaml per GPU (peak reserved + its vLLM share) < 80 GB"] is None
