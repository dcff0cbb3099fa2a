"""Generation speed of the ``hf`` backend on the bundled model, against baselines measured in the same run.

(a) overhead: tokens/s of ``HFBackend.generate`` vs a hand-written ``model.generate`` loop (chat template,
    left-padded batches of the same size, greedy, decode) over the same prompts — goal: the backend is at
    most 10% slower. The prompts are pre-sorted by length so both sides see the same batches; the backend
    runs once with its shared-prefix prefill off (pure wrapper overhead) and once as shipped (prefix on).
    Greedy outputs of all sides are compared (they must be the same texts). A sampled pass (temperature
    0.7, top-p 0.95) compares the backend's per-row seeded sampler with transformers' own sampling.
    Sampled texts differ between the sides (so do their lengths, and with them how many padded steps a
    batch wastes after rows finish); the sampler itself is therefore also timed alone on the same logits
    against transformers' own temperature/top-p/multinomial step.
    The wall-clock ratio is noisy on a shared machine, so the time spent outside ``model.generate``
    (template, tokenization, sorting, tensors, decoding) is measured too: that is the wrapper's cost.
(b) batching: the backend with ``batch_size`` (8) vs ``batch_size=1`` (one by one) — goal: >= 4x.

The prompts are real: the first ``--prompts`` items of the ``quick`` suite (GSM8K, MiP, UMWP, ...) under
the ``attribution`` protocol (~220 prompt tokens each, like the demo's). Each side runs ``--repeat``
times, interleaved with the others, and its best time counts (the machine is shared). A table is
printed and the figures are written to ``bench/results/bench_generate.json``.

    python bench/bench_generate.py [--prompts 16] [--max-new-tokens 64] [--batch-size 8] [--repeat 2]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

from abstain.backends import GenerationConfig, HFBackend, HFOptions, make_backend  # sets OMP_WAIT_POLICY first

import torch  # noqa: E402  (after abstain.backends)
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from abstain.data.suites import load_suite  # noqa: E402
from abstain.protocols import get_protocol  # noqa: E402
from _results import report  # bench/_results.py (scripts run from bench/)

Prompts = list[list[dict[str, str]]]


def raw_loop(backend: HFBackend, prompts: Prompts, batch_size: int, max_new_tokens: int, sample: bool) -> tuple[list[str], int]:
    """What one writes by hand: template, left-pad, ``model.generate``, decode. Returns (texts, new tokens)."""
    model, tok = backend.model, backend.tokenizer
    eos = model.generation_config.eos_token_id
    texts, tokens = [], 0
    for s in range(0, len(prompts), batch_size):
        rendered = [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts[s : s + batch_size]]
        enc = tok(rendered, padding=True, padding_side="left", add_special_tokens=False, return_tensors="pt")
        sampling = {"do_sample": True, "temperature": 0.7, "top_p": 0.95, "top_k": 0} if sample else {"do_sample": False}
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=max_new_tokens, pad_token_id=tok.pad_token_id, **sampling)
        new = out[:, enc["input_ids"].shape[1] :]
        texts += tok.batch_decode(new, skip_special_tokens=True)
        for row in new.tolist():
            tokens += row.index(eos) + 1 if eos in row else len(row)
    return texts, tokens


def backend_run(backend: HFBackend, prompts: Prompts, config: GenerationConfig) -> tuple[list[str], int]:
    before = backend.stats.new_tokens
    texts = [t[0] for t in backend.generate(prompts, config)]
    return texts, backend.stats.new_tokens - before


class GenerateClock:
    """Seconds spent inside ``model.generate``; the rest of a side's time is its own (wrapper) work."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model, self.seconds = model, 0.0

    def __enter__(self) -> GenerateClock:
        inner = self.model.generate

        def timed_generate(*args, **kwargs):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        self.model.generate = timed_generate
        return self

    def __exit__(self, *exc: object) -> None:
        del self.model.generate  # the class's method again


def timed(model: torch.nn.Module, fn: Callable[[], tuple[list[str], int]]) -> tuple[float, list[str], int, float]:
    """(seconds, texts, new tokens, seconds outside model.generate)."""
    with GenerateClock(model) as clock:
        start = time.perf_counter()
        texts, tokens = fn()
        seconds = time.perf_counter() - start
    return seconds, texts, tokens, seconds - clock.seconds


def sampler_step_ms(rows: int, vocab: int, steps: int = 100) -> dict[str, float]:
    """One sampling step on the same logits: SeededSampler vs transformers' warpers + multinomial."""
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

    from abstain.backends.hf import SeededSampler

    logits = torch.randn(rows, vocab, generator=torch.Generator().manual_seed(0)) * 4
    ids = torch.zeros(rows, 1, dtype=torch.long)
    ours = SeededSampler(list(range(rows)), 0.7, 0.95, logits.device)
    warpers = LogitsProcessorList([TemperatureLogitsWarper(0.7), TopPLogitsWarper(0.95)])

    def theirs(x: torch.Tensor) -> torch.Tensor:
        return torch.multinomial(warpers(ids, x).softmax(-1), 1)

    out = {}
    for name, step in (("abstain SeededSampler", lambda x: ours(ids, x).argmax(-1)), ("transformers sampling", theirs)):
        start = time.perf_counter()
        with torch.inference_mode():
            for _ in range(steps):
                step(logits)
        out[name] = round((time.perf_counter() - start) / steps * 1000, 3)
    return out


