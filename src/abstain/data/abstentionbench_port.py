"""The whole AbstentionBench as abstain items, through its maintained Inspect port: ``--data abstentionbench:...``.

The items come from ``inspect_evals.abstention_bench`` (PyPI ``inspect-evals``, ``pip install
'abstain[abstentionbench]'``): its own loaders (Meta's ``recipe/abstention_datasets``, built from its Hydra
configs), its index files (``data/subsampling-indices.json``; ``data/fast-subset-indices.json`` for the fast
subset), its duplicate filter and its seeded shuffle. abstain draws nothing of its own: the items are
exactly the samples ``inspect eval inspect_evals/abstention_bench`` runs (one dataset: in the same order;
several: one dataset after the other, each in the port's order).

======================================  ===================================================================
``--data``                              items
======================================  ===================================================================
``abstentionbench:freshqa``             one dataset (a name of :data:`DATASETS`), its subsample
``abstentionbench:freshqa,bbq``         several datasets
``abstentionbench:all``                 every dataset (a dataset that cannot load: one error naming each)
``abstentionbench:fast``                every dataset's fast subset (``abstentionbench:freshqa:fast``: one)
======================================  ===================================================================

An item is the port's sample: ``id`` its id (``FreshQADataset_9baa8433``: the same id in an Inspect log),
``question`` its input, ``label`` unanswerable where ``should_abstain``; ``answers`` the reference answers of
an answerable item, sorted (an unanswerable item's, such as FreshQA's corrected premise, stay in
``meta.ref_answer``; FreshQA's loader builds them from a set, so the port's own order changes from process to
process).
``meta.dataset`` is the port's ``dataset_name`` (``FreshQADataset``): the key its metrics group by, so that
``by_source.<dataset>.ab.*`` and ``ab.macro.*`` group as its log does; ``meta.benchmark`` is
``abstentionbench/<name>`` (``--limit`` balances labels, then these); ``meta.ab_dataset`` is the name given to
``--data``, ``meta.dataset_extended`` AbstentionBench's analysis name (KUQ and CoCoNot split by category:
``KUQDataset_future_unknown``) and ``meta.scenario`` the scenario its analysis gives that name
(``analysis/load_results.py``, :data:`SCENARIO`; None where it gives none). The rest of the sample's
metadata is kept under ``meta.ab_metadata``.

Data: FreshQA, the KUQ category map and both index files ship inside the port; every other dataset
downloads on first use into the port's cache (``INSPECT_EVALS_CACHE_PATH/abstention_bench/data`` and the
Hugging Face cache), GPQA from a gated repository. A dataset that cannot load is one error naming it and how
to obtain it (:data:`SOURCES`).

Example:
    >>> parse_spec("freshqa,bbq:fast")
    (('freshqa', 'bbq'), True)
    >>> parse_spec("all")[0] == DATASETS
    True
    >>> SCENARIO["FreshQADataset"], SCENARIO["KUQDataset_false_assumption"]
    ('stale', 'false_premise')
"""

from __future__ import annotations

import math
from typing import Any

from abstain.schema import DataError, Item

__all__ = ["BENCHMARK", "DATASETS", "INSTALL_HINT", "PREFIX", "SCENARIO", "SOURCES", "dataset_names", "item_of",
           "load_abstentionbench", "parse_spec"]

PREFIX = "abstentionbench:"
BENCHMARK = "abstentionbench"  # meta.benchmark is abstentionbench/<name>: --limit balances across the datasets
INSTALL_HINT = "pip install 'abstain[abstentionbench]' (inspect-evals and its loaders' Hydra)"
SEED = 42  # the port's (and AbstentionBench's) shuffle seed

#: the port's dataset names (``abstention_bench``'s ``dataset_name``), in its order
DATASETS = (
    "alcuna", "bbq", "big_bench_disambiguate", "big_bench_known_unknowns", "coconot", "falseqa", "freshqa", "gpqa",
    "gsm8k", "kuq", "mediq", "mmlu_history", "mmlu_math", "moralchoice", "musique", "qaqa", "qasper", "self_aware",
    "situated_qa", "squad2", "umwp", "worldsense",
)

