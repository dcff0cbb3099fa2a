"""``make demo``: the main job on the bundled model, offline on 2 CPU cores in a few minutes.

Runs exactly ``abstain eval --model bundled --suite quick --protocol all --out runs/demo`` with a
token budget and batch size chosen so that the 120 quick items under the four protocols (480 prompts)
finish well inside 10 minutes on 2 cores; prints the headline table and the report's path. Rerunning it resumes
(or, when finished, just re-renders the report).

Example::

    python -m abstain.demo            # the same as `make demo`
    python -m abstain.demo runs/other # another output folder
"""

from __future__ import annotations

import sys

__all__ = ["DEMO_ARGS", "main"]

#: the demo's `abstain eval` arguments (``--out`` is added by :func:`main`)
DEMO_ARGS = (
    "eval", "--model", "bundled", "--suite", "quick", "--protocol", "all",
    "--max-tokens", "32", "--batch-size", "32",
)


def main(argv: list[str] | None = None) -> None:
    """Run the demo into ``argv[0]`` (default ``runs/demo``)."""
    from abstain.cli import app

    args = sys.argv[1:] if argv is None else argv
    out = args[0] if args else "runs/demo"
    app([*DEMO_ARGS, "--out", out], prog_name="abstain")


if __name__ == "__main__":
    main()
