"""``abstain export verl``: items -> a veRL RL dataset (Parquet or JSONL), prompts from a protocol.

Example (shell)::

    abstain export verl --data train.jsonl --protocol idk --unanswerable-ratio 0.3 --seed 0 --out train.parquet

The rows never hold an evaluation question or a near-duplicate of one (:mod:`abstain.data.guard`): a source with one
is refused, naming the suite, unless ``--allow-eval-suite SUITE`` opts in (said in the output).
A veRL validation set (``data.val_files``) chooses checkpoints, which is tuning too: export it from a
synthesis seed of its own, and evaluate on the held-out suites with ``abstain eval``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from abstain.cli.common import allow_eval_suite_option, console, fail, friendly_errors, opted_in, progress_bar

__all__ = ["register"]

export_app = typer.Typer(help="Write items in another framework's dataset format.", no_args_is_help=True)


@export_app.command("verl")
def verl(
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the dataset: .parquet or .jsonl."),
    protocol: str = typer.Option(..., help="Prompt protocol: idk | attribution | clarify | aca | ..."),
    suite: str | None = typer.Option(None, help="Suite: every one is kept out of training unless --allow-eval-suite "
                                     "names it."),
    data: Path | None = typer.Option(None, help="Your own items (JSONL, interchange format) instead of --suite."),
    unanswerable_ratio: float | None = typer.Option(
        None, help="Training mix: one row per problem (an item and its twins), this share unanswerable "
                   "(the papers use 0.3). Default: every item."),
    n: int | None = typer.Option(None, help="Rows to write (default: as many as the items and the ratio allow)."),
    seed: int = typer.Option(0, help="Seed of the mix; same seed -> identical output."),
    reward: str = typer.Option("ternary", help="The reward preset veRL's compute_score will use: its always-abstain "
                               "margin on this mix is said and written beside --out (<out>.reward_profile.json)."),
    allow_eval_suite: list[str] = allow_eval_suite_option(),
) -> None:
    """Items -> veRL's RL dataset rows (data_source, prompt, ability, reward_model, extra_info)."""
    from abstain.data.guard import check_training
    from abstain.data.suites import load_custom, load_suite
    from abstain.integrations.verl.dataset import mix_items, verl_rows, write_rows
    from abstain.protocols import get_protocol

    with friendly_errors():
        if (suite is None) == (data is None):
            raise fail("give exactly one of --suite NAME or --data FILE")
        get_protocol(protocol)
        opted_in(allow_eval_suite)
        items = load_suite(suite).items if suite is not None else load_custom(data).items  # type: ignore[arg-type]
        mixed = mix_items(items, unanswerable_ratio, seed=seed, n=n)
        check_training(mixed, f"suite {suite!r}" if suite is not None else str(data), allow_eval_suite)
        with progress_bar("building veRL rows", len(mixed)) as advance:
            rows = verl_rows(mixed, protocol, on_row=advance)
        written = write_rows(rows, out)
    unanswerable = sum(r["extra_info"]["label"] == "unanswerable" for r in rows)
    console.print(f"wrote {written} rows ({unanswerable} unanswerable, protocol {protocol}) -> {out}")
    _say_profile(reward, mixed, Path(f"{out}.reward_profile.json"))


def _say_profile(preset: str, items: list, record: Path) -> None:
    """The reward's always-abstain margin on the exported mix, as ``abstain train grpo`` says it for its own."""
    import logging

    from abstain.train.rewards.presets import make_reward
    from abstain.train.rewards.profile import mix_profile, profile_message

    with friendly_errors():
        profile = mix_profile(make_reward(preset), items)
    profile.write(record)
    level, text = profile_message(profile)
    console.print(("[bold yellow]warning:[/] " if level >= logging.WARNING else "") + text, markup=True, highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
