"""The bundled model's dense cache: atomic build, crash leftovers, reuse, and that it trains."""

from __future__ import annotations

import json
import os
import time

import pytest

from abstain.backends import GenerationConfig, HFBackend
from abstain.backends import bundled_model_dir as build_bundled

pytestmark = pytest.mark.slow

DONE = "abstain-complete.json"


def test_build_is_atomic_recovers_from_crashes_and_is_reused(monkeypatch, tmp_path, bundled_model_dir, bundled_backend):
    monkeypatch.setenv("ABSTAIN_CACHE", str(tmp_path))
    models = tmp_path / "models"
    models.mkdir()
    # leftovers of earlier crashes: an old temporary build, a fresh one (another process, still
    # running: must be kept) and an unfinished final folder (no completion marker)
    final_name = bundled_model_dir.name  # same GGUF, same key as the session's default cache
    old_tmp, live_tmp = models / f".{final_name}.crashed", models / f".{final_name}.running"
    for folder in (old_tmp, live_tmp, models / final_name):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"half a checkpoint")
    two_hours_ago = time.time() - 7200
    os.utime(old_tmp, (two_hours_ago, two_hours_ago))

    built = build_bundled()
    assert built == models / final_name
    assert not old_tmp.exists() and live_tmp.exists()
    assert sorted(p.name for p in models.iterdir() if p.name.startswith(f".{final_name}")) == [live_tmp.name]
    record = json.loads((built / DONE).read_text())
    assert record["dtype"] == "torch.float32" and len(record["sha256"]) == 64
    config = json.loads((built / "config.json").read_text())
    assert "quantization_config" not in config
    assert (built / "model.safetensors").stat().st_size > 400_000_000  # dense float32, not a stub

    marker_mtime = (built / DONE).stat().st_mtime_ns
    start = time.perf_counter()
    assert build_bundled() == built
    assert time.perf_counter() - start < 5 and (built / DONE).stat().st_mtime_ns == marker_mtime

    # the fresh build generates exactly what the session's cached copy does
    prompts = [[{"role": "user", "content": "What is 2 + 3?"}]]
    fresh = HFBackend(built, name="fresh")
    try:
        config8 = GenerationConfig(max_new_tokens=6)
        assert fresh.generate(prompts, config8) == bundled_backend.generate(prompts, config8)
    finally:
        fresh.close()


def test_cached_checkpoint_fine_tunes(bundled_model_dir, tmp_path):
    """A GGUF-loaded model carries a quantizer and Trainer refuses it; the cached dense copy trains."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

    model = AutoModelForCausalLM.from_pretrained(bundled_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(bundled_model_dir)
    assert getattr(model, "hf_quantizer", None) is None and not getattr(model, "is_quantized", False)
    ids = tokenizer("The answer is \\boxed{5}.", add_special_tokens=False)["input_ids"]
    data = Dataset.from_list([{"input_ids": ids, "attention_mask": [1] * len(ids), "labels": ids}])
    watched = model.model.layers[0].mlp.down_proj.weight
    before = watched.detach().clone()
    args = TrainingArguments(
        output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=1, learning_rate=1e-3,
        report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no", disable_tqdm=True,
    )
    Trainer(model=model, args=args, train_dataset=data).train()
    assert not torch.equal(before, watched.detach())
