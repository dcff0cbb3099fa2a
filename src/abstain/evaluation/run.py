"""``abstain eval`` end to end: items -> prompts -> backend -> responses -> scored rows -> metrics -> report.

The work is the list of prompts (protocol-major: every item under the first protocol, then the next),
cut into fixed chunks of ``batch_size``. A chunk is generated whole and its rows appended to
``responses.jsonl`` (a backend that streams chunks, vLLM or a server, is handed every chunk left at once and gives
each back when it is done, so the engine stays full while the chunks stay the resume points); a rerun skips finished chunks and regenerates a chunk that was cut short *as a whole*,
so every prompt is generated in the same batch as in an uninterrupted run (backends that pad batches are
then bit-for-bit reproducible too) and only its missing rows are written. Scoring resumes the same way.
A finished run stores both files in canonical order and writes ``metrics.json`` from rows in that order,
so a resumed run ends byte-identical to an uninterrupted one.

Example (a run with a backend object you already hold; ``model`` is then only a label)::

    cfg = EvalConfig(model="bundled", suite="quick", limit=8, protocols=("idk",), max_tokens=16)
    run = evaluate(cfg, "runs/tiny", backend=my_backend)
    run.metrics["protocols"]["idk"]["ua.acc"]
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from abstain.backends.base import Backend, GenerationConfig
from abstain.confidence import TOP_LOGPROBS, asks_verbalized, parse_confidence, response_confidence, with_verbalized
from abstain.data.fewshot import choose_demos
from abstain.data.suites import SUITES, ItemSet, benchmark_of, items_digest, load_custom, load_suite
from abstain.evaluation.backend import Borrowed, check_logprobs, chunk_results, needs_logprobs, reads_tokens
from abstain.records.runs import METRICS, RESPONSES, SCORED, TIMING, RunDir, row_key, write_json
from abstain.evaluation.queries import Sampling, pending, query_names, run_query
from abstain.judges import Judge, JudgeConfig
from abstain.judges.options import RUNTIME_FIELDS
from abstain.protocols import MAIN_PROTOCOLS, get_protocol
from abstain.report.summary import run_metrics
from abstain.schema import Item, Message, ResponseRow, ScoredRow
from abstain.scoring import score_rows

__all__ = ["EvalConfig", "EvalProgress", "Prompts", "Run", "eval_prompts", "evaluate", "judge_command_flags",
           "parse_protocols"]


def judge_command_flags(judge: JudgeConfig) -> list[str]:
    """The judge flags that reproduce ``judge`` (defaults left out; the server URL and key never)."""
    default = JudgeConfig().record()
    flags = {"name": "--judge", "model": "--judge-model", "behaviors": "--behaviors",
             "answer_match": "--answer-match", "math_timeout_s": "--math-timeout", "concurrency": "--judge-concurrency",
             "retries": "--judge-retries", "timeout_s": "--judge-timeout"}
    out = []
    for key, value in judge.record().items():
        if value == default[key]:
            continue
        if key == "lenient_format":
            out.append("--lenient-format")
        elif key == "cache":
            out.append("--no-judge-cache")
        else:
            out.append(f"{flags[key]} {value}")
    return out

log = logging.getLogger(__name__)


def parse_protocols(spec: str) -> tuple[str, ...]:
    """``all`` -> the four main protocols; otherwise comma-separated names, checked."""
    names = MAIN_PROTOCOLS if spec.strip() == "all" else tuple(p.strip() for p in spec.split(",") if p.strip())
    if not names:
        raise ValueError("--protocol is empty; use e.g. attribution or all")
    for name in names:
        get_protocol(name)
    if len(set(names)) != len(names):
        raise ValueError(f"--protocol lists a protocol twice: {spec}")
    return tuple(names)


@dataclass(frozen=True)
class EvalConfig:
    """Everything that decides what an evaluation run produces (stored in ``config.json``)."""

    model: str = field(metadata={"help": "backend spec: bundled, hf:<path>, openai:<model>, vllm:<model>"})
    suite: str | None = field(default=None, metadata={"help": " | ".join(SUITES)})
    data: str | None = field(default=None, metadata={"help": "a JSONL file of items instead of a suite"})
    protocols: tuple[str, ...] = field(default=MAIN_PROTOCOLS, metadata={"help": "protocol names"})
    samples: int = field(default=1, metadata={"help": "responses per prompt"})
    temperature: float = field(default=0.0, metadata={"help": "0 = greedy"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus sampling mass"})
    max_tokens: int = field(default=512, metadata={"help": "generation budget per response"})
    seed: int = field(default=0, metadata={"help": "subset, demonstration and sampling seed"})
    judge: JudgeConfig = field(default_factory=JudgeConfig, metadata={"help": "the judge (recorded in full)"})
    judge_base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible server of the LLM judge"})
    limit: int | None = field(default=None, metadata={"help": "balanced subset of this many items"})
    batch_size: int = field(default=8, metadata={"help": "prompts per chunk: the resume points, and the hf backend's "
                                                 "forward batch (vllm and openai get every chunk left at once)"})
    shots: int = field(default=0, metadata={"help": "in-context demonstrations per prompt"})
    shots_unanswerable: int = field(default=0, metadata={"help": "how many of the demonstrations are unanswerable"})
    base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible server URL"})
    resamples: int = field(default=1000, metadata={"help": "bootstrap resamples for the CIs"})
    dtype: str | None = field(default=None, metadata={
        "help": "weights' dtype of a local backend (bundled, hf, vllm): float32 | bfloat16 | float16 | auto "
                "(None: the backend's default, float32 on a CPU)"})
    confidence: tuple[str, ...] = field(default=(), metadata={
        "help": "confidence estimators stored per response (abstain.confidence): logprob, entropy, answer_prob, "
                "consistency:K, p_true"})
    probe: str | None = field(default=None, metadata={
        "help": "a probe of the base model on the same items (abstain probe): competence.* metrics against its p̂"})

    def __post_init__(self) -> None:
        if (self.suite is None) == (self.data is None):
            raise ValueError("give exactly one of --suite NAME or --data FILE")
        object.__setattr__(self, "protocols", parse_protocols(",".join(self.protocols)))
        object.__setattr__(self, "confidence", parse_confidence(self.confidence))
        if self.samples < 1:
            raise ValueError("--samples must be >= 1")
        if not isinstance(self.judge, JudgeConfig):
            raise ValueError("judge must be a JudgeConfig, e.g. JudgeConfig(name='rule')")
        if self.batch_size < 1:
            raise ValueError("--batch-size must be >= 1")
        if self.limit is not None and self.limit < 1:
            raise ValueError("--limit must be >= 1")
        if self.shots < 0 or not 0 <= self.shots_unanswerable <= self.shots:
            raise ValueError("--shots-unanswerable must be between 0 and --shots")
        if self.dtype is not None and self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"--dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        if self.dtype is not None and self.model.partition(":")[0].strip() == "openai":
            raise ValueError("--dtype is a local backend's setting; a server chooses its own dtype")
        if self.samples > 1 and self.temperature == 0:
            raise ValueError("--samples > 1 with greedy decoding gives identical samples; set --temperature > 0")
        self.generation()  # validates max_tokens, temperature, top_p

    def generation(self) -> GenerationConfig:
        return GenerationConfig(
            max_new_tokens=self.max_tokens, temperature=self.temperature, top_p=self.top_p,
            n=self.samples, seed=self.seed, logprobs=TOP_LOGPROBS if reads_tokens(self.confidence) else 0,
        )

    def command(self) -> str:
        """The ``abstain eval`` command line that reproduces this run (``--out`` left to you)."""
        parts = ["abstain eval", f"--model {self.model}"]
        parts.append(f"--suite {self.suite}" if self.suite else f"--data {self.data}")
        parts.append(f"--protocol {','.join(self.protocols)}")
        defaults = EvalConfig(model="x", suite="quick")
        for name in ("samples", "temperature", "top_p", "max_tokens", "seed", "judge_base_url", "limit",
                     "batch_size", "shots", "shots_unanswerable", "base_url", "resamples", "dtype"):
            value = getattr(self, name)
            if value != getattr(defaults, name):  # server URLs are not recorded: a placeholder
                parts.append(f"--{name.replace('_', '-')} {'URL' if name.endswith('url') else value}")
        if self.confidence:
            parts.append(f"--confidence {','.join(self.confidence)}")
        if self.probe:
            parts.append(f"--probe {self.probe}")
        parts += judge_command_flags(self.judge)
        return " ".join(parts)

    def record(self, items: Sequence[Item], demos: dict[str, list[Item]]) -> dict[str, Any]:
        """The content of ``config.json``: no secrets, no server URLs, no timestamps."""
        fields = asdict(self)
        fields["protocols"] = list(self.protocols)
        fields["confidence"] = list(self.confidence)
        if not self.confidence:  # a run without estimators records what runs before them recorded
            del fields["confidence"]
        if self.probe is None:  # likewise a run without a probe
            del fields["probe"]
        fields["judge"] = self.judge.record()
        # server URLs can embed tokens or private hosts, and a server may move between a crash and the
        # rerun: they are neither recorded nor compared (the model names are)
        del fields["base_url"], fields["judge_base_url"]
        try:
            version = metadata.version("abstain")
        except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
            version = "unknown"
        return {
            "abstain_version": version,
            **fields,
            "items": {"count": len(items), "sha256": items_digest(items)},
            "demos": {bench: [d.id for d in ds] for bench, ds in demos.items()},
            "command": self.command(),
        }


class EvalProgress:
    """Progress callbacks of a run (the CLI shows them as rich progress bars); the base does nothing."""

    def phase(self, name: str, total: int, done: int) -> None:
        """A phase (``generating``, ``scoring``) starts: ``total`` units, ``done`` of them already."""

    def advance(self, n: int, tokens: int = 0) -> None:
        """``n`` more units finished, with ``tokens`` generated tokens."""


@dataclass(frozen=True)
class Run:
    """A finished evaluation run: its folder and what is in it.

    ``config`` is ``config.json``, ``metrics`` is ``metrics.json`` (``metrics["protocols"][p][name]``),
    ``timing`` is ``timing.json``; ``generated`` / ``skipped`` count the prompts generated in this call and
    the ones an earlier call had already finished. :attr:`scored` reads ``scored.jsonl``.
    """

    path: Path
    config: dict[str, Any]
    metrics: dict[str, Any]
    generated: int
    skipped: int
    timing: dict[str, Any]

    @property
    def scored(self) -> list[ScoredRow]:
        """The scored rows (``scored.jsonl``), in the run's canonical order."""
        return RunDir(self.path).read_rows(SCORED, ScoredRow)


