"""vLLM on this CPU against the hf backend, in one run: evaluation tokens/s and one cpu-demo GRPO step.

``eval``: the same 64 ``quick`` prompts (``idk`` protocol, 128 new tokens, greedy) through ``abstain``'s
evaluation, ``bundled`` (transformers, batch 16) then ``vllm:bundled`` float32 (the default: compiled), float32
eager and bfloat16; tokens/s is read from each run's ``timing.json`` (generation only: the engine's start
is reported apart), and the greedy texts are compared with the ``bundled`` run's. Goal: float32 >= 2.5x.

``busy``: the 120 ``quick`` items (``idk``, greedy, ``--busy-tokens``, abstain eval's default 512) on one vLLM engine:
the whole suite as one chunk, the default settings (chunks of 8, all handed to the engine at once), and chunks of 8 one
call at a time (as before); tokens/s from ``timing.json``. Goal: default >= 0.9x the one call.

``grpo``: the cpu-demo GRPO stage (16 completions <= 160 tokens per step, on the shipped adapter) for
``--steps`` steps three ways: ``before`` (TRL's generate and TRL's own LM head, which on a CPU projects every
position: the step as it was before ``rollout: vllm`` and :mod:`abstain.train.trainers.lm_head`), then
``rollout: transformers`` and ``rollout: vllm`` as shipped; the mean of every step but the
first (which includes one-time costs) counts, split into generation (``_generate_single_turn``: for vLLM the
weight push too) and the rest (scoring, log-probabilities, the optimizer step). The two rollouts sample
different completions, so the training computation differs with their lengths (``mean_completion_tokens``,
per step, from TRL's metrics). Goal: vLLM step <= 0.5x
(``ratio_vllm_vs_transformers``, the same head; ``ratio_vllm_vs_before`` against the step before).

    python bench/bench_vllm.py [eval] [busy] [grpo] [--prompts 64] [--tokens 128] [--steps 4] [--busy-tokens 512]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _results import report  # bench/_results.py


def _timing(run) -> dict:  # type: ignore[no-untyped-def]
    session = run.timing["sessions"][-1]
    return {"tokens": session["generated_tokens"], "generation_s": session["generation_seconds"],
            "tokens_per_s": session["tokens_per_second"],
            "start_s": round(session["wall_seconds"] - session["generation_seconds"] - session["scoring_seconds"], 1)}


def bench_eval(prompts: int, tokens: int, folder: Path) -> dict:
    from abstain.evaluation.run import EvalConfig, evaluate

    def config(model: str, dtype: str | None = None) -> EvalConfig:
        return EvalConfig(model=model, suite="quick", limit=prompts, protocols=("idk",), max_tokens=tokens,
                          batch_size=16 if model == "bundled" else prompts, resamples=0, dtype=dtype)

    base = evaluate(config("bundled"), folder / "hf")
    texts = [r.response for r in base.scored]
    out: dict = {"hf": _timing(base)}
    for label, dtype, options in (("vllm_float32", "float32", {}), ("vllm_float32_eager", "float32", {"eager": True}),
                                  ("vllm_bfloat16", "bfloat16", {})):
        run = evaluate(config("vllm:bundled", dtype), folder / label, backend_options=options)
        got = [r.response for r in run.scored]
        out[label] = {**_timing(run), "same_text_as_hf": sum(a == b for a, b in zip(got, texts, strict=True)),
                      "ratio_vs_hf": round(run.timing["sessions"][-1]["tokens_per_second"]
                                           / base.timing["sessions"][-1]["tokens_per_second"], 2)}
    out["prompts"] = prompts
    out["goal_float32_ratio"] = 2.5
    return out


class _OneChunkAtATime:
    """The engine fed one chunk per call, as before ``generate_chunks`` (the backend's other methods as they are)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.name, self.stats = inner, inner.name, inner.stats

    def generate(self, prompts, config):  # type: ignore[no-untyped-def]
        return self.inner.generate(prompts, config)

    def close(self) -> None:
        pass


def bench_busy(tokens: int, folder: Path) -> dict:
    """The ``quick`` suite (120 items, ``idk``) through ``abstain eval`` on one vLLM engine, three ways: the whole
    suite as one chunk (one call: the engine sees every prompt at once), the default settings (chunks of 8 handed
    over all at once, :meth:`VLLMBackend.generate_chunks`), and chunks of 8 one call at a time (before). Goal:
    default >= 0.9x the one call."""
    from abstain.backends.vllm import VLLMBackend, VLLMOptions
    from abstain.backends import bundled_model_dir
    from abstain.evaluation.run import EvalConfig, evaluate

    engine = VLLMBackend(str(bundled_model_dir()), VLLMOptions(dtype="float32"), name="vllm:bundled")
    out: dict = {}
    try:
        for label, size, backend in (("one_call", 120, engine), ("default", EvalConfig(model="x", suite="quick").batch_size,
                                                                  engine),
                                     ("one_chunk_at_a_time", 8, _OneChunkAtATime(engine))):
            config = EvalConfig(model="vllm:bundled", suite="quick", protocols=("idk",), max_tokens=tokens,
                                batch_size=size, resamples=0)
            run = evaluate(config, folder / label, backend=backend)
            out[label] = {**_timing(run), "batch_size": size, "prompts": len(run.scored)}
    finally:
        engine.close()
    base = out["one_call"]["tokens_per_s"]
    out["ratio_default_vs_one_call"] = round(out["default"]["tokens_per_s"] / base, 2)
    out["ratio_one_chunk_at_a_time_vs_one_call"] = round(out["one_chunk_at_a_time"]["tokens_per_s"] / base, 2)
    out["goal_ratio"] = 0.9
    return out


@contextmanager
def _no_compact() -> Iterator[bool]:
    yield False


def _mean_lengths(run: Path) -> list[float]:
    """TRL's ``completions/mean_length`` of every step (the training computation grows with it)."""
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return [round(r["completions/mean_length"], 1) for r in rows if "completions/mean_length" in r]


def bench_grpo(folder: Path, steps: int) -> dict:
    from transformers import TrainerCallback

    from abstain.backends.adapted import bundled_abstain_adapter
    from abstain.train.trainers.grpo import AbstainGRPOTrainer
    from abstain.train.recipe import load_recipe
    from abstain.train.trainers.entry import train

    class Timer(TrainerCallback):
        def __init__(self) -> None:
            self.steps: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            self.steps.append(time.perf_counter() - self.start)

    generation: list[float] = []
    own = AbstainGRPOTrainer._generate_single_turn

    def timed(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return own(self, *args, **kwargs)
        finally:
            generation.append(time.perf_counter() - start)

    AbstainGRPOTrainer._generate_single_turn = timed  # type: ignore[method-assign]
    timers: dict[str, Timer] = {}
    build = AbstainGRPOTrainer.__init__

    def with_timer(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        build(self, *args, **kwargs)
        self.add_callback(timers[self.args.rollout])

    AbstainGRPOTrainer.__init__ = with_timer  # type: ignore[method-assign]
    import abstain.train.trainers.runner as runner

    compact = runner.compact_lm_head
    out: dict = {}
    # "before": TRL's generate with TRL's own LM head (every position projected on a CPU): the step before
    # rollout: vllm and abstain.train.trainers.lm_head; then each rollout with the compact head, as shipped
    for label, rollout, head in (("before", "transformers", False), ("transformers", "transformers", True),
                                 ("vllm", "vllm", True)):
        timers[rollout] = Timer()
        generation.clear()
        runner.compact_lm_head = compact if head else _no_compact  # type: ignore[assignment]
        recipe = load_recipe("cpu-demo-grpo", [f"adapter={bundled_abstain_adapter()}", f"steps={steps}",
                                               "save_steps=100", f"rollout={rollout}"])
        start = time.perf_counter()
        train(recipe, folder / label)
        later = timers[rollout].steps[1:]  # the first step includes one-time costs
        step, gen = sum(later) / len(later), sum(generation[1:]) / len(later)
        out[label] = {"step_s": round(step, 1), "generation_s": round(gen, 1), "rest_s": round(step - gen, 1),
                      "generation_share": round(gen / step, 2), "first_step_s": round(timers[rollout].steps[0], 1),
                      "steps_s": [round(s, 1) for s in timers[rollout].steps],
                      "mean_completion_tokens": _mean_lengths(folder / label),
                      "run_s": round(time.perf_counter() - start, 1)}
    runner.compact_lm_head = compact  # type: ignore[assignment]
    out["ratio_vllm_vs_transformers"] = round(out["vllm"]["step_s"] / out["transformers"]["step_s"], 2)
    out["ratio_vllm_vs_before"] = round(out["vllm"]["step_s"] / out["before"]["step_s"], 2)
    out["goal_ratio"] = 0.5
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", help="eval, busy and/or grpo (default: eval and grpo)")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--steps", type=int, default=4, help="grpo: steps per rollout (the first is not counted)")
    parser.add_argument("--busy-tokens", type=int, default=512, help="busy: max_tokens (abstain eval's default)")
    args = parser.parse_args()
    args.parts = args.parts or ["eval", "grpo"]
    if set(args.parts) - {"eval", "busy", "grpo"}:
        parser.error(f"parts are eval, busy and grpo, not {sorted(set(args.parts) - {'eval', 'busy', 'grpo'})}")
    os.environ.setdefault("ABSTAIN_NO_PROGRESS", "1")
    from abstain.backends.vllm import cpu_features

    result: dict = {"machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                                "features": sorted(cpu_features())}}
    with tempfile.TemporaryDirectory() as tmp:
        if "eval" in args.parts:
            result["eval"] = bench_eval(args.prompts, args.tokens, Path(tmp) / "eval")
            print(json.dumps(result["eval"], indent=2), flush=True)
        if "busy" in args.parts:
            result["busy"] = bench_busy(args.busy_tokens, Path(tmp) / "busy")
            print(json.dumps(result["busy"], indent=2), flush=True)
        if "grpo" in args.parts:
            result["grpo"] = bench_grpo(Path(tmp) / "grpo", args.steps)
    report("vllm" if args.parts != ["busy"] else "vllm_busy", result)


if __name__ == "__main__":
    main()
