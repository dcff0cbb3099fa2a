"""Suites: named sets of benchmark items, balanced subsets and custom files.

====================  =====================================================================================
suite                 items
====================  =====================================================================================
quick                 120 items, 60 answerable / 60 unanswerable, drawn once with a fixed seed: GSM8K + its
                      MiP twins (8 pairs), UMWP twins (10 pairs, two per UMWP perturbation), held-out synthesis
                      twins (12 pairs, two per ACA-RL perturbation), MATH-500 8, MiP SVAMP 4, MiP formula 4,
                      TreeCut 8 + 8, SelfAware 14 + 14 (knowledge). Sized for the demo: four protocols in
                      about five minutes on 2 cores.
math                  every reasoning benchmark in full (GSM8K, MATH-500, UMWP, MiP x3, TreeCut,
                      Abstain-Test-SUM)
full                  every shipped benchmark, plus ``heldout`` when its file is there
heldout               the synthesis held-out set, ``src/abstain/data/synth/heldout.jsonl``
abstain-test-sum      Abstain-R1's Abstain-Test-SUM: 284 math pairs, the unanswerable twin's ``gap`` = the
                      authors' reference clarification
abstain-test          Abstain-R1's Abstain-Test-wo-SUM: 2,139 rows from AbstentionBench subsets (12 datasets)
abstentionbench-lite  AbstentionBench's licensed datasets and the shipped UMWP, SelfAware and MiP-GSM8K, at
                      most ``LITE_CAP`` = 100 items per label per dataset (twins drawn as pairs), fixed seed
====================  =====================================================================================

:func:`dataset_of` names the dataset a row belongs to in AbstentionBench's sense (its per-dataset,
macro-averaged metrics group by it): ``meta.dataset`` where a loader sets it (``coconot/<category>``,
``bbq``, ``mediq``, ``abstain_test/<subset>``, ``uabench/<file>`` ...), else the benchmark.

``limit`` draws a *balanced* subset deterministically from ``seed``: evenly across labels, then
benchmarks, then perturbations, as far as each group allows — so even ``limit=2`` has one answerable and
one unanswerable item. Items keep the suite's order.

Example:
    >>> picked = select_items(load_suite("quick").items, limit=6, seed=0)
    >>> sorted(i.label for i in picked).count("answerable")
    3
    >>> len(load_suite("quick").items)
    120
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from abstain.data.abstentionbench import LOADERS as ABSTENTIONBENCH_LOADERS
from abstain.data.loaders import BENCHMARKS, load_benchmark
from abstain.data.uabench import PREFIX as UABENCH_PREFIX
from abstain.data.uabench import load_uabench
from abstain.schema import DataError, Item, benchmark_of, dataset_of, read_jsonl

__all__ = [
    "HELDOUT_PATH",
    "SUITES",
    "ItemSet",
    "LITE_CAP",
    "LITE_DATASETS",
    "Quota",
    "benchmark_of",
    "dataset_of",
    "items_digest",
    "load_custom",
    "load_suite",
    "select_items",
]

log = logging.getLogger(__name__)

REASONING = ("gsm8k", "math500", "umwp", "mip_gsm8k", "mip_svamp", "mip_formula", "treecut", "abstain_test_sum")
QUICK_SEED = 0
LITE_SEED = 0
LITE_CAP = 100  # items per label per dataset in abstentionbench-lite
#: benchmarks of abstentionbench-lite, and the AbstentionBench scenario of the shipped ones outside it
LITE_DATASETS = (*ABSTENTIONBENCH_LOADERS, "umwp", "selfaware", "mip_gsm8k")
_LITE_SCENARIO = {"umwp": "underspecified_context", "selfaware": "answer_unknown", "mip_gsm8k": "underspecified_context"}


def heldout_path() -> Path:
    return Path(str(resources.files("abstain") / "data" / "synth" / "heldout.jsonl"))


HELDOUT_PATH = heldout_path()


@dataclass(frozen=True)
class Quota:
    """How many answerable and unanswerable items a suite draws from one benchmark.

    ``paired``: draw unanswerable items with an answerable twin (``meta.pair_id``) and add the twins,
    so ``answerable`` must equal ``unanswerable``.
    """

    answerable: int = 0
    unanswerable: int = 0
    paired: bool = False


QUICK: dict[str, Quota] = {
    "mip_gsm8k": Quota(8, 8, paired=True),
    "umwp": Quota(10, 10, paired=True),
    "heldout": Quota(12, 12, paired=True),
    "math500": Quota(8, 0),
    "mip_svamp": Quota(0, 4),
    "mip_formula": Quota(0, 4),
    "treecut": Quota(8, 8),
    "selfaware": Quota(14, 14),
}

#: the cpu-demo comparison: the held-out synthesis (in distribution) and the public paired benchmarks that
#: training never sees (out of distribution)
TRANSFER: dict[str, Quota] = {
    "heldout": Quota(30, 30, paired=True),
    "umwp": Quota(50, 50, paired=True),
    "mip_gsm8k": Quota(50, 50, paired=True),
    "treecut": Quota(30, 30),
    "selfaware": Quota(30, 30),
}
TRANSFER_SEED = 1

SUITES: dict[str, str] = {
    "quick": "120 balanced items across all benchmarks and the held-out set (fixed seed): the demo",
    "math": "every reasoning benchmark in full",
    "full": "every shipped benchmark (+ heldout when present)",
    "heldout": "the synthesis held-out set (src/abstain/data/synth/heldout.jsonl)",
    "transfer": "380 items: held-out synthesis 30 pairs, UMWP 50 pairs, MiP-GSM8K 50 pairs with their GSM8K "
                "originals, TreeCut 30 + 30, SelfAware 30 + 30 (in and out of the training distribution)",
    "abstain-test-sum": "Abstain-R1's SUM test: 284 math pairs, clarifications judged against the authors' reference",
    "abstain-test": "Abstain-R1's knowledge test set: 2,139 rows built from AbstentionBench subsets",
    "abstentionbench-lite": "AbstentionBench's licensed datasets + UMWP, SelfAware, MiP-GSM8K, <= 100 per label each",
    "mip-gsm8k-val": "validation, out of distribution: every MiP-GSM8K pair (the insufficient question and its GSM8K "
                     "original) not in the transfer suite, 532 pairs; never trained on (it chooses checkpoints)",
}


@dataclass
class ItemSet:
    """Items to evaluate and the pool that few-shot demonstrations may be drawn from."""

    name: str
    items: list[Item]
    pool: list[Item] = field(default_factory=list)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for item in self.items:
            if item.id in seen:
                raise DataError(f"{self.name}: duplicate item id {item.id!r}")
            seen.add(item.id)


def _dedupe(items: Sequence[Item]) -> list[Item]:
    seen: dict[str, Item] = {}
    for item in items:
        seen.setdefault(item.id, item)
    return list(seen.values())


def _spread(items: Sequence[Item], k: int, rng: random.Random, keys: Sequence[Callable[[Item], str]]) -> list[Item]:
    """Draw ``k`` items spread as evenly as possible over the groups of ``keys[0]``, recursively."""
    if k >= len(items):
        return list(items)
    if not keys:
        return rng.sample(list(items), k)
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(keys[0](item), []).append(item)
    order = sorted(groups)
    rng.shuffle(order)  # which groups get the remainder is random, not alphabetical
    share = dict.fromkeys(order, 0)
    left = k
    while left:
        open_groups = [g for g in order if share[g] < len(groups[g])]
        for g in open_groups[:left]:
            share[g] += 1
        left -= min(left, len(open_groups))
    picked: list[Item] = []
    for g in sorted(order):
        picked.extend(_spread(groups[g], share[g], rng, keys[1:]))
    return picked


_BALANCE_KEYS: tuple[Callable[[Item], str], ...] = (
    lambda i: i.label,
    benchmark_of,
    lambda i: i.perturbation or "",
)


def select_items(items: Sequence[Item], limit: int | None, seed: int = 0) -> list[Item]:
    """A balanced, deterministic subset of at most ``limit`` items (all of them when ``limit`` is None)."""
    if limit is None or limit >= len(items):
        return list(items)
    if limit < 1:
        raise ValueError("--limit must be >= 1")
    chosen = {i.id for i in _spread(items, limit, random.Random(seed), _BALANCE_KEYS)}
    return [i for i in items if i.id in chosen]


def _benchmark(name: str) -> list[Item]:
    return _heldout(required=False) if name == "heldout" else load_benchmark(name)


def _quota_suite(quotas: dict[str, Quota], seed: int) -> list[Item]:
    """Each benchmark's quota of items, drawn once with a fixed seed (twins as pairs where asked)."""
    rng = random.Random(seed)
    by_pert = (lambda i: i.perturbation or "", lambda i: i.source or "")
    out: list[Item] = []
    for name, quota in quotas.items():
        items = _benchmark(name)
        unans = [i for i in items if i.label == "unanswerable"]
        if quota.paired:  # the answerable twin shares the unanswerable item's meta.pair_id
            twins = {i.meta["pair_id"]: i for i in items if i.label == "answerable" and i.meta.get("pair_id")}
            unans = [i for i in unans if i.meta.get("pair_id") in twins]
            for u in _spread(unans, quota.unanswerable, rng, by_pert):
                twin = twins[u.meta["pair_id"]]
                if dataset_of(twin) != name:  # a GSM8K original is part of the MiP GSM8K dataset here
                    twin = twin.model_copy(update={"meta": {**twin.meta, "dataset": name}})
                out += [twin, u]
            continue
        answerable = [i for i in items if i.label == "answerable"]
        out += _spread(answerable, quota.answerable, rng, (lambda i: str(i.meta.get("numVars") or i.meta.get("subject") or i.source),))
        out += _spread(unans, quota.unanswerable, rng, by_pert)
    return out


