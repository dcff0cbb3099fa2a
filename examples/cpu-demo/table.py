"""The comparison table of docs/experiments/cpu-demo.md from the arms' run folders (``examples/cpu-demo/compare.sh`` makes them).

    python examples/cpu-demo/table.py runs/cpu-demo/eval base base-fewshot sft sft-grpo-ternary sft-grpo-tiar sft-grpo-coupled

One row per (benchmark, arm): ab.f1, r1.u_ref, r1.a_fu, the discrimination U-Ref - A-FU, the discrimination
within numeral-count bins, r1.a_acc (95% CIs) and the ACA behavior distribution of the unanswerable rows; the
first arm's discrimination is the baseline of the "Δ disc." column. After each benchmark's arms, the cue
baseline: the discrimination of the rule "refuse iff <= 2 numerals" on the same items (and of the best
threshold t, in the last column).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KEYS = (("ab.f1", "AB F1"), ("r1.u_ref", "U-Ref"), ("r1.a_fu", "A-FU"), ("r1.discrimination", "disc."),
        ("r1.discrimination_within_count", "within-count disc."), ("r1.a_acc", "A-Acc"))
SIGNED = ("r1.discrimination", "r1.discrimination_within_count", "cue.le2_discrimination", "cue.best_discrimination")
BEHAVIORS = ("SH", "EA", "ABS", "COND", "ELICIT")
ORDER = ("heldout", "umwp", "mip_gsm8k", "treecut", "selfaware")


def cell(block: dict, key: str, signed: bool | None = None) -> str:
    """``value [lo, hi]`` of ``key`` in a metrics block (— when undefined); signed: discrimination by default."""
    value, ci = block.get(key), block.get(f"{key}_ci")
    if value is None:
        return "—"
    f = "+.2f" if (key in SIGNED if signed is None else signed) else ".2f"
    return f"{value:{f}} [{ci[0]:{f}}, {ci[1]:{f}}]" if ci else f"{value:{f}}"


def load(run: Path) -> tuple[dict, str]:
    """A run folder's ``metrics.json`` and its first protocol."""
    metrics = json.loads((run / "metrics.json").read_text())
    return metrics, next(iter(metrics["protocols"]))


def main(folder: str, arms: list[str]) -> None:
    metrics = {arm: load(Path(folder) / arm)[0] for arm in arms}
    protocol = load(Path(folder) / arms[0])[1]
    header = ["benchmark", "arm", *(label for _, label in KEYS), "Δ disc.", "behaviors (SH/EA/ABS/COND/ELICIT)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    benches = [b for b in ORDER if b in metrics[arms[0]]["by_benchmark"][protocol]]
    for bench in [*benches, "all"]:
        base = None
        for arm in arms:
            m = metrics[arm]
            block = m["protocols"][protocol] if bench == "all" else m["by_benchmark"][protocol][bench]
            disc = block.get("r1.discrimination")
            base = disc if base is None else base
            delta = "" if arm == arms[0] or disc is None else f"{disc - base:+.2f}"
            dist = "/".join(f"{(block.get(f'aca.dist.{b}') or 0):.2f}" for b in BEHAVIORS)
            print("| " + " | ".join([bench, arm, *(cell(block, k) for k, _ in KEYS), delta, dist]) + " |")
        # the numeral-count shortcut on the same items: no model (the first arm's items; every arm has the same)
        m = metrics[arms[0]]
        block = m["protocols"][protocol] if bench == "all" else m["by_benchmark"][protocol][bench]
        rule = [cell(block, "cue.le2_discrimination"),
                f"best t = {block.get('cue.best_threshold')}: {cell(block, 'cue.best_discrimination')}"]
        print("| " + " | ".join([bench, "*rule: refuse iff <= 2 numerals*", "", "", "", rule[0], "", "", "", rule[1]])
              + " |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
