"""What the harness integrations share: a harness task *is* an ``abstain eval`` run, prompts and scorer included.

A :class:`HarnessTask` (suite or data file, one protocol, the judge, seed, limit, shots, token budget) names
the ``abstain eval`` run it stands for (:meth:`HarnessTask.eval_config`). Its samples are that run's prompts
in that run's order (:func:`abstain.evaluation.run.eval_prompts`); a completion is scored as the run scores it
(``ResponseRow`` → :func:`abstain.scoring.score_rows` with the run's judge); the metrics are the run's
``metrics.json`` block for the protocol (:func:`abstain.report.summary.run_metrics`) over the scored rows put
back in item order, whatever order the harness finished them in. So Inspect, lm-evaluation-harness and
``abstain eval`` give the same numbers for the same responses, bootstrap CIs included.

Example:
    >>> task = HarnessTask(suite="quick", protocol="idk", limit=2)
    >>> [s.item.label for s in task.samples()], task.samples()[0].messages[-1]["role"]
    (['unanswerable', 'answerable'], 'user')
    >>> rows = task.score([s.item for s in task.samples()], ["\\\\boxed{I don't know.}"] * 2)
    >>> [outcome(r).value for r in rows]
    ['abstain', 'abstain']
    >>> metrics = task.metrics(rows[::-1])             # any order: put back in item order first
    >>> metrics["r1.u_ref"], "r1.u_ref_ci_lo" in metrics
    (1.0, True)
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from abstain.data.suites import SUITES
from abstain.records.runs import row_key
from abstain.evaluation.run import EvalConfig, Prompts, eval_prompts
from abstain.judges import Judge, JudgeConfig
from abstain.outcomes import outcome
from abstain.protocols import PROTOCOLS
from abstain.report.summary import run_metrics
from abstain.schema import DataError, Item, Message, ResponseRow, ScoredRow
from abstain.scoring import score_rows

__all__ = ["HarnessSample", "HarnessTask", "flat_metrics", "outcome", "top_level"]

JUDGES = ("rule", "llm", "hybrid", "abstentionbench")


@dataclass(frozen=True)
class HarnessSample:
    """One sample of a harness task: its place in the run, the item, and the chat messages it is asked with."""

    index: int
    protocol: str
    item: Item
    messages: list[Message]


@dataclass(frozen=True)
class HarnessTask:
    """An ``abstain eval`` run as a harness task (one protocol). Bad names fail with the valid ones."""

    suite: str | None = field(default=None, metadata={"help": "a shipped suite (or give data)"})
    protocol: str = field(default="idk", metadata={"help": "the prompt protocol"})
    data: str | None = field(default=None, metadata={"help": "a JSONL file of items instead of a suite"})
    judge: str = field(default="rule", metadata={"help": "rule | llm | hybrid"})
    judge_model: str | None = field(default=None, metadata={"help": "the LLM judge's model (env ABSTAIN_JUDGE_MODEL)"})
    judge_base_url: str | None = field(default=None, metadata={
        "help": "the LLM judge's server (env ABSTAIN_JUDGE_BASE_URL); never recorded"})
    seed: int = field(default=0, metadata={"help": "subset and demonstration seed (abstain eval --seed)"})
    limit: int | None = field(default=None, metadata={"help": "abstain eval --limit: its balanced subset"})
    shots: int = field(default=0, metadata={"help": "in-context demonstrations per prompt"})
    shots_unanswerable: int = field(default=0, metadata={"help": "how many of them unanswerable"})
    max_tokens: int = field(default=512, metadata={"help": "generation budget (abstain eval --max-tokens)"})
    resamples: int = field(default=1000, metadata={"help": "bootstrap resamples of the CIs"})

    def __post_init__(self) -> None:
        if (self.data is None) == (self.suite is None):
            raise DataError("give exactly one of suite (a shipped suite) or data (a JSONL file of items)")
        if self.data is None and self.suite not in SUITES:
            raise DataError(f"unknown suite {self.suite!r}; choose one of {', '.join(SUITES)}")
        if self.protocol not in PROTOCOLS:
            raise DataError(f"unknown protocol {self.protocol!r}; choose one of {', '.join(PROTOCOLS)}")
        if self.judge not in JUDGES:
            raise DataError(f"unknown judge {self.judge!r}; choose one of {', '.join(JUDGES)}")

    def args(self) -> dict[str, Any]:
        """The fields, as a harness records them (the judge server's URL left out: never recorded)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "judge_base_url"}

    def eval_config(self, model: str = "harness") -> EvalConfig:
        """The ``abstain eval`` configuration this task stands for (``model``: a label for the record)."""
        judge = JudgeConfig(name=self.judge, model=self.judge_model or os.environ.get("ABSTAIN_JUDGE_MODEL"))
        try:
            return EvalConfig(model=model, suite=self.suite, data=self.data,
                              protocols=(self.protocol,), max_tokens=self.max_tokens, seed=self.seed, judge=judge,
                              limit=self.limit, shots=self.shots, shots_unanswerable=self.shots_unanswerable,
                              resamples=self.resamples)
        except ValueError as exc:
            raise DataError(str(exc)) from None

    @cached_property
    def prompts(self) -> Prompts:
        return eval_prompts(self.eval_config())

    def samples(self) -> list[HarnessSample]:
        """``abstain eval``'s prompts, in its order (ids are unique within one protocol)."""
        return [HarnessSample(i, protocol, item, messages)
                for i, ((protocol, item), messages) in enumerate(zip(self.prompts.work, self.prompts.messages))]

    def build_judge(self) -> Judge:
        """The run's judge (an LLM judge's server and key from the task or the environment; never recorded)."""
        return self.eval_config().judge.build(
            base_url=self.judge_base_url or os.environ.get("ABSTAIN_JUDGE_BASE_URL"),
            api_key=os.environ.get("ABSTAIN_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY"))

    def score(self, items: Sequence[Item | Mapping[str, Any]], texts: Sequence[str], judge: Judge | None = None,
              model: str = "harness", sample: int = 0) -> list[ScoredRow]:
        """Score completions as ``abstain eval`` does (a judge error is kept on the row, never dropped);
        ``sample``: which sample of each item these are (a harness's epoch)."""
        rows = [ResponseRow(**(item.model_dump() if isinstance(item, Item) else dict(item)), response=text,
                            model=model, protocol=self.protocol, sample=sample)
                for item, text in zip(items, texts, strict=True)]
        return list(score_rows(rows, judge or self.build_judge(), batch_size=max(1, len(rows))))

    def in_order(self, rows: Sequence[ScoredRow]) -> list[ScoredRow]:
        """``rows`` in the run's order, item by item and sample by sample (a harness may finish them in any
        order); a row of an item not in this task is an error, and so is one item's sample given twice."""
        place = {(item.id, protocol): n for n, (protocol, item) in enumerate(self.prompts.work)}
        unknown = [r.id for r in rows if (r.id, r.protocol) not in place]
        if unknown:
            raise DataError(f"rows of items not in this task ({self.protocol} on {self.data or self.suite}): "
                            f"{unknown[:5]}")
        keys = [row_key(r) for r in rows]
        if len(set(keys)) != len(keys):
            raise DataError(f"a sample is given twice: {sorted(k for k in keys if keys.count(k) > 1)[:3]}")
        return sorted(rows, key=lambda r: (place[(r.id, r.protocol)], r.sample))

    def metrics_json(self, rows: Sequence[ScoredRow]) -> dict[str, Any]:
        """``metrics.json`` of the ``abstain eval`` run these rows make (rows in item order first)."""
        return run_metrics(self.in_order(rows), self.prompts.record)

    def metrics(self, rows: Sequence[ScoredRow]) -> dict[str, float]:
        """The protocol's metrics as plain numbers (:func:`flat_metrics`), as ``abstain eval`` computes them:
        the pooled families, without the per-category and per-perturbation blocks (``metrics_json`` has all)."""
        if not rows:
            return {}
        block = self.metrics_json(rows)["protocols"][self.protocol]
        return flat_metrics({k: v for k, v in block.items() if top_level(k)})


def top_level(name: str) -> bool:
    """Whether a metric is one of the pooled families (not a per-category, -dataset or -perturbation one).

    Example:
        >>> top_level("r1.u_ref"), top_level("by_category.math.r1.u_ref"), top_level("aca.by_perturbation.x.idk_score")
        (True, False, False)
    """
    return not name.startswith(("by_category.", "by_source.")) and ".by_perturbation." not in name


def flat_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """A metrics block as floats: ``x_ci: [lo, hi]`` becomes ``x_ci_lo`` / ``x_ci_hi``; undefined values (None,
    NaN) and non-numbers are left out (a harness takes numbers only).

    Example:
        >>> flat_metrics({"r1.u_ref": 0.5, "r1.u_ref_ci": [0.25, 0.75], "ua.du_precision": None, "n": 4})
        {'r1.u_ref': 0.5, 'r1.u_ref_ci_lo': 0.25, 'r1.u_ref_ci_hi': 0.75, 'n': 4.0}
    """
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, (list, tuple)) and len(value) == 2:
            for suffix, v in zip(("_lo", "_hi"), value):
                if _number(v):
                    out[key + suffix] = float(v)
        elif _number(value):
            out[key] = float(value)
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
