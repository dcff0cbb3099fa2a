"""The suite registry: one entry per named suite, holding everything abstain knows of it.

A suite is what ``abstain eval --suite`` evaluates, the reports and harness tasks name, and the training guard
keeps out of training (:mod:`abstain.data.guard`). Each :class:`Suite` says what it is (``description``), how it
loads (``candidates``: every item it may draw from, the few-shot pool's source; ``draw``: its items from them),
how many items it has (``size``, checked by a test), its source benchmarks and their licenses, the role it plays
(``evaluation``: reported; ``validation``: chooses checkpoints; ``final``: a held-out final table) and whether
training may use it (``reserved``: no, unless a run opts in by name). The CLI's help, ``abstain suites``, the
guard, the lm-eval task files, the Inspect tasks and docs/suites.md all read :data:`REGISTRY`.

Adding a suite is one entry here plus its data (docs/design.md shows a worked example).

``limit`` draws a *balanced* subset deterministically from ``seed`` (:func:`abstain.data.suite_draws.select_items`):
evenly across labels, then benchmarks, then perturbations, so even ``limit=2`` has one answerable and one
unanswerable item. Items keep the suite's order.

Example:
    >>> len(load_suite("quick").items), len(load_suite("quick", limit=4).items)
    (120, 4)
    >>> REGISTRY["mip-gsm8k-val"].role, REGISTRY["mip-gsm8k-val"].reserved
    ('validation', True)
    >>> suite("quik")
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: unknown suite 'quik'; choose one of quick, math, full, heldout, transfer, abstain-test-sum, abstain-test, abstentionbench-lite, mip-gsm8k-val
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from abstain.data.loaders import BENCHMARKS, load_benchmark
from abstain.data.suite_draws import (
    HELDOUT_PATH,
    LITE_CAP,
    LITE_DATASETS,
    QUICK,
    QUICK_SEED,
    REASONING,
    TRANSFER,
    TRANSFER_SEED,
    dedupe,
    heldout_items,
    heldout_path,
    lite_candidates,
    lite_draw,
    quota_draw,
    select_items,
    validation_ood,
)
from abstain.data.abstentionbench_port import PREFIX as ABSTENTIONBENCH_PREFIX
from abstain.data.abstentionbench_port import load_abstentionbench
from abstain.data.uabench import PREFIX as UABENCH_PREFIX
from abstain.data.uabench import load_uabench
from abstain.schema import DataError, Item, benchmark_of, dataset_of, read_jsonl

__all__ = ["BENCHMARK_LICENSES", "HELDOUT_PATH", "LITE_CAP", "LITE_DATASETS", "REGISTRY", "SUITES",
           "TRAINING_BENCHMARKS", "ItemSet",
           "Role", "Suite", "benchmark_of", "dataset_of", "heldout_path", "items_digest", "load_custom",
           "load_suite", "select_items", "suite", "suite_names"]

Role = Literal["evaluation", "validation", "final"]

#: each shipped benchmark's license, as its SOURCE.txt / LICENSE states it ("research only": no commercial use)
BENCHMARK_LICENSES: dict[str, str] = {
    "gsm8k": "MIT", "math500": "MIT", "umwp": "CC-BY-SA-4.0", "mip_gsm8k": "MIT", "mip_svamp": "MIT",
    "mip_formula": "MIT", "treecut": "Apache-2.0", "selfaware": "CC-BY-SA-4.0, research only",
    "abstain_test_sum": "Apache-2.0 (repo), research only (Abstain-R1's notice)",
    "abstain_test": "research only (its subsets' terms)", "coconot": "MIT",
    "bbq": "CC-BY-4.0", "mediq": "CC-BY-4.0", "moralchoice": "MIT", "bbh_disambiguation_qa": "MIT",
    "bigbench_known_unknowns": "Apache-2.0", "bigbench_sufficient_information": "Apache-2.0",
    "heldout": "Apache-2.0 (abstain's own synthesis)",
}


#: shipped benchmarks that also train: their rows that only a whole-benchmark suite (math, full) holds may (UMWP:
#: the attribution experiment's real-text pairs); rows a suite draws (quick, transfer, lite ...) stay reserved
TRAINING_BENCHMARKS: dict[str, str] = {
    "umwp": "its pairs outside the fixed suites train (abstain.data.real_text): evaluating `math` or `full` after "
            "training on them counts UMWP items the model saw",
}


@dataclass(frozen=True)
class Suite:
    """One named suite (see the module docstring)."""

    name: str
    description: str
    role: Role
    size: int  # items (a test checks it)
    benchmarks: tuple[str, ...]  # where its items come from
    candidates: Callable[[], list[Item]] = field(repr=False)  # what it may draw from (and the few-shot pool's source)
    draw: Callable[[list[Item]], list[Item]] | None = field(default=None, repr=False)  # its items (None: all)
    reserved: bool = True  # training may not use its items (abstain.data.guard) unless a run opts in by name
    whole: bool = False  # every item of its benchmarks (math, full): TRAINING_BENCHMARKS' rows in it do not count

    @property
    def license(self) -> str:
        """Its benchmarks' licenses, research-only ones marked."""
        return "; ".join(sorted({f"{b}: {BENCHMARK_LICENSES[b]}" for b in self.benchmarks}))

    @property
    def research_only(self) -> bool:
        return any("research only" in BENCHMARK_LICENSES[b] for b in self.benchmarks)


