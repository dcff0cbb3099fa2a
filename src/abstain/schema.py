"""The interchange format: items, response rows and scored rows, one JSON object per line.

Every stage of abstain reads and writes these three row types, so a file written by one
command is the input of the next (``synth``/loaders -> ``eval`` -> ``score`` -> ``metrics``).

Example:
    >>> item = Item(id="umwp-1", question="How many?", answers=[460.0], label="answerable")
    >>> item.answers
    ['460']
    >>> row = ResponseRow(**item.model_dump(), response="\\\\boxed{460}", model="m")
    >>> row.sample
    0
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "Behavior",
    "benchmark_of",
    "dataset_of",
    "DataError",
    "DuplicateRowError",
    "Item",
    "JUDGED_FIELDS",
    "Label",
    "Message",
    "Pred",
    "ResponseRow",
    "ScoredRow",
    "iter_jsonl",
    "join_errors",
    "read_jsonl",
    "read_lines",
    "response_key",
    "ROW_KEY_FIELDS",
    "write_json",
    "write_jsonl",
    "write_text",
]


class Pred(str, Enum):
    """The decision a response commits to (UA-Bench's three-way attribution)."""

    ANSWER = "ANSWER"
    DATA_UNCERTAIN = "DATA_UNCERTAIN"
    MODEL_UNCERTAIN = "MODEL_UNCERTAIN"


class Behavior(str, Enum):
    """ACA-RL's five terminal behaviors on a missing-premise question."""

    SH = "SH"  # silent hallucination: a definite answer, no acknowledgment
    EA = "EA"  # explicit assumption: a definite answer under a stated, ungrounded assumption
    ABS = "ABS"  # abstention: refuses, names the problem as underspecified
    COND = "COND"  # conditional formulation: the answer as a formula in the missing quantity
    ELICIT = "ELICIT"  # active elicitation: asks for the missing premise


Label = Literal["answerable", "unanswerable"]

#: one chat message, ``{"role": "user", "content": "..."}``: what protocols write and backends and trainers read
Message = dict[str, str]

#: the fields a judge decides; a judge error is kept per field (``ScoredRow.judge_errors``)
JUDGED_FIELDS = ("correct", "behavior", "clarification_correct")


def join_errors(errors: dict[str, str]) -> str | None:
    """The one-line summary of per-field judge errors (``ScoredRow.judge_error``), None when there are none.

    Example:
        >>> join_errors({"behavior": "llm behavior: timed out"})
        'llm behavior: timed out'
    """
    return "; ".join(dict.fromkeys(errors.values())) or None


class DataError(ValueError):
    """A malformed input file; the message names the file and line."""


class DuplicateRowError(DataError):
    """Two rows of one file share the key that must identify a row; the message names both lines."""


def _canonical_answer(value: Any) -> str:
    """Reference answers are strings; numbers keep their shortest exact form (460.0 -> '460')."""
    if isinstance(value, bool):
        raise ValueError("a reference answer cannot be a boolean")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"a reference answer must be a string or a number, got {type(value).__name__}")


