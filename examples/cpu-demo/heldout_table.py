"""The SFT table of docs/experiments/cpu-demo.md: base vs trained models on the held-out synthetic benchmark (never trained on).

    python examples/cpu-demo/heldout_table.py runs/cpu-demo/eval-heldout base sft sft-grpo-tiar

Per run: the share of responses with a well-formed boxed decision (95% bootstrap CI over items), U-Ref, A-FU,
the discrimination U-Ref - A-FU and A-Acc (the run's own bootstrap CIs).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from table import cell, load  # the sibling script


def boxed_ci(path: Path, resamples: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    boxed = [1.0 if r["format_ok"] else 0.0 for r in rows]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(boxed) for _ in boxed) / len(boxed) for _ in range(resamples))
    return sum(boxed) / len(boxed), means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def main(folder: str, runs: list[str]) -> None:
    keys = (("r1.u_ref", "U-Ref"), ("r1.a_fu", "A-FU"), ("r1.discrimination", "U-Ref − A-FU"), ("r1.a_acc", "A-Acc"))
    print("| model | items | boxed | " + " | ".join(label for _, label in keys) + " |")
    print("|" + "---|" * (len(keys) + 3))
    for run in runs:
        path = Path(folder) / run
        metrics, protocol = load(path)
        block = metrics["protocols"][protocol]
        b, lo, hi = boxed_ci(path / "scored.jsonl")
        cells = [cell(block, key, signed=False) for key, _ in keys]
        n = block["n.answerable"] + block["n.unanswerable"]
        print(f"| {run} | {n} | {b:.2f} [{lo:.2f}, {hi:.2f}] | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
