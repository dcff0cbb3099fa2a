"""``make demo``: score the shipped responses file and print the headline metrics.

(The evaluation runner replaces this with a full run of the bundled model.)
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from abstain.cli import app


def main() -> None:
    src = resources.files("abstain") / "data" / "demo" / "responses.jsonl"
    out = Path("runs/demo")
    out.mkdir(parents=True, exist_ok=True)
    app(["score", "-i", str(src), "-o", str(out / "scored.jsonl")], standalone_mode=False)
    app(["metrics", "-i", str(out / "scored.jsonl"), "--json", str(out / "metrics.json")], standalone_mode=False)
    print(f"metrics: {out / 'metrics.json'}")


if __name__ == "__main__":
    main()
