"""What a TRL reward call hands over, as abstain's scorer takes it: one item and one text per completion.

TRL calls a reward function with the prompts, the completions and every other dataset column as lists, one
value per completion; :func:`items_from_columns` rebuilds the items (a prompt's completions share one) and
:func:`completion_text` the texts, which :class:`abstain.train.rewards.presets.RewardFunction` then scores.

Example:
    >>> completion_text([{"role": "assistant", "content": "It is 5."}])
    'It is 5.'
    >>> items = items_from_columns({"id": ["q1", "q1"], "question": ["2 + 3?", "2 + 3?"]}, 2)
    >>> items[0] is items[1]
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from abstain.schema import Item

__all__ = ["SCORED_COLUMN", "TRL_COLUMNS", "completion_text", "items_from_columns"]

#: the reward-call column through which a trainer hands a :class:`RewardFunction` the completions it already
#: scored (one :class:`Scored` per completion; see :meth:`RewardFunction.__call__`)
SCORED_COLUMN = "abstain_scored"

#: columns TRL (or abstain's trainer) adds to a reward call that are not the item's
TRL_COLUMNS = frozenset({"prompt", "completion", "completion_ids", "trainer_state", "log_extra", "log_metric",
                         "environments", SCORED_COLUMN})


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the last message's content of a conversational one."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        last = completion[-1]
        if isinstance(last, Mapping):
            content = last.get("content", "")
            if isinstance(content, str):
                return content
            if isinstance(content, Sequence):  # [{"type": "text", "text": ...}, ...]
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if completion is None else str(completion)


def items_from_columns(columns: Mapping[str, Sequence[Any]], n: int) -> list[Item | Mapping[str, Any]]:
    """One item per completion from TRL's column lists; the rows of one prompt share one object.

    A dataset made by :func:`abstain.train.data.rows.prompt_dataset` carries the whole item as JSON in its
    ``item`` column (lossless: the judge sees every field it would see in evaluation); otherwise the
    item is built from the columns themselves. The ``num_generations`` completions of one prompt carry
    equal columns, so they share one object and :func:`~abstain.scoring.score_completions` validates
    each prompt's item once.
    """
    keys = [k for k in columns if k not in TRL_COLUMNS]
    for key in keys:
        if len(columns[key]) != n:
            raise ValueError(f"column {key!r} has {len(columns[key])} values for {n} completions")
    out: list[Item | Mapping[str, Any]] = []
    previous: Any = None
    previous_item: Item | Mapping[str, Any] | None = None
    for i in range(n):
        raw = columns["item"][i] if "item" in keys and isinstance(columns["item"][i], str) else None
        key = raw if raw is not None else {k: columns[k][i] for k in keys}
        if previous_item is not None and key == previous:
            out.append(previous_item)
            continue
        previous = key
        previous_item = Item.model_validate_json(raw) if raw is not None else key
        out.append(previous_item)
    return out
