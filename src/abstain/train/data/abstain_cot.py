"""Abstain-CoT, the Abstain-R1 authors' cold-start SFT set, as abstain SFT rows under ``clarify``.

The set (``src/abstain/data/abstain_cot/``, Apache-2.0 per its README, **research use only** because of
the datasets it derives from — see its SOURCE.txt; a notice is logged when it is loaded) holds, per
subset, answerable and unanswerable questions with a DeepSeek-V3 answer in Abstain-R1's format
``<thinking>…</thinking><answer>…</answer>``. Each becomes an :class:`~abstain.train.data.sft_data.SFTRow`
whose prompt is exactly what the ``clarify`` protocol shows for the question (the format Abstain-R1
trains and evaluates in) and whose completion is the authors' answer, unchanged, so their SFT can be
rerun. Every completion is also scored by abstain's scorer (:func:`abstain.train.data.check.score_targets`):
an answerable row must box an answer, an unanswerable one a refusal; the rows where it does not are
counted in :attr:`CoTSet.inconsistent` and kept (``drop_inconsistent=True`` leaves them out).

Measured: **none** of the 1,964 answerable completions boxes its answer (the ``<answer>`` section is
the bare answer, "Yes", "14.0", or a worked paragraph), so under abstain's parser every one is a
format error. ``box_answers=True`` boxes the answer where it can be found unambiguously — a one-line
``<answer>`` section, or a short last line of it — and leaves the others unboxed (still counted).

The set derives from the same datasets abstain evaluates on (AbstentionBench's, which Abstain-R1's own
``abstain-test`` is built from; UMWP; GSM8K), so many of its questions are evaluation questions or near-duplicates
of them. The training guard (:mod:`abstain.data.guard`) leaves those rows out and :attr:`CoTSet.guard` says how
many, by suite; ``allow`` names suites a run opts in to train on anyway. Measured with the guard's defaults:
of 3,486 rows, the ``bbq``, ``mediq`` and ``moral_choice`` subsets go whole (their questions are the shipped
benchmarks' or AbstentionBench's), most of ``alcuna`` and ``gsm8k_abstain``, a few of ``musique``, ``qaqa`` and
``squad2``; ``falseqa`` and ``known_unknown_questions`` stay nearly whole (docs/training-data.md).

Example:
    >>> cot = load_abstain_cot(subsets=("falseqa",))
    >>> len(cot.rows), cot.rows[0].id, cot.rows[0].protocol, cot.guard.removed
    (190, 'abstain_cot-falseqa-a0000', 'clarify', 0)
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
from abstain.data.guard import GuardReport, split_training
from abstain.schema import DataError, Item, Pred, read_lines
from abstain.train.data.check import score_targets
from abstain.train.data.sft_data import SFTRow, sft_row

__all__ = ["ABSTAIN_COT_NOTICE", "ABSTAIN_COT_SUBSETS", "CoTSet", "abstain_cot_dir", "box_answer", "load_abstain_cot"]

log = logging.getLogger(__name__)

ABSTAIN_COT_SUBSETS = ("alcuna", "bbq", "falseqa", "gsm8k_abstain", "known_unknown_questions", "mediq",
                       "moral_choice", "musique", "qaqa", "squad2", "umwp")
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
    guard: GuardReport | None = None  # the rows the training guard left out, by suite


def _read(path: Path) -> list[dict[str, str]]:
    rows = []
    for lineno, row in read_lines(path, json.loads):
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) \
                or not isinstance(row.get("answer"), str):
            raise DataError(f"{path}:{lineno}: expected string fields 'question' and 'answer'")
        rows.append(row)
    return rows


def load_abstain_cot(subsets: tuple[str, ...] | None = None, drop_inconsistent: bool = False,
                     box_answers: bool = False, allow: tuple[str, ...] = ()) -> CoTSet:
    """The Abstain-CoT rows of ``subsets`` (default: all), answerable then unanswerable per subset, minus the
    evaluation questions and their near-duplicates (:mod:`abstain.data.guard`; ``allow``: suites to train on
    anyway, or ``("all",)`` to inspect the whole set).

    ``box_answers``: box the answerable completions' final answers (:func:`box_answer`).
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
    _, found, report = split_training(items, "Abstain-CoT", allow)
    if found:
        log.info("%s", report.summary())
        gone = {m.index for m in found}
        items = [x for n, x in enumerate(items) if n not in gone]
        answers = [a for n, a in enumerate(answers) if n not in gone]
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
    return CoTSet(rows, inconsistent, len(items) - len(rows), report)
