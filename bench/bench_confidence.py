"""What confidence estimates cost an evaluation on vLLM (this CPU), in one run against the same engine.

``tokens``: the same ``--prompts`` ``quick`` prompts under ``answer_only`` and ``idk`` (``--tokens`` new tokens,
greedy) through ``abstain``'s evaluation on one ``vllm:bundled`` engine (float32; prefix caching off, so no run
reuses another's prompts), alternately without estimators and with ``--confidence logprob,entropy`` (top-20
log-probabilities per token), ``--repeats`` times each. Reported: generation seconds and eval wall seconds
(generation, scoring, metrics and report; the engine's start excluded: it is built once) of each, and the ratio
with / without, from the medians. Goal: ``ratio_wall`` <= 1.10.

``consistency``: the same with ``--confidence consistency:K`` on ``--consistency-prompts`` prompts: the K extra
samples per response cost about K generations; reported as the ratio of the pass's seconds to the run's own
generation seconds.

    python bench/bench_confidence.py [--prompts 60] [--tokens 512] [--repeats 2] [--k 4] [--consistency-prompts 8]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
from pathlib import Path

from _results import report  # bench/_results.py


def _session(run) -> dict:  # type: ignore[no-untyped-def]
    s = run.timing["sessions"][-1]
    return {"generation_s": s["generation_seconds"], "wall_s": s["wall_seconds"], "tokens": s["generated_tokens"],
            "consistency_s": s.get("consistency_seconds"), "consistency_tokens": s.get("consistency_tokens")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=60, help="items (each under two protocols)")
    parser.add_argument("--tokens", type=int, default=512, help="new tokens (abstain eval's default)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--consistency-prompts", type=int, default=8)
    args = parser.parse_args()

    from abstain.backends import make_backend
    from abstain.evaluation.run import EvalConfig, evaluate

    engine = make_backend("vllm:bundled", engine_args={"enable_prefix_caching": False})

    def config(limit: int, confidence: tuple[str, ...]) -> EvalConfig:
        return EvalConfig(model="vllm:bundled", suite="quick", limit=limit, protocols=("answer_only", "idk"),
                          max_tokens=args.tokens, batch_size=8, resamples=1000, confidence=confidence)

    runs: dict[str, list[dict]] = {"plain": [], "logprob_entropy": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for label, estimators in (("plain", ()), ("logprob_entropy", ("logprob", "entropy"))):
                run = evaluate(config(args.prompts, estimators), Path(tmp) / f"{label}-{r}", backend=engine)
                runs[label].append(_session(run))
        name = f"consistency:{args.k}"
        sampled = _session(evaluate(config(args.consistency_prompts, (name,)), Path(tmp) / "consistency",
                                    backend=engine))
    engine.close()
    median = {label: {k: statistics.median(s[k] for s in sessions) for k in ("generation_s", "wall_s")}
              for label, sessions in runs.items()}
    result = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "settings": vars(args),
        "runs": runs,
        "median": median,
        "ratio_generation": round(median["logprob_entropy"]["generation_s"] / median["plain"]["generation_s"], 3),
        "ratio_wall": round(median["logprob_entropy"]["wall_s"] / median["plain"]["wall_s"], 3),
        "consistency": {**sampled, "k": args.k,
                        "ratio_to_generation": round(sampled["consistency_s"] / sampled["generation_s"], 2)},
    }
    report("confidence", result)


if __name__ == "__main__":
    main()
