"""Held-out questions never reach training: every training source and ``abstain export verl`` check here.

**What is held out** — what abstain itself evaluates on and reports as never trained on:

* the held-out synthetic benchmark: every question of ``src/abstain/data/synth/heldout.jsonl`` (the
  ``heldout`` suite, :func:`abstain.synth.heldout_questions`; its seed is refused by the generators too);
* the ``transfer`` suite: the cpu-demo's out-of-distribution comparison, which docs/suites.md declares
  "never used for training or tuning" — its 30 held-out pairs and the 320 public-benchmark items it draws
  with its fixed seed (UMWP, MiP-GSM8K with their GSM8K originals, TreeCut, SelfAware);
* the ``mip-gsm8k-val`` suite: the out-of-distribution validation split (it chooses checkpoints: tuning);
* the ``abstain-test-sum`` suite: Abstain-R1's SUM test, a final-table benchmark.

The other shipped benchmarks (GSM8K, MATH-500, Abstain-Test, AbstentionBench …) are evaluation suites
abstain ships but does not reserve: a suite or file of them trains, except for the items it shares with
the two sets above (``quick``, ``math``, ``full``, ``abstentionbench-lite`` and ``abstain-test`` all have
some, so they are refused; ``abstain-test-sum`` has none).

**How it compares**: by normalized question text, never by id (a renamed id is still the same question) —
Unicode NFKC, casefolded, whitespace collapsed, surrounding punctuation and space stripped
(:func:`normalize_question`) — and, for the real-text held-out items, by near-duplicates too: a question
sharing a run of 8 words with one (:mod:`abstain.data.near_duplicates`) is the same problem paraphrased.
The synthetic held-out set is compared by exact text only (training synthesis shares its templates, by
design, and its seed is refused instead). Training rows (SFT, DPO) are checked by their ``question`` column; a row
without one is checked by its chat ``prompt``: a held-out question whose words appear, in order, inside a
user message is found (the protocol wraps the question in its own text). The index is built once per
process (about half a second: the ``transfer`` suite is drawn from its benchmarks) and cached.

Only training and export paths call :func:`check_not_heldout` (a validation split chooses checkpoints:
it is tuning, so it is checked too); ``abstain eval --suite heldout``, probing and the report read these
items as before.

Example:
    >>> from abstain.schema import Item
    >>> held = sorted(heldout_texts())[0]
    >>> check_not_heldout([Item(id="mine", question="What is 2 + 3?", answers=["5"], label="answerable")], "x")
    >>> check_not_heldout(["  " + held.upper() + " ?"], "notes.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: notes.txt: 1 of 1 items is held-out evaluation data ...
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from abstain.data.near_duplicates import ShingleIndex, normalize_question
from abstain.schema import DataError

__all__ = ["EVAL_ONLY_SUITES", "HeldoutMatch", "check_not_heldout", "heldout_matches", "heldout_texts",
           "normalize_question", "synthetic"]

log = logging.getLogger(__name__)

#: suites whose every item is held out (refused by name as training data)
EVAL_ONLY_SUITES = ("heldout", "transfer", "mip-gsm8k-val", "abstain-test-sum")

_WORD = re.compile(r"\w+")
_KEY = 3  # a held-out question is looked up in a prompt by its first three words


def _words(normalized: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalized))


@dataclass(frozen=True)
class _Index:
    texts: dict[str, tuple[str, str]]  # normalized question -> (suite, held-out item id)
    by_key: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]]  # first words -> (words, normalized)
    near: ShingleIndex  # the real-text held-out questions (not the synthetic set), by suite


@contextmanager
def _quiet_notices() -> Iterator[None]:
    """Reading the held-out items only to compare them logs no license notice (the next real load does)."""
    from abstain.data import files, loaders

    quiet = "selfaware" not in files.NOTIFIED  # the transfer suite draws from SelfAware
    files.NOTIFIED.add("selfaware")
    try:
        yield
    finally:
        if quiet:  # the benchmark cache would skip the notice on the next load: let that load read again
            files.NOTIFIED.discard("selfaware")
            loaders._cached.cache_clear()


@cache
def _index(heldout_mtime: float | None) -> _Index:
    from abstain.data.suites import load_suite

    texts: dict[str, tuple[str, str]] = {}
    near = ShingleIndex()
    with _quiet_notices():
        for suite in EVAL_ONLY_SUITES:
            try:
                items = load_suite(suite).items
            except DataError:  # the held-out file is missing (a trimmed install): nothing of it to leak
                log.warning("held-out guard: suite %r is unavailable, so it is not checked", suite)
                continue
            for item in items:
                texts.setdefault(normalize_question(item.question), (suite, item.id))
            near.add(suite, [i.question for i in items if not synthetic(i)])
    by_key: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]] = {}
    for text in texts:
        words = _words(text)
        if words:
            by_key.setdefault(words[:_KEY], []).append((words, text))
    return _Index(texts, by_key, near)


def synthetic(item: Any) -> bool:
    """Whether an item comes from abstain's synthesis (compared by exact text only: see the module docstring)."""
    source = _field(item, "source") or ""
    return str(source).startswith("synth") or _field(item, "graph") is not None


