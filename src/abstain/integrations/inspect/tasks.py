"""Inspect tasks that are ``abstain eval`` runs: ``inspect eval abstain/abstain_eval -T suite=quick -T protocol=idk``.

The samples are exactly ``abstain eval --suite S --protocol P``'s items in its order (``-T limit=N``:
``abstain eval --limit N``'s balanced subset; Inspect's own ``--limit N`` takes the first N of the list), each
asked with the protocol's own messages — its system message, the demonstrations (``-T shots=``), the question
— and scored by :func:`~abstain.integrations.inspect.scorer.abstain_scorer`. Generation defaults to
``abstain eval``'s: greedy (temperature 0) with ``max_tokens`` 512 (``-T max_tokens=``); Inspect's own
``--temperature`` / ``--max-tokens`` override them, as in any Inspect task.

Task arguments (``-T name=value``): ``suite`` (or ``data``: a JSONL file of items), ``protocol``, ``judge``
(rule | llm | hybrid; an LLM judge's server and key come from ``ABSTAIN_JUDGE_BASE_URL`` /
``ABSTAIN_JUDGE_API_KEY``, never from task arguments, which Inspect records), ``judge_model``, ``seed``,
``limit``, ``shots``, ``shots_unanswerable``, ``max_tokens``, ``resamples``. A bad suite, protocol or judge
fails with the valid values.

Named tasks for discoverability: :func:`ua_bench` (the attribution protocol), :func:`abstain_test_sum`
(Abstain-R1's SUM test under the clarify protocol: refusal plus a clarifying question) and
:func:`abstentionbench_lite` (AbstentionBench's datasets, capped, under idk).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import frequency
from inspect_ai.solver import generate

from abstain.integrations.harness import HarnessTask
from abstain.integrations.inspect.scorer import OUTCOMES, abstain_metrics, abstain_scorer
from abstain.schema import Message

__all__ = ["abstain_eval", "abstain_test_sum", "abstentionbench_lite", "build_task", "ua_bench"]

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def _chat(messages: list[Message]) -> list[ChatMessage]:
    return [_ROLES[m["role"]](content=m["content"]) for m in messages]


def build_task(harness: HarnessTask, name: str) -> Task:
    """The Inspect task of ``harness`` (what every ``@task`` here returns)."""
    args = harness.args()
    samples = [Sample(id=s.item.id, input=_chat(s.messages), target=list(s.item.answers) or "",
                      metadata={"item": s.item.model_dump(mode="json"), "index": s.index, "label": s.item.label,
                                "protocol": s.protocol})
               for s in harness.samples()]
    where = harness.data or harness.suite
    return Task(
        dataset=MemoryDataset(samples, name=f"{where}:{harness.protocol}"),
        solver=generate(),
        scorer=abstain_scorer(**args),
        metrics=[frequency(categories=OUTCOMES), abstain_metrics(**args)],
        config=GenerateConfig(temperature=0.0, max_tokens=harness.max_tokens),
        name=name,
        version=1,
        metadata={"abstain": {"eval": harness.eval_config().command(), **args}},
    )


def _harness(**args: Any) -> HarnessTask:
    if args.get("data"):
        args["suite"] = None
    return HarnessTask(**args)


@task(name="abstain_eval")
def abstain_eval(suite: str = "quick", protocol: str = "idk", judge: str = "rule", judge_model: str | None = None,
                 seed: int = 0, limit: int | None = None, shots: int = 0, shots_unanswerable: int = 0,
                 max_tokens: int = 512, resamples: int = 1000, data: str | None = None) -> Task:
    """Any shipped suite (or a data file) under any protocol, as ``abstain eval`` runs it."""
    return build_task(_harness(suite=suite, protocol=protocol, judge=judge, judge_model=judge_model,
                               seed=seed, limit=limit, shots=shots, shots_unanswerable=shots_unanswerable,
                               max_tokens=max_tokens, resamples=resamples, data=data), "abstain_eval")


@task(name="ua_bench")
def ua_bench(suite: str = "quick", judge: str = "rule", judge_model: str | None = None, seed: int = 0,
             limit: int | None = None, max_tokens: int = 512, resamples: int = 1000, data: str | None = None) -> Task:
    """UA-Bench's three-way attribution (answer / DATA_UNCERTAIN / MODEL_UNCERTAIN): ACC, DU-F1, MU-F1."""
    return build_task(_harness(suite=suite, protocol="attribution", judge=judge,
                               judge_model=judge_model, seed=seed, limit=limit, max_tokens=max_tokens,
                               resamples=resamples, data=data), "ua_bench")


@task(name="abstain_test_sum")
def abstain_test_sum(judge: str = "rule", judge_model: str | None = None, seed: int = 0, limit: int | None = None,
                     max_tokens: int = 512, resamples: int = 1000) -> Task:
    """Abstain-R1's SUM test (284 answerable + 284 unanswerable twins): refusal plus a clarifying question."""
    return build_task(_harness(suite="abstain-test-sum", protocol="clarify", judge=judge, judge_model=judge_model,
                               seed=seed, limit=limit, max_tokens=max_tokens, resamples=resamples), "abstain_test_sum")


@task(name="abstentionbench_lite")
def abstentionbench_lite(protocol: str = "idk", judge: str = "rule", judge_model: str | None = None, seed: int = 0,
                         limit: int | None = None, max_tokens: int = 512, resamples: int = 1000) -> Task:
    """AbstentionBench's datasets (at most 100 items per label per dataset; 2,277 items) with its ab.* metrics."""
    return build_task(_harness(suite="abstentionbench-lite", protocol=protocol, judge=judge, judge_model=judge_model,
                               seed=seed, limit=limit, max_tokens=max_tokens, resamples=resamples),
                      "abstentionbench_lite")
