"""The tiny GRPO recipe with crafted completions, on however many processes launched it (torchrun, or plain python).

    torchrun --nproc_per_node 2 tests/grpo_ranks.py OUT [--set key=value ...] [--by-group] [--case NAME:k=v,k=v ...]

Trains ``tiny-grpo`` (with the overrides) into ``OUT/run`` through abstain's own path (``start`` ->
``grpo_trainer`` -> ``finish``), except that a crafted completion stands in for each sample (the policy does not
generate): the completion at position j of the group of item k is ``PATTERNS[k][j]`` (a correct answer, a wrong one or "I don't know"), so
abstentions sit in groups that also answer, one group is all wrong (dynamic sampling drops it), and with a
per-process batch that is not a multiple of the group size, groups are split over processes. Each process
writes what it computed at every step to ``OUT/rank-<r>.json``: its slice of the advantages (TRL's, the TIAR
bonus, the ones the loss used), the gathered rewards and outcomes, the rows it kept, and the loss it computed
(after abstain's scaling: averaged over processes, it is the loss of one process on the gathered batch).

``--light``: train without writing ``final/`` (the main process saves the LoRA weights to
``OUT/adapter.safetensors``). ``--by-group``: the pattern follows the group's place in the step's gathered batch instead of the item, the
last group of every step all wrong (dynamic sampling drops it): with 3 groups of 4 over 2 processes the first
keeps 6 rows and the second 2; with 2 groups the second keeps none. ``--case NAME:k=v,...``: train one run per
case (its overrides added) in ``OUT/NAME``, in one launch (the processes start once).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

IDK = "\\boxed{I don't know.}"
#: by item (in the data's order): what each position of its group says
PATTERNS = [("idk", "right", "wrong", "wrong"), ("idk", "idk", "right", "right"), ("wrong",) * 4,
            ("idk", "wrong", "right", "idk")]
#: --by-group: the last group of a step all wrong, the others mixed
MIXED, UNIFORM = ("idk", "right", "wrong", "right"), ("wrong",) * 4


def main(out: Path, overrides: list[str], by_group: bool = False, light: bool = False) -> None:
    from abstain.train.trainers.distributed import World
    from abstain.train.trainers.grpo import AbstainGRPOTrainer, grpo_trainer
    from abstain.train.recipe import load_recipe
    from abstain.train.trainers.runner import finish, start

    recipe = load_recipe("tiny-grpo", overrides)
    from abstain.train.data.build import load_items

    items = load_items(recipe.data)

    class Crafted(AbstainGRPOTrainer):
        """The policy's samples replaced by PATTERNS (the global position in the batch gives the group position)."""

        steps: list[dict] = []

        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            tok = self.processing_class  # PATTERNS stand for the policy's samples: it need not sample at all
            offset = self.accelerator.process_index * len(prompt_ids)
            out = []
            groups = self.accelerator.num_processes * len(prompt_ids) // num_generations
            for i, prompt in enumerate(tok.batch_decode(prompt_ids)):
                k = next(k for k, item in enumerate(items) if item.question in prompt)
                if by_group:
                    group = (offset + i) // num_generations
                    say = (UNIFORM if group == groups - 1 else MIXED)[(offset + i) % num_generations]
                else:
                    say = PATTERNS[k % len(PATTERNS)][(offset + i) % num_generations]
                answer = items[k].answers[0] if items[k].answers else "7"
                text = {"idk": IDK, "right": f"\\boxed{{{answer}}}", "wrong": "\\boxed{123456789}"}[say]
                out.append(tok.encode(text, add_special_tokens=False) + [self.eos_token_ids[0]])
            return out, None

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            s = self.last_step
            kept = s["kept_rows"]
            Crafted.steps.append({
                "questions": [x["prompt"][-1]["content"] for x in inputs],
                "responses": [r.response for r in s["rows"]],
                "outcomes": s["outcomes"], "rewards_per_func": s["rewards_per_func"].tolist(),
                "trl_rewards_per_func": s["trl_rewards_per_func"].tolist(),
                "trl_advantages": s["trl_advantages"].tolist(), "tiar_bonus": s["tiar_bonus"].tolist(),
                "advantages": s["advantages"].tolist(), "group_size": s["group_size"],
                "process_slice": [s["process_slice"].start, s["process_slice"].stop],
                "kept_rows": None if kept is None else kept.tolist(),
                "loss_rows": len(output["advantages"]),
                "loss_tokens": int(output["completion_mask"].sum()),
                "num_items_in_batch": float(output["num_items_in_batch"]),
                "loss_scale": float(output.get("abstain_loss_scale", 1.0)),
                "generation_batches": s["generation_batches"], "sampled_groups": s["sampled_groups"],
                "losses": [],
            })
            return output

        def _compute_loss(self, model, inputs):
            loss = super()._compute_loss(model, inputs)
            if self.model.training:
                Crafted.steps[-1]["losses"].append(float(loss.detach()))
            return loss

    run, checkpoint = start(recipe, str(out / "run"), resume=False)
    trainer = grpo_trainer(recipe, run, trainer_class=Crafted)
    world = World.from_env()
    if light:  # the trained LoRA weights only, from the main process: no merged final/ (a 0.5 GB write per case)
        trainer.train()
        if world.is_main:
            from peft import get_peft_model_state_dict
            from safetensors.torch import save_file

            state = get_peft_model_state_dict(trainer.accelerator.unwrap_model(trainer.model))
            save_file({k: v.detach().cpu().contiguous() for k, v in state.items()}, str(out / "adapter.safetensors"))
        steps = trainer.state.global_step
    else:
        steps = finish(trainer, run, recipe, checkpoint).steps
    (out / f"rank-{world.rank}.json").write_text(json.dumps({
        "world_size": world.size, "rank": world.rank, "steps": Crafted.steps, "trained": steps}))


if __name__ == "__main__":
    args = sys.argv[1:]
    target = Path(args[0])
    sets = [a for i, a in enumerate(args[1:]) if args[i] == "--set"]
    cases = [a for i, a in enumerate(args[1:]) if args[i] == "--case"]
    flags = {"by_group": "--by-group" in args, "light": "--light" in args}
    if not cases:
        main(target, sets, **flags)
    for case in cases:
        name, _, extra = case.partition(":")
        (target / name).mkdir(parents=True, exist_ok=True)
        main(target / name, sets + [kv for kv in extra.split(",") if kv], **flags)
