"""A harness's log back into an abstain run folder: ``abstain import inspect LOG.eval``, ``abstain import lm-eval``.

The folder is what ``abstain eval`` writes — ``config.json`` (the run the harness task stands for, its model,
and where it came from), ``responses.jsonl``, ``scored.jsonl``, ``metrics.json`` and the report — so ``abstain
report``, ``abstain compare`` and the paired-difference table work on a harness run beside abstain's own. The
scored rows are the ones abstain's scorer wrote into the log (each Inspect score's metadata, each lm-eval
sample's metric values); the metrics are recomputed from them in item order.

Example::

    import_inspect("logs/2026-12-03T10-00-00_abstain-eval_x.eval", "runs/inspect-quick")
    import_lm_eval("out/model/samples_abstain_quick_idk_2026-12-03.jsonl", "runs/lmeval-quick")
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abstain.integrations.harness import HarnessTask
from abstain.runs import METRICS, RESPONSES, SCORED, RunDir, write_json
from abstain.schema import DataError, ResponseRow, ScoredRow, read_lines

__all__ = ["import_inspect", "import_lm_eval", "write_run"]


def write_run(harness: HarnessTask, rows: Sequence[ScoredRow], out: str | os.PathLike[str], model: str,
              source: dict[str, Any]) -> Path:
    """An ``abstain eval`` run folder for ``rows`` (scored by the harness with abstain's scorer) at ``out``."""
    rows = harness.in_order(rows)
    expected = len(harness.prompts.work)
    if not rows:
        raise DataError(f"{source.get('log')}: no scored sample of abstain's scorer in this log")
    config = harness.eval_config(model)
    record = {**config.record(harness.prompts.item_set.items, harness.prompts.demos), "imported_from": source,
              "samples_in_log": len(rows), "samples_in_task": expected}
    record["command"] = f"abstain import {source['harness']} {source['log']}"
    run = RunDir(out)
    if (run.path / SCORED).exists():
        raise DataError(f"{run.path} already holds a run: choose another --out")
    run.prepare(record)
    judged = set(ScoredRow.model_fields) - set(ResponseRow.model_fields)  # what the scorer added
    run.rewrite(RESPONSES, [ResponseRow.model_validate(r.model_dump(exclude=judged)) for r in rows])
    run.rewrite(SCORED, rows)
    write_json(run.path / METRICS, harness.metrics_json(rows))
    from abstain.report import write_report

    write_report(run.path)
    return run.path


def import_inspect(log: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """An Inspect log (``.eval`` or ``.json``) of an abstain task as a run folder."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise DataError(f"reading an Inspect log needs Inspect: pip install 'abstain[inspect]' ({exc})") from None
    path = Path(log)
    if not path.exists():
        raise DataError(f"{path}: no such Inspect log")
    try:
        eval_log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - Inspect raises many kinds for a file that is not a log
        raise DataError(f"{path}: not an Inspect log ({type(exc).__name__}: {exc})") from None
    args = (eval_log.eval.metadata or {}).get("abstain")
    if not isinstance(args, dict):
        raise DataError(f"{path}: task {eval_log.eval.task!r} is not an abstain task (no abstain metadata)")
    harness = HarnessTask(**{k: v for k, v in args.items() if k != "eval"})
    rows = []
    for sample in eval_log.samples or []:
        score = (sample.scores or {}).get("abstain_scorer")
        if score is None or not score.metadata or "row" not in score.metadata:
            raise DataError(f"{path}: sample {sample.id!r} (epoch {sample.epoch}) has no abstain_scorer score")
        rows.append(ScoredRow.model_validate(score.metadata["row"]))
    source = {"harness": "inspect", "log": str(path), "task": eval_log.eval.task, "model": eval_log.eval.model,
              "inspect_version": (eval_log.eval.packages or {}).get("inspect_ai")}
    return write_run(harness, rows, out, f"inspect:{eval_log.eval.model}", source)


def import_lm_eval(samples: str | os.PathLike[str], out: str | os.PathLike[str], model: str | None = None) -> Path:
    """An lm-eval ``--log_samples`` file (``samples_abstain_<suite>_<protocol>_<date>.jsonl``) as a run folder;
    ``model`` defaults to the name of the folder lm-eval wrote it in (the model's, sanitized)."""
    path = Path(samples)
    if not path.exists():
        raise DataError(f"{path}: no such lm-eval samples file")
    rows, task = [], None
    for line_no, record in read_lines(path, json.loads):
        found = next((v for v in record.values() if isinstance(v, dict) and "row" in v and "task" in v), None)
        if found is None:
            raise DataError(f"{path}:{line_no}: not a sample of an abstain task (no abstain metric values)")
        task = task or found["task"]
        rows.append(ScoredRow.model_validate(found["row"]))
    if task is None:
        raise DataError(f"{path}: empty")
    harness = HarnessTask(**json.loads(task))
    source = {"harness": "lm-eval", "log": str(path)}
    return write_run(harness, rows, out, f"lm-eval:{model or path.parent.name}", source)
