"""Abstain-CoT, the Abstain-R1 authors' cold-start SFT set, as abstain SFT rows under ``clarify``.

The set (``src/abstain/data/abstain_cot/``, Apache-2.0 per its README, **research use only** because of
the datasets it derives from — see its SOURCE.txt; a notice is logged when it is loaded) holds, per
subset, answerable and unanswerable questions with a DeepSeek-V3 answer in Abstain-R1's format
``<thinking>…</thinking><answer>…</answer>``. Each becomes an :class:`~abstain.train.sft_data.SFTRow`
whose prompt is exactly what the ``clarify`` protocol shows for the question (the format Abstain-R1
trains and evaluates in) and whose completion is the authors' answer, unchanged, so their SFT can be
rerun. Every completion is also scored by abstain's scorer (:func:`abstain.train.check.score_targets`):
an answerable row must box an answer, an unanswerable one a refusal; the rows where it does not are
counted in :attr:`CoTSet.inconsistent` and kept (``drop_inconsistent=True`` leaves them out).

Measured: **none** of the 1,964 answerable completions boxes its answer (the ``<answer>`` section is
the bare answer, "Yes", "14.0", or a worked paragraph), so under abstain's parser every one is a
format error. ``box_answers=True`` boxes the answer where it can be found unambiguously — a one-line
``<answer>`` section, or a short last line of it — and leaves the others unboxed (still counted).

The ``umwp`` subset is built from the UMWP benchmark and ``gsm8k_abstain`` from GSM8K: 32 of their
questions are in the ``transfer`` suite (held out), so they are refused unless left out (``subsets=...``;
``abstain sft-data --abstain-cot`` leaves them out unless ``--cot-subsets`` names them).

Example:
    >>> cot = load_abstain_cot(subsets=("bbq",))
    >>> len(cot.rows), cot.rows[0].id, cot.rows[0].protocol
    (124, 'abstain_cot-bbq-a0000', 'clarify')
    >>> cot.rows[0].completion[0]["content"].startswith("<thinking>")
    True
    >>> box_answer("<thinking>t</thinking>\\n<answer>\\nFrance\\n</answer>")
    '<thinking>t</thinking>\\n<answer>\\n\\\\boxed{France}\\n</answer>'
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from abstain.data.abstain_r1 import REASONING_SUBSETS
from abstain.data.files import notice_once
from abstain.data.heldout_guard import check_not_heldout, heldout_matches
from abstain.schema import DataError, Item, Pred, read_lines
from abstain.train.check import score_targets
from abstain.train.sft_data import SFTRow, sft_row

__all__ = ["ABSTAIN_COT_HELDOUT_SUBSETS", "ABSTAIN_COT_NOTICE", "ABSTAIN_COT_SUBSETS", "CoTSet", "abstain_cot_dir", "box_answer",
           "load_abstain_cot"]

log = logging.getLogger(__name__)

ABSTAIN_COT_SUBSETS = ("alcuna", "bbq", "falseqa", "gsm8k_abstain", "known_unknown_questions", "mediq",
                       "moral_choice", "musique", "qaqa", "squad2", "umwp")
#: the subsets that hold held-out questions (of the ``transfer`` suite): refused, left out by ``abstain sft-data``
ABSTAIN_COT_HELDOUT_SUBSETS = ("gsm8k_abstain", "umwp")
ABSTAIN_COT_NOTICE = (
    "Abstain-CoT (Abstain-R1, Apache-2.0) derives from datasets with their own terms (CC-BY-SA-4.0, CC-BY-4.0, "
    "unstated): research use only (src/abstain/data/abstain_cot/SOURCE.txt). Its umwp subset overlaps the UMWP "
    "benchmark."
)


def abstain_cot_dir() -> Path:
    """Folder of the shipped Abstain-CoT files."""
    return Path(str(resources.files("abstain") / "data" / "abstain_cot"))


_ANSWER = re.compile(r"(<answer>)(.*?)(</answer>)", re.DOTALL)
_SHORT = 40  # characters: a last line this short is the final answer, not a sentence of the derivation


def box_answer(completion: str) -> str:
    """``completion`` with its final answer boxed: the whole ``<answer>`` section when it is one line,
    else its last line when that is short; unchanged when it has a box or neither applies."""
    matches = list(_ANSWER.finditer(completion))
    if not matches or "\\boxed" in completion:
        return completion
    m = matches[-1]
    lines = [ln for ln in m.group(2).splitlines() if ln.strip()]
    if not lines or (len(lines) > 1 and len(lines[-1].strip()) > _SHORT):
        return completion
    last = lines[-1].strip()
    body = m.group(2)
    cut = body.rstrip().rfind(last)
    boxed = body[:cut] + f"\\boxed{{{last}}}" + body[cut + len(last):]
    return completion[: m.start(2)] + boxed + completion[m.end(2):]


@dataclass
class CoTSet:
    """The loaded rows and the ids whose completion abstain's scorer reads otherwise than its label."""

    rows: list[SFTRow]
    inconsistent: list[str] = field(default_factory=list)
    dropped: int = 0


