"""``abstain score``: parse and judge every response row (rule, LLM or hybrid judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from abstain.cli.common import console, friendly_errors, progress_bar
from abstain.judges import make_judge
from abstain.judges.base import Judge
from abstain.schema import ResponseRow, read_jsonl
from abstain.scoring import ScoreSummary, score_file

# Judge options shared with `abstain audit` (same flags, same meaning).
JUDGE_HELP = "Judge: rule (offline default), llm (every field by an LLM), hybrid (rules where certain, LLM for the rest)."
BASE_URL_HELP = "OpenAI-compatible server of the LLM judge, e.g. http://127.0.0.1:8000/v1 (env ABSTAIN_JUDGE_BASE_URL)."
MODEL_HELP = "Model name the judge server serves (env ABSTAIN_JUDGE_MODEL)."
KEY_HELP = "API key of the judge server (env ABSTAIN_JUDGE_API_KEY or OPENAI_API_KEY); never written anywhere."
BEHAVIORS_HELP = (
    "Rows that get an ACA behavior label: unanswerable (default), all (so asking or conditioning on an "
    "answerable item also counts as an abstention in ab.*), or none."
)

# The judge flags as reusable parameter types: `abstain score`, `audit` and `eval` declare them alike.
JudgeOpt = Annotated[str, typer.Option(help=JUDGE_HELP)]
LenientOpt = Annotated[
    bool, typer.Option(help="Judge the tail of responses without a \\boxed{} instead of marking them wrong.")
]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help=BASE_URL_HELP)]
JudgeModelOpt = Annotated[str | None, typer.Option("--judge-model", help=MODEL_HELP)]
ApiKeyOpt = Annotated[str | None, typer.Option("--api-key", help=KEY_HELP, show_default=False)]
ConcurrencyOpt = Annotated[int, typer.Option(help="LLM judge requests in flight at once.")]
RetriesOpt = Annotated[int, typer.Option(help="Retries per LLM request on connection errors, timeouts and 5xx.")]
TimeoutOpt = Annotated[float, typer.Option(help="Seconds to wait for one LLM answer.")]
CacheOpt = Annotated[bool, typer.Option(help="Reuse cached LLM judge answers (keyed by model and prompt).")]
BehaviorsOpt = Annotated[str, typer.Option(help=BEHAVIORS_HELP)]


def build_judge(
    judge: str,
    lenient_format: bool = False,
    base_url: str | None = None,
    judge_model: str | None = None,
    api_key: str | None = None,
    concurrency: int = 8,
    retries: int = 4,
    timeout: float = 120.0,
    cache: bool = True,
    behaviors: str = "unanswerable",
) -> Judge:
    """The judge the CLI flags describe (LLM settings are ignored by the rule judge)."""
    if behaviors not in ("unanswerable", "all", "none"):
        raise ValueError(f"--behaviors must be unanswerable, all or none, not {behaviors!r}")
    options: dict[str, Any] = {"lenient_format": lenient_format, "behaviors": behaviors}
    if judge in ("llm", "hybrid"):
        options.update(base_url=base_url, model=judge_model, api_key=api_key, concurrency=concurrency,
                       retries=retries, timeout_s=timeout, cache=cache)
    return make_judge(judge, **options)


def close_judge(judge: Judge) -> None:
    close = getattr(judge, "close", None)
    if callable(close):
        close()


def report_errors(summary: ScoreSummary, what: str) -> None:
    """Print the judge-error summary (grouped, most frequent first)."""
    console.print(f"[bold red]{summary.judge_errors} of {summary.rows} rows got a judge error[/] — {what}")
    for text, count in sorted(summary.error_kinds.items(), key=lambda kv: -kv[1])[:5]:
        console.print(f"  {count:>6} × {text}", highlight=False)


def register(app: typer.Typer) -> None:
    @app.command()
    def score(
        input: Path = typer.Option(..., "--input", "-i", help="Response rows (JSONL)."),
        output: Path = typer.Option(..., "--output", "-o", help="Where to write scored rows (JSONL)."),
        judge: JudgeOpt = "rule",
        lenient_format: LenientOpt = False,
        base_url: BaseUrlOpt = None,
        judge_model: JudgeModelOpt = None,
        api_key: ApiKeyOpt = None,
        concurrency: ConcurrencyOpt = 8,
        retries: RetriesOpt = 4,
        timeout: TimeoutOpt = 120.0,
        cache: CacheOpt = True,
        behaviors: BehaviorsOpt = "unanswerable",
        rescore: bool = typer.Option(
            False, help="Judge every row again; by default rows already in --output without a judge error are kept."
        ),
    ) -> None:
        """Parse the last \\boxed{} of each response and judge it.

        Rerunning into the same --output judges only the rows that are missing or got a judge error.
        """
        with friendly_errors():
            total = len(read_jsonl(input, ResponseRow))
            judge_obj = build_judge(
                judge, lenient_format, base_url, judge_model, api_key, concurrency, retries, timeout, cache, behaviors
            )
            try:
                with progress_bar("scoring", total) as advance:
                    summary = score_file(input, output, judge_obj, on_batch=advance, rescore=rescore)
            finally:
                close_judge(judge_obj)
        reused = f", {summary.reused} kept from the previous output" if summary.reused else ""
        console.print(
            f"scored {summary.rows} rows -> {output} "
            f"({summary.format_errors} without a box, {summary.judge_errors} judge errors{reused})"
        )
        if summary.judge_errors:
            report_errors(summary, "they are written with judge_error set and left out of the metrics; "
                          "rerun the same command to judge only those rows")
            raise typer.Exit(1)
