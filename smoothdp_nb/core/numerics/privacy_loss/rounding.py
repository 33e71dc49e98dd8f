"""Outward-rounded log-domain arithmetic for the privacy-loss distributions of :mod:`.pld`.

Every function returns a float that is a proven bound in the direction asked for (``upper``: at
least the real value; else at most it): the sums, log-sums and log-additions of masses known to
within a proven error, as :mod:`.pld` and :mod:`.grid` compose them.  The error arguments are in
each docstring.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.divergence import log1mexp
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, gamma, log_rel, next_down, next_up

__all__ = [
    "outward",
    "lse_error",
    "log_sum_by",
    "log_sum_bounded",
    "log_total",
    "log_add_outward",
    "add_outward",
    "log1mexp_scalar",
]


def log1mexp_scalar(x: float) -> float:
    """``log(1 - e^x)`` of one float ``x <= 0`` (:func:`~smoothdp_nb.core.numerics.divergence.log1mexp`)."""
    return float(log1mexp(np.array(x)))


def outward(value: npt.ArrayLike, err: npt.ArrayLike, upper: bool) -> FloatArray:
    """``value + err`` rounded up (upper) or ``value - err`` rounded down; ``-inf`` (an
    exact zero mass) stays ``-inf``."""
    v = np.asarray(value, dtype=float)
    e = np.asarray(err, dtype=float)
    with np.errstate(invalid="ignore"):
        r = next_up(v + e) if upper else next_down(v - e)
    out: FloatArray = np.where(np.isneginf(v), -np.inf, r)
    return out


def lse_error(count: npt.ArrayLike, spread: npt.ArrayLike, result: npt.ArrayLike) -> FloatArray:
    """A proven bound on the absolute error of a log-sum-exp of ``count`` finite terms
    whose largest minus smallest is ``spread``, computed as ``top + log(sum exp(t - top))``
    (scipy's logsumexp and :func:`log_sum_by` both): the differences ``t - top`` are
    off by ``u |t - top|``, each exp by :data:`LIBM_REL` (and ``2^-1073`` absolute where
    it underflows, against a sum of at least 1, the top term), the sum of ``count``
    non-negative terms by ``gamma_count``; the log of the sum (at most ``count``) adds
    ``LIBM_REL log(count)`` and the relative error r of the sum ``log_rel(r)``; the final
    addition ``u`` of the result."""
    c = np.asarray(count, dtype=float)
    r = gamma(c) + LIBM_REL + 1.0001 * U * np.asarray(spread, dtype=float) + c * 2.0**-1073
    res = np.abs(np.where(np.isfinite(result), result, 0.0))
    out: FloatArray = 1.01 * (log_rel(r) + LIBM_REL * np.log1p(c) + U * res) + 2.0**-1070
    return out


def log_sum_bounded(
    groups: np.ndarray, log_vals: FloatArray, count: int, upper: bool, val_err: npt.ArrayLike = 0.0
) -> FloatArray:
    """:func:`log_sum_by`, rounded outward: each value is the log of a mass known to
    within ``val_err`` (absolute, per value), so the group's log-sum is within the group's
    largest ``val_err`` plus the rounding of :func:`lse_error`."""
    if count == 0:
        return np.empty(0)
    out = log_sum_by(groups, log_vals, count)
    fin = np.isfinite(log_vals)
    top = np.full(count, -np.inf)
    np.maximum.at(top, groups, log_vals)
    low = np.full(count, np.inf)
    np.minimum.at(low, groups[fin], log_vals[fin])
    cnt = np.bincount(groups[fin], minlength=count)
    spread = np.where(np.isfinite(low) & np.isfinite(top), top - low, 0.0)
    ve = np.zeros(count)
    np.maximum.at(ve, groups, np.broadcast_to(np.asarray(val_err, dtype=float), log_vals.shape))
    return outward(out, lse_error(cnt, spread, out) + ve, upper)


def log_total(log_vals: FloatArray, upper: bool) -> float:
    """log of the sum of the masses ``e^log_vals``, rounded outward."""
    if log_vals.size == 0:
        return -math.inf
    return float(log_sum_bounded(np.zeros(log_vals.size, dtype=np.int64), log_vals, 1, upper)[0])


def log_add_outward(a: float, b: float, upper: bool) -> float:
    """log(e^a + e^b) rounded outward (error below ``2u |result| + 2 LIBM_REL``)."""
    v = float(np.logaddexp(a, b))
    return float(outward(v, 2.0 * U * abs(v) + 2.0 * LIBM_REL, upper)) if math.isfinite(v) else v


def add_outward(a: float, b: float, upper: bool) -> float:
    """a + b rounded outward (``-inf`` absorbs)."""
    v = a + b
    if not math.isfinite(v):
        return v
    return float(next_up(v)) if upper else float(next_down(v))


def log_sum_by(groups: np.ndarray, log_vals: FloatArray, count: int) -> FloatArray:
    """logsumexp of ``log_vals`` within each group 0..count-1 (stable: scaled by the group max)."""
    if count == 0:
        return np.empty(0)
    top = np.full(count, -np.inf)
    np.maximum.at(top, groups, log_vals)
    safe = np.where(np.isfinite(top), top, 0.0)
    acc = np.zeros(count)
    np.add.at(acc, groups, np.exp(log_vals - safe[groups]))
    with np.errstate(divide="ignore"):
        out: FloatArray = safe + np.log(acc)
    return np.where(np.isfinite(top), out, -np.inf)
