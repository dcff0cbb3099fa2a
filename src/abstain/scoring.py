"""Response rows -> scored rows: parse once, judge once.

This is the single path shared by evaluation (``abstain score``/``eval``) and training rewards:
whatever a metric counts, a reward sees the same :class:`~abstain.schema.ScoredRow`.

Example:
    >>> from abstain.judges import RuleJudge
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="q", answers=[], label="unanswerable",
    ...                   response="\\\\boxed{<DATA_UNCERTAIN>}", model="m")
    >>> [s.pred.value for s in score_rows([row], RuleJudge())]
    ['DATA_UNCERTAIN']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from abstain.judges.base import Judge, Judgment
from abstain.parsing import Prediction, parse_response
from abstain.schema import ResponseRow, ScoredRow, read_jsonl, write_jsonl

__all__ = ["ScoreSummary", "make_scored", "score_file", "score_rows"]


def make_scored(row: ResponseRow, pred: Prediction, judgment: Judgment) -> ScoredRow:
    """Combine a response row, its parse and its judgment into a scored row (no re-validation)."""
    fields = row.model_dump()
    fields.update(
        pred=pred.pred,
        answer=pred.answer,
        format_ok=pred.format_ok,
        correct=None if judgment.error else judgment.correct,
        behavior=judgment.behavior,
        clarification=pred.clarification,
        clarification_correct=judgment.clarification_correct,
        judge_error=judgment.error,
        judged_by=dict(judgment.judged_by),
    )
    return ScoredRow.model_construct(**fields)


def score_rows(
    rows: Sequence[ResponseRow],
    judge: Judge,
    batch_size: int = 256,
    on_batch: Callable[[int], None] | None = None,
) -> Iterator[ScoredRow]:
    """Parse and judge rows in batches, yielding scored rows in input order."""
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        preds = [parse_response(r.response) for r in batch]
        judgments = judge.judge(batch, preds)
        for row, pred, judgment in zip(batch, preds, judgments, strict=True):
            yield make_scored(row, pred, judgment)
        if on_batch is not None:
            on_batch(len(batch))


@dataclass
class ScoreSummary:
    """Counts of one scoring run."""

    rows: int
    judge_errors: int
    format_errors: int


def score_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    judge: Judge,
    on_batch: Callable[[int], None] | None = None,
) -> ScoreSummary:
    """Validate the whole input, score it, then write the output atomically."""
    rows = read_jsonl(input_path, ResponseRow)
    errors = formats = 0

    def counted() -> Iterator[ScoredRow]:
        nonlocal errors, formats
        for scored in score_rows(rows, judge, on_batch=on_batch):
            errors += scored.judge_error is not None
            formats += not scored.format_ok
            yield scored

    write_jsonl(output_path, counted())
    return ScoreSummary(rows=len(rows), judge_errors=errors, format_errors=formats)
