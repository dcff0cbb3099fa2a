"""``abstain score``: parse and judge every response row (rule, LLM or hybrid judge)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from abstain.cli.common import console, fail, friendly_errors, progress_bar
from abstain.cli.judge_flags import JudgeFlags, judge_flags
from abstain.records.runs import CONFIG, RESPONSES
from abstain.judges.base import Judge
from abstain.judges.options import JudgeConfig
from abstain.schema import DataError, ResponseRow, read_jsonl, response_key
from abstain.scoring import Scored
from abstain.scoring import score as score_responses

__all__ = ["close_judge", "register", "report_errors", "run_judge_config"]


def close_judge(judge: Judge) -> None:
    close = getattr(judge, "close", None)
    if callable(close):
        close()


def report_errors(scored: Scored, what: str) -> None:
    """Print the judge-error summary (grouped, most frequent first)."""
    console.print(f"[bold red]{scored.judge_errors} of {len(scored)} rows got a judge error[/] — {what}")
    for text, count in list(scored.error_kinds.items())[:5]:
        console.print(f"  {count:>6} × {text}", highlight=False)


def run_judge_config(run: Path) -> JudgeConfig:
    """The judge a run directory was scored with (its ``config.json``)."""
    path = run / CONFIG
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file - --from-run needs a run directory made by `abstain eval`") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON ({exc})") from None
    judge = record.get("judge")
    if not isinstance(judge, dict):
        raise DataError(f"{path}: field 'judge' is not a judge record (a run from an older abstain?)")
    try:
        return JudgeConfig.from_record(judge)
    except ValueError as exc:
        raise DataError(f"{path}: field 'judge': {exc}") from None


def register(app: typer.Typer) -> None:
    @app.command()
    @judge_flags
    def score(
        judge: JudgeFlags,
        input: Path | None = typer.Option(None, "--input", "-i", help="Response rows (JSONL); default with "
                                          "--from-run: the run's responses.jsonl."),
        output: Path = typer.Option(..., "--output", "-o", help="Where to write scored rows (JSONL)."),
        from_run: Path | None = typer.Option(None, "--from-run", help="Rebuild the judge a run directory recorded "
                                             "in its config.json (give the judge's server with --judge-base-url)."),
        rescore: bool = typer.Option(
            False, help="Judge every row again; by default rows already in --output without a judge error are kept."
        ),
    ) -> None:
        """Parse the last \\boxed{} of each response and judge it.

        Rerunning into the same --output judges only the rows that are missing or got a judge error.
        """
        with friendly_errors():
            if from_run is not None:
                if judge.explicit():
                    raise fail(f"--from-run takes the judge from {from_run / CONFIG}; drop {', '.join(judge.explicit())}")
                judge = JudgeFlags(run_judge_config(from_run), judge.base_url, judge.api_key)
                input = input or from_run / RESPONSES
            if input is None:
                raise fail("give --input FILE (or --from-run DIR)")
            rows = read_jsonl(input, ResponseRow, key=response_key)
            judge_obj = judge.build()
            try:
                with progress_bar("scoring", len(rows)) as advance:
                    scored = score_responses(rows, judge_obj, output=output, on_batch=advance, rescore=rescore)
            finally:
                close_judge(judge_obj)
        reused = f", {scored.reused} kept from the previous output" if scored.reused else ""
        console.print(
            f"scored {len(scored)} rows -> {output} "
            f"({scored.format_errors} without a box, {scored.judge_errors} judge errors{reused})"
        )
        if scored.judge_errors:
            report_errors(scored, "they are written with judge_errors set and left out of the metric families "
                          "that need the missing field; rerun the same command to judge only those rows")
            raise typer.Exit(1)
