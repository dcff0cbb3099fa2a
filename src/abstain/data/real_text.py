"""Real-text training pairs: UMWP's answerable problems and their unanswerable twins, minus every evaluation item.

UMWP (CC-BY-SA-4.0, shipped in ``benchmarks/umwp``) rewrote SVAMP, GSM8K, MultiArith and ASDiv problems into
2,600 answerable / unanswerable pairs. Several shipped evaluation sets rewrote the same sources, and some
suites draw UMWP itself, so a UMWP row can be an evaluated question or a paraphrase of one.
:func:`umwp_pairs` keeps only pairs none of whose two rows is

* an item of an evaluation suite (``quick``, ``transfer``, ``abstentionbench-lite``, the ``mip-gsm8k-val``
  validation split, ``abstain-test-sum``), by normalized text; or
* a near-duplicate (a shared 8-word run, :mod:`abstain.data.near_duplicates`) of any real-text evaluation
  question: those suites and the MiP (GSM8K, SVAMP, formula), GSM8K, MATH-500, TreeCut and SelfAware
  benchmarks —

and says what it removed and why (:class:`GuardReport`). A pair loses both rows when one goes, so every kept
problem comes with its twin. Then ``n`` pairs are drawn with ``seed``.

Example:
    >>> items, report = umwp_pairs(n=4, seed=0)
    >>> len(items), sorted({i.label for i in items})
    (8, ['answerable', 'unanswerable'])
    >>> report.reasons["near-duplicate of mip_svamp"] > 500   # MiP-SVAMP rewrote the same SVAMP problems
    True
    >>> report.removed_pairs > 500 and report.kept == report.rows - 2 * report.removed_pairs
    True
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from abstain.data.near_duplicates import ShingleIndex, normalize_question
from abstain.schema import DataError, Item

__all__ = ["EVALUATION_BENCHMARKS", "EVALUATION_SUITES", "GuardReport", "evaluation_overlap", "umwp_pairs"]

log = logging.getLogger(__name__)

#: the suites whose items are evaluated (a UMWP row among them is removed with its twin)
EVALUATION_SUITES = ("quick", "transfer", "abstentionbench-lite", "mip-gsm8k-val", "abstain-test-sum")
#: the real-text benchmarks whose questions a training row must not paraphrase
EVALUATION_BENCHMARKS = ("mip_gsm8k", "mip_svamp", "mip_formula", "gsm8k", "math500", "treecut", "selfaware")


@dataclass(frozen=True)
class GuardReport:
    """What a training source lost to the evaluation guard, and why (row counts by reason)."""

    source: str
    rows: int
    kept: int
    reasons: dict[str, int] = field(default_factory=dict)  # "in suite X" / "near-duplicate of X" / "twin removed"

    @property
    def removed(self) -> int:
        return self.rows - self.kept

    @property
    def removed_pairs(self) -> int:
        return self.removed // 2

    def summary(self) -> str:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.reasons.items(), key=lambda kv: -kv[1]))
        return f"{self.source}: {self.rows} rows, {self.removed} removed ({why}), {self.kept} kept"


@cache
def _evaluation_index() -> tuple[dict[str, str], ShingleIndex]:
    from abstain.data.heldout_guard import synthetic
    from abstain.data.loaders import load_benchmark
    from abstain.data.suites import load_suite

    exact: dict[str, str] = {}
    near = ShingleIndex()
    for suite in EVALUATION_SUITES:
        items = [i for i in load_suite(suite).items if not synthetic(i)]
        for item in items:
            exact.setdefault(normalize_question(item.question), suite)
        near.add(suite, [i.question for i in items])
    for name in EVALUATION_BENCHMARKS:
        near.add(name, [i.question for i in load_benchmark(name)])
    return exact, near


def evaluation_overlap(item: Item) -> str | None:
    """Why ``item`` overlaps an evaluation set (``"in suite transfer"``, ``"near-duplicate of mip_svamp"``),
    or None."""
    exact, near = _evaluation_index()
    suite = exact.get(normalize_question(item.question))
    if suite is not None:
        return f"in suite {suite}"
    sets = near.sets_of(item.question)
    return f"near-duplicate of {sorted(sets)[0]}" if sets else None


def umwp_pairs(n: int | None, seed: int, perturbations: Sequence[str] | None = None) -> tuple[list[Item], GuardReport]:
    """``n`` UMWP pairs (all, when None) none of whose rows overlaps an evaluation set, each original followed
    by its twin; and what the guard removed. ``perturbations``: keep only twins of these UMWP categories."""
    from abstain.data.loaders import load_benchmark

    rows = load_benchmark("umwp")
    pairs: dict[str, list[Item]] = {}
    for item in rows:
        pairs.setdefault(item.meta["pair_id"], []).append(item)
    reasons: Counter[str] = Counter()
    clean: list[list[Item]] = []
    for pair_id, members in pairs.items():
        why = [evaluation_overlap(i) for i in members]
        if any(why):
            reasons.update(w for w in why if w)
            reasons["twin of a removed row"] += sum(w is None for w in why)
            continue
        if len(members) == 2 and {m.label for m in members} == {"answerable", "unanswerable"}:
            clean.append(sorted(members, key=lambda i: i.label))  # answerable first
        else:
            reasons["no twin"] += len(members)
    report = GuardReport("UMWP", len(rows), sum(len(p) for p in clean), dict(reasons))
    if perturbations is not None:
        unknown = set(perturbations) - {p[1].perturbation for p in clean}
        if unknown:
            raise DataError(f"data.umwp.perturbations: unknown {sorted(unknown)}; UMWP's are "
                            f"{sorted({p[1].perturbation for p in clean})}")
        clean = [p for p in clean if p[1].perturbation in perturbations]
    if n is not None and n > len(clean):
        raise DataError(f"data.umwp.n: {n} pairs asked, {len(clean)} left after the evaluation guard "
                        f"({report.summary()})")
    chosen = clean if n is None else random.Random(seed).sample(clean, n)
    log.info("%s", report.summary())
    return [i for pair in chosen for i in pair], report
