"""``make demo``: the bundled model before and after abstain's CPU training, side by side, offline.

Evaluates the bundled SmolLM2-135M (``bundled``) and the same model with the shipped ``cpu-demo`` LoRA
adapter (``bundled-abstain``: the ``cpu-demo-sft-3x`` recipe, the validation pick, see its card) on the
``quick`` suite under the ``idk`` protocol, greedy, with the same token budget; then renders both into one
comparison report and prints their headline numbers next to each other. Each run resumes when rerun (or,
when finished, only re-renders). Generation runs on vLLM's CPU engine (``vllm:bundled``, eager) when it is
installed (``make demo`` installs it) and runs on this CPU — its greedy text is the transformers backend's —
else on transformers.

Example::

    python -m abstain.cli.demo            # the same as `make demo`
    python -m abstain.cli.demo runs/other # another output folder
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["DEMO_ARGS", "MODELS", "main"]

#: the arguments of each model's `abstain eval` (``--model`` and ``--out`` are added by :func:`main`)
DEMO_ARGS = (
    "eval", "--suite", "quick", "--protocol", "idk", "--max-tokens", "160", "--batch-size", "40",
)
#: (label, model spec) of the two runs
MODELS = (("base", "bundled"), ("trained", "bundled-abstain"))
#: vLLM's engine in eager mode: the same greedy text as transformers, ~3.9x its tokens/s on 2 cores, 9 s to start
VLLM_ARGS = ("--backend-option", "eager=true")


def engine() -> tuple[str, tuple[str, ...]]:
    """The spec prefix and extra arguments of the demo's runs: ``vllm:`` (eager) when vLLM runs here
    (``make install-vllm``), else transformers — with a one-line notice saying why."""
    from abstain.backends.vllm import unavailable_reason

    reason = unavailable_reason()
    if reason is None:
        return "vllm:", VLLM_ARGS
    print(f"the demo runs on transformers: {reason.splitlines()[0]}", file=sys.stderr)
    return "", ()


def main(argv: list[str] | None = None) -> None:
    """Run the demo into ``argv[0]`` (default ``runs/demo``)."""
    from abstain.cli import app

    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "runs/demo")
    prefix, extra = engine()
    for label, spec in MODELS:  # without standalone mode typer returns a failed run's exit code: stop there
        code = app([*DEMO_ARGS, *extra, "--model", prefix + spec, "--out", str(out / label)], prog_name="abstain",
                   standalone_mode=False)
        if code:
            sys.exit(code)
    app(["compare", *(str(out / label) for label, _ in MODELS), *(a for label, _ in MODELS for a in ("--label", label)),
         "--out", str(out)], prog_name="abstain")


if __name__ == "__main__":
    main()
