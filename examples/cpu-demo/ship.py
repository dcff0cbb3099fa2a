"""Ship the cpu-demo result as the ``bundled-abstain`` adapter: float16 LoRA weights and a model card.

    python examples/cpu-demo/ship.py runs/cpu-demo runs/cpu-demo/eval [src/abstain/data/models/bundled-abstain]

Reads the pipeline folder (its ``grpo`` stage holds the adapter trained through SFT and GRPO-TIAR, the
``recipe.yaml`` of each stage, ``versions.json``) and the evaluation folders of ``compare.sh`` (base and
sft-grpo-tiar) for the measured numbers the card states.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from abstain.train.runner import export_adapter

KEYS = ("r1.u_ref", "r1.a_fu", "r1.discrimination", "r1.a_acc", "ab.f1")


def _row(name: str, block: dict) -> str:
    cells = []
    for key in KEYS:
        value, ci = block.get(key), block.get(f"{key}_ci")
        cells.append("—" if value is None else f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{value:.2f}")
    return f"| {name} | " + " | ".join(cells) + " |"


def card(pipeline: Path, evals: Path) -> str:
    sft = (pipeline / "sft" / "recipe.yaml").read_text()
    grpo = (pipeline / "grpo" / "recipe.yaml").read_text()
    versions = json.loads((pipeline / "grpo" / "versions.json").read_text())
    lines = [
        "# bundled-abstain: SmolLM2-135M-Instruct + the cpu-demo LoRA adapter", "",
        "A LoRA adapter (r 16, alpha 32, every linear layer; float16) for the bundled SmolLM2-135M-Instruct,",
        "trained on a 2-core CPU by `abstain train pipeline --recipe cpu-demo`: cold-start SFT on self-checked",
        "check-then-decide targets of certified synthetic problems, then GRPO with the `ternary` reward and",
        "TIAR advantages on fresh synthetic problems, both under the `idk` protocol. Load it with",
        "`abstain eval --model bundled-abstain` (abstain merges it into the bundled model once and caches that).",
        "",
        "**Data seeds.** SFT: synthesis seed 21 (480 rows, half missing-premise twins with their originals, all",
        "six perturbations, 10% hard variants); GRPO: synthesis seed 33 (160 problems); validation: seed 77.",
        "The held-out benchmark's seed (90417) and its questions are never used for training. No public",
        "benchmark was used for training or tuning.",
        "",
        "**Software.** " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "**Measured** (`examples/cpu-demo/compare.sh`: the `transfer` suite, idk protocol, greedy, 160 new",
        "tokens; 95% bootstrap CIs):",
        "",
        "| model | " + " | ".join(KEYS) + " |",
        "|" + "---|" * (len(KEYS) + 1),
    ]
    for arm, name in (("base", "bundled (base)"), ("sft-grpo-tiar", "bundled-abstain")):
        metrics = json.loads((evals / arm / "metrics.json").read_text())
        protocol = next(iter(metrics["protocols"]))
        lines.append(_row(f"{name}, all 380 items", metrics["protocols"][protocol]))
        for bench, block in metrics["by_benchmark"][protocol].items():
            lines.append(_row(f"{name}, {bench}", block))
    lines += [
        "", "**Limits.** A 135M model: its arithmetic is weak and it abstains by pattern more than by",
        "understanding; see the README's comparison for what transfers out of distribution and what does",
        "not. Apache-2.0 (the base model's license); trained only on abstain's own synthetic data.", "",
        "## The recipes", "", "SFT stage:", "", "```yaml", sft.rstrip(), "```", "", "GRPO stage:", "", "```yaml",
        grpo.rstrip(), "```", "",
    ]
    return "\n".join(lines)


def main() -> None:
    pipeline, evals = Path(sys.argv[1]), Path(sys.argv[2])
    out = Path(sys.argv[3]) if len(sys.argv) > 3 else Path("src/abstain/data/models/bundled-abstain")
    target = export_adapter(str(pipeline / "grpo"), out, card(pipeline, evals))
    size = (target / "adapter_model.safetensors").stat().st_size
    print(f"{target}: adapter {size / 2**20:.2f} MB")


if __name__ == "__main__":
    main()
