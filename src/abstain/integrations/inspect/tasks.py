"""Inspect tasks that are ``abstain eval`` runs: ``inspect eval abstain/abstain_eval -T suite=quick -T protocol=idk``.

The samples are exactly ``abstain eval --suite S --protocol P``'s items in its order (``-T limit=N``:
``abstain eval --limit N``'s balanced subset; Inspect's own ``--limit N`` takes the first N of the list), each
asked with the protocol's own messages — its system message, the demonstrations (``-T shots=``), the question
— and scored by :func:`~abstain.integrations.inspect.scorer.abstain_scorer`. Generation defaults to
``abstain eval``'s: greedy (temperature 0) with ``max_tokens`` 512 (``-T max_tokens=``); Inspect's own
``--temperature`` / ``--max-tokens`` override them, as in any Inspect task, and ``abstain import inspect``
records what ran. Before the first generation :func:`check_generation` refuses a ``--system-message`` (it would
go before the protocol's system message).

Task arguments (``-T name=value``): ``suite`` (or ``data``: a JSONL file of items), ``protocol``, ``judge``
(rule | llm | hybrid; an LLM judge's server and key come from ``ABSTAIN_JUDGE_BASE_URL`` /
``ABSTAIN_JUDGE_API_KEY``, never from task arguments, which Inspect records), ``judge_model``, ``seed``,
``limit``, ``shots``, ``shots_unanswerable``, ``max_tokens``, ``resamples``. A bad suite, protocol or judge
fails with the valid values.

Named tasks for discoverability: :func:`ua_bench` (UA-Bench's own data, from a checkout: ``-T
data=/path/to/UA-Bench``, under the attribution protocol), :func:`abstain_test_sum` (Abstain-R1's SUM test under
the clarify protocol: refusal plus a clarifying question) and :func:`abstentionbench_lite` (AbstentionBench's
datasets, capped, under idk).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import frequency
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from abstain.data.uabench import PREFIX as UABENCH
from abstain.integrations.generation import InspectRun
from abstain.integrations.harness import HarnessTask
from abstain.integrations.inspect.scorer import OUTCOMES, abstain_metrics, abstain_scorer
from abstain.schema import DataError, Message

__all__ = ["abstain_eval", "abstain_test_sum", "abstentionbench_lite", "build_task", "check_generation", "ua_bench"]

UABENCH_MISSING = ("ua_bench runs UA-Bench's own data, which abstain does not ship (its repository states no "
                   "license): clone github.com/ren258/UA-Bench and pass -T data=/path/to/UA-Bench (the checkout or "
                   "its data/ folder); for the attribution protocol on a shipped suite, run abstain/abstain_eval "
                   "-T suite=quick -T protocol=attribution")

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def _chat(messages: list[Message]) -> list[ChatMessage]:
    return [_ROLES[m["role"]](content=m["content"]) for m in messages]


def _generate_config() -> dict[str, Any]:
    """The generate config the sample's model calls get: the model's own, overlaid with the eval's (the task's
    config after the command line's ``--max-tokens`` / ``--system-message`` ...), as Inspect merges them."""
    from inspect_ai.model import get_model

    config = get_model().config
    try:  # no public way to read the eval's config in 0.3.285; without it, the model's alone
        from inspect_ai.model._generate_config import active_generate_config
    except ImportError:  # pragma: no cover - another Inspect
        return config.model_dump(exclude_none=True)
    return config.merge(active_generate_config()).model_dump(exclude_none=True)


@solver(name="abstain_check_generation")
def check_generation() -> Solver:
    """Refuse, before the first generation, a setting the task cannot honour (see
    :meth:`abstain.integrations.generation.InspectRun.check`)."""
    checked: list[bool] = []

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not checked:
            InspectRun(_generate_config()).check()
            checked.append(True)
        return state

    return solve


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
        solver=[check_generation(), generate()],
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
def ua_bench(data: str | None = None, judge: str = "rule", judge_model: str | None = None, seed: int = 0,
             limit: int | None = None, max_tokens: int = 512, resamples: int = 1000) -> Task:
    """UA-Bench's own datasets (``data``: a checkout of github.com/ren258/UA-Bench, as ``abstain eval --data
    uabench:DIR`` reads it) under its three-way attribution (answer / DATA_UNCERTAIN / MODEL_UNCERTAIN): ACC,
    DU-F1, MU-F1, per UA-Bench task in ``by_category``. abstain ships no UA-Bench data: without ``data`` it fails,
    saying where to get it."""
    if not data:
        raise DataError(UABENCH_MISSING)
    source = data if data.startswith(UABENCH) else f"{UABENCH}{data}"
    return build_task(_harness(protocol="attribution", judge=judge, judge_model=judge_model, seed=seed, limit=limit,
                               max_tokens=max_tokens, resamples=resamples, data=source), "ua_bench")


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
