"""Ship a cpu-demo result as the ``bundled-abstain`` adapter: float16 LoRA weights and a model card.

    python examples/cpu-demo/ship.py runs/cpu-demo runs/cpu-demo/eval --stage grpo --arm sft-grpo-tiar
    python examples/cpu-demo/ship.py runs/cpu-demo runs/cpu-demo/eval --stage sft --arm sft
    python examples/cpu-demo/ship.py runs/ablation runs/final/eval --stage sft --arm sft-plain \
        --folder sft=runs/ablation/round1-sft --note "..."      # the second round's pick: its SFT start
    python examples/cpu-demo/ship.py runs/ablation runs/final/eval --stage sft --arm sft-plain-3x \
        --folder sft=runs/ablation/sft-plain-3x --recipe cpu-demo-sft-3x --note "..."   # the third round's pick
    python examples/cpu-demo/ship.py ... --card-only              # the card alone; the weights stay as they are

Reads the pipeline folder (``--stage``: the stage whose adapter is shipped, with ``recipe.yaml`` and
``versions.json``; every stage up to it is described on the card; ``--folder STAGE=DIR`` when a stage was
trained in another folder, e.g. by the ablation) and the evaluation folders of the final comparison (``base``
and ``--arm``) for the measured numbers the card states, beside the numeral-count shortcut's own score
(``cue.le2_discrimination``). The card also states the shortcut audit of each stage's training data
(:func:`abstain.data.cues.audit`, as ``abstain cues --recipe`` prints it). ``--out`` defaults to
``src/abstain/data/models/bundled-abstain``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from abstain.train.trainers.runner import export_adapter
from table import cell, load  # the sibling script

KEYS = ("r1.u_ref", "r1.a_fu", "r1.discrimination", "r1.discrimination_within_count", "r1.a_acc", "ab.f1")
STAGES = ("sft", "grpo")
SFT_ONLY = (
    "No GRPO stage is in this adapter: validation did not prefer one (docs/experiments/shortcut.md; how, in the",
    "next paragraph).",
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


def _audit_line(name: str, folder: Path) -> str:
    """The shortcut audit of a stage's training data (its recipe's data, drawn again)."""
    from abstain.data.cues import AuditConfig, audit
    from abstain.train.data.build import load_items
    from abstain.train.recipe import load_recipe

    recipe = load_recipe(str(folder / "recipe.yaml"))
    block = audit(load_items(recipe.data, recipe.allow_eval_suites), AuditConfig(resamples=1000))["all"]

    def fig(key: str) -> str:
        ci = block[f"{key}_ci"]
        return f"{block[key]:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")

    return (f"- stage **{name}** data ({block['n_answerable']} answerable / {block['n_unanswerable']} unanswerable): "
            f"numeral-count AUC {fig('number_count_auc')}, length AUC {fig('length_auc')}, vague-words AUC "
            f"{fig('vague_auc')}, logistic AUC on all surface features {fig('logistic_auc')}.")


def card(pipeline: Path, evals: Path, stage: str, arm: str, folders: dict[str, Path] | None = None,
         note: str = "", recipe: str | None = None) -> str:
    """The model card; ``recipe``: the shipped single-stage recipe that trained it (default: the cpu-demo pipeline)."""
    stages = STAGES[: STAGES.index(stage) + 1]
    where = {s: (folders or {}).get(s, pipeline / s) for s in stages}
    recipes = {s: yaml.safe_load((where[s] / "recipe.yaml").read_text()) for s in stages}
    versions = json.loads((where[stage] / "versions.json").read_text())
    lines = [
        "# bundled-abstain: SmolLM2-135M-Instruct + the cpu-demo LoRA adapter", "",
        "A LoRA adapter (r 16, alpha 32, every linear layer; float16) for the bundled SmolLM2-135M-Instruct,",
        (f"trained on a 2-core CPU by `abstain train {recipes[stage]['kind']} --recipe {recipe}`," if recipe else
         f"trained on a 2-core CPU by the {' → '.join(f'`{s}`' for s in stages)} stage of `abstain train pipeline --recipe cpu-demo`,"),
        "under the `idk` protocol, on abstain's own certified synthetic problems only. Load it with",
        "`abstain eval --model bundled-abstain` (abstain merges it into the bundled model once and caches that).",
        "",
        "**Stages and data seeds.**", "",
        *(_stage_line(s, recipes[s]) for s in stages),
        "",
        "**Shortcut audit of the training data** (`abstain cues --recipe`; 0.5 = the surface cue says nothing about",
        "the label; 95% cluster-bootstrap CIs):", "",
        *(_audit_line(s, where[s]) for s in stages),
        "",
        *(SFT_ONLY if stage == "sft" else ()),
        *((note, "") if note else ()),
        "The held-out benchmark's seed (90417) and its questions are refused as training data; validation used",
        "synthesis seeds 77 and 78. No public benchmark was used for training; one choice looked at them: of two",
        "first-round SFT runs, `cpu-demo-sft`'s was kept for its transfer-suite numbers (validation alone preferred",
        "the other); every later recipe builds on it.",
        "",
        "**Software.** " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "**Measured** (the final comparison, `examples/cpu-demo/final.sh` or `compare.sh`: the `transfer` suite,",
        "idk protocol, greedy, 160 new tokens; 95% bootstrap CIs):",
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
    metrics, protocol = load(evals / arm)
    shortcut = [("all", metrics["protocols"][protocol]), *metrics["by_benchmark"][protocol].items()]
    lines += ["", "The numeral-count shortcut on the same items (`cue.le2_discrimination`: the discrimination of the",
              "rule \"refuse iff the question states <= 2 numbers\", no model): " + ", ".join(
                  f"{bench} {cell(block, 'cue.le2_discrimination', signed=True)}" for bench, block in shortcut) + "."]
    lines += [
        "", "**Limits.** A 135M model: its arithmetic is weak and it abstains by pattern more than by",
        "understanding; see docs/experiments/cpu-demo.md for what transfers out of distribution and what does",
        "not. Apache-2.0 (the base model's license); trained only on abstain's own synthetic data.", "",
        "## The recipes", "",
    ]
    for s in stages:
        lines += [f"{s} stage:", "", "```yaml", (where[s] / "recipe.yaml").read_text().rstrip(), "```", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", type=Path)
    parser.add_argument("evals", type=Path)
    parser.add_argument("--stage", choices=STAGES, default="grpo")
    parser.add_argument("--arm", default="sft-grpo-tiar", help="the evaluation folder of the shipped model")
    parser.add_argument("--out", type=Path, default=Path("src/abstain/data/models/bundled-abstain"))
    parser.add_argument("--folder", action="append", default=[], metavar="STAGE=DIR",
                        help="a stage trained outside the pipeline folder")
    parser.add_argument("--note", default="", help="a paragraph for the card: how this adapter was picked")
    parser.add_argument("--recipe", default=None,
                        help="the shipped recipe that trained the stage on its own (default: the cpu-demo pipeline)")
    parser.add_argument("--card-only", action="store_true",
                        help="write README.md only (a stage folder without weights: they are already in --out)")
    args = parser.parse_args()
    folders = {k: Path(v) for k, _, v in (f.partition("=") for f in args.folder)}
    text = card(args.pipeline, args.evals, args.stage, args.arm, folders, args.note, args.recipe)
    if args.card_only:
        (args.out / "README.md").write_text(text, encoding="utf-8")
        print(f"{args.out / 'README.md'}: card written")
        return
    target = export_adapter(str(folders.get(args.stage, args.pipeline / args.stage)), args.out, text)
    size = (target / "adapter_model.safetensors").stat().st_size
    print(f"{target}: adapter {size / 2**20:.2f} MB")


if __name__ == "__main__":
    main()
