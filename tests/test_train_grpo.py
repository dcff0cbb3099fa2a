"""GRPO on CPU: real steps with forced abstentions (tiar, coupled), the advantages the loss used (the small model of
the bundled one's kind: the completions are scripted), the logs, the CLI, resume and evaluation (the bundled model),
experiment tracking."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
import torch
from typer.testing import CliRunner

from abstain.cli import app
from abstain.schema import Item, ScoredRow, read_jsonl
from abstain.train.data.rows import prompt_dataset
from abstain.train.recipe import load_recipe
from abstain.train.rewards.presets import make_reward
from abstain.train.trainers.runner import TrainRun

pytestmark = pytest.mark.slow


IDK = "\\boxed{I don't know.}"
#: question -> the completions of its group (in order) and their outcome under the 'ternary' preset
SCRIPT = {
    "What is 2 + 3?": [(IDK, "abstain"), ("\\boxed{5}", "correct"), ("\\boxed{7}", "wrong"), ("\\boxed{8}", "wrong")],
    "What is 4 + 4?": [(IDK, "abstain"), (IDK, "abstain"), ("So \\boxed{8}", "correct"), ("\\boxed{8}", "correct")],
}
#: a group with no learning signal: four wrong answers, rewards all -1 (dynamic sampling drops it)
SCRIPT["What is 1 + 1?"] = [("\\boxed{3}", "wrong")] * 4
#: p-hat = n_c / (n_c + n_w) of each group, by hand from SCRIPT: 1/3 and 2/2
P_HAT = {"What is 2 + 3?": 1 / 3, "What is 4 + 4?": 1.0}
ITEMS = [Item(id="add5", question="What is 2 + 3?", answers=["5"], label="answerable"),
         Item(id="add8", question="What is 4 + 4?", answers=["8"], label="answerable")]


def chars(completions, **columns):
    """A second, plain reward (text length): it sees the same columns any TRL reward function sees."""
    return [len(c[0]["content"]) / 100 for c in completions]


def scripted_trainer(**kwargs):
    """AbstainGRPOTrainer whose policy samples as usual, after which each group's completions are replaced by
    SCRIPT's (the abstentions sit in groups where the others answer); it keeps what each loss call received."""
    from abstain.train.trainers.grpo import AbstainGRPOTrainer

    class Scripted(AbstainGRPOTrainer):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.scripted, self.steps, self.seen = [], [], []

        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations, has_tool_images)
            tok, done, rows, out = self.processing_class, Counter(), [], []
            for prompt in tok.batch_decode(prompt_ids):
                question = next(q for q in SCRIPT if q in prompt)
                text, expected = SCRIPT[question][done[question] % num_generations]
                done[question] += 1
                rows.append((question, text, expected))
                out.append(tok.encode(text, add_special_tokens=False) + [self.eos_token_ids[0]])
            self.scripted.append(rows)
            return out, None

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            self.steps.append(dict(self.last_step))
            return output

        def _compute_loss(self, model, inputs):
            self.seen.append({k: inputs[k].detach().clone() for k in ("prompt_ids", "completion_ids", "advantages")})
            return super()._compute_loss(model, inputs)

    return Scripted(**kwargs)


def grpo_args(tmp_path, **kwargs):
    from abstain.train.trainers.grpo import AbstainGRPOConfig

    return AbstainGRPOConfig(
        output_dir=str(tmp_path), num_generations=4, per_device_train_batch_size=8, max_completion_length=4,
        learning_rate=1e-4, use_cpu=True, bf16=False, gradient_checkpointing=False, report_to=[],
        save_strategy="no", logging_steps=1, seed=0, disable_tqdm=True, **kwargs)


def trl_advantages(rewards, g):
    """TRL 1.16's group normalization, by hand: (r - mean) / (std + 1e-4), std unbiased (trl's nanstd)."""
    out = []
    for k in range(0, len(rewards), g):
        group = rewards[k:k + g]
        mean = sum(group) / g
        std = math.sqrt(sum((r - mean) ** 2 for r in group) / (g - 1))
        out += [(r - mean) / (std + 1e-4) for r in group]
    return torch.tensor(out)


def assert_the_loss_used(step, used, expected):
    """Each row the loss received (TRL shuffles them) carries the expected advantage of that row."""
    by_row = {(tuple(p.tolist()), tuple(c.tolist())): a
              for p, c, a in zip(step["prompt_ids"], step["completion_ids"], expected.tolist(), strict=True)}
    for p, c, a in zip(used["prompt_ids"], used["completion_ids"], used["advantages"].view(-1), strict=True):
        assert a.item() == pytest.approx(by_row[(tuple(p.tolist()), tuple(c.tolist()))], abs=1e-5)


