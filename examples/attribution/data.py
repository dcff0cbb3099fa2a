"""The training items of every arm of docs/experiments/attribution.md, and the answerable ones to probe.

    python examples/attribution/data.py runs/attribution

writes ``data/real.jsonl`` (500 UMWP pairs, seed 0, after the evaluation guard), ``data/synth.jsonl`` (1,000
certified synthetic problems: seed 21, plain, 35% twins, 10% hard, as the shipped adapter's mix),
``data/mixed.jsonl`` (250 of those UMWP pairs and 500 of those synthetic problems) and ``data/real-answerable.jsonl``,
``data/synth-answerable.jsonl`` (their answerable items: what ``abstain probe`` measures the policy on), and
``data/transfer-umwp.jsonl`` (the transfer suite's 50 UMWP pairs: an in-distribution evaluation, reported apart) and
``data/transfer-ood.jsonl`` (the transfer suite's other 280 items: the final table's, with ``abstain-test-sum``).
Rerunning rewrites the same files (everything is seeded).
"""

from __future__ import annotations

import sys
from pathlib import Path

from abstain.data.real_text import umwp_pairs
from abstain.data.suites import load_suite
from abstain.schema import write_jsonl
from abstain.train.data.mix import MixConfig, training_items


def main(out: Path) -> None:
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    real, report = umwp_pairs(500, seed=0)
    print(report.summary())
    synth = training_items(MixConfig(n=1000, seed=21, unanswerable_ratio=0.35, hard_ratio=0.1, cue_match=False))
    mixed = real[:500] + synth[:500]  # the first 250 UMWP pairs (each original then its twin) and 500 problems
    for name, items in (("real", real), ("synth", synth), ("mixed", mixed)):
        write_jsonl(data / f"{name}.jsonl", items)
        print(f"{name}: {len(items)} items, {sum(i.label == 'unanswerable' for i in items)} unanswerable")
    for name, items in (("real", real), ("synth", synth)):
        answerable = [i for i in items if i.label == "answerable"]
        write_jsonl(data / f"{name}-answerable.jsonl", answerable)
        print(f"{name}: {len(answerable)} answerable items to probe")
    transfer = load_suite("transfer").items
    near = [i for i in transfer if i.source.startswith("umwp")]
    write_jsonl(data / "transfer-umwp.jsonl", near)
    print(f"transfer-umwp: {len(near)} items (in distribution, evaluated apart)")
    far = [i for i in transfer if not i.source.startswith("umwp")]
    write_jsonl(data / "transfer-ood.jsonl", far)
    print(f"transfer-ood: {len(far)} items (the final table, with abstain-test-sum)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/attribution"))
