"""Abstain-R1's own test sets (github.com/leo-leung04/Abstain-R1 @ b75c7354, ``data/Abstain-Test-*``).

* ``abstain_test_sum`` - Abstain-Test-SUM, 284 pairs of math questions: the answerable twin
  (``answerable_question``, reference ``ground_truth``) and the unanswerable twin
  (``unanswerable_question``) whose reference ``clarification`` becomes the item's ``gap``, so that
  U-Clar is judged against the authors' reference. Both share ``meta.pair_id``.
* ``abstain_test`` - Abstain-Test-wo-SUM, 2,139 rows built from AbstentionBench subsets
  (``should_abstain`` -> label, ``answer`` -> reference, ``clarification`` -> ``gap``); each subset is a
  dataset ``abstain_test/<subset>`` (``meta.dataset``).

Both are research use only (the subsets keep their own terms; WorldSense is CC-BY-NC-4.0): a notice is
logged the first time either is loaded (:data:`abstain.data.loaders.NOTICES`).

Example:
    >>> items = LOADERS["abstain_test_sum"]()
    >>> a, u = items[0], items[1]
    >>> a.label, a.answers, u.label, u.meta["pair_id"] == a.id, u.gap.startswith("The modified question")
    ('answerable', ['-80'], 'unanswerable', True, True)
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from abstain.data.files import benchmark_dir, make_item, read_jsonl_rows
from abstain.schema import DataError, Item

__all__ = ["ABSTAIN_R1_NOTICE", "LOADERS"]

log = logging.getLogger(__name__)

ABSTAIN_R1_NOTICE = (
    "Abstain-R1's test sets are for research use only: Abstain-Test is built from AbstentionBench subsets that "
    "keep their own terms (WorldSense rows are CC-BY-NC-4.0, non-commercial; FalseQA/QAQA/KUQ/ALCUNA state no "
    "license) - see src/abstain/data/benchmarks/abstain_r1/SOURCE.txt."
)
#: Abstain-Test subsets that are math word problems (the rest are knowledge questions)
REASONING_SUBSETS = {"gsm8k_abstain", "umwp"}
#: AbstentionBench scenario of each Abstain-Test subset (KUQ mixes several, so it has none)
SUBSET_SCENARIO = {
    "alcuna": "underspecified_context",
    "bbq": "underspecified_context",
    "falseqa": "false_premise",
    "gsm8k_abstain": "underspecified_context",
    "mediq": "underspecified_context",
    "moral_choice": "subjective",
    "musique": "underspecified_context",
    "qaqa": "false_premise",
    "squad2": "underspecified_context",
    "umwp": "underspecified_context",
    "world_sense": "underspecified_context",
}


def _load_sum() -> list[Item]:
    path = benchmark_dir() / "abstain_r1" / "sum_test_with_clarification_retry.jsonl"
    items = []
    for n, row in enumerate(read_jsonl_rows(path), start=1):
        missing = [k for k in ("answerable_question", "unanswerable_question", "ground_truth", "clarification")
                   if not row.get(k)]
        if missing:
            raise DataError(f"{path}:{n}: missing {missing}")
        pair = f"abstain_test_sum-{n - 1}"
        meta = {"benchmark": "abstain_test_sum", "dataset": "abstain_test_sum", "pair_id": pair,
                "scenario": "underspecified_context"}
        items.append(make_item(path, n, id=pair, question=row["answerable_question"], answers=[row["ground_truth"]],
                               label="answerable", category="reasoning", source="abstain_test_sum", meta=meta))
        items.append(make_item(path, n, id=f"{pair}-u", question=row["unanswerable_question"], answers=[],
                               label="unanswerable", category="reasoning", gap=row["clarification"],
                               source="abstain_test_sum",
                               meta={**meta, "twin": pair, "original_answer": row["ground_truth"]}))
    return items


def _load_test() -> list[Item]:
    path = benchmark_dir() / "abstain_r1" / "abstain-Test-withoutsum.jsonl"
    items = []
    for n, row in enumerate(read_jsonl_rows(path), start=1):
        if not isinstance(row.get("should_abstain"), bool):
            raise DataError(f"{path}:{n}: 'should_abstain' must be true or false")
        subset = str(row.get("dataset") or "unknown")
        unanswerable = row["should_abstain"]
        meta = {"benchmark": "abstain_test", "dataset": f"abstain_test/{subset}", "abstain_test_subset": subset}
        if subset in SUBSET_SCENARIO:
            meta["scenario"] = SUBSET_SCENARIO[subset]
        items.append(make_item(
            path, n, id=f"abstain_test-{n - 1}", question=row["question"],
            answers=[] if unanswerable or row.get("answer") is None else [row["answer"]],
            label="unanswerable" if unanswerable else "answerable",
            category="reasoning" if subset in REASONING_SUBSETS else "knowledge",
            gap=row.get("clarification") if unanswerable else None, source=f"abstain_test/{subset}", meta=meta,
        ))
    return items


LOADERS: dict[str, Callable[[], list[Item]]] = {
    "abstain_test_sum": _load_sum,
    "abstain_test": _load_test,
}
