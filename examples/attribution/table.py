"""The validation table of docs/experiments/attribution.md: every arm against the shipped adapter, by the pick rule.

    python examples/attribution/table.py runs/attribution/val shipped base real-attr synth-attr ...
    python examples/attribution/table.py --by-benchmark runs/attribution/final-transfer shipped base ...

Each arm is an ``abstain eval`` folder under the first argument, all on ``mip-gsm8k-val``; the first is the
reference (the shipped adapter). Per arm: ``ua.du_discrimination`` and its within-count version with their
CIs; the within-count difference to the reference with its paired bootstrap CI (the rule: > +0.02 and a CI
excluding 0); P(DATA_UNCERTAIN | answerable) and the boxed share (eligibility: <= 0.20 and >= 0.95); A-Acc;
``r1.discrimination`` and its within-count version (what an idk arm is read by); the cue baseline
(``cue.le2_discrimination``, the same for every arm: the questions alone). ``--by-benchmark`` prints, per
arm and benchmark of the folder's items, the DU discrimination, its within-count version and the cue baseline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from abstain.metrics.paired import PairedConfig, paired_delta
from abstain.runs import SCORED, RunDir
from abstain.schema import Pred, ScoredRow

CONFIG = PairedConfig(resamples=2000)
WITHIN = "ua.du_discrimination_within_count"


def _ci(metrics: dict, key: str) -> str:
    value, ci = metrics.get(key), metrics.get(f"{key}_ci")
    if value is None:
        return "—"
    return f"{value:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else f"{value:+.3f}"


def main(root: str, arms: list[str]) -> None:
    folders = {arm: Path(root) / arm for arm in arms}
    rows = {arm: RunDir(f).read_rows(SCORED, ScoredRow) for arm, f in folders.items()}
    reference = arms[0]
    print(f"| arm | protocol | DU disc. | DU disc. within count | within − {reference} [paired 95% CI] | P(DU \\| A) "
          "| boxed | A-Acc | r1 disc. within count | cue (≤ 2 numerals) | items |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for arm in arms:
        meta = json.loads((folders[arm] / "metrics.json").read_text())
        protocol = next(iter(meta["protocols"]))
        m = meta["protocols"][protocol]
        answerable = [r for r in rows[arm] if r.label == "answerable"]
        du_a = sum(r.pred is Pred.DATA_UNCERTAIN for r in answerable) / len(answerable)
        boxed = sum(r.format_ok for r in rows[arm]) / len(rows[arm])
        delta = "—"
        if arm != reference:
            d = paired_delta(rows[reference], rows[arm], WITHIN, CONFIG)
            if d.delta is not None and d.ci:
                delta = f"{d.delta:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}]"
        print(f"| {arm} | {protocol} | {_ci(m, 'ua.du_discrimination')} | {_ci(m, WITHIN)} | {delta} | {du_a:.3f} "
              f"| {boxed:.3f} | {_ci(m, 'r1.a_acc')} | {_ci(m, 'r1.discrimination_within_count')} "
              f"| {_ci(m, 'cue.le2_discrimination')} | {len(rows[arm])} |")


def by_benchmark(root: str, arms: list[str]) -> None:
    print("| arm | benchmark | DU disc. | DU disc. within count | cue (≤ 2 numerals) |")
    print("|---|---|---|---|---|")
    for arm in arms:
        meta = json.loads((Path(root) / arm / "metrics.json").read_text())
        protocol = next(iter(meta["protocols"]))
        for bench, m in sorted(meta["by_benchmark"][protocol].items()):
            print(f"| {arm} | {bench} | {_ci(m, 'ua.du_discrimination')} | {_ci(m, WITHIN)} "
                  f"| {_ci(m, 'cue.le2_discrimination')} |")


if __name__ == "__main__":
    if sys.argv[1] == "--by-benchmark":
        by_benchmark(sys.argv[2], sys.argv[3:])
    else:
        main(sys.argv[1], sys.argv[2:])
