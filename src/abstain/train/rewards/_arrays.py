"""The few array operations the advantage code needs, for numpy and for torch with TRL's own calls.

A torch tensor keeps its device and dtype and goes through the torch functions TRL calls (``torch.nanmean``,
``trl.trainer.utils.nanstd``'s formula, ``torch.nan_to_num``), so results match TRL bit for bit; anything else
becomes a float64 numpy array. torch is imported only when a tensor is handed in.

Example:
    >>> ops = Ops(np.zeros(1))
    >>> ops.nanstd(np.array([[1.0, -1.0, np.nan]]), rows=True).round(4).tolist()
    [[1.4142]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["Ops", "as_float_array", "is_tensor"]


def is_tensor(x: Any) -> bool:
    """True for a torch tensor (checked without importing torch)."""
    return type(x).__module__.split(".")[0] == "torch"


def _none_to_nan(values: Any) -> Any:
    if isinstance(values, (list, tuple)):
        return [_none_to_nan(v) for v in values]
    return math.nan if values is None else values


def as_float_array(values: Any) -> Any:
    """A floating tensor as it is; anything else (lists with ``None`` too) as a float64 array, None -> NaN."""
    if is_tensor(values):
        if not values.is_floating_point():
            raise ValueError(f"rewards must be a floating-point tensor (got {values.dtype})")
        return values
    return np.asarray(_none_to_nan(values) if isinstance(values, (list, tuple)) else values, dtype=np.float64)


class Ops:
    """numpy or torch operations, chosen by the kind of ``like``."""

    def __init__(self, like: Any) -> None:
        self.torch = is_tensor(like)
        if self.torch:
            import torch

            self.t = torch

    def isnan(self, x: Any) -> Any:
        return self.t.isnan(x) if self.torch else np.isnan(x)

    def sum_rows(self, x: Any) -> Any:
        return x.sum(1, keepdim=True) if self.torch else x.sum(1, keepdims=True)

    def nanmean(self, x: Any, rows: bool) -> Any:
        """Mean over the non-NaN values of each row (``rows``) or of everything; NaN when there are none."""
        if self.torch:
            return self.t.nanmean(x, dim=1, keepdim=True) if rows else self.t.nanmean(x)
        axis = 1 if rows else None
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nansum(x, axis=axis, keepdims=rows) / self.count(x, rows)

    def count(self, x: Any, rows: bool) -> Any:
        """Number of non-NaN values per row or overall."""
        if self.torch:
            return self.t.sum(~self.t.isnan(x), dim=1, keepdim=True) if rows else self.t.sum(~self.t.isnan(x))
        return np.sum(~np.isnan(x), axis=1 if rows else None, keepdims=rows)

    def nanstd(self, x: Any, rows: bool) -> Any:
        """``trl.trainer.utils.nanstd`` line for line: the unbiased std of the non-NaN values, NaN if <= 1."""
        mean = self.nanmean(x, rows)
        variance = self.nanmean((x - mean) ** 2, rows)
        count = self.count(x, rows)
        if self.torch:
            correction = count / (count - 1)
            correction = self.t.where(count > 1, correction, self.t.full_like(correction, float("nan")))
            variance *= correction
            return self.t.sqrt(variance)
        with np.errstate(invalid="ignore", divide="ignore"):
            correction = np.where(count > 1, count / (count - 1), np.nan)
        return np.sqrt(variance * correction)

    def std_float64(self, x: Any) -> Any:
        """Per row: ``torch.std`` (unbiased) of the non-NaN values, accumulated in float64, in ``x``'s dtype."""
        wide = x.double() if self.torch else x
        deviations = (wide - self.nanmean(wide, rows=True)) ** 2
        if self.torch:
            total = self.t.nansum(deviations, dim=1, keepdim=True)
            return self.t.sqrt(total / (self.count(x, rows=True) - 1)).to(x.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.sqrt(np.nansum(deviations, axis=1, keepdims=True) / (self.count(x, rows=True) - 1))

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return self.t.where(cond, a, b) if self.torch else np.where(cond, a, b)

    def round(self, x: Any, decimals: int) -> Any:
        return self.t.round(x, decimals=decimals) if self.torch else np.round(x, decimals)

    def nan_to_num(self, x: Any) -> Any:
        return self.t.nan_to_num(x, nan=0.0) if self.torch else np.nan_to_num(x, nan=0.0)

    def like(self, values: np.ndarray, ref: Any) -> Any:
        """``values`` (numpy) on the backend and device of ``ref``."""
        return self.t.as_tensor(values, device=ref.device) if self.torch else values

    def full(self, shape: tuple[int, ...], value: float, ref: Any) -> Any:
        return ref.new_full(shape, value) if self.torch else np.full(shape, value)