def changed_parameters(trainer, before):
    return [n for n, p in trainer.model.named_parameters() if not torch.equal(p.detach(), before[n])]


def test_tiar_adds_the_bonus_of_forced_abstentions_to_trls_advantages(small_model_dir, tmp_path):
    lam = 0.5
    run = TrainRun(tmp_path)
    trainer = scripted_trainer(
        model=str(small_model_dir), reward_funcs=[make_reward("ternary", protocol="idk"), chars],
        args=grpo_args(tmp_path, advantage="tiar", tiar_lambda=lam, max_steps=2),
        train_dataset=prompt_dataset(ITEMS, "idk"), callbacks=run.callbacks())
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert len(changed_parameters(trainer, before)) > len(before) // 2, "the optimizer did not move the weights"

    assert len(trainer.steps) == len(trainer.seen) == len(trainer.scripted) == 2
    for step, used, scripted in zip(trainer.steps, trainer.seen, trainer.scripted, strict=True):
        assert step["group_size"] == 4
        # the outcomes the trainer kept are the scorer's, and the rewards TRL got come from the same rows
        assert step["outcomes"] == [expected for _, _, expected in scripted]
        assert [r.response for r in step["rows"]] == [text for _, text, _ in scripted]
        ternary = [{"correct": 1.0, "wrong": -1.0, "abstain": 0.0}[o] for o in step["outcomes"]]
        assert step["rewards_per_func"][:, 0].tolist() == ternary
        assert torch.equal(step["trl_rewards_per_func"], step["rewards_per_func"])  # tiar leaves rewards alone
        # the bonus, by hand: lambda (1 - 2 p-hat) for each abstention of its group, else 0
        bonus = torch.tensor([lam * (1 - 2 * P_HAT[q]) if e == "abstain" else 0.0 for q, _, e in scripted])
        assert torch.allclose(step["tiar_bonus"], bonus, atol=1e-6)
        assert {round(b, 6) for b, (_, _, e) in zip(bonus.tolist(), scripted) if e == "abstain"} == {
            round(lam / 3, 6), -lam}
        # TRL's own advantages (its formula over the weighted sum of both functions) ...
        combined = [t + len(text) / 100 for t, (_, text, _) in zip(ternary, scripted, strict=True)]
        assert torch.allclose(step["trl_advantages"], trl_advantages(combined, 4), atol=1e-5)
        # ... plus the bonus is what the step returned and what the loss used
        expected = step["trl_advantages"] + bonus
        assert torch.allclose(step["advantages"], expected, atol=1e-6)
        assert_the_loss_used(step, used, expected)

    # the abstain/ metrics reach the logs and every callback's on_log (the run folder's metrics.jsonl)
    logged = [row for row in trainer.state.log_history if "abstain/abstain" in row]
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    rows = [row for row in rows if "abstain/abstain" in row]
    assert [row["step"] for row in logged] == [row["step"] for row in rows] == [1, 2]
    mean_bonus = (lam / 3 - lam - lam) / 3
    for row, step in zip(rows, trainer.steps, strict=True):
        assert row["abstain/abstain"] == pytest.approx(3 / 8) and row["abstain/correct"] == pytest.approx(3 / 8)
        assert row["abstain/wrong"] == pytest.approx(2 / 8) and row["abstain/unscored"] == 0
        assert row["abstain/p_mean"] == pytest.approx((1 / 3 + 1) / 2)
        assert row["abstain/tiar_bonus_mean"] == pytest.approx(mean_bonus, abs=1e-6)
        assert row["abstain/advantage_mean"] == pytest.approx(step["advantages"].mean().item(), abs=1e-6)
        assert row["abstain/advantage_std"] == pytest.approx(step["advantages"].std().item(), abs=1e-6)
        assert "rewards/ternary/mean" in row and "loss" in row  # TRL's own metrics, in the same row


