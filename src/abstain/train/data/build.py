"""The training items a recipe's ``data:`` names (:class:`~abstain.train.data.spec.DataSpec`), built: a suite, a file,
certified synthesis, UMWP pairs or synthesis and UMWP together, matched to the policy by a probe, a balanced subset,
and every item checked by the training guard (:mod:`abstain.data.guard`).

The recipe is the schema that names the data; this module builds it (so loading a recipe builds nothing).

Example:
    >>> from abstain.train.recipe import load_recipe
    >>> len(load_items(load_recipe("tiny-sft").data))  # 8 certified synthetic problems, seed 5
    8
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from abstain.schema import DataError, Item, read_jsonl
from abstain.train.data.spec import DataSpec

__all__ = ["load_items", "load_validation_items", "matched_to_policy"]

log = logging.getLogger(__name__)


def load_items(spec: DataSpec, allow: Sequence[str] = ()) -> list[Item]:
    """The items (a relative ``file`` was resolved against the recipe's folder when it was loaded).

    Evaluation questions are refused whatever the source (:mod:`abstain.data.guard`), but for the suites in
    ``allow`` (the recipe's ``allow_eval_suites``); the UMWP pairs leave them out and say so.
    """
    from abstain.data.guard import check_training
    from abstain.data.suites import load_suite, select_items

    if spec.synth is not None or spec.umwp is not None:
        items, parts = [], []
        if spec.synth is not None:
            from abstain.train.data.mix import MixConfig, training_items

            items += training_items(MixConfig(
                n=spec.synth.n, seed=spec.synth.seed, hard_ratio=spec.synth.hard_ratio,
                unanswerable_ratio=spec.synth.unanswerable_ratio, pair_twins=spec.synth.pair_twins,
                cue_match=spec.synth.cue_match, match_hard=spec.synth.match_hard, depths=spec.synth.depths))
            parts.append(f"synth (seed {spec.synth.seed})")
        if spec.umwp is not None:
            from abstain.data.real_text import umwp_pairs

            pairs, report = umwp_pairs(spec.umwp.n, spec.umwp.seed, spec.umwp.perturbations, allow=allow)
            log.info("training data: %s", report.summary())
            items += pairs
            parts.append(f"umwp (seed {spec.umwp.seed})")
        source = " + ".join(parts)
    elif spec.suite is not None:
        items = load_suite(spec.suite).items
        source = f"suite {spec.suite!r}"
    else:
        path = Path(os.path.expanduser(spec.file or ""))
        items = read_jsonl(path, Item)
        source = str(path)
    if spec.probe is not None:
        items = matched_to_policy(items, spec.probe, spec.p_range, source)
    items = select_items(items, spec.limit, spec.seed) if spec.limit else list(items)
    check_training(items, source, allow)
    return items


def load_validation_items(spec: DataSpec) -> list[Item]:
    """A recipe's ``validation:`` items: as :func:`load_items` reads them, but any evaluation suite may be named or
    overlapped — validation is not trained on (the training guard applies to ``data`` alone)."""
    from abstain.data.suites import SUITES

    return load_items(spec, allow=tuple(SUITES))


def _original_key(item: Item) -> str:
    """The id of the answerable problem an item belongs to: its pair's original, or itself."""
    extra = item.model_extra or {}
    pair = extra.get("pair_id") or item.meta.get("pair_id")
    return f"pair:{pair}" if pair else f"id:{item.id}"


def matched_to_policy(items: list[Item], probe: str, p_range: tuple[float, float] | None, source: str) -> list[Item]:
    """The items whose problem the policy sometimes solves: its answerable original has low < p-hat < high in
    the probe (twins follow their original); each kept item's ``meta.p_hat`` is its original's p-hat.
    ``p_range=None`` keeps every problem with its p-hat (``rl_ua`` reads p-hat 0 as "beyond me").

    Every problem must have its answerable original in the probe: a missing one is an error naming the item.
    """
    from abstain.records.probes import read_probe

    if p_range is not None and not 0 <= p_range[0] < p_range[1] <= 1:
        raise ValueError(f"data.p_range must satisfy 0 <= low < high <= 1, got {p_range}")
    p_hat: dict[str, float | None] = {}
    for row in read_probe(probe):
        if row.label == "answerable":
            p_hat[_original_key(row)] = row.p_hat
            p_hat[f"id:{row.id}"] = row.p_hat
    kept = []
    for item in items:
        key = _original_key(item) if item.label == "unanswerable" else f"id:{item.id}"
        if key not in p_hat:
            raise DataError(f"{source}: item {item.id!r}: its answerable original is not in the probe {probe} "
                            "(probe the answerable items of these problems with `abstain probe`; a cue-matched mix's deep twins "
                            "come without their originals: data.synth.match_hard=false)")
        value = p_hat[key]
        if p_range is None or (value is not None and p_range[0] < value < p_range[1]):
            # a problem whose every sample went unjudged has no p-hat to record
            kept.append(item if value is None else item.model_copy(update={"meta": {**item.meta, "p_hat": value}}))
    if not kept and p_range is not None:
        raise DataError(f"{source}: no problem has {p_range[0]} < p-hat < {p_range[1]} in the probe {probe}")
    return kept