def _benchmarks(*names: str) -> Callable[[], list[Item]]:
    return lambda: dedupe([i for b in names for i in load_benchmark(b)])


def _quota(quotas: dict, seed: int) -> Callable[[list[Item]], list[Item]]:
    return lambda candidates: quota_draw(quotas, seed)


def _with_heldout(names: Sequence[str]) -> Callable[[], list[Item]]:
    return lambda: dedupe([i for b in names for i in (heldout_items(required=False) if b == "heldout"
                                                     else load_benchmark(b))])


_ALL = tuple(BENCHMARKS)
_SUITES = [
    Suite("quick", "120 balanced items across all benchmarks and the held-out set (fixed seed): the demo",
          "evaluation", 120, (*QUICK, "gsm8k"), _with_heldout(tuple(QUICK)), _quota(QUICK, QUICK_SEED)),
    Suite("math", "every reasoning benchmark in full", "evaluation", 12_519, REASONING, _benchmarks(*REASONING),
          whole=True),
    Suite("full", "every shipped benchmark (+ heldout when present)", "evaluation", 25_304, (*_ALL, "heldout"),
          lambda: dedupe([i for b in _ALL for i in load_benchmark(b)] + heldout_items(required=False)), whole=True),
    Suite("heldout", "the synthesis held-out set (src/abstain/data/synth/heldout.jsonl)", "final", 720, ("heldout",),
          lambda: heldout_items(required=True)),
    Suite("transfer", "380 items: held-out synthesis 30 pairs, UMWP 50 pairs, MiP-GSM8K 50 pairs with their GSM8K "
          "originals, TreeCut 30 + 30, SelfAware 30 + 30 (in and out of the training distribution)", "final", 380,
          (*TRANSFER, "gsm8k"), _with_heldout(tuple(TRANSFER)), _quota(TRANSFER, TRANSFER_SEED)),
    Suite("abstain-test-sum", "Abstain-R1's SUM test: 284 math pairs, clarifications judged against the authors' "
          "reference", "final", 568, ("abstain_test_sum",), _benchmarks("abstain_test_sum")),
    Suite("abstain-test", "Abstain-R1's knowledge test set: 2,139 rows built from AbstentionBench subsets",
          "evaluation", 2_139, ("abstain_test",), _benchmarks("abstain_test")),
    Suite("abstentionbench-lite", f"AbstentionBench's licensed datasets + UMWP, SelfAware, MiP-GSM8K, <= {LITE_CAP} per "
          "label each", "evaluation", 2_277, (*LITE_DATASETS, "gsm8k"), lite_candidates, lite_draw),
    Suite("mip-gsm8k-val", "validation, out of distribution: every MiP-GSM8K pair (the insufficient question and its "
          "GSM8K original) not in the transfer suite, 532 pairs (it chooses checkpoints)", "validation", 1_064,
          ("mip_gsm8k", "gsm8k"), validation_ood),
]
#: every suite, by name, in the order the CLI lists them
REGISTRY: dict[str, Suite] = {s.name: s for s in _SUITES}
#: name -> description (what the CLI's help shows)
SUITES: dict[str, str] = {s.name: s.description for s in _SUITES}


def suite(name: str) -> Suite:
    """The registry's entry for ``name``; an unknown name is an error listing the suites."""
    if name not in REGISTRY:
        raise DataError(f"unknown suite {name!r}; choose one of {', '.join(REGISTRY)}")
    return REGISTRY[name]


def suite_names(role: Role | None = None) -> list[str]:
    """The suites' names (of one role), in the registry's order: what help texts list."""
    return [s.name for s in _SUITES if role is None or s.role == role]


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


def _pool(candidates: Sequence[Item], chosen: Sequence[Item]) -> list[Item]:
    """Candidates that are not chosen and not the twin of a chosen item."""
    ids = {i.id for i in chosen}
    pairs = {i.meta.get("pair_id") for i in chosen} - {None}
    return [i for i in candidates if i.id not in ids and i.meta.get("pair_id") not in pairs]


def load_suite(name: str, limit: int | None = None, seed: int = 0) -> ItemSet:
    """The items of a named suite (optionally a balanced subset) and its demonstration pool."""
    entry = suite(name)
    candidates = entry.candidates()
    base = candidates if entry.draw is None else entry.draw(candidates)
    items = select_items(base, limit, seed)
    return ItemSet(name, items, _pool(candidates, items))


def load_custom(path: str | Path, limit: int | None = None, seed: int = 0) -> ItemSet:
    """Items of your own JSONL file (validated: errors name ``file:line``), optionally a balanced subset.

    ``uabench:DIR`` reads a UA-Bench checkout instead (:func:`abstain.data.uabench.load_uabench`),
    ``abstentionbench:<datasets>[:fast]`` AbstentionBench through its Inspect port
    (:func:`abstain.data.abstentionbench_port.load_abstentionbench`).
    """
    text = str(path)
    if text.startswith(UABENCH_PREFIX):
        candidates = load_uabench(text[len(UABENCH_PREFIX):])
    elif text.startswith(ABSTENTIONBENCH_PREFIX):
        candidates = load_abstentionbench(text[len(ABSTENTIONBENCH_PREFIX):])
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
