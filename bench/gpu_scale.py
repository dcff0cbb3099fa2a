"""The scale check (``bench/gpu_check.sh --scale``): abstain's training at the seeds' model sizes on one GPU.

Models shaped like Qwen2.5-1.5B and Qwen2.5-7B (``bench/scale/*/config.json``, the published configs) are built
with random weights on the GPU (``model: random:<folder>``: nothing to download; speed and memory need no trained
weights) in bfloat16 with gradient checkpointing, through abstain's own recipe path, and trained for two steps:

- ``scale_grpo_7b`` / ``scale_grpo_1_5b``: a LoRA GRPO-TIAR step of 8 prompts x 8 completions x 256 tokens
  (``max_completion_length`` 256; random weights rarely stop early, so nearly every completion is 256 tokens);
- ``scale_grpo_7b_recipe``: ``examples/sharded/grpo-7b.yaml`` at its own shape (LoRA r 64, 1,024 completion tokens,
  micro batches of 8 completions), what one of its 8 GPUs holds (:func:`grpo_recipe_step`);
- ``scale_sft_1_5b``: a full fine-tune SFT step (8 rows of <= 512 tokens) under FSDP2 on one process
  (``torchrun --nproc_per_node 1``; FSDP with one process is the configuration a larger job shards the same way).

Each reports the seconds of every step, the peak GPU memory (``torch.cuda.max_memory_allocated``, and what the
caching allocator reserved) and tokens/s (GRPO: completion tokens; SFT: the trained tokens). The goals on one
80 GB GPU: the 7B LoRA GRPO step peaks below 75 GB, and the 1.5B full fine-tune fits.

``--dry-run`` runs the same code on a CPU at a tiny configuration (2 layers, hidden size 64, the real vocabulary):
what ``make test`` checks (``tests/test_gpu_check.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHAPES = {"1.5b": HERE / "scale" / "qwen2.5-1.5b", "7b": HERE / "scale" / "qwen2.5-7b"}
#: the dry run's model: each shape shrunk to this (the vocabulary and the architecture stay)
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2}
GOAL_7B_GRPO_PEAK_GB = 75.0
RECIPE_7B = HERE.parent / "examples" / "sharded" / "grpo-7b.yaml"
GPU_GB = 80.0  # the recipe's GPUs (80 GB each)


def model_folder(shape: str, out: Path, tiny: bool) -> Path:
    """A ``random:`` model folder: the shape's config (shrunk when ``tiny``) and the bundled model's tokenizer."""
    from abstain.backends import bundled_model_dir

    folder = out / "scale-models" / (shape + ("-tiny" if tiny else ""))
    folder.mkdir(parents=True, exist_ok=True)
    config = json.loads((SHAPES[shape] / "config.json").read_text())
    if tiny:
        config.update(TINY)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    source = bundled_model_dir()
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    return folder


def _memory() -> dict[str, float | None]:
    import torch

    if not torch.cuda.is_available():
        return {"peak_allocated_gb": None, "peak_reserved_gb": None}
    return {"peak_allocated_gb": round(torch.cuda.max_memory_allocated() / 1e9, 2),
            "peak_reserved_gb": round(torch.cuda.max_memory_reserved() / 1e9, 2)}


def _train(recipe: Any, out: Path, build: Any) -> dict[str, Any]:
    """Train ``recipe`` two steps through abstain's path (no final/: random weights are not worth 15 GB of disk)."""
    import torch

    from abstain.train.trainers.runner import start

    run, _ = start(recipe, str(out), resume=False)
    stamps: list[float] = []

    def stamp(step: int, total: int, logs: dict[str, float]) -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        stamps.append(time.perf_counter())

    trainer = build(recipe, run, stamp)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    steps = [round(b - a, 2) for a, b in zip(stamps, stamps[1:])]
    params = sum(p.numel() for p in trainer.model.parameters())
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    return {"step_seconds": steps, "parameters": params, "trainable": trainable, "metrics": rows,
            "policy": run.policy.record() if run.policy else None, **_memory()}


def grpo_step(args: argparse.Namespace, shape: str) -> dict[str, Any]:
    """A LoRA GRPO-TIAR step, 8 prompts x 8 completions x 256 tokens (dry run: 2 x 2 x 8)."""
    from abstain.train.recipe import load_recipe
    from abstain.train.trainers.grpo import grpo_trainer

    out = Path(args.out)
    folder = model_folder(shape, out, args.dry_run)
    prompts, generations, tokens = (2, 2, 8) if args.dry_run else (8, 8, 256)
    recipe = load_recipe("tiny-grpo", [
        f"model=random:{folder}", "dtype=bfloat16", "gradient_checkpointing=true", "lora={r: 16, alpha: 32}",
        f"num_generations={generations}", f"batch_size={prompts * generations}", f"max_completion_length={tokens}",
        f"data.synth.n={max(prompts, 4)}", "steps=2", "save_steps=1000", "advantage=tiar", "name=scale-grpo"])
    result = _train(recipe, out / f"scale-grpo-{shape}", lambda r, run, p: grpo_trainer(r, run, progress=p))
    lengths = [row.get("completions/mean_length") for row in result["metrics"]]
    per_step = [None if n is None else n * prompts * generations for n in lengths]
    result["completion_tokens_per_step"] = per_step
    result["completion_tokens_per_s"] = [None if n is None or not s else round(n / s, 1)
                                         for n, s in zip(per_step, result["step_seconds"])]
    result["shape"] = {"prompts": prompts, "generations": generations, "max_completion_length": tokens}
    return result


