"""Enclosure of the log of a weighted sum of enclosed terms, rounded once: the expectation of a
profile over a window of databases, ``log sum_i w_i delta_i``, to within one ulp of each bound.

A log-sum-exp evaluated on ``log w + log delta`` in float64 loses ``u |log delta|`` per rounding
(at ``log delta = -1.3e6`` that is 1.4e-10, a relative error of delta, several times over).  Here
the terms are taken relative to one of them, ``c = log delta_j`` (a float): the differences
``log delta_i - c`` and the weights are of the size of the window's spread (hundreds of nats,
not millions), so their rounding costs ~1e-13, and ``c`` is added back once, with the directed
rounding of a TwoSum (the bound is the float next to the exact sum, in the safe direction).

References
----------
N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.double_double import two_sum
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, gamma

__all__ = ["log_weighted_sum_enclosure", "round_sum_outward"]


def round_sum_outward(a: npt.ArrayLike, b: npt.ArrayLike, sign: float) -> FloatArray:
    """The float next to the exact ``a + b`` in the direction of ``sign`` (>= it for +1, <= it
    for -1): TwoSum gives ``a + b = r + e`` exactly, and r is moved one ulp when e points that
    way.  Infinite or nan sums are returned as numpy adds them."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        r, e = two_sum(a, b)
        plain = a + b
        out: FloatArray = np.where(np.isfinite(plain), np.where(sign * e > 0, np.nextafter(r, sign * np.inf), r), plain)
    return out


def log_weighted_sum_enclosure(
    lw: npt.ArrayLike,
    lw_err: float,
    upper: npt.ArrayLike,
    lower: npt.ArrayLike,
    log_extra: npt.ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """``(U, L)`` per column with ``L <= log sum_i w_i d_i <= U`` (plus ``e^log_extra`` in U).

    Parameters
    ----------
    lw : array_like of shape (K,)
        Logs of the weights, each within ``lw_err`` of the true one.
    lw_err : float
        The weights' absolute error bound.
    upper, lower : array_like of shape (K, E)
        Proven bounds on ``log d_i`` per column (``-inf``: a term of 0).
    log_extra : array_like of shape (E,), optional
        A proven upper bound on the log of what the sum leaves out (added to U).

    Returns
    -------
    tuple of ndarray
        ``(U, L)``, each of shape (E,).

    The argument (upper bound; the lower one mirrors it).  Per column, ``c`` is the upper bound
    of the largest term and ``t_i = lw_i + (upper_i - c)``: the difference is exact when the two
    are within a factor 2 (Sterbenz) and else off by ``u`` of itself; the sum adds ``u |t_i|``.
    With ``M = max t``, ``log sum exp(t - M)`` carries the subtractions' ``u |t_i - M|``, the exps'
    ``LIBM_REL``, the sum's ``gamma_K`` and the log's ``LIBM_REL`` of at most ``log K``, and ``s
    = M + log S`` one more ``u |s|``; so ``s`` is within ``lw_err + 2.02 u (max|t| + max|upper -
    c|) + 2 LIBM_REL (1 + log K) + 1.01 gamma_K + u |s|`` of the log of the sum relative to
    ``e^c``, and that slack is added.  ``log_extra - c`` (``u`` of itself) joins by a log-add-exp
    (``2u`` of its result and ``2 LIBM_REL``).  Finally ``U`` is the float at or above the exact
    ``c + s`` (:func:`round_sum_outward`): the enclosure is at most one ulp wider on each side
    than the slack.
    """
    lw = np.asarray(lw, dtype=float)
    up = np.asarray(upper, dtype=float)
    lo = np.asarray(lower, dtype=float)
    K = lw.size
    ref = np.where(np.isfinite(lw)[:, None] & np.isfinite(up), lw[:, None] + up, -np.inf)
    j = np.argmax(ref, axis=0)
    cols = np.arange(up.shape[1])
    fixed = 2.0 * LIBM_REL * (1.0 + math.log(K + 1.0)) + 1.01 * float(gamma(K + 2))

    def side(d: FloatArray, sign: float, extra: FloatArray | None) -> FloatArray:
        c = d[j, cols]
        with np.errstate(invalid="ignore"):
            diff = d - c[None, :]
            t = lw[:, None] + diff
        live = np.isfinite(t)
        t = np.where(live, t, -np.inf)
        M = np.max(t, axis=0)
        Mf = np.where(np.isfinite(M), M, 0.0)
        with np.errstate(divide="ignore"):
            S = np.exp(t - Mf[None, :]).sum(axis=0)
            s = Mf + np.log(S)
        tmax = np.max(np.where(live, np.abs(t), 0.0), axis=0)
        dmax = np.max(np.where(live, np.abs(diff), 0.0), axis=0)
        with np.errstate(invalid="ignore"):  # (an empty column: s = -inf, replaced below)
            slack = lw_err + 2.02 * U * (tmax + dmax) + fixed + 1.01 * U * np.abs(s)
            s = s + sign * slack * (1.0 + 4.0 * U)
        if extra is not None:
            tr = extra - c
            tr = tr + U * np.abs(tr)
            with np.errstate(invalid="ignore"):
                s2 = np.logaddexp(s, tr)
            s = np.where(np.isneginf(tr), s, s2 + 2.02 * U * np.abs(s2) + 2.0 * LIBM_REL)
        out = round_sum_outward(c, s, sign)
        out = np.where(np.isfinite(c) & np.isfinite(M), out, np.where(sign > 0, np.inf, -np.inf))
        return np.where(np.all(~live, axis=0) & (sign < 0), -np.inf, out)

    extra = None if log_extra is None else np.broadcast_to(np.asarray(log_extra, dtype=float), (up.shape[1],))
    Ub = side(up, 1.0, extra)
    Lb = side(lo, -1.0, None)
    return Ub, Lb
