"""GRPO with TIAR on the bundled model, on CPU: two real steps, the advantages the loss used, the CLI, resume."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from abstain.cli import app
from abstain.schema import ScoredRow, read_jsonl
from abstain.synth import SynthConfig, generate_missing_premise
from abstain.train.advantages import tiar_bonus
from abstain.train.data import prompt_dataset
from abstain.train.recipe import load_recipe
from abstain.train.rewards import make_reward

pytestmark = pytest.mark.slow


def chars(completions, **columns):
    """A second, plain reward (text length): completions differ in it, so every group has some signal."""
    return [len(c[0]["content"]) / 100 for c in completions]


class RecordingTrainer:
    """Builds AbstainGRPOTrainer subclassed to keep the advantages each loss call received."""

    @staticmethod
    def make(**kwargs):
        from abstain.train.grpo import AbstainGRPOTrainer

        class Recording(AbstainGRPOTrainer):
            seen: list = []
            steps: list = []

            def _generate_and_score_completions(self, inputs):
                output = super()._generate_and_score_completions(inputs)
                self.steps.append(dict(self.last_step))
                return output

            def _compute_loss(self, model, inputs):
                self.seen.append({k: inputs[k].detach().clone() for k in ("prompt_ids", "completion_ids", "advantages")})
                return super()._compute_loss(model, inputs)

        return Recording(**kwargs)


def test_two_tiar_steps_change_the_model_and_use_trl_advantages_plus_the_bonus(bundled_model_dir, tmp_path):
    from abstain.train.grpo import AbstainGRPOConfig

    items = list(generate_missing_premise(SynthConfig(n=4, seed=7, unanswerable_ratio=0.5)))
    ternary = make_reward("ternary", protocol="idk")
    args = AbstainGRPOConfig(
        output_dir=str(tmp_path), advantage="tiar", tiar_lambda=1.0, num_generations=4,
        per_device_train_batch_size=8, max_steps=2, max_completion_length=16, learning_rate=1e-4,
        use_cpu=True, bf16=False, gradient_checkpointing=False, report_to=[], save_strategy="no",
        logging_steps=1, seed=0, disable_tqdm=True,
    )
    trainer = RecordingTrainer.make(model=str(bundled_model_dir), reward_funcs=[ternary, chars], args=args,
                                    train_dataset=prompt_dataset(items, "idk"))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    changed = [n for n, p in trainer.model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert len(changed) > len(before) // 2, "the optimizer did not move the weights"

    assert len(trainer.steps) == 2 and len(trainer.seen) == 2
    for step, used in zip(trainer.steps, trainer.seen, strict=True):
        g, outcomes = step["group_size"], step["outcomes"]
        assert g == 4 and len(outcomes) == 8 and set(outcomes) <= {"correct", "wrong", "abstain", "unscored"}
        # ternary rewards are the outcomes' values: the reward and the outcome come from one scoring
        ternary_column = step["rewards_per_func"][:, 0].tolist()
        assert ternary_column == [{"correct": 1.0, "wrong": -1.0, "abstain": 0.0}[o] for o in outcomes]
        bonus = [b for k in range(0, 8, g) for b in tiar_bonus(outcomes[k:k + g], lam=1.0)]
        expected = step["trl_advantages"] + torch.tensor(bonus)
        assert torch.allclose(step["advantages"], expected, atol=1e-6)
        # what the loss received: the same rows (shuffled by TRL), each with TRL's advantage + the bonus
        by_row = {(tuple(p.tolist()), tuple(c.tolist())): a.item()
                  for p, c, a in zip(step["prompt_ids"], step["completion_ids"], expected, strict=True)}
        for p, c, a in zip(used["prompt_ids"], used["completion_ids"], used["advantages"].view(-1), strict=True):
            assert a.item() == pytest.approx(by_row[(tuple(p.tolist()), tuple(c.tolist()))], abs=1e-6)
    logged = [row for row in trainer.state.log_history if "abstain/abstain" in row]
    assert len(logged) == 2 and all("abstain/p_mean" in row and "abstain/advantage_mean" in row for row in logged)


def test_the_tiny_recipe_runs_end_to_end_resumes_and_evaluates(tmp_path, bundled_model_dir):
    out = tmp_path / "run"
    runner = CliRunner()
    r = runner.invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "final" / "model.safetensors").exists() and (out / "recipe.yaml").exists()
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2] and all("abstain/abstain" in row for row in rows)
    assert json.loads((out / "final" / "abstain_train.json").read_text())["steps"] == 2
    assert load_recipe(str(out / "recipe.yaml")).model_dump() == load_recipe("tiny-grpo").model_dump()

    # a rerun into the same folder is refused without --resume; with another recipe always
    r = runner.invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--out", str(out)])
    assert r.exit_code == 2 and "--resume" in r.output
    r = runner.invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", "seed=1", "--out", str(out), "--resume"])
    assert r.exit_code == 2 and "another configuration" in r.output

    # an interrupted run (only checkpoint-1 left) resumes from its checkpoint and finishes the last step
    import shutil

    shutil.rmtree(out / "checkpoints" / "checkpoint-2")
    shutil.rmtree(out / "final")
    r = runner.invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--out", str(out), "--resume"])
    assert r.exit_code == 0, r.output
    assert [row["step"] for row in json.loads("[" + ",".join(
        (out / "metrics.jsonl").read_text().splitlines()) + "]")] == [1, 2]
    assert (out / "final" / "model.safetensors").exists()

    # the trained model is evaluated like any other
    r = runner.invoke(app, ["eval", "--model", f"hf:{out / 'final'}", "--suite", "quick", "--limit", "2",
                            "--protocol", "idk", "--max-tokens", "8", "--resamples", "0", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    assert len(read_jsonl(tmp_path / "ev" / "scored.jsonl", ScoredRow)) == 2


def test_bad_recipes_name_the_field_and_what_is_allowed(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: grpo\nmodel: bundled\ndata: {synth: {n: 4, seed: 3}}\nsteps: 1\nlearning_rate: 1e-5\n"
                   "batch_size: 6\nnum_generations: 4\n")
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", str(bad)])
    assert r.exit_code == 2 and "batch_size (6) must be a multiple of num_generations (4)" in " ".join(r.output.split())
    bad.write_text("kind: grpo\ndata: {suite: heldout}\nsteps: 1\nlearning_rate: 1e-5\nbatch_size: 8\n")
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", str(bad)])
    assert r.exit_code == 2 and "held-out benchmark is for evaluation only" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", "reward=ternay"])
    assert r.exit_code == 2 and "unknown reward preset(s) ['ternay']" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", "data.synth.seed=90417"])
    assert r.exit_code == 2 and "reserved for the held-out benchmark" in " ".join(r.output.split())