def best(runs: list[tuple[float, list[str], int, float]]) -> dict[str, float]:
    seconds, _, tokens, outside = min(runs, key=lambda r: r[0])
    return {"seconds": round(seconds, 2), "tokens": tokens, "tokens_per_s": round(tokens / seconds, 2),
            "outside_generate_s": round(outside, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--protocol", default="attribution")
    args = parser.parse_args()
    console = Console()

    shipped = make_backend("bundled", batch_size=args.batch_size)
    plain = HFBackend.from_model(shipped.model, shipped.tokenizer, "no-prefix", HFOptions(batch_size=args.batch_size, prefix_cache=False))
    single = HFBackend.from_model(shipped.model, shipped.tokenizer, "one-by-one", HFOptions(batch_size=1))
    protocol = get_protocol(args.protocol)
    prompts = [protocol.messages(item) for item in load_suite("quick").items[: args.prompts]]
    prompts.sort(key=lambda p: -shipped.count_tokens(shipped.render(p)))  # raw batches = backend batches
    greedy = GenerationConfig(max_new_tokens=args.max_new_tokens)
    sampled = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=0.7, top_p=0.95, seed=0)
    n, b = args.max_new_tokens, args.batch_size

    sides: dict[str, Callable[[], tuple[list[str], int]]] = {
        "raw greedy": lambda: raw_loop(shipped, prompts, b, n, sample=False),
        "hf greedy, prefix off": lambda: backend_run(plain, prompts, greedy),
        "hf greedy (shipped)": lambda: backend_run(shipped, prompts, greedy),
        "raw sampled": lambda: raw_loop(shipped, prompts, b, n, sample=True),
        "hf sampled (shipped)": lambda: backend_run(shipped, prompts, sampled),
    }
    runs: dict[str, list[tuple[float, list[str], int, float]]] = {k: [] for k in sides}
    backend_run(shipped, prompts[:b], GenerationConfig(max_new_tokens=2))  # warm-up
    for r in range(args.repeat):
        for name in list(sides)[r % len(sides) :] + list(sides)[: r % len(sides)]:
            console.print(f"[dim]repeat {r + 1}: {name}[/]")
            runs[name].append(timed(shipped.model, sides[name]))
    console.print("[dim]one by one[/]")
    one = timed(shipped.model, lambda: backend_run(single, prompts, greedy))
    sampler = sampler_step_ms(b, shipped.model.config.vocab_size)

    fig = {k: best(v) for k, v in runs.items()}
    fig["hf one-by-one"] = best([one])
    raw_texts = runs["raw greedy"][0][1]
    same = {
        "hf (prefix off) == raw": runs["hf greedy, prefix off"][0][1] == raw_texts,
        "hf (shipped) == raw": runs["hf greedy (shipped)"][0][1] == raw_texts,
        "one-by-one == batched": one[1] == runs["hf greedy (shipped)"][0][1],
    }
    tps = {k: v["tokens_per_s"] for k, v in fig.items()}
    ratios = {
        "overhead: hf (prefix off) / raw tokens/s": round(tps["hf greedy, prefix off"] / tps["raw greedy"], 3),
        "hf (prefix off): time outside model.generate / total": round(
            fig["hf greedy, prefix off"]["outside_generate_s"] / fig["hf greedy, prefix off"]["seconds"], 4),
        "raw: time outside model.generate / total": round(
            fig["raw greedy"]["outside_generate_s"] / fig["raw greedy"]["seconds"], 4),
        "hf (shipped) / raw tokens/s": round(tps["hf greedy (shipped)"] / tps["raw greedy"], 3),
        "sampled: hf / raw tokens/s": round(tps["hf sampled (shipped)"] / tps["raw sampled"], 3),
        "sampler step: abstain / transformers": round(
            sampler["abstain SeededSampler"] / sampler["transformers sampling"], 2),
        f"batched (batch {b}) / one-by-one, same tokens": round(one[0] / min(r[0] for r in runs["hf greedy (shipped)"]), 2),
        f"batched (batch {b}, prefix off) / one-by-one": round(one[0] / min(r[0] for r in runs["hf greedy, prefix off"]), 2),
    }
    goals = {
        "overhead <= 10%": ratios["overhead: hf (prefix off) / raw tokens/s"] >= 0.9,
        "batched >= 4x": ratios[f"batched (batch {b}) / one-by-one, same tokens"] >= 4,
    }

    table = Table(title=f"bundled SmolLM2-135M, {len(prompts)} prompts x {n} new tokens, batch {b}, {torch.get_num_threads()} threads")
    for col in ("side", "seconds", "tokens", "tokens/s", "outside generate (s)"):
        table.add_column(col, justify="left" if col == "side" else "right")
    for name, v in fig.items():
        table.add_row(name, f"{v['seconds']:.2f}", str(v["tokens"]), f"{v['tokens_per_s']:.2f}",
                      f"{v['outside_generate_s']:.3f}")
    console.print(table)
    ratio_table = Table(title="ratios (goal: overhead <= 10%, batched >= 4x)")
    ratio_table.add_column("ratio")
    ratio_table.add_column("value", justify="right")
    for name, value in ratios.items():
        ratio_table.add_row(name, f"{value}")
    console.print(ratio_table)
    console.print({"sampler step (ms)": sampler, **same, **goals})

    result = {
        "setup": {**vars(args), "threads": torch.get_num_threads(), "python": platform.python_version(),
                  "torch": torch.__version__, "machine": platform.machine()},
        "sides": fig, "sampler_step_ms": sampler, "ratios": ratios, "same_text": same, "goals_met": goals,
    }
    report("bench_generate", result, echo=False)


if __name__ == "__main__":
    main()
