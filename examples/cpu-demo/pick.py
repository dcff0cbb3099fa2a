"""The pick rule's score of each arm against a reference arm, with the paired bootstrap CI of the difference.

    python examples/cpu-demo/pick.py runs/ablation/val-large-eval sft-plain bundled-abstain sft-cue

Each arm is an ``abstain eval`` folder under the first argument, all on the same validation file; the first arm
is the reference (the SFT start). The score is the pick rule's (docs/experiments/shortcut.md): the mean of the
discrimination U-Ref - A-FU on the cue-matched half (``val-cue``) and the within-count discrimination on the
plain half (``val-plain``). Beside each arm's score: score - reference's, and its 95% CI from a paired
bootstrap (:mod:`abstain.metrics.paired`: the same items drawn from both arms in every resample, each half
resampled on its own), and the answerable-refusal rate over the whole split (the rule's eligibility bar).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from abstain.records.runs import SCORED, RunDir
from abstain.metrics.paired import PairedConfig, paired_delta, paired_values
from abstain.schema import ScoredRow

PARTS = (("val-cue", "r1.discrimination"), ("val-plain", "r1.discrimination_within_count"))
CONFIG = PairedConfig(resamples=2000)


def _rows(folder: Path) -> list[ScoredRow]:
    return RunDir(folder).read_rows(SCORED, ScoredRow)


def _half(rows: list[ScoredRow], name: str) -> list[ScoredRow]:
    return [r for r in rows if r.meta.get("benchmark") == name]


def main(root: str, arms: list[str]) -> None:
    scored = {arm: _rows(Path(root) / arm) for arm in arms}
    reference = arms[0]
    print(f"| arm | val-cue disc. | val-plain within-count | score | score − {reference} [paired 95% CI] "
          "| A-FU (all) | shared items |")
    print("|---|---|---|---|---|---|---|")
    for arm in arms:
        ref, values, boot, shared = [], [], np.zeros(CONFIG.resamples), 0
        for half, key in PARTS:
            a, b, samples, n = paired_values(_half(scored[reference], half), _half(scored[arm], half), key, CONFIG)
            ref.append(a)
            values.append(b)
            boot += samples / len(PARTS)  # the halves resampled independently, each paired
            shared += n
        score, delta = sum(values) / len(values), (sum(values) - sum(ref)) / len(values)
        low, high = np.percentile(boot, [2.5, 97.5])
        a_fu = paired_delta(scored[reference], scored[arm], "r1.a_fu", PairedConfig(resamples=0)).b
        print(f"| {arm} | {values[0]:+.3f} | {values[1]:+.3f} | {score:.3f} | {delta:+.3f} [{low:+.3f}, {high:+.3f}] "
              f"| {a_fu:.3f} | {shared} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
