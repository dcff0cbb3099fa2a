"""abstain: measure and train when a language model should not simply answer.

The names a user needs, importable from the top level (each loads its module on first use, so
``import abstain`` stays light — no torch, no model):

>>> import abstain
>>> rows = abstain.read_jsonl(abstain.EXAMPLE_RESPONSES, abstain.ResponseRow)
>>> scored = abstain.score(rows)                     # parse -> rule judge, offline
>>> [abstain.outcome(r).value for r in scored[:3]]
['correct', 'wrong', 'abstain']
>>> metrics = abstain.compute_metrics(scored, abstain.MetricsConfig(resamples=200, seed=0))
>>> round(metrics["r1.u_ref"], 3), metrics["n.unanswerable"]
(0.833, 6)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from importlib import metadata as _metadata
from os import PathLike
from typing import TYPE_CHECKING, Any

try:
    __version__ = _metadata.version("abstain")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
    __version__ = "0+unknown"

if TYPE_CHECKING:  # pragma: no cover
    from abstain.judges.base import Judge
    from abstain.schema import ResponseRow, ScoredRow

#: public name -> the module that defines it (loaded on first access)
_EXPORTS = {
    "Behavior": "abstain.schema",
    "DataError": "abstain.schema",
    "Item": "abstain.schema",
    "Pred": "abstain.schema",
    "ResponseRow": "abstain.schema",
    "ScoredRow": "abstain.schema",
    "read_jsonl": "abstain.schema",
    "write_jsonl": "abstain.schema",
    "parse_response": "abstain.parsing",
    "Outcome": "abstain.outcomes",
    "is_abstention": "abstain.outcomes",
    "is_correct": "abstain.outcomes",
    "is_refusal": "abstain.outcomes",
    "outcome": "abstain.outcomes",
    "RuleJudge": "abstain.judges",
    "make_judge": "abstain.judges",
    "score_completions": "abstain.scoring",
    "score_file": "abstain.scoring",
    "score_rows": "abstain.scoring",
    "MetricsConfig": "abstain.metrics",
    "compute_metrics": "abstain.metrics",
    "load_benchmark": "abstain.data",
    "load_suite": "abstain.data",
    "EXAMPLE_RESPONSES": "abstain.data",
    "GenerationConfig": "abstain.backends",
    "make_backend": "abstain.backends",
}

__all__ = ["__version__", "score", *sorted(_EXPORTS)]


def score(
    rows: Iterable[ResponseRow] | str | PathLike[str], judge: str | Judge = "rule", **judge_options: Any
) -> list[ScoredRow]:
    """Parse and judge response rows (or a JSONL file of them) with a judge given by name or object.

    ``judge_options`` go to :func:`abstain.judges.make_judge` (e.g. ``behaviors="all"``, or ``model=``
    and ``base_url=`` for the ``llm`` / ``hybrid`` judges).
    """
    from abstain.judges import make_judge
    from abstain.schema import ResponseRow, read_jsonl, response_key
    from abstain.scoring import score_rows

    if isinstance(rows, (str, PathLike)):
        rows = read_jsonl(rows, ResponseRow, key=response_key)
    judge_obj = make_judge(judge, **judge_options) if isinstance(judge, str) else judge
    try:
        return list(score_rows(list(rows), judge_obj))
    finally:
        if isinstance(judge, str) and callable(close := getattr(judge_obj, "close", None)):
            close()


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'abstain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
