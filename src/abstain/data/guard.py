"""The training guard: no question of a suite abstain ships for evaluation reaches training, unless a run opts in.

**What it covers.** Every reserved suite of the registry (:data:`abstain.data.suites.REGISTRY`: today all nine,
``quick`` and ``abstain-test`` included, down to the whole benchmarks of ``math`` and ``full``). Every training path
asks here: a recipe's data, SFT rows, probe data, the Abstain-CoT rows, the training mix, ``abstain export verl``.
A path given its data refuses it whole when one item overlaps (:func:`check_training`); a path that draws from a
shipped source (the UMWP pairs, the Abstain-CoT rows) drops what overlaps and reports it, by suite
(:func:`split_training`).

**How it compares.** By normalized question text, never by id (:func:`normalize_question`), and by near-duplicates:

- a question sharing a run of 8 words (:data:`~abstain.data.near_duplicates.SHINGLE_WORDS`) with a real-text
  reserved question is the same problem paraphrased; 7 shared words in a row pass. A run that more than
  :data:`COMMON_RUN` reserved questions share is a template's (BBQ's contexts, ALCUNA's instructions) and proves
  nothing: it is not indexed;
- a synthetic reserved question (the held-out set) is facts composed from a few templates, so its siblings share a
  fact and its run ("The radio is paid in 8 installments of $28"): a text is its near-duplicate when it holds
  :data:`SYNTH_SHARED` of its runs, which a paraphrase keeps (measured: none of the 1,200 questions of
  ``cpu-demo-sft-3x``'s synthetic mix, read as plain text, matches the held-out set);
- abstain's own synthesis (an item with a graph) is compared with real text by exact text only: its templates
  paraphrase no benchmark problem (1 of those 1,200 shares a run with a GSM8K question by chance).

A benchmark that also trains (:data:`~abstain.data.suites.TRAINING_BENCHMARKS`: UMWP) may train on its rows that only
a whole-benchmark suite (``math``, ``full``) holds. A training row without a ``question`` (a chat ``prompt``) is
checked by its user messages: a reserved question whose words appear, in order, inside one is found, and so is a
near-duplicate.

**Opting in.** ``allow`` names suites a run may train on (a recipe's ``allow_eval_suites``, the CLI's
``--allow-eval-suite``; ``all`` for every one); it is recorded in the run's config. A question is allowed only when
every suite that draws it is (``math`` and ``full``, which hold every benchmark whole, follow: allowing
``abstain-test`` allows its questions although ``full`` holds them too; a GSM8K question that ``transfer`` also
draws stays refused until ``transfer`` is allowed as well).

**The index** (every reserved suite's questions and their 8-word runs, ~700k) is built once per machine (~10 s)
and kept in ``~/.cache/abstain/guard`` (``ABSTAIN_CACHE``), keyed by the registry and the shipped data files;
a process loads it in well under a second.

Example:
    >>> from abstain.schema import Item
    >>> check_training([Item(id="mine", question="What is 2 + 3?", answers=["5"], label="answerable")], "x")
    >>> gsm8k = load_suite("quick").items[0].question
    >>> check_training(["  " + gsm8k.upper() + " ?"], "notes.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: notes.txt: 1 of 1 items is evaluation data or a near-duplicate of it ...
    >>> check_training([gsm8k], "notes.txt", allow=("all",))
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from abstain.data.files import muted_notices
from abstain.data.near_duplicates import SHINGLE_WORDS, normalize_question, shingles
from abstain.data.suites import REGISTRY, TRAINING_BENCHMARKS, load_suite, suite
from abstain.paths import cache_dir
from abstain.schema import DataError, benchmark_of

__all__ = ["ALL", "COMMON_RUN", "SYNTH_SHARED", "GuardReport", "Overlap", "allowed_suites", "check_training", "normalize_question", "overlaps",
           "split_training", "synthetic"]

log = logging.getLogger(__name__)

ALL = "all"  # allow=("all",): every suite
_VERSION = 7  # bump when the index's layout changes
_WORD = re.compile(r"\w+")
_KEY = 3  # a reserved question is looked up in a prompt by its first three words
#: a run shared by more reserved questions than this is a template's, not a problem's: it is not indexed
COMMON_RUN = 8
#: the share of a synthetic reserved question's 8-word runs a text must hold to be its near-duplicate
SYNTH_SHARED = 0.5

#: where a reserved question is: (suite, item id, benchmark, synthetic)
Place = tuple[str, str, str, bool]


def synthetic(item: Any) -> bool:
    """Whether an item comes from abstain's synthesis (compared with the synthetic held-out set by exact text only)."""
    source = _field(item, "source") or ""
    return str(source).startswith("synth") or _field(item, "graph") is not None


