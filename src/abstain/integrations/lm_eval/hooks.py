"""What abstain's lm-evaluation-harness tasks call: the documents, the scorer and the metrics, all abstain's.

A task YAML (:mod:`abstain.integrations.lm_eval.task_yamls`) names a suite and a protocol in its ``metadata``;
``--metadata '{"abstain": {"seed": 1, "limit": 40, "shots": 2, "judge": "hybrid"}}'`` sets the other fields
of :class:`~abstain.integrations.harness.HarnessTask` (a namespace of its own: lm-eval also hands the
model's arguments to the dataset loader, and ``seed`` is one of them).

* :func:`load_docs` (``custom_dataset``): ``abstain eval``'s items in its order, one document each:
  ``system`` (the protocol's system message, the task's ``description``), ``user`` (the question as the
  protocol asks it, ``doc_to_text``), ``item`` and ``task`` (JSON). With ``shots`` the demonstrations are
  the ``demos`` split, asked as earlier turns (lm-eval renders one list of demonstrations per task, so the
  items must come from one benchmark; abstain and Inspect draw them per benchmark).
* :func:`process_results`: scores the response with the task's judge (a judge error stays on the row,
  counted as ``unscored``). The first metric's value carries the scored row and the run's ``generation`` block
  (:mod:`abstain.integrations.lm_eval.task` passes it); every other metric's value only names the row, so a
  ``--log_samples`` line holds the row once.
* :func:`aggregate`: every metric of the protocol from the rows put back in item order — ``abstain eval``'s
  metrics over the task's items (pooled, not a mean of per-item numbers), CIs as ``<name>_ci_lo`` /
  ``<name>_ci_hi``; a metric a run leaves undefined is NaN. lm-eval aggregates a task's metrics in the order
  ``process_results`` returned them, so the first (the rows) computes them all, and the others read its result.

Example (no lm-eval needed: the documents of a task)::

    docs = load_docs(suite="quick", protocol="idk", abstain={"limit": 4})["test"]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import fields
from functools import lru_cache
from typing import Any

from abstain.integrations.harness import HarnessSample, HarnessTask
from abstain.judges import Judge
from abstain.schema import DataError, Item, ScoredRow

__all__ = ["aggregate", "harness_task", "load_docs", "process_results"]

_OPTIONS = {f.name for f in fields(HarnessTask)} - {"suite", "protocol", "judge_base_url"}


def harness_task(metadata: Mapping[str, Any]) -> HarnessTask:
    """The task a YAML's ``metadata`` (suite, protocol) and ``--metadata``'s ``abstain`` options describe."""
    options = dict(metadata.get("abstain") or {})
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise DataError(f"--metadata abstain: unknown option(s) {unknown}; valid: {sorted(_OPTIONS)}")
    for key in ("suite", "protocol"):
        if not metadata.get(key):
            raise DataError(f"an abstain lm-eval task needs metadata.{key} (its YAML names it)")
    suite = None if options.get("data") else metadata["suite"]
    return HarnessTask(suite=suite, protocol=metadata["protocol"], **options)


def _demo_turns(samples: list[HarnessSample]) -> list[tuple[str, str]]:
    """The (user, assistant) demonstration turns every sample shares (an error if they differ)."""
    def turns(s: HarnessSample) -> list[tuple[str, str]]:
        body = [m for m in s.messages[:-1] if m["role"] != "system"]
        return [(u["content"], a["content"]) for u, a in zip(body[::2], body[1::2], strict=True)]

    first = turns(samples[0]) if samples else []
    if any(turns(s) != first for s in samples[1:]):
        raise DataError("these items come from several benchmarks, each with its own demonstrations; lm-eval gives "
                        "a task one list of them: use shots with a one-benchmark suite or data file here, or "
                        "Inspect / abstain eval")
    return first


def load_docs(**metadata: Any) -> dict[str, Any]:
    """lm-eval's ``custom_dataset``: ``{"test": the items, "demos": the demonstrations}`` as ``datasets``."""
    from datasets import Dataset

    harness = harness_task(metadata)
    samples = harness.samples()
    task = json.dumps(harness.args(), sort_keys=True)
    rows = [{"id": s.item.id, "index": s.index, "user": s.messages[-1]["content"], "reply": "",
             "system": next((m["content"] for m in s.messages if m["role"] == "system"), ""),
             "item": json.dumps(s.item.model_dump(mode="json")), "task": task} for s in samples]
    demos = [{"id": f"demo-{k}", "index": -1, "user": user, "reply": reply, "system": "", "item": "{}", "task": task}
             for k, (user, reply) in enumerate(_demo_turns(samples))]
    empty = {name: [] for name in ("id", "index", "user", "reply", "system", "item", "task")}
    return {"test": Dataset.from_list(rows), "demos": Dataset.from_list(demos) if demos else Dataset.from_dict(empty)}


@lru_cache(maxsize=8)
def _harness(task: str) -> HarnessTask:
    return HarnessTask(**json.loads(task))


@lru_cache(maxsize=8)
def _judge(task: str) -> Judge:
    return _harness(task).build_judge()


def process_results(doc: Mapping[str, Any], results: list[str],
                    generation: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Score one response as ``abstain eval`` does. The first metric of the protocol receives the scored row (and
    ``generation``: what the run sent, see :class:`abstain.integrations.generation.LmEvalRun`); the others the
    row's key only."""
    from abstain.integrations.lm_eval.task_yamls import metric_names

    harness = _harness(doc["task"])
    row = harness.score([Item.model_validate_json(doc["item"])], [results[0] if results else ""],
                        judge=_judge(doc["task"]), model="lm-eval")[0]
    first, *others = metric_names(harness.protocol)
    carrier = {"metric": first, "task": doc["task"], "row": row.model_dump(mode="json"),
               "generation": dict(generation) if generation is not None else None}
    return {first: carrier, **{name: {"metric": name, "id": row.id, "sample": row.sample} for name in others}}


_LAST: dict[str, Any] = {}


def aggregate(items: list[Mapping[str, Any]]) -> float:
    """One metric (named in the items) of the task, over all its scored rows in item order: the first metric
    (its items hold the rows) computes every metric of the task, the others read that result."""
    if not items:
        return math.nan
    metric = items[0]["metric"]
    if "row" in items[0]:
        task = items[0]["task"]
        key = json.dumps([task, [(i["row"]["id"], i["row"]["sample"], i["row"]["response"]) for i in items]])
        if _LAST.get("key") != key:
            rows = [ScoredRow.model_validate(i["row"]) for i in items]
            _LAST.update(key=key, rows=[(r.id, r.sample) for r in rows], metrics=_harness(task).metrics(rows))
    elif _LAST.get("rows") != [(i["id"], i["sample"]) for i in items]:
        raise DataError(f"lm-eval aggregated {metric} before the metric that holds the scored rows "
                        "(abstain's tasks rely on lm-eval aggregating in the order process_results returns)")
    value = _LAST["metrics"].get(metric)
    return math.nan if value is None else float(value)
