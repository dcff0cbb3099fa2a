"""Rows that fit ``max_length``: SFT and DPO rows measured in tokens before a run starts, never cut silently.

TRL's SFT and DPO trainers tokenize a row as the prompt through the chat template followed by the completion (DPO:
the chosen one and the rejected one) and cut it at ``max_length``, keeping its start: a longer row loses its end, the
target's final decision (``\\boxed{...}``) with it, and SFT would teach answers without one. :func:`fit_rows`
tokenizes every row the way TRL will and, when some are longer than ``max_length``, refuses them (``truncation:
error``, a recipe's default) naming how many and the length the longest needs, leaves them out (``truncation:
drop``), or lets TRL cut them with a warning (``truncation: cut``: smoke tests and speed checks, not a model), counted
in :class:`Lengths` (a run's ``config.json`` records it as ``lengths``).

Example:
    >>> from transformers import AutoTokenizer
    >>> from abstain.backends import bundled_model_dir
    >>> tokenizer = AutoTokenizer.from_pretrained(bundled_model_dir())
    >>> rows = [{"prompt": [{"role": "user", "content": "What is 2 + 3?"}],
    ...          "completion": [{"role": "assistant", "content": "2 + 3 = 5. \\\\boxed{5}"}]},
    ...         {"prompt": [{"role": "user", "content": "What is 2 + 3? Show every step of the sum."}],
    ...          "completion": [{"role": "assistant", "content": "Two plus three is five. \\\\boxed{5}"}]}]
    >>> token_counts(rows, tokenizer)
    [54, 59]
    >>> kept, lengths = fit_rows(rows, tokenizer, max_length=56, truncation="drop")
    >>> len(kept), lengths.record()
    (1, {'rows': 2, 'max_length': 56, 'truncation': 'drop', 'longest': 59, 'over_max_length': 1, 'dropped': 1})
    >>> fit_rows(rows, tokenizer, max_length=56)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: recipe field 'max_length' (56): 1 of 2 rows are longer, the longest 59 tokens ...
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from abstain.schema import DataError

__all__ = ["Lengths", "fit_rows", "token_counts"]

log = logging.getLogger(__name__)

#: what follows the prompt in a row, by trainer: SFT's completion, DPO's chosen and rejected answers
COMPLETIONS = (("completion",), ("chosen", "rejected"))


@dataclass(frozen=True)
class Lengths:
    """The rows measured against ``max_length``: how many, the longest (tokens), how many were longer and dropped."""

    rows: int
    max_length: int
    truncation: str
    longest: int
    over_max_length: int
    dropped: int

    def record(self) -> dict[str, Any]:
        """What a run's ``config.json`` holds as ``lengths``."""
        return asdict(self)


def _completions(row: dict[str, Any]) -> tuple[str, ...]:
    for names in COMPLETIONS:
        if all(name in row for name in names):
            return names
    raise DataError(f"a training row has none of {', '.join(n for names in COMPLETIONS for n in names)} beside its "
                    f"prompt (its columns: {', '.join(row)})")


def token_counts(rows: Sequence[dict[str, Any]], tokenizer: Any) -> list[int]:
    """Each row's tokens as TRL trains it: the prompt and its completion (DPO: the longer of chosen and rejected)
    through the chat template (plain text rows: the text, concatenated)."""
    counts = [0] * len(rows)
    if not rows:
        return counts
    for name in _completions(rows[0]):
        texts = [row["prompt"] + row[name] for row in rows]
        if isinstance(texts[0], list):  # conversational, TRL's format for abstain's rows
            ids = tokenizer.apply_chat_template(texts, tokenize=True, return_dict=True)["input_ids"]
        else:
            ids = tokenizer(texts)["input_ids"]
        counts = [max(count, len(one)) for count, one in zip(counts, ids)]
    return counts


def fit_rows(rows: Sequence[dict[str, Any]], tokenizer: Any, max_length: int,
             truncation: Literal["error", "drop", "cut"] = "error") -> tuple[list[dict[str, Any]], Lengths]:
    """The rows to train on and what was measured (see the module docstring).

    ``truncation="error"``: a row longer than ``max_length`` is a :class:`~abstain.schema.DataError` naming how many
    rows are and the length the longest needs; ``"drop"``: such rows are left out and counted (every row too long is
    an error all the same); ``"cut"``: every row is kept for TRL to cut, counted and warned about.
    """
    counts = token_counts(rows, tokenizer)
    over = [i for i, n in enumerate(counts) if n > max_length]
    longest = max(counts, default=0)
    lengths = Lengths(rows=len(rows), max_length=max_length, truncation=truncation, longest=longest,
                      over_max_length=len(over), dropped=len(over) if truncation == "drop" else 0)
    if not over:
        return list(rows), lengths
    said = (f"recipe field 'max_length' ({max_length}): {len(over)} of {len(rows)} rows are longer, the longest "
            f"{longest} tokens (prompt through the chat template + completion); TRL would cut their ends, the target's "
            "final decision (\\boxed{...}) with them")
    if truncation == "cut":
        log.warning("%s: truncation: cut keeps them (a smoke test or a speed check, not a model)", said)
        return list(rows), lengths
    if truncation == "error":
        raise DataError(f"{said}. Raise max_length to at least {longest}, or set truncation: drop to leave those rows "
                        "out (counted in config.json)")
    if len(over) == len(rows):
        raise DataError(f"{said}, and truncation: drop would leave no row. Raise max_length to at least {longest}")
    skip = set(over)
    return [row for i, row in enumerate(rows) if i not in skip], lengths