def allowed_suites(allow: Iterable[str]) -> frozenset[str]:
    """The suites ``allow`` names (``all``: every one); an unknown name is an error listing the suites."""
    names = set(allow)
    if ALL in names:
        return frozenset(REGISTRY)
    for name in names:
        suite(name)
    return frozenset(names)


@dataclass(frozen=True)
class Overlap:
    """A training item or row that is a reserved suite's question, or a near-duplicate of one."""

    index: int  # position in what was checked
    id: str  # the item's (or row's) id, else "#<index + 1>"
    question: str  # its question text (or the user message that holds it)
    suite: str  # the suite it is in (or has a near-duplicate in): the first of ``suites``
    eval_id: str  # the id it has there ("" for a near-duplicate)
    near: bool = False  # True: not the question itself, one sharing an 8-word run with it
    suites: tuple[str, ...] = ()  # every suite that keeps it out (a GSM8K question: transfer, math, full ...)


@dataclass(frozen=True)
class GuardReport:
    """What a training source lost to the guard, and why (row counts by reason)."""

    source: str
    rows: int
    kept: int
    reasons: dict[str, int] = field(default_factory=dict)  # "in suite X" / "near-duplicate in suite X" / ...

    @property
    def removed(self) -> int:
        return self.rows - self.kept

    @property
    def removed_pairs(self) -> int:
        return self.removed // 2

    def summary(self) -> str:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{self.source}: {self.rows} rows, {self.removed} removed ({why or 'none'}), {self.kept} kept"


# ---- the index -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Index:
    texts: dict[str, tuple[Place, ...]]  # normalized question -> where it is
    runs: np.ndarray  # sorted 64-bit hashes of the reserved questions' 8-word runs
    run_places: np.ndarray  # for each run: the index of its places in ``places``
    places: tuple[tuple[tuple[str, str, bool], ...], ...]  # (suite, benchmark, synthetic) of each run's questions
    synth: tuple[tuple[tuple[str, ...], int], ...]  # synthetic reserved questions: (suites, how many runs)
    synth_runs: dict[int, tuple[int, ...]]  # run hash -> the synthetic questions (in ``synth``) holding it
    by_key: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]]  # first words -> (words, normalized question)


def _run_hash(run: tuple[str, ...]) -> int:
    return int.from_bytes(hashlib.blake2b(" ".join(run).encode(), digest_size=8).digest(), "little", signed=True)


def _fingerprint() -> str:
    """What the index depends on: the registry's reserved suites and every shipped data file (size, mtime)."""
    digest = hashlib.sha256(f"v{_VERSION} n{SHINGLE_WORDS}".encode())
    for s in REGISTRY.values():
        digest.update(f"{s.name}:{s.size}:{s.reserved}:{s.whole}:{','.join(s.benchmarks)};".encode())
    data = Path(str(resources.files("abstain") / "data"))
    for path in sorted([*data.glob("benchmarks/**/*"), *data.glob("synth/*")]):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(data)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:20]


def _build() -> _Index:
    where: dict[str, list[Place]] = {}
    with muted_notices():  # reading them only to compare: a later real load says the license notices
        for s in REGISTRY.values():
            if not s.reserved:
                continue
            try:
                items = load_suite(s.name).items
            except DataError:  # the held-out file is missing (a trimmed install): nothing of it to leak
                log.warning("training guard: suite %r is unavailable, so it is not checked", s.name)
                continue
            for item in items:
                where.setdefault(normalize_question(item.question), []).append(
                    (s.name, item.id, benchmark_of(item), synthetic(item)))
    interned: dict[tuple[tuple[str, str, bool], ...], int] = {}
    by_run: dict[int, set[tuple[str, str, bool]]] = {}
    questions: Counter[int] = Counter()
    synth: list[tuple[tuple[str, ...], int]] = []
    synth_runs: dict[int, list[int]] = {}
    for text, places in where.items():
        if all(p[3] for p in places):  # a synthetic question: its own index (its template's runs are its siblings')
            runs = {_run_hash(run) for run in shingles(text)}
            for h in runs:
                synth_runs.setdefault(h, []).append(len(synth))
            synth.append((tuple(sorted({p[0] for p in places})), len(runs)))
            continue
        keys = {(p[0], p[2], p[3]) for p in places}
        for run in shingles(text):
            h = _run_hash(run)
            by_run.setdefault(h, set()).update(keys)
            questions[h] += 1
    for h, n in questions.items():  # a template's runs (BBQ's contexts, ALCUNA's instructions) name no problem
        if n > COMMON_RUN:
            del by_run[h]
    hashes = np.fromiter(by_run, dtype=np.int64, count=len(by_run))
    order = np.argsort(hashes)
    ids = np.empty(len(hashes), dtype=np.int32)
    for n, h in enumerate(hashes[order].tolist()):
        group = tuple(sorted(by_run[h]))
        ids[n] = interned.setdefault(group, len(interned))
    texts = {t: tuple(p) for t, p in where.items()}
    return _Index(texts, hashes[order], ids, tuple(interned), tuple(synth),
                  {h: tuple(v) for h, v in synth_runs.items()}, _prompt_keys(texts))


