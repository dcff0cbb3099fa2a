"""Training data from a probe file: R-Tuning, RFT and DPO (TIAR's baselines).

* **R-Tuning** (Zhang et al.): SFT rows where the items the model does not know (``ook``: none of its
  k samples correct, and every unanswerable item) are relabelled "I don't know" in the protocol's
  format, and the known items keep an answer — a correct sampled response (``known_target="sample"``)
  or the reference in the protocol's demonstration format (``"reference"``).
* **RFT** (rejection-sampling fine-tuning): SFT rows of the sampled responses the scorer accepted —
  correct answers, and (``rft_refusals``) refusals of unanswerable items — distinct texts only.
* **DPO** pairs in TRL's conversational ``prompt`` / ``chosen`` / ``rejected`` format: on an
  out-of-knowledge item "I don't know" is preferred over a wrong sampled answer; on a known item a
  correct sampled answer is preferred over "I don't know".

"I don't know" is ``\\boxed{I don't know.}`` (``clarify``: inside ``<thinking>``/``<answer>``;
``attribution``: ``\\boxed{<MODEL_UNCERTAIN>}``, or ``<DATA_UNCERTAIN>`` on an unanswerable item).
Every completion, chosen and rejected is scored by abstain's scorer (:mod:`abstain.train.data.check`) before
it is written and must be what it is meant to be; these builders never import the evaluation layer. A
probe of evaluation items (:mod:`abstain.data.guard`) is evaluation, never training data: refused.

Example:
    >>> from abstain.records.probes import ProbeRow, ProbeSample
    >>> row = ProbeRow(id="q", question="2+2?", answers=["4"], label="answerable", model="m", protocol="idk",
    ...                k=2, n_judged=2, n_correct=0, p_hat=0.0, ook=True, samples=[
    ...                    ProbeSample(sample=0, response="\\\\boxed{5}", pred="ANSWER", correct=False, format_ok=True),
    ...                    ProbeSample(sample=1, response="\\\\boxed{3}", pred="ANSWER", correct=False, format_ok=True)])
    >>> rtuning_rows([row]).rows[0].completion[0]["content"]
    "\\\\boxed{I don't know.}"
    >>> pair = dpo_rows([row]).rows[0]
    >>> pair.chosen[0]["content"], pair.rejected[0]["content"]
    ("\\\\boxed{I don't know.}", '\\\\boxed{5}')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from abstain.data.guard import check_training
from abstain.records.probes import ProbeRow, ProbeSample
from abstain.protocols import get_protocol
from abstain.schema import Item, Pred
from abstain.train.data.check import verify_targets
from abstain.train.data.rows import ItemColumns, PreferenceRow
from abstain.train.data.sft_data import SFTBuild, SFTRow, sft_row
from abstain.train.data.targets.build import Intent

__all__ = ["DPOBuild", "DPORow", "ProbeDataConfig", "dpo_rows", "idk_target", "rft_rows", "rtuning_rows"]


@dataclass(frozen=True)
class ProbeDataConfig:
    """How the probe builders choose their targets."""

    known_target: Literal["sample", "reference"] = field(
        default="sample", metadata={"help": "R-Tuning: a known item keeps a correct sample or the reference"})
    rft_refusals: bool = field(default=True, metadata={"help": "RFT keeps refusals of unanswerable items"})
    pairs_per_item: int = field(default=1, metadata={"help": "DPO: at most this many pairs per item"})
    on_fail: Literal["error", "drop"] = field(default="error", metadata={"help": "a failing target: error | drop"})
    allow_eval_suites: tuple[str, ...] = field(default=(), metadata={
        "help": "suites the probe may come from although they are kept out of training (abstain.data.guard)"})

    def __post_init__(self) -> None:
        if self.known_target not in ("sample", "reference"):
            raise ValueError(f"known_target must be sample or reference (got {self.known_target!r})")
        if self.pairs_per_item < 1:
            raise ValueError("pairs_per_item must be >= 1")
        if self.on_fail not in ("error", "drop"):
            raise ValueError(f"on_fail must be error or drop (got {self.on_fail!r})")


def idk_target(protocol: str, label: str) -> tuple[str, Intent]:
    """The protocol's "I don't know" and what the scorer must read in it.

    Example:
        >>> idk_target("attribution", "unanswerable")[0]
        '\\\\boxed{<DATA_UNCERTAIN>}'
    """
    if protocol == "attribution":
        if label == "unanswerable":
            return "\\boxed{<DATA_UNCERTAIN>}", Intent(Pred.DATA_UNCERTAIN)
        return "\\boxed{<MODEL_UNCERTAIN>}", Intent(Pred.MODEL_UNCERTAIN)
    if protocol == "clarify":
        text = "<thinking>I cannot answer this reliably.</thinking><answer>\\boxed{I don't know.}</answer>"
        return text, Intent(Pred.MODEL_UNCERTAIN)
    return "\\boxed{I don't know.}", Intent(Pred.MODEL_UNCERTAIN)


_CORRECT = Intent(Pred.ANSWER, correct=True)
_WRONG = Intent(Pred.ANSWER, correct=False, format_ok=None)  # a rejected answer may lack its box


def _out_of_knowledge(row: ProbeRow) -> bool:
    return row.label == "unanswerable" or row.ook is True


def _distinct(samples: Iterable[ProbeSample]) -> list[ProbeSample]:
    seen, out = set(), []
    for s in samples:
        if s.response not in seen:
            seen.add(s.response)
            out.append(s)
    return out


def _correct(row: ProbeRow) -> list[ProbeSample]:
    return _distinct(s for s in row.samples if s.judge_error is None and s.correct is True)


def _wrong(row: ProbeRow) -> list[ProbeSample]:
    """Wrong answers, boxed ones first (a definite wrong answer is the clearer thing to reject)."""
    wrong = [s for s in row.samples if s.judge_error is None and s.pred is Pred.ANSWER and s.correct is False]
    return _distinct(sorted(wrong, key=lambda s: not s.format_ok))


@dataclass
class _Planned:
    item: Item
    protocol: str
    texts: list[str]
    intents: list[Intent]
    kind: str


def _check(planned: Sequence[_Planned], config: ProbeDataConfig) -> tuple[list[_Planned], list[tuple[str, str]]]:
    """Score every planned text; keep the plans whose texts all come out as intended."""
    flat = [(i, text, intent) for i, p in enumerate(planned) for text, intent in zip(p.texts, p.intents)]
    failures: dict[int, str] = {}
    by_protocol: dict[str, list[tuple[int, str, Intent]]] = {}
    for entry in flat:
        by_protocol.setdefault(planned[entry[0]].protocol, []).append(entry)
    for protocol, entries in by_protocol.items():
        verdicts = verify_targets([planned[i].item for i, _, _ in entries], [t for _, t, _ in entries],
                                  [intent for _, _, intent in entries], protocol)
        for (i, _, _), problem in zip(entries, verdicts, strict=True):
            if problem is not None:
                failures.setdefault(i, problem)
    dropped = [(planned[i].item.id, f"{planned[i].kind}: {why}") for i, why in sorted(failures.items())]
    if dropped and config.on_fail == "error":
        raise ValueError(f"{len(dropped)} built targets fail abstain's scorer ({dropped[0][0]}: {dropped[0][1]}); "
                         "set on_fail='drop' to leave them out")
    return [p for i, p in enumerate(planned) if i not in failures], dropped


def _sft(planned: list[_Planned], skipped: list[tuple[str, str]], config: ProbeDataConfig) -> SFTBuild[SFTRow]:
    kept, dropped = _check(planned, config)
    rows = [sft_row(p.item, p.protocol, p.texts[0], p.kind) for p in kept]
    return SFTBuild.of(rows, lambda r: r.target_kind, skipped + dropped)


def rtuning_rows(probe: Sequence[ProbeRow], config: ProbeDataConfig = ProbeDataConfig()) -> SFTBuild[SFTRow]:
    """R-Tuning SFT rows: "I don't know" where the model is out of knowledge, an answer elsewhere."""
    check_training(probe, "the probe", config.allow_eval_suites)  # training data: a probe of evaluation items is not
    planned, skipped = [], []
    for row in probe:
        item = row.item()
        if row.label == "answerable" and row.ook is None:
            skipped.append((row.id, "no sample could be judged"))
            continue
        if _out_of_knowledge(row):
            text, intent = idk_target(row.protocol, row.label)
            planned.append(_Planned(item, row.protocol, [text], [intent], "idk"))
        elif config.known_target == "sample":
            planned.append(_Planned(item, row.protocol, [_correct(row)[0].response], [_CORRECT], "sample"))
        else:
            if not row.answers:
                skipped.append((row.id, "a known item without a reference answer"))
                continue
            text = get_protocol(row.protocol).answerable_demo.format(answer=row.answers[0])
            planned.append(_Planned(item, row.protocol, [text], [_CORRECT], "reference"))
    return _sft(planned, skipped, config)


def rft_rows(probe: Sequence[ProbeRow], config: ProbeDataConfig = ProbeDataConfig()) -> SFTBuild[SFTRow]:
    """RFT SFT rows: every distinct accepted sample (correct answers; refusals of unanswerable items)."""
    check_training(probe, "the probe", config.allow_eval_suites)  # training data: a probe of evaluation items is not
    planned = []
    for row in probe:
        item = row.item()
        if row.label == "answerable":
            for s in _correct(row):
                planned.append(_Planned(item, row.protocol, [s.response], [_CORRECT], "sample"))
        elif config.rft_refusals:
            refusals = _distinct(x for x in row.samples if x.judge_error is None and x.format_ok
                                 and x.pred is not Pred.ANSWER)
            for s in refusals:
                planned.append(_Planned(item, row.protocol, [s.response], [Intent(s.pred)], "refusal"))
    return _sft(planned, [], config)


class DPORow(ItemColumns, PreferenceRow):
    """One preference pair: TRL's conversational prompt / chosen / rejected plus flat item columns."""

    pair_kind: str  # ook: IDK over a wrong answer; known: a correct answer over IDK
    p_hat: float | None = None


