"""A log of ``inspect_evals/abstention_bench`` — a task abstain did not write — as an abstain run folder.

``abstain import inspect LOG`` recognises the task and reads each sample as the port's loader made it
(:func:`abstain.data.abstentionbench_port.item_of`: the same id, label, dataset and scenario as ``--data
abstentionbench:...``), the model's text, and the grader's verdict as the port's metrics read it (``value_to_float``
of the score is 1.0: an abstention; "No" is not; a reply the grader's pattern did not match scores NaN, which
Inspect leaves out of the log's metrics: here it is a judge error of the row's behavior, which ``ab.*`` leaves
out alike). The rows are
``plain``-protocol rows (the port asks the bare question) whose behavior is the grader's: ``ABS`` for an abstention,
``SH`` for an answer (``judged_by: abstentionbench-log``); the log judges no correctness, so ``correct`` is what the
parse alone decides (an unboxed answer is wrong by format) and accuracy is not AbstentionBench's.

The folder's ``ab.recall`` / ``ab.precision`` / ``ab.f1`` (and per dataset, ``by_source.<dataset>.ab.*``, the port's
``dataset_name`` groups) are computed by abstain's own metric code from those rows; :func:`log_metrics` reads the
numbers the log reports, and ``config.json`` keeps them (``imported_from.log_metrics``) for anyone to compare. One
convention differs: where a ratio is undefined (nothing abstained), scikit-learn, which the port uses, reports 0.0
and abstain reports none (null).

Example::

    done = import_inspect("logs/2026-12-05T10-00-00_abstention-bench_x.eval", "runs/ab-freshqa")
    log_metrics(read_inspect_log(Path(...)))   # {'recall': 0.5, 'precision': 0.25, ..., 'FreshQADataset/recall': 0.5}
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from abstain.data.abstentionbench_port import PREFIX, dataset_names, item_of
from abstain.evaluation.run import EvalConfig
from abstain.integrations.import_common import Imported, inspect_run, unscored_row, write_folder
from abstain.judges.base import Judgment
from abstain.judges.correctness import correctness_precheck
from abstain.judges.options import JudgeConfig
from abstain.parsing import parse_response
from abstain.protocols.plain import PLAIN
from abstain.report.summary import run_metrics
from abstain.schema import Behavior, DataError, Pred, ResponseRow, ScoredRow
from abstain.scoring import make_scored

__all__ = ["TASK", "import_abstentionbench", "is_abstentionbench", "log_metrics", "scored_row", "verdict"]

TASK = "abstention_bench"
JUDGED_BY = "abstentionbench-log"
_ALL = ("recall", "precision", "f1")  # the port's grouped metrics, in its order, each ending with its overall value


def is_abstentionbench(eval_log: Any) -> bool:
    """Whether an Inspect log is of the AbstentionBench port's task (``inspect_evals/abstention_bench``)."""
    return str(eval_log.eval.task).split("/")[-1] == TASK


def verdict(score: Any) -> bool | None:
    """The grader's verdict in a log as the port's metrics read it (``value_to_float`` of the score is 1.0: an
    abstention), None where the grader's reply matched neither word (the score is NaN: Inspect leaves it out of
    the metrics, and so does abstain, as a judge error of the row's behavior)."""
    from inspect_ai.scorer import value_to_float

    value = value_to_float()(score.value)
    return None if math.isnan(value) else value == 1.0


def scored_row(item_row: ResponseRow, abstained: bool | None, why: str = "") -> ScoredRow:
    """A ``plain`` row judged by the grader: behavior ABS (abstained) or SH, correctness from the parse alone;
    ``abstained`` None (no verdict) is a judge error of the behavior, ``why`` its reason.

    Example:
        >>> from abstain.schema import ResponseRow
        >>> r = ResponseRow(id="x", question="q", answers=["a"], label="answerable", response="I'm not sure.",
        ...                 model="m", protocol="plain")
        >>> row = scored_row(r, abstained=True)
        >>> row.behavior.value, row.correct, row.judged_by["behavior"]
        ('ABS', False, 'abstentionbench-log')
    """
    pred = parse_response(item_row.response)
    if pred.pred is not Pred.ANSWER:  # a tag the parser reads as a refusal: the grader decides, as in the log
        pred = replace(pred, pred=Pred.ANSWER)
    judgment = correctness_precheck(item_row, pred) or Judgment(
        errors={"correct": "not judged: AbstentionBench's grader decides abstention only"})
    judgment.behavior = Behavior.ABS if abstained else Behavior.SH
    judgment.judged_by["behavior"] = JUDGED_BY
    if abstained is None:
        judgment.fail("behavior", f"AbstentionBench's grader said neither yes nor no{': ' if why else ''}{why}")
    return make_scored(item_row, pred, judgment)


