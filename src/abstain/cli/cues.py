"""``abstain cues``: the shortcut audit of an item file, a suite or a recipe's training mix.

Example (shell)::

    abstain cues runs/tour/pairs.jsonl                 # an item / response / scored file
    abstain cues --suite transfer --json cues.json     # a suite
    abstain cues --recipe cpu-demo-sft                 # the training mix a recipe draws

How much of the data a surface rule solves without reading the problem (:mod:`abstain.data.cues`): per dataset and
over all items, the AUC of the numeral count, the length and the vague-quantity words for the label
``unanswerable``, a cross-validated logistic regression on every surface feature together, and the cue
baselines ("refuse iff <= 2 numbers", the best numeral threshold), each with a cluster-bootstrap 95% CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from abstain.cli.common import fail, friendly_errors, out_console, write_json

__all__ = ["audit_table", "load_cue_items", "register"]

COLUMNS = (("number_count_auc", "numerals AUC"), ("length_auc", "length AUC"), ("vague_auc", "vague-words AUC"),
           ("logistic_auc", "logistic AUC (CV)"), ("cue_le2_discrimination", "cue: <= 2 numerals"),
           ("cue_best_discrimination", "cue: best threshold"))


def load_cue_items(file: Path | None, suite: str | None, recipe: str | None) -> tuple[str, list[Any]]:
    """(what was read, its items: one per id) from exactly one of a file, a suite or a recipe's data."""
    from abstain.schema import DataError, Item, read_jsonl

    given = [name for name, value in (("FILE", file), ("--suite", suite), ("--recipe", recipe)) if value is not None]
    if len(given) != 1:
        raise fail(f"give exactly one of FILE, --suite or --recipe (got {', '.join(given) or 'none'})")
    if file is not None:
        items, source = read_jsonl(file, Item), str(file)
    elif suite is not None:
        from abstain.data.suites import load_suite

        items, source = list(load_suite(suite).items), f"suite {suite}"
    else:
        from abstain.train.recipe import load_recipe

        loaded = load_recipe(str(recipe))
        data = getattr(loaded, "data", None)
        if data is None:
            raise DataError(f"recipe {recipe!r} has no data: block (a pipeline? audit one of its stages)")
        from abstain.train.data.build import load_items

        items, source = load_items(data, loaded.allow_eval_suites), f"recipe {recipe} (its training data)"
    unique = list({item.id: item for item in items}.values())  # the samples of an item count once
    if not unique:
        raise DataError(f"{source}: no items")
    return source, unique


def _value(block: dict[str, Any], key: str) -> str:
    value = block.get(key)
    if value is None:
        return "—"
    text = f"{value:+.2f}" if key.startswith("cue_") else f"{value:.2f}"
    if key == "cue_best_discrimination" and block.get("cue_best_threshold") is not None:
        text += f" (t={block['cue_best_threshold']})"
    return text


def _ci(block: dict[str, Any], key: str) -> str:
    ci = block.get(f"{key}_ci")
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci and block.get(key) is not None else ""


def _cell(block: dict[str, Any], key: str) -> str:
    return " ".join(part for part in (_value(block, key), _ci(block, key)) if part)


def _counts(block: dict[str, Any]) -> tuple[str, str]:
    means = block["mean_numerals"]
    return (f"{block['n_answerable']} / {block['n_unanswerable']}",
            " / ".join("—" if means[k] is None else f"{means[k]:.1f}" for k in ("answerable", "unanswerable")))


CAPTION = ("AUC for the label unanswerable (0.5: the cue says nothing): fewer numerals, shorter, more vague words "
           "(some, several, a few, certain, other); logistic = all surface features, 5-fold CV, a twin and its "
           "original in one fold. cue = discrimination (U-Ref - A-FU) of refusing iff <= t numerals. 95% "
           "cluster-bootstrap CIs.")


def _wide_table(report: dict[str, Any], title: str) -> Table:
    table = Table(title=title, caption=CAPTION, caption_justify="left")
    table.add_column("dataset")
    table.add_column("A / U", justify="right")
    table.add_column("numerals A / U", justify="right")
    for _, header in COLUMNS:
        table.add_column(header, justify="right")
    for name, block in _summary(report):
        table.add_row(name, *_counts(block), *(_cell(block, key) for key, _ in COLUMNS))
    return table


def _long_table(report: dict[str, Any], title: str) -> Table:
    table = Table(title=title, caption=CAPTION, caption_justify="left")
    table.add_column("dataset", overflow="fold")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    for index, (name, block) in enumerate(_summary(report)):
        if index:
            table.add_section()
        items, means = _counts(block)
        table.add_row(name, "items A / U", items, "")
        table.add_row("", "mean numerals A / U", means, "")
        for key, header in COLUMNS:
            table.add_row("", header, _value(block, key), _ci(block, key))
    return table


def _summary(report: dict[str, Any]) -> list[tuple[str, Any]]:
    from abstain.data.cues import summary_rows

    return summary_rows(report)


def audit_table(report: dict[str, Any], title: str, width: int | None = None) -> Table:
    """The audit as a rich table: a row per dataset, then ``all``; where that is wider than ``width``
    characters, a row per (dataset, measure) instead, which stays readable at 80 columns."""
    table = _wide_table(report, title)
    if width is None:
        return table
    from rich.console import Console

    if Console(width=10_000).measure(table).maximum <= width:
        return table
    return _long_table(report, title)


def register(app: typer.Typer) -> None:
    @app.command()
    def cues(
        file: Path | None = typer.Argument(None, help="Items, responses or scored rows (JSONL)."),
        suite: str | None = typer.Option(None, help="A suite of `abstain eval` instead of FILE."),
        recipe: str | None = typer.Option(None, help="A training recipe (name or YAML): audit the data it trains on."),
        json_out: Path | None = typer.Option(None, "--json", help="Write the audit here (JSON)."),
        resamples: int = typer.Option(1000, help="Bootstrap resamples of the 95% CIs (0: none)."),
        seed: int = typer.Option(0, help="Bootstrap and cross-validation seed."),
    ) -> None:
        """How much of a benchmark a surface shortcut solves: numeral count, length, vague words, all together."""
        from abstain.data.cues import AuditConfig, audit

        with friendly_errors():
            source, items = load_cue_items(file, suite, recipe)
            report = audit(items, AuditConfig(resamples=resamples, seed=seed))
        if json_out is not None:
            write_json(json_out, {"source": source, **report})
        out_console.print(audit_table(report, f"surface cues of {source}", width=out_console.width))
