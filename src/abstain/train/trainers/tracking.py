"""Experiment tracking: a recipe's ``report_to`` checked before anything is written, TensorBoard's files in the run.

transformers' Trainer reports every logged step — TRL's metrics, abstain's ``abstain/...`` and validation's
``eval_...`` — to the trackers a recipe's ``report_to`` names (``tensorboard``, ``wandb``, ``mlflow``, ...), from the
main process only, under the recipe's ``run_name`` (default: the run folder's name). :func:`check_report_to` refuses a
tracker transformers does not know or whose package is not installed, before the run folder is written or a model
loads (the Trainer would fail only once it is built). :func:`place_tensorboard` puts TensorBoard's event files in
``<run folder>/tensorboard`` (``TENSORBOARD_LOGGING_DIR`` still wins, as in transformers); W&B writes to
``./wandb`` (``WANDB_DIR``), and ``WANDB_MODE=offline`` keeps it off the network (``wandb sync`` uploads it later).

Example:
    >>> check_report_to([])
    []
    >>> check_report_to(["tensorbord"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: recipe field 'report_to': 'tensorbord' is not a tracker transformers knows; choose from ...
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abstain.schema import DataError

__all__ = ["TENSORBOARD", "check_report_to", "place_tensorboard"]

#: the run folder's subfolder TensorBoard writes to
TENSORBOARD = "tensorboard"
#: the package that provides a tracker, where its name is not the tracker's
_PACKAGES = {"azure_ml": "azureml-core", "flyte": "flytekit", "tensorboard": "tensorboard"}


def check_report_to(names: Sequence[str]) -> list[str]:
    """The trackers ``names`` means here (``[all]``: every one installed); an unknown or missing one is an error
    naming the field."""
    from transformers.integrations.integration_utils import (
        INTEGRATION_TO_CALLBACK,
        get_available_reporting_integrations,
    )

    available = get_available_reporting_integrations()
    if list(names) == ["all"]:
        return available
    known = sorted(INTEGRATION_TO_CALLBACK)
    for name in names:
        if name not in INTEGRATION_TO_CALLBACK:
            raise DataError(f"recipe field 'report_to': {name!r} is not a tracker transformers knows; choose from "
                            f"{', '.join(known)}, or all")
    missing = [name for name in names if name not in available]
    if missing:
        packages = " ".join(_PACKAGES.get(name, name) for name in missing)
        raise DataError(f"recipe field 'report_to': {', '.join(missing)} is not installed here (pip install "
                        f"{packages}), so the run could not report to it")
    return list(names)


def place_tensorboard(trainer: Any, folder: Path) -> None:
    """TensorBoard's event files in ``folder/tensorboard`` (transformers' default is a dated folder under the
    checkpoints), unless ``TENSORBOARD_LOGGING_DIR`` says where."""
    from transformers.integrations import TensorBoardCallback

    if os.environ.get("TENSORBOARD_LOGGING_DIR"):
        return
    for callback in trainer.callback_handler.callbacks:
        if isinstance(callback, TensorBoardCallback) and callback.logging_dir is None:
            callback.logging_dir = str(folder / TENSORBOARD)
