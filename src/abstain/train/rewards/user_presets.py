"""Reward presets of your own: the modules a GRPO recipe's ``reward_modules`` names, imported before its reward is checked.

A module registers its presets with :func:`abstain.train.rewards.presets.register_preset` when it is imported.
``reward_modules: [my_rewards.py]`` in a recipe imports it wherever the recipe loads — ``abstain train grpo``, each
stage of a pipeline, every process a launcher starts — so ``reward: my_preset`` resolves there
(docs/how-to/own-reward.md). An entry is a ``.py`` file (a relative one is looked up beside the recipe first, as a
data ``file:`` is) or the name of a module Python can import (``mylab.rewards``). A file is imported once per process.

Example:
    >>> import_reward_modules(["no_such_dir/my_rewards.py"])
    Traceback (most recent call last):
    ...
    ValueError: reward_modules: no such file no_such_dir/my_rewards.py
    >>> import_reward_modules(["mylab.no_such_rewards"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: reward_modules: cannot import 'mylab.no_such_rewards' (No module named 'mylab'); ...
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["import_reward_modules"]


def import_reward_modules(entries: Sequence[str]) -> None:
    """Import each ``.py`` file or module name of ``entries`` (its ``register_preset`` calls run)."""
    for entry in entries:
        if entry.endswith(".py"):
            _import_file(Path(entry).expanduser())
            continue
        try:
            importlib.import_module(entry)
        except ModuleNotFoundError as exc:
            raise ValueError(f"reward_modules: cannot import {entry!r} ({exc}); give a .py file or a module on "
                             "Python's path") from None


def _import_file(path: Path) -> None:
    if not path.is_file():
        raise ValueError(f"reward_modules: no such file {path}")
    resolved = path.resolve()
    # one module per file, named after its path: a second recipe naming the same file does not run it again
    name = f"abstain_reward_module_{resolved.stem}_{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, resolved)
    assert spec is not None and spec.loader is not None  # a .py file always has a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
