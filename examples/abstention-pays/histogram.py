"""The pass-rate histogram of a probe, per ladder rung, and the pre-registered requirement (a quarter of the items
with p-hat >= 0.6 and a quarter with p-hat <= 0.2).

    python examples/abstention-pays/histogram.py OUT/probe-base/probe.jsonl
"""

from __future__ import annotations

import sys
from collections import defaultdict

from abstain.records.probes import ProbeRow
from abstain.schema import read_jsonl

LABELS = ["0", "(0, .2]", "(.2, .4]", "(.4, .6)", "[.6, .8]", "(.8, 1)", "1"]


def _bin(p: float) -> int:
    if p in (0.0, 1.0):
        return 0 if p == 0 else 6
    return 1 if p <= 0.2 else 2 if p <= 0.4 else 3 if p < 0.6 else 4 if p <= 0.8 else 5


def main(path: str) -> None:
    probed = list(read_jsonl(path, ProbeRow))
    rows = [r for r in probed if r.p_hat is not None]
    if len(rows) < len(probed):
        print(f"{len(probed) - len(rows)} item(s) without a judged sample left out")
    by_rung: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        by_rung[row.category or "?"].append(row.p_hat)
    print(f"| rung | items | mean p̂ | {' | '.join(LABELS)} |")
    print("|---|---|---|" + "---|" * len(LABELS))
    for rung, values in [*by_rung.items(), ("all", [r.p_hat for r in rows])]:
        counts = [0] * len(LABELS)
        for p in values:
            counts[_bin(p)] += 1
        print(f"| {rung} | {len(values)} | {sum(values) / len(values):.2f} | {' | '.join(map(str, counts))} |")
    high = sum(r.p_hat >= 0.6 for r in rows) / len(rows)
    low = sum(r.p_hat <= 0.2 for r in rows) / len(rows)
    verdict = "met" if high >= 0.25 and low >= 0.25 else "missed"
    print(f"\nshare with p̂ ≥ 0.6: {high:.2f}; with p̂ ≤ 0.2: {low:.2f} (requirement: both ≥ 0.25): {verdict}")


if __name__ == "__main__":
    main(sys.argv[1])