def _heldout(required: bool) -> list[Item]:
    path = heldout_path()
    if not path.exists():
        if required:
            raise DataError(
                f"{path}: the heldout suite's file is missing (the synthesis issue ships it); "
                "use --data FILE for your own items"
            )
        log.warning("%s is missing, so the heldout set is left out", path)
        return []
    items = read_jsonl(path, Item)
    for item in items:  # its source is "synth/..."; group it as the held-out benchmark
        item.meta.setdefault("benchmark", "heldout")
    return items


def _lite_candidates() -> list[Item]:
    """Every item of the lite datasets, each with ``meta.dataset`` and ``meta.scenario`` set."""
    out = []
    for name in LITE_DATASETS:
        for item in load_benchmark(name):
            if name in _LITE_SCENARIO:  # the MiP GSM8K originals belong to the MiP GSM8K dataset here
                meta = {**item.meta, "dataset": name, "scenario": _LITE_SCENARIO[name]}
                item = item.model_copy(update={"meta": meta})
            out.append(item)
    return _dedupe(out)


def _capped(items: Sequence[Item], cap: int, rng: random.Random) -> list[Item]:
    """At most ``cap`` items per label; twins (``meta.pair_id``) are drawn as pairs when every item has one."""
    keys = (lambda i: i.source or "", lambda i: i.perturbation or "")
    answerable = {i.meta["pair_id"]: i for i in items if i.label == "answerable" and i.meta.get("pair_id")}
    unans = [i for i in items if i.label == "unanswerable"]
    if unans and len(unans) == len(answerable) and all(i.meta.get("pair_id") in answerable for i in unans):
        chosen = {i.id for u in _spread(unans, cap, rng, keys) for i in (u, answerable[u.meta["pair_id"]])}
    else:
        chosen = {i.id for label in ("answerable", "unanswerable")
                  for i in _spread([i for i in items if i.label == label], cap, rng, keys)}
    return [i for i in items if i.id in chosen]