#: where each dataset's data comes from (what to do when it cannot load)
SOURCES = {
    "alcuna": "downloads ALCUNA (GitHub) into the port's cache",
    "bbq": "downloads BBQ from raw.githubusercontent.com (nyu-mll/BBQ)",
    "big_bench_disambiguate": "downloads BBH disambiguation_qa from raw.githubusercontent.com",
    "big_bench_known_unknowns": "downloads tasksource/bigbench (known_unknowns) from the Hugging Face hub",
    "coconot": "downloads allenai/coconot from the Hugging Face hub",
    "falseqa": "downloads FalseQA from raw.githubusercontent.com (thunlp/FalseQA)",
    "freshqa": "ships inside the port",
    "gpqa": ("downloads Idavidrein/gpqa from the Hugging Face hub, a gated repository: accept its terms on "
             "huggingface.co/datasets/Idavidrein/gpqa, then `hf auth login` (or set HF_TOKEN)"),
    "gsm8k": "downloads openai/gsm8k from the Hugging Face hub",
    "kuq": "downloads amayuelas/KUQ from the Hugging Face hub (its category map ships inside the port)",
    "mediq": "downloads MediQ from raw.githubusercontent.com (stellalisy/mediQ)",
    "mmlu_history": "downloads cais/mmlu from the Hugging Face hub",
    "mmlu_math": "downloads cais/mmlu from the Hugging Face hub",
    "moralchoice": "downloads ninoscherrer/moralchoice from the Hugging Face hub",
    "musique": "downloads the unanswerability data (lovodkin93/unanswerability, Google Drive) into the port's cache",
    "qaqa": "downloads QAQA (najoungkim/QAQA) into the port's cache",
    "qasper": "downloads allenai/qasper from the Hugging Face hub",
    "self_aware": "downloads SelfAware from raw.githubusercontent.com (yinzhangyue/SelfAware)",
    "situated_qa": "downloads SituatedQA from the Hugging Face hub",
    "squad2": "downloads rajpurkar/squad_v2 from the Hugging Face hub",
    "umwp": "downloads UMWP from raw.githubusercontent.com (Yuki-Asuuna/UMWP)",
    "worldsense": "downloads WorldSense from github.com (facebookresearch/worldsense)",
}

#: AbstentionBench's scenario of each analysis name (facebookresearch/AbstentionBench @ e2918417,
#: analysis/load_results.py ``_scenario_label``, snake_case); CoCoNot's underspecification slice is missing there
#: (a key with a typo) and is left without a scenario, as there.
SCENARIO = {
    "ALCUNADataset": "underspecified_context", "BBQDataset": "underspecified_context",
    "BigBenchDisambiguateDataset": "underspecified_context", "BigBenchKnownUnknownsDataset": "answer_unknown",
    "CoCoNotDataset_false_presumptions": "false_premise", "CoCoNotDataset_incomprehensible": "underspecified_intent",
    "CoCoNotDataset_subjective": "subjective", "CoCoNotDataset_unknowns": "answer_unknown",
    "CoCoNotDataset_temporal": "stale", "CoCoNotDataset_humanizing": "subjective", "CoCoNotDataset_safety": "safety",
    "CoCoNotDataset_unsupported": "answer_unknown", "FalseQADataset": "false_premise", "FreshQADataset": "stale",
    "KUQDataset_ambiguous": "underspecified_intent", "KUQDataset_controversial": "subjective",
    "KUQDataset_false_assumption": "false_premise", "KUQDataset_future_unknown": "answer_unknown",
    "KUQDataset_unsolved_problem": "answer_unknown", "MediQDataset": "underspecified_context",
    "MoralChoiceDataset": "subjective", "MusiqueDataset": "underspecified_context",
    "NQDataset": "underspecified_context", "QAQADataset": "false_premise", "QASPERDataset": "underspecified_context",
    "SelfAwareDataset": "answer_unknown", "SituatedQAGeoDataset": "underspecified_intent",
    "Squad2Dataset": "underspecified_context", "WorldSenseDataset": "underspecified_context",
    "GPQA": "underspecified_context", "UMWP": "underspecified_context", "MMLUMath": "underspecified_context",
    "MMLUHistory": "underspecified_context", "GSM8K": "underspecified_context",
}
_REASONING = {"GSM8K", "MMLUMath", "UMWP"}  # abstain's breakdown group of the math datasets


def parse_spec(spec: str) -> tuple[tuple[str, ...], bool]:
    """``<datasets>[:fast]`` (what follows ``abstentionbench:``) -> (dataset names, fast subset)."""
    parts = [p.strip() for p in spec.split(":")]
    fast = parts[-1] == "fast"
    if fast:
        parts = parts[:-1]
    if len(parts) > 1:
        raise DataError(f"{PREFIX}{spec}: expected {PREFIX}<dataset>[,<dataset>...][:fast], {PREFIX}all or "
                        f"{PREFIX}fast")
    what = parts[0] if parts else "all"
    if what in ("", "all"):
        return DATASETS, fast
    names = tuple(n.strip() for n in what.split(","))
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise DataError(f"{PREFIX}{spec}: unknown AbstentionBench dataset {', '.join(map(repr, unknown))}; choose "
                        f"from {', '.join(DATASETS)}, all, fast")
    return names, fast


