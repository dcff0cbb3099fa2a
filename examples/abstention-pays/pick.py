"""The GRPO learning rate of docs/experiments/abstention-pays.md, picked on validation: each sweep run's
validations (``validation.json``: every 20 steps, greedy, the validation split) as a table, and the rate whose best
``truth.truthfulness`` is highest (ties to the lower rate, the first given).

    python examples/abstention-pays/pick.py RUN_LOW_RATE RUN_HIGH_RATE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KEYS = ("truth.truthfulness", "truth.acc", "truth.hallucination", "truth.abstain", "ab.f1", "boxed")


def history(run: Path) -> list[dict]:
    return json.loads((run / "validation.json").read_text(encoding="utf-8"))["history"]


def rate(run: Path) -> float:
    return float(json.loads((run / "config.json").read_text(encoding="utf-8"))["recipe"]["learning_rate"])


def main(runs: list[Path]) -> None:
    print("| run | learning rate | step | " + " | ".join(KEYS) + " |")
    print("|---|---|---|" + "---|" * len(KEYS))
    best: list[tuple[float, Path]] = []
    rates = {run: rate(run) for run in runs}
    for run in runs:
        rows = history(run)
        for row in rows:
            cells = " | ".join("" if row.get(k) is None else f"{row[k]:.3f}" for k in KEYS)
            print(f"| {run.name} | {rates[run]:g} | {row['step']} | {cells} |")
        best.append((max(r["truth.truthfulness"] for r in rows), run))
    top = max(value for value, _ in best)
    winner = next(run for value, run in best if value == top)  # ties: the first given, the lower rate
    print(f"\npicked: {winner.name} (learning rate {rates[winner]:g}, best validation truth.truthfulness {top:.3f})")


if __name__ == "__main__":
    main([Path(a) for a in sys.argv[1:]])
