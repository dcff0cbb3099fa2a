"""Knowledge-boundary probing: sample k answers per item, record the empirical correctness p̂ per item.

R-Tuning, RFT and TIAR's DPO baseline need to know which questions a model can answer. A probe is an
``abstain eval`` run with ``samples=k`` at a temperature above 0 (resumable, in the same run
directory layout), whose ``scored.jsonl`` is then folded into ``probe.jsonl``: one
:class:`ProbeRow` per item — the item, ``k``, ``n_correct``, ``p_hat = n_correct / n_judged`` and
``ook`` (*out of knowledge*: no sample is correct) — with every sampled response and what the scorer
made of it. A probe run with confidence estimators (``abstain probe --confidence``) keeps each sample's values and
their mean per item (``confidence``): a label-free p̂ (``consistency:K``, ``p_true``) for training to read beside
the judged one. Samples the judge could not decide (``judge_error``) count in neither ``n_correct`` nor
``n_judged``; an unanswerable item has no correct answer, so it is always out of knowledge.

This module is the probe *file* (rows, aggregation, reading): what training reads, so it imports no
evaluation code. Running a probe (:func:`abstain.probing.run.run_probe`) sits above evaluation.

Example (aggregation alone; :func:`abstain.probing.run.run_probe` generates the samples first):
    >>> from abstain.schema import ScoredRow
    >>> base = dict(id="q1", question="2+2?", answers=["4"], label="answerable", model="m", protocol="idk",
    ...             format_ok=True, answer=None)
    >>> rows = [ScoredRow(**base, sample=0, response="\\\\boxed{4}", pred="ANSWER", correct=True),
    ...         ScoredRow(**base, sample=1, response="\\\\boxed{5}", pred="ANSWER", correct=False)]
    >>> [(p.n_correct, p.p_hat, p.ook) for p in aggregate(rows)]
    [(1, 0.5, False)]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from abstain.schema import Behavior, Item, Pred, ScoredRow, read_jsonl

__all__ = ["PROBE", "ProbeRow", "ProbeSample", "aggregate", "read_probe"]

PROBE = "probe.jsonl"


class ProbeSample(BaseModel):
    """One sampled response of a probe and the scorer's verdict on it."""

    sample: int
    response: str
    pred: Pred
    correct: bool | None
    format_ok: bool
    behavior: Behavior | None = None
    judge_error: str | None = None
    confidence: dict[str, float | None] | None = None


class ProbeRow(Item):
    """One probed item: the item's own fields plus the probe's counts and samples."""

    model: str
    protocol: str
    k: int
    n_judged: int
    n_correct: int
    p_hat: float | None
    ook: bool | None
    samples: list[ProbeSample]
    #: the mean of each confidence estimate over the samples that have it (empty without estimators)
    confidence: dict[str, float] = {}

    def item(self) -> Item:
        """The item alone (without the probe's fields)."""
        return Item(**self.model_dump(exclude=set(ProbeRow.model_fields) - set(Item.model_fields)))


_SCORED_ONLY = set(ScoredRow.model_fields) - set(Item.model_fields)


def aggregate(scored: Sequence[ScoredRow]) -> list[ProbeRow]:
    """Fold scored samples into one :class:`ProbeRow` per (item, protocol), in first-seen order."""
    groups: dict[tuple[str, str], list[ScoredRow]] = {}
    for row in scored:
        groups.setdefault((row.id, row.protocol or ""), []).append(row)
    out = []
    for (_, protocol), rows in groups.items():
        rows = sorted(rows, key=lambda r: r.sample)
        samples = [ProbeSample(sample=r.sample, response=r.response, pred=r.pred, correct=r.correct,
                               format_ok=r.format_ok, behavior=r.behavior, judge_error=r.judge_error,
                               confidence=r.confidence) for r in rows]
        judged = [s for s in samples if s.judge_error is None]
        n_correct = sum(s.correct is True for s in judged)
        first = rows[0]
        item_fields = first.model_dump(exclude=_SCORED_ONLY)
        out.append(ProbeRow(
            **item_fields, model=first.model, protocol=protocol, k=len(samples), n_judged=len(judged),
            n_correct=n_correct, p_hat=n_correct / len(judged) if judged else None,
            ook=(n_correct == 0) if judged else None, samples=samples, confidence=_mean_confidence(samples),
        ))
    return out


def _mean_confidence(samples: Sequence[ProbeSample]) -> dict[str, float]:
    """Each estimator's mean over the samples that have a value for it."""
    values: dict[str, list[float]] = {}
    for sample in samples:
        for name, value in (sample.confidence or {}).items():
            if value is not None:
                values.setdefault(name, []).append(value)
    return {name: sum(v) / len(v) for name, v in values.items()}


def read_probe(path: str | os.PathLike[str]) -> list[ProbeRow]:
    """Read a ``probe.jsonl`` (a file, or a probe run directory)."""
    path = Path(path)
    return read_jsonl(path / PROBE if path.is_dir() else path, ProbeRow)
