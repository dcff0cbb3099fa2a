"""The validation table of docs/experiments/attribution.md: every arm against the shipped adapter, by the pick rule.

    python examples/attribution/table.py runs/attribution/val shipped base real-attr synth-attr ...
    python examples/attribution/table.py --by-benchmark runs/attribution/final-transfer shipped base ...

Each arm is an ``abstain eval`` folder under the first argument, all on ``mip-gsm8k-val``; the first is the
reference (the shipped adapter). Per arm: ``ua.du_discrimination`` and its within-count version with their
CIs; the within-count difference to the reference with its paired bootstrap CI (the rule: at least +0.02 and a
CI excluding 0); P(DATA_UNCERTAIN | answerable) and the boxed share (eligibility: <= 0.20 and >= 0.95); A-Acc;
``r1.discrimination`` and its within-count version (what an idk arm is read by); the cue baseline
(``cue.le2_discrimination``, the same for every arm: the questions alone). ``--by-benchmark`` prints, per
arm and benchmark of the folder's items, the DU discrimination, its within-count version and the cue baseline.

The within-count values are computed here from each run's ``scored.jsonl`` with the current numeral-count
bins (one per exact count, :func:`abstain.data.cues.count_bin`), with the stream and resamples ``abstain eval``
uses, not read from ``metrics.json``: a run scored before issue 36 holds values of the old <= 2 / 3-4 / >= 5
bins there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from abstain.records.runs import SCORED, RunDir
from abstain.metrics.paired import PairedConfig, paired_delta
from abstain.metrics.within_count import WITHIN_COUNT_KEYS, within_count
from abstain.schema import Pred, ScoredRow, dataset_of

CONFIG = PairedConfig(resamples=2000)
WITHIN = "ua.du_discrimination_within_count"
R1_WITHIN = "r1.discrimination_within_count"


def _ci(metrics: dict, key: str) -> str:
    value, ci = metrics.get(key), metrics.get(f"{key}_ci")
    if value is None:
        return "—"
    return f"{value:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else f"{value:+.3f}"


def _within(rows: list[ScoredRow], folder: Path, prefix: str = "") -> dict:
    """Both within-count metrics of ``rows`` and their CIs, as ``abstain metrics`` computes them now."""
    config = json.loads((folder / "config.json").read_text()) if (folder / "config.json").exists() else {}
    resamples = int(config.get("resamples") or 1000)
    out: dict = {}
    for key, stream in WITHIN_COUNT_KEYS.items():
        point, boot = within_count(rows, resamples, np.random.default_rng([0, *f"{stream}:{prefix}".encode()]), key)
        out[key] = point
        low_high = None if boot is None or point is None else np.nanpercentile(boot, [2.5, 97.5])
        out[f"{key}_ci"] = None if low_high is None else [float(v) for v in low_high]
    return out


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
        m = {**meta["protocols"][protocol], **_within(rows[arm], folders[arm])}
        answerable = [r for r in rows[arm] if r.label == "answerable"]
        du_a = sum(r.pred is Pred.DATA_UNCERTAIN for r in answerable) / len(answerable)
        boxed = sum(r.format_ok for r in rows[arm]) / len(rows[arm])
        delta = "—"
        if arm != reference:
            d = paired_delta(rows[reference], rows[arm], WITHIN, CONFIG)
            if d.delta is not None and d.ci:
                delta = f"{d.delta:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}]"
        print(f"| {arm} | {protocol} | {_ci(m, 'ua.du_discrimination')} | {_ci(m, WITHIN)} | {delta} | {du_a:.3f} "
              f"| {boxed:.3f} | {_ci(m, 'r1.a_acc')} | {_ci(m, R1_WITHIN)} "
              f"| {_ci(m, 'cue.le2_discrimination')} | {len(rows[arm])} |")


def by_benchmark(root: str, arms: list[str]) -> None:
    print("| arm | benchmark | DU disc. | DU disc. within count | cue (≤ 2 numerals) |")
    print("|---|---|---|---|---|")
    for arm in arms:
        folder = Path(root) / arm
        meta = json.loads((folder / "metrics.json").read_text())
        protocol = next(iter(meta["protocols"]))
        scored = [r for r in RunDir(folder).read_rows(SCORED, ScoredRow) if (r.protocol or "") == protocol]
        benches = meta["by_benchmark"][protocol]
        for bench, m in sorted(benches.items()):
            group = [r for r in scored if dataset_of(r) == bench]
            m = {**m, **_within(group, folder, f"s:{bench}" if len(benches) > 1 else "")}
            print(f"| {arm} | {bench} | {_ci(m, 'ua.du_discrimination')} | {_ci(m, WITHIN)} "
                  f"| {_ci(m, 'cue.le2_discrimination')} |")


if __name__ == "__main__":
    if sys.argv[1] == "--by-benchmark":
        by_benchmark(sys.argv[2], sys.argv[3:])
    else:
        main(sys.argv[1], sys.argv[2:])