class Item(BaseModel):
    """A question with its reference answers and whether it can be answered.

    Unknown fields are kept (``extra="allow"``) so that columns a tool adds (``graph``,
    ``pair_id`` from synthesis, your own bookkeeping) survive every stage unchanged.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str = Field(description="Unique id of the item within its file.")
    question: str = Field(description="The question shown to the model.")
    answers: list[str] = Field(
        description="Acceptable reference answers; any one may match. Empty for unanswerable items."
    )
    label: Label = Field(description="'answerable' or 'unanswerable'.")
    category: str | None = Field(default=None, description="Breakdown group, e.g. knowledge | reasoning.")
    perturbation: str | None = Field(default=None, description="How an unanswerable twin was made.")
    gap: str | None = Field(default=None, description="What is missing, in words.")
    source: str | None = Field(default=None, description="Benchmark or generator the item comes from.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Free-form metadata.")

    @model_validator(mode="before")
    @classmethod
    def _hint_common_mistakes(cls, data: Any) -> Any:
        if isinstance(data, dict) and "answers" not in data and "answer" in data:
            raise ValueError("field 'answers' (a list) is missing; found 'answer' - rename it to 'answers'")
        return data

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("answers", mode="before")
    @classmethod
    def _answers_to_str(cls, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            value = [value]
        return [_canonical_answer(v) for v in value]


def benchmark_of(item: Item) -> str:
    """The benchmark an item comes from (``meta.benchmark``, else its source, else ``custom``)."""
    return str(item.meta.get("benchmark") or (item.source or "custom").split("/")[0])


def dataset_of(item: Item) -> str:
    """The AbstentionBench dataset of an item or row: ``meta.dataset``, else :func:`benchmark_of`.

    AbstentionBench averages its metrics over datasets (sub-datasets separate); this is that grouping.

    Example:
        >>> dataset_of(Item(id="1", question="q", answers=[], label="unanswerable",
        ...                 meta={"benchmark": "coconot", "dataset": "coconot/subjective"}))
        'coconot/subjective'
        >>> dataset_of(Item(id="2", question="q", answers=[], label="unanswerable", source="umwp/svamp"))
        'umwp'
    """
    return str(item.meta.get("dataset") or benchmark_of(item))


class ResponseRow(Item):
    """An item plus one raw model response."""

    response: str = Field(description="Raw model text, reasoning included.")
    model: str = Field(description="Name of the model that wrote the response.")
    protocol: str | None = Field(default=None, description="Prompt protocol that produced it.")
    sample: int = Field(default=0, ge=0, description="Sample index when several are drawn per item.")
    confidence: dict[str, float | None] | None = Field(
        default=None,
        description="Confidence estimates of the response, higher = more confident (abstain eval --confidence; "
                    "abstain.confidence); absent when none was asked for. Not part of the row's key: rescoring keeps it.",
    )


class ScoredRow(ResponseRow):
    """A response row plus its parsed prediction and judgment."""

    pred: Pred
    answer: str | None = Field(description="Extracted final answer (boxed content or the tail).")
    format_ok: bool = Field(description="False when no balanced \\boxed{} could be recovered.")
    correct: bool | None = Field(description="Null when pred != ANSWER or the judge failed.")
    behavior: Behavior | None = None
    clarification: str | None = Field(default=None, description="Answer text outside the box.")
    clarification_correct: bool | None = None
    judge_errors: dict[str, str] = Field(
        default_factory=dict,
        description="Why the judge could not decide a field, per field (correct, behavior, clarification_correct).",
    )
    judge_error: str | None = Field(default=None, description="The per-field errors joined; null when none.")
    judged_by: dict[str, str] = Field(
        default_factory=dict, description="Which judge decided each field (correct, behavior, ...)."
    )

    @model_validator(mode="after")
    def _errors_agree(self) -> ScoredRow:
        # a file written before errors were kept per field: the error covers every judged field
        if self.judge_error and not self.judge_errors:
            self.judge_errors = {name: self.judge_error for name in JUDGED_FIELDS}
        elif self.judge_errors:
            unknown = set(self.judge_errors) - set(JUDGED_FIELDS)
            if unknown:
                raise ValueError(f"judge_errors has unknown fields {sorted(unknown)}; allowed: {list(JUDGED_FIELDS)}")
            self.judge_error = join_errors(self.judge_errors)
        return self


RowT = TypeVar("RowT", bound=BaseModel)


def _describe(error: ValidationError) -> str:
    parts = []
    for err in error.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if err["type"] == "json_invalid":
            parts.append(f"invalid JSON ({err.get('ctx', {}).get('error', msg)})")
        elif loc:
            parts.append(f"field '{loc}': {msg}")
        else:
            parts.append(msg)
    return "; ".join(parts)


ParsedT = TypeVar("ParsedT")
log = logging.getLogger(__name__)


def _reason(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        return _describe(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc})"
    return str(exc)


def read_lines(
    path: str | os.PathLike[str], parse: Callable[[bytes], ParsedT], repair_tail: bool = False
) -> list[tuple[int, ParsedT]]:
    """``(line number, parse(line))`` for each non-blank line of a JSONL file; a line ``parse`` rejects
    (a ``ValueError``: invalid JSON, a pydantic validation error) raises :class:`DataError` naming
    ``file:line``.

    ``repair_tail``: the file is one a process appends to, and ``kill -9`` can leave half a line at its
    end; a last line without its newline, or one that does not parse, is then cut off the file (with a
    warning) instead of raising, so the next append starts on a clean line and that row is written
    again. Only the last line: damage elsewhere is still an error.

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "log.jsonl")
        >>> _ = open(p, "w").write('{"step": 1}\\n{"step": 2, "lo')  # killed mid-write
        >>> [row["step"] for _, row in read_lines(p, json.loads, repair_tail=True)]
        [1]
        >>> open(p).read()
        '{"step": 1}\\n'
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # tail: what follows the last newline
    if not repair_tail and tail.strip():
        complete.append(tail)
    out: list[tuple[int, ParsedT]] = []
    good_end = offset = 0  # byte offset after the last complete line that parsed
    for lineno, raw in enumerate(complete, start=1):
        offset += len(raw) + 1
        if not raw.strip():
            good_end = offset
            continue
        try:
            out.append((lineno, parse(raw)))
        except ValueError as exc:
            if repair_tail and lineno == len(complete) and not tail:
                break
            raise DataError(f"{path}:{lineno}: {_reason(exc)}") from None
        good_end = offset
    if repair_tail and good_end < len(data):
        log.warning("%s: cutting %d bytes of a half-written last line (a crash mid-write)", path, len(data) - good_end)
        with path.open("r+b") as handle:
            handle.truncate(good_end)
    return out


