"""The policy on every path: the recipe's dtype, attention and TRL's model_init_kwargs reach the model whether TRL loads
it or abstain does (a continued adapter), the reference model follows, a LoRA adapter on a bfloat16 base stays float32,
and final/ is written in the dtype. On this CPU, the bundled model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from abstain.train.recipe import load_recipe
from abstain.train.trainers.policy import resolve_policy

pytestmark = pytest.mark.slow

SHIPPED_ADAPTER = Path(__file__).resolve().parents[1] / "src" / "abstain" / "data" / "models" / "bundled-abstain"


def test_the_issues_command_trains_a_bfloat16_adapter_run_with_checkpointing(tmp_path, bundled_model_dir):
    # abstain train sft --recipe tiny-sft --set adapter=<the shipped adapter> --set dtype=bfloat16
    #   --set gradient_checkpointing=true (one short step: the path, not the model)
    from typer.testing import CliRunner

    from abstain.cli import app

    out = tmp_path / "run"
    done = CliRunner().invoke(app, [
        "train", "sft", "--recipe", "tiny-sft", "--set", "lora=null", "--set", f"adapter={SHIPPED_ADAPTER}",
        "--set", "dtype=bfloat16", "--set", "gradient_checkpointing=true", "--set", "steps=1", "--set", "batch_size=2",
        "--set", "max_length=160", "--set", "data.synth.n=4", "--out", str(out)])
    assert done.exit_code == 0, done.output[-3000:]
    merged = load_file(str(out / "final" / "model.safetensors"))
    adapter = load_file(str(out / "final" / "adapter" / "adapter_model.safetensors"))
    assert {v.dtype for v in merged.values()} == {torch.bfloat16}  # final/ in the recipe's dtype
    assert {v.dtype for v in adapter.values()} == {torch.float32}  # the adapter as PEFT and TRL keep it
    assert json.loads((out / "final" / "config.json").read_text())["dtype"] == "bfloat16"
    assert json.loads((out / "config.json").read_text())["policy"] | {"sharding": None} == {
        "dtype": "bfloat16", "attn_implementation": None, "gradient_checkpointing": True, "sharding": None}
    base = load_file(str(bundled_model_dir / "model.safetensors"))
    moved = [k for k in merged if not torch.equal(merged[k], base[k].to(torch.bfloat16))]
    assert len(moved) > len(merged) // 2  # the continued adapter, merged in


def _trainer(kind: str, sets: list[str], tmp_path: Path):
    from abstain.train.trainers.runner import start

    recipe = load_recipe(f"tiny-{kind}", sets)
    run, _ = start(recipe, str(tmp_path / kind), resume=False)
    if kind == "grpo":
        from abstain.train.trainers.grpo import grpo_trainer

        return grpo_trainer(recipe, run)
    from abstain.train.trainers.sft import sft_trainer

    return sft_trainer(recipe, run)


@pytest.mark.parametrize("adapter", [False, True], ids=["trl-loads-the-path", "abstain-loads-the-base"])
def test_dtype_attention_and_model_init_kwargs_reach_the_policy_and_its_reference(adapter, tmp_path,
                                                                                   bundled_model_dir):
    # GRPO with a KL term (beta > 0): TRL builds a reference model from the policy
    sets = ["dtype=bfloat16", "trl.model_init_kwargs={attn_implementation: eager}", "beta=0.01"]
    sets += ["lora=null", f"adapter={SHIPPED_ADAPTER}"] if adapter else ["lora=null"]
    trainer = _trainer("grpo", sets, tmp_path)
    model = trainer.accelerator.unwrap_model(trainer.model)
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    assert base.dtype == torch.bfloat16 and base.config._attn_implementation == "eager"
    assert trainer.args.bf16 and not trainer.args.fp16
    if adapter:  # a continued adapter: trainable, float32 on the bfloat16 base; its frozen copy is the reference
        lora = {p.dtype for n, p in model.named_parameters() if "lora_" in n and ".default." in n}
        assert lora == {torch.float32} and "ref" in model.peft_config
    else:  # a full fine-tune: the reference is a second model, loaded with the same arguments
        ref = trainer.ref_model
        assert ref.dtype == torch.bfloat16 and ref.config._attn_implementation == "eager"


def test_the_shipped_7b_recipe_resolves_to_bfloat16_lora_with_checkpointing_on_a_gpu():
    recipe = load_recipe(Path(__file__).resolve().parents[1] / "examples" / "sharded" / "grpo-7b.yaml")
    policy = resolve_policy(recipe, cuda=True)
    assert (policy.dtype, policy.gradient_checkpointing, policy.is_lora) == ("bfloat16", True, True)
    assert policy.trl_fields()["model_init_kwargs"] == {"dtype": "bfloat16", "attn_implementation": "sdpa"}


def test_a_recipe_on_a_cpu_resolves_auto_to_float32_without_checkpointing():
    policy = resolve_policy(load_recipe("tiny-grpo"), cuda=False)
    assert (policy.dtype, policy.gradient_checkpointing) == ("float32", False)
    assert policy.trl_fields()["model_init_kwargs"] == {"dtype": "float32"}  # what TRL loads the path with
    continued = resolve_policy(load_recipe("tiny-grpo", ["lora=null", f"adapter={SHIPPED_ADAPTER}"]), cuda=False)
    assert continued.loads_itself and continued.trl_fields()["model_init_kwargs"] is None  # abstain loads it
