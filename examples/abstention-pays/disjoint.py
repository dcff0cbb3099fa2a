"""The SFT items of S0-disjoint: the ladder's train split drawn with another seed (12), every pair whose answerable
question is one of the RL train file's left out (and a twin whose text is), so the start's probe on the RL items measures what it can do, not
what it memorized.

    python examples/abstention-pays/disjoint.py OUT     # reads OUT/data/train.jsonl, writes OUT/data/sft-disjoint.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

from abstain.schema import Item, read_jsonl, write_jsonl
from abstain.synth.ladder import LadderConfig, generate_ladder


def main(out: Path) -> None:
    taken = {item.question for item in read_jsonl(out / "data" / "train.jsonl", Item)}
    rows = list(generate_ladder(LadderConfig(n_per_rung=24, seed=12, split="train")))
    dropped = {r.pair_id for r in rows if r.label == "answerable" and r.question in taken}
    kept = [r for r in rows if r.pair_id not in dropped and r.question not in taken]  # a twin's text taken: it goes
    write_jsonl(out / "data" / "sft-disjoint.jsonl", kept)
    print(f"{len(kept)} rows ({len(rows) - len(kept)} left out: they or their pair share a question with the RL items)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
