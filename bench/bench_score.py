"""Scoring speed: 20,000 responses with the rule judge on one core (goal: under 1 s per 20k).

Responses are built from the real UMWP items (every item x a few answer styles: boxed right/wrong
number, I don't know, <DATA_UNCERTAIN>, Abstain-R1 tags with a clarifying question, no box), so the
rule judge decides everything by exact match / the numeric fast path: no Math-Verify call is made
(checked). The baseline, measured in the same run, is ``json.loads`` of the same 20k lines — the
floor cost of merely reading them.

It also measures the reward path, :func:`abstain.scoring.score_completions` on (item columns, text)
pairs — the cost per completion that a reward function pays — with the columns as plain dicts (validated
on the way in, as a trainer's dataset rows arrive) and as ``Item`` objects, against parsing alone.

    python bench/bench_score.py [--rows 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from abstain.judges import RuleJudge
from abstain.judges.answer import math_equal
from abstain.parsing import parse_response
from abstain.schema import Item, ResponseRow
from abstain.scoring import score_completions, score_rows
from _results import report  # bench/_results.py (scripts run from bench/)

ROOT = Path(__file__).resolve().parents[1]
UMWP = ROOT / "src" / "abstain" / "data" / "benchmarks" / "umwp" / "StandardDataset.jsonl"
STYLES = (
    "We compute step by step.\n\nSo the answer is \\boxed{{{gold}}}.",
    "Adding everything up gives \\boxed{{{wrong}}}.",
    "I cannot work this out reliably. \\boxed{{I don't know.}}",
    "The question leaves a quantity unspecified. \\boxed{{<DATA_UNCERTAIN>}}",
    "<thinking>A number is missing.</thinking><answer>\\boxed{{I don't know.}} How many were there at first?</answer>",
    "Let me think... the result is probably {gold} or so",
)


def build_rows(n: int) -> list[str]:
    items = [json.loads(line) for line in UMWP.open()]
    lines = []
    i = 0
    while len(lines) < n:
        item = items[i % len(items)]
        style = STYLES[(i // len(items) + i) % len(STYLES)]
        answer = item["answer"]
        golds = answer if isinstance(answer, list) else ([] if answer is None else [answer])
        gold = golds[0] if golds else 7
        response = style.format(gold=gold, wrong=float(gold) + 1)
        row = {
            "id": f"umwp-{item['id']}-{i}", "question": item["question"], "answers": golds,
            "label": "answerable" if item["answerable"] else "unanswerable", "category": "reasoning",
            "response": response, "model": "bench",
        }
        lines.append(json.dumps(row))
        i += 1
    return lines


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core

    lines = build_rows(args.rows)
    rows = [ResponseRow.model_validate_json(line) for line in lines]
    judge = RuleJudge()
    misses = math_equal.cache_info().misses

    t_json = best_of(args.repeat, lambda: [json.loads(line) for line in lines])
    t_validate = best_of(args.repeat, lambda: [ResponseRow.model_validate_json(line) for line in lines])
    t_score = best_of(args.repeat, lambda: list(score_rows(rows, judge)))
    columns = [{k: v for k, v in json.loads(line).items() if k not in ("response", "model")} for line in lines]
    items = [Item.model_validate(c) for c in columns]
    texts = [r.response for r in rows]
    t_parse = best_of(args.repeat, lambda: [parse_response(t) for t in texts])
    t_dicts = best_of(args.repeat, lambda: score_completions(columns, texts, judge))
    t_items = best_of(args.repeat, lambda: score_completions(items, texts, judge))
    assert math_equal.cache_info().misses == misses, "the benchmark must not call Math-Verify"

    per_20k = t_score * 20_000 / args.rows
    result = {
        "rows": args.rows,
        "score_s": round(t_score, 4),
        "score_s_per_20k": round(per_20k, 4),
        "validate_s": round(t_validate, 4),
        "json_loads_s (baseline)": round(t_json, 4),
        "score / json_loads": round(t_score / t_json, 2),
        "goal_met (< 1 s per 20k)": per_20k < 1.0,
        "completion_us (columns as dicts)": round(t_dicts / args.rows * 1e6, 2),
        "completion_us (Item objects)": round(t_items / args.rows * 1e6, 2),
        "parse_us (baseline)": round(t_parse / args.rows * 1e6, 2),
        "completion (dicts) / parse": round(t_dicts / t_parse, 2),
        "python": platform.python_version(),
    }
    report("bench_score", result)


if __name__ == "__main__":
    main()
