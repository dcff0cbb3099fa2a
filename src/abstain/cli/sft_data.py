"""``abstain sft-data``: verifiable SFT rows (prompt/completion) from an item file, straight from synthesis,
or the Abstain-R1 authors' Abstain-CoT set (research use)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from abstain.cli.common import allow_eval_suite_option, console, fail, friendly_errors, opted_in, out_console, progress_bar

__all__ = ["kinds_table", "register"]


def kinds_table(rows: list[Any], lengths: list[int] | None, title: str) -> Table:
    """Rows per target kind and, when measured, their completion lengths in tokens."""
    from abstain.train.data.sft_data import length_summary

    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_kind[row.target_kind].append(lengths[i] if lengths is not None else 0)
    table = Table(title=title)
    table.add_column("target kind")
    table.add_column("rows", justify="right")
    if lengths is not None:
        for name in ("min", "median", "p90", "max"):
            table.add_column(f"tokens {name}", justify="right")
    groups = sorted(by_kind.items())
    if lengths is not None and len(groups) > 1:
        groups.append(("all", list(lengths)))
    for kind, values in groups:
        cells = [kind, str(len(values))]
        if lengths is not None:
            s = length_summary(values)
            cells += [f"{s[k]:g}" for k in ("min", "median", "p90", "max")]
        table.add_row(*cells)
    if lengths is not None:
        table.caption = "completion tokens with the bundled SmolLM2 tokenizer"
    return table


def register(app: typer.Typer) -> None:
    @app.command("sft-data")
    def sft_data(
        out: Path = typer.Option(..., "--out", "-o", help="Where to write the SFT rows (JSONL)."),
        protocol: str = typer.Option(..., "--protocol", "-p",
                                     help="attribution | idk | clarify | aca | abstention_only (the eval format)."),
        data: Path | None = typer.Option(None, help="Items (interchange JSONL; certified synthesis has graphs)."),
        synth: int | None = typer.Option(None, help="Instead of --data: a training mix of N rows drawn from synthesis."),
        unanswerable_ratio: float = typer.Option(0.3, help="--synth: share of twins among missing-premise rows."),
        hard_ratio: float = typer.Option(0.1, help="--synth: share of hard variants among all rows."),
        pair_twins: bool = typer.Option(False, help="--synth: add each twin's answerable original too."),
        abstain_cot: bool = typer.Option(False, "--abstain-cot",
                                         help="Instead of --data: Abstain-R1's Abstain-CoT set (research use; clarify)."),
        cot_subsets: str | None = typer.Option(None, help="--abstain-cot: comma-separated subsets (default: all; "
                                                "their evaluation questions are left out and counted)."),
        box_answers: bool = typer.Option(False, help="--abstain-cot: box the answerable completions' answers."),
        aca_mix: str = typer.Option("ELICIT=0.4,COND=0.3,ABS=0.3", help="aca: shares of the twins' behaviors."),
        seed: int = typer.Option(1, help="Seed of --synth and of the aca assignment (never the held-out seed)."),
        verbosity: str = typer.Option("normal", help="short | normal | long traces."),
        names: str = typer.Option("short", help="Quantities named short ('the blanket') or noun ('the price of ...')."),
        hard: str = typer.Option("auto", help="Hard variants: auto | abstain | solve."),
        quote: bool = typer.Option(False, help="Each check line first quotes the sentence it reads (longer)."),
        no_graph: str = typer.Option("error", help="Items without a graph: error | plain (a target without a trace)."),
        on_fail: str = typer.Option("error", help="A target the scorer does not confirm: error | drop (counted)."),
        tokens: bool = typer.Option(True, help="Measure completion lengths with the bundled tokenizer."),
        allow_eval_suite: list[str] = allow_eval_suite_option(),
    ) -> None:
        """Build verifiable SFT targets, score every one with abstain's scorer, write prompt/completion rows."""
        with friendly_errors():
            from abstain.schema import Item, read_jsonl
            from abstain.train.data.sft_data import SFTConfig, build_sft, parse_aca_mix
            from abstain.train.data.targets.build import TargetConfig

            if (data is not None) + (synth is not None) + abstain_cot != 1:
                raise fail("give exactly one of --data FILE, --synth N or --abstain-cot")
            opted_in(allow_eval_suite)
            if abstain_cot:
                _abstain_cot(out, protocol, cot_subsets, box_answers, tokens, tuple(allow_eval_suite))
                return
            config = SFTConfig(
                protocol=protocol, aca_mix=parse_aca_mix(aca_mix), seed=seed, on_fail=on_fail,  # type: ignore[arg-type]
                targets=TargetConfig(verbosity=verbosity, names=names, hard=hard, quote=quote, no_graph=no_graph),  # type: ignore[arg-type]
            )
            if data is not None:
                from abstain.data.guard import check_training

                items = read_jsonl(data, Item)
                source = str(data)
                check_training(items, source, allow_eval_suite)
            else:
                from abstain.train.data.mix import MixConfig, training_items

                mix = MixConfig(n=synth, seed=seed, unanswerable_ratio=unanswerable_ratio, hard_ratio=hard_ratio,
                                pair_twins=pair_twins)
                with progress_bar("synthesising the training mix", synth) as advance:
                    items = training_items(mix, on_item=advance)
                source = f"synthesis (seed {seed})"
            with progress_bar("building and scoring targets", len(items)) as advance:
                built = build_sft(items, config, on_progress=advance)
            written = _write(out, built.rows, tokens, f"SFT targets ({protocol}) from {source}")
        if built.dropped:
            console.print(f"[yellow]dropped {len(built.dropped)} items[/] (first: {built.dropped[0][0]}: "
                          f"{built.dropped[0][1]})", highlight=False)
        console.print(f"wrote {written} rows, every target confirmed by abstain's scorer -> {out}")


def _write(out: Path, rows: list[Any], tokens: bool, title: str) -> int:
    """Write the rows, then print their kinds (and completion token lengths with ``tokens``)."""
    from abstain.train.data.sft_data import token_lengths, write_sft

    written = write_sft(out, rows)
    lengths = token_lengths([r.completion[0]["content"] for r in rows]) if tokens and rows else None
    out_console.print(kinds_table(rows, lengths, title))
    return written


def _abstain_cot(out: Path, protocol: str, subsets: str | None, box_answers: bool, tokens: bool,
                 allow: tuple[str, ...]) -> None:
    from abstain.train.data.abstain_cot import ABSTAIN_COT_NOTICE, load_abstain_cot

    if protocol != "clarify":
        raise fail("--abstain-cot is written in Abstain-R1's format: use --protocol clarify")
    chosen = tuple(s.strip() for s in subsets.split(",") if s.strip()) if subsets else None
    cot = load_abstain_cot(chosen, box_answers=box_answers, allow=allow)
    if cot.guard is not None and cot.guard.removed:
        console.print(f"left out {cot.guard.summary()} (evaluation questions: --allow-eval-suite SUITE trains on "
                      "them anyway)", highlight=False)
    written = _write(out, cot.rows, tokens, "Abstain-CoT (clarify)")
    console.print(f"[yellow]{ABSTAIN_COT_NOTICE}[/]", highlight=False)
    if cot.inconsistent:
        console.print(f"{len(cot.inconsistent)} completions are not the decision their label says under abstain's "
                      f"scorer (kept as the authors wrote them; first: {cot.inconsistent[0]})", highlight=False)
    console.print(f"wrote {written} rows -> {out}")
