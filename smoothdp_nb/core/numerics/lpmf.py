"""Accurate log-probability mass functions for counts of any size.

Why not ``scipy.special.gammaln``?  ``log C(n, k)`` for n ~ 1e8 is a number of
size ~1e9; evaluating it as a difference of three log-gammas loses about seven
significant digits of the *probability* (an absolute error of 1e-7 in its
log).  The privacy profiles of this package are tail sums of such
probabilities, reported to full float64 precision, so we use Catherine
Loader's saddle-point formulation instead ("Fast and accurate computation of
binomial probabilities", 2000): the log-pmf is written as a sum of terms that
are each small and computed without cancellation, via

* ``stirlerr(n) = log n! - log(sqrt(2 pi n) (n/e)^n)``, the error of Stirling's
  formula, and
* ``bd0(x, np) = x log(x/np) + np - x``, the "deviance" term, by a series when
  ``x`` is close to ``np``.

The resulting log-pmf has an absolute error of a few ulps of its magnitude,
i.e. a *relative* error ~1e-15 of the probability, whatever n.  Where a deep tail's
log-pmf is large (1e6 nats at 10^8 records) those ulps are 1e-10 of the probability
and more, so the same formula is also evaluated in double-word arithmetic
(:func:`log_hypergeom_pmf_dd`, :func:`log_binom_pmf_dd`, on
:mod:`~smoothdp_nb.core.numerics.double_double`), with a proven bound of about 1e-13
whatever the size of the value.

Everything is vectorised over numpy arrays (float64; counts may be given as
floats holding integers).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.double_double import (
    DD_REL,
    LOG_DD_REL,
    dd_add,
    dd_add_fp,
    dd_div,
    dd_log,
    dd_mul,
    dd_mul_fp,
    two_sum,
)
from smoothdp_nb.core.numerics.enclosures import lpmf_abs_error, two_prod

__all__ = [
    "bd0",
    "log_binom_pmf",
    "log_binom_pmf_dd",
    "log_binom_pmf_error",
    "log_binom_pmf_with_error",
    "log_comb",
    "log_hypergeom_pmf",
    "log_hypergeom_pmf_dd",
    "log_hypergeom_pmf_dd_where",
    "log_hypergeom_pmf_error",
    "log_hypergeom_pmf_with_error",
    "stirlerr",
]

_U = 2.0**-53
#: ``want(value) -> bool array``: where a caller needs the running error bound, given the computed log-pmfs
Wanted = Callable[[FloatArray], npt.NDArray[np.bool_]]

_LIBM_REL = 8.0 * _U  # as smoothdp_nb.core.numerics.enclosures.LIBM_REL (4 ulps)

_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# stirlerr(0..15): the values are O(1), so lgamma's absolute error (~1e-15) is
# also the absolute error of the log-pmf built from them.
# (the values correctly rounded, from mpmath at 50 digits: formed in float64 from lgamma they are
# off by up to 7e-15, at n = 14, from the cancellation of terms of size 40; tests/core/test_double_double.py
# checks them)
_STIRLERR_TABLE = np.array(
    [
        0.0,
        0.08106146679532726,
        0.0413406959554093,
        0.02767792568499834,
        0.020790672103765093,
        0.016644691189821193,
        0.013876128823070748,
        0.01189670994589177,
        0.010411265261972096,
        0.009255462182712733,
        0.00833056343336287,
        0.007573675487951841,
        0.00694284010720953,
        0.006408994188004207,
        0.0059513701127588475,
        0.005554733551962801,
    ]
)


def stirlerr(n: npt.ArrayLike) -> FloatArray:
    """Error of Stirling's approximation, ``log(n!) - log(sqrt(2 pi n) (n/e)^n)``.

    For n <= 15 it is evaluated from ``math.lgamma`` (values there are O(1),
    so the absolute error is ~1e-15); above, by the asymptotic series, whose
    truncation error is below 1e-17 at the cut-offs used.
    """
    n = np.asarray(n, dtype=float)
    small = n <= 15.0
    if not small.any():  # the common case: the series everywhere
        return _stirlerr_series(n)
    out = np.empty_like(n)
    if np.any(small):
        ns = n[small]
        idx = ns.astype(np.int64)
        is_int = idx == ns
        vals = np.empty_like(ns)
        vals[is_int] = _STIRLERR_TABLE[idx[is_int]]
        if not np.all(is_int):
            nf = ns[~is_int]
            vals[~is_int] = gammaln(nf + 1.0) - (nf + 0.5) * np.log(nf) + nf - _LN_SQRT_2PI
        out[small] = vals
    big = ~small
    if np.any(big):
        out[big] = _stirlerr_series(n[big])
    return out


def _stirlerr_series(n: FloatArray) -> FloatArray:
    # The five-term asymptotic series is accurate to < 1e-17 for n > 15.
    nn = n * n
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def bd0(x: npt.ArrayLike, np_: npt.ArrayLike) -> FloatArray:
    """Deviance term ``x log(x / np_) + np_ - x`` (>= 0), without cancellation.

    When ``|x - np_| < 0.1 (x + np_)`` the direct formula would subtract
    nearly equal numbers, so we use the series
    ``(x - np_) v + 2x sum_j v^(2j+1)/(2j+1)`` with ``v = (x - np_)/(x + np_)``;
    each term is below ``v^2`` times the previous one, so with ``|v| < 0.1``
    nine terms reach double precision (fewer when every |v| is smaller).
    """
    x = np.asarray(x, dtype=float)
    np_ = np.asarray(np_, dtype=float)
    x, np_ = np.broadcast_arrays(x, np_)
    diff = x - np_
    close = np.abs(diff) < 0.1 * (x + np_)
    if close.all():  # the common case: no masking needed
        return _bd0_series(x, diff, x + np_)
    out = np.empty(x.shape, dtype=float)
    if np.any(close):
        out[close] = _bd0_series(x[close], diff[close], x[close] + np_[close])
    far = ~close
    xf, mf = x[far], np_[far]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[far] = np.where(xf == 0, mf, xf * np.log(xf / mf) + mf - xf)
    return out


def _bd0_series(x: FloatArray, diff: FloatArray, total: FloatArray) -> FloatArray:
    v = diff / total
    v2 = v * v
    vmax2 = float(v2.max(initial=0.0))  # < 0.01 (callers keep |v| < 0.1)
    # terms j = 1..J with vmax2^J < 1e-17 (relative to the leading term)
    J = 1 if vmax2 == 0.0 else min(9, max(1, math.ceil(-17.0 / math.log10(vmax2))))
    # Horner: sum_{j=1..J} v2^j / (2j+1)
    acc: FloatArray = np.full(v.shape, 1.0 / (2 * J + 1))
    for j in range(J - 1, 0, -1):
        acc = acc * v2 + 1.0 / (2 * j + 1)
    return diff * v + 2.0 * x * v * v2 * acc


def log_binom_pmf(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike, q: npt.ArrayLike | None = None) -> FloatArray:
    """log P[Binomial(n, p) = k], accurate to ~1e-15 relative in the pmf.

    ``q = 1 - p`` may be passed separately when it is known more accurately
    than ``1 - p`` (e.g. as a ratio of integers).  Returns ``-inf`` outside the
    support.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    q = 1.0 - p if q is None else np.asarray(q, dtype=float)
    k, n, p, q = np.broadcast_arrays(k, n, p, q)
    mid = (k > 0) & (k < n) & (p > 0) & (q > 0)
    if mid.all():  # the common case: no masking needed
        return _log_binom_interior(k, n, p, q)
    out = np.full(k.shape, -np.inf)
    inside = (k >= 0) & (k <= n)
    # Degenerate success probabilities: all mass at 0 or n.
    p0 = inside & (p == 0)
    out[p0 & (k == 0)] = 0.0
    q0 = inside & (q == 0)
    out[q0 & (k == n)] = 0.0
    regular = inside & (p > 0) & (q > 0)

    at0 = regular & (k == 0)
    if np.any(at0):
        nn, pp, qq = n[at0], p[at0], q[at0]
        # n log q, using bd0 when p is small for accuracy (Loader).
        out[at0] = np.where(pp < 0.1, -bd0(nn, nn * qq) - nn * pp, nn * np.log(qq))
    atn = regular & (k == n) & (k > 0)
    if np.any(atn):
        nn, pp, qq = n[atn], p[atn], q[atn]
        out[atn] = np.where(qq < 0.1, -bd0(nn, nn * pp) - nn * qq, nn * np.log(pp))
    if np.any(mid):
        out[mid] = _log_binom_interior(k[mid], n[mid], p[mid], q[mid])
    return out