def _current() -> _Index:
    from abstain.data.suites import heldout_path

    path = heldout_path()
    return _index(os.path.getmtime(path) if path.exists() else None)


def heldout_texts() -> frozenset[str]:
    """Every held-out question, normalized (:func:`normalize_question`)."""
    return frozenset(_current().texts)


@dataclass(frozen=True)
class HeldoutMatch:
    """A training item or row that is a held-out question, or a near-duplicate of one."""

    index: int  # position in what was checked
    id: str  # the item's (or row's) id, else "#<index + 1>"
    question: str  # its question text (or the user message that holds it)
    suite: str  # the held-out set it is in (or has a near-duplicate in)
    heldout_id: str  # the id it has there ("" for a near-duplicate)
    near: bool = False  # True: not the question itself, one sharing an 8-word run with it


def _field(x: Any, name: str) -> Any:
    if isinstance(x, Mapping):
        return x.get(name)
    value = getattr(x, name, None)
    if value is None and getattr(x, "model_extra", None):
        value = x.model_extra.get(name)
    return value


def _in_prompt(prompt: Any, index: _Index) -> tuple[str, str] | None:
    """(user message, matching held-out question) when a user message holds a held-out question's words."""
    if not isinstance(prompt, list):
        return None
    for message in prompt:
        content = _field(message, "content")
        if _field(message, "role") != "user" or not isinstance(content, str):
            continue
        words = _words(normalize_question(content))
        for start in range(len(words)):
            for held, text in index.by_key.get(words[start:start + _KEY], ()):
                if words[start:start + len(held)] == held:
                    return content, text
    return None


def _user_texts(prompt: Any) -> list[str]:
    if not isinstance(prompt, list):
        return []
    return [c for m in prompt if _field(m, "role") == "user" and isinstance(c := _field(m, "content"), str)]


def heldout_matches(items_or_texts: Iterable[Any], near: bool = True) -> list[HeldoutMatch]:
    """The held-out ones among items (``.question``), strings, or training rows (``question`` or ``prompt``);
    with ``near``, also the near-duplicates of a real-text held-out question (synthetic items are compared by
    exact text only)."""
    index = _current()
    found = []
    for n, x in enumerate(items_or_texts):
        question = x if isinstance(x, str) else _field(x, "question")
        ident = None if isinstance(x, str) else _field(x, "id")
        name = str(ident) if ident is not None else f"#{n + 1}"
        hit: tuple[str, str] | None = None
        if isinstance(question, str):
            text = normalize_question(question)
            hit = (question, text) if text in index.texts else None
        elif not isinstance(x, str):
            hit = _in_prompt(_field(x, "prompt"), index)
        if hit is not None:
            suite, heldout_id = index.texts[hit[1]]
            found.append(HeldoutMatch(n, name, hit[0], suite, heldout_id))
        elif near and (isinstance(x, str) or not synthetic(x)):
            texts = [question] if isinstance(question, str) else _user_texts(_field(x, "prompt"))
            for text in texts:
                suites = index.near.sets_of(text)
                if suites:
                    found.append(HeldoutMatch(n, name, text, sorted(suites)[0], "", near=True))
                    break
    return found


def check_not_heldout(items_or_texts: Iterable[Any], source: str) -> None:
    """Raise :class:`~abstain.schema.DataError` when any item, text or row of ``source`` is held out.

    The message names ``source``, how many matched, and the first match: its id, the start of its question
    and the held-out item it is.
    """
    items = list(items_or_texts)
    found = heldout_matches(items)
    if not found:
        return
    first = found[0]
    start = " ".join(first.question.split())
    start = start if len(start) <= 70 else start[:67] + "..."
    suites = " and ".join(sorted({m.suite for m in found}))
    near = sum(m.near for m in found)
    what = (f"{first.id!r} ({start!r}), held out as {first.heldout_id!r} of the {first.suite} suite" if not first.near
            else f"{first.id!r} ({start!r}), which shares an 8-word run with a question of the {first.suite} suite")
    raise DataError(
        f"{source}: {len(found)} of {len(items)} items {'is' if len(found) == 1 else 'are'} held-out evaluation "
        f"data or near-duplicates of it ({near} near), in the {suites} suite{'s' if ' and ' in suites else ''}, "
        f"which never trains a model; first: {what}. Questions are compared by text (and 8-word runs), not id: "
        "evaluate on them with `abstain eval`, train on a synth spec or other items"
    )