DPOBuild = SFTBuild  # DPOBuild[DPORow]: the pairs, counted by pair kind


def dpo_rows(probe: Sequence[ProbeRow], config: ProbeDataConfig = ProbeDataConfig()) -> SFTBuild[DPORow]:
    """DPO pairs: IDK over a wrong sampled answer (out of knowledge), a correct one over IDK (known)."""
    check_training(probe, "the probe", config.allow_eval_suites)  # training data: a probe of evaluation items is not
    planned, skipped = [], []
    p_hats = {}
    for row in probe:
        item = row.item()
        p_hats[row.id] = row.p_hat
        idk, idk_intent = idk_target(row.protocol, row.label)
        if row.label == "answerable" and row.ook is None:
            skipped.append((row.id, "no sample could be judged"))
        elif _out_of_knowledge(row):
            wrong = _wrong(row)[: config.pairs_per_item]
            if not wrong:
                skipped.append((row.id, "out of knowledge, but no sample is a wrong answer to reject"))
            for s in wrong:
                planned.append(_Planned(item, row.protocol, [idk, s.response], [idk_intent, _WRONG], "ook"))
        else:
            for s in _correct(row)[: config.pairs_per_item]:
                planned.append(_Planned(item, row.protocol, [s.response, idk], [_CORRECT, idk_intent], "known"))
    kept, dropped = _check(planned, config)
    rows = []
    for p in kept:
        rows.append(DPORow(
            prompt=get_protocol(p.protocol).messages(p.item), chosen=[{"role": "assistant", "content": p.texts[0]}],
            rejected=[{"role": "assistant", "content": p.texts[1]}], id=p.item.id, question=p.item.question,
            answers=p.item.answers, label=p.item.label, category=p.item.category, source=p.item.source,
            protocol=p.protocol, pair_kind=p.kind, p_hat=p_hats[p.item.id],
        ))
    return DPOBuild.of(rows, lambda r: r.pair_kind, skipped + dropped)