def _prompt_keys(texts: Mapping[str, Any]) -> dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]]:
    by_key: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]] = {}
    for text in texts:
        words = tuple(_WORD.findall(text))
        if words:
            by_key.setdefault(words[:_KEY], []).append((words, text))
    return by_key


@cache
def _index() -> _Index:
    path = cache_dir("guard") / f"index-{_fingerprint()}.pkl"
    try:
        with path.open("rb") as handle:
            texts, runs, run_places, places, synth, synth_runs = pickle.load(handle)  # noqa: S301 - our own cache
        return _Index(texts, runs, run_places, places, synth, synth_runs, _prompt_keys(texts))
    except (OSError, EOFError, pickle.UnpicklingError, ValueError):
        pass
    index = _build()
    tmp = path.with_suffix(f".tmp{id(index)}")
    with tmp.open("wb") as handle:
        pickle.dump((index.texts, index.runs, index.run_places, index.places, index.synth, index.synth_runs), handle,
                    protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)
    return index


# ---- checking ------------------------------------------------------------------------------------------------------


def _field(x: Any, name: str) -> Any:
    if isinstance(x, Mapping):
        return x.get(name)
    value = getattr(x, name, None)
    if value is None and getattr(x, "model_extra", None):
        value = x.model_extra.get(name)
    return value


def _counts(name: str, benchmark: str, allowed: frozenset[str]) -> bool:
    """Whether a suite still reserves a question of ``benchmark``: not allowed, and not a training benchmark's row
    that only a whole-benchmark suite (``math``, ``full``) holds."""
    return name not in allowed and not (REGISTRY[name].whole and benchmark in TRAINING_BENCHMARKS)


def _reserving(holders: Iterable[tuple[str, str]], allowed: frozenset[str]) -> set[str]:
    """The suites that still keep a question out, of the (suite, benchmark) pairs holding it: not the allowed ones,
    and no whole-benchmark suite (``math``, ``full`` hold everything) when an allowed suite that draws holds it."""
    holders = list(holders)
    counting = {name for name, benchmark in holders if _counts(name, benchmark, allowed)}
    if counting and all(REGISTRY[n].whole for n in counting) and \
            any(n in allowed and not REGISTRY[n].whole for n, _ in holders):
        return set()
    return counting


def _ordered(suites: Iterable[str]) -> tuple[str, ...]:
    """Suites in the order to name them: those that draw items before the whole-benchmark ones, then the registry's."""
    order = list(REGISTRY)
    return tuple(sorted(set(suites), key=lambda s: (REGISTRY[s].whole, order.index(s))))


def _first(suites: Iterable[str]) -> str:
    """The suite to name first (:func:`_ordered`)."""
    return _ordered(suites)[0]


def _near(text: str, index: _Index, allowed: frozenset[str], real: bool = True) -> set[str]:
    """The suites that still reserve a question sharing an 8-word run with ``text`` — for a synthetic one,
    :data:`SYNTH_SHARED` of its runs (siblings share a fact's run, a paraphrase most of them)."""
    hashes = [_run_hash(r) for r in shingles(text)]
    found: set[str] = set()
    for group in _matches(index, np.array(hashes, dtype=np.int64)) if real else ():
        found |= _reserving(((name, benchmark) for name, benchmark, _ in index.places[group]), allowed)
    shared = Counter(n for h in set(hashes) for n in index.synth_runs.get(h, ()))
    for n, count in shared.items():
        suites, runs = index.synth[n]
        if count >= SYNTH_SHARED * runs:
            found |= _reserving(((name, "heldout") for name in suites), allowed)
    return found


