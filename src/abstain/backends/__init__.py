"""Model backends behind one interface (:class:`Backend`): ``bundled``, ``hf``, ``openai``, ``vllm``.

Build one from a spec with :func:`make_backend`. Importing this package stays light: torch and
transformers (``HFBackend``), vLLM and the HTTP client load on first use of those names.

Importing it also sets ``OMP_WAIT_POLICY=PASSIVE`` when unset and torch is not loaded yet (OpenMP
reads it once, when torch loads): on a machine whose cores are busy with other work, OpenMP threads
that spin-wait for a descheduled peer made CPU generation up to 10x slower.

Example:
    >>> from abstain.backends import GenerationConfig, make_backend
    >>> GenerationConfig(max_new_tokens=8).greedy
    True
    >>> backend = make_backend("bundled", batch_size=4)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

if "torch" not in sys.modules:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from abstain.backends.base import (
    Backend,
    GenerationConfig,
    GenerationStats,
    Message,
    MissingDependencyError,
    sample_seed,
    template_think_prefix,
)
from abstain.backends.bundled import BUNDLED_NAME, bundled_model_dir, gguf_path
from abstain.backends.registry import BACKEND_KINDS, make_backend

__all__ = [
    "BACKEND_KINDS",
    "BUNDLED_NAME",
    "Backend",
    "GenerationConfig",
    "GenerationStats",
    "HFBackend",
    "HFOptions",
    "Message",
    "MissingDependencyError",
    "OpenAIBackend",
    "VLLMBackend",
    "VLLMOptions",
    "bundled_model_dir",
    "gguf_path",
    "make_backend",
    "sample_seed",
    "template_think_prefix",
]

_LAZY = {
    "HFBackend": "abstain.backends.hf",
    "HFOptions": "abstain.backends.hf",
    "OpenAIBackend": "abstain.backends.openai",
    "VLLMBackend": "abstain.backends.vllm",
    "VLLMOptions": "abstain.backends.vllm",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'abstain.backends' has no attribute {name!r}")
