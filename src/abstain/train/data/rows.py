"""Training prompts: items -> the rows TRL's trainers read, in the format the model is evaluated in.

A row holds the protocol's chat ``prompt`` for the item (exactly what ``abstain eval`` sends), the whole
item as JSON in ``item`` (so the reward's judge sees every field evaluation would: gap, gap_variable,
category …) and a few plain columns for reading logs (``id``, ``label``, ``category``, ``perturbation``).

Example:
    >>> from abstain.schema import Item
    >>> item = Item(id="q1", question="What is 2 + 3?", answers=["5"], label="answerable")
    >>> row = prompt_rows([item], "idk")[0]
    >>> row["prompt"][-1]["role"], row["label"], Item.model_validate_json(row["item"]) == item
    ('user', 'answerable', True)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from abstain.protocols import get_protocol
from abstain.schema import Item, Message, read_jsonl

__all__ = ["ItemColumns", "PreferenceRow", "PromptCompletionRow", "prompt_dataset", "prompt_rows", "read_training_rows"]


class PromptCompletionRow(BaseModel):
    """An SFT row as TRL reads it (conversational prompt / completion); other columns are kept."""

    model_config = ConfigDict(extra="allow")
    prompt: list[Message]
    completion: list[Message]


class PreferenceRow(BaseModel):
    """A DPO row as TRL reads it (conversational prompt / chosen / rejected); other columns are kept."""

    model_config = ConfigDict(extra="allow")
    prompt: list[Message]
    chosen: list[Message]
    rejected: list[Message]


class ItemColumns(BaseModel):
    """The item's columns a built training row carries beside TRL's (flat: ``datasets`` reads any file)."""

    id: str
    question: str
    answers: list[str]
    label: str
    category: str | None = None
    source: str | None = None
    protocol: str


def read_training_rows(path: str | os.PathLike[str], model: type[BaseModel],
                       allow: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The TRL columns of a JSONL file of ``model`` rows (a bad line fails naming ``file:line`` and the field).

    A row whose ``question`` (or, without one, a user message of its ``prompt``) is an evaluation question, or a
    near-duplicate of one, is refused (:mod:`abstain.data.guard`), but for the suites in ``allow``.
    """
    from abstain.data.guard import check_training
    from abstain.schema import DataError

    rows = read_jsonl(path, model)
    if not rows:
        raise DataError(f"{path}: no rows")
    check_training(rows, str(path), allow)
    return [{name: getattr(row, name) for name in model.model_fields} for row in rows]


def prompt_rows(items: Sequence[Item], protocol: str) -> list[dict[str, Any]]:
    """One training row per item under ``protocol`` (see the module docstring)."""
    proto = get_protocol(protocol)
    return [
        {
            "prompt": proto.messages(item),
            "item": item.model_dump_json(),
            "id": item.id,
            "label": item.label,
            "category": item.category or "",
            "perturbation": item.perturbation or "",
        }
        for item in items
    ]


def prompt_dataset(items: Sequence[Item], protocol: str) -> Any:
    """The rows as a ``datasets.Dataset`` (what TRL's trainers take)."""
    from datasets import Dataset

    return Dataset.from_list(prompt_rows(items, protocol))
