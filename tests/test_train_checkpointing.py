"""Gradient checkpointing through the recipe field, on this CPU: the same loss and gradients as without it, for SFT and
GRPO, with a LoRA adapter (whose input-gradient hook checkpointing needs) and with a full fine-tune.

The cases: SFT with LoRA and as a full fine-tune, GRPO with LoRA (a GRPO full fine-tune takes the SFT one's path
through the model). Each trains one real step of the tiny recipe with ``gradient_checkpointing: true`` (the trainer enables it as it
starts training). Just before the optimizer steps, the step's gradients are kept, checkpointing is switched off and the
same batch (the trainer's own inputs, for GRPO its scored completions) goes through the trainer's ``compute_loss`` and a
backward pass again: loss and gradients must agree. The GRPO completions are crafted (the policy's samples replaced),
so every group has a learning signal.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from abstain.train.recipe import load_recipe

pytestmark = pytest.mark.slow

IDK = "\\boxed{I don't know.}"
#: what the positions of each group say: an abstention, a right and two wrong answers (TIAR bonus and advantages != 0)
SAYS = ("idk", "right", "wrong", "wrong")


class Twice:
    """Keeps the loss inputs of the step; before the optimizer steps, computes them again without checkpointing."""

    def __init__(self, trainer) -> None:
        from transformers import TrainerCallback

        self.trainer, self.inputs, self.result = trainer, None, {}
        own = trainer.compute_loss

        def compute_loss(model, inputs, *args, **kwargs):  # the trainer's own, its inputs kept
            self.inputs = inputs
            loss = own(model, inputs, *args, **kwargs)
            self.result["loss_checkpointed"] = float(loss.detach())
            return loss

        trainer.compute_loss = compute_loss
        outer = self

        class Again(TrainerCallback):
            def on_pre_optimizer_step(self, args, state, control, **kwargs):  # noqa: ARG002
                outer.again()

        trainer.add_callback(Again())

    def again(self) -> None:
        model = self.trainer.model
        params = {n: p for n, p in model.named_parameters() if p.requires_grad}
        self.result["checkpointing_was_on"] = model.is_gradient_checkpointing
        self.result["grads_checkpointed"] = {n: p.grad.detach().clone() for n, p in params.items()}
        model.zero_grad()
        model.gradient_checkpointing_disable()
        loss = self.trainer.compute_loss(model, self.inputs)
        loss.backward()
        self.result["loss_plain"] = float(loss.detach())
        self.result["grads_plain"] = {n: p.grad.detach().clone() for n, p in params.items()}


def _crafted_grpo(items):
    from abstain.train.trainers.grpo import AbstainGRPOTrainer

    class Crafted(AbstainGRPOTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            tok, out = self.processing_class, []
            for i, prompt in enumerate(tok.batch_decode(prompt_ids)):
                item = next(x for x in items if x.question in prompt)
                say = SAYS[i % num_generations]
                answer = item.answers[0] if item.answers else "7"
                text = {"idk": IDK, "right": f"\\boxed{{{answer}}}", "wrong": "\\boxed{123456789}"}[say]
                out.append(tok.encode(text, add_special_tokens=False) + [self.eos_token_ids[0]])
            return out, None

    return Crafted


def _one_step(kind: str, lora: bool, tmp_path, model: Path) -> dict:
    from abstain.train.data.build import load_items
    from abstain.train.trainers.runner import start

    sets = ["steps=1", "save_steps=100", "gradient_checkpointing=true", "max_grad_norm=1.0e9", "data.synth.n=4",
            f"model={model}"]
    sets += [] if lora else ["lora=null"]
    sets += ["max_length=160", "batch_size=2"] if kind == "sft" else ["max_completion_length=8", "batch_size=4"]
    recipe = load_recipe(f"tiny-{kind}", sets)
    run, _ = start(recipe, str(tmp_path / f"{kind}-{lora}"), resume=False)
    if kind == "sft":
        from abstain.train.trainers.sft import sft_trainer

        trainer = sft_trainer(recipe, run)
    else:
        from abstain.train.trainers.grpo import grpo_trainer

        trainer = grpo_trainer(recipe, run, trainer_class=_crafted_grpo(load_items(recipe.data)))
    assert trainer.args.gradient_checkpointing  # the recipe field reached TRL
    twice = Twice(trainer)
    trainer.train()
    return twice.result


@pytest.mark.parametrize(("kind", "lora"), [("sft", True), ("sft", False), ("grpo", True)],
                         ids=["sft-lora", "sft-full", "grpo-lora"])
def test_gradient_checkpointing_gives_the_loss_and_gradients_of_a_plain_step(kind, lora, tmp_path, small_model_dir):
    result = _one_step(kind, lora, tmp_path, small_model_dir)
    assert result["checkpointing_was_on"]
    assert math.isclose(result["loss_checkpointed"], result["loss_plain"], rel_tol=1e-5, abs_tol=1e-6)
    ours, plain = result["grads_checkpointed"], result["grads_plain"]
    assert ours.keys() == plain.keys() and ours
    if lora:  # only the adapter trains: its gradients reach it through the frozen, checkpointed layers
        assert all("lora_" in name for name in ours)
    moved = [n for n, g in plain.items() if g.abs().max() > 0]
    assert len(moved) >= len(plain) // 2  # a signal (LoRA: B starts at 0, so only B has gradients at step 1)
    for name in ours:
        torch.testing.assert_close(ours[name], plain[name], rtol=1e-4, atol=1e-6, msg=name)
