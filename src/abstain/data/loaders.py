"""Loaders: each shipped benchmark file -> :class:`abstain.schema.Item` rows.

Every item gets a stable id ``<benchmark>-<source id>``, a ``category`` (``knowledge`` | ``reasoning``, as
UA-Bench groups its tasks), ``source`` (``<benchmark>`` or ``<benchmark>/<origin>``) and in ``meta``:
``benchmark`` (the loader name), the AbstentionBench ``scenario`` where one fits (``underspecified_context``
for missing-premise math, ``answer_unknown`` for SelfAware), and ``pair_id`` for answerable/unanswerable
twins (the id of the answerable original, shared by both twins).

=============  ==========================================================================================
loader         what
=============  ==========================================================================================
gsm8k          GSM8K test, answerable; the reference is the number after ``####``
math500        MATH-500, answerable; the ``answer`` field
umwp           UMWP: answerable rows and unanswerable twins (``relevant_ids``); categories 1..5 ->
               ``perturbation`` (missing_key_info, ambiguous_key_info, unrealistic_conditions,
               unrelated_object, question_missing)
mip_gsm8k      MiP GSM8K: each insufficient question and its original GSM8K item (id ``gsm8k-<n>``)
mip_svamp      MiP SVAMP, insufficient questions only
mip_formula    MiP formula, insufficient questions only
treecut        TreeCut samples; answer ``unknown`` -> unanswerable; numVars/ansDepth/cutDepth in meta
selfaware      SelfAware (knowledge); CC-BY-SA-4.0, research use only - a notice is logged when loaded
=============  ==========================================================================================

The AbstentionBench datasets (``coconot``, ``bbq``, ``mediq``, ``moralchoice``, ``bbh_disambiguation_qa``,
``bigbench_known_unknowns``, ``bigbench_sufficient_information``) are in :mod:`abstain.data.abstentionbench`,
Abstain-R1's test sets (``abstain_test_sum``, ``abstain_test``) in :mod:`abstain.data.abstain_r1`; their
items also carry ``meta.dataset`` (see :func:`abstain.data.suites.dataset_of`).

Example:
    >>> items = load_benchmark("umwp")
    >>> [(i.id, i.label, i.perturbation) for i in items if i.meta["pair_id"] == "umwp-1"]
    [('umwp-1', 'answerable', None), ('umwp-2501', 'unanswerable', 'unrelated_object')]
    >>> load_benchmark("gsm8k")[0].answers
    ['18']
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from abstain.data.abstain_r1 import ABSTAIN_R1_NOTICE
from abstain.data.abstain_r1 import LOADERS as ABSTAIN_R1_LOADERS
from abstain.data.abstentionbench import LOADERS as ABSTENTIONBENCH_LOADERS
from abstain.data.files import NOTIFIED, benchmark_dir, make_item, notice_once, read_json, read_jsonl_rows
from abstain.schema import DataError, Item

__all__ = [
    "BENCHMARKS",
    "NOTICES",
    "SELFAWARE_NOTICE",
    "UMWP_PERTURBATIONS",
    "benchmark_dir",
    "load_benchmark",
]

log = logging.getLogger(__name__)

UMWP_PERTURBATIONS = {
    1: "missing_key_info",
    2: "ambiguous_key_info",
    3: "unrealistic_conditions",
    4: "unrelated_object",
    5: "question_missing",
}
SELFAWARE_NOTICE = (
    "SelfAware is licensed CC-BY-SA-4.0 for research use only; for commercial use contact its authors "
    "(src/abstain/data/benchmarks/selfaware/LICENSE)."
)
UNDERSPECIFIED = "underspecified_context"  # AbstentionBench scenario names
ANSWER_UNKNOWN = "answer_unknown"


_jsonl = read_jsonl_rows
_json = read_json
_item = make_item


def _gsm8k_answer(solution: str) -> str:
    return solution.rsplit("####", 1)[-1].strip().replace(",", "")


def _number(value: Any) -> str | None:
    """460.0 -> '460' (MiP SVAMP keeps the original question's answer as a float)."""
    if value is None:
        return None
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _mip_gsm8k_twins() -> dict[str, int]:
    """GSM8K question -> index in mip_gsm8k.json (every MiP GSM8K original is a GSM8K test item)."""
    rows = _json(benchmark_dir() / "mip" / "mip_gsm8k.json")
    return {r["question"]: i for i, r in enumerate(rows)}


def _load_gsm8k() -> list[Item]:
    path = benchmark_dir() / "gsm8k" / "test.jsonl"
    twins = _mip_gsm8k_twins()
    items = []
    for n, row in enumerate(_jsonl(path)):
        meta: dict[str, Any] = {"benchmark": "gsm8k"}
        if row["question"] in twins:
            meta.update(pair_id=f"gsm8k-{n}", twin=f"mip_gsm8k-{twins[row['question']]}")
        items.append(
            _item(path, n + 1, id=f"gsm8k-{n}", question=row["question"], answers=[_gsm8k_answer(row["answer"])],
                  label="answerable", category="reasoning", source="gsm8k", meta=meta)
        )
    return items


def _load_math500() -> list[Item]:
    path = benchmark_dir() / "math500" / "test.jsonl"
    items = []
    for n, row in enumerate(_jsonl(path), start=1):
        uid = row["unique_id"].removeprefix("test/").removesuffix(".json")
        items.append(
            _item(path, n, id=f"math500-{uid}", question=row["problem"], answers=[row["answer"]],
                  label="answerable", category="reasoning", source="math500",
                  meta={"benchmark": "math500", "subject": row["subject"], "level": row["level"]})
        )
    return items


def _load_umwp() -> list[Item]:
    path = benchmark_dir() / "umwp" / "StandardDataset.jsonl"
    items = []
    for n, row in enumerate(_jsonl(path), start=1):
        related = row.get("relevant_ids") or []
        answerable = bool(row["answerable"])
        if not answerable and row.get("category") not in UMWP_PERTURBATIONS:
            raise DataError(f"{path}:{n}: unanswerable row with unknown category {row.get('category')!r}")
        pair = f"umwp-{row['id'] if answerable else related[0]}" if (answerable or related) else None
        items.append(
            _item(path, n, id=f"umwp-{row['id']}", question=row["question"],
                  answers=row["answer"] if answerable else [], label="answerable" if answerable else "unanswerable",
                  category="reasoning", perturbation=None if answerable else UMWP_PERTURBATIONS[row["category"]],
                  source=f"umwp/{row['source']}",
                  meta={"benchmark": "umwp", "umwp_id": row["id"], "relevant_ids": row.get("relevant_ids"),
                        "pair_id": pair, "scenario": UNDERSPECIFIED})
        )
    return items


def _load_mip_gsm8k() -> list[Item]:
    path = benchmark_dir() / "mip" / "mip_gsm8k.json"
    originals = {i.question: i for i in load_benchmark("gsm8k")}
    items = []
    for n, row in enumerate(_json(path)):
        original = originals.get(row["question"])
        if original is None:
            raise DataError(f"{path}: item {n}: its original question is not in gsm8k/test.jsonl")
        items.append(original)
        items.append(
            _item(path, f"item {n}", id=f"mip_gsm8k-{n}", question=row["insufficient_question"], answers=[],
                  label="unanswerable", category="reasoning", perturbation="missing_premise", source="mip_gsm8k",
                  meta={"benchmark": "mip_gsm8k", "pair_id": original.id, "twin": original.id,
                        "original_answer": _gsm8k_answer(row["answer"]), "scenario": UNDERSPECIFIED})
        )
    return items


def _mip_insufficient(name: str, file: str, extra: Callable[[dict[str, Any]], dict[str, Any]]) -> list[Item]:
    path = benchmark_dir() / "mip" / file
    return [
        _item(path, f"item {n}", id=f"{name}-{n}", question=row["insufficient_question"], answers=[],
              label="unanswerable", category="reasoning", perturbation="missing_premise", source=name,
              meta={"benchmark": name, "scenario": UNDERSPECIFIED, **extra(row)})
        for n, row in enumerate(_json(path))
    ]


_TREECUT_NAME = re.compile(r"numVars-(\d+)_ansDepth-(\d+)_.*hallu-(True|False)(?:_cutDepth-(\d+))?")


def _load_treecut() -> list[Item]:
    items = []
    for path in sorted((benchmark_dir() / "treecut").glob("*.jsonl")):
        match = _TREECUT_NAME.search(path.name)
        if match is None:
            raise DataError(f"{path}: file name does not carry numVars/ansDepth/hallu")
        num_vars, depth, hallu, cut = match.groups()
        tag = f"v{num_vars}d{depth}" + (f"c{cut}" if cut else "")
        for n, row in enumerate(_jsonl(path), start=1):
            unknown = str(row["answer"]).strip().lower() == "unknown"
            meta: dict[str, Any] = {"benchmark": "treecut", "numVars": int(num_vars), "ansDepth": int(depth),
                                    "proof": row.get("proof")}
            if cut:
                meta["cutDepth"] = int(cut)
            if unknown:
                meta["scenario"] = UNDERSPECIFIED
            items.append(
                _item(path, n, id=f"treecut-{tag}-{n - 1}", question=row["problem"],
                      answers=[] if unknown else [row["answer"]], label="unanswerable" if unknown else "answerable",
                      category="reasoning", perturbation="condition_removal" if unknown else None,
                      source="treecut", meta=meta)
            )
    return items


_notified = NOTIFIED  # the notices already logged (tests clear it)


def _load_selfaware() -> list[Item]:
    path = benchmark_dir() / "selfaware" / "SelfAware.json"
    items = []
    for row in _json(path)["example"]:
        answerable = bool(row["answerable"])
        items.append(
            _item(path, f"question_id {row['question_id']}", id=f"selfaware-{row['question_id']}",
                  question=row["question"], answers=(row["answer"] or []) if answerable else [],
                  label="answerable" if answerable else "unanswerable", category="knowledge",
                  perturbation=None, source=f"selfaware/{row['source']}",
                  meta={"benchmark": "selfaware", "scenario": ANSWER_UNKNOWN})
        )
    return items


BENCHMARKS: dict[str, Callable[[], list[Item]]] = {
    "gsm8k": _load_gsm8k,
    "math500": _load_math500,
    "umwp": _load_umwp,
    "mip_gsm8k": _load_mip_gsm8k,
    "mip_svamp": lambda: _mip_insufficient("mip_svamp", "mip_svamp.json",
                                           lambda r: {"original_answer": _number(r.get("answer"))}),
    "mip_formula": lambda: _mip_insufficient("mip_formula", "mip_formula.json",
                                             lambda r: {"complexity": r.get("complexity"), "depth": r.get("depth")}),
    "treecut": _load_treecut,
    "selfaware": _load_selfaware,
    **ABSTENTIONBENCH_LOADERS,
    **ABSTAIN_R1_LOADERS,
}


@cache
def _cached(name: str) -> tuple[Item, ...]:
    return tuple(BENCHMARKS[name]())


#: the license notice a benchmark's load logs (once per process, :func:`abstain.data.files.notice_once`): key, text
NOTICES: dict[str, tuple[str, str]] = {
    "selfaware": ("selfaware", SELFAWARE_NOTICE),
    "abstain_test": ("abstain_r1", ABSTAIN_R1_NOTICE),
    "abstain_test_sum": ("abstain_r1", ABSTAIN_R1_NOTICE),
}


def load_benchmark(name: str) -> list[Item]:
    """All items of a shipped benchmark (parsed once per process; callers get copies of the list); a research-only
    benchmark's notice is logged the first time it is loaded (outside the parsing cache, so a load under
    :func:`abstain.data.files.muted_notices` leaves it to the next)."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose one of {sorted(BENCHMARKS)}")
    items = list(_cached(name))
    if name in NOTICES:
        notice_once(*NOTICES[name], log)
    return items
