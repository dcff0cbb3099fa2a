"""Where abstain keeps caches (dense model copies, LLM-judge answers).

``ABSTAIN_CACHE`` overrides the default ``~/.cache/abstain``.

Example:
    >>> cache_dir("models").name
    'models'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(*parts: str) -> Path:
    """A cache folder (created if missing)."""
    root = Path(os.environ.get("ABSTAIN_CACHE") or Path.home() / ".cache" / "abstain")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