def _lite(candidates: Sequence[Item]) -> list[Item]:
    groups: dict[str, list[Item]] = {}
    for item in candidates:
        groups.setdefault(dataset_of(item), []).append(item)
    return [i for name, group in groups.items()
            for i in _capped(group, LITE_CAP, random.Random(f"{LITE_SEED}:{name}"))]


#: the suites drawn by per-benchmark quotas: (quotas, seed)
QUOTA_SUITES: dict[str, tuple[dict[str, Quota], int]] = {
    "quick": (QUICK, QUICK_SEED), "transfer": (TRANSFER, TRANSFER_SEED)}


def _validation_ood() -> list[Item]:
    """MiP-GSM8K's pairs minus the transfer suite's: the out-of-distribution validation split."""
    transfer = {i.meta.get("pair_id") for i in _quota_suite(TRANSFER, TRANSFER_SEED)} - {None}
    items = [i for i in load_benchmark("mip_gsm8k") if i.meta.get("pair_id") not in transfer]
    return [i.model_copy(update={"meta": {**i.meta, "dataset": "mip_gsm8k"}}) if i.label == "answerable" else i
            for i in items]


def _suite_candidates(name: str) -> list[Item]:
    if name == "mip-gsm8k-val":
        return _validation_ood()
    if name == "abstain-test-sum":
        return load_benchmark("abstain_test_sum")
    if name == "abstain-test":
        return load_benchmark("abstain_test")
    if name == "abstentionbench-lite":
        return _lite_candidates()
    if name in QUOTA_SUITES:
        return _dedupe([i for b in QUOTA_SUITES[name][0] for i in _benchmark(b)])
    if name == "math":
        return _dedupe([i for b in REASONING for i in load_benchmark(b)])
    if name == "full":
        return _dedupe([i for b in BENCHMARKS for i in load_benchmark(b)] + _heldout(required=False))
    if name == "heldout":
        return _heldout(required=True)
    raise ValueError(f"unknown suite {name!r}; choose one of {sorted(SUITES)}")


