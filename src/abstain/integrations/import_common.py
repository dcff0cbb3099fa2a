"""What every harness import shares: the run folder it writes, reading an Inspect log, what the log's run generated
with. :mod:`abstain.integrations.imports` (abstain's own tasks) and :mod:`abstain.integrations.abstentionbench_log`
(AbstentionBench's port) build on it.

Example::

    eval_log = read_inspect_log(Path("logs/x.eval"))
    inspect_run(eval_log).generation()["max_tokens"]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abstain.records.runs import METRICS, RESPONSES, SCORED, RunDir, write_json
from abstain.integrations.generation import InspectRun
from abstain.judges.base import Judgment
from abstain.parsing import parse_response
from abstain.schema import JUDGED_FIELDS, DataError, Item, ResponseRow, ScoredRow
from abstain.scoring import make_scored

__all__ = ["Imported", "inspect_run", "read_inspect_log", "unscored_row", "write_folder"]


@dataclass(frozen=True)
class Imported:
    """What an import wrote: the run folder, its rows, how many of them are unscored (judge errors in the log and
    samples without a score, ``no_score`` of them) and the generation settings that ran (None: not recorded)."""

    path: Path
    rows: int
    unscored: int
    no_score: int
    generation: dict[str, Any] | None


def write_folder(out: str | os.PathLike[str], record: dict[str, Any], rows: Sequence[ScoredRow],
                 metrics: dict[str, Any]) -> Path:
    """A new run folder at ``out`` (never over an existing run): ``config.json`` (``record``), the responses and
    scored rows (in run order), ``metrics.json`` and the report."""
    run = RunDir(out)
    if (run.path / SCORED).exists():
        raise DataError(f"{run.path} already holds a run: choose another --out")
    run.prepare(record)
    judged = set(ScoredRow.model_fields) - set(ResponseRow.model_fields)  # what the scorer added
    run.rewrite(RESPONSES, [ResponseRow.model_validate(r.model_dump(exclude=judged)) for r in rows])
    run.rewrite(SCORED, rows)
    write_json(run.path / METRICS, metrics)
    from abstain.report import write_report

    write_report(run.path)
    return run.path


def unscored_row(protocol: str, item: Item, text: str, reason: str, model: str, sample: int = 0) -> ScoredRow:
    """The row of a sample the log holds no abstain score for: parsed, every judged field an error (``reason``).

    Example:
        >>> from abstain.outcomes import outcome
        >>> item = Item(id="q1", question="What is 2 + 3?", answers=["5"], label="answerable")
        >>> row = unscored_row("idk", item, "", "the sample errored", "m")
        >>> outcome(row).value, row.judge_errors["correct"]
        ('unscored', 'no abstain score in the harness log: the sample errored')
    """
    row = ResponseRow(**item.model_dump(), response=text, model=model, protocol=protocol, sample=sample)
    why = f"no abstain score in the harness log: {reason}"
    return make_scored(row, parse_response(text), Judgment(errors={name: why for name in JUDGED_FIELDS}))


def read_inspect_log(path: Path) -> Any:
    """An Inspect log (``EvalLog``), or a :class:`DataError` naming the file."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise DataError(f"reading an Inspect log needs Inspect: pip install 'abstain[inspect]' ({exc})") from None
    if not path.exists():
        raise DataError(f"{path}: no such Inspect log")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - Inspect raises many kinds for a file that is not a log
        raise DataError(f"{path}: not an Inspect log ({type(exc).__name__}: {exc})") from None


def inspect_run(eval_log: Any) -> InspectRun:
    """What an Inspect run generated with: the model's generate config merged with the task plan's."""
    spec = eval_log.eval
    plan = eval_log.plan.config if eval_log.plan else None
    config = spec.model_generate_config.merge(plan) if plan is not None else spec.model_generate_config
    return InspectRun(config.model_dump(mode="json", exclude_none=True), spec.model_args or {},
                      epochs=spec.config.epochs or 1)