def iter_jsonl(
    path: str | os.PathLike[str], model: type[RowT], key: Callable[[RowT], Hashable] | None = None
) -> Iterator[RowT]:
    """Yield validated rows of ``model`` from a JSONL file, skipping blank lines.

    Raises :class:`DataError` naming ``file:line`` at the first malformed line, and
    :class:`DuplicateRowError` naming both lines when ``key`` is given and two rows share it.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    seen: dict[Hashable, int] = {}
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = model.model_validate_json(raw)
            except ValidationError as exc:
                raise DataError(f"{path}:{lineno}: {_describe(exc)}") from None
            if key is not None:
                k = key(row)
                first = seen.setdefault(k, lineno)
                if first != lineno:
                    raise DuplicateRowError(
                        f"{path}:{lineno}: the same row as line {first} ({_show_key(k)}); "
                        "each row must be unique - remove one of them"
                    )
            yield row


def _show_key(key: Hashable) -> str:
    if isinstance(key, tuple) and len(key) == len(ROW_KEY_FIELDS):
        return ", ".join(f"{name}={value!r}" for name, value in zip(ROW_KEY_FIELDS, key, strict=True))
    return repr(key)


#: what identifies a response row in a file: the same item, protocol, sample and model twice is an error
ROW_KEY_FIELDS = ("id", "protocol", "sample", "model")


def response_key(row: ResponseRow) -> tuple[str, str | None, int, str]:
    """The key of a response (or scored) row within a file: (id, protocol, sample, model)."""
    return (row.id, row.protocol, row.sample, row.model)


def read_jsonl(
    path: str | os.PathLike[str], model: type[RowT], key: Callable[[RowT], Hashable] | None = None
) -> list[RowT]:
    """Read and validate a whole JSONL file before anything else happens (``key``: see :func:`iter_jsonl`).

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "x.jsonl")
        >>> _ = open(p, "w").write('{"id": 1, "question": "q", "answers": [], "label": "maybe"}\\n')
        >>> try:
        ...     read_jsonl(p, Item)
        ... except DataError as err:
        ...     print(err)  # doctest: +ELLIPSIS
        /...x.jsonl:1: field 'label': Input should be 'answerable' or 'unanswerable'
        >>> row = '{"id": 1, "question": "q", "answers": [], "label": "unanswerable", "response": "r", "model": "m"}'
        >>> _ = open(p, "w").write(row + "\\n" + row + "\\n")
        >>> try:
        ...     read_jsonl(p, ResponseRow, key=response_key)
        ... except DataError as err:
        ...     print(err)  # doctest: +ELLIPSIS
        /...x.jsonl:2: the same row as line 1 (id='1', protocol=None, sample=0, model='m'); ...
    """
    return list(iter_jsonl(path, model, key))


def dump_row(row: BaseModel) -> str:
    """One JSON line for a row (unicode kept readable; a ``confidence`` no one asked for is left out)."""
    data = row.model_dump(mode="json")
    if "confidence" in data and data["confidence"] is None:
        del data["confidence"]
    return json.dumps(data, ensure_ascii=False)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[BaseModel]) -> int:
    """Write rows atomically: a temporary file in the same folder, then a rename.

    A crash midway leaves the previous file (if any) untouched, never half a file.
    Returns the number of rows written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for row in rows:
                out.write(dump_row(row))
                out.write("\n")
                count += 1
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write a text file atomically (temporary file, then rename): a kill leaves the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    """Write one JSON document atomically (temporary file, then rename); equal data gives equal bytes."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
