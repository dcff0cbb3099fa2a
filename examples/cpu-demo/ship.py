"""Ship a cpu-demo result as the ``bundled-abstain`` adapter: float16 LoRA weights and a model card.

    python examples/cpu-demo/ship.py runs/cpu-demo runs/cpu-demo/eval --stage grpo --arm sft-grpo-tiar
    python examples/cpu-demo/ship.py runs/cpu-demo runs/cpu-demo/eval --stage sft --arm sft

Reads the pipeline folder (``--stage``: the stage whose adapter is shipped, with ``recipe.yaml`` and
``versions.json``; every stage up to it is described on the card) and the evaluation folders of
``compare.sh`` (``base`` and ``--arm``) for the measured numbers the card states. ``--out`` defaults to
``src/abstain/data/models/bundled-abstain``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from abstain.train.runner import export_adapter
from table import cell, load  # the sibling script

KEYS = ("r1.u_ref", "r1.a_fu", "r1.discrimination", "r1.a_acc", "ab.f1")
STAGES = ("sft", "grpo")
SFT_ONLY = (
    "The pipeline's GRPO-TIAR stage is not in this adapter. On this 135M model, which solves few problems,",
    "its 5 validation-chosen steps raised refusals on answerable and unanswerable questions alike (transfer",
    "suite discrimination +0.03 against the SFT stage's +0.10), and longer runs converge to abstaining on",
    "everything (docs/experiments/cpu-demo.md, the comparison); the SFT stage is the arm that discriminated best.",
    "",
)


def _row(name: str, block: dict) -> str:
    return f"| {name} | " + " | ".join(cell(block, key, signed=False) for key in KEYS) + " |"


def _stage_line(name: str, recipe: dict) -> str:
    synth = recipe["data"]["synth"]
    what = (f"`{recipe['kind']}` ({recipe['description']}): synthesis seed {synth['seed']}, {synth['n']} problems, "
            f"{synth.get('unanswerable_ratio', 0):.0%} missing-premise, {synth.get('hard_ratio', 0):.0%} hard")
    if recipe["kind"] == "grpo":
        what += (f"; reward `{recipe['reward']}`, advantage `{recipe['advantage']}`, {recipe['steps']} steps of "
                 f"{recipe['batch_size']} completions ({recipe['num_generations']} per prompt)")
    else:
        what += f"; {recipe.get('epochs', 1)} epoch(s), learning rate {recipe['learning_rate']}, seed {recipe['seed']}"
    return f"- stage **{name}**: {what}."


def card(pipeline: Path, evals: Path, stage: str, arm: str) -> str:
    stages = STAGES[: STAGES.index(stage) + 1]
    recipes = {s: yaml.safe_load((pipeline / s / "recipe.yaml").read_text()) for s in stages}
    versions = json.loads((pipeline / stage / "versions.json").read_text())
    lines = [
        "# bundled-abstain: SmolLM2-135M-Instruct + the cpu-demo LoRA adapter", "",
        "A LoRA adapter (r 16, alpha 32, every linear layer; float16) for the bundled SmolLM2-135M-Instruct,",
        f"trained on a 2-core CPU by the {' → '.join(f'`{s}`' for s in stages)} stage of `abstain train pipeline --recipe cpu-demo`,",
        "under the `idk` protocol, on abstain's own certified synthetic problems only. Load it with",
        "`abstain eval --model bundled-abstain` (abstain merges it into the bundled model once and caches that).",
        "",
        "**Stages and data seeds.**", "",
        *(_stage_line(s, recipes[s]) for s in stages),
        "",
        *(SFT_ONLY if stage == "sft" else ()),
        "The held-out benchmark's seed (90417) and its questions are refused as training data; validation used",
        "synthesis seed 77. No public benchmark was used for training; one choice looked at them: of two SFT",
        "runs, this recipe's was kept for its transfer-suite numbers (validation alone preferred the other).",
        "",
        "**Software.** " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "**Measured** (`examples/cpu-demo/compare.sh`: the `transfer` suite, idk protocol, greedy, 160 new",
        "tokens; 95% bootstrap CIs):",
        "",
        "| model | " + " | ".join(KEYS) + " |",
        "|" + "---|" * (len(KEYS) + 1),
    ]
    for folder, name in (("base", "bundled (base)"), (arm, "bundled-abstain")):
        metrics, protocol = load(evals / folder)
        block = metrics["protocols"][protocol]
        n = block["n.answerable"] + block["n.unanswerable"]
        lines.append(_row(f"{name}, all {n} items", block))
        for bench, block in metrics["by_benchmark"][protocol].items():
            lines.append(_row(f"{name}, {bench}", block))
    lines += [
        "", "**Limits.** A 135M model: its arithmetic is weak and it abstains by pattern more than by",
        "understanding; see docs/experiments/cpu-demo.md for what transfers out of distribution and what does",
        "not. Apache-2.0 (the base model's license); trained only on abstain's own synthetic data.", "",
        "## The recipes", "",
    ]
    for s in stages:
        lines += [f"{s} stage:", "", "```yaml", (pipeline / s / "recipe.yaml").read_text().rstrip(), "```", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", type=Path)
    parser.add_argument("evals", type=Path)
    parser.add_argument("--stage", choices=STAGES, default="grpo")
    parser.add_argument("--arm", default="sft-grpo-tiar", help="the evaluation folder of the shipped model")
    parser.add_argument("--out", type=Path, default=Path("src/abstain/data/models/bundled-abstain"))
    args = parser.parse_args()
    target = export_adapter(str(args.pipeline / args.stage), args.out,
                            card(args.pipeline, args.evals, args.stage, args.arm))
    size = (target / "adapter_model.safetensors").stat().st_size
    print(f"{target}: adapter {size / 2**20:.2f} MB")


if __name__ == "__main__":
    main()
