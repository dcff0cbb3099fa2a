"""Response rows -> scored rows: parse once, judge once.

This is the single path shared by evaluation (``abstain score``/``eval``) and training rewards:
whatever a metric counts, a reward sees the same :class:`~abstain.schema.ScoredRow`. Two entry points:

* :func:`score` — rows or a JSONL file of them (``abstain.score``, ``abstain score``); with ``output`` it
  writes atomically and a rerun judges only the rows that are missing there or got a judge error;
* :func:`score_completions` — (item columns, completion text) pairs, no file, no ``model`` field: what a
  reward function scores each training step.

Both run :func:`score_rows` (parse -> judge -> :func:`make_scored`). Scoring a row that was scored
before replaces its old judgment.

Example:
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="q", answers=[], label="unanswerable",
    ...                   response="\\\\boxed{<DATA_UNCERTAIN>}", model="m")
    >>> [s.pred.value for s in score([row])]
    ['DATA_UNCERTAIN']
    >>> item = {"id": "7", "question": "2+2?", "answers": ["4"], "label": "answerable"}
    >>> [(s.correct, s.answer) for s in score_completions([item, item], ["\\\\boxed{4}", "5"])]
    [(True, '4'), (False, '5')]
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Union, overload

from pydantic import ValidationError

from abstain.judges import RuleJudge
from abstain.judges.base import Judge, Judgment
from abstain.judges.options import JudgeConfig
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

__all__ = ["Scored", "make_scored", "score", "score_completions", "score_rows"]


def _response_columns(row: Item) -> dict[str, Any]:
    """A row's item and response columns, without any scored field it carries from an earlier scoring.

    A scored file read as response rows keeps ``pred``, ``correct`` ... as extra columns; they are stale
    the moment the row is judged again, so the new judgment replaces them (and a re-scored file gets the
    same decisions as its responses scored afresh).
    """
    columns = {**row.__dict__, **(row.__pydantic_extra__ or {})}
    for name in _SCORED_FIELDS:
        columns.pop(name, None)
    return columns


def make_scored(row: ResponseRow, pred: Prediction, judgment: Judgment) -> ScoredRow:
    """Combine a response row, its parse and its judgment into a scored row (no re-validation).

    The inputs are already validated (the row) or typed (parse and judgment), so the row is built with
    pydantic's ``model_construct``. Scored fields the row already carried (a scored file scored again)
    are replaced by this judgment. A field the judge failed on stays null, and its reason is in
    ``judge_errors``.
    """
    errors = dict(judgment.errors)
    return ScoredRow.model_construct(
        _fields_set=row.model_fields_set | _SCORED_FIELDS,
        **_response_columns(row),
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


_SCORED_FIELDS = frozenset(ScoredRow.model_fields) - frozenset(ResponseRow.model_fields)


def score_rows(
    rows: Sequence[ResponseRow],
    judge: Judge,
    batch_size: int = 256,
    on_batch: Callable[[int], None] | None = None,
) -> Iterator[ScoredRow]:
    """Parse and judge rows in batches, yielding scored rows in input order (the engine under :func:`score`
    and :func:`score_completions`; a run directory streams its rows to disk from it)."""
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
    """Score (item, completion text) pairs exactly as :func:`score` scores response rows (for rewards).

    ``items`` are :class:`~abstain.schema.Item` objects or their columns as mappings (what a trainer's
    dataset rows hold; a bad one raises :class:`~abstain.schema.DataError` naming its index and field).
    ``judge`` defaults to the offline :class:`~abstain.judges.RuleJudge`.
    """
    if len(items) != len(completions):
        raise ValueError(f"{len(items)} items but {len(completions)} completions")
    cache: dict[int, Item] = {}
    rows = []
    for i, (columns, text) in enumerate(zip(items, completions, strict=True)):
        if not isinstance(text, str):
            raise DataError(f"completion {i}: expected text, got {type(text).__name__}")
        item = _item(columns, i, cache)
        fields = {**_response_columns(item), "response": text, "model": model, "protocol": protocol, "sample": 0}
        rows.append(ResponseRow.model_construct(_fields_set=item.model_fields_set | _RESPONSE_SET, **fields))
    return list(score_rows(rows, judge if judge is not None else _default_judge(), batch_size=max(1, len(rows))))


_RESPONSE_SET = frozenset({"response", "model", "protocol", "sample"})
_DEFAULT_JUDGE: list[Judge] = []


def _default_judge() -> Judge:
    if not _DEFAULT_JUDGE:
        _DEFAULT_JUDGE.append(RuleJudge())
    return _DEFAULT_JUDGE[0]


class Scored(Sequence[ScoredRow]):
    """The scored rows of one :func:`score` call (a sequence of :class:`~abstain.schema.ScoredRow`) and
    what the call did: ``reused`` rows were kept from an earlier ``output`` without being judged again."""

    def __init__(self, rows: list[ScoredRow], reused: int = 0) -> None:
        self.rows = rows
        self.reused = reused

    @overload
    def __getitem__(self, index: int) -> ScoredRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[ScoredRow]: ...
    def __getitem__(self, index: int | slice) -> ScoredRow | list[ScoredRow]:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"Scored({len(self.rows)} rows, {self.judge_errors} judge errors, {self.reused} reused)"

    @property
    def judge_errors(self) -> int:
        """Rows on which the judge could not decide some field."""
        return sum(r.judge_error is not None for r in self.rows)

    @property
    def format_errors(self) -> int:
        """Rows without a balanced ``\\boxed{}``."""
        return sum(not r.format_ok for r in self.rows)

    @property
    def error_kinds(self) -> dict[str, int]:
        """Judge-error texts (cut to 160 characters) -> rows, most frequent first."""
        counts = Counter(r.judge_error[:160] for r in self.rows if r.judge_error is not None)
        return dict(counts.most_common())


def _reusable(output_path: Path, rows: Sequence[ResponseRow]) -> dict[int, ScoredRow]:
    """Rows of an existing output that need no new judgment, by input position: no judge error there,
    and the same item and response columns (stale scored columns of the input do not count)."""
    if not output_path.exists():
        return {}
    done = {response_key(old): old for old in read_jsonl(output_path, ScoredRow, key=response_key)
            if old.judge_error is None}
    kept: dict[int, ScoredRow] = {}
    for i, row in enumerate(rows):
        old = done.get(response_key(row))
        if old is not None and _response_columns(old) == _response_columns(row):
            kept[i] = old
    return kept


JudgeSpec = Union[str, Judge, JudgeConfig]


def score(
    source: Iterable[ResponseRow] | str | os.PathLike[str],
    judge: JudgeSpec = "rule",
    *,
    output: str | os.PathLike[str] | None = None,
    rescore: bool = False,
    on_batch: Callable[[int], None] | None = None,
    **judge_options: Any,
) -> Scored:
    """Parse and judge response rows — a JSONL file of them, or rows in memory (scored rows too: their
    old judgment is replaced) — with a judge given by name, config or object.

    ``judge_options`` go to :func:`abstain.judges.make_judge` with a judge name (``behaviors="all"``, or
    ``model=`` and ``base_url=`` for the ``llm`` / ``hybrid`` judges); a judge built here is closed here.
    With ``output`` the scored rows are also written there atomically (an interrupted call leaves the
    previous file intact); when that file exists (and not ``rescore``), its rows without a judge error
    whose item and response are unchanged are kept as they are and only the others are judged again —
    a rerun after a failed judge server completes the missing rows only.

    Example:
        >>> rows = [ResponseRow(id="1", question="2+2?", answers=["4"], label="answerable",
        ...                     response="\\\\boxed{4}", model="m")]
        >>> scored = score(rows)
        >>> scored[0].correct, score(scored)[0].correct   # a scored row scored again: a fresh judgment
        (True, True)
    """
    rows = read_jsonl(source, ResponseRow, key=response_key) if isinstance(source, (str, os.PathLike)) \
        else list(source)
    kept = {} if output is None or rescore else _reusable(Path(output), rows)
    todo = [row for i, row in enumerate(rows) if i not in kept]
    if kept and on_batch is not None:
        on_batch(len(kept))
    judge_obj, owned = _judge(judge, judge_options)
    try:
        fresh = score_rows(todo, judge_obj, on_batch=on_batch)
        out = [kept[i] if i in kept else next(fresh) for i in range(len(rows))]
    finally:
        if owned and callable(close := getattr(judge_obj, "close", None)):
            close()
    if output is not None:
        write_jsonl(output, out)
    return Scored(out, reused=len(kept))


def _judge(judge: JudgeSpec, options: dict[str, Any]) -> tuple[Judge, bool]:
    """The judge object, and whether it was built here (then it is closed here)."""
    if isinstance(judge, str):
        from abstain.judges import make_judge

        return make_judge(judge, **options), True
    if options:
        raise TypeError(f"judge options {sorted(options)} only go with a judge name, not a built judge")
    if isinstance(judge, JudgeConfig):
        return judge.build(), True
    return judge, False
