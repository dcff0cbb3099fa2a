"""Judges by name, so a run can be rebuilt from its config (``make_judge("rule")``).

Each judge module registers its own factory with :func:`register_judge`; this module imports no
concrete judge. The built-in ones (``rule``, ``llm``, ``hybrid``, ``abstentionbench``) are registered when the
:mod:`abstain.judges` package is imported — which Python always does before any of its modules.

Example:
    >>> make_judge("rule").name
    'rule'
    >>> make_judge("rules")
    Traceback (most recent call last):
    ...
    ValueError: unknown judge 'rules'; choose one of ['abstentionbench', 'hybrid', 'llm', 'rule']
"""

from __future__ import annotations

from collections.abc import Callable

from abstain.judges.base import Judge

__all__ = ["JUDGES", "make_judge", "register_judge"]

JUDGES: dict[str, Callable[..., Judge]] = {}


def register_judge(name: str) -> Callable[[Callable[..., Judge]], Callable[..., Judge]]:
    """Register a judge factory under ``name``."""

    def deco(factory: Callable[..., Judge]) -> Callable[..., Judge]:
        JUDGES[name] = factory
        return factory

    return deco


def make_judge(name: str, **options: object) -> Judge:
    """Build a registered judge by name with its options, e.g. ``make_judge("hybrid", model=...)``."""
    try:
        factory = JUDGES[name]
    except KeyError:
        raise ValueError(f"unknown judge {name!r}; choose one of {sorted(JUDGES)}") from None
    return factory(**options)
