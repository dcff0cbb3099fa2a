"""``abstain eval``: generate -> score -> metrics -> report into a resumable run directory."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from abstain.cli.common import apply_verbosity, console, fail, friendly_errors, out_console, verbose_option
from abstain.cli.confirm import confirm_remote_run, yes_option
from abstain.cli.judge_flags import JudgeFlags, judge_flags
from abstain.cli.metrics import UNDEFINED_NOTE
from abstain.cli.score import close_judge
from abstain.cli.suites import suite_help
from abstain.confidence import ESTIMATORS
from abstain.records.runs import REPORT_HTML
from abstain.evaluation.run import EvalConfig, EvalProgress, evaluate
from abstain.metrics import headline
from abstain.protocols import PROTOCOLS

__all__ = ["RichProgress", "protocols_table", "register", "run_resumable"]


class RichProgress(EvalProgress):
    """Progress bars with items, ETA and generated tokens per second."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[speed]}"),
            console=console,
            disable=os.environ.get("ABSTAIN_NO_PROGRESS") == "1",
        )
        self.task: TaskID | None = None
        self.tokens = 0
        self.seconds = 0.0

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def phase(self, name: str, total: int, done: int) -> None:
        unit = "prompts" if name == "generating" else "rows"
        self.task = self.progress.add_task(f"{name} ({unit})", total=total, completed=done, speed="")
        self.tokens = 0

    def advance(self, n: int, tokens: int = 0) -> None:
        if self.task is None:
            return
        self.tokens += tokens
        self.progress.advance(self.task, n)
        elapsed = self.progress.tasks[self.task].elapsed or 0.0
        if self.tokens and elapsed:
            self.progress.update(self.task, speed=f"{self.tokens / elapsed:.1f} tok/s")


