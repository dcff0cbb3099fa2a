"""The cost of TIAR: one GRPO step of AbstainGRPOTrainer (advantage tiar) vs TRL's plain GRPOTrainer.

Both trainers get the same model (the bundled SmolLM2-135M), config, seed, data and reward function
(abstain's ``ternary`` preset), so their first steps sample the same completions and do the same work (each
completion scored once: by the reward call in TRL's trainer, by the subclass itself, which hands the rows to
the reward call); the subclass adds gathering the outcomes, the TIAR bonus and its logs. Each side trains one
step from a fresh trainer ``--repeat`` times, interleaved, and its best step time counts (the machine is
shared). The time the subclass spends in its own code (its three overrides minus the TRL methods they call
and the scoring both trainers do) is measured directly too. On a CUDA GPU both train there (bf16), else on the CPU
with 2 threads.
Every completion is exactly ``--tokens`` long (``min_new_tokens``), so both sides generate the same tokens. Goal:
ratio <= 1.03.

    python bench/bench_grpo.py [--prompts 2] [--generations 4] [--tokens 32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time

from abstain.backends import bundled_model_dir  # sets OMP_WAIT_POLICY before torch loads

import torch  # noqa: E402
from transformers import TrainerCallback  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from abstain.synth import SynthConfig, generate_missing_premise  # noqa: E402
from abstain.train.data.rows import prompt_dataset  # noqa: E402
from abstain.train.trainers.grpo import AbstainGRPOConfig, AbstainGRPOTrainer  # noqa: E402
from abstain.train.rewards.presets import RewardFunction, make_reward  # noqa: E402
from _results import report  # noqa: E402  bench/_results.py


class StepTimer(TrainerCallback):
    def __init__(self) -> None:
        self.seconds: list[float] = []

    def on_step_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        self._start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        self.seconds.append(time.perf_counter() - self._start)


class TimedTIAR(AbstainGRPOTrainer):
    """Adds up the time spent in the subclass's own code (each override minus the TRL method it calls and
    the scoring, which the plain trainer does inside its reward call)."""

    own = 0.0

    def _own(self, name: str, *args):  # type: ignore[no-untyped-def]
        """Run the override ``name``, timing it minus the time in TRL's ``GRPOTrainer.<name>`` and in scoring."""
        start = time.perf_counter()
        parent, score = getattr(GRPOTrainer, name), RewardFunction.score
        inner = [0.0]

        def timed(fn):  # type: ignore[no-untyped-def]
            def run(*b):  # type: ignore[no-untyped-def]
                t = time.perf_counter()
                out = fn(*b)
                inner[0] += time.perf_counter() - t
                return out
            return run

        setattr(GRPOTrainer, name, timed(parent))
        if name == "_calculate_rewards":  # where the subclass scores (the outer override's TRL call holds it)
            RewardFunction.score = timed(score)  # type: ignore[method-assign]
        try:
            return getattr(super(), name)(*args)
        finally:
            setattr(GRPOTrainer, name, parent)
            RewardFunction.score = score  # type: ignore[method-assign]
            TimedTIAR.own += time.perf_counter() - start - inner[0]

    def _calculate_rewards(self, *a):  # type: ignore[no-untyped-def]
        return self._own("_calculate_rewards", *a)

    def _generate_and_score_completions(self, inputs):  # type: ignore[no-untyped-def]
        return self._own("_generate_and_score_completions", inputs)

    def log(self, logs, start_time=None):  # type: ignore[no-untyped-def]
        return self._own("log", logs, start_time)


def one_step(kind: str, args: argparse.Namespace, model: str, dataset) -> float:  # type: ignore[no-untyped-def]
    cuda = torch.cuda.is_available()  # on a GPU as a GPU user trains (bf16 autocast); else TRL's CPU settings
    common = dict(output_dir=tempfile.mkdtemp(), num_generations=args.generations,
                  per_device_train_batch_size=args.prompts * args.generations, max_steps=1,
                  max_completion_length=args.tokens, learning_rate=1e-5, use_cpu=not cuda,
                  bf16=cuda and torch.cuda.is_bf16_supported(),
                  gradient_checkpointing=False, report_to=[], save_strategy="no", logging_steps=1, seed=0,
                  disable_tqdm=True,
                  # every completion exactly --tokens long: both sides generate the same number of tokens, so a
                  # difference in sampled lengths (on a GPU the two trainers' samples can differ) is not billed to TIAR
                  generation_kwargs={"min_new_tokens": args.tokens})
    timer = StepTimer()
    reward = make_reward("ternary", protocol="idk")
    if kind == "tiar":
        trainer = TimedTIAR(model=model, reward_funcs=[reward], args=AbstainGRPOConfig(advantage="tiar", **common),
                            train_dataset=dataset, callbacks=[timer])
    else:
        trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=GRPOConfig(**common),
                              train_dataset=dataset, callbacks=[timer])
    trainer.train()
    return timer.seconds[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        torch.set_num_threads(2)
    model = str(bundled_model_dir())
    items = list(generate_missing_premise(SynthConfig(n=args.prompts, seed=11, unanswerable_ratio=0.5)))
    dataset = prompt_dataset(items, "idk")
    times: dict[str, list[float]] = {"plain": [], "tiar": []}
    own: list[float] = []
    for _ in range(args.repeat):
        for kind in ("plain", "tiar"):
            TimedTIAR.own = 0.0
            times[kind].append(one_step(kind, args, model, dataset))
            if kind == "tiar":
                own.append(TimedTIAR.own)
    best = {k: min(v) for k, v in times.items()}
    result = {
        "completions per step": args.prompts * args.generations,
        "max tokens": args.tokens,
        "plain GRPOTrainer step_s (baseline)": round(best["plain"], 3),
        "AbstainGRPOTrainer tiar step_s": round(best["tiar"], 3),
        "tiar / plain": round(best["tiar"] / best["plain"], 3),
        "subclass's own code per step_ms": round(1000 * min(own), 2),
        "own code / plain step": round(min(own) / best["plain"], 5),
        "all step times": {k: [round(x, 3) for x in v] for k, v in times.items()},
        "goal_met (<= 1.03)": best["tiar"] / best["plain"] <= 1.03,
        "python": platform.python_version(),
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
    }
    report("bench_grpo", result)


if __name__ == "__main__":
    main()
