"""The TRL versions abstain's trainers were tested with, and the check that refuses any other before training.

TRL has no advantage hook, so :class:`~abstain.train.trainers.grpo.AbstainGRPOTrainer` overrides private methods of
TRL's ``GRPOTrainer`` and :mod:`~abstain.train.trainers.lm_head` replaces a private function of
``trl.trainer.utils``. A TRL release may rename them, change their arguments or what they return: a signature
error at the first step, or, worse, a run with other semantics. So a run starts only on a TRL inside
:data:`TESTED_TRL` (pyproject's range is the same; :func:`check_trl`, before anything is written), and the GRPO trainer
and the compact LM head only on one whose overridden names still have the signatures recorded in :data:`OVERRIDDEN`
(:func:`check_overrides`); ``tests/test_trl_guard.py`` checks the signatures and the behaviour each override relies on.

Example:
    >>> check_trl("1.16.0")
    >>> check_trl("1.17.0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: TRL 1.17.0 is installed; abstain's trainers override private parts of TRL and were tested with trl>=1.16,<1.17 only: pip install 'trl>=1.16,<1.17' ...
"""

from __future__ import annotations

import inspect
from importlib import import_module, metadata
from typing import Any

from abstain.schema import DataError

__all__ = ["OVERRIDDEN", "TESTED_TRL", "check_overrides", "check_trl", "overridden_signatures"]

#: the TRL releases the overrides were tested with (pyproject's ``trl`` range)
TESTED_TRL = ">=1.16,<1.17"

#: every private TRL name abstain overrides or replaces, with the signature it was written against
OVERRIDDEN: dict[str, str] = {
    "trl.GRPOTrainer._generate_single_turn":
        "(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False)",
    "trl.GRPOTrainer._calculate_rewards": "(self, inputs, prompts, completions, completion_ids_list)",
    "trl.GRPOTrainer._generate_and_score_completions": "(self, inputs)",
    "trl.GRPOTrainer._compute_loss": "(self, model, inputs)",
    "trl.trainer.utils._use_triton": "(device)",
}


def _lookup(dotted: str) -> Any:
    """``trl.GRPOTrainer._x`` -> the object (the longest importable module prefix, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: Any = import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        return target
    raise ImportError(dotted)


def _plain(signature: inspect.Signature) -> str:
    """A signature's parameters with defaults, without annotations (they change with typing styles)."""
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


def overridden_signatures(prefix: str = "") -> dict[str, str | None]:
    """The installed TRL's signature of each name in :data:`OVERRIDDEN` that starts with ``prefix`` (None: gone)."""
    out: dict[str, str | None] = {}
    for dotted in (name for name in OVERRIDDEN if name.startswith(prefix)):
        try:
            out[dotted] = _plain(inspect.signature(_lookup(dotted)))
        except (ImportError, AttributeError):
            out[dotted] = None
    return out


def check_trl(version: str | None = None) -> None:
    """Refuse a TRL outside :data:`TESTED_TRL` (``version``: the installed one by default), with what to install.

    Cheap (package metadata only): every run checks it before anything is written. The signatures are checked where
    the overrides are used (:func:`check_overrides`: the GRPO trainer, the compact LM head), once TRL is imported.
    """
    from packaging.specifiers import SpecifierSet

    if version is None:
        try:
            version = metadata.version("trl")
        except metadata.PackageNotFoundError:
            raise DataError(f"training needs TRL: {_HINT} (or pip install 'abstain[train]')") from None
    if version not in SpecifierSet(TESTED_TRL):
        raise DataError(f"TRL {version} is installed; abstain's trainers override private parts of TRL and were tested "
                        f"with trl{TESTED_TRL} only: {_HINT} (another release may change what they override: "
                        "abstain.train.trainers.trl_guard)")


def check_overrides(prefix: str = "") -> None:
    """Refuse a TRL whose overridden names (those starting with ``prefix``) changed their signature."""
    found = overridden_signatures(prefix)
    changed = [f"{name}{OVERRIDDEN[name]} is now {sig or 'gone'}" for name, sig in found.items() if sig != OVERRIDDEN[name]]
    if changed:
        raise DataError("the installed TRL differs from the TRL abstain was tested with: " + "; ".join(changed)
                        + f". Reinstall a released TRL: {_HINT}")


_HINT = f"pip install 'trl{TESTED_TRL}'"
