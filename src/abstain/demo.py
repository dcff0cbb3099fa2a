"""``make demo``: the bundled model before and after abstain's CPU training, side by side, offline.

Evaluates the bundled SmolLM2-135M (``bundled``) and the same model with the shipped ``cpu-demo`` LoRA
adapter (``bundled-abstain``: the cold-start SFT stage of the ``cpu-demo`` recipe, see its card) on the
``quick`` suite under the ``idk`` protocol, greedy, with the same token budget; then renders both into one
comparison report and prints their headline numbers next to each other. Each run resumes when rerun (or,
when finished, only re-renders).

Example::

    python -m abstain.demo            # the same as `make demo`
    python -m abstain.demo runs/other # another output folder
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


def main(argv: list[str] | None = None) -> None:
    """Run the demo into ``argv[0]`` (default ``runs/demo``)."""
    from abstain.cli import app

    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "runs/demo")
    for label, spec in MODELS:  # without standalone mode typer returns a failed run's exit code: stop there
        code = app([*DEMO_ARGS, "--model", spec, "--out", str(out / label)], prog_name="abstain",
                   standalone_mode=False)
        if code:
            sys.exit(code)
    app(["compare", *(str(out / label) for label, _ in MODELS), *(a for label, _ in MODELS for a in ("--label", label)),
         "--out", str(out)], prog_name="abstain")


if __name__ == "__main__":
    main()
