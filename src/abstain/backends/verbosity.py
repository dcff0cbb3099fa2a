"""How much the third-party engines say: by default only their errors, so that a run shows abstain's own progress
and results; ``--verbose`` (``abstain eval``) or ``ABSTAIN_VERBOSE=1`` gives their warnings back.

vLLM reads ``VLLM_LOGGING_LEVEL`` when it is imported, transformers ``TRANSFORMERS_VERBOSITY`` and torch
``TORCH_CPP_LOG_LEVEL`` likewise: :func:`quiet_third_party` sets each (unless the user did) before they load, sets
the level of their loggers, and, unless verbose, hides the Python warnings raised in their code (vLLM's "Triton
not installed", NUMA binding, tcmalloc and chunked-prefill notices, torch's ``torch.distributed.reduce_op``
deprecation ...). abstain's own warnings and every error still show. ``abstain eval`` quiets every library of
:data:`LIBRARIES`; importing vLLM (:mod:`abstain.backends.vllm`) quiets :data:`ENGINE` only, so that a training run
that samples with vLLM keeps the warnings of its trainer.

Example:
    >>> level(verbose=False), level(verbose=True)
    ('ERROR', 'WARNING')
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Sequence

__all__ = ["ENGINE", "LIBRARIES", "VERBOSE_ENV", "is_verbose", "level", "quiet_third_party", "set_verbose"]

#: the switch, inherited by every process a run starts (``1``: the engines' warnings show)
VERBOSE_ENV = "ABSTAIN_VERBOSE"
#: vLLM and what it runs on
ENGINE = ("vllm", "torch", "triton")
#: every library whose loggers and Python warnings an evaluation keeps to errors unless verbose
LIBRARIES = (*ENGINE, "transformers", "accelerate", "peft", "trl", "datasets", "huggingface_hub")
#: library -> (the environment variable it reads when it loads, its value when quiet, when verbose)
_ENV = {
    "vllm": ("VLLM_LOGGING_LEVEL", "ERROR", "WARNING"),
    "transformers": ("TRANSFORMERS_VERBOSITY", "error", "warning"),
    "torch": ("TORCH_CPP_LOG_LEVEL", "ERROR", "WARNING"),
}
#: the values this module set, so that a later call (``--verbose`` after a quiet start) may change its own choice
_SET: dict[str, str] = {}


def is_verbose() -> bool:
    """Whether the engines' warnings should show (``ABSTAIN_VERBOSE`` set to anything but ``0`` or empty)."""
    return os.environ.get(VERBOSE_ENV, "").strip() not in ("", "0")


def set_verbose(on: bool) -> None:
    """Turn the switch on or off for this process and those it starts."""
    os.environ[VERBOSE_ENV] = "1" if on else "0"


def level(verbose: bool | None = None) -> str:
    """The logging level of the third-party libraries: ``WARNING`` when verbose, else ``ERROR``."""
    return "WARNING" if (is_verbose() if verbose is None else verbose) else "ERROR"


def quiet_third_party(libraries: Sequence[str] = LIBRARIES) -> None:
    """Set the verbosity of ``libraries`` from :func:`is_verbose`: the environment variables they read when they
    load (a value the user set is kept), their loggers, and a filter of the Python warnings raised in their code.
    Call it before they are imported; calling it again follows the switch."""
    verbose = is_verbose()
    for library in libraries:
        if library in _ENV:
            name, quiet, loud = _ENV[library]
            if name not in os.environ or os.environ[name] == _SET.get(name):
                os.environ[name] = _SET[name] = loud if verbose else quiet
        logging.getLogger(library).setLevel(level(verbose))
    if "transformers" in libraries and "transformers" in sys.modules:  # else it reads TRANSFORMERS_VERBOSITY on load
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity(logging.WARNING if verbose else logging.ERROR)
    # the filter added last is looked at first: a later call overrides an earlier one
    warnings.filterwarnings("default" if verbose else "ignore", module=rf"({'|'.join(libraries)})(\..*)?$")
