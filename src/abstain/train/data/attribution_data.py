"""Attribution SFT rows from the policy's own boundary: DATA_UNCERTAIN when a premise is missing, MODEL_UNCERTAIN
when the problem is well posed but beyond the policy, an answer when the policy can solve it.

UA-Bench's point is that the two uncertainties are different claims. A 135M model solves a few percent of real
word problems, so refusing an answerable one it cannot solve is *right*, as MODEL_UNCERTAIN; what it must learn
is to say DATA_UNCERTAIN only when the question lacks a fact. The targets follow a probe of the policy
(``abstain probe``: k samples per answerable item):

==========================  ==========================================================================
item                        target (``attribution`` protocol)
==========================  ==========================================================================
answerable, solved (p̂ > 0)  the computed trace where the item has an equation graph (certified
                            synthesis), else the policy's first correct sample: ``\\boxed{answer}``
answerable, never solved    "Checking the facts: the question gives every fact it needs. Working it out
                            reliably is beyond me." ``\\boxed{<MODEL_UNCERTAIN>}``
unanswerable                "Checking the facts: <the missing fact, from the item's ``gap``, or its
                            kind from the UMWP category>." ``\\boxed{<DATA_UNCERTAIN>}``
==========================  ==========================================================================

Both abstentions open with the same words, so the decision is taken after the check, not in the first
token. Every target is scored by abstain's scorer before it is written (:mod:`abstain.train.data.check`); each
row's ``p_hat`` is its probe's (the answerable original's for a twin), what a GRPO stage with ``rl_ua`` reads
as "beyond me".

Example:
    >>> from abstain.records.probes import ProbeRow
    >>> from abstain.schema import Item
    >>> a = Item(id="a", question="Tom has 3 apples and buys 2. How many?", answers=["5"], label="answerable")
    >>> u = Item(id="u", question="Tom has some apples and buys 2. How many?", answers=[], label="unanswerable",
    ...          perturbation="missing_key_info")
    >>> probe = [ProbeRow(**a.model_dump(), model="m", protocol="answer_only", k=2, n_judged=2, n_correct=0,
    ...                   p_hat=0.0, ook=True, samples=[])]
    >>> build = attribution_rows([a, u], probe)
    >>> [r.target_kind for r in build.rows], build.rows[1].completion[0]["content"][-24:]
    (['model_uncertain', 'data_uncertain'], '\\\\boxed{<DATA_UNCERTAIN>}')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from abstain.data.guard import check_training
from abstain.records.probes import ProbeRow
from abstain.schema import Item, Pred
from abstain.train.data.check import verify_targets
from abstain.train.data.sft_data import SFTBuild, SFTRow, sft_row
from abstain.train.data.targets.build import Intent, build_target

__all__ = ["AttributionConfig", "CHECK", "attribution_rows", "missing_fact"]

CHECK = "Checking the facts:"
BEYOND = f"{CHECK} the question gives every fact it needs. Working it out reliably is beyond me. \\boxed{{<MODEL_UNCERTAIN>}}"
#: what is wrong with an unanswerable UMWP problem, by its category
UMWP_REASONS = {
    "missing_key_info": "a number the answer needs is never given",
    "ambiguous_key_info": "a quantity the answer needs is stated too vaguely to use",
    "unrealistic_conditions": "the conditions it states cannot all hold",
    "unrelated_object": "it asks about something the problem never describes",
    "question_missing": "it never says what to find",
}


@dataclass(frozen=True)
class AttributionConfig:
    """How the attribution rows are built."""

    solved_target: Literal["trace", "sample"] = field(default="trace", metadata={
        "help": "a solved item with an equation graph: its computed trace (trace) or the policy's sample"})
    on_fail: Literal["error", "drop"] = field(default="drop", metadata={"help": "a failing target: error | drop"})
    protocol: Literal["attribution", "idk"] = field(default="attribution", metadata={
        "help": "idk: the same rows with both abstentions as the idk protocol's \\boxed{I don't know.} (the "
                "R-Tuning arm: which uncertainty it is is not taught)"})
    allow_eval_suites: tuple[str, ...] = field(default=(), metadata={
        "help": "suites the items may come from although they are kept out of training (abstain.data.guard)"})


def missing_fact(item: Item) -> str:
    """The check's words for an unanswerable item: its ``gap`` (what synthesis removed), its UMWP category's
    kind of flaw, or a generic sentence.

    A gap that is already a sentence (synthesis writes "The problem never states ...") is used as it is; a noun
    phrase is what the question does not give; a clarifying question is what it leaves open.

    Example:
        >>> def gap(text): return Item(id="u", question="q", answers=[], label="unanswerable", gap=text)
        >>> missing_fact(gap("The price of the pen."))
        'the question does not give the price of the pen'
        >>> missing_fact(gap("The problem never states how much Sofia saved in June."))
        'the problem never states how much Sofia saved in June'
        >>> missing_fact(gap("The exact ratio between Maya's age and Finn's age is missing."))
        "the exact ratio between Maya's age and Finn's age is missing"
        >>> missing_fact(gap("Which city do you mean?"))
        'the question leaves open which city you mean'
    """
    if item.gap:
        gap = " ".join(item.gap.split()).rstrip(".")
        first, _, rest = gap.partition(" ")
        if first in _LOWER_FIRST:
            gap = f"{first.lower()} {rest}"
        if gap.endswith("?"):
            return f"the question leaves open {_indirect(gap.rstrip('?'))}"
        if _CLAUSE.search(gap):
            return gap
        return f"the question does not give {gap}"
    if item.perturbation in UMWP_REASONS:
        return UMWP_REASONS[item.perturbation]
    return "a fact the answer needs is missing"


#: words a gap starts with that are not names (lower-cased inside the check's sentence)
_LOWER_FIRST = frozenset({"The", "A", "An", "One", "Its", "What", "Which", "Who", "How", "When", "Where", "Is", "Are",
                          "Do", "Does"})
#: a verb of a sentence-like gap ("... is missing", "the problem never states ...", "... not its exact value")
_CLAUSE = re.compile(r"\b(is|are|was|were|never|not|does|do|states|gives|covers|lacks|missing)\b")


def _indirect(question: str) -> str:
    """A direct question as an indirect one, as far as a short rule goes: "which city do you mean" -> "which city
    you mean"."""
    return re.sub(r"\b(do|does|did) (you|we|they|he|she|it|I) ", r"\2 ", question, count=1)