def _pool(candidates: Sequence[Item], chosen: Sequence[Item]) -> list[Item]:
    """Candidates that are not chosen and not the twin of a chosen item."""
    ids = {i.id for i in chosen}
    pairs = {i.meta.get("pair_id") for i in chosen} - {None}
    return [i for i in candidates if i.id not in ids and i.meta.get("pair_id") not in pairs]


def load_suite(name: str, limit: int | None = None, seed: int = 0) -> ItemSet:
    """The items of a named suite (optionally a balanced subset) and its demonstration pool."""
    candidates = _suite_candidates(name)
    if name in QUOTA_SUITES:
        base = _quota_suite(*QUOTA_SUITES[name])
    elif name == "abstentionbench-lite":
        base = _lite(candidates)
    else:
        base = candidates
    items = select_items(base, limit, seed)
    return ItemSet(name, items, _pool(candidates, items))


def load_custom(path: str | Path, limit: int | None = None, seed: int = 0) -> ItemSet:
    """Items of your own JSONL file (validated: errors name ``file:line``), optionally a balanced subset.

    ``uabench:DIR`` reads a UA-Bench checkout instead (:func:`abstain.data.uabench.load_uabench`).
    """
    text = str(path)
    if text.startswith(UABENCH_PREFIX):
        candidates = load_uabench(text[len(UABENCH_PREFIX):])
    else:
        candidates = read_jsonl(path, Item)
    if not candidates:
        raise DataError(f"{path}: no items")
    seen: set[str] = set()
    for item in candidates:
        if item.id in seen:
            raise DataError(f"{path}: duplicate item id {item.id!r}")
        seen.add(item.id)
    items = select_items(candidates, limit, seed)
    return ItemSet(str(path), items, _pool(candidates, items))


def items_digest(items: Sequence[Item]) -> str:
    """sha256 of the items' canonical JSON: a run refuses to resume when its items changed."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps(item.model_dump(mode="json"), sort_keys=True, ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()