def log_metrics(eval_log: Any, names: dict[str, str] | None = None) -> dict[str, float]:
    """The numbers an AbstentionBench log reports: ``recall`` / ``precision`` / ``f1`` overall and
    ``<dataset_name>/<metric>`` per dataset (Inspect numbers repeated group keys ``FreshQADataset2`` ...);
    ``names``: :func:`~abstain.data.abstentionbench_port.dataset_names`, when the caller has read them."""
    known = set(names or dataset_names())
    out: dict[str, float] = {}
    for score in eval_log.results.scores if eval_log.results else []:
        pending: dict[str, float] = {}
        for key, metric in score.metrics.items():
            if key in _ALL:
                out[key] = float(metric.value)
                out.update({f"{group}/{key}": value for group, value in pending.items()})
                pending = {}
                continue
            base = key if key in known else key.rstrip("0123456789")
            if base not in known:
                raise DataError(f"log metric {key!r} is neither a dataset of the port nor recall/precision/f1")
            pending[base] = float(metric.value)
    return out


def import_abstentionbench(eval_log: Any, path: Path, out: str | os.PathLike[str]) -> Imported:
    """The run folder of an ``inspect_evals/abstention_bench`` log (see the module docstring)."""
    spec = eval_log.eval
    names = dataset_names()
    model = f"inspect:{spec.model}"
    rows, items, no_score = [], {}, 0
    for sample in eval_log.samples or []:
        metadata = sample.metadata or {}
        if "dataset_name" not in metadata or "abstention_label" not in metadata:
            raise DataError(f"{path}: sample {sample.id!r} has no dataset_name / abstention_label metadata: not a "
                            "sample of the AbstentionBench port")
        item = item_of(sample, names.get(str(metadata["dataset_name"]), str(metadata["dataset_name"])))
        items.setdefault(item.id, item)
        text = sample.output.completion if sample.output else ""
        row = ResponseRow(**item.model_dump(), response=text, model=model, protocol=PLAIN.name, sample=sample.epoch - 1)
        scores = list((sample.scores or {}).values())
        if len(scores) != 1:
            no_score += 1
            reason = "the sample errored" if sample.error else f"{len(scores)} scores, expected the grader's one"
            rows.append(unscored_row(PLAIN.name, item, text, reason, model, sample.epoch - 1))
            continue
        rows.append(scored_row(row, verdict(scores[0]), (scores[0].explanation or "")[:200]))
    if not rows:
        raise DataError(f"{path}: no samples in this AbstentionBench log")
    args = spec.task_args or {}
    what = str(args.get("dataset_name") or "all") + (":fast" if args.get("use_fast_sampling") else "")
    grader = args.get("grader_model")
    generation = inspect_run(eval_log).generation()
    ran = {k: generation[k] for k in ("max_tokens", "temperature", "top_p") if generation.get(k) is not None}
    try:
        config = EvalConfig(model=model, data=f"{PREFIX}{what}", protocols=(PLAIN.name,), **ran,
                            judge=JudgeConfig(name="abstentionbench", model=str(grader) if grader else None))
    except ValueError as exc:
        raise DataError(f"{path}: generation settings abstain cannot record ({exc})") from None
    record = config.record(list(items.values()), {})
    record["generation"] = generation
    reported = {k: None if math.isnan(v) else v for k, v in log_metrics(eval_log, names).items()}  # NaN is not JSON
    record.update(imported_from={"harness": "inspect", "log": str(path), "task": spec.task, "model": spec.model,
                                 "task_args": {k: str(v) for k, v in args.items()}, "log_metrics": reported,
                                 "inspect_evals_version": (spec.packages or {}).get("inspect_evals")},
                  samples_in_log=len(rows), unscored={"count": no_score, "no_score_in_log": no_score},
                  command=f"abstain import inspect {path}")
    written = write_folder(out, record, rows, run_metrics(rows, record))
    return Imported(written, len(rows), no_score, no_score, generation)
