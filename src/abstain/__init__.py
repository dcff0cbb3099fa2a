"""abstain: measure and train when a language model should not simply answer."""

from __future__ import annotations

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("abstain")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
