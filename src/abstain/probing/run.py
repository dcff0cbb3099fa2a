"""Running a knowledge-boundary probe: an ``abstain eval`` run with ``k`` samples per item at a temperature
above 0, folded into ``probe.jsonl`` (:mod:`abstain.records.probes`: the rows, p̂ and out-of-knowledge).

Example::

    result = run_probe(ProbeConfig(model="bundled", protocol="idk", data="items.jsonl", k=8), "runs/probe")
    [(row.id, row.p_hat) for row in result.rows[:3]]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abstain.backends.base import Backend
from abstain.data.suites import SUITES
from abstain.evaluation.run import EvalConfig, EvalProgress, Run, evaluate
from abstain.judges import Judge, JudgeConfig
from abstain.records.probes import PROBE, ProbeRow, aggregate
from abstain.schema import write_jsonl

__all__ = ["ProbeConfig", "ProbeResult", "run_probe"]


@dataclass(frozen=True)
class ProbeConfig:
    """What ``abstain probe`` runs (the eval run it makes is recorded in the run's ``config.json``)."""

    model: str = field(metadata={"help": "backend spec: bundled, hf:<path>, openai:<model>, vllm:<model>"})
    protocol: str = field(metadata={"help": "the protocol the model is probed (and later trained) in"})
    suite: str | None = field(default=None, metadata={"help": " | ".join(SUITES)})
    data: str | None = field(default=None, metadata={"help": "a JSONL file of items instead of a suite"})
    k: int = field(default=8, metadata={"help": "samples per item"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature (> 0)"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus sampling mass"})
    max_tokens: int = field(default=256, metadata={"help": "generation budget per sample"})
    seed: int = field(default=0, metadata={"help": "subset and sampling seed"})
    limit: int | None = field(default=None, metadata={"help": "balanced subset of this many items"})
    batch_size: int = field(default=8, metadata={"help": "prompts per generate call"})
    judge: JudgeConfig | None = field(default=None, metadata={"help": "the judge (default: the rule judge)"})
    base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible server URL"})
    judge_base_url: str | None = field(default=None, metadata={"help": "the LLM judge's server (never recorded)"})
    confidence: tuple[str, ...] = field(default=(), metadata={
        "help": "confidence estimators per sample (abstain eval --confidence); probe.jsonl keeps their mean per item"})

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError("--k must be >= 1")
        if self.temperature <= 0:
            raise ValueError("--temperature must be > 0: greedy decoding gives k identical samples")
        if "," in self.protocol or self.protocol == "all":
            raise ValueError("--protocol takes one protocol: the one the model will be trained in")

    def eval_config(self) -> EvalConfig:
        """The :class:`~abstain.evaluation.run.EvalConfig` of the sampling run."""
        return EvalConfig(model=self.model, suite=self.suite, data=self.data, protocols=(self.protocol,),
                          samples=self.k, temperature=self.temperature, top_p=self.top_p,
                          max_tokens=self.max_tokens, seed=self.seed, judge=self.judge or JudgeConfig(),
                          judge_base_url=self.judge_base_url, limit=self.limit, batch_size=self.batch_size,
                          base_url=self.base_url, confidence=self.confidence)


@dataclass
class ProbeResult:
    """A finished probe: its folder, rows and the eval result it was folded from."""

    out: Path
    rows: list[ProbeRow]
    eval: Run

    @property
    def path(self) -> Path:
        return self.out / PROBE


def run_probe(config: ProbeConfig, out: str | os.PathLike[str], backend: Backend | None = None,
              progress: EvalProgress | None = None, judge: Judge | None = None,
              backend_options: dict[str, Any] | None = None) -> ProbeResult:
    """Sample (or resume sampling) into ``out`` with ``abstain eval``, then write ``out/probe.jsonl``.

    ``backend_options`` go to the backend as in ``abstain eval --backend-option`` (how fast, not what: not
    recorded), e.g. ``{"eager": True}`` for vLLM.
    """
    result = evaluate(config.eval_config(), out, backend=backend, progress=progress, judge=judge,
                      backend_options=backend_options)
    rows = aggregate(result.scored)
    write_jsonl(Path(out) / PROBE, rows)
    return ProbeResult(Path(out), rows, result)
