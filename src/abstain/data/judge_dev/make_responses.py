"""Regenerate the model-written half of the judge development set (labels are added by hand).

Picks real items from the shipped benchmarks (UMWP, MiP, TreeCut, GSM8K) with a fixed seed, asks the
bundled SmolLM2-135M-Instruct for a response under one of abstain's protocols (rotating), and writes
response rows without labels. The responses in ``dev.jsonl`` were produced this way against a local
``python -m llama_cpp.server`` serving the bundled GGUF, then read and labelled one by one.

Usage::

    python -m llama_cpp.server --model "$(python -c 'from abstain.backends.bundled import gguf_path; print(gguf_path())')" --port 8077 &
    python src/abstain/data/judge_dev/make_responses.py --base-url http://127.0.0.1:8077/v1 --out /tmp/raw.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from abstain.backends.base import GenerationConfig
from abstain.backends.openai import OpenAIBackend
from abstain.protocols import get_protocol
from abstain.schema import Item, ResponseRow, write_jsonl

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
UMWP_KINDS = {1: "missing_key_info", 2: "ambiguous_key_info", 3: "unrealistic_conditions", 4: "unrelated_object", 5: "question_missing"}
PROTOCOLS = ("idk", "attribution", "aca", "clarify", "abstention_only")


def _removed_sentences(full: str, short: str) -> str | None:
    """The sentences of ``full`` that MiP deleted to make ``short`` (its missing premise)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", full) if s.strip()]
    gone = [s for s in sentences if s not in short]
    return " ".join(gone) or None


def pick_items(seed: int) -> list[Item]:
    rng = random.Random(seed)
    items: list[Item] = []
    umwp = [json.loads(line) for line in (BENCH / "umwp" / "StandardDataset.jsonl").open()]
    for kind, name in UMWP_KINDS.items():
        pool = [r for r in umwp if not r["answerable"] and r["category"] == kind]
        for r in rng.sample(pool, 10):
            items.append(Item(id=f"umwp-{r['id']}", question=r["question"], answers=[], label="unanswerable",
                              perturbation=name, source=f"umwp/{r['source']}", category="reasoning",
                              meta={"source_id": r["relevant_ids"][0] if r["relevant_ids"] else None}))
    for r in rng.sample([r for r in umwp if r["answerable"]], 12):
        items.append(Item(id=f"umwp-{r['id']}", question=r["question"], answers=r["answer"], label="answerable",
                          source=f"umwp/{r['source']}", category="reasoning"))
    mip = json.loads((BENCH / "mip" / "mip_gsm8k.json").read_text())
    for i in rng.sample(range(len(mip)), 22):
        r = mip[i]
        items.append(Item(id=f"mip-gsm8k-{i}", question=r["insufficient_question"], answers=[], label="unanswerable",
                          perturbation="premise_removal", gap=_removed_sentences(r["question"], r["insufficient_question"]),
                          source="mip/gsm8k", category="reasoning"))
    svamp = json.loads((BENCH / "mip" / "mip_svamp.json").read_text())
    for i in rng.sample(range(len(svamp)), 8):
        items.append(Item(id=f"mip-svamp-{i}", question=svamp[i]["insufficient_question"], answers=[],
                          label="unanswerable", perturbation="question_mismatch", source="mip/svamp", category="reasoning"))
    formula = json.loads((BENCH / "mip" / "mip_formula.json").read_text())
    for i in rng.sample(range(len(formula)), 4):
        items.append(Item(id=f"mip-formula-{i}", question=formula[i]["insufficient_question"], answers=[],
                          label="unanswerable", perturbation="undefined_variables", source="mip/formula", category="reasoning"))
    for path in sorted((BENCH / "treecut").glob("*hallu-True*.jsonl"))[:2]:
        rows = [json.loads(line) for line in path.open()]
        depth = re.search(r"numVars-(\d+)", path.name).group(1)
        for i in rng.sample(range(len(rows)), 6):
            target = re.search(r"calculate the (.+?)\.?$", rows[i]["proof"])
            items.append(Item(id=f"treecut-v{depth}-{i}", question=rows[i]["problem"], answers=[], label="unanswerable",
                              perturbation="underdetermined_system", gap=None if not target else f"one more equation to pin down the {target.group(1)}",
                              source="treecut", category="reasoning"))
    gsm = [json.loads(line) for line in (BENCH / "gsm8k" / "test.jsonl").open()]
    for i in rng.sample(range(len(gsm)), 12):
        answer = gsm[i]["answer"].split("####")[-1].strip().replace(",", "")
        items.append(Item(id=f"gsm8k-{i}", question=gsm[i]["question"], answers=[answer], label="answerable",
                          source="gsm8k", category="reasoning"))
    assert len({it.id for it in items}) == len(items), "duplicate item ids"
    return items


