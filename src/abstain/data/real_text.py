"""Real-text training pairs: UMWP's answerable problems and their unanswerable twins, minus every evaluation item.

UMWP (CC-BY-SA-4.0, shipped in ``benchmarks/umwp``) rewrote SVAMP, GSM8K, MultiArith and ASDiv problems into
2,600 answerable / unanswerable pairs. Several shipped evaluation sets rewrote the same sources, and several suites
draw UMWP itself (``quick``, ``transfer``, ``abstentionbench-lite``, and Abstain-R1's ``abstain-test`` holds UMWP
and GSM8K-abstain rows), so a UMWP row can be an evaluated question or a paraphrase of one.
:func:`umwp_pairs` keeps only pairs none of whose two rows the training guard (:mod:`abstain.data.guard`) finds in
a reserved suite — by normalized text or as a near-duplicate (a shared 8-word run) — except that UMWP's rows that
only the whole-benchmark suites (``math``, ``full``) hold are what this source is for
(:data:`~abstain.data.suites.TRAINING_BENCHMARKS`). It says what it
removed and why, naming the suites (:class:`~abstain.data.guard.GuardReport`). A pair loses both rows when one
goes, so every kept problem comes with its twin. Then ``n`` pairs are drawn with ``seed``.

Example:
    >>> items, report = umwp_pairs(n=4, seed=0)
    >>> len(items), sorted({i.label for i in items})
    (8, ['answerable', 'unanswerable'])
    >>> report.reasons["near-duplicate in suite math"] > 400   # MiP-SVAMP rewrote the same SVAMP problems
    True
    >>> report.removed_pairs > 500 and report.kept == report.rows - 2 * report.removed_pairs
    True
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Iterable, Sequence

from abstain.data.guard import GuardReport, split_training
from abstain.schema import DataError, Item

__all__ = ["GuardReport", "umwp_pairs"]

log = logging.getLogger(__name__)


def umwp_pairs(n: int | None, seed: int, perturbations: Sequence[str] | None = None,
               allow: Iterable[str] = ()) -> tuple[list[Item], GuardReport]:
    """``n`` UMWP pairs (all, when None) none of whose rows overlaps a reserved suite, each original followed by its
    twin; and what the guard removed. ``perturbations``: keep only twins of these UMWP categories; ``allow``: suites
    the run opted in to train on (the recipe's ``data.allow_eval_suites``)."""
    from abstain.data.loaders import load_benchmark

    rows = load_benchmark("umwp")
    _, removed, report = split_training(rows, "UMWP", allow=allow)
    why = {rows[m.index].id: f"{'near-duplicate in' if m.near else 'in'} suite {m.suite}" for m in removed}
    pairs: dict[str, list[Item]] = {}
    for item in rows:
        pairs.setdefault(item.meta["pair_id"], []).append(item)
    reasons: Counter[str] = Counter()
    clean: list[list[Item]] = []
    for members in pairs.values():
        if any(m.id in why for m in members):
            reasons.update(why[m.id] for m in members if m.id in why)
            reasons["twin of a removed row"] += sum(m.id not in why for m in members)
            continue
        if len(members) == 2 and {m.label for m in members} == {"answerable", "unanswerable"}:
            clean.append(sorted(members, key=lambda i: i.label))  # answerable first
        else:
            reasons["no twin"] += len(members)
    report = GuardReport(report.source, len(rows), sum(len(p) for p in clean), dict(reasons))
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
