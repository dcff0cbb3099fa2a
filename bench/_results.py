"""Shared tail of the bench scripts: print the figures and keep them in bench/results/<name>.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def report(name: str, result: dict[str, Any], echo: bool = True) -> None:
    """Write ``result`` to ``bench/results/<name>.json`` (gitignored); ``echo`` also prints it."""
    text = json.dumps(result, indent=2)
    if echo:
        print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(text + "\n")
