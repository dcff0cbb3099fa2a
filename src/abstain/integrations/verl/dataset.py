"""Items -> veRL's RL dataset rows (what ``verl.utils.dataset.rl_dataset.RLHFDataset`` reads), and back.

One row per item::

    data_source   "abstain/<benchmark>"   (never a name veRL's built-in scorers know: no silent fallback)
    prompt        the protocol's chat messages, [{"role": ..., "content": ...}, ...]
    ability       the item's category (reasoning, knowledge, ...), else "abstention"
    reward_model  {"style": "rule", "ground_truth": [reference answers]}   (empty for unanswerable items)
    extra_info    {"index": row number, "id", "label", "answers", "category", "perturbation", "gap",
                   "gap_variable", "source", "protocol", "item": the whole item as JSON}

veRL hands ``ground_truth`` and ``extra_info`` to the reward function; :func:`item_from_verl` rebuilds the
exact :class:`~abstain.schema.Item` from ``extra_info["item"]``, so the reward is computed by the same scorer
as the evaluation. The flat columns are there to read and filter; ``item`` is the one the scorer uses.

Training mix (:func:`mix_items`), as ``abstain synth --unanswerable-ratio``: one row per problem (an item and
its twins, joined by ``meta.pair_id``, are one problem), that share of the rows unanswerable.

Example:
    >>> from abstain.schema import Item
    >>> item = Item(id="q1", question="What is 2 + 3?", answers=["5"], label="answerable", category="reasoning")
    >>> row = verl_row(item, "idk", index=0)
    >>> row["data_source"], row["ability"], row["reward_model"]["ground_truth"], row["prompt"][-1]["role"]
    ('abstain/custom', 'reasoning', ['5'], 'user')
    >>> item_from_verl(row["extra_info"]) == item
    True
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from abstain.data.suites import benchmark_of, select_items
from abstain.protocols import get_protocol
from abstain.schema import DataError, Item

__all__ = ["DATA_SOURCE_PREFIX", "item_from_verl", "mix_items", "verl_row", "verl_rows", "write_rows"]

DATA_SOURCE_PREFIX = "abstain/"


def verl_row(item: Item, protocol: str, index: int) -> dict[str, Any]:
    """One veRL dataset row for ``item`` asked with ``protocol``."""
    extra = item.model_extra or {}
    gap_variable = extra.get("gap_variable")
    return {
        "data_source": DATA_SOURCE_PREFIX + benchmark_of(item),
        "prompt": get_protocol(protocol).messages(item),
        "ability": item.category or "abstention",
        "reward_model": {"style": "rule", "ground_truth": list(item.answers)},
        "extra_info": {
            "index": index,
            "id": item.id,
            "label": item.label,
            "answers": list(item.answers),
            "category": item.category,
            "perturbation": item.perturbation,
            "gap": item.gap,
            "gap_variable": None if gap_variable is None else str(gap_variable),
            "source": item.source,
            "protocol": protocol,
            "item": item.model_dump_json(),
        },
    }


def verl_rows(items: Sequence[Item], protocol: str, on_row: Callable[[int], None] | None = None) -> list[dict]:
    """Rows for ``items`` in order; ``extra_info.index`` is the row number."""
    get_protocol(protocol)  # an unknown protocol fails before any work
    rows = []
    for i, item in enumerate(items):
        rows.append(verl_row(item, protocol, i))
        if on_row is not None:
            on_row(1)
    return rows


def item_from_verl(extra_info: dict[str, Any] | None) -> Item:
    """The item a veRL row was made from (``extra_info["item"]``, written by :func:`verl_row`)."""
    if not extra_info or "item" not in extra_info:
        raise DataError("extra_info has no 'item': the dataset was not written by `abstain export verl`")
    return Item.model_validate_json(extra_info["item"])


# ---- the training mix ---------------------------------------------------------------------------------------


def _problems(items: Sequence[Item]) -> list[tuple[list[Item], list[Item]]]:
    """(answerable, unanswerable) members of each problem, in order of first appearance."""
    groups: dict[str, tuple[list[Item], list[Item]]] = {}
    for item in items:
        key = str(item.meta.get("pair_id") or (item.model_extra or {}).get("pair_id") or f"\0{item.id}")
        answerable, unanswerable = groups.setdefault(key, ([], []))
        (answerable if item.label == "answerable" else unanswerable).append(item)
    return list(groups.values())


def _feasible(n: int, ratio: float, a_only: int, u_only: int, both: int) -> bool:
    """Can ``n`` rows, ``round(ratio * n)`` unanswerable, come from distinct problems (each kind present if
    its share is positive)?"""
    k = round(ratio * n)
    if (ratio > 0 and k == 0) or (ratio < 1 and k == n):
        return False
    return max(0, k - u_only) + max(0, n - k - a_only) <= both and k <= u_only + both and n - k <= a_only + both


def _share(want: int, pool: int, other: int, low: int, high: int) -> int:
    """How many of ``want`` to take from ``pool`` rather than ``other``: proportional, within [low, high]."""
    total = pool + other
    return min(high, max(low, round(want * pool / total) if total else 0))


def mix_items(items: Sequence[Item], ratio: float | None, seed: int = 0, n: int | None = None) -> list[Item]:
    """A training mix: one row per problem, ``round(ratio * n)`` of them unanswerable (twins where a problem
    has both), drawn deterministically from ``seed``; items keep their order.

    ``ratio=None`` keeps every item (``n``: a balanced subset, as ``--limit``). Without ``n`` the mix is as
    large as ``ratio`` allows.

    Example:
        >>> from abstain.data.suites import load_suite
        >>> mix = mix_items(load_suite("quick").items, ratio=0.3, seed=0)
        >>> len(mix), sum(i.label == "unanswerable" for i in mix)
        (86, 26)
    """
    if ratio is None:
        return select_items(items, n, seed)
    if not 0 <= ratio <= 1:
        raise ValueError(f"--unanswerable-ratio must be within [0, 1] (got {ratio})")
    problems = _problems(items)
    a_only = [p for p in problems if p[0] and not p[1]]
    u_only = [p for p in problems if p[1] and not p[0]]
    both = [p for p in problems if p[0] and p[1]]
    counts = (len(a_only), len(u_only), len(both))
    largest = next((m for m in range(len(problems), 0, -1) if _feasible(m, ratio, *counts)), 0)
    if n is None:
        n = largest
    if n < 1 or n > largest:
        raise ValueError(
            f"cannot draw {n} rows with {ratio:.0%} unanswerable: the items hold {counts[0]} answerable-only, "
            f"{counts[1]} unanswerable-only problems and {counts[2]} pairs (at most {largest} rows); "
            "lower --n or change --unanswerable-ratio")
    k = round(ratio * n)
    rng = random.Random(f"abstain-export:mix:{seed}")
    rng.shuffle(both)
    twins = _share(k, counts[2], counts[1], max(0, k - counts[1]), min(k, counts[2] - max(0, n - k - counts[0])))
    rest = counts[2] - twins
    originals = _share(n - k, rest, counts[0], max(0, n - k - counts[0]), min(n - k, rest))
    chosen = [rng.choice(p[1]) for p in both[:twins]] + [rng.choice(p[0]) for p in both[twins:twins + originals]]
    chosen += [rng.choice(p[1]) for p in rng.sample(u_only, k - twins)]
    chosen += [rng.choice(p[0]) for p in rng.sample(a_only, n - k - originals)]
    keep = {id(item) for item in chosen}
    return [item for item in items if id(item) in keep]


# ---- writing ------------------------------------------------------------------------------------------------


EXTRA_INFO_STRINGS = ("id", "label", "category", "perturbation", "gap", "gap_variable", "source", "protocol", "item")


def _schema(pa: Any) -> Any:
    """A fixed Parquet schema, so every export has the same column types (no all-null columns of type null)."""
    extra = [("index", pa.int64()), *((name, pa.string()) for name in EXTRA_INFO_STRINGS[:2]),
             ("answers", pa.list_(pa.string())), *((name, pa.string()) for name in EXTRA_INFO_STRINGS[2:])]
    return pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.list_(pa.string()))])),
        ("extra_info", pa.struct(extra)),
    ])


def write_rows(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write rows as Parquet (``.parquet``) or JSON lines (``.jsonl``/``.json``), atomically; returns the count.

    veRL's ``RLHFDataset`` reads both. Parquet needs pyarrow (installed with veRL and ``abstain[train]``).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".parquet", ".jsonl", ".json"):
        raise ValueError(f"{path}: --out must end in .parquet or .jsonl (veRL's RLHFDataset reads those)")
    if not rows:
        raise ValueError(f"{path}: no rows to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        if suffix == ".parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:  # pragma: no cover - pyarrow comes with veRL and abstain[train]
                raise ImportError("writing Parquet needs pyarrow: pip install pyarrow (or write .jsonl)") from None
            pq.write_table(pa.Table.from_pylist(list(rows), schema=_schema(pa)), tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(rows)
