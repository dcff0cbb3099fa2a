"""Milliseconds per decoding step of the hf backend on a GPU: dtype, attention kernels and compiled decoding compared
in one run, on the same prompts (the ``quick`` suite under ``idk``, batch 120, the bundled model).

Why the hf backend's GPU defaults are what they are (docs/benchmarks.md#on-a-gpu). A batch decodes until its longest
row ends, so generated tokens per second follow the milliseconds of one decoding step; each variant generates
``--tokens`` new tokens from the same 120 prompts and reports ms per step (the backend's own count of steps) and
tokens/s. Compiled decoding (``compile=True``: a static KV cache and torch.compile with CUDA graphs) runs twice: the
first call compiles, the second is what every later batch of that shape costs.

    python bench/bench_gpu_decode.py [--tokens 128] [--batch 120] [--variants fp32,bf16,bf16-cudnn,...]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from abstain.backends import GenerationConfig, make_backend  # sets OMP_WAIT_POLICY before torch loads

import torch  # noqa: E402

from abstain.evaluation.run import EvalConfig, eval_prompts  # noqa: E402
from _results import report  # noqa: E402  bench/_results.py

VARIANTS: dict[str, dict[str, Any]] = {
    "fp32": {"dtype": "float32"},
    "bf16": {"dtype": "bfloat16"},  # the default: SDPA without cuDNN's attention
    "bf16-cudnn": {"dtype": "bfloat16", "cudnn_attention": True},  # what SDPA picks by itself on a Hopper GPU
    "bf16-eager": {"dtype": "bfloat16", "attn_implementation": "eager"},
    "bf16-compile": {"dtype": "bfloat16", "compile": True},
    "fp32-compile": {"dtype": "float32", "compile": True},
}


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def measure(options: dict[str, Any], prompts: list, tokens: int, batch: int, calls: int) -> dict[str, Any]:
    backend = make_backend("bundled", batch_size=batch, **options)
    config = GenerationConfig(max_new_tokens=tokens)
    out: dict[str, Any] = {"options": options, "calls": []}
    try:
        for _ in range(calls):
            steps, made = backend.stats.steps, backend.stats.new_tokens
            _sync()
            start = time.perf_counter()
            backend.generate(prompts, config)
            _sync()
            seconds = time.perf_counter() - start
            steps, made = backend.stats.steps - steps, backend.stats.new_tokens - made
            out["calls"].append({"seconds": round(seconds, 3), "steps": steps, "tokens": made,
                                 "ms_per_step": round(1000 * seconds / max(steps, 1), 2),
                                 "tokens_per_s": round(made / seconds, 1)})
    finally:
        backend.close()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    out["best"] = min(out["calls"], key=lambda c: c["ms_per_step"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--batch", type=int, default=120)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--items", type=int, default=None, help="fewer prompts (a dry run on a CPU)")
    args = parser.parse_args()
    config = EvalConfig(model="bundled", suite="quick", protocols=("idk",), limit=args.items)
    prompts = eval_prompts(config).messages
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
                              "torch": torch.__version__, "prompts": len(prompts), "tokens": args.tokens,
                              "batch": args.batch, "variants": {}}
    for name in [v.strip() for v in args.variants.split(",") if v.strip()]:
        calls = 2 if VARIANTS[name].get("compile") else 1
        try:
            result["variants"][name] = measure(VARIANTS[name], prompts, args.tokens, args.batch, calls)
        except Exception as exc:  # noqa: BLE001 - one variant failing is reported, the others still run
            result["variants"][name] = {"options": VARIANTS[name], "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        report("bench_gpu_decode", result, echo=False)  # after each variant: a cut run keeps what it measured
    base = (result["variants"].get("fp32") or {}).get("best")
    if base:
        for entry in result["variants"].values():
            if "best" in entry:
                entry["ms_per_step_vs_fp32"] = round(entry["best"]["ms_per_step"] / base["ms_per_step"], 3)
    report("bench_gpu_decode", result)


if __name__ == "__main__":
    main()
