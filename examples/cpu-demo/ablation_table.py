"""The validation table of the shortcut ablation (docs/experiments/shortcut.md) from its evaluation folders.

    python examples/cpu-demo/ablation_table.py runs/ablation base sft-plain sft-cue grpo-cue-idk-dson-10 ...
    python examples/cpu-demo/ablation_table.py runs/ablation --evals val-large-eval sft-plain sft-cue-3x

One row per arm (a folder under ``<ablation>/val-eval``, or ``--evals``): on the cue-matched half of the validation split
(``val-cue``: the numeral count says nothing there) the discrimination U-Ref - A-FU, U-Ref and A-FU; on the
plain half (``val-plain``) the within-count discrimination and the discrimination; over both the boxed share,
A-Acc and the answerable-refusal rate (A-FU). For a GRPO arm, from its ``metrics.jsonl``: the share of the
last logged step's completions that abstained, and the mean over its steps of the share of groups whose
rewards were all equal (TRL's ``frac_reward_zero_std``: no learning signal). Last, the pick rule's *score*:
the mean of the val-cue discrimination and the val-plain within-count discrimination (— when either is undefined).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from table import cell, load  # the sibling script


def _training(run: Path, step: int | None) -> tuple[str, str]:
    """(abstention share at the last logged step, mean share of groups whose rewards were all equal)."""
    path = run / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    rows = [r for r in rows if "abstain/abstain" in r and (step is None or r["step"] <= step)]
    if not rows:
        return "—", "—"
    uniform = [r["frac_reward_zero_std"] for r in rows if r.get("frac_reward_zero_std") is not None]
    return (f"{rows[-1]['abstain/abstain']:.2f} (step {rows[-1]['step']})",
            f"{sum(uniform) / len(uniform):.2f}" if uniform else "—")


def main(folder: str, arms: list[str], evals: str = "val-eval") -> None:
    root = Path(folder)
    header = ["arm", "val-cue disc.", "val-cue U-Ref", "val-cue A-FU", "val-plain within-count", "val-plain disc.",
              "boxed", "A-Acc", "A-FU (all)", "abstained at last step", "groups with equal rewards", "score"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for arm in arms:
        folder = root / evals / arm
        metrics, protocol = load(folder)
        whole = metrics["protocols"][protocol]
        cue = metrics["by_benchmark"][protocol]["val-cue"]
        plain = metrics["by_benchmark"][protocol]["val-plain"]
        scored = [json.loads(line) for line in (folder / "scored.jsonl").read_text().splitlines()]
        boxed = sum(r["format_ok"] for r in scored) / len(scored)
        name, _, step = arm.rpartition("-")
        run = root / name if step.isdigit() else root / arm
        abstained, uniform = _training(run, int(step) if step.isdigit() else None)
        parts = (cue.get("r1.discrimination"), plain.get("r1.discrimination_within_count"))
        score = "—" if None in parts else f"{sum(parts) / 2:.3f}"
        print("| " + " | ".join([
            arm, cell(cue, "r1.discrimination"), cell(cue, "r1.u_ref"), cell(cue, "r1.a_fu"),
            cell(plain, "r1.discrimination_within_count"), cell(plain, "r1.discrimination"), f"{boxed:.2f}",
            cell(whole, "r1.a_acc"), cell(whole, "r1.a_fu"), abstained, uniform, score]) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the ablation folder (runs/ablation)")
    parser.add_argument("arms", nargs="+", help="evaluation folders under FOLDER/EVALS")
    parser.add_argument("--evals", default="val-eval", help="the evaluation folder of one split (val-large-eval)")
    args = parser.parse_args()
    main(args.folder, args.arms, args.evals)
