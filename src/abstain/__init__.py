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
from importlib import metadata as _metadata
from typing import Any

try:
    __version__ = _metadata.version("abstain")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
    __version__ = "0+unknown"

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
    "Scored": "abstain.scoring",
    "score": "abstain.scoring",
    "score_completions": "abstain.scoring",
    "EvalConfig": "abstain.evaluation.run",
    "Run": "abstain.evaluation.run",
    "evaluate": "abstain.evaluation.run",
    "MetricsConfig": "abstain.metrics",
    "compute_metrics": "abstain.metrics",
    "load_benchmark": "abstain.data",
    "load_suite": "abstain.data",
    "EXAMPLE_RESPONSES": "abstain.data",
    "GenerationConfig": "abstain.backends",
    "make_backend": "abstain.backends",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'abstain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
