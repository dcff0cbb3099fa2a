"""Which surface cue does a trained arm key on? Refusals by how many numbers the question states, and per pair.

    python examples/cpu-demo/cues.py runs/cpu-demo/eval/sft [runs/cpu-demo/eval/base ...]

For each run folder (``abstain eval`` output) prints, over the math benchmarks of the ``transfer`` suite
(SelfAware has no numbers and is left out), the share of responses that refuse (boxed decision other than an
answer) for answerable and unanswerable items, split by the count of numbers in the question. A model that
checks the question refuses unanswerable items more often *within each bin*; a model keyed on "few numbers
-> something is missing" refuses both labels alike within a bin, and more in the low bins. Then, per
benchmark, the paired items (an unanswerable twin whose answerable original is in the same run): how often
the model refuses the twin and answers the original (it told them apart), the reverse, or decides both alike.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from abstain.records.runs import SCORED
from abstain.outcomes import is_refusal
from abstain.schema import ScoredRow, benchmark_of, read_jsonl

NUMBER = re.compile(r"\d+(?:\.\d+)?")
BINS = (("≤ 2 numbers", 0, 2), ("3–4 numbers", 3, 4), ("≥ 5 numbers", 5, 10**9))


def table(name: str, scored: list[ScoredRow]) -> list[str]:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in scored:
        if benchmark_of(row) == "selfaware":
            continue
        n = len(NUMBER.findall(row.question))
        cell = counts[(next(b for b, lo, hi in BINS if lo <= n <= hi), str(row.label))]
        cell[0] += 1
        cell[1] += is_refusal(row)
    lines = [f"{name}:", "| question states | refuses answerable | refuses unanswerable |", "|---|---|---|"]
    for bin_name, _, _ in BINS:
        cells = []
        for label in ("answerable", "unanswerable"):
            total, refused = counts[(bin_name, label)]
            cells.append(f"{refused / total:.2f} ({refused}/{total})" if total else "—")
        lines.append(f"| {bin_name} | " + " | ".join(cells) + " |")
    return lines


def _pair_key(row: ScoredRow) -> str | None:
    return row.meta.get("pair_id") or getattr(row, "pair_id", None)


def pairs(scored: list[ScoredRow]) -> list[str]:
    originals = {row.id: row for row in scored if row.label == "answerable"}
    for row in scored:  # an original is found by its id or by the pair key it shares with its twin
        if row.label == "answerable" and (key := _pair_key(row)):
            originals.setdefault(key, row)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in scored:
        original = originals.get(_pair_key(row) or "")
        if row.label != "unanswerable" or original is None:
            continue
        twin, orig = is_refusal(row), is_refusal(original)
        kind = "apart" if twin and not orig else "reversed" if orig and not twin else "both refused" if twin else "both answered"
        counts[benchmark_of(row)][kind] += 1
    lines = ["| benchmark | pairs | twin refused, original answered | reversed | both refused | both answered |",
             "|---|---|---|---|---|---|"]
    for bench, c in sorted(counts.items()):
        lines.append(f"| {bench} | {sum(c.values())} | " + " | ".join(
            str(c[k]) for k in ("apart", "reversed", "both refused", "both answered")) + " |")
    return lines


def main() -> None:
    for arg in sys.argv[1:]:
        scored = read_jsonl(Path(arg) / SCORED, ScoredRow)
        print("\n".join(table(Path(arg).name, scored) + [""] + pairs(scored)), end="\n\n")


if __name__ == "__main__":
    main()
