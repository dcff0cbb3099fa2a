"""Reward throughput: abstain's reward presets as TRL calls them, on one core (goal: >= 10k completions/s).

The completions are the scoring benchmark's (``bench_score.py``: real UMWP items x six answer styles — boxed
right / wrong number, I don't know, <DATA_UNCERTAIN>, Abstain-R1 tags with a question, no box), grouped
as a GRPO batch is: ``--group`` completions per prompt, the dataset columns as TRL hands them (one list per
column, the item as JSON in the ``item`` column, as ``abstain.train.data.rows`` writes it). Every preset runs
through the full parse -> rule judge path (behavior and clarification rules on, no Math-Verify call:
checked). The baseline, measured in the same run, is parsing alone (``parse_response`` of the same texts).

    python bench/bench_rewards.py [--rows 20000] [--group 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from abstain.judges.answer import math_equal
from abstain.parsing import parse_response
from abstain.schema import Item
from abstain.train.rewards.presets import PRESETS, make_reward
from _results import report  # bench/_results.py (scripts run from bench/)
from bench_score import best_of, build_rows


def trl_batch(lines: list[str], group: int) -> tuple[list[list[dict]], dict[str, list]]:
    """Completions and columns as TRL passes them: each prompt's item repeated for its group."""
    completions, items = [], []
    for line in lines:
        row = json.loads(line)
        completions.append([{"role": "assistant", "content": row.pop("response")}])
        row.pop("model")
        items.append(Item.model_validate(row).model_dump_json())
    # a prompt's `group` completions share its item (as in GRPO): item i // group
    items = [items[(i // group) * group] for i in range(len(items))]
    return completions, {"item": items, "id": [json.loads(i)["id"] for i in items]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core

    completions, columns = trl_batch(build_rows(args.rows), args.group)
    texts = [c[0]["content"] for c in completions]
    misses = math_equal.cache_info().misses
    t_parse = best_of(args.repeat, lambda: [parse_response(t) for t in texts])
    result: dict[str, object] = {"completions": args.rows, "group": args.group,
                                 "parse_per_s (baseline)": round(args.rows / t_parse)}
    for name in PRESETS:
        reward = make_reward(name)
        values = reward(prompts=[None] * args.rows, completions=completions, **columns)  # warm caches
        assert len(values) == args.rows
        seconds = best_of(args.repeat, lambda r=reward: r(prompts=[None] * args.rows, completions=completions, **columns))
        result[f"{name}_per_s"] = round(args.rows / seconds)
        result[f"{name} / parse"] = round(seconds / t_parse, 2)
    assert math_equal.cache_info().misses == misses, "the benchmark must not call Math-Verify"
    slowest = min(v for k, v in result.items() if k.endswith("_per_s") and "baseline" not in k)
    result["slowest preset per_s"] = slowest
    result["goal_met (>= 10k/s)"] = slowest >= 10_000
    result["python"] = platform.python_version()
    report("bench_rewards", result)


if __name__ == "__main__":
    main()
