"""SFT and DPO on the bundled model, on CPU: a few real steps lower the loss and move the weights; the
probe -> DPO pairs -> DPO chain; a pipeline continues the SFT stage's LoRA adapter."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from abstain.cli import app
from abstain.train.recipe import load_recipe
from abstain.train.trainers.runner import adapter_dir

pytestmark = pytest.mark.slow


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def test_sft_steps_lower_the_loss_and_change_the_weights(tmp_path, bundled_model_dir):
    out = tmp_path / "sft"
    # the same 4 rows twice over: the second pass must fit them better than the first
    r = CliRunner().invoke(app, ["train", "sft", "--recipe", "tiny-sft", "--out", str(out), "--set", "steps=null",
                                 "--set", "epochs=4", "--set", "data.synth.n=4", "--set", "learning_rate=1e-3"])
    assert r.exit_code == 0, r.output
    losses = [row["loss"] for row in map(json.loads, (out / "metrics.jsonl").read_text().splitlines())]
    assert len(losses) == 4 and losses[-1] < losses[0] * 0.9, losses
    before, after = _weights(bundled_model_dir), _weights(out / "final")
    moved = [k for k in after if k in before and not torch.equal(before[k], after[k])]
    assert len(moved) > len(after) // 2


def test_probe_then_dpo_pairs_then_a_dpo_step(tmp_path, bundled_model_dir):
    from abstain.synth import SynthConfig, generate_missing_premise
    from abstain.schema import write_jsonl

    items = tmp_path / "items.jsonl"
    write_jsonl(items, list(generate_missing_premise(SynthConfig(n=4, seed=9))))
    runner = CliRunner()
    r = runner.invoke(app, ["probe", "--model", "bundled", "--data", str(items), "--k", "2", "--max-tokens", "16",
                            "--protocol", "idk", "--out", str(tmp_path / "probe")])
    assert r.exit_code == 0, r.output
    pairs = tmp_path / "pairs.jsonl"
    r = runner.invoke(app, ["probe-data", "--probe", str(tmp_path / "probe"), "--kind", "dpo", "--out", str(pairs)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert rows and all({"prompt", "chosen", "rejected"} <= set(row) for row in rows)
    recipe = tmp_path / "dpo.yaml"
    recipe.write_text(f"kind: dpo\nmodel: bundled\npairs_file: {pairs}\nsteps: 1\nbatch_size: 2\n"
                      "learning_rate: 1.0e-5\nlora: {r: 4, alpha: 8}\nmax_length: 256\n")
    r = runner.invoke(app, ["train", "dpo", "--recipe", str(recipe), "--out", str(tmp_path / "dpo")])
    assert r.exit_code == 0, r.output
    metrics = [json.loads(line) for line in (tmp_path / "dpo" / "metrics.jsonl").read_text().splitlines()]
    assert metrics[0]["step"] == 1 and "rewards/chosen" in metrics[0]
    assert (tmp_path / "dpo" / "final" / "adapter" / "adapter_config.json").exists()


def test_a_pipeline_trains_one_adapter_through_sft_then_grpo(tmp_path, small_model_dir):
    pipeline = tmp_path / "p.yaml"
    model = f"model={small_model_dir}"  # the small model of the bundled one's kind: the stages' plumbing is the test
    pipeline.write_text(
        "kind: pipeline\nname: tiny\nstages:\n"
        f"  - {{name: sft, recipe: tiny-sft, set: ['lora={{r: 4, alpha: 8}}', 'steps=1', 'save_steps=1', '{model}']}}\n"
        f"  - {{name: grpo, recipe: tiny-grpo, set: ['adapter={{out}}/sft', 'lora=null', 'steps=1', "
        f"'max_completion_length=8', '{model}']}}\n")
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["train", "pipeline", "--recipe", str(pipeline), "--out", str(out)])
    assert r.exit_code == 0, r.output
    sft, grpo = adapter_dir(str(out / "sft")), adapter_dir(str(out / "grpo"))
    from safetensors.torch import load_file

    a, b = load_file(str(sft / "adapter_model.safetensors")), load_file(str(grpo / "adapter_model.safetensors"))
    assert set(a) == set(b)  # the GRPO stage trained the SFT stage's adapter, not a new one
    assert json.loads((out / "pipeline.json").read_text())["stages"]["grpo"]["steps"] == 1
    r = CliRunner().invoke(app, ["train", "pipeline", "--recipe", str(pipeline), "--out", str(out)])
    assert r.exit_code == 0 and r.output.count("done before") == 2  # a rerun skips finished stages
    assert load_recipe(str(out / "grpo" / "recipe.yaml")).adapter == str(out / "sft")

    # an edited stage is never reused: refused, naming what changed; --rerun-changed trains it (and later) again
    pipeline.write_text(pipeline.read_text().replace("max_completion_length=8", "max_completion_length=6"))
    r = CliRunner().invoke(app, ["train", "pipeline", "--recipe", str(pipeline), "--out", str(out)])
    printed = " ".join(r.output.split())
    assert r.exit_code == 2 and "'grpo'" in printed and "max_completion_length: 8 recorded, 6 now" in printed
    assert "--rerun-changed" in printed and (out / "grpo" / "final").exists()  # nothing removed
    r = CliRunner().invoke(app, ["train", "pipeline", "--recipe", str(pipeline), "--out", str(out), "--rerun-changed"])
    assert r.exit_code == 0, r.output
    assert r.output.count("done before") == 1 and "stage grpo: done" in r.output  # the SFT stage is kept
    assert load_recipe(str(out / "grpo" / "recipe.yaml")).max_completion_length == 6


@pytest.mark.slow
def test_the_shipped_cpu_demo_pipeline_runs_end_to_end_at_a_tiny_size(tmp_path, bundled_model_dir):
    from importlib import resources

    import yaml

    shipped = yaml.safe_load((resources.files("abstain.train") / "recipes" / "cpu-demo.yaml").read_text())
    shrink = {  # the shipped stages, every size cut to a step
        "sft": ["data.synth.n=8", "epochs=null", "steps=1", "batch_size=2", "save_steps=1",
                "validation.synth.n=2", "validation.max_new_tokens=8"],
        # transformers rollouts: the vLLM rollout of a GRPO run has its own tests (tests/test_vllm.py)
        "grpo": ["data.synth.n=4", "steps=1", "batch_size=4", "num_generations=2", "max_completion_length=8",
                 "save_steps=1", "rollout=transformers"],
    }
    assert [s["name"] for s in shipped["stages"]] == list(shrink)
    for stage in shipped["stages"]:
        stage["set"] = [*stage.get("set", []), *shrink[stage["name"]]]
    recipe = tmp_path / "cpu-demo-tiny.yaml"
    recipe.write_text(yaml.safe_dump({**shipped, "name": "cpu-demo-tiny"}))
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["train", "pipeline", "--recipe", str(recipe), "--out", str(out)])
    assert r.exit_code == 0, r.output
    record = json.loads((out / "pipeline.json").read_text())["stages"]
    assert record["sft"]["steps"] == 1 and record["grpo"]["steps"] == 1
    grpo = load_recipe(str(out / "grpo" / "recipe.yaml"))
    assert (grpo.reward, grpo.advantage, grpo.dynamic_sampling) == ("idk_binary", "grpo", True)
    assert grpo.reward_config == {"false_refusal_penalty": -0.6} and grpo.adapter == str(out / "sft")
    assert (out / "sft" / "validation.json").exists() and (out / "grpo" / "final" / "adapter").is_dir()
    metrics = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert any("abstain/dropped_groups" in m for m in metrics)


def test_validation_while_training_keeps_the_best_checkpoint_and_final_holds_it(tmp_path, small_model_dir):
    from safetensors.torch import load_file

    out = tmp_path / "sft"
    # validation on a suite (allowed: it is not trained on) after each of 2 steps; every answer scores alike at 4
    # tokens, so the first validation stays the best, and final/ must hold step 1's adapter, not step 2's
    # and tiny-sft's 8 rows (150-267 tokens) at max_length 240 with truncation: drop: the 2 longer rows left out, counted
    r = CliRunner().invoke(app, ["train", "sft", "--recipe", "tiny-sft", "--out", str(out), "--set", "batch_size=2",
                                 "--set", f"model={small_model_dir}",
                                 "--set", "learning_rate=1e-3", "--set", "validation={suite: quick, limit: 2, every: 1, "
                                                                         "max_new_tokens: 4, metric: r1.u_ref, final: best}",
                                 "--set", "max_length=240", "--set", "truncation=drop"])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "config.json").read_text())["lengths"] == {
        "rows": 8, "max_length": 240, "truncation": "drop", "longest": 267, "over_max_length": 2, "dropped": 2}
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [(row["step"], row["eval_items"]) for row in rows if "eval_items" in row] == [(1, 2), (2, 2)]
    assert [row["step"] for row in rows if "loss" in row] == [1, 2]  # the steps' own lines are still written
    record = json.loads((out / "validation.json").read_text())
    assert record["metric"] == "r1.u_ref" and record["best_checkpoint"].endswith("checkpoint-1")
    assert [h["step"] for h in record["history"]] == [1, 2] and "r1.u_ref_ci" in record["last"]  # CIs at the end
    final = load_file(str(adapter_dir(str(out)) / "adapter_model.safetensors"))
    best = load_file(str(out / "checkpoints" / "checkpoint-1" / "adapter_model.safetensors"))
    last = load_file(str(out / "checkpoints" / "checkpoint-2" / "adapter_model.safetensors"))
    assert all(torch.equal(final[k], best[k]) for k in best) and any(not torch.equal(final[k], last[k]) for k in last)


def test_rows_longer_than_max_length_are_refused_before_anything_is_written(tmp_path):
    # tiny-sft's 8 rows are 150-267 tokens (prompt through the chat template + target): at 200, TRL would cut 6 of them,
    # their boxed decisions with them; the tokenizer alone decides, before --out is written or a model loads
    out = tmp_path / "sft"
    r = CliRunner().invoke(app, ["train", "sft", "--recipe", "tiny-sft", "--set", "max_length=200",
                                 "--set", "truncation=error", "--out", str(out)])
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and "recipe field 'max_length' (200): 6 of 8 rows are longer, the longest 267 tokens" in said
    assert "Raise max_length to at least 267, or set truncation: drop" in said and not out.exists()
    # DPO: prompt + the longer answer
    pairs = tmp_path / "pairs.jsonl"
    prompt = [{"role": "user", "content": "How old is Sofia?"}]
    idk = [{"role": "assistant", "content": "\\boxed{I don't know.}"}]
    pairs.write_text(json.dumps({"prompt": prompt, "chosen": idk, "rejected": idk * 20}) + "\n")
    recipe = tmp_path / "dpo.yaml"
    recipe.write_text(f"kind: dpo\nmodel: bundled\npairs_file: {pairs}\nsteps: 1\nbatch_size: 2\nlearning_rate: 1.0e-5\n"
                      "lora: {r: 4, alpha: 8}\nmax_length: 64\ntruncation: drop\n")
    r = CliRunner().invoke(app, ["train", "dpo", "--recipe", str(recipe), "--out", str(tmp_path / "dpo")])
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and "(64): 1 of 1 rows are longer" in said and "would leave no row" in said
    assert not (tmp_path / "dpo").exists()
