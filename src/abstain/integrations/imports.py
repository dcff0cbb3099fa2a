"""A harness's log back into an abstain run folder: ``abstain import inspect LOG.eval``, ``abstain import lm-eval``.

The folder is what ``abstain eval`` writes — ``config.json`` (the run the harness task stands for, its model,
where it came from, and the generation settings that actually ran), ``responses.jsonl``, ``scored.jsonl``,
``metrics.json`` and the report — so ``abstain report``, ``abstain compare`` and the paired-difference table work
on a harness run beside abstain's own. The scored rows are the ones abstain's scorer wrote into the log (each
Inspect score's metadata, each lm-eval sample's first metric value); the metrics are recomputed from them in item
order.

What ran, not what the task asked for: ``max_tokens``, ``temperature`` and ``top_p`` in ``config.json`` are the
harness's (Inspect's generate config after ``--max-tokens`` / ``--temperature``, lm-eval's ``gen_kwargs`` after
``--gen_kwargs``), ``samples`` is Inspect's ``--epochs``, and ``generation`` holds the rest
(:mod:`abstain.integrations.generation`: stop strings, chat template, the harness's own names and values).

A sample the log holds no abstain score for (Inspect: the sample errored, or its scorer did) is not an error: it
becomes a row whose judged fields are errors (outcome ``unscored``), so the metrics count it as abstain eval
counts a judge error; :attr:`Imported.unscored` says how many rows are unscored, and ``config.json`` records them.

Example::

    done = import_inspect("logs/2026-12-03T10-00-00_abstain-eval_x.eval", "runs/inspect-quick")
    done.path, done.unscored, done.generation["max_tokens"]
    import_lm_eval("out/model/samples_abstain_quick_idk_2026-12-03.jsonl", "runs/lmeval-quick")
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from abstain.integrations.generation import LmEvalRun
from abstain.integrations.harness import HarnessTask
from abstain.integrations.import_common import Imported, inspect_run, read_inspect_log, unscored_row, write_folder
from abstain.outcomes import Outcome, outcome
from abstain.schema import DataError, Item, ScoredRow, read_lines

__all__ = ["import_inspect", "import_lm_eval", "write_run"]


@dataclass(frozen=True)
class HarnessLog:
    """One harness log, read: the scored rows, the model's label, where it came from and what it generated with
    (``samples``: samples per item, Inspect's epochs)."""

    rows: Sequence[ScoredRow]
    model: str
    source: dict[str, Any]
    generation: dict[str, Any] | None = None
    samples: int = 1
    no_score: int = 0


def _config(harness: HarnessTask, log: HarnessLog) -> dict[str, Any]:
    config = harness.eval_config(log.model)
    if log.generation is not None:  # what ran, where the harness says
        ran = {k: log.generation.get(k) for k in ("max_tokens", "temperature", "top_p")}
        try:
            config = replace(config, **{k: v for k, v in ran.items() if v is not None})
        except ValueError as exc:
            raise DataError(f"{log.source.get('log')}: generation settings abstain cannot record ({exc})") from None
    record = config.record(harness.prompts.item_set.items, harness.prompts.demos)
    record["samples"] = log.samples  # Inspect's epochs (abstain eval refuses several greedy samples; a log may not)
    if log.generation is not None:
        record["generation"] = log.generation
    return record


def write_run(harness: HarnessTask, log: HarnessLog, out: str | os.PathLike[str]) -> Imported:
    """An ``abstain eval`` run folder for ``log``'s rows (scored by the harness with abstain's scorer) at ``out``."""
    rows = harness.in_order(log.rows)
    if not rows:
        raise DataError(f"{log.source.get('log')}: no sample of an abstain task in this log")
    unscored = [r for r in rows if outcome(r) is Outcome.UNSCORED]
    record = {**_config(harness, log), "imported_from": log.source, "samples_in_log": len(rows),
              "samples_in_task": len(harness.prompts.work) * log.samples,
              "unscored": {"count": len(unscored), "no_score_in_log": log.no_score,
                           "ids": [f"{r.id}#{r.sample}" for r in unscored[:20]]}}
    record["command"] = f"abstain import {log.source['harness']} {log.source['log']}"
    path = write_folder(out, record, rows, harness.metrics_json(rows))
    return Imported(path, len(rows), len(unscored), log.no_score, log.generation)


def import_inspect(log: str | os.PathLike[str], out: str | os.PathLike[str]) -> Imported:
    """An Inspect log (``.eval`` or ``.json``) of an abstain task — or of ``inspect_evals/abstention_bench``
    (:func:`abstain.integrations.abstentionbench_log.import_abstentionbench`) — as a run folder."""
    path = Path(log)
    eval_log = read_inspect_log(path)
    spec = eval_log.eval
    from abstain.integrations.abstentionbench_log import import_abstentionbench, is_abstentionbench

    if is_abstentionbench(eval_log):
        return import_abstentionbench(eval_log, path, out)
    args = (spec.metadata or {}).get("abstain")
    if not isinstance(args, dict):
        raise DataError(f"{path}: task {spec.task!r} is not an abstain task (no abstain metadata)")
    harness = HarnessTask(**{k: v for k, v in args.items() if k != "eval"})
    model = f"inspect:{spec.model}"
    rows, no_score = [], 0
    for sample in eval_log.samples or []:
        score = (sample.scores or {}).get("abstain_scorer")
        if score is not None and score.metadata and "row" in score.metadata:
            rows.append(ScoredRow.model_validate(score.metadata["row"]))
            continue
        item = (sample.metadata or {}).get("item")
        if not isinstance(item, dict):
            raise DataError(f"{path}: sample {sample.id!r} (epoch {sample.epoch}) is not an abstain sample (no item)")
        reason = "the sample has no abstain_scorer score"
        if sample.error:
            reason = "the sample errored: " + ((sample.error.message or "").strip().splitlines() or ["?"])[0]
        text = sample.output.completion if sample.output else ""
        rows.append(unscored_row(harness.protocol, Item.model_validate(item), text, reason, model, sample.epoch - 1))
        no_score += 1
    run = inspect_run(eval_log)
    source = {"harness": "inspect", "log": str(path), "task": spec.task, "model": spec.model,
              "inspect_version": (spec.packages or {}).get("inspect_ai")}
    return write_run(harness, HarnessLog(rows, model, source, run.generation(), run.epochs, no_score), out)


def _lm_eval_generation(record: Mapping[str, Any], carrier: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's generation block: the task's (:class:`~abstain.integrations.lm_eval.task.AbstainTask`), else the
    ``gen_kwargs`` lm-eval logged with the request (a log of older task files: chat template and demonstrations
    not recorded)."""
    if carrier.get("generation"):
        return dict(carrier["generation"])
    arguments = record.get("arguments")
    requests = arguments.values() if isinstance(arguments, dict) else arguments or []
    for request in requests:
        values = request.values() if isinstance(request, dict) else request
        kwargs = next((v for v in values if isinstance(v, dict)), None)
        if kwargs is not None:
            generation = LmEvalRun(kwargs, apply_chat_template=False, num_fewshot=0).generation()
            generation["chat_template"] = None
            generation["as_given"].update(apply_chat_template=None, num_fewshot=None, fewshot_as_multiturn=None)
            return generation
    return None


def import_lm_eval(samples: str | os.PathLike[str], out: str | os.PathLike[str], model: str | None = None) -> Imported:
    """An lm-eval ``--log_samples`` file (``samples_abstain_<suite>_<protocol>_<date>.jsonl``) as a run folder;
    ``model`` defaults to the name of the folder lm-eval wrote it in (the model's, sanitized)."""
    path = Path(samples)
    if not path.exists():
        raise DataError(f"{path}: no such lm-eval samples file")
    rows, task, generation = [], None, None
    for line_no, record in read_lines(path, json.loads):
        found = next((v for v in record.values() if isinstance(v, dict) and "row" in v and "task" in v), None)
        if found is None:
            raise DataError(f"{path}:{line_no}: not a sample of an abstain task (no abstain metric values)")
        if task is None:
            task, generation = found["task"], _lm_eval_generation(record, found)
        rows.append(ScoredRow.model_validate(found["row"]))
    if task is None:
        raise DataError(f"{path}: empty")
    harness = HarnessTask(**json.loads(task))
    source = {"harness": "lm-eval", "log": str(path)}
    return write_run(harness, HarnessLog(rows, f"lm-eval:{model or path.parent.name}", source, generation), out)
