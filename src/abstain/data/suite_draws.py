"""How the suites draw their items: per-benchmark quotas, AbstentionBench-lite's caps, the validation split, the
held-out synthesis file, and balanced subsets (``--limit``). The suites themselves, one entry each, are in
:mod:`abstain.data.suites`.

Example:
    >>> picked = select_items(quota_draw(QUICK, QUICK_SEED), limit=6, seed=0)
    >>> sorted(i.label for i in picked).count("answerable")
    3
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from abstain.data.abstentionbench import LOADERS as ABSTENTIONBENCH_LOADERS
from abstain.data.loaders import load_benchmark
from abstain.schema import DataError, Item, benchmark_of, dataset_of, read_jsonl

__all__ = ["HELDOUT_PATH", "LITE_CAP", "LITE_DATASETS", "QUICK", "QUICK_SEED", "REASONING", "TRANSFER", "TRANSFER_SEED",
           "Quota", "dedupe", "heldout_items", "heldout_path", "lite_candidates", "lite_draw", "quota_draw",
           "select_items", "validation_ood"]

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



def dedupe(items: Sequence[Item]) -> list[Item]:
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
    return heldout_items(required=False) if name == "heldout" else load_benchmark(name)


def quota_draw(quotas: dict[str, Quota], seed: int) -> list[Item]:
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


def heldout_items(required: bool) -> list[Item]:
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


def lite_candidates() -> list[Item]:
    """Every item of the lite datasets, each with ``meta.dataset`` and ``meta.scenario`` set."""
    out = []
    for name in LITE_DATASETS:
        for item in load_benchmark(name):
            if name in _LITE_SCENARIO:  # the MiP GSM8K originals belong to the MiP GSM8K dataset here
                meta = {**item.meta, "dataset": name, "scenario": _LITE_SCENARIO[name]}
                item = item.model_copy(update={"meta": meta})
            out.append(item)
    return dedupe(out)


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


def lite_draw(candidates: Sequence[Item]) -> list[Item]:
    groups: dict[str, list[Item]] = {}
    for item in candidates:
        groups.setdefault(dataset_of(item), []).append(item)
    return [i for name, group in groups.items()
            for i in _capped(group, LITE_CAP, random.Random(f"{LITE_SEED}:{name}"))]




def validation_ood() -> list[Item]:
    """MiP-GSM8K's pairs minus the transfer suite's: the out-of-distribution validation split."""
    transfer = {i.meta.get("pair_id") for i in quota_draw(TRANSFER, TRANSFER_SEED)} - {None}
    items = [i for i in load_benchmark("mip_gsm8k") if i.meta.get("pair_id") not in transfer]
    return [i.model_copy(update={"meta": {**i.meta, "dataset": "mip_gsm8k"}}) if i.label == "answerable" else i
            for i in items]