def backend_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``--backend-option key=value`` pairs as backend options (values read as YAML: ``true``, ``2``, ``1.5``).

    Example:
        >>> backend_options(["eager=true", "kv_cache_gib=2"])
        {'eager': True, 'kv_cache_gib': 2}
    """
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--backend-option {pair!r}: expected key=value, e.g. --backend-option eager=true")
        out[key.strip()] = yaml.safe_load(value)
    return out


def run_resumable(run: Callable[..., Any], config: Any, out: Path, judge: JudgeFlags,
                  options: dict[str, Any] | None = None) -> Any:
    """``run(config, out, progress=..., judge=...)`` (``evaluate``, :func:`abstain.probing.run.run_probe`) under a
    progress bar.

    An interrupt or a backend/server failure exits naming the folder and how to resume; the judge is
    closed either way. Example: ``result = run_resumable(evaluate, EvalConfig(...), Path("runs/x"), judge)``.
    """
    judge_obj = judge.build()
    try:
        with RichProgress() as progress:
            return run(config, out, progress=progress, judge=judge_obj, **({"backend_options": options} if options else {}))
    except KeyboardInterrupt:
        raise fail(f"interrupted; what finished is kept in {out} - rerun the same command to resume",
                   code=130) from None
    except (RuntimeError, OSError) as exc:  # a backend or server failure (LLMError is a RuntimeError)
        raise fail(f"{type(exc).__name__}: {exc} (rerun the same command to resume)", code=1) from None
    finally:
        close_judge(judge_obj)


def protocols_table(metrics: dict[str, Any], title: str) -> Table:
    """The headline metrics (rows) of every protocol (columns); the CIs are in the report."""
    table = Table(title=title)
    table.add_column("metric")
    protocols = list(metrics["protocols"])
    for name in protocols:
        table.add_column(name, justify="right")
    for key in headline(*metrics["protocols"].values()):
        cells = []
        for name in protocols:
            m = metrics["protocols"][name]
            value = m.get(key)
            cells.append("—" if value is None else f"{value:.3f}")
        table.add_row(key, *cells)
    first = metrics["protocols"][protocols[0]] if protocols else {}
    table.add_row("responses without a box", *(str(metrics["protocols"][p].get("n.format_errors", 0))
                                                for p in protocols))
    table.caption = (
        f"{first.get('n.answerable', 0)} answerable, {first.get('n.unanswerable', 0)} unanswerable items; "
        f"{UNDEFINED_NOTE}; 95% CIs, plots and breakdowns in the report"
    )
    return table


def _split(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(v for value in values for v in value.split(",") if v.strip())


def register(app: typer.Typer) -> None:
    @app.command("eval")
    @judge_flags
    def eval_(
        judge: JudgeFlags,
        model: str = typer.Option(..., "--model", "-m",
                                  help="Backend: bundled, bundled-abstain, hf:<path>, openai:<model> (with --base-url), vllm:<model> "
                                       "(vllm:bundled, vllm:bundled-abstain, vllm:<dir>)."),
        out: Path = typer.Option(..., "--out", "-o", help="Run directory (created; rerun to resume)."),
        suite: str | None = typer.Option(None, help=suite_help()),
        data: Path | None = typer.Option(
            None, help="Instead of --suite: your own items (JSONL, interchange format: docs/format.md), "
                       "abstentionbench:<dataset,...|all|fast> (AbstentionBench through its Inspect port) or uabench:DIR "
                       "(UA-Bench's released files)."),
        protocol: list[str] = typer.Option(
            ["all"], "--protocol", "-p",
            help=" | ".join(PROTOCOLS) + " | all (the four main ones: attribution, idk, clarify, aca; all is four "
                 "times the generations); repeat or comma-separate for several."),
        samples: int = typer.Option(1, help="Responses per prompt (needs --temperature > 0 when > 1)."),
        temperature: float = typer.Option(0.0, help="Sampling temperature (0 = greedy)."),
        top_p: float = typer.Option(1.0, help="Nucleus sampling mass."),
        max_tokens: int = typer.Option(512, help="Generation budget per response."),
        seed: int = typer.Option(0, help="Seed of the --limit subset, the demonstrations and sampling."),
        limit: int | None = typer.Option(None, help="Evaluate a balanced subset of N items."),
        batch_size: int = typer.Option(8, help="Prompts per chunk: the resume points, and the hf backend's forward "
                                               "batch (vllm and openai get every chunk left at once)."),
        shots: int = typer.Option(0, help="In-context demonstrations per prompt (from items not evaluated)."),
        shots_unanswerable: int = typer.Option(0, help="How many of the --shots are unanswerable (Abstain-R1: 1 of 5)."),
        base_url: str | None = typer.Option(
            None, help="OpenAI-compatible server of the evaluated model (openai:<model>), e.g. http://host:8000/v1; "
                       "the judge's server is --judge-base-url."),
        resamples: int = typer.Option(1000, help="Bootstrap resamples for the 95% CIs."),
        dtype: str | None = typer.Option(None, help="Weights' dtype of a local model (bundled, hf:, vllm:): float32 "
                                                    "(the CPU default) | bfloat16 | float16 | auto."),
        confidence: list[str] = typer.Option(
            [], "--confidence",
            help="Confidence estimators stored per response and scored against correctness (conf.* metrics; with "
                 "answer_only beside another protocol, explicit abstention vs a confidence threshold at the same "
                 "coverage): logprob, entropy, answer_prob (token log-probabilities, no extra generation), "
                 "consistency:K (K sampled responses), p_true (the model asked whether its answer is correct), "
                 "verbalized (the model states its confidence); repeat or comma-separate. Known: "
                 + ", ".join(ESTIMATORS) + "."),
        backend_option: list[str] = typer.Option(
            [], "--backend-option", help="key=value for the backend, not recorded (how fast, not what): e.g. "
                                         "eager=true or kv_cache_gib=2 (vllm), num_threads=4 (hf), concurrency=8 or "
                                         "reasoning=true (openai: OpenAI's reasoning models, max_completion_tokens "
                                         "and no temperature; auto by default); repeatable."),
        probe: Path | None = typer.Option(
            None, help="A probe of the base model on the same items (abstain probe): adds competence.* — "
                       "over-conservativeness, prudence and the within-category AUROC of declining against its p̂."),
        yes: bool = yes_option(),
        verbose: bool = verbose_option(),
    ) -> None:
        """Evaluate a model: generate, score, compute metrics and write a report (resumable)."""
        apply_verbosity(verbose)
        with friendly_errors():
            config = EvalConfig(
                model=model, suite=suite, data=str(data) if data is not None else None,
                protocols=_split(protocol), samples=samples, temperature=temperature, top_p=top_p,
                max_tokens=max_tokens, seed=seed, judge=judge.config, judge_base_url=judge.base_url,
                limit=limit, batch_size=batch_size, shots=shots,
                shots_unanswerable=shots_unanswerable, base_url=base_url, resamples=resamples, dtype=dtype,
                confidence=tuple(_split(confidence)), probe=str(probe) if probe is not None else None,
            )
            confirm_remote_run(config, out, yes)
            result = run_resumable(evaluate, config, out, judge, backend_options(backend_option))
        if result.skipped:
            console.print(f"resumed: {result.skipped} prompts were already done in {out}")
        last = result.timing["sessions"][-1]
        if last["tokens_per_second"]:
            console.print(f"generated {last['generated_tokens']} tokens in {last['generation_seconds']:.0f} s "
                          f"({last['tokens_per_second']:.1f} tok/s)")
        out_console.print(protocols_table(result.metrics, title=f"{config.model} on {config.suite or config.data}"))
        out_console.print(f"report: {result.path / REPORT_HTML}")
