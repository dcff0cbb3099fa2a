"""A resumable run directory: rows are appended as they finish, a rerun picks up where a crash left off.

A run directory holds ``config.json`` (what makes the run reproducible), ``responses.jsonl`` and
``scored.jsonl`` (one row per (item id, protocol, sample), appended and flushed as rows finish, fsync'd
at batch ends), ``metrics.json`` (nothing run-dependent: byte-identical for the same inputs),
``timing.json`` (wall time, tokens/s), ``report.md`` / ``report.html`` and ``plots/``.

After ``kill -9`` a file can end in half a line: :meth:`RunDir.read_rows` truncates that tail (and a
last line that does not parse) before anything is appended, so a row is redone, never duplicated.
A rerun whose config differs from ``config.json`` is refused, naming the fields that differ.

Example:
    >>> import tempfile
    >>> from abstain.schema import ResponseRow
    >>> run = RunDir(tempfile.mkdtemp())
    >>> run.prepare({"model": "m", "seed": 0})
    >>> row = ResponseRow(id="1", question="q", answers=[], label="unanswerable", response="r", model="m")
    >>> with run.appender(RESPONSES) as out:
    ...     out.append(row)
    >>> _ = open(run.path / RESPONSES, "a").write('{"id": "2", "quest')  # a crash mid-line
    >>> [r.id for r in run.read_rows(RESPONSES, ResponseRow)]
    ['1']
    >>> run.prepare({"model": "other", "seed": 0})
    Traceback (most recent call last):
    ...
    abstain.records.runs.ConfigMismatch: ...(model: 'm' in config.json, 'other' now); rerun with the same...
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

from abstain.schema import DataError, ResponseRow, dump_row, read_lines, write_json, write_jsonl

__all__ = [
    "CONFIG",
    "ConfigMismatch",
    "METRICS",
    "REPORT_HTML",
    "REPORT_MD",
    "RESPONSES",
    "RowAppender",
    "RunDir",
    "SCORED",
    "TIMING",
    "differences",
    "row_key",
    "write_json",
]

CONFIG = "config.json"
RESPONSES = "responses.jsonl"
SCORED = "scored.jsonl"
METRICS = "metrics.json"
TIMING = "timing.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"

Key = tuple[str, str, int]
RowT = TypeVar("RowT", bound=ResponseRow)


class ConfigMismatch(ValueError):
    """A rerun into a run directory made with another configuration."""


def row_key(row: ResponseRow) -> Key:
    """What identifies a row in a run: (item id, protocol, sample)."""
    return (row.id, row.protocol or "", row.sample)


def differences(old: Any, new: Any, prefix: str = "", ignore: Collection[str] = ()) -> list[str]:
    """Where two JSON-like configs differ, one ``key.path: old in config.json, new now`` line each."""
    if prefix.rstrip(".") in ignore:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            out += differences(old.get(key), new.get(key), f"{prefix}{key}.", ignore)
        return out
    return [] if old == new else [f"{prefix.rstrip('.')}: {old!r} in config.json, {new!r} now"]


class RowAppender:
    """Appends rows to a JSONL file: one ``write`` per row, flushed at once, fsync'd by :meth:`sync`."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.count = 0

    def append(self, row: ResponseRow) -> None:
        self._handle.write((dump_row(row) + "\n").encode("utf-8"))
        self._handle.flush()
        self.count += 1

    def sync(self) -> None:
        """Make the rows written so far durable (call at batch ends)."""
        self._handle.flush()
        os.fsync(self._handle.fileno())


class RunDir:
    """One run's folder; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def prepare(self, config: dict[str, Any], ignore: Collection[str] = ()) -> None:
        """Create the folder and write ``config.json``, or check that it matches ``config``.

        ``ignore``: dotted keys (``judge.concurrency``) that may differ on a rerun (they change how fast the
        work goes, not its results); ``config.json`` keeps the first run's values.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        existing = self.path / CONFIG
        if existing.exists():
            try:
                old = json.loads(existing.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise DataError(f"{existing}: invalid JSON ({exc})") from None
            # round-trip through JSON so tuples compare equal to the lists read back
            found = differences(old, json.loads(json.dumps(config)), ignore=ignore)
            if found:
                raise ConfigMismatch(
                    f"{self.path} holds a run with another configuration ("
                    + "; ".join(found[:6])
                    + ("; ..." if len(found) > 6 else "")
                    + "); rerun with the same options to resume it, or choose another --out"
                )
            return
        leftovers = [name for name in (RESPONSES, SCORED) if (self.path / name).exists()]
        if leftovers:
            raise ConfigMismatch(
                f"{self.path} holds {', '.join(leftovers)} but no {CONFIG}: cannot tell which run they belong "
                "to; choose another --out"
            )
        write_json(existing, config)

    def read_rows(self, name: str, model: type[RowT], keep: Literal["first", "last"] = "first") -> list[RowT]:
        """Rows already in ``name``, after cutting a half-written tail; of duplicate keys ``keep`` one."""
        path = self.path / name
        if not path.exists():
            return []
        rows = [row for _, row in read_lines(path, model.model_validate_json, repair_tail=True)]
        unique: dict[Key, RowT] = {}
        for row in rows:
            if keep == "last":
                unique.pop(row_key(row), None)
            unique.setdefault(row_key(row), row)
        return list(unique.values())

    @contextmanager
    def appender(self, name: str) -> Iterator[RowAppender]:
        """Append rows to ``name``; everything appended is fsync'd when the block ends."""
        with (self.path / name).open("ab") as handle:
            out = RowAppender(handle)
            try:
                yield out
            finally:
                out.sync()

    def rewrite(self, name: str, rows: Sequence[ResponseRow]) -> None:
        """Replace ``name`` atomically with ``rows`` (used to store a finished run in canonical order)."""
        write_jsonl(self.path / name, rows)
