"""Reading the shipped benchmark files: JSON/JSONL/CSV with errors that name the file, and one-time notices.

Every loader module (``loaders``, ``abstentionbench``, ``abstain_r1``, ``uabench``) reads through these
helpers, so a malformed line is reported the same way everywhere (``file:line: what is wrong``).

Example:
    >>> rows = read_json(benchmark_dir() / "bigbench" / "known_unknowns" / "task.json")["examples"]
    >>> rows[0]["input"]
    'How often did Abraham Lincoln cut his toenails?'
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from abstain.schema import DataError, Item, read_lines

__all__ = ["NOTIFIED", "benchmark_dir", "make_item", "muted_notices", "notice_once", "read_csv", "read_json",
           "read_jsonl_rows"]

#: keys of the notices already logged in this process (cleared by tests)
NOTIFIED: set[str] = set()


def benchmark_dir() -> Path:
    """Folder of the shipped benchmark files."""
    return Path(str(resources.files("abstain") / "data" / "benchmarks"))


def read_jsonl_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (blank lines skipped); a bad line raises naming ``file:line``."""
    rows = []
    for lineno, row in read_lines(path, json.loads):
        if not isinstance(row, dict):
            raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows


def read_json(path: Path) -> Any:
    """A whole JSON file; invalid JSON raises naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON ({exc})") from None


def read_csv(path: Path, required: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """The rows of a CSV file with a header line; a missing ``required`` column raises naming the file."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in required if c not in (reader.fieldnames or [])]
            if missing:
                raise DataError(f"{path}: missing column(s) {missing}")
            return list(reader)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None


def make_item(path: Path, where: int | str, **fields: Any) -> Item:
    """An :class:`Item`; a field that does not validate raises naming ``path:where``."""
    try:
        return Item(**fields)
    except ValidationError as exc:
        raise DataError(f"{path}:{where}: {exc.errors(include_url=False)[0]['msg']}") from None


_MUTED = ContextVar("abstain_notices_muted", default=False)


def notice_once(key: str, message: str, logger: logging.Logger) -> None:
    """Log a license notice the first time a benchmark is loaded in this process (not under :func:`muted_notices`:
    a muted load leaves the notice to the next one)."""
    if key not in NOTIFIED and not _MUTED.get():
        NOTIFIED.add(key)
        logger.warning(message)


@contextmanager
def muted_notices() -> Iterator[None]:
    """Load benchmarks without their license notices: for reading items only to compare against them (the
    training guard); the next load outside says them as usual."""
    token = _MUTED.set(True)
    try:
        yield
    finally:
        _MUTED.reset(token)