Work = tuple[str, Item]  # (protocol, item)


@dataclass(frozen=True)
class Prompts:
    """What a run sends, in the run's order: ``work[i]`` is (protocol, item) and ``messages[i]`` its chat
    messages (the protocol's system message, the demonstrations, the question). ``record`` is ``config.json``.

    What ``abstain eval`` generates from, and what the harness integrations (Inspect, lm-evaluation-harness)
    hand their harness, so their samples are this run's prompts in this order.
    """

    item_set: ItemSet
    demos: dict[str, list[Item]]
    record: dict[str, Any]
    work: list[Work]
    messages: list[list[Message]]


def eval_prompts(config: EvalConfig) -> Prompts:
    """The prompts of the run ``config`` describes (protocol-major: every item under the first protocol, then
    the next), with its ``config.json`` record.

    Example:
        >>> p = eval_prompts(EvalConfig(model="m", suite="quick", limit=2, protocols=("idk",)))
        >>> [(protocol, item.label) for protocol, item in p.work], p.messages[0][-1]["role"]
        ([('idk', 'unanswerable'), ('idk', 'answerable')], 'user')
    """
    item_set = _items(config)
    demos = choose_demos(item_set, config.shots, config.shots_unanswerable, config.seed)
    work: list[Work] = [(p, item) for p in config.protocols for item in item_set.items]
    messages = [get_protocol(p).messages(item, demos.get(benchmark_of(item), ())) for p, item in work]
    if asks_verbalized(config.confidence):  # the verbalized estimator's prompt variant
        messages = [with_verbalized(m) for m in messages]
    return Prompts(item_set, demos, config.record(item_set.items, demos), work, messages)


