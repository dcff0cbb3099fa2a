"""``abstain synth``: certified missing-premise pairs, hard variants, the arithmetic ladder, the LLM rewrite pipeline
and the held-out benchmark, written as interchange JSONL (atomically, with a progress bar)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import typer

from abstain.cli.common import console, fail, friendly_errors, progress_bar
from abstain.schema import Item, write_jsonl

__all__ = ["register"]

KINDS = ("missing-premise", "hard", "ladder", "llm-rewrite", "heldout")


def _split(values: Sequence[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _counted(rows: Iterable[Item], advance) -> Iterator[Item]:  # type: ignore[no-untyped-def]
    for row in rows:
        advance(1)
        yield row


def register(app: typer.Typer) -> None:
    @app.command()
    def synth(
        kind: str = typer.Option(..., help="missing-premise | hard | ladder | llm-rewrite | heldout"),
        out: Path = typer.Option(..., "--out", "-o", help="Where to write the items (JSONL)."),
        n: int | None = typer.Option(None, help="Rows to write (llm-rewrite: source problems to rewrite; ladder: "
                                                "answerable items per rung, each with its twin)."),
        seed: int = typer.Option(0, help="Same seed -> byte-identical output."),
        unanswerable_ratio: float | None = typer.Option(
            None, help="Training mix: one row per problem, this share as twins (the papers use 0.3). "
                       "Default: complete pairs (original + twin)."),
        themes: list[str] | None = typer.Option(None, help="Themes to draw from (repeat or comma-separate)."),
        perturbations: list[str] | None = typer.Option(
            None, help="Perturbation types, round robin (default: all six)."),
        model: str | None = typer.Option(None, "--model", "-m", help="llm-rewrite: backend spec, e.g. bundled."),
        base_url: str | None = typer.Option(None, help="llm-rewrite: OpenAI-compatible server (openai:<model>)."),
        source: Path | None = typer.Option(
            None, help="llm-rewrite: source problems (GSM8K JSONL or interchange items); default shipped GSM8K."),
        attempts: Path | None = typer.Option(
            None, help="llm-rewrite: where to log every attempt (default: OUT with .attempts.jsonl)."),
        max_new_tokens: int = typer.Option(384, help="llm-rewrite: generation budget per stage."),
        temperature: float = typer.Option(0.7, help="llm-rewrite: sampling temperature of the rewriting stages."),
        batch_size: int = typer.Option(8, help="llm-rewrite: prompts per generate call."),
        split: str = typer.Option("train", help="ladder: train | validation | test (disjoint questions, shared "
                                                  "templates) | transfer (templates never in the others)."),
        rungs: list[str] | None = typer.Option(None, help="ladder: rungs to draw (repeat or comma-separate; default "
                                                         "all, easiest first)."),
        cue_match: bool = typer.Option(
            False, "--cue-match", help="missing-premise: each twin states as many numbers and vague words as its "
                                       "original and is as long (+-10%): one filler sentence on both sides."),
    ) -> None:
        """Generate synthetic items: certified missing-premise pairs, hard variants or LLM rewrites."""
        with friendly_errors():
            if kind not in KINDS:
                raise fail(f"--kind must be one of {', '.join(KINDS)} (got {kind!r})")
            theme_list, operator_list = _split(themes), _split(perturbations)
            if kind != "ladder" and (split != "train" or rungs):
                raise fail("--split and --rungs apply to --kind ladder")
            if kind == "heldout":
                _heldout(out, n, seed, unanswerable_ratio, theme_list)
                return
            if n is None:
                raise fail("--n is required")
            if kind == "llm-rewrite":
                _llm_rewrite(out, n, seed, model, base_url, source, attempts, max_new_tokens, temperature,
                             batch_size, unanswerable_ratio, operator_list)
                return
            if kind == "hard":
                if unanswerable_ratio is not None or operator_list:
                    raise fail("--unanswerable-ratio and --perturbations do not apply to --kind hard")
                _hard(out, n, seed, theme_list)
                return
            if kind == "ladder":
                if unanswerable_ratio is not None or operator_list or theme_list:
                    raise fail("--unanswerable-ratio, --perturbations and --themes do not apply to --kind ladder")
                _ladder(out, n, seed, split, _split(rungs))
                return
            if cue_match and kind != "missing-premise":
                raise fail("--cue-match applies to --kind missing-premise")
            _missing_premise(out, n, seed, unanswerable_ratio, theme_list, operator_list, cue_match)


def _missing_premise(out: Path, n: int, seed: int, ratio: float | None, themes: tuple[str, ...] | None,
                     operators: tuple[str, ...] | None, cue_match: bool = False) -> None:
    from abstain.synth import SynthConfig, generate_missing_premise, heldout_questions

    options = {"themes": themes} if themes else {}
    if operators:
        options["operators"] = operators
    cfg = SynthConfig(n=n, seed=seed, unanswerable_ratio=ratio, exclude_questions=heldout_questions(),
                      cue_match=cue_match, **options)
    with progress_bar("synthesising missing-premise rows", n) as advance:
        written = write_jsonl(out, _counted(generate_missing_premise(cfg), advance))
    console.print(f"wrote {written} certified rows -> {out}")


def _hard(out: Path, n: int, seed: int, themes: tuple[str, ...] | None) -> None:
    from abstain.synth import HardConfig, generate_hard

    cfg = HardConfig(n=n, seed=seed, **({"themes": themes} if themes else {}))
    with progress_bar("synthesising hard variants", n) as advance:
        written = write_jsonl(out, _counted(generate_hard(cfg), advance))
    console.print(f"wrote {written} certified hard items -> {out}")


def _ladder(out: Path, n: int, seed: int, split: str, rungs: tuple[str, ...] | None) -> None:
    from abstain.synth.ladder import LadderConfig, generate_ladder

    cfg = LadderConfig(n_per_rung=n, seed=seed, split=split, **({"rungs": rungs} if rungs else {}))
    with progress_bar(f"synthesising the ladder ({split})", 2 * n * len(cfg.rungs)) as advance:
        written = write_jsonl(out, _counted(generate_ladder(cfg), advance))
    console.print(f"wrote {written} ladder rows ({split}, {len(cfg.rungs)} rungs, answerable + twin) -> {out}")


def _heldout(out: Path, n: int | None, seed: int, ratio: float | None, themes: tuple[str, ...] | None) -> None:
    from abstain.synth.heldout import HELDOUT_HARD, HELDOUT_PAIRS_PER_OPERATOR, HELDOUT_SEED, iter_heldout
    from abstain.synth.perturb import OPERATORS

    if n is not None or seed not in (0, HELDOUT_SEED) or ratio is not None or themes:
        raise fail("--kind heldout is fixed (seed, size, themes); it takes only --out")
    total = 2 * HELDOUT_PAIRS_PER_OPERATOR * len(OPERATORS) + HELDOUT_HARD
    with progress_bar("building the held-out benchmark", total) as advance:
        written = write_jsonl(out, _counted(iter_heldout(), advance))
    console.print(f"wrote {written} held-out rows (seed {HELDOUT_SEED}) -> {out}")


def _llm_rewrite(out: Path, n: int, seed: int, model: str | None, base_url: str | None, source: Path | None,
                 attempts: Path | None, max_new_tokens: int, temperature: float, batch_size: int,
                 ratio: float | None, operators: tuple[str, ...] | None) -> None:
    from abstain.synth.llm_pipeline import PipelineConfig, load_sources, rewrite_file

    if model is None:
        raise fail("--kind llm-rewrite needs --model (e.g. bundled, hf:<path>, openai:<model>)")
    sources = load_sources(source, n)
    options = {"operators": operators} if operators else {}
    cfg = PipelineConfig(seed=seed, max_new_tokens=max_new_tokens, temperature=temperature,
                         batch_size=batch_size, unanswerable_ratio=ratio, **options)
    from abstain.backends.registry import make_backend

    backend = make_backend(model, **({"base_url": base_url} if base_url else {}))
    log_path = attempts or out.with_name(out.name.removesuffix(".jsonl") + ".attempts.jsonl")
    try:
        with progress_bar("rewriting source problems", len(sources)) as advance:
            summary = rewrite_file(sources, backend, cfg, out, log_path, on_done=advance)
    finally:
        backend.close()
    console.print(
        f"{summary.accepted} of {summary.sources} source problems gave a validated variant "
        f"({summary.attempts} attempts) -> {out}; every attempt -> {log_path}"
    )