def test_coupled_replaces_forced_abstentions_rewards_before_trl_normalizes(small_model_dir, tmp_path):
    trainer = scripted_trainer(
        model=str(small_model_dir), reward_funcs=[make_reward("ternary", protocol="idk")],
        args=grpo_args(tmp_path, advantage="coupled", tiar_lambda=1.0, coupled_decimals=3, max_steps=1),
        train_dataset=prompt_dataset(ITEMS, "idk"))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert len(changed_parameters(trainer, before)) > len(before) // 2, "the optimizer did not move the weights"

    (step,), (used,), (scripted,) = trainer.steps, trainer.seen, trainer.scripted
    assert step["outcomes"] == [expected for _, _, expected in scripted]
    ternary = [{"correct": 1.0, "wrong": -1.0, "abstain": 0.0}[o] for o in step["outcomes"]]
    assert step["rewards_per_func"][:, 0].tolist() == ternary  # what the reward function returned
    # by hand: each abstention's reward becomes round(lambda (1 - 2 p-hat), 3) of its group, before normalizing
    replaced = [round(1 - 2 * P_HAT[q], 3) if e == "abstain" else r for r, (q, _, e) in zip(ternary, scripted)]
    assert sorted({r for r, (_, _, e) in zip(replaced, scripted) if e == "abstain"}) == [-1.0, 0.333]
    assert step["trl_rewards_per_func"][:, 0].tolist() == pytest.approx(replaced, abs=1e-6)
    # TRL normalized the replaced rewards, and nothing is added after
    expected = trl_advantages(replaced, 4)
    assert torch.allclose(step["trl_advantages"], expected, atol=1e-5)
    assert torch.equal(step["advantages"], step["trl_advantages"]) and not step["tiar_bonus"].any()
    assert not torch.allclose(expected, trl_advantages(ternary, 4), atol=1e-3)  # the replacement mattered
    assert_the_loss_used(step, used, expected)
    (row,) = [row for row in trainer.state.log_history if "abstain/abstain" in row]
    assert row["abstain/abstain"] == pytest.approx(3 / 8) and row["abstain/tiar_bonus_mean"] == 0.0


def test_dynamic_sampling_drops_groups_whose_rewards_are_all_equal(small_model_dir, tmp_path):
    from abstain.train.trainers.grpo import AbstainGRPOConfig

    uniform = Item(id="add2", question="What is 1 + 1?", answers=["2"], label="answerable")
    args = AbstainGRPOConfig(
        output_dir=str(tmp_path), num_generations=4, per_device_train_batch_size=12, max_completion_length=4,
        learning_rate=1e-4, use_cpu=True, bf16=False, gradient_checkpointing=False, report_to=[],
        save_strategy="no", logging_steps=1, seed=0, disable_tqdm=True, advantage="tiar", max_steps=1,
        dynamic_sampling=True)
    trainer = scripted_trainer(model=str(small_model_dir), reward_funcs=[make_reward("ternary", protocol="idk")],
                               args=args, train_dataset=prompt_dataset([*ITEMS, uniform], "idk"))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert changed_parameters(trainer, before), "the kept groups did not move the weights"
    (step,), (used,), (scripted,) = trainer.steps, trainer.seen, trainer.scripted
    questions = [q for q, _, _ in scripted]
    assert len(questions) == 12 and questions.count("What is 1 + 1?") == 4
    kept = step["kept_rows"].tolist()
    assert [questions[i] for i in kept] == [q for q in questions if q != "What is 1 + 1?"]  # 8 rows, in order
    # the loss saw exactly the kept rows, each with its advantage (TRL's + the TIAR bonus)
    assert len(used["advantages"]) == 8
    expected = step["trl_advantages"] + step["tiar_bonus"]
    by_row = {(tuple(p.tolist()), tuple(c.tolist())): a for p, c, a in
              zip(step["prompt_ids"], step["completion_ids"], expected.tolist(), strict=True)}
    seen = [by_row[(tuple(p.tolist()), tuple(c.tolist()))] for p, c in zip(used["prompt_ids"], used["completion_ids"])]
    assert sorted(seen) == pytest.approx(sorted(expected[kept].tolist()))
    dropped = [step["trl_advantages"][i].item() for i in range(12) if i not in kept]
    assert dropped == pytest.approx([0.0] * 4, abs=1e-6)  # what was dropped carried no signal
    (row,) = [row for row in trainer.state.log_history if "abstain/dropped_groups" in row]
    assert row["abstain/dropped_groups"] == pytest.approx(1 / 3)


def test_the_tiny_recipe_runs_end_to_end_resumes_and_evaluates(tmp_path, bundled_model_dir):
    out = tmp_path / "run"
    runner = CliRunner()
    # reporting to TensorBoard (the train extra installs it; report_to: [tensorboard] is refused where it is missing)
    track = ["report_to=[tensorboard]"]
    r = runner.invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", *(f"--set={s}" for s in track), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "final" / "model.safetensors").exists() and (out / "recipe.yaml").exists()
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2] and all("abstain/abstain" in row for row in rows)
    assert json.loads((out / "final" / "abstain_train.json").read_text())["steps"] == 2
    assert load_recipe(str(out / "recipe.yaml")).model_dump() == load_recipe("tiny-grpo", track).model_dump()
    # the steps' logs, abstain's keys among them, in the run folder's event files
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    scalars = events.Tags()["scalars"]
    assert "train/abstain/abstain" in scalars and "train/loss" in scalars, scalars
    assert [e.step for e in events.Scalars("train/abstain/abstain")] == [1, 2]
    # the reward's always-abstain margin on this mix (ternary, half unanswerable: always-abstain is optimal)
    profile = json.loads((out / "reward_profile.json").read_text())
    assert profile["unanswerable_share"] == 0.5 and profile["p_star"] == 0.5
    assert profile["break_even_p"] == pytest.approx(1.0) and "always-abstain is optimal" in r.output

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


