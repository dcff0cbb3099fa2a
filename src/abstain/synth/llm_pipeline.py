"""ACA-RL's reasoning-graph-guided rewrite of existing problems (e.g. GSM8K), with any backend.

Per source problem, up to ``max_attempts`` (5) attempts, each running five stages until one rejects:

1. ``decompose`` — background, conditions, question (JSON); every number of a condition must be in
   the source.
2. ``graph`` — the reasoning DAG of the reference solution: steps that use conditions ``c1..`` or
   earlier steps; references must exist, no cycle; the *critical* conditions are those the answer step
   depends on; a step must reach the reference answer (ACA's reasoning-correctness check).
3. ``perturb`` — one critical condition (seeded choice) is broken with one of the six operators
   (round robin over sources, rotating on retries), with checks per operator (a removed number is
   really gone, a disrupted entity keeps the fact's numbers, a qualifier is there).
4. ``rewrite`` — background + perturbed conditions + question as one fluent problem; it must not state
   a removed number again and must still ask the question.
5. ``validate`` — an independent, greedy validator prompt must judge the rewrite *not* answerable
   (UA-Bench's recheck).

The first accepted attempt gives the source's one variant (at most one per source); every attempt,
accepted or not, is recorded with its stage, the model's raw replies and the reason it was rejected
(an unreadable reply is a recorded reason, never a crash). Stages run batched across the sources of
a round. Unlike :mod:`abstain.synth.missing_premise`, these items are LLM-validated, not certified:
they carry no ``graph`` (their DAG is ``meta.reasoning_graph``).

Example::

    from abstain.backends.registry import make_backend
    sources = load_sources(None, 2)            # the first two GSM8K test problems
    items, attempts = run_pipeline(sources, make_backend("bundled"), PipelineConfig(max_new_tokens=64))
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from abstain.backends.base import Backend, GenerationConfig, Message
from abstain.schema import DataError, Item, read_lines, write_jsonl
from abstain.synth.llm_stages import STAGES, Attempt, Source, handle_reply, prompt_for
from abstain.synth.perturb import OPERATORS

__all__ = ["STAGES", "Attempt", "PipelineConfig", "PipelineSummary", "Source", "handle_reply", "load_sources",
           "prompt_for", "rewrite_file", "run_pipeline"]



@dataclass(frozen=True)
class PipelineConfig:
    """Settings of the rewrite pipeline."""

    seed: int = field(default=0, metadata={"help": "seeds the choices and the sampling"})
    operators: tuple[str, ...] = field(default=OPERATORS, metadata={"help": "perturbations, round robin"})
    max_attempts: int = field(default=5, metadata={"help": "attempts per source problem"})
    max_new_tokens: int = field(default=384, metadata={"help": "generation budget per stage"})
    temperature: float = field(default=0.7, metadata={"help": "sampling temperature of stages 1-4 (validator: 0)"})
    batch_size: int = field(default=8, metadata={"help": "prompts per generate call"})
    unanswerable_ratio: float | None = field(default=None, metadata={"help": "None: every source gets a try"})

    def __post_init__(self) -> None:
        bad = sorted(set(self.operators) - set(OPERATORS))
        if bad or not self.operators:
            raise ValueError(f"unknown perturbations {bad}; choose from {list(OPERATORS)}")
        if self.max_attempts < 1 or self.batch_size < 1 or self.max_new_tokens < 1:
            raise ValueError("max_attempts, batch_size and max_new_tokens must be >= 1")
        if self.unanswerable_ratio is not None and not 0 <= self.unanswerable_ratio <= 1:
            raise ValueError("--unanswerable-ratio must be between 0 and 1")


@dataclass
class PipelineSummary:
    sources: int = 0
    accepted: int = 0
    attempts: int = 0
    rejected_at: Counter[str] = field(default_factory=Counter)


def load_sources(path: Path | None, n: int | None = None) -> list[Source]:
    """Source problems: GSM8K rows (``question``, ``answer`` with ``#### N``) or answerable items."""
    from abstain.data.loaders import benchmark_dir

    path = path or benchmark_dir() / "gsm8k" / "test.jsonl"
    default = path == benchmark_dir() / "gsm8k" / "test.jsonl"
    sources: list[Source] = []
    for lineno, row in read_lines(path, json.loads):
        if not isinstance(row, dict):
            raise DataError(f"{path}:{lineno}: expected a JSON object")
        if "label" in row:
            item = Item.model_validate(row)
            if item.label != "answerable" or not item.answers:
                continue
            sources.append(Source(item.id, item.question, item.answers[0], str(item.meta.get("solution", ""))))
        elif isinstance(row.get("question"), str) and isinstance(row.get("answer"), str) and "####" in row["answer"]:
            solution, answer = row["answer"].rsplit("####", 1)
            sid = f"gsm8k-{lineno - 1}" if default else str(row.get("id", f"line{lineno}"))
            sources.append(Source(sid, row["question"], answer.strip().replace(",", ""), solution.strip()))
        else:
            raise DataError(f"{path}:{lineno}: expected a GSM8K row (question, answer with ####) or an item")
        if n is not None and len(sources) >= n:
            break
    if not sources:
        raise DataError(f"{path}: no answerable source problems")
    return sources


def _generate(backend: Backend, prompts: list[list[Message]], cfg: PipelineConfig, stage: str,
              round_: int) -> list[str]:
    gen = GenerationConfig(max_new_tokens=cfg.max_new_tokens,
                           temperature=0.0 if stage == "validate" else cfg.temperature,
                           seed=cfg.seed * 1000 + round_ * 10 + STAGES.index(stage))
    texts: list[str] = []
    for start in range(0, len(prompts), cfg.batch_size):
        texts += [samples[0] for samples in backend.generate(prompts[start:start + cfg.batch_size], gen)]
    return texts


def run_pipeline(sources: Sequence[Source], backend: Backend, cfg: PipelineConfig,
                 on_round: Callable[[list[Attempt]], None] | None = None,
                 on_done: Callable[[int], None] | None = None) -> tuple[list[Item], list[Attempt]]:
    """Rewrite ``sources``; returns the items (originals and accepted twins) and every attempt."""
    pick = random.Random(f"abstain-llm-mix:{cfg.seed}")
    if cfg.unanswerable_ratio is None:
        wanted = set(range(len(sources)))
    else:
        wanted = set(pick.sample(range(len(sources)), round(cfg.unanswerable_ratio * len(sources))))
    if on_done is not None and len(wanted) < len(sources):
        on_done(len(sources) - len(wanted))
    accepted: dict[int, Attempt] = {}
    attempts: list[Attempt] = []
    for round_ in range(1, cfg.max_attempts + 1):
        todo = [i for i in sorted(wanted) if i not in accepted]
        if not todo:
            break
        batch = [Attempt(sources[i].id, round_, cfg.operators[(i + round_ - 1) % len(cfg.operators)]) for i in todo]
        rngs = [random.Random(f"abstain-llm:{cfg.seed}:{sources[i].id}:{round_}") for i in todo]
        for stage in STAGES:
            live = [k for k, a in enumerate(batch) if a.reason is None]
            if not live:
                break
            replies = _generate(backend, [prompt_for(stage, batch[k], sources[todo[k]]) for k in live], cfg, stage,
                                round_)
            for k, reply in zip(live, replies):
                handle_reply(stage, batch[k], sources[todo[k]], reply, rngs[k])
        for k, a in enumerate(batch):
            if a.reason is None:
                a.accepted = True
                accepted[todo[k]] = a
            if on_done is not None and (a.accepted or round_ == cfg.max_attempts):
                on_done(1)
        attempts += batch
        if on_round is not None:
            on_round(batch)
    return _items(sources, wanted, accepted, cfg), attempts


def _items(sources: Sequence[Source], wanted: set[int], accepted: dict[int, Attempt], cfg: PipelineConfig) -> list[Item]:
    rows: list[Item] = []
    for i, s in enumerate(sources):
        pair_id = f"synth-llm-{s.id}"
        common = {"category": "reasoning", "source": "synth/llm-rewrite", "pair_id": pair_id}
        original = Item(id=f"{pair_id}-a", question=s.question, answers=[s.answer], label="answerable",
                        gap_variable=None, meta={"pair_id": pair_id, "source_id": s.id}, **common)
        a = accepted.get(i)
        if a is None or cfg.unanswerable_ratio is None:
            rows.append(original)
        if a is not None:
            rows.append(Item(
                id=f"{pair_id}-u", question=a.problem, answers=[], label="unanswerable", perturbation=a.operator,
                gap=a.gap, gap_variable=None, **common,
                meta={"pair_id": pair_id, "source_id": s.id, "attempt": a.attempt, "condition": a.condition,
                      "perturbed_condition": a.perturbed_condition, "reasoning_graph": a.steps,
                      "validator": a.validator, "certified": False},
            ))
    return rows


def rewrite_file(sources: Sequence[Source], backend: Backend, cfg: PipelineConfig, out: Path, attempts_path: Path,
                 on_done: Callable[[int], None] | None = None) -> PipelineSummary:
    """Run the pipeline; every attempt is appended (and flushed) to ``attempts_path`` as its round ends,
    the items are written to ``out`` atomically at the end."""
    attempts_path.parent.mkdir(parents=True, exist_ok=True)
    summary = PipelineSummary(sources=len(sources))
    with attempts_path.open("w", encoding="utf-8") as log:
        def record(batch: list[Attempt]) -> None:
            for a in batch:
                log.write(json.dumps({**asdict(a), "condition": a.condition}, ensure_ascii=False) + "\n")
                summary.attempts += 1
                summary.accepted += a.accepted
                if a.reason:
                    summary.rejected_at[a.reason.split(":")[0]] += 1
            log.flush()

        items, _ = run_pipeline(sources, backend, cfg, on_round=record, on_done=on_done)
    write_jsonl(out, items)
    return summary