def grpo_recipe_step(args: argparse.Namespace) -> dict[str, Any]:
    """``examples/sharded/grpo-7b.yaml`` at its own shape on one GPU: LoRA r 64, 1,024 completion tokens, micro
    batches of 8 completions (the recipe's per-GPU forward pass), two of them accumulated per step, as one of the
    recipe's 8 processes holds them. TRL's colocated vLLM is off (the GPU machine has no vLLM): the recipe's
    engine takes ``vllm_gpu_memory_utilization`` of the GPU on top of the peak measured here (``vllm_share``).
    Dry run: the tiny 7B shape, 8 tokens, micro batches of 2."""
    from abstain.train.recipe import load_recipe
    from abstain.train.trainers.grpo import grpo_trainer

    out = Path(args.out)
    folder = model_folder("7b", out, args.dry_run)
    generations, micro, tokens = (2, 2, 8) if args.dry_run else (8, 8, 1024)
    accumulated = 2
    recipe = load_recipe(str(RECIPE_7B), [
        f"model=random:{folder}", f"num_generations={generations}", f"micro_batch_size={micro}",
        f"batch_size={accumulated * micro}", f"max_completion_length={tokens}", "data.synth.n=8", "steps=2",
        "save_steps=1000", "trl.use_vllm=false", "name=scale-grpo-7b-recipe"])
    result = _train(recipe, out / "scale-grpo-7b-recipe", lambda r, run, p: grpo_trainer(r, run, progress=p))
    lengths = [row.get("completions/mean_length") for row in result["metrics"]]
    result["completion_tokens_per_step"] = [None if n is None else n * accumulated * micro for n in lengths]
    result["shape"] = {"lora_r": recipe.lora.r if recipe.lora else None, "generations": generations,
                       "micro_batch_size": micro, "accumulated": accumulated, "max_completion_length": tokens}
    result["vllm_share"] = recipe.trl.get("vllm_gpu_memory_utilization")  # the recipe's own (use_vllm is off here)
    return result


def sft_step_fsdp(args: argparse.Namespace, shape: str) -> dict[str, Any]:
    """A full fine-tune SFT step under FSDP2 on one process: this section relaunches itself under torchrun."""
    out = Path(args.out)
    target = out / f"scale-sft-{shape}.json"
    target.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1", __file__,
           "--sft", shape, "--out", str(out), *(["--dry-run"] if args.dry_run else [])]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not target.exists():
        return {"error": f"exit code {done.returncode}", "log_tail": (done.stdout + done.stderr)[-2500:]}
    return json.loads(target.read_text())


def _sft_in_process(args: argparse.Namespace, shape: str) -> None:
    from abstain.train.recipe import load_recipe
    from abstain.train.trainers.sft import sft_trainer

    out = Path(args.out)
    folder = model_folder(shape, out, args.dry_run)
    rows, length = (2, 128) if args.dry_run else (8, 512)
    recipe = load_recipe("tiny-sft", [
        f"model=random:{folder}", "lora=null", "dtype=bfloat16", "gradient_checkpointing=true",
        "trl={fsdp: full_shard, fsdp_config: {fsdp_version: 2}}", f"batch_size={rows}", f"max_length={length}",
        f"data.synth.n={max(rows * 2, 8)}", "steps=2", "save_steps=1000", "name=scale-sft"])
    result = _train(recipe, out / f"scale-sft-{shape}", lambda r, run, p: sft_trainer(r, run, progress=p))
    tokens = [row.get("num_tokens") for row in result["metrics"]]
    per_step = [None if b is None or a is None else b - a for a, b in zip([0.0, *tokens], tokens)]
    result["trained_tokens_per_step"] = per_step
    result["tokens_per_s"] = [None if n is None or not s else round(n / s, 1)
                              for n, s in zip(per_step, result["step_seconds"])]
    result["shape"] = {"rows": rows, "max_length": length}
    (out / f"scale-sft-{shape}.json").write_text(json.dumps(result, indent=2, default=str))


def goals(sections: dict[str, Any]) -> dict[str, Any]:
    """The scale goals against what was measured (None where nothing was)."""
    grpo = sections.get("scale_grpo_7b") or {}
    sft = sections.get("scale_sft_1_5b") or {}
    recipe = sections.get("scale_grpo_7b_recipe") or {}
    peak = grpo.get("peak_allocated_gb")
    recipe_peak, share = recipe.get("peak_reserved_gb"), recipe.get("vllm_share") or 0.0
    return {
        "grpo-7b.yaml per GPU (peak reserved + its vLLM share) < 80 GB": None if recipe_peak is None else {
            "measured_gb": recipe_peak, "vllm_gb": round(share * GPU_GB, 1),
            "met": recipe_peak + share * GPU_GB < GPU_GB},
        "7b LoRA GRPO step peak < 75 GB": None if peak is None else {"measured_gb": peak,
                                                                     "met": peak < GOAL_7B_GRPO_PEAK_GB},
        "1.5b full fine-tune (FSDP, 1 process) fits": None if sft.get("peak_allocated_gb") is None else {
            "measured_gb": sft["peak_allocated_gb"], "met": "error" not in sft},
    }


if __name__ == "__main__":  # the FSDP section's own process (under torchrun)
    parser = argparse.ArgumentParser()
    parser.add_argument("--sft", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--dry-run", action="store_true")
    options = parser.parse_args()
    os.environ.setdefault("ABSTAIN_NO_PROGRESS", "1")
    _sft_in_process(options, options.sft)