def _matches(index: _Index, runs: np.ndarray) -> set[int]:
    """The place groups of the runs that are in the index."""
    if not len(runs) or not len(index.runs):
        return set()
    at = np.searchsorted(index.runs, runs)
    ok = at < len(index.runs)
    hit = np.zeros(len(runs), dtype=bool)
    hit[ok] = index.runs[at[ok]] == runs[ok]
    return set(index.run_places[at[hit]].tolist())


def _in_prompt(prompt: Any, index: _Index) -> tuple[str, str] | None:
    """(user message, the reserved question) when a user message holds a reserved question's words, in order."""
    for content in _user_texts(prompt):
        words = tuple(_WORD.findall(normalize_question(content)))
        for start in range(len(words)):
            for held, text in index.by_key.get(words[start:start + _KEY], ()):
                if words[start:start + len(held)] == held:
                    return content, text
    return None


def _user_texts(prompt: Any) -> list[str]:
    if not isinstance(prompt, list):
        return []
    return [c for m in prompt if _field(m, "role") == "user" and isinstance(c := _field(m, "content"), str)]


def overlaps(items_or_texts: Iterable[Any], allow: Iterable[str] = (), near: bool = True) -> list[Overlap]:
    """The items (``.question``), strings or training rows (``question``, else the user messages of ``prompt``) that
    are a reserved suite's question or (with ``near``) a near-duplicate of one; ``allow``: suites a run may train
    on."""
    index = _index()
    allowed = allowed_suites(allow)
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
            holders = index.texts[hit[1]]
            still = _reserving(((p[0], p[2]) for p in holders), allowed)
            places = {p[0]: p[1] for p in reversed(holders) if p[0] in still}
            if places:
                first = _first(places)
                found.append(Overlap(n, name, hit[0], first, places[first], suites=_ordered(places)))
                continue
        if near:  # (an exact question every holder of which is allowed may still paraphrase another suite's)
            texts = [question] if isinstance(question, str) else _user_texts(_field(x, "prompt"))
            real = isinstance(x, str) or not synthetic(x)  # abstain's synthesis paraphrases no real problem
            for text in texts:
                suites = _near(text, index, allowed, real)
                if suites:
                    found.append(Overlap(n, name, text, _first(suites), "", near=True, suites=_ordered(suites)))
                    break
    return found


def check_training(items_or_texts: Iterable[Any], source: str, allow: Iterable[str] = ()) -> None:
    """Raise :class:`~abstain.schema.DataError` when an item, text or row of ``source`` is a reserved question or a
    near-duplicate of one (``allow``: suites the run opted in to). The message names ``source``, how many matched,
    the suites, the first match (its id, the start of its question, the item it is) and the opt-in."""
    items = list(items_or_texts)
    found = overlaps(items, allow)
    if not found:
        return
    first = found[0]
    start = " ".join(first.question.split())
    start = start if len(start) <= 70 else start[:67] + "..."
    suites = list(_ordered(s for m in found for s in m.suites))
    near = sum(m.near for m in found)
    what = (f"{first.id!r} ({start!r}), item {first.eval_id!r} of the {first.suite} suite" if not first.near
            else f"{first.id!r} ({start!r}), which shares an 8-word run with a question of the {first.suite} suite")
    raise DataError(
        f"{source}: {len(found)} of {len(items)} items {'is' if len(found) == 1 else 'are'} evaluation data or a "
        f"near-duplicate of it ({near} near), in the {', '.join(suites)} suite{'s' if len(suites) > 1 else ''}; "
        f"first: {what}. Questions are compared by text and 8-word runs, not id. Train on a synth spec or other "
        f"items, or opt in by name: allow_eval_suites: [{', '.join(suites)}] in a recipe, --allow-eval-suite "
        f"{' --allow-eval-suite '.join(suites)} on the command line (recorded)")


def split_training(items: Sequence[Any], source: str, allow: Iterable[str] = ()
                   ) -> tuple[list[Any], list[Overlap], GuardReport]:
    """(kept, removed, report): the items that overlap no reserved suite, and what was removed and why by suite."""
    found = overlaps(items, allow)
    removed = {m.index for m in found}
    reasons = Counter(f"{'near-duplicate in' if m.near else 'in'} suite {m.suite}" for m in found)
    kept = [x for n, x in enumerate(items) if n not in removed]
    return kept, found, GuardReport(source, len(items), len(kept), dict(reasons))