def test_an_rl_ua_stage_reads_beyond_me_from_the_probe(tmp_path, small_model_dir):
    """The GRPO stage of docs/experiments/attribution.md at tiny size: real UMWP pairs under `attribution`,
    `rl_ua`, every problem kept with its probe's p-hat (``p_range: null``); a problem never solved makes
    MODEL_UNCERTAIN right, so the reward profile has no always-abstain margin and gives no collapse warning."""
    from abstain.data.real_text import umwp_pairs
    from abstain.records.probes import PROBE, ProbeRow
    from abstain.schema import write_jsonl

    pairs, _ = umwp_pairs(2, seed=0)
    write_jsonl(tmp_path / "items.jsonl", pairs)
    (tmp_path / "probe").mkdir()
    write_jsonl(tmp_path / "probe" / PROBE, [
        ProbeRow(**item.model_dump(), model="bundled", protocol="answer_only", k=4, n_judged=4, n_correct=0,
                 p_hat=0.0, ook=True, samples=[]) for item in pairs if item.label == "answerable"])
    out = tmp_path / "run"
    data = f"{{file: {tmp_path / 'items.jsonl'}, probe: {tmp_path / 'probe'}, p_range: null}}"
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", f"data={data}", "--set", "reward=rl_ua",
                                 "--set", "advantage=grpo", "--set", "protocol=attribution", "--set", "steps=1",
                                 "--set", f"model={small_model_dir}",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    profile = json.loads((out / "reward_profile.json").read_text())
    assert (profile["answerable"], profile["beyond_policy"], profile["beyond_refusal"]) == (2, 2, "<MODEL_UNCERTAIN>")
    assert profile["margin_at_probed_p"] is None and "always-abstain is optimal" not in r.output
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == [1]


def test_bad_recipes_name_the_field_and_what_is_allowed(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: grpo\nmodel: bundled\ndata: {synth: {n: 4, seed: 3}}\nsteps: 1\nlearning_rate: 1e-5\n"
                   "batch_size: 6\nnum_generations: 4\n")
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", str(bad)])
    assert r.exit_code == 2 and "batch_size (6) must be a multiple of num_generations (4)" in " ".join(r.output.split())
    bad.write_text("kind: grpo\ndata: {suite: heldout}\nsteps: 1\nlearning_rate: 1e-5\nbatch_size: 8\n")
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", str(bad)])
    assert r.exit_code == 2 and "data.suite 'heldout' is an evaluation suite abstain keeps out of training" \
        in " ".join(r.output.split()) and "allow_eval_suites: [heldout]" in r.output
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", "reward=ternay"])
    assert r.exit_code == 2 and "unknown reward preset(s) ['ternay']" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", "data.synth.seed=90417"])
    assert r.exit_code == 2 and "reserved for the held-out benchmark" in " ".join(r.output.split())
    # a tracker transformers does not know, or one not installed: refused before the run folder is written
    from transformers.integrations.integration_utils import get_available_reporting_integrations

    absent = next(n for n in ("clearml", "dvclive", "flyte", "neptune") if n not in get_available_reporting_integrations())
    for tracker, said in (("tensorbord", "'tensorbord' is not a tracker transformers knows"),
                          (absent, f"{absent} is not installed here")):
        r = CliRunner().invoke(app, ["train", "grpo", "--recipe", "tiny-grpo", "--set", f"report_to=[{tracker}]",
                                     "--out", str(tmp_path / "tracked")])
        assert r.exit_code == 2 and f"recipe field 'report_to': {said}" in " ".join(r.output.split()), r.output
        assert not (tmp_path / "tracked").exists()


def test_report_to_and_run_name_reach_trls_config(tmp_path):
    from trl import GRPOConfig

    from abstain.train.trainers.arguments import trl_config

    args = trl_config(GRPOConfig, load_recipe("tiny-grpo", ["report_to=[wandb]"]), TrainRun(tmp_path / "arm-a"))
    assert args.report_to == ["wandb"] and args.run_name == "arm-a"  # the run folder's name by default
    args = trl_config(GRPOConfig, load_recipe("tiny-grpo", ["run_name=tiar-lambda-1"]), TrainRun(tmp_path / "arm-a"))
    assert args.report_to == [] and args.run_name == "tiar-lambda-1"
