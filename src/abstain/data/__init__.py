"""Benchmark data: loaders of the shipped files and named suites.

Example:
    >>> from abstain.data import load_suite
    >>> s = load_suite("quick", limit=4)
    >>> sorted(i.label for i in s.items)
    ['answerable', 'answerable', 'unanswerable', 'unanswerable']
"""

from pathlib import Path

from abstain.data.loaders import BENCHMARKS, SELFAWARE_NOTICE, UMWP_PERTURBATIONS, benchmark_dir, load_benchmark
from abstain.data.suite_draws import Quota
from abstain.data.suites import (
    HELDOUT_PATH,
    REGISTRY,
    SUITES,
    ItemSet,
    Suite,
    benchmark_of,
    dataset_of,
    items_digest,
    load_custom,
    load_suite,
    select_items,
)
from abstain.data.uabench import load_uabench

#: twelve hand-written responses to real UMWP and SelfAware items, for examples and first steps
EXAMPLE_RESPONSES = Path(__file__).resolve().parent / "demo" / "responses.jsonl"

__all__ = [
    "BENCHMARKS",
    "EXAMPLE_RESPONSES",
    "HELDOUT_PATH",
    "SELFAWARE_NOTICE",
    "REGISTRY",
    "SUITES",
    "Suite",
    "UMWP_PERTURBATIONS",
    "ItemSet",
    "Quota",
    "benchmark_dir",
    "benchmark_of",
    "dataset_of",
    "items_digest",
    "load_benchmark",
    "load_custom",
    "load_suite",
    "load_uabench",
    "select_items",
]