#: Demonstrations for the few-shot batch (our own toy problems, not benchmark items): the 135M model
#: rarely boxes anything zero-shot; with these it also produces boxed refusals and questions.
DEMOS = (
    Item(id="demo-1", question="A pen costs $2. How much do 3 pens cost?", answers=["6"], label="answerable"),
    Item(id="demo-2", question="Sam buys some apples at $3 each. How much does he pay?", answers=[],
         label="unanswerable", gap="how many apples Sam buys"),
    Item(id="demo-3", question="Mia has 12 stickers and gives 5 away. How many are left?", answers=["7"], label="answerable"),
)


def pick_more(seed: int, exclude: set[str]) -> list[Item]:
    """A second, disjoint draw for the few-shot batch (30 unanswerable, 10 answerable)."""
    rng = random.Random(seed)
    pool = [it for it in pick_items(seed) if it.id not in exclude]
    unanswerable = [it for it in pool if it.label == "unanswerable"]
    answerable = [it for it in pool if it.label == "answerable"]
    return rng.sample(unanswerable, 30) + rng.sample(answerable, 10)


def pick_synth(seed: int, n: int) -> list[Item]:
    """Unanswerable synthesized items (structured gaps: ``gap_variable``) from the held-out synthesis set."""
    rows = [json.loads(line) for line in (BENCH.parent / "synth" / "heldout.jsonl").open()]
    pool = [r for r in rows if r["label"] == "unanswerable" and r.get("gap_variable")]
    return [Item(**r) for r in random.Random(seed).sample(pool, n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--max-new-tokens", type=int, default=320)
    parser.add_argument("--shots", action="store_true", help="The few-shot batch: new items, three demonstrations.")
    parser.add_argument("--synth", type=int, default=0, help="Few-shot clarify-protocol responses on N synthesized items.")
    args = parser.parse_args()
    if args.synth:
        items, demos = pick_synth(args.seed + 2, args.synth), DEMOS
    elif args.shots:
        items, demos = pick_more(args.seed + 1, {it.id for it in pick_items(args.seed)}), DEMOS
    else:
        items, demos = pick_items(args.seed), ()
    backend = OpenAIBackend(args.model, base_url=args.base_url, concurrency=2, cache=True)
    config = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=0.7, top_p=0.95, seed=args.seed)
    rows = []
    for n, item in enumerate(items):
        protocol = get_protocol("clarify" if args.synth else PROTOCOLS[n % len(PROTOCOLS)])
        [[text]] = backend.generate([protocol.messages(item, demos)], config)
        row = ResponseRow(**item.model_dump(), response=text, model="SmolLM2-135M-Instruct-Q4_1", protocol=protocol.name)
        if demos:
            row.meta["shots"] = len(demos)
        rows.append(row)
        print(f"{n + 1}/{len(items)} {item.id} {protocol.name}", flush=True)
    backend.close()
    write_jsonl(args.out, rows)


if __name__ == "__main__":
    main()
