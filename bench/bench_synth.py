"""Synthesis speed: certified missing-premise pairs per second on one core (goal: >= 2,000/s).

A *certified pair* is the whole job of ``abstain synth --kind missing-premise``: draw a problem
graph, render it in English, perturb a critical condition, prove with exact arithmetic that the
original determines its answer and the twin does not (two positive-integer witnesses), and build the
two items. The baseline, measured in the same run on the same pairs, certifies with sympy instead
(``abstain.synth.verify``: ``linsolve`` + the inequalities) — the naive way to get the same proof.

Two ratios are printed: certification alone (fast exact path vs sympy, same graphs) and the end-to-end
pipeline (fast vs a pipeline whose certification is sympy: drawing + sympy proofs). Times are CPU
seconds of this process pinned to one core (best of ``--repeat``), so other jobs sharing the machine
do not distort them; the parse cache is cleared before every timed run.

    python bench/bench_synth.py [--pairs 3000] [--baseline-pairs 150] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from abstain.synth.certify import certify_answerable, certify_unanswerable
from abstain.synth.exact import parse_relation
from abstain.synth.missing_premise import make_pair
from abstain.synth.perturb import OPERATORS
from abstain.synth.verify import verify_item
from _results import report  # bench/_results.py (scripts run from bench/)

SEED = 123  # any seed but the held-out one


def pairs(n: int, start: int = 0) -> list:
    return [make_pair(SEED, i, OPERATORS[i % 6], depth=(2, 3, 4)[i % 3], distractors=(1, 2)[i % 2])
            for i in range(start, start + n)]


def best_of(repeat: int, fn) -> float:  # type: ignore[no-untyped-def]
    """Best CPU time of ``repeat`` runs (CPU seconds of this process: robust to other jobs on the machine)."""
    best = float("inf")
    for _ in range(repeat):
        parse_relation.cache_clear()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def fast_certify(batch: list) -> None:
    for p in batch:
        a = certify_answerable(p.original.graph, p.original.answers[0])
        u = certify_unanswerable(p.twin.graph, hint=p.twin.meta["witnesses"][0])
        assert a.ok and u.ok


def sympy_certify(batch: list) -> None:
    for p in batch:
        assert not verify_item(p.original) and not verify_item(p.twin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--baseline-pairs", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core

    t_pipeline = best_of(args.repeat, lambda: pairs(args.pairs))
    sample = pairs(args.baseline_pairs)
    t_fast_cert = best_of(args.repeat, lambda: fast_certify(sample))
    t_sympy_cert = best_of(1, lambda: sympy_certify(sample))
    per_pair_fast = t_pipeline / args.pairs
    # a pipeline certifying with sympy: the same drawing and rendering, sympy instead of the exact path
    per_pair_draw = per_pair_fast - t_fast_cert / args.baseline_pairs
    per_pair_naive = per_pair_draw + t_sympy_cert / args.baseline_pairs
    result = {
        "pairs": args.pairs,
        "certified_pairs_per_s": round(1 / per_pair_fast),
        "baseline_sympy_pipeline_pairs_per_s": round(1 / per_pair_naive, 1),
        "pipeline_speedup (fast / sympy)": round(per_pair_naive / per_pair_fast, 1),
        "certification_only_pairs_per_s": round(args.baseline_pairs / t_fast_cert),
        "sympy_certification_pairs_per_s": round(args.baseline_pairs / t_sympy_cert, 1),
        "certification_speedup (fast / sympy)": round(t_sympy_cert / t_fast_cert, 1),
        "goal_met (>= 2000 pairs/s)": 1 / per_pair_fast >= 2000,
        "python": platform.python_version(),
    }
    report("bench_synth", result)


if __name__ == "__main__":
    main()
