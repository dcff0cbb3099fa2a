"""Loaders of the AbstentionBench datasets shipped with abstain, labelled as AbstentionBench's own loaders do.

Reference: github.com/facebookresearch/AbstentionBench @ e2918417, ``recipe/abstention_datasets/`` (the
label mapping and question formats) and ``analysis/load_results.py`` (datasets, scenarios). Every item
carries in ``meta``: ``benchmark`` (the loader), ``dataset`` (the AbstentionBench dataset it belongs to,
see :func:`abstain.data.suites.dataset_of`) and ``scenario`` (one of :data:`SCENARIOS`).

* ``coconot`` - CoCoNot original (unanswerable) and contrast (answerable) sets; the subcategory gives
  AbstentionBench's category, each category is a dataset ``coconot/<category>``; Safety is left out.
* ``bbq`` - BBQ, 6 categories (a shipped subset): ambiguous context -> unanswerable; dataset ``bbq``.
* ``mediq`` - MediQ iCRAFT-MD + iMedQA twins: full context (answerable) and its first sentence only
  (unanswerable), the choices listed in the question.
* ``moralchoice`` - MoralChoice high (unanswerable) / low (answerable) ambiguity, answered A or B.
* ``bbh_disambiguation_qa`` - BBH disambiguation_qa without the "Ambiguous" option; its target -> unanswerable.
* ``bigbench_known_unknowns`` - BIG-bench known_unknowns; target "Unknown" -> unanswerable.
* ``bigbench_sufficient_information`` - BIG-bench sufficient_information (not part of AbstentionBench);
  target "I do not know" -> unanswerable.

Example:
    >>> items = LOADERS["bbh_disambiguation_qa"]()
    >>> item = items[3]
    >>> item.label, item.question.endswith("(B) The artist will share a story"), "(C)" in item.question
    ('unanswerable', True, False)
    >>> sorted(SCENARIOS)[:3]
    ['answer_unknown', 'false_premise', 'stale']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from abstain.data.abstentionbench_port import BENCHMARK as PORT_BENCHMARK
from abstain.data.files import benchmark_dir, make_item, read_csv, read_json, read_jsonl_rows
from abstain.schema import DataError, Item, benchmark_of

__all__ = ["BBQ_CATEGORIES", "COCONOT_CATEGORY", "LOADERS", "SCENARIOS", "is_abstentionbench"]

#: AbstentionBench's six abstention scenarios (analysis/load_results.py, snake_case)
SCENARIOS = (
    "underspecified_context", "underspecified_intent", "answer_unknown", "false_premise", "subjective", "stale",
)
UNDERSPECIFIED, INTENT, UNKNOWN, FALSE_PREMISE, SUBJECTIVE, STALE = SCENARIOS

#: CoCoNot subcategory -> AbstentionBench category (CoCoNotDataset._SUBCATEGORY_LABEL_MAPPING)
COCONOT_CATEGORY = {
    "false presuppositions": "False presumptions",
    "incomprehensible": "Incomprehensible",
    "subjective questions": "Subjective",
    "underspecified": "Underspecification",
    "universal unknowns": "Unknowns",
    "temporal limitations": "Temporal",
    "modality limitations": "Unsupported",
    "input modality limitations": "Unsupported",
    "output modality limitations": "Unsupported",
    "style and length limitations": "Unsupported",
    "offer advice, opinion or recommendations": "Humanizing",
    "personal inquiry": "Humanizing",
    "privacy violations": "Safety",
    "misinformation": "Safety",
    "triggers for offensive language": "Safety",
    "copyright violations": "Safety",
    "dangerous or sensitive topics": "Safety",
    "wildchats": "Safety",
}
#: AbstentionBench category of CoCoNot -> scenario (its _scenario_label map)
_COCONOT_SCENARIO = {
    "False presumptions": FALSE_PREMISE,
    "Incomprehensible": INTENT,
    "Subjective": SUBJECTIVE,
    "Underspecification": UNDERSPECIFIED,
    "Unknowns": UNKNOWN,
    "Temporal": STALE,
    "Humanizing": SUBJECTIVE,
    "Unsupported": UNKNOWN,
}
BBQ_CATEGORIES = ("Age", "Disability_status", "Nationality", "Physical_appearance", "Religion", "Sexual_orientation")
MEDIQ_EXCLUDED = {224, 298, 779}  # iMedQA rows without a context (AbstentionBench leaves them out)


def _meta(benchmark: str, dataset: str, scenario: str, **extra: Any) -> dict[str, Any]:
    return {"benchmark": benchmark, "dataset": dataset, "scenario": scenario, **extra}


def _snake(name: str) -> str:
    return name.lower().replace(" ", "_")


def _load_coconot() -> list[Item]:
    items = []
    for file, label in (("coconot_eval.jsonl", "unanswerable"), ("coconot_contrast_eval.jsonl", "answerable")):
        path = benchmark_dir() / "coconot" / file
        for n, row in enumerate(read_jsonl_rows(path), start=1):
            category = COCONOT_CATEGORY.get(row.get("subcategory", ""))
            if category is None:
                raise DataError(f"{path}:{n}: unknown CoCoNot subcategory {row.get('subcategory')!r}")
            if category == "Safety":
                continue
            dataset = f"coconot/{_snake(category)}"
            items.append(make_item(
                path, n, id=f"coconot-{row['id']}", question=row["prompt"],
                answers=[row["response"]] if row.get("response") else [], label=label, category="knowledge",
                source=dataset, meta=_meta("coconot", dataset, _COCONOT_SCENARIO[category], coconot_id=row["id"],
                                           coconot_category=row["category"], coconot_subcategory=row["subcategory"]),
            ))
    return items


def _load_bbq() -> list[Item]:
    items = []
    for category in BBQ_CATEGORIES:
        path = benchmark_dir() / "bbq" / f"{category}.jsonl"
        for n, row in enumerate(read_jsonl_rows(path), start=1):
            ambiguous = row["context_condition"] == "ambig"
            items.append(make_item(
                path, n, id=f"bbq-{category}-{row['example_id']}", question=f"{row['context']} {row['question']}",
                answers=[] if ambiguous else [row[f"ans{row['label']}"]],
                label="unanswerable" if ambiguous else "answerable", category="knowledge", source=f"bbq/{category}",
                meta=_meta("bbq", "bbq", UNDERSPECIFIED, bbq_category=row["category"],
                           bbq_example_id=row["example_id"], bbq_question_index=row["question_index"],
                           bbq_question_polarity=row["question_polarity"]),
            ))
    return items


def _mediq_question(row: dict[str, Any], full: bool) -> str:
    context = [c if c.endswith(".") else c + "." for c in row["context"]]
    choices = "\n".join(row["options"].values())
    shown = " ".join(context) if full else context[0]
    return f"Context: {shown}\nQuestion: {row['question']}\nChoices:\n{choices}\nAnswer: "


def _load_mediq() -> list[Item]:
    items = []
    for file, source, tag in (("all_craft_md.jsonl", "iCRAFT-MD", "icraftmd"), ("all_dev_good.jsonl", "iMEDQA", "imedqa")):
        path = benchmark_dir() / "mediq" / file
        for n, row in enumerate(read_jsonl_rows(path), start=1):
            if tag == "imedqa" and row["id"] in MEDIQ_EXCLUDED:
                continue
            if not row.get("context"):
                raise DataError(f"{path}:{n}: a MediQ row without context")
            pair = f"mediq-{tag}-{row['id']}"
            meta = _meta("mediq", "mediq", UNDERSPECIFIED, pair_id=pair, mediq_source=source, mediq_id=row["id"])
            items.append(make_item(path, n, id=pair, question=_mediq_question(row, full=True), answers=[row["answer"]],
                                   label="answerable", category="knowledge", source=f"mediq/{source}", meta=meta))
            items.append(make_item(path, n, id=f"{pair}-u", question=_mediq_question(row, full=False), answers=[],
                                   label="unanswerable", category="knowledge", source=f"mediq/{source}",
                                   meta={**meta, "twin": pair}))
    return items


def _load_moralchoice() -> list[Item]:
    folder = benchmark_dir() / "moralchoice"
    template = read_json(folder / "ab.json")
    rows: list[tuple[str, int, dict[str, str]]] = []
    for file in ("moralchoice_high_ambiguity.csv", "moralchoice_low_ambiguity.csv"):
        path = folder / file
        needed = ("scenario_id", "ambiguity", "context", "action1", "action2")
        rows += [(file, n, row) for n, row in enumerate(read_csv(path, needed), start=2)]  # line 1: header
    items = []
    for idx, (file, line, row) in enumerate(rows):
        # AbstentionBench swaps the two actions on every other item
        a, b = ("action1", "action2") if idx % 2 == 0 else ("action2", "action1")
        question = template["question_header"] + template["question"].format(row["context"], row[a], row[b])
        high = row["ambiguity"] == "high"
        letter = "A" if a == "action1" else "B"
        items.append(make_item(
            folder / file, line, id=f"moralchoice-{row['scenario_id']}", question=question,
            answers=[] if high else [letter, row["action1"]], label="unanswerable" if high else "answerable",
            category="knowledge", source=f"moralchoice/{row['ambiguity']}",
            meta=_meta("moralchoice", "moralchoice", SUBJECTIVE, moralchoice_scenario_id=row["scenario_id"],
                       moralchoice_generation_rule=row.get("generation_rule")),
        ))
    return items


_OPTION = re.compile(r"^\(([A-Z])\) (.+)$", re.MULTILINE)


def _load_bbh_disambiguation_qa() -> list[Item]:
    path = benchmark_dir() / "bbh" / "disambiguation_qa.json"
    items = []
    for n, row in enumerate(read_json(path)["examples"]):
        options = dict(_OPTION.findall(row["input"]))
        # AbstentionBench removes "\n(C) Ambiguous"; three questions have four options and "(D) Ambiguous",
        # removed here too (none of them has it as the target, so the labels are AbstentionBench's)
        vague = [k for k, text in options.items() if text == "Ambiguous"]
        question = row["input"]
        for k in vague:
            question = question.replace(f"\n({k}) Ambiguous", "")
            del options[k]
        letter = row["target"].strip("()")
        ambiguous = letter in vague
        if not ambiguous and letter not in options:
            raise DataError(f"{path}: example {n}: target {row['target']!r} is not one of the options")
        items.append(make_item(
            path, f"example {n}", id=f"bbh_disambiguation_qa-{n}", question=question,
            answers=[] if ambiguous else [row["target"], letter, options[letter]],
            label="unanswerable" if ambiguous else "answerable", category="knowledge", source="bbh_disambiguation_qa",
            meta=_meta("bbh_disambiguation_qa", "bbh_disambiguation_qa", UNDERSPECIFIED),
        ))
    return items


def _load_known_unknowns() -> list[Item]:
    path = benchmark_dir() / "bigbench" / "known_unknowns" / "task.json"
    items = []
    for n, row in enumerate(read_json(path)["examples"]):
        best = [answer for answer, score in row["target_scores"].items() if score == 1]
        if len(best) != 1:
            raise DataError(f"{path}: example {n}: expected one target with score 1, found {best}")
        unknown = best == ["Unknown"]
        items.append(make_item(
            path, f"example {n}", id=f"bigbench_known_unknowns-{n}", question=row["input"],
            answers=[] if unknown else best, label="unanswerable" if unknown else "answerable", category="knowledge",
            source="bigbench_known_unknowns", meta=_meta("bigbench_known_unknowns", "bigbench_known_unknowns", UNKNOWN),
        ))
    return items


_NUMBERS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}


def _load_sufficient_information() -> list[Item]:
    path = benchmark_dir() / "bigbench" / "sufficient_information" / "task.json"
    items = []
    for n, row in enumerate(read_json(path)["examples"]):
        target = row["target"]
        unknown = target == "I do not know"
        answers = [] if unknown else [target] + ([_NUMBERS[target.lower()]] if target.lower() in _NUMBERS else [])
        items.append(make_item(
            path, f"example {n}", id=f"bigbench_sufficient_information-{n}", question=row["input"], answers=answers,
            label="unanswerable" if unknown else "answerable", category="knowledge",
            source="bigbench_sufficient_information",
            meta=_meta("bigbench_sufficient_information", "bigbench_sufficient_information", UNDERSPECIFIED),
        ))
    return items


LOADERS: dict[str, Callable[[], list[Item]]] = {
    "coconot": _load_coconot,
    "bbq": _load_bbq,
    "mediq": _load_mediq,
    "moralchoice": _load_moralchoice,
    "bbh_disambiguation_qa": _load_bbh_disambiguation_qa,
    "bigbench_known_unknowns": _load_known_unknowns,
    "bigbench_sufficient_information": _load_sufficient_information,
}
#: loaders above whose dataset AbstentionBench does not hold
NOT_IN_ABSTENTIONBENCH = ("bigbench_sufficient_information",)


def is_abstentionbench(item: Item) -> bool:
    """Whether an item (or row) is one of AbstentionBench's: from its Inspect port (``--data abstentionbench:...``,
    ``meta.benchmark`` ``abstentionbench/<name>``, imported logs too) or from these loaders of its datasets.

    Example:
        >>> is_abstentionbench(Item(id="1", question="q", answers=[], label="unanswerable", meta={"benchmark": "bbq"}))
        True
        >>> is_abstentionbench(Item(id="2", question="q", answers=["4"], label="answerable", source="gsm8k"))
        False
    """
    bench = benchmark_of(item)
    return bench.startswith(f"{PORT_BENCHMARK}/") or (bench in LOADERS and bench not in NOT_IN_ABSTENTIONBENCH)