def _items(config: EvalConfig) -> ItemSet:
    if config.data is not None:
        return load_custom(config.data, config.limit, config.seed)
    assert config.suite is not None
    return load_suite(config.suite, config.limit, config.seed)


def _generate(
    run: RunDir, prompts: Prompts, keys: list[list[tuple[str, str, int]]], config: EvalConfig,
    make: Callable[[], Backend], progress: EvalProgress, timing: dict[str, Any],
) -> tuple[int, int, int, float]:
    """Generate the unfinished chunks; returns (prompts generated, prompts skipped, tokens, seconds).

    ``timing`` receives the seconds the backend took to load and, where it counts them, its decoding steps."""
    work = prompts.work
    done = {row_key(r) for r in run.read_rows(RESPONSES, ResponseRow)}
    size = config.batch_size
    chunks = [range(s, min(s + size, len(work))) for s in range(0, len(work), size)]
    todo = [c for c in chunks if any(k not in done for i in c for k in keys[i])]
    finished = len(work) - sum(len(c) for c in todo)
    progress.phase("generating", len(work), finished)
    queries = query_names(config.confidence)
    if not todo and not any(pending(run, name) for name in queries):
        return 0, finished, 0, 0.0
    loading = time.perf_counter()
    backend = make()
    timing["load_seconds"] = time.perf_counter() - loading
    gen = config.generation()
    if needs_logprobs(config.confidence):
        check_logprobs(backend)
    prompts_done = tokens = 0
    start = time.perf_counter()
    try:
        with run.appender(RESPONSES) as out:
            for k, texts, chunk_tokens in chunk_results(backend, [[prompts.messages[i] for i in c] for c in todo], gen):
                chunk = todo[k]
                for i, samples in zip(chunk, texts, strict=True):
                    protocol, item = work[i]
                    if len(samples) != config.samples:
                        raise RuntimeError(f"backend returned {len(samples)} samples, expected {config.samples}")
                    for s, text in enumerate(samples):
                        if keys[i][s] not in done:
                            out.append(ResponseRow(**item.model_dump(), response=text, model=backend.name,
                                                   protocol=protocol, sample=s,
                                                   confidence=response_confidence(text, config.confidence) or None))
                out.sync()
                prompts_done += len(chunk)
                tokens += chunk_tokens
                progress.advance(len(chunk), chunk_tokens)
        seconds = time.perf_counter() - start
        messages = {(item.id, protocol): m for (protocol, item), m in zip(work, prompts.messages, strict=True)}
        settings = Sampling(config.max_tokens, config.temperature, config.top_p, config.seed, config.batch_size)
        for name in queries:  # consistency:K, p_true: each resumes on the rows still without its value
            timing.update(run_query(run, name, pending(run, name), messages, backend, settings, progress))
    finally:
        stats = getattr(backend, "stats", None)
        if getattr(stats, "steps", 0):
            timing["decode_steps"], timing["batches"] = stats.steps, stats.batches
        backend.close()
    return prompts_done, finished, tokens, seconds


