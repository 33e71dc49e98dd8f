"""Small pieces shared by the template methods of the mechanism protocol: a log
rounded up, a DP delta clipped to its proven cap, and the shape of a result."""

from __future__ import annotations

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, FloatOrArray
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, exp_up, next_up

__all__ = ["finish_dp", "log_up", "shape_result"]


def shape_result(values: FloatArray, single: bool, eps_scalar: bool) -> FloatOrArray:
    """(k, E) values -> float / (k,) / (E,) / (k, E)."""
    res = values
    if single:
        res = res[0]
    if eps_scalar:
        res = res[..., 0]
    return float(res) if np.ndim(res) == 0 else res


def log_up(x: FloatArray) -> FloatArray:
    """A float >= log(x) for x > 0 (``-inf`` for 0)."""
    with np.errstate(divide="ignore"):
        v = np.log(np.asarray(x, dtype=float))
    out: FloatArray = np.where(np.isfinite(v), next_up(v + LIBM_REL * np.abs(v) + 2.0**-1074), v)
    return out


def finish_dp(logd: FloatArray, cap: FloatArray, log: bool) -> FloatArray:
    """A DP delta's upper bound (log) clipped at the proven bound ``cap`` (linear),
    as a log or rounded up to a linear value."""
    logd = np.minimum(logd, log_up(cap))
    return logd if log else np.minimum(exp_up(logd), cap)
