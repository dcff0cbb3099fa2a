"""Items from a UA-Bench checkout (github.com/ren258/UA-Bench): ``--data uabench:DIR``.

UA-Bench's data files are JSON arrays (or JSONL) of ``{"question", "reference_answers", "should_abstain"}``
(optionally ``metadata_json``), one file per dataset in ``DIR/data/`` (or ``DIR`` itself). Its
``code/summarize_attr_results.py`` pools the counts of a task's datasets; abstain gives each item the
task as its ``category``, so ``by_category.<task>.ua.*`` are the official task numbers:

=============  ==============================  =========================
category       answerable datasets             unanswerable datasets
=============  ==============================  =========================
knowledge      gaia, musique_1000              selfaware
reasoning      olympiadbench-math              gsm8k-mip, math-mip
=============  ==============================  =========================

(UA-Bench calls them "Commonsense QA" and "Math QA", kept in ``meta.ua_task``.) An item's label comes
from its own ``should_abstain``; ids are ``uabench-<file stem>-<index>``, the index being UA-Bench's
result ``id``; ``source``, ``meta.benchmark`` and ``meta.dataset`` are ``uabench/<file stem>``. A file
outside the two tasks still loads, with no category, and a warning.

Example:
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "math-mip.json").write_text(json.dumps([
    ...     {"question": "x + y = 3. What is x?", "reference_answers": None, "should_abstain": True}]))
    >>> [(i.id, i.label, i.category, i.meta["ua_task"]) for i in load_uabench(d)]
    [('uabench-math-mip-0', 'unanswerable', 'reasoning', 'Math QA')]
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from abstain.data.files import make_item, read_json, read_jsonl_rows
from abstain.schema import DataError, Item

__all__ = ["PREFIX", "TASKS", "load_uabench"]

log = logging.getLogger(__name__)

PREFIX = "uabench:"
#: category -> (UA-Bench task name, answerable datasets, unanswerable datasets), as in summarize_attr_results.py
TASKS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "knowledge": ("Commonsense QA", ("gaia", "musique_1000"), ("selfaware",)),
    "reasoning": ("Math QA", ("olympiadbench-math",), ("gsm8k-mip", "math-mip")),
}
_TASK_OF = {name: (category, task) for category, (task, ans, una) in TASKS.items() for name in (*ans, *una)}


def _files(root: Path) -> list[Path]:
    if not root.is_dir():
        raise DataError(f"{root}: not a directory (--data uabench:DIR wants a UA-Bench checkout or its data/ folder)")
    folder = root / "data" if (root / "data").is_dir() else root
    files = sorted(p for p in folder.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
    if not files:
        raise DataError(f"{folder}: no .json or .jsonl files (UA-Bench keeps its datasets in data/)")
    return files


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = read_jsonl_rows(path) if path.suffix == ".jsonl" else read_json(path)
    if not isinstance(rows, list):
        raise DataError(f"{path}: expected a JSON array of items")
    return rows


def _item(path: Path, index: int, row: Any, category: str | None, task: str | None) -> Item:
    where = f"item {index}"
    if not isinstance(row, dict):
        raise DataError(f"{path}:{where}: expected an object with question, reference_answers, should_abstain")
    if not isinstance(row.get("question"), str):
        raise DataError(f"{path}:{where}: field 'question' must be a string")
    if not isinstance(row.get("should_abstain"), bool):
        raise DataError(f"{path}:{where}: field 'should_abstain' must be true or false")
    refs = row.get("reference_answers")
    if refs is not None and not isinstance(refs, list):
        raise DataError(f"{path}:{where}: field 'reference_answers' must be a list or null")
    unanswerable = row["should_abstain"]
    if not unanswerable and not refs:
        raise DataError(f"{path}:{where}: an answerable item (should_abstain false) needs reference_answers")
    name = f"uabench/{path.stem}"
    meta: dict[str, Any] = {"benchmark": name, "dataset": name, "uabench_index": index}
    if task is not None:
        meta["ua_task"] = task
    if row.get("metadata_json") is not None:
        meta["metadata_json"] = row["metadata_json"]
    return make_item(path, where, id=f"uabench-{path.stem}-{index}", question=row["question"],
                     answers=[] if unanswerable else refs, label="unanswerable" if unanswerable else "answerable",
                     category=category, source=f"uabench/{path.stem}", meta=meta)


def load_uabench(root: str | Path) -> list[Item]:
    """Every item of the UA-Bench data files under ``root`` (see the module docstring)."""
    items = []
    for path in _files(Path(root)):
        category, task = _TASK_OF.get(path.stem, (None, None))
        if category is None:
            log.warning("%s is not one of UA-Bench's datasets %s: loaded without a task (category)",
                        path, sorted(_TASK_OF))
        items += [_item(path, n, row, category, task) for n, row in enumerate(_rows(path))]
    return items