def _read(path: Path) -> list[dict[str, str]]:
    rows = []
    for lineno, row in read_lines(path, json.loads):
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) \
                or not isinstance(row.get("answer"), str):
            raise DataError(f"{path}:{lineno}: expected string fields 'question' and 'answer'")
        rows.append(row)
    return rows


def load_abstain_cot(subsets: tuple[str, ...] | None = None, drop_inconsistent: bool = False,
                     box_answers: bool = False, allow_heldout: bool = False) -> CoTSet:
    """The Abstain-CoT rows of ``subsets`` (default: all), answerable then unanswerable per subset.

    ``box_answers``: box the answerable completions' final answers (:func:`box_answer`). Subsets holding
    held-out questions are refused (:mod:`abstain.data.heldout_guard`; :data:`ABSTAIN_COT_HELDOUT_SUBSETS`
    share questions with the ``transfer`` suite); ``allow_heldout=True`` loads them anyway, only to inspect
    the set.
    """
    chosen = ABSTAIN_COT_SUBSETS if subsets is None else tuple(subsets)
    unknown = sorted(set(chosen) - set(ABSTAIN_COT_SUBSETS))
    if unknown or not chosen:
        raise ValueError(f"unknown Abstain-CoT subsets {unknown}; choose from {', '.join(ABSTAIN_COT_SUBSETS)}")
    notice_once("abstain_cot", ABSTAIN_COT_NOTICE, log)
    items: list[Item] = []
    answers: list[str] = []
    for subset in chosen:
        for label in ("answerable", "unanswerable"):
            path = abstain_cot_dir() / subset / f"{subset}_{label}_clean_deepseek_filtered.jsonl"
            if not path.exists():
                raise DataError(f"{path}: missing from the package; reinstall abstain")
            for n, row in enumerate(_read(path)):
                items.append(Item(id=f"abstain_cot-{subset}-{label[0]}{n:04d}", question=row["question"], answers=[],
                                  label=label, category="reasoning" if subset in REASONING_SUBSETS else "knowledge",
                                  source=f"abstain_cot/{subset}"))
                text = row["answer"]
                answers.append(box_answer(text) if box_answers and label == "answerable" else text)
    found = [] if allow_heldout else heldout_matches(items)
    if found:
        held = sorted({str(items[m.index].source).split("/")[-1] for m in found})
        check_not_heldout(items, f"Abstain-CoT (leave out the subsets that hold them, {', '.join(held)}: "
                                 "subsets= or --cot-subsets)")
    scored = score_targets(items, answers, "clarify")
    rows, inconsistent = [], []
    for item, text, s in zip(items, answers, scored, strict=True):
        expected_refusal = item.label == "unanswerable"
        ok = s.format_ok and (s.pred is not Pred.ANSWER) == expected_refusal
        if not ok:
            inconsistent.append(item.id)
            if drop_inconsistent:
                continue
        rows.append(sft_row(item, "clarify", text, "cot_refusal" if expected_refusal else "cot_answer"))
    return CoTSet(rows, inconsistent, len(items) - len(rows))