def _json_safe(value: Any) -> Any:
    """The port's metadata as JSON: sets sorted into lists, NaN as None, anything else unknown as text."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_json_safe(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _references(value: Any) -> list[str]:
    """The reference answers, sorted: some loaders build them from a set (FreshQA), whose order changes with each
    process's string hashing, and an item must be the same item in every process (a resumed run checks that)."""
    if value in (None, "[]", ""):
        return []
    values = value if isinstance(value, (list, tuple, set)) else [value]
    return sorted({str(v) for v in values if v is not None and str(v).strip()})


def extended_name(dataset: str, metadata: dict[str, Any]) -> str:
    """AbstentionBench's analysis name: KUQ and CoCoNot split by their categories (``Results.extend_dataset_name``).

    Example:
        >>> extended_name("KUQDataset", {"KUQ_category": "Future unknown"}), extended_name("GSM8K", {})
        ('KUQDataset_future_unknown', 'GSM8K')
    """
    extension = None
    if dataset == "KUQDataset":
        extension = metadata.get("KUQ_category") or "missing_category"
    elif dataset == "CoCoNotDataset":
        extension = metadata.get("CoCoNot_AbstentionBench_category")
    return f"{dataset}_{str(extension).lower().replace(' ', '_')}" if extension else dataset


def item_of(sample: Any, name: str) -> Item:
    """The abstain item of one port sample (an ``inspect_ai`` ``Sample``, or an Inspect log's ``EvalSample``).

    Example:
        >>> from inspect_ai.dataset import Sample
        >>> s = Sample(input="Who won?", target="False", id="FreshQADataset_1",
        ...            metadata={"dataset_name": "FreshQADataset", "abstention_label": False, "ref_answer": ["A"]})
        >>> i = item_of(s, "freshqa")
        >>> i.id, i.label, i.answers, i.meta["dataset"], i.meta["scenario"]
        ('FreshQADataset_1', 'answerable', ['A'], 'FreshQADataset', 'stale')
    """
    metadata = dict(sample.metadata or {})
    dataset = str(metadata.pop("dataset_name"))
    should_abstain = bool(metadata.pop("abstention_label"))
    refs = _references(metadata.pop("ref_answer", None))
    question = sample.input if isinstance(sample.input, str) else str(sample.input)
    extended = extended_name(dataset, metadata)
    meta = {"benchmark": f"{BENCHMARK}/{name}", "dataset": dataset, "ab_dataset": name, "dataset_extended": extended,
            "scenario": SCENARIO.get(extended), "ref_answer": refs, "ab_metadata": _json_safe(metadata)}
    return Item(id=str(sample.id), question=question, answers=[] if should_abstain else refs,
                label="unanswerable" if should_abstain else "answerable",
                category="reasoning" if dataset in _REASONING else "knowledge", source=f"abstentionbench/{name}",
                meta=meta)


def _port() -> Any:
    try:
        from inspect_evals.abstention_bench import utils
    except ImportError as exc:
        raise DataError(f"{PREFIX}: AbstentionBench's Inspect port is not installed ({exc}); {INSTALL_HINT}") from None
    return utils


def _load_one(utils: Any, name: str, fast: bool) -> list[Any]:
    import contextlib
    import io

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the port prints "Loading <dataset>..."
            return list(utils.load_abstention_bench_dataset(name, fast, SEED))
    except Exception as exc:  # noqa: BLE001 - each dataset's own failure, named with its remedy
        why = " ".join(str(exc).split())[:300]
        raise DataError(f"{PREFIX}{name}: could not load ({type(exc).__name__}: {why}); it "
                        f"{SOURCES[name]} (the cache: INSPECT_EVALS_CACHE_PATH/abstention_bench/data)") from None


def dataset_names() -> dict[str, str]:
    """The port's ``dataset_name`` (its metrics' group, ``FreshQADataset``) -> the ``--data`` name (``freshqa``),
    read from its Hydra configs (``configs/dataset/<name>.yaml``)."""
    from pathlib import Path

    import yaml

    folder = Path(_port().__file__).parent / "configs" / "dataset"
    out = {}
    for name in DATASETS:
        config = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8"))
        out[str(config["dataset_name"])] = name
    return out


def load_abstentionbench(spec: str) -> list[Item]:
    """The items of ``abstentionbench:<spec>``: the port's samples (same ids and labels), dataset by dataset.

    Every named dataset is tried; those that cannot load are one :class:`DataError` naming each and its source.
    """
    names, fast = parse_spec(spec)
    utils = _port()
    items: list[Item] = []
    errors: list[str] = []
    for name in names:
        try:
            items.extend(item_of(s, name) for s in _load_one(utils, name, fast))
        except DataError as exc:
            errors.append(str(exc))
    if errors:
        raise DataError("\n".join(errors))
    return items