def _probe_of(probe: Sequence[ProbeRow]) -> dict[str, ProbeRow]:
    out = {}
    for row in probe:
        if row.label == "answerable":
            out[row.id] = row
            if row.meta.get("pair_id"):
                out.setdefault(f"pair:{row.meta['pair_id']}", row)
    return out


def attribution_rows(items: Sequence[Item], probe: Sequence[ProbeRow],
                     config: AttributionConfig = AttributionConfig()) -> SFTBuild[SFTRow]:
    """SFT rows under ``attribution`` for ``items`` (both labels), the answerable ones looked up in ``probe``
    (an answerable item missing from it is an error naming it)."""
    check_training(items, "the attribution items", config.allow_eval_suites)
    protocol = config.protocol
    idk = protocol == "idk"
    du_box, mu_box = ("\\boxed{I don't know.}",) * 2 if idk else ("\\boxed{<DATA_UNCERTAIN>}", "\\boxed{<MODEL_UNCERTAIN>}")
    du_pred = Pred.MODEL_UNCERTAIN if idk else Pred.DATA_UNCERTAIN  # the idk protocol's one abstention
    beyond = BEYOND.replace("\\boxed{<MODEL_UNCERTAIN>}", mu_box)
    by_id = _probe_of(probe)
    planned: list[tuple[Item, str, Intent, str]] = []
    skipped: list[tuple[str, str]] = []
    for item in items:
        pair = item.meta.get("pair_id") or (item.model_extra or {}).get("pair_id")
        if item.label == "unanswerable":
            row = by_id.get(f"pair:{pair}") if pair else None
            text = f"{CHECK} {missing_fact(item)}. {du_box}"
            planned.append((_with_p(item, row), text, Intent(du_pred), "data_uncertain"))
            continue
        row = by_id.get(item.id)
        if row is None:
            raise ValueError(f"answerable item {item.id!r} is not in the probe: probe the answerable items first "
                             "(abstain probe --data ...)")
        if row.ook is None:
            skipped.append((item.id, "no probe sample could be judged"))
        elif row.ook:
            planned.append((_with_p(item, row), beyond, Intent(Pred.MODEL_UNCERTAIN), "model_uncertain"))
        elif config.solved_target == "trace" and (item.model_extra or {}).get("graph") is not None:
            target = build_target(item, protocol)
            planned.append((_with_p(item, row), target.text, target.intent, "trace"))
        else:
            sample = next(s for s in row.samples if s.judge_error is None and s.correct is True)
            planned.append((_with_p(item, row), sample.response, Intent(Pred.ANSWER, correct=True), "sample"))
    verdicts = verify_targets([p[0] for p in planned], [p[1] for p in planned], [p[2] for p in planned], protocol)
    failed = [(p[0].id, f"{p[3]}: {why}") for p, why in zip(planned, verdicts, strict=True) if why]
    if failed and config.on_fail == "error":
        raise ValueError(f"{len(failed)} attribution targets fail abstain's scorer ({failed[0][0]}: {failed[0][1]})")
    rows = []
    for (item, text, _, kind), why in zip(planned, verdicts, strict=True):
        if why is None:
            rows.append(sft_row(item, protocol, text, kind).model_copy(update={"p_hat": item.meta.get("p_hat")}))
    return SFTBuild.of(rows, lambda r: r.target_kind, skipped + failed)


def _with_p(item: Item, row: ProbeRow | None) -> Item:
    if row is None or row.p_hat is None:
        return item
    return item.model_copy(update={"meta": {**item.meta, "p_hat": row.p_hat}})