def _log_binom_interior(k: FloatArray, n: FloatArray, p: FloatArray, q: FloatArray) -> FloatArray:
    """Loader's formula for 0 < k < n and 0 < p < 1."""
    return _binom_value(k, n, *_deviances(k, n, p, q))


def _deviances(k: FloatArray, n: FloatArray, p: FloatArray, q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The two deviance terms of Loader's formula, ``bd0(k, n p)`` and ``bd0(n - k, n q)``
    (shared by the log-pmf and its error bound, :func:`_binom_error`)."""
    return bd0(k, n * p), bd0(n - k, n * q)


def _binom_value(k: FloatArray, n: FloatArray, b1: FloatArray, b2: FloatArray) -> FloatArray:
    """Loader's formula for 0 < k < n from the deviances of :func:`_deviances`."""
    lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - b1 - b2
    lf = math.log(2.0 * math.pi) + np.log(k) + np.log1p(-k / n)
    out: FloatArray = lc - 0.5 * lf
    return out


def _urn(
    k: npt.ArrayLike, good: npt.ArrayLike, bad: npt.ArrayLike, draws: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """The broadcast float arguments of a hypergeometric log-pmf and the rounded
    draw fractions ``p = draws/total``, ``q = (total - draws)/total`` (0, 1 for an empty urn),
    shared by :func:`log_hypergeom_pmf` and its error bound so both see the same p, q."""
    k = np.asarray(k, dtype=float)
    good = np.asarray(good, dtype=float)
    bad = np.asarray(bad, dtype=float)
    draws = np.asarray(draws, dtype=float)
    k, good, bad, draws = np.broadcast_arrays(k, good, bad, draws)
    total = good + bad
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(total > 0, draws / np.where(total > 0, total, 1.0), 0.0)
        q = np.where(total > 0, (total - draws) / np.where(total > 0, total, 1.0), 1.0)
    return k, good, bad, draws, p, q


def log_hypergeom_pmf(k: npt.ArrayLike, good: npt.ArrayLike, bad: npt.ArrayLike, draws: npt.ArrayLike) -> FloatArray:
    """log P[k successes] when drawing ``draws`` without replacement from an urn
    with ``good`` successes and ``bad`` failures.

    Uses the identity (with p = draws / (good + bad))
    ``h(k) = b(k; good, p) b(draws - k; bad, p) / b(draws; good + bad, p)``
    where b is the binomial pmf; each factor comes from :func:`log_binom_pmf`,
    so no large numbers cancel.  ``-inf`` outside the support.
    """
    k, good, bad, draws, p, q = _urn(k, good, bad, draws)
    inside = (k >= 0) & (k <= good) & (draws - k >= 0) & (draws - k <= bad)
    out = np.full(k.shape, -np.inf)
    if np.any(inside):
        kk, gg, bb, dd, pp, qq = (a[inside] for a in (k, good, bad, draws, p, q))
        tt = gg + bb
        # the binomial factors in one vectorised call; the normalising one
        # once when every urn has the same size and draws (a common case)
        same = bool(np.all(tt == tt[0]) and np.all(dd == dd[0]))
        norm = slice(0, 1) if same else slice(None)
        b = log_binom_pmf(
            np.concatenate([kk, dd - kk, dd[norm]]),
            np.concatenate([gg, bb, tt[norm]]),
            np.concatenate([pp, pp, pp[norm]]),
            np.concatenate([qq, qq, qq[norm]]),
        )
        m = kk.size
        out[inside] = b[:m] + b[m : 2 * m] - b[2 * m :]
    return out


def log_comb(n: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    """log C(n, k) via ``log_binom_pmf(k, n, 1/2) + n log 2`` (exact-digit safe)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return log_binom_pmf(k, n, 0.5, 0.5) + n * math.log(2.0)


def _bd0_error(x: FloatArray, m: FloatArray, val: FloatArray) -> FloatArray:
    """Proven bound on the absolute error of :func:`bd0` (x, m as computed, m
    itself off by u relative).  Series branch: ``32 u`` of the value (a few
    correctly rounded products per term, terms decreasing by v^2 < 0.01).
    Direct branch: ``t = x log(x/m)`` carries ``LIBM_REL + u`` of itself (the
    log and the product) and the quotient's rounding u amplified by
    ``1/|log(x/m)|`` (at most 1/0.2 there, as |v| >= 0.1); the two additions
    of ``t, m, -x`` add ``2u`` of ``|t| + m + x``.  The rounding of m moves bd0
    by ``u |m - x|`` (its derivative is 1 - x/m).  ``val``: bd0(x, m) as computed."""
    diff = x - m
    close = np.abs(diff) < 0.1 * (x + m)
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.abs(np.log(x / m))
        t = np.where(x > 0, x * lg, 0.0)
        direct = (_LIBM_REL + 1.01 * _U + 1.01 * _U / np.maximum(lg, 0.1)) * t + 2.01 * _U * (t + m + x)
    out: FloatArray = np.where(close, 32.0 * _U * val, direct) + 1.01 * _U * np.abs(diff)
    return np.where(np.isfinite(out), out, np.inf)


def log_binom_pmf_error(
    k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike, q: npt.ArrayLike | None = None
) -> FloatArray:
    """Proven bound on the absolute error of :func:`log_binom_pmf` (interior
    points; the end points k = 0, n are one bd0 or log term), against the
    binomial law of the *given* floats p and q with ``p + q = 1``.

    The eight terms of Loader's formula: the three stirlerr values (absolute
    error below ``2e-15``: lgamma table for n <= 15, series below 1e-17
    otherwise), the two bd0 (:func:`_bd0_error`), and ``(log 2 pi + log k +
    log1p(-k/n))/2`` (``LIBM_REL`` of each log and ``u`` of the quotient);
    the seven additions add ``8u`` of the sum of the magnitudes.  (A p + q that
    differs from 1 by rounding multiplies the formula's pmf by
    ``e^(-n (p + q - 1))``; the hypergeometric combination cancels that
    factor exactly, as good + bad = total.)"""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    q = 1.0 - p if q is None else np.asarray(q, dtype=float)
    k, n, p, q = np.broadcast_arrays(k, n, p, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        b1, b2 = _deviances(k, n, p, q)
    return _binom_error(k, n, p, q, b1, b2)


def _binom_error(
    k: FloatArray, n: FloatArray, p: FloatArray, q: FloatArray, b1: FloatArray, b2: FloatArray
) -> FloatArray:
    """The bound of :func:`log_binom_pmf_error` from the deviance terms ``b1``, ``b2``
    of :func:`_deviances` (both deviance bounds in one pass: half the per-call overhead)."""
    N = k.size
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.concatenate([k.ravel(), (n - k).ravel()])
        mm = np.concatenate([(n * p).ravel(), (n * q).ravel()])
        b = np.concatenate([b1.ravel(), b2.ravel()])
        eb = _bd0_error(x, mm, b)
        e = (eb[:N] + eb[N:]).reshape(k.shape)
        babs = np.abs(b)
        lk = np.abs(np.log(np.maximum(k, 1.0)))
        l1 = np.abs(np.log1p(-k / np.maximum(n, 1.0)))
        mag = (babs[:N] + babs[N:]).reshape(k.shape) + 0.5 * (math.log(2 * math.pi) + lk + l1) + 0.25
        err = e + 6e-15 + _LIBM_REL * (lk + l1 + 2.0) + 1.01 * _U * k / np.maximum(n - k, 1.0) + 8.0 * _U * mag
    out: FloatArray = np.where(np.isfinite(err), err, np.inf)
    return out


def log_hypergeom_pmf_error(
    k: npt.ArrayLike, good: npt.ArrayLike, bad: npt.ArrayLike, draws: npt.ArrayLike
) -> FloatArray:
    """Proven bound on the absolute error of :func:`log_hypergeom_pmf`, but for
    the two additions: the three binomial bounds (:func:`log_binom_pmf_error`,
    each for the rounded p, q it uses; the factors ``p^. q^.`` and
    ``e^(-n(p + q - 1))`` cancel exactly in the combination).  The additions
    of ``h = b1 + b2 - b3`` add ``2u (|b1| + |b2| + |b3|) <= 2u (|h| + 2|b3|)``
    (b1, b2 <= 0), with ``|b3| <= log(total) + 1`` (a binomial at its mean):
    the caller adds that from the value."""
    k, good, bad, draws, p, q = _urn(k, good, bad, draws)
    total = good + bad
    # the three binomial bounds in one vectorised call; the normalising one
    # once when every urn has the same size and draws (as in log_hypergeom_pmf)
    m = k.size
    same = m > 0 and bool(np.all(total == total.flat[0]) and np.all(draws == draws.flat[0]))
    norm = slice(0, 1) if same else slice(None)
    kf, gf, bf, df, tf, pf, qf = (a.ravel() for a in (k, good, bad, draws, total, p, q))
    with np.errstate(invalid="ignore", divide="ignore"):
        e = log_binom_pmf_error(
            np.concatenate([kf, df - kf, df[norm]]),
            np.concatenate([gf, bf, tf[norm]]),
            np.concatenate([pf, pf, pf[norm]]),
            np.concatenate([qf, qf, qf[norm]]),
        )
        out: FloatArray = (e[:m] + e[m : 2 * m] + e[2 * m :]).reshape(k.shape)
    return np.where(np.isfinite(out), out, np.inf)


def _two_passes(
    value: FloatArray, want: Wanted, error: Callable[..., FloatArray], *args: np.ndarray
) -> tuple[FloatArray, FloatArray]:
    """(value, error bound where ``want(value)`` holds, ``+inf`` elsewhere): the bound
    from a second pass of ``error`` over the selected rows of ``args``."""
    err = np.full(value.shape, np.inf)
    mask = want(value)
    if np.any(mask):
        err[mask] = error(*(a[mask] for a in args))
    return value, err


def log_binom_pmf_with_error(
    k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike, q: npt.ArrayLike, want: Wanted
) -> tuple[FloatArray, FloatArray]:
    """:func:`log_binom_pmf` and, where ``want(value)`` holds, :func:`log_binom_pmf_error`
    (``+inf`` elsewhere, also a bound), in one pass.

    The error bound is the same function of the deviance values the log-pmf
    used (:func:`_deviances`, computed once for both), so it is the bound of
    :func:`log_binom_pmf_error` for the value returned here; the saving is the
    per-call overhead of a second pass over the arguments.
    """
    k, n, p, q = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (k, n, p, q)))
    if not bool(np.all((k > 0) & (k < n) & (p > 0) & (q > 0))):  # end points: two passes
        return _two_passes(log_binom_pmf(k, n, p, q), want, log_binom_pmf_error, k, n, p, q)
    b1, b2 = _deviances(k, n, p, q)
    value = _binom_value(k, n, b1, b2)
    err = np.full(value.shape, np.inf)
    sel = np.flatnonzero(want(value))
    if sel.size:
        k_, n_, p_, q_, b1_, b2_ = (a.ravel()[sel] for a in (k, n, p, q, b1, b2))
        err.flat[sel] = _binom_error(k_, n_, p_, q_, b1_, b2_)
    return value, err


def log_hypergeom_pmf_with_error(
    k: npt.ArrayLike, good: npt.ArrayLike, bad: npt.ArrayLike, draws: npt.ArrayLike, want: Wanted
) -> tuple[FloatArray, FloatArray]:
    """:func:`log_hypergeom_pmf` and, where ``want(value)`` holds,
    :func:`log_hypergeom_pmf_error` (``+inf`` elsewhere, also a bound), in one pass.

    The value is computed exactly as :func:`log_hypergeom_pmf` computes it
    (the same urn arguments, the same three binomial factors), and the bound
    is the one of :func:`log_hypergeom_pmf_error` for the selected rows,
    evaluated (when every factor is interior) on the deviance values of that
    very computation (:func:`_binom_error`), so its argument applies
    unchanged; what is saved is the second pass over the arguments.
    """
    k, good, bad, draws, p, q = _urn(k, good, bad, draws)
    total = good + bad
    kf, gf, bf, df, tf, pf, qf = (a.ravel() for a in (k, good, bad, draws, total, p, q))
    m = kf.size
    if m == 0 or not bool(np.all((kf >= 0) & (kf <= gf) & (df - kf >= 0) & (df - kf <= bf))):
        # a count outside its support (a value -inf): two passes
        return _two_passes(log_hypergeom_pmf(k, good, bad, draws), want, log_hypergeom_pmf_error, k, good, bad, draws)
    # the three binomial factors of log_hypergeom_pmf, the normalising one once when
    # every urn has the same size and draws
    same = bool(np.all(tf == tf[0]) and np.all(df == df[0]))
    norm = slice(0, 1) if same else slice(None)
    K = np.concatenate([kf, df - kf, df[norm]])
    N = np.concatenate([gf, bf, tf[norm]])
    P = np.concatenate([pf, pf, pf[norm]])
    Q = np.concatenate([qf, qf, qf[norm]])
    # every factor inside its support: the deviances are shared with the bound; a factor
    # at an end (k = 0, say) takes log_binom_pmf's own cases, as log_hypergeom_pmf does
    interior = bool(np.all((K > 0) & (K < N) & (P > 0) & (Q > 0)))
    if interior:
        b1, b2 = _deviances(K, N, P, Q)
        bv = _binom_value(K, N, b1, b2)
    else:
        bv = log_binom_pmf(K, N, P, Q)
    value = (bv[:m] + bv[m : 2 * m] - bv[2 * m :]).reshape(k.shape)
    err = np.full(value.shape, np.inf)
    sel = np.flatnonzero(want(value))
    if sel.size:
        J = np.concatenate([sel, sel + m, np.full(1, 2 * m) if same else sel + 2 * m])
        with np.errstate(invalid="ignore"):
            if interior:
                e = _binom_error(K[J], N[J], P[J], Q[J], b1[J], b2[J])
            else:
                e = log_binom_pmf_error(K[J], N[J], P[J], Q[J])
            s = sel.size
            out = e[:s] + e[s : 2 * s] + e[2 * s :]
        err.flat[sel] = np.where(np.isfinite(out), out, np.inf)
    return value, err


def _bd0_dd(x: FloatArray, mh: FloatArray, ml: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``bd0(x, m) = x log(x/m) + m - x`` in double-word arithmetic, with a proven bound on its
    absolute error: ``(hi, lo, err)``, for float integers ``x >= 1`` and ``m = mh + ml > 0``
    given exactly (a TwoProduct): Loader's series where ``|x - m| < 0.01 (x + m)``
    (:func:`_bd0_dd_series`), the logarithm elsewhere (:func:`_bd0_dd_log`)."""
    far = np.flatnonzero(np.abs(x - mh) >= 0.01 * (x + mh))
    if far.size == x.size:
        return _bd0_dd_log(x, mh, ml)
    if 2 * far.size > x.size:  # mostly far: the series only where it applies
        close = np.flatnonzero(np.abs(x - mh) < 0.01 * (x + mh))
        hi, lo, err = _bd0_dd_log(x, mh, ml)
        hi[close], lo[close], err[close] = _bd0_dd_series(x[close], mh[close], ml[close])
        return hi, lo, err
    with np.errstate(all="ignore"):  # (the series' values at the far counts are replaced)
        hi, lo, err = _bd0_dd_series(x, mh, ml)
    if far.size:
        hi[far], lo[far], err[far] = _bd0_dd_log(x[far], mh[far], ml[far])
    return hi, lo, err


def _bd0_dd_series(x: FloatArray, mh: FloatArray, ml: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`_bd0_dd` for ``|x - m| < 0.01 (x + m)`` (so ``|v| < 0.0101``), by Loader's series
    ``bd0 = (x - m) v + 2 x (v^3/3 + v^5/5 + ...)``, ``v = (x - m) / (x + m)``.

    The argument.  ``x - mh`` is exact (Sterbenz: x and mh within a factor 2) and TwoSum adds
    ``-ml`` exactly, so ``x - m`` is an exact double word; ``x + m`` is a TwoSum and a DWPlusFP,
    ``v`` a DWDivDW and ``(x - m) v`` a DWTimesDW: at most ``3.1 DD_REL`` of ``|(x - m) v|``.  The
    rest ``2x v^3 (1/3 + v^2/5 + v^4/7 + v^6/9 + v^8/11)`` is float64 from ``v_hi``: below ``16 u``
    of itself (the roundings of a few products and a sum of positive terms, the constants and
    ``v_lo``), and the series cut after ``v^11`` leaves at most ``2 x |v|^13 / 12``.  The last
    DWPlusFP adds ``DD_REL`` of the result.  No logarithm: a third of the work of
    :func:`_bd0_dd_log`, for the binomial weights near their mean."""
    dh, dl = two_sum(x - mh, -ml)
    sh, sl = two_sum(x, mh)
    sh, sl = dd_add_fp(sh, sl, ml)
    vh, vl = dd_div(dh, dl, sh, sl)
    ph, pl = dd_mul(dh, dl, vh, vl)
    v2 = vh * vh
    rest = 2.0 * x * (vh * v2) * (1.0 / 3.0 + v2 * (0.2 + v2 * (1.0 / 7.0 + v2 * (1.0 / 9.0 + v2 / 11.0))))
    hi, lo = dd_add_fp(ph, pl, rest)
    a = np.abs(vh)
    err = 3.1 * DD_REL * np.abs(ph) + 16.0 * _U * np.abs(rest) + x * a**13 / 6.0 + DD_REL * np.abs(hi)
    return hi, lo, err


def _bd0_dd_log(x: FloatArray, mh: FloatArray, ml: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``bd0(x, m) = x log(x/m) + m - x`` in double-word arithmetic, with a proven bound on its
    absolute error: ``(hi, lo, err)``, for float integers ``x >= 1`` and ``m = mh + ml > 0``
    given exactly (a TwoProduct), by the logarithm (any x and m).

    The argument.  ``r = x / m`` is one DWDivDW (relative error at most ``DD_REL``), so
    ``log r`` as :func:`~.double_double.dd_log` computes it is within ``LOG_DD_REL (|e| ln 2 + 1)
    + 1.01 DD_REL`` of ``log(x/m)`` (``|log(1 + d)| <= 1.01 |d|``; e the binary exponent of r, at
    most ``|log r| / ln 2 + 1``); the product by x (DWTimesFP) and the two additions
    (AccurateDWPlusDW, DWPlusFP) add ``DD_REL`` of ``x |log r|``, of ``|x log r + m|`` and of the
    result.  The direct formula cancels (``x log(x/m) ~ x - m`` when x is near m), but in double
    word the cancellation only costs digits beyond the 90th bit: the bound is absolute, so it
    stays small next to one ulp of a log-pmf of any size."""

    rh, rl = dd_div(x, np.zeros_like(x), mh, ml)
    lh, ll, le = dd_log(rh, rl)
    ph, pl = dd_mul_fp(lh, ll, x)
    sh, sl = dd_add(ph, pl, mh, ml)
    vh, vl = dd_add_fp(sh, sl, -x)
    xl = x * (np.abs(lh) + LOG_DD_REL)
    err = x * (le + 1.01 * DD_REL) + 3.01 * DD_REL * (xl + mh + x) + LOG_DD_REL * x * np.abs(lh)
    return vh, vl, err


def _log_binom_dd(
    k: FloatArray, n: FloatArray, p: FloatArray, q: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Loader's binomial log-pmf for ``0 < k < n`` and floats ``0 < p, q`` in double-word
    arithmetic: ``(hi, lo, err)``, ``err`` a proven bound on ``|hi + lo - v|`` with ``v`` the value
    of Loader's formula for the given floats (``log C(n, k) + k log p + (n - k) log q - n (p + q - 1)``,
    whose last term cancels in a hypergeometric combination).

    ``n p`` and ``n q`` are exact (TwoProduct), the two deviances carry the bounds of
    :func:`_bd0_dd`.  The small terms ``stirlerr(n) - stirlerr(k) - stirlerr(n - k) - (log 2 pi +
    log k + log(1 - k/n)) / 2`` are float64: the stirlerr values within ``2e-15`` each (as
    :func:`log_binom_pmf_error`), each log within ``LIBM_REL`` of itself, ``log(1 - k/n)`` as
    ``log1p(-k/n)`` for ``k <= n/2`` and ``log((n - k)/n)`` above (the quotient's rounding moves
    either by at most ``2.02 u``), and the five additions ``5.01 u`` of the sum of their
    magnitudes; the two double-word additions that subtract the deviances add ``DD_REL`` of the
    sums of the magnitudes."""

    if n.size > 1 and n.min() == n.max() and p.min() == p.max() and q.min() == q.max():  # one law: one product
        mh, ml, m2h, m2l = (np.full(n.shape, float(v[0])) for v in (*two_prod(n[:1], p[:1]), *two_prod(n[:1], q[:1])))
    else:
        mh, ml = two_prod(n, p)
        m2h, m2l = two_prod(n, q)
    x = np.concatenate([k, n - k])
    bh, bl, be = _bd0_dd(x, np.concatenate([mh, m2h]), np.concatenate([ml, m2l]))
    N = k.size
    lk = np.log(k)
    with np.errstate(divide="ignore"):
        l1 = np.where(k <= 0.5 * n, np.log1p(-k / n), np.log((n - k) / n))
    st = stirlerr(n) - stirlerr(k) - stirlerr(n - k)
    small = st - 0.5 * (_LOG_2PI + lk + l1)
    mag = np.abs(st) + 0.5 * (_LOG_2PI + np.abs(lk) + np.abs(l1)) + 0.25
    e_small = 6e-15 + 0.5 * _LIBM_REL * (_LOG_2PI + np.abs(lk) + np.abs(l1)) + 1.01 * _U + 5.01 * _U * mag
    sh, sl = dd_add(-bh[:N], -bl[:N], -bh[N:], -bl[N:])
    vh, vl = dd_add_fp(sh, sl, small)
    babs = np.abs(bh[:N]) + np.abs(bh[N:])
    err = be[:N] + be[N:] + e_small + 2.01 * DD_REL * (babs + mag + 1.0)
    return vh, vl, err


_LOG_2PI = math.log(2.0 * math.pi)
#: counts per pass of the double-word log-pmfs
_DD_CHUNK = 16384
#: nats of |log-pmf| above which :func:`log_hypergeom_pmf_dd_where` evaluates in double word: the
#: float64 running bound is about 3e-14 of the value (3e-10 at 1e4 nats), the double-word one
#: ~1e-13 at any size, for about five times the work
DD_FROM = 1.0e4


def log_hypergeom_pmf_dd(
    k: npt.ArrayLike, good: npt.ArrayLike, bad: npt.ArrayLike, draws: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`log_hypergeom_pmf` in double-word arithmetic: ``(hi, lo, err)`` with
    ``|hi + lo - log P(k)| <= err``, for counts strictly inside every factor's support
    (``0 < k < good``, ``0 < draws - k < bad``; else ``err = inf``).

    The three binomial factors of :func:`log_hypergeom_pmf` (the same rounded ``p, q``, whose
    ``p^. q^.`` and ``e^(-n (p + q - 1))`` cancel exactly) by :func:`_log_binom_dd`, combined by
    two AccurateDWPlusDW (``DD_REL`` of ``|b1| + |b2| + |b3|`` each).  The bound is about
    ``1e-13`` whatever the size of the value: at ``log P = -1.3e6`` that is a thousandth of one
    ulp, where the float64 bound of :func:`log_hypergeom_pmf_error` is about ``3e-8``."""

    k, good, bad, draws, p, q = _urn(k, good, bad, draws)
    shape = k.shape
    kf, gf, bf, df, pf, qf = (a.ravel() for a in (k, good, bad, draws, p, q))
    tf = gf + bf
    ok = (kf > 0) & (kf < gf) & (df - kf > 0) & (df - kf < bf) & (pf > 0) & (qf > 0)
    hi = np.full(kf.shape, -np.inf)
    lo = np.zeros(kf.shape)
    err = np.full(kf.shape, np.inf)
    idx = np.flatnonzero(ok)
    for c in range(0, idx.size, _DD_CHUNK):  # bounded temporaries (a double-word log holds ~30 arrays)
        sel = idx[c : c + _DD_CHUNK]
        kk, gg, bb, dd_, pp, qq, tt = (a[sel] for a in (kf, gf, bf, df, pf, qf, tf))
        m = kk.size
        same = bool(np.all(tt == tt[0]) and np.all(dd_ == dd_[0]))
        norm = slice(0, 1) if same else slice(None)
        bh, bl, be = _log_binom_dd(
            np.concatenate([kk, dd_ - kk, dd_[norm]]),
            np.concatenate([gg, bb, tt[norm]]),
            np.concatenate([pp, pp, pp[norm]]),
            np.concatenate([qq, qq, qq[norm]]),
        )
        b3h, b3l, b3e = bh[2 * m :], bl[2 * m :], be[2 * m :]
        sh, sl = dd_add(bh[:m], bl[:m], bh[m : 2 * m], bl[m : 2 * m])
        vh, vl = dd_add(sh, sl, np.broadcast_to(-b3h, sh.shape), np.broadcast_to(-b3l, sh.shape))
        mag = np.abs(bh[:m]) + np.abs(bh[m : 2 * m]) + np.abs(b3h)
        hi[sel], lo[sel] = vh, vl
        err[sel] = be[:m] + be[m : 2 * m] + b3e + 2.01 * DD_REL * (mag + 1.0)
    return hi.reshape(shape), lo.reshape(shape), err.reshape(shape)


def log_hypergeom_pmf_dd_where(
    k: npt.ArrayLike, good: npt.ArrayLike, bad: npt.ArrayLike, draws: npt.ArrayLike, want: Wanted
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(value, lo, err)``: :func:`log_hypergeom_pmf` as ``value``; where ``want(value)`` holds, a
    proven bound ``err`` on ``|value + lo - log P(k)|`` (``+inf`` elsewhere, ``lo = 0``).

    Where wanted, every factor is interior and ``|value| >`` :data:`DD_FROM`, ``value + lo`` is
    the double-word value of
    :func:`log_hypergeom_pmf_dd` and ``err`` its bound; at the other wanted counts ``lo = 0`` and
    ``err`` is the running bound of :func:`log_hypergeom_pmf_with_error` plus its two additions
    (``2.01 u (|value| + 2 log(total + 2) + 2)`` each, the binomial at the mean being at most
    ``log(total) + 1`` in size), or the a-priori bound of
    :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error` where that is smaller: every
    finite ``err`` bounds the whole error of ``value + lo``."""
    k, good, bad, draws, _, _ = _urn(k, good, bad, draws)
    inner = (k > 0) & (k < good) & (draws - k > 0) & (draws - k < bad) & (draws < good + bad)
    chosen = np.zeros(k.shape, dtype=bool)

    def want_float(value: FloatArray) -> npt.NDArray[np.bool_]:
        w = want(value)
        chosen[...] = w & inner & (np.abs(value) > DD_FROM)
        out: npt.NDArray[np.bool_] = w & ~chosen
        return out

    value, err = log_hypergeom_pmf_with_error(k, good, bad, draws, want_float)
    lo = np.zeros(value.shape)
    logt = np.log(good + bad + 2.0)
    err = err + 2.0 * 2.01 * _U * (np.abs(value) + 2.0 * logt + 2.0)
    err = np.minimum(err, lpmf_abs_error(value, good + bad, 3))
    if np.any(chosen):
        h, lo_, e = log_hypergeom_pmf_dd(k[chosen], good[chosen], bad[chosen], draws[chosen])
        value = value.copy()
        value[chosen], lo[chosen], err[chosen] = h, lo_, e
    return value, lo, np.where(np.isfinite(err), err, np.inf)


def log_binom_pmf_dd(
    k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike, q: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Loader's binomial log-pmf in double-word arithmetic: ``(hi, lo, err)`` with
    ``|hi + lo - v| <= err`` for ``0 < k < n`` and floats ``0 < p, q`` (else ``err = inf``), ``v``
    the value of Loader's formula for the given floats, ``log C(n, k) + k log p + (n - k) log q -
    n (p + q - 1)`` (the last term is 0 when ``p + q = 1`` exactly); see :func:`_log_binom_dd`."""
    k, n, p, q = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (k, n, p, q)))
    ok = (k > 0) & (k < n) & (p > 0) & (q > 0)
    hi = np.full(k.shape, -np.inf)
    lo = np.zeros(k.shape)
    err = np.full(k.shape, np.inf)
    if np.any(ok):
        hi[ok], lo[ok], err[ok] = _log_binom_dd(k[ok], n[ok], p[ok], q[ok])
    return hi, lo, err