def _score(
    run: RunDir, responses: list[ResponseRow], make: Callable[[], Judge], progress: EvalProgress
) -> list[ScoredRow]:
    """Score the responses not scored yet (and retry rows a judge could not decide)."""
    # the latest judgment of a row wins (a retried judge error is appended after the failed one)
    scored = {row_key(r): r for r in run.read_rows(SCORED, ScoredRow, keep="last") if r.judge_error is None}
    missing = [r for r in responses if row_key(r) not in scored]
    progress.phase("scoring", len(responses), len(responses) - len(missing))
    if missing:
        judge = make()
        with run.appender(SCORED) as out:
            for row in score_rows(missing, judge, batch_size=64, on_batch=progress.advance):
                out.append(row)
                scored[row_key(row)] = row
            out.sync()
    return [scored[row_key(r)] for r in responses]


def _read_timing(path: Path) -> list[dict[str, Any]]:
    try:
        return list(json.loads(path.read_text(encoding="utf-8")).get("sessions", []))
    except (FileNotFoundError, json.JSONDecodeError, AttributeError):
        return []


def evaluate(
    config: EvalConfig,
    out: str | os.PathLike[str],
    *,
    backend: Backend | None = None,
    progress: EvalProgress | None = None,
    backend_options: dict[str, Any] | None = None,
    judge: Judge | None = None,
) -> Run:
    """Run (or resume) an evaluation into the run folder ``out``; see the module docstring.

    ``backend``: an already built backend (its ``close`` is not called); otherwise one is built from
    ``config.model`` with ``make_backend(config.model, base_url=..., **backend_options)`` only when
    something is left to generate. ``judge``: an already built judge (e.g. holding an API key, which is
    never recorded); otherwise ``config.judge.build(...)`` when something is left to score.
    """
    progress = progress or EvalProgress()
    prepared = time.time()
    prompts = eval_prompts(config)
    record = prompts.record
    if config.probe is not None:  # every answerable item needs the base model's p̂: said before anything is generated
        from abstain.metrics.competence import probed_p_hat

        probed_p_hat(config.probe, [item for _, item in prompts.work])
    run = RunDir(out)
    run.prepare(record, ignore=[f"judge.{name}" for name in RUNTIME_FIELDS])  # before any model is loaded

    keys = [[(item.id, p, s) for s in range(config.samples)] for p, item in prompts.work]

    def make() -> Backend:
        if backend is not None:
            return Borrowed(backend)
        from abstain.backends.registry import make_backend

        options = dict(backend_options or {})
        kind = config.model.partition(":")[0].strip()
        if config.base_url:
            options["base_url"] = config.base_url
        if config.dtype is not None:
            options.setdefault("dtype", config.dtype)
        if kind in ("bundled", "bundled-abstain", "hf"):
            options.setdefault("batch_size", config.batch_size)  # one chunk = one forward batch
        # vllm and openai take every chunk left at once (generate_chunks): the engine or server stays full
        return make_backend(config.model, **options)

    started = time.time()
    phases: dict[str, Any] = {"prepare_seconds": time.time() - prepared}
    generated, skipped, tokens, gen_seconds = _generate(run, prompts, keys, config, make, progress, phases)

    order = {k: n for n, ks in enumerate(keys) for k in ks}
    # keep="last": the consistency pass appends a row again once its value is in
    responses = [r for r in run.read_rows(RESPONSES, ResponseRow, keep="last") if row_key(r) in order]
    responses.sort(key=lambda r: order[row_key(r)])
    if len(responses) != len(order):
        raise RuntimeError(f"{run.path / RESPONSES}: {len(order) - len(responses)} rows missing after generation")
    score_start = time.perf_counter()
    built: list[Judge] = []

    def make_judge_() -> Judge:
        if judge is not None:
            return judge
        built.append(config.judge.build(base_url=config.judge_base_url))
        return built[-1]

    try:
        scored = _score(run, responses, make_judge_, progress)
    finally:
        for own in built:
            close = getattr(own, "close", None)
            if callable(close):
                close()
    score_seconds = time.perf_counter() - score_start
    run.rewrite(RESPONSES, responses)
    run.rewrite(SCORED, scored)

    metrics_start = time.perf_counter()
    metrics = run_metrics(scored, record)
    write_json(run.path / METRICS, metrics)
    phases["metrics_seconds"] = time.perf_counter() - metrics_start

    from abstain.report import write_report

    report_start = time.perf_counter()
    write_report(run.path)
    phases["report_seconds"] = time.perf_counter() - report_start
    session = {
        "started_unix": round(started, 3),
        "prompts_generated": generated,
        "prompts_skipped": skipped,
        "generated_tokens": tokens,
        "generation_seconds": round(gen_seconds, 3),
        "tokens_per_second": round(tokens / gen_seconds, 2) if gen_seconds else None,
        "scoring_seconds": round(score_seconds, 3),
        "wall_seconds": round(time.time() - started, 3),
        **{k: round(v, 3) if isinstance(v, float) else v for k, v in phases.items()},
    }
    timing = {"sessions": [*_read_timing(run.path / TIMING), session]}
    write_json(run.path / TIMING, timing)
    return Run(run.path, record, metrics, generated, skipped, timing)
