"""In-context demonstrations drawn from a pool disjoint from the evaluated items.

``choose_demos(item_set, shots=K, unanswerable=J, seed)`` picks, for each benchmark of the evaluated
items, ``J`` unanswerable and ``K - J`` answerable demonstrations (Abstain-R1's best ICL setting is 1 of 5)
from the item set's pool: the same benchmark first, then its twin benchmark, then the same family (GSM8K-style word problems,
competition math), the same category, and finally any pool item — so a GSM8K item gets MiP GSM8K or
UMWP missing-premise demos. The pool never holds an evaluated item or its twin. A custom file with an
empty pool falls back to the shipped benchmarks of the same category. Demos are rendered by
:meth:`abstain.protocols.Protocol.messages` as earlier chat turns.

Example:
    >>> from abstain.data.suites import load_suite
    >>> s = load_suite("quick", limit=4)
    >>> demos = choose_demos(s, shots=5, unanswerable=1, seed=0)
    >>> sorted(demos) == sorted({benchmark_of(i) for i in s.items})
    True
    >>> all(sum(d.label == "unanswerable" for d in ds) == 1 and len(ds) == 5 for ds in demos.values())
    True
    >>> {d.id for ds in demos.values() for d in ds} & {i.id for i in s.items}
    set()
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from abstain.data.loaders import BENCHMARKS, load_benchmark
from abstain.data.suites import ItemSet, benchmark_of
from abstain.schema import Item

__all__ = ["FAMILIES", "RELATED", "choose_demos"]

#: benchmarks whose items look alike, for drawing demonstrations when a benchmark has too few
FAMILIES: dict[str, str] = {
    "gsm8k": "word_problems",
    "mip_gsm8k": "word_problems",
    "umwp": "word_problems",
    "mip_svamp": "word_problems",
    "treecut": "word_problems",
    "heldout": "word_problems",
    "math500": "competition_math",
    "mip_formula": "competition_math",
    "abstain_test_sum": "competition_math",
    "selfaware": "knowledge",
    **dict.fromkeys(("coconot", "bbq", "mediq", "moralchoice", "bbh_disambiguation_qa", "bigbench_known_unknowns",
                     "bigbench_sufficient_information", "abstain_test"), "knowledge"),
}
#: the benchmark a benchmark's twins come from (tried right after the benchmark itself)
RELATED: dict[str, str] = {
    "gsm8k": "mip_gsm8k",
    "mip_gsm8k": "gsm8k",
    "math500": "mip_formula",
    "mip_formula": "math500",
    "mip_svamp": "umwp",
}


def _usable(item: Item, label: str) -> bool:
    return item.label == label and (label == "unanswerable" or bool(item.answers))


def _draw(pool: Sequence[Item], like: Item, label: str, k: int, rng: random.Random, taken: set[str]) -> list[Item]:
    """``k`` pool items of ``label``, closest to ``like`` first (benchmark, family, category, any)."""
    bench = benchmark_of(like)
    tiers = (
        lambda i: benchmark_of(i) == bench,
        lambda i: benchmark_of(i) == RELATED.get(bench),
        lambda i: FAMILIES.get(benchmark_of(i), benchmark_of(i)) == FAMILIES.get(bench, bench),
        lambda i: i.category == like.category,
        lambda i: True,
    )
    out: list[Item] = []
    for tier in tiers:
        if len(out) == k:
            break
        candidates = [i for i in pool if i.id not in taken and _usable(i, label) and tier(i)]
        for item in rng.sample(candidates, min(k - len(out), len(candidates))):
            out.append(item)
            taken.add(item.id)
    return out


def choose_demos(item_set: ItemSet, shots: int, unanswerable: int, seed: int) -> dict[str, list[Item]]:
    """Demonstrations per benchmark of ``item_set.items`` (empty dict when ``shots`` is 0)."""
    if shots < 0 or not 0 <= unanswerable <= shots:
        raise ValueError("--shots-unanswerable must be between 0 and --shots")
    if shots == 0:
        return {}
    evaluated = {i.id for i in item_set.items}
    pairs = {i.meta.get("pair_id") for i in item_set.items} - {None}
    pool = list(item_set.pool)
    if not pool:  # a custom file evaluated whole: fall back to the shipped benchmarks
        categories = {i.category for i in item_set.items}
        pool = [
            i for name in BENCHMARKS for i in load_benchmark(name)
            if i.category in categories and i.id not in evaluated and i.meta.get("pair_id") not in pairs
        ]
    out: dict[str, list[Item]] = {}
    for bench in sorted({benchmark_of(i) for i in item_set.items}):
        like = next(i for i in item_set.items if benchmark_of(i) == bench)
        rng = random.Random(f"{seed}:{bench}")
        taken = set(evaluated)
        demos = _draw(pool, like, "unanswerable", unanswerable, rng, taken)
        demos += _draw(pool, like, "answerable", shots - unanswerable, rng, taken)
        if len(demos) < shots:
            raise ValueError(
                f"only {len(demos)} demonstrations for {bench} (asked for {shots}, {unanswerable} unanswerable): "
                "the pool of items not evaluated is too small"
            )
        rng.shuffle(demos)
        out[bench] = demos
    return out
