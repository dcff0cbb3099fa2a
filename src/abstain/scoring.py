"""Response rows -> scored rows: parse once, judge once.

This is the single path shared by evaluation (``abstain score``/``eval``) and training rewards:
whatever a metric counts, a reward sees the same :class:`~abstain.schema.ScoredRow`.

:func:`score_file` reruns cheaply: when the output file already exists, its rows without a
``judge_error`` whose response row is unchanged are kept as they are, and only the missing or failed
rows are judged again (``rescore=True`` judges everything afresh). The output is still written
atomically, so an interrupted run leaves the previous file intact.

Training scores completions that are not in any file: :func:`score_completions` takes (item columns,
completion text) pairs — no ``model`` field, no file — and runs exactly the ``score_rows`` path, returning
scored rows that keep their parse (``row.prediction.boxed``, ``.reasoning``), so a format reward never
parses twice.

Example:
    >>> from abstain.judges import RuleJudge
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="q", answers=[], label="unanswerable",
    ...                   response="\\\\boxed{<DATA_UNCERTAIN>}", model="m")
    >>> [s.pred.value for s in score_rows([row], RuleJudge())]
    ['DATA_UNCERTAIN']
    >>> item = {"id": "7", "question": "2+2?", "answers": ["4"], "label": "answerable"}
    >>> [(s.correct, s.prediction.boxed) for s in score_completions([item, item], ["\\\\boxed{4}", "5"])]
    [(True, '4'), (False, None)]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from abstain.judges import RuleJudge
from abstain.judges.base import Judge, Judgment
from abstain.parsing import Prediction, parse_response
from abstain.schema import (
    DataError,
    Item,
    ResponseRow,
    ScoredRow,
    join_errors,
    read_jsonl,
    response_key,
    write_jsonl,
)

__all__ = ["ScoreSummary", "make_scored", "score_completions", "score_file", "score_rows"]


def make_scored(row: ResponseRow, pred: Prediction, judgment: Judgment) -> ScoredRow:
    """Combine a response row, its parse and its judgment into a scored row (no re-validation).

    The inputs are already validated (the row) or typed (parse and judgment), so the row is built with
    pydantic's ``model_construct``; it keeps ``pred`` as its :attr:`~abstain.schema.ScoredRow.prediction`.
    A field the judge failed on stays null, and its reason is in ``judge_errors``.
    """
    errors = dict(judgment.errors)
    scored = ScoredRow.model_construct(
        _fields_set=row.model_fields_set | _SCORED_FIELDS,
        **row.__dict__,
        **(row.__pydantic_extra__ or {}),
        pred=pred.pred,
        answer=pred.answer,
        format_ok=pred.format_ok,
        correct=None if "correct" in errors else judgment.correct,
        behavior=None if "behavior" in errors else judgment.behavior,
        clarification=pred.clarification,
        clarification_correct=None if "clarification_correct" in errors else judgment.clarification_correct,
        judge_errors=errors,
        judge_error=join_errors(errors),
        judged_by=dict(judgment.judged_by),
    )
    scored._prediction = pred
    return scored


_SCORED_FIELDS = frozenset(ScoredRow.model_fields) - frozenset(ResponseRow.model_fields)


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


def _item(columns: Item | Mapping[str, Any], index: int, cache: dict[int, Item]) -> Item:
    if isinstance(columns, Item):
        return columns
    key = id(columns)
    if key not in cache:
        try:
            cache[key] = Item.model_validate(dict(columns))
        except ValidationError as exc:
            fields = "; ".join(f"field '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors(include_url=False))
            raise DataError(f"item {index}: {fields}") from None
    return cache[key]


def score_completions(
    items: Sequence[Item | Mapping[str, Any]],
    completions: Sequence[str],
    judge: Judge | None = None,
    protocol: str | None = None,
    model: str = "policy",
) -> list[ScoredRow]:
    """Score (item, completion text) pairs exactly as :func:`score_rows` scores response rows.

    ``items`` are :class:`~abstain.schema.Item` objects or their columns as mappings (what a trainer's
    dataset rows hold; a bad one raises :class:`~abstain.schema.DataError` naming its index and field).
    ``judge`` defaults to the offline :class:`~abstain.judges.RuleJudge`. Each returned row keeps its
    parse as ``row.prediction``.
    """
    if len(items) != len(completions):
        raise ValueError(f"{len(items)} items but {len(completions)} completions")
    cache: dict[int, Item] = {}
    rows = []
    for i, (columns, text) in enumerate(zip(items, completions, strict=True)):
        if not isinstance(text, str):
            raise DataError(f"completion {i}: expected text, got {type(text).__name__}")
        item = _item(columns, i, cache)
        rows.append(ResponseRow.model_construct(
            _fields_set=item.model_fields_set | {"response", "model", "protocol"},
            **item.__dict__, **(item.__pydantic_extra__ or {}),
            response=text, model=model, protocol=protocol, sample=0,
        ))
    return list(score_rows(rows, judge if judge is not None else _default_judge(), batch_size=max(1, len(rows))))


_DEFAULT_JUDGE: list[Judge] = []


def _default_judge() -> Judge:
    if not _DEFAULT_JUDGE:
        _DEFAULT_JUDGE.append(RuleJudge())
    return _DEFAULT_JUDGE[0]


@dataclass
class ScoreSummary:
    """Counts of one scoring run (``reused``: rows kept from an earlier output, not judged again)."""

    rows: int
    judge_errors: int
    format_errors: int
    reused: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)  # judge_error text (cut) -> rows


def _reusable(output_path: Path, rows: Sequence[ResponseRow]) -> dict[int, ScoredRow]:
    """Rows of an existing output that need no new judgment, by input position."""
    if not output_path.exists():
        return {}
    done = {response_key(old): old for old in read_jsonl(output_path, ScoredRow, key=response_key)
            if old.judge_error is None}
    kept: dict[int, ScoredRow] = {}
    for i, row in enumerate(rows):
        old = done.get(response_key(row))
        if old is None:
            continue
        before = old.model_dump()
        if all(before.get(name) == value for name, value in row.model_dump().items()):
            kept[i] = old
    return kept


def score_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    judge: Judge,
    on_batch: Callable[[int], None] | None = None,
    rescore: bool = False,
) -> ScoreSummary:
    """Validate the whole input, score it, then write the output atomically.

    When ``output_path`` exists (and not ``rescore``), its rows without a judge error are kept and only
    the other rows are judged: a rerun after a failed judge server completes the missing rows only.
    """
    rows = read_jsonl(input_path, ResponseRow, key=response_key)
    kept = {} if rescore else _reusable(Path(output_path), rows)
    todo = [row for i, row in enumerate(rows) if i not in kept]
    if kept and on_batch is not None:
        on_batch(len(kept))
    errors = formats = 0

    def merged() -> Iterator[ScoredRow]:
        nonlocal errors, formats
        fresh = score_rows(todo, judge, on_batch=on_batch)
        for i in range(len(rows)):
            scored = kept[i] if i in kept else next(fresh)
            if scored.judge_error is not None:
                errors += 1
                kind = scored.judge_error[:160]
                kinds[kind] = kinds.get(kind, 0) + 1
            formats += not scored.format_ok
            yield scored

    kinds: dict[str, int] = {}
    write_jsonl(output_path, merged())
    return ScoreSummary(rows=len(rows), judge_errors=errors, format_errors=formats, reused=len(kept), error_kinds=kinds)
