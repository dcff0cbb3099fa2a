"""Write the one-step arithmetic suite of the confidence measurement (docs/experiments/confidence.md).

``quick`` is nearly all wrong for the bundled 135M model, so a confidence estimate has nothing to separate there.
These items are one-step word problems with one-digit numbers (one addition or subtraction of two numbers from 1 to
9; a difference is never negative), which the bundled model answers right 20–25% of the time (greedy; the
stated-answer judge, lenient format: docs/experiments/confidence.md; with operands up to 19 it was 16% under the
earlier judge), each with a missing-premise twin (the first quantity replaced by "some"), the same construction as
UMWP's and ACA-RL's "remove a premise" perturbation. Generated from a fixed seed: the file is reproducible byte for
byte.

    python examples/confidence/one_step_items.py [--pairs 100] [--seed 0] [--out docs/experiments/confidence-one-step.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

NAMES = ["Tom", "Ann", "Sam", "Lily", "Ben", "Mia", "Leo", "Zoe", "Max", "Eva"]
THINGS = ["apples", "pencils", "marbles", "stickers", "books", "cookies", "shells", "coins"]
TEMPLATES = [  # (answerable, unanswerable, operation)
    ("{n} has {a} {t} and gets {b} more. How many {t} does {n} have now?",
     "{n} has some {t} and gets {b} more. How many {t} does {n} have now?", "+"),
    ("{n} has {a} {t} and gives away {b}. How many {t} does {n} have left?",
     "{n} has some {t} and gives away {b}. How many {t} does {n} have left?", "-"),
    ("There are {a} {t} in a box. {n} puts in {b} more. How many {t} are in the box?",
     "There are some {t} in a box. {n} puts in {b} more. How many {t} are in the box?", "+"),
    ("{n} had {a} {t}. {n} lost {b} of them. How many {t} does {n} have?",
     "{n} had some {t}. {n} lost {b} of them. How many {t} does {n} have?", "-"),
]


def items(pairs: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(pairs):
        answerable, unanswerable, op = TEMPLATES[i % len(TEMPLATES)]
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        if op == "-" and b >= a:  # a positive difference: the larger number first
            a, b = b + 1 if a == b else b, a
        fill = {"n": rng.choice(NAMES), "t": rng.choice(THINGS), "a": a, "b": b}
        answer = a + b if op == "+" else a - b
        meta = {"pair": f"os{i:03d}", "operation": op}
        out.append({"id": f"os{i:03d}-a", "question": answerable.format(**fill), "answers": [str(answer)],
                    "label": "answerable", "category": "reasoning", "source": "one_step", "meta": meta})
        out.append({"id": f"os{i:03d}-u", "question": unanswerable.format(**fill), "answers": [],
                    "label": "unanswerable", "category": "reasoning", "perturbation": "remove_premise",
                    "gap": "the first quantity", "source": "one_step", "meta": meta})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("docs/experiments/confidence-one-step.jsonl"))
    args = parser.parse_args()
    rows = items(args.pairs, args.seed)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{args.out}: {len(rows)} items")


if __name__ == "__main__":
    main()
