"""abstain's scorer and metrics in Inspect: the parse → judge → outcome path, and the metric families with CIs.

:func:`abstain_scorer` scores a sample as ``abstain eval`` scores a response (the task's judge; a judge error
stays on the row as the ``unscored`` outcome, never a dropped sample): the score's value is the outcome
(``correct`` / ``wrong`` / ``abstain`` / ``unscored``), its metadata the scored row and the sample's place in
the run. :func:`abstain_metrics` computes the run's metrics from those rows put back in item order (Inspect
hands metrics the scores in dataset order, but the order is restored from the rows themselves), as one number
per metric with ``_ci_lo`` / ``_ci_hi`` for each bootstrap CI. It is declared ``scores="unreduced"`` and so is
Inspect's ``frequency()`` beside it, so Inspect's epoch reducer never turns an outcome into 0/1.

Example (what a task built by :mod:`abstain.integrations.inspect.tasks` uses)::

    abstain_scorer(suite="quick", protocol="idk")   # metrics: frequency of each outcome, abstain_metrics(...)
"""

from __future__ import annotations

from typing import Any

import anyio
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, frequency, metric, scorer
from inspect_ai.solver import TaskState

from abstain.integrations.harness import HarnessTask
from abstain.outcomes import Outcome, outcome
from abstain.schema import Item, ScoredRow

__all__ = ["OUTCOMES", "abstain_metrics", "abstain_scorer", "scored_row"]

OUTCOMES = [o.value for o in Outcome]


def scored_row(score: Score) -> ScoredRow:
    """The scored row an :func:`abstain_scorer` score carries."""
    return ScoredRow.model_validate(score.metadata["row"])  # type: ignore[index]


@metric(scores="unreduced")
def abstain_metrics(**task: Any) -> Metric:
    """Every metric family of the task's protocol, with bootstrap CIs, over the rows in item order."""
    harness = HarnessTask(**task)

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        rows = [scored_row(s.score) for s in scores if s.score.metadata and "row" in s.score.metadata]
        return harness.metrics(rows)

    return compute


@scorer(metrics=[frequency(categories=OUTCOMES)], name="abstain_scorer")
def abstain_scorer(**task: Any) -> Scorer:
    """Score with abstain's judge for the task (``HarnessTask`` fields: suite, protocol, judge, ...)."""
    harness = HarnessTask(**task)
    judges: list[Any] = []

    async def score(state: TaskState, target: Target) -> Score:
        if not judges:
            judges.append(harness.build_judge())
        item = Item.model_validate(state.metadata["item"])
        text = state.output.completion if state.output else ""
        row = await anyio.to_thread.run_sync(
            lambda: harness.score([item], [text], judge=judges[0], model=str(state.model),
                                  sample=state.epoch - 1)[0])
        value = outcome(row).value
        return Score(value=value, answer=row.answer, explanation=row.judge_error or f"decision: {row.pred.value}",
                     metadata={"row": row.model_dump(mode="json"), "index": state.metadata.get("index")})

    return score
