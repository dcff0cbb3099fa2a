"""``abstain probe`` (sample k answers per item: p̂ and out-of-knowledge) and ``abstain probe-data``
(R-Tuning / RFT / DPO rows from a probe)."""

from __future__ import annotations

from pathlib import Path

import typer

from abstain.cli.common import allow_eval_suite_option, console, fail, friendly_errors, opted_in, out_console
from abstain.cli.confirm import confirm_remote_run, yes_option
from abstain.cli.suites import suite_help
from abstain.cli.judge_flags import JudgeFlags, judge_flags

__all__ = ["register"]

KINDS = ("rtuning", "rft", "dpo", "attribution")


def register(app: typer.Typer) -> None:
    @app.command()
    @judge_flags
    def probe(
        judge: JudgeFlags,
        model: str = typer.Option(..., "--model", "-m", help="Backend: bundled, hf:<path>, openai:<model>, vllm:<model>."),
        out: Path = typer.Option(..., "--out", "-o", help="Probe directory (an eval run + probe.jsonl; rerun to resume)."),
        protocol: str = typer.Option(..., "--protocol", "-p", help="The one protocol to probe (and later train) in."),
        data: Path | None = typer.Option(None, help="Items (interchange JSONL) instead of --suite."),
        suite: str | None = typer.Option(None, help=suite_help()),
        k: int = typer.Option(8, "--k", help="Samples per item."),
        temperature: float = typer.Option(1.0, help="Sampling temperature (> 0)."),
        top_p: float = typer.Option(1.0, help="Nucleus sampling mass."),
        max_tokens: int = typer.Option(256, help="Generation budget per sample."),
        seed: int = typer.Option(0, help="Seed of the --limit subset and of sampling."),
        limit: int | None = typer.Option(None, help="Probe a balanced subset of N items."),
        batch_size: int = typer.Option(8, help="Prompts per generate call."),
        base_url: str | None = typer.Option(None, help="OpenAI-compatible server of the probed model."),
        confidence: list[str] = typer.Option(
            [], "--confidence", help="Confidence estimators per sample, as in abstain eval (e.g. consistency:4, "
                                     "p_true): probe.jsonl keeps their mean per item beside p̂."),
        backend_option: list[str] = typer.Option(
            [], "--backend-option", help="key=value for the backend, not recorded (how fast, not what), as in "
                                         "abstain eval: e.g. eager=true"),
        yes: bool = yes_option(),
    ) -> None:
        """Probe a model's knowledge boundary: k samples per item, p̂ per item, out of knowledge when none is correct."""
        from abstain.cli.eval import backend_options, run_resumable
        from abstain.probing.run import ProbeConfig, run_probe

        with friendly_errors():
            config = ProbeConfig(model=model, protocol=protocol, suite=suite, data=str(data) if data else None, k=k,
                                 temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed, limit=limit,
                                 batch_size=batch_size, judge=judge.config, base_url=base_url,
                                 judge_base_url=judge.base_url,
                                 confidence=tuple(v for c in confidence for v in c.split(",") if v.strip()))
            confirm_remote_run(config.eval_config(), out, yes)
            result = run_resumable(run_probe, config, out, judge, backend_options(backend_option))
        rows = result.rows
        answerable = [r for r in rows if r.label == "answerable" and r.p_hat is not None]
        ook = sum(r.ook is True for r in answerable)
        mean = sum(r.p_hat for r in answerable) / len(answerable) if answerable else float("nan")  # type: ignore[misc]
        out_console.print(f"{len(rows)} items x {k} samples: {len(answerable)} answerable, mean p̂ {mean:.3f}, "
                          f"{ook} out of knowledge (no correct sample)")
        console.print(f"probe -> {result.path}")

    @app.command("probe-data")
    def probe_data(
        probe_path: Path = typer.Option(..., "--probe", help="A probe.jsonl or probe directory (abstain probe)."),
        kind: str = typer.Option(..., help="rtuning | rft | dpo | attribution"),
        data: Path | None = typer.Option(None, "--data", help="attribution: the items (both labels) to build rows "
                                         "for; their answerable ones must be in the probe (default: the probe's)."),
        target_protocol: str = typer.Option("attribution", "--target-protocol", help="attribution: the targets' "
                                            "protocol, attribution or idk (both abstentions as I don't know)."),
        out: Path = typer.Option(..., "--out", "-o", help="Where to write the rows (JSONL)."),
        known_target: str = typer.Option("sample", help="rtuning: a known item keeps a correct sample or the reference."),
        rft_refusals: bool = typer.Option(True, help="rft: keep refusals of unanswerable items too."),
        pairs_per_item: int = typer.Option(1, help="dpo: at most this many pairs per item."),
        on_fail: str = typer.Option("error", help="A target the scorer does not confirm: error | drop."),
        allow_eval_suite: list[str] = allow_eval_suite_option(),
    ) -> None:
        """Build R-Tuning / RFT SFT rows or DPO pairs from a probe, every target confirmed by abstain's scorer."""
        with friendly_errors():
            from abstain.data.guard import check_training
            from abstain.records.probes import read_probe
            from abstain.schema import write_jsonl
            from abstain.train.data.probe_data import ProbeDataConfig, dpo_rows, rft_rows, rtuning_rows

            if kind not in KINDS:
                raise fail(f"--kind must be one of {', '.join(KINDS)} (got {kind!r})")
            allow = tuple(allow_eval_suite)
            opted_in(allow)
            config = ProbeDataConfig(known_target=known_target, rft_refusals=rft_refusals,  # type: ignore[arg-type]
                                     pairs_per_item=pairs_per_item, on_fail=on_fail,  # type: ignore[arg-type]
                                     allow_eval_suites=allow)
            rows = read_probe(probe_path)
            check_training(rows, str(probe_path), allow)
            if kind == "attribution":
                from abstain.schema import Item, read_jsonl
                from abstain.train.data.attribution_data import AttributionConfig, attribution_rows

                items = read_jsonl(data, Item) if data is not None else [r.item() for r in rows]
                build = attribution_rows(items, rows, AttributionConfig(on_fail=on_fail,  # type: ignore[arg-type]
                                                                       protocol=target_protocol,  # type: ignore[arg-type]
                                                                       allow_eval_suites=allow))
            else:
                build = {"rtuning": rtuning_rows, "rft": rft_rows, "dpo": dpo_rows}[kind](rows, config)
            written = write_jsonl(out, build.rows)
        counts = ", ".join(f"{n} {name}" for name, n in build.counts.items()) or "nothing"
        out_console.print(f"{kind}: {written} rows from {len(rows)} probed items ({counts})")
        if build.dropped:
            console.print(f"[yellow]left out {len(build.dropped)} items[/] (first: {build.dropped[0][0]}: "
                          f"{build.dropped[0][1]})", highlight=False)
        console.print(f"wrote -> {out}")
