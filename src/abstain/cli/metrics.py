"""``abstain metrics``: every metric of the four protocols, with bootstrap CIs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer
from rich.table import Table

from abstain.cli.common import fail, friendly_errors, out_console, write_json
from abstain.confidence import estimator_of
from abstain.metrics import MetricsConfig, compute_metrics, headline
from abstain.metrics.confidence import confidence_metrics
from abstain.metrics.confidence_run import estimators_of
from abstain.schema import ScoredRow, read_jsonl, response_key

#: how undefined values show: UA-Bench's released code gives 0, the other families null (—)
UNDEFINED_NOTE = "ua.* as UA-Bench's code: 0 where a count is 0; other metrics: — where undefined"
#: what the within-count rows compare (abstain.metrics.within_count)
WITHIN_NOTE = ("*_within_count: the same among questions stating equally many numerals (a bin per count), "
               "0 for any rule \"refuse iff <= k numerals\"; cue.*: such rules, no model")


def value_table(metrics: dict, keys: Sequence[str], title: str, prefix: str = "") -> Table:
    """Metrics ``prefix + key`` with their CIs as a rich table (``—`` where undefined), named by ``key``."""
    table = Table(title=title, caption_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    for key in keys:
        value, ci = metrics.get(prefix + key), metrics.get(f"{prefix}{key}_ci")
        table.add_row(
            key,
            "—" if value is None else f"{value:.3f}",
            "—" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
        )
    return table


def headline_table(metrics: dict, title: str = "metrics") -> Table:
    """The headline metrics (:func:`abstain.metrics.headline`) with their CIs as a rich table."""
    table = value_table(metrics, headline(metrics), title)
    table.caption = (
        f"{metrics['n.answerable']} answerable, {metrics['n.unanswerable']} unanswerable, "
        f"{metrics['n.format_errors']} without a box, {metrics['n.judge_errors']} judge errors; "
        f"{UNDEFINED_NOTE}. {WITHIN_NOTE}"
    )
    return table


def register(app: typer.Typer) -> None:
    @app.command()
    def metrics(
        input: Path = typer.Option(..., "--input", "-i", help="Scored rows (JSONL)."),
        json_out: Path | None = typer.Option(None, "--json", help="Write all metrics here (JSON)."),
        protocol: str | None = typer.Option(None, help="Only rows of this protocol."),
        resamples: int = typer.Option(1000, help="Bootstrap resamples (0: no CIs)."),
        seed: int = typer.Option(0, help="Bootstrap seed."),
        probe: Path | None = typer.Option(
            None, help="A probe of the base model on the same items (abstain probe): adds competence.* — "
                       "over-conservativeness, prudence and the within-category AUROC of declining against its p̂."),
    ) -> None:
        """Compute UA-Bench, Abstain-R1, ACA and AbstentionBench metrics of scored rows (and conf.* where the rows
        carry confidence estimates)."""
        with friendly_errors():
            rows = read_jsonl(input, ScoredRow, key=response_key)
            protocols = sorted({r.protocol for r in rows if r.protocol})
            if protocol is not None:
                rows = [r for r in rows if r.protocol == protocol]
                if not rows:
                    raise fail(f"{input}: no rows of protocol {protocol!r} (found: {protocols or 'none'})")
            elif len(protocols) > 1:
                raise fail(f"{input} mixes protocols {protocols}; choose one with --protocol")
            result = compute_metrics(rows, MetricsConfig(resamples=resamples, seed=seed))
            for name in estimators_of(rows):  # rows of `abstain eval --confidence`: conf.<estimator>.*
                result.update(confidence_metrics(rows, name, estimator_of(name).probability, resamples, seed))
            if probe is not None:
                from abstain.metrics.competence import COMPETENCE_KEYS, competence_metrics, probed_p_hat

                found = competence_metrics(rows, probed_p_hat(probe, rows), resamples=resamples, seed=seed)
                result.update({f"competence.{key}": value for key, value in found.items()})
        if json_out is not None:
            write_json(json_out, result)
        out_console.print(headline_table(result, title=f"metrics of {input}"))
        if probe is not None:
            out_console.print(value_table(result, COMPETENCE_KEYS, f"against the probed p̂ of {probe}", "competence."))
