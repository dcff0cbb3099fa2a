"""Which surface cue does a trained arm key on? Refusal rate by label and by how many numbers the question states.

    python examples/cpu-demo/cues.py runs/cpu-demo/eval/sft [runs/cpu-demo/eval/base ...]

For each run folder (``abstain eval`` output) prints, over the math benchmarks of the ``transfer`` suite
(SelfAware has no numbers and is left out), the share of responses that refuse (boxed decision other than an
answer) for answerable and unanswerable items, split by the count of numbers in the question. A model that
checks the question refuses unanswerable items more often *within each bin*; a model keyed on "few numbers
-> something is missing" refuses both labels alike within a bin, and more in the low bins.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from abstain.outcomes import is_refusal
from abstain.schema import ScoredRow, read_jsonl
from abstain.runs import SCORED

NUMBER = re.compile(r"\d+(?:\.\d+)?")
BINS = (("≤ 2 numbers", 0, 2), ("3–4 numbers", 3, 4), ("≥ 5 numbers", 5, 10**9))


def table(run: Path) -> list[str]:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in read_jsonl(run / SCORED, ScoredRow):
        if row.id.startswith("selfaware"):
            continue
        n = len(NUMBER.findall(row.question))
        name = next(b for b, lo, hi in BINS if lo <= n <= hi)
        cell = counts[(name, str(row.label))]
        cell[0] += 1
        cell[1] += is_refusal(row)
    lines = [f"{run.name}:", "| question states | refuses answerable | refuses unanswerable |", "|---|---|---|"]
    for name, _, _ in BINS:
        cells = []
        for label in ("answerable", "unanswerable"):
            total, refused = counts[(name, label)]
            cells.append(f"{refused / total:.2f} ({refused}/{total})" if total else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    for arg in sys.argv[1:]:
        print("\n".join(table(Path(arg))), end="\n\n")


if __name__ == "__main__":
    main()
