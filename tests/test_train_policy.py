"""The policy on every path: the recipe's dtype, attention and TRL's model_init_kwargs reach the model whether TRL loads
it or abstain does (a continued adapter), the reference model follows, a LoRA adapter on a bfloat16 base stays float32,
and final/ is written in the dtype. On this CPU: the bundled model where its shipped adapter is continued, else the
small model of its kind (conftest's ``small_model_dir``)."""

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
        "dtype": "bfloat16", "master_weights": None, "attn_implementation": None, "gradient_checkpointing": True,
        "sharding": None}
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
                                                                                   small_model_dir):
    # GRPO with a KL term (beta > 0): TRL builds a reference model from the policy (the shipped adapter continued on
    # the bundled model; a full fine-tune of the small one)
    sets = ["dtype=bfloat16", "trl.model_init_kwargs={attn_implementation: eager}", "beta=0.01"]
    sets += ["lora=null", f"adapter={SHIPPED_ADAPTER}"] if adapter else ["lora=null", f"model={small_model_dir}"]
    trainer = _trainer("grpo", sets, tmp_path)
    model = trainer.accelerator.unwrap_model(trainer.model)
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    assert base.config._attn_implementation == "eager"
    assert trainer.args.bf16 and not trainer.args.fp16  # bfloat16 autocast on both paths
    if adapter:  # a continued adapter: trainable, float32 on the bfloat16 base; its frozen copy is the reference
        assert base.dtype == torch.bfloat16
        lora = {p.dtype for n, p in model.named_parameters() if "lora_" in n and ".default." in n}
        assert lora == {torch.float32} and "ref" in model.peft_config
    else:  # a full fine-tune: float32 master weights; the reference is a second model, loaded with the same arguments
        ref = trainer.ref_model
        assert base.dtype == torch.float32 and ref.dtype == torch.float32
        assert ref.config._attn_implementation == "eager"


# Mixed precision: a full fine-tune with dtype bfloat16 keeps float32 master weights (bfloat16 autocast compute); pure
# bfloat16 weights (master_weights: bfloat16) lose an Adam step of 1e-6, below a bfloat16 weight's precision.
ARMS = {"float32": ["dtype=float32"], "mixed": ["dtype=bfloat16"],
        "pure": ["dtype=bfloat16", "master_weights=bfloat16"]}


@pytest.fixture(scope="module")
def one_step_at_1e6(tmp_path_factory, small_model_dir) -> dict[str, dict]:
    """Each arm's one full-SFT step at lr 1e-6 on the same batch (the small model of the bundled one's kind): its
    recorded policy, its weights' dtype, the share of weights the step changed, the largest change, and (float32,
    mixed) the signs of the changes."""
    import gc

    from abstain.train.trainers.runner import start
    from abstain.train.trainers.sft import sft_trainer

    out = {}
    for arm, sets in ARMS.items():
        recipe = load_recipe("tiny-sft", ["lora=null", "steps=1", "save_steps=100", "learning_rate=1.0e-6",
                                          "batch_size=2", "max_length=112", "data.synth.n=4",
                                          f"model={small_model_dir}", *sets])
        run, _ = start(recipe, str(tmp_path_factory.mktemp(arm) / "run"), resume=False)
        trainer = sft_trainer(recipe, run)
        before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
        trainer.train()
        changed = total = 0
        largest = 0.0
        signs = []
        for name, weight in trainer.model.named_parameters():
            if name in before:
                update = weight.detach().float() - before.pop(name).float()
                changed += int((update != 0).sum())
                total += update.numel()
                largest = max(largest, float(update.abs().max()))
                signs.append(torch.sign(update).to(torch.int8).flatten())
        out[arm] = {"policy": run.record(recipe)["policy"], "dtype": next(trainer.model.parameters()).dtype,
                    "moved": changed / total, "largest": largest,
                    "signs": torch.cat(signs) if arm != "pure" else None}
        del trainer, before, signs
        gc.collect()
    return out


def test_a_bfloat16_full_fine_tune_keeps_float32_masters_that_record_themselves(one_step_at_1e6):
    assert one_step_at_1e6["mixed"]["dtype"] == one_step_at_1e6["float32"]["dtype"] == torch.float32
    assert one_step_at_1e6["pure"]["dtype"] == torch.bfloat16  # asked for by name
    records = {arm: (r["policy"]["dtype"], r["policy"]["master_weights"]) for arm, r in one_step_at_1e6.items()}
    assert records == {"float32": ("float32", "float32"), "mixed": ("bfloat16", "float32"),
                       "pure": ("bfloat16", "bfloat16")}


def test_an_update_of_1e6_survives_mixed_precision_as_in_float32_and_is_lost_in_pure_bfloat16(one_step_at_1e6):
    arms = one_step_at_1e6
    assert arms["float32"]["moved"] > 0.9 and arms["mixed"]["moved"] > 0.9
    assert arms["pure"]["moved"] < 0.1  # what pure bfloat16 weights keep of the same step
    # Adam's first step moves each weight by ~lr in its gradient's sign: bfloat16 compute gives nearly the same signs
    ours, theirs = arms["mixed"]["signs"], arms["float32"]["signs"]
    both = (ours != 0) & (theirs != 0)
    assert float((ours[both] == theirs[both]).float().mean()) > 0.8
    assert arms["mixed"]["largest"] < 3e-6 and arms["float32"]["largest"] < 3e-6  # a step of ~lr, nothing else


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


def test_vllm_rollouts_on_a_gpu_are_refused_when_the_policy_resolves_before_anything_is_written():
    from abstain.schema import DataError

    with pytest.raises(DataError, match="recipe field 'rollout': vllm runs an in-process vLLM engine per process"):
        resolve_policy(load_recipe("tiny-grpo", ["rollout=vllm", "dtype=bfloat16"]), cuda=True, env={})
    assert resolve_policy(load_recipe("tiny-grpo", ["rollout=vllm"]), cuda=False, env={}).dtype == "float32"
