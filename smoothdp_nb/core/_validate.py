"""Input checks shared by the core: clear errors that name the parameter."""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["as_epsilon", "as_histograms", "as_int", "as_open_unit", "as_rng"]


def as_epsilon(epsilon, name: str = "epsilon") -> tuple[np.ndarray, bool]:
    """Return ``(epsilon as 1-D float array, was_scalar)``; epsilon must be finite-or-inf and >= 0."""
    try:
        arr = np.asarray(epsilon, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number or a 1-D array of numbers, got {epsilon!r}") from None
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (and not NaN), got {epsilon!r}")
    return np.atleast_1d(arr), arr.ndim == 0


def as_open_unit(value, name: str) -> float:
    """A number strictly between 0 and 1 (a confidence, a level, a threshold)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not (0 < v < 1):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return v


def as_int(value, name: str, *, minimum: int | None = None) -> int:
    """An integer parameter (bools refused), optionally bounded below."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float, np.floating)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def as_histograms(hist, name: str = "hist") -> tuple[np.ndarray, bool]:
    """Validate histogram(s): counts of shape (m,) or (k, m), integers >= 0, m >= 2.

    Returns ``(int64 array of shape (k, m), was_single)``.
    """
    try:
        arr = np.asarray(hist)
    except Exception:  # pragma: no cover - numpy raises many kinds
        raise TypeError(f"{name} must be an array of counts") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must contain numbers (counts), got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (m,) or (k, m), got shape {arr.shape}")
    single = arr.ndim == 1
    arr2 = np.atleast_2d(arr)
    if arr2.shape[0] == 0 or arr2.shape[1] == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if arr2.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 categories (m >= 2), got m = {arr2.shape[1]}")
    f = arr2.astype(float)
    if np.any(~np.isfinite(f)) or np.any(f != np.round(f)):
        raise ValueError(f"{name} must contain non-negative integer counts")
    if np.any(f < 0):
        raise ValueError(f"{name} must contain non-negative integer counts, found a negative count")
    if np.any(f > 2.0**53):
        raise ValueError(f"{name}: counts above 2**53 are not supported")
    out = arr2.astype(np.int64)
    if np.any(out.sum(axis=1) == 0):
        raise ValueError(f"{name} must contain at least one record (a histogram with n = 0 is empty)")
    return out, single


def as_rng(rng) -> np.random.Generator:
    """``None``, an int seed, a SeedSequence or a Generator -> Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}")
