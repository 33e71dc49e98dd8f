"""Certified numbers: how every privacy number of the package is proven.

A reported delta is a promise, so every delta the package returns by default
is a proven **upper** bound on the exact value, and results also carry a
proven **lower** bound.  This module is the one place that knows how such a
pair is made; the engines call it and do not invent their own rules.

The enclosure type
------------------
:class:`LogEnclosure` holds two arrays of natural logarithms,
``lower <= log(delta) <= upper`` (``-inf`` for a bound of 0, which a lower
bound may be where the truth is 0; an upper bound is ``-inf`` only where the
truth is provably an exact 0).  Tiny deltas (1e-5000) stay representable;
:attr:`LogEnclosure.delta_upper` / :attr:`LogEnclosure.delta_lower` are the
linear bounds, rounded outward (a positive upper bound never underflows to 0:
it becomes the smallest subnormal number, still above the truth).

The error model
---------------
Every float64 path of the package is certified by "its result plus a proven
bound on its error".  The bounds rest on these facts, and on nothing else:

* **IEEE 754 binary64, round to nearest** (numpy and the BLAS on every
  supported platform): ``+ - * /`` and ``sqrt`` are correctly rounded, so each
  has a relative error at most the unit roundoff ``u = 2^-53`` (:data:`U`);
  integers below 2^53 are exact.  A sum of N non-negative terms in any order
  (pairwise, BLAS blocking) has a relative error at most ``(N - 1) u /
  (1 - (N - 1) u)`` (Higham, *Accuracy and Stability of Numerical
  Algorithms*, 2nd ed., eq. (4.4) and Lemma 3.1); a product of k factors at
  most ``k u / (1 - k u)``.  :func:`gamma` is that ``gamma_k``.
* **Elementary functions** (``exp, log, log1p, expm1`` of numpy and of the C
  library): glibc documents a maximum known error of 1-2 ulps for these on
  x86_64 and aarch64 (*The GNU C Library manual*, "Known Maximum Errors in
  Math Functions"); numpy's SIMD versions state at most 1 ulp (numpy 1.20
  release notes, AVX512F exp/log).  We assume **4 ulps** (a safety factor of
  two at least), i.e. a relative error at most :data:`LIBM_REL` ``= 8u``.
* **lgamma** (``math.lgamma``, ``scipy.special.gammaln``, Cephes): relative
  error at most a few ulps away from its zeros at 1 and 2; we assume
  :data:`LGAMMA_REL` ``= 16 u`` relative, plus ``1e-15`` absolute near the zeros.
* **Arb** (python-flint): ball arithmetic with rigorous radii (Johansson,
  "Arb: efficient arbitrary-precision midpoint-radius interval arithmetic",
  IEEE Trans. Computers 2017); a ball is turned into floats by rounding its
  endpoints outward (:func:`arb_interval`).

Log-space rules used everywhere: an absolute error ``a`` of a logarithm is a
relative error ``e^a - 1`` of the number, and a relative error ``r`` of a
positive number is an absolute error of at most ``-log(1 - r)`` of its
logarithm (:func:`log_rel`).  The Loader log-pmfs of :mod:`.lpmf` have a
proven absolute error (:func:`lpmf_abs_error`), which stays relative to the
*probability*, whatever n.

References
----------
N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002.
F. Johansson, "Arb: efficient arbitrary-precision midpoint-radius interval
arithmetic", IEEE Transactions on Computers 66(8), 2017.
C. Loader, "Fast and accurate computation of binomial probabilities", 2000.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray

__all__ = [
    "LIBM_REL",
    "LGAMMA_REL",
    "U",
    "LogEnclosure",
    "arb_interval",
    "exp_down",
    "exp_up",
    "fraction_down",
    "fraction_up",
    "gamma",
    "log_fraction_enclosure",
    "log_rel",
    "log10_up",
    "lpmf_abs_error",
    "next_down",
    "next_up",
    "sum_up",
    "two_prod",
    "exp_double",
]

#: unit roundoff of IEEE 754 binary64, round to nearest
U = 2.0**-53
#: assumed relative error of exp, log, log1p, expm1 (4 ulps; see the module docstring)
LIBM_REL = 8.0 * U
#: assumed relative error of lgamma away from its zeros (8 ulps)
LGAMMA_REL = 16.0 * U
#: smallest positive float64 (subnormal): the upper bound of a positive number that underflows
TINY = 5e-324


def gamma(k: npt.ArrayLike) -> FloatArray:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error bound of k
    roundings (a product of k factors, a sum of k + 1 non-negative terms),
    rounded up; ``inf`` when ``k u >= 1/2``."""
    k = np.asarray(k, dtype=float)
    ku = k * U
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(ku < 0.5, next_up(ku / (1.0 - ku)) * (1.0 + 4.0 * U), np.inf)
    return out


def next_up(x: npt.ArrayLike) -> FloatArray:
    """The next float64 above x (``-inf`` stays ``-inf``; ``inf`` and nan stay)."""
    a = np.asarray(x, dtype=float)
    out: FloatArray = np.where(np.isneginf(a), a, np.nextafter(a, np.inf))
    return out


def log10_up(log_values: npt.ArrayLike) -> FloatArray:
    """Upper bounds on ``log10(exp(v))`` for natural logs v: ``v / ln 10`` moved up two
    ulps (the double nearest ln 10 is within u of it and the division is correctly
    rounded: a relative error below 2.01u, less than two ulps of the result); ``-inf``
    and an exact 0 stay as they are."""
    v = np.asarray(log_values, dtype=float) / math.log(10.0)
    out: FloatArray = np.where(np.isfinite(v) & (v != 0.0), next_up(next_up(v)), v)
    return out


def next_down(x: npt.ArrayLike) -> FloatArray:
    """The next float64 below x (``-inf`` stays; ``inf`` stays ``inf``)."""
    a = np.asarray(x, dtype=float)
    out: FloatArray = np.where(np.isposinf(a), a, np.nextafter(a, -np.inf))
    return out


def log_rel(r: npt.ArrayLike) -> FloatArray:
    """An upper bound on ``-log(1 - r)`` (>= log(1 + r)): the absolute log error
    of a positive number known to a relative error r; ``inf`` for r >= 1."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(r < 1.0, next_up(-np.log1p(-r) * (1.0 + LIBM_REL)), np.inf)
    return out


def exp_up(x: npt.ArrayLike) -> FloatArray:
    """A float >= e^x (the smallest subnormal where e^x > 0 underflows)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        v = next_up(np.exp(x) * (1.0 + LIBM_REL))
    out: FloatArray = np.where(np.isneginf(x), 0.0, np.maximum(v, TINY))
    return out


def exp_down(x: npt.ArrayLike) -> FloatArray:
    """A float <= e^x (>= 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        v = next_down(np.exp(x) * (1.0 - LIBM_REL))
    out: FloatArray = np.maximum(v, 0.0)
    return out


def lpmf_abs_error(value: npt.ArrayLike, n: npt.ArrayLike, factors: int = 1) -> FloatArray:
    """Proven bound on the absolute error of a log-pmf from :mod:`.lpmf`.

    ``value`` is the computed log-pmf (<= 0), ``n`` the largest count involved
    and ``factors`` the number of Loader binomial log-pmfs combined (1 for a
    binomial, 3 for a hypergeometric, 2 m - 1 for a product of them).

    The argument.  Loader's binomial log-pmf is a sum of eight terms:
    ``stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, np) - bd0(n - k, nq)
    - (log 2 pi + log k + log1p(-k/n)) / 2``.  The stirlerr values lie in
    [0, 1/12] with absolute error below ``1e-15`` (lgamma table for n <= 15,
    :data:`LGAMMA_REL` of an O(1) value; series truncation below 1e-17
    otherwise).  ``bd0 >= 0`` has a relative error at most ``2048 u``: in the
    series branch (``|v| < 0.1``) every term is a product of a few correctly
    rounded factors (``< 32 u``); in the direct branch ``x log(x/np) + np - x``
    the three terms sum in magnitude to at most 115 times the result for
    ``|v| >= 0.1`` (at v = +-0.1: ``1.11 s`` against ``0.0097 s``, s = x + np;
    the ratio falls as |v| grows), each term carries at most ``(5 + 8) u``
    (the log of a quotient near 1.2 amplifies its rounding five-fold), and the
    two additions ``2 u`` of the magnitudes: ``115 (13 + 2) u < 2048 u``.  The
    logs carry :data:`LIBM_REL`.  With ``S`` the sum of the magnitudes of the
    eight terms, the final additions add ``8 u S``, so the error is at most
    ``2048 u S + 3e-15``, and ``S <= |value| + log n + 1/6 + 1`` (the
    stirlerr and the log k, log 2 pi terms enter with the sign of the value,
    except ``stirlerr(n)`` and ``log1p(-k/n)``, which are at most 1/12 and
    log n).  A hypergeometric log-pmf is ``b1 + b2 - b3`` with ``b1, b2 <= 0``
    and ``b3`` the binomial at its mean (``|b3| <= log n + 1``), so
    ``|b1| + |b2| <= |value| + |b3|``: summing the three bounds (and ``2 u``
    for the two additions) gives the bound below with ``factors = 3``.
    """
    v = np.abs(np.asarray(value, dtype=float))
    logn = np.log(np.maximum(np.asarray(n, dtype=float), 1.0)) + 2.0
    err: FloatArray = 2100.0 * U * (v + factors * logn * 2.0 + 2.0) + factors * 4e-15
    return err


_SPLIT = 134217729.0  # 2^27 + 1 (Dekker's splitting constant)


def two_prod(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``(p, e)`` with ``p + e = a b`` exactly (Dekker's algorithm, no fma needed;
    valid for ``|a|, |b| < 2^995`` and products above 2^-969: Dekker 1971,
    Theorem 6.2 of Muller et al., *Handbook of Floating-Point Arithmetic*).

    References
    ----------
    Dekker. *A floating-point technique for extending the available precision*, Numerische Mathematik 18, 1971.
    Muller et al. *Handbook of Floating-Point Arithmetic*, Birkhäuser (Theorem 6.2).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    p = a * b
    ca = _SPLIT * a
    ah = ca - (ca - a)
    al = a - ah
    cb = _SPLIT * b
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@functools.lru_cache(maxsize=1024)
def exp_double(x: float) -> tuple[float, float]:
    """``(hi, lo)``: two floats with ``|hi + lo - e^x| <= 2^-104 e^x`` for ``|x| <= 650`` (lo normal).

    Computed by :mod:`decimal` at 40 significant digits, whose ``exp`` is correctly rounded
    (round-half-even, the General Decimal Arithmetic specification), so ``d = exp(x)`` has a
    relative error at most ``5e-40``.  ``hi = float(d)`` is correctly rounded; the rest
    ``d - hi`` (about ``u d``) is formed to 40 digits and rounded to ``lo``, which adds at most
    ``5e-40 u d + u^2 d (1 + 5e-40)``.  In all ``|hi + lo - e^x| <= (5e-40 + 2^-106 (1 + 1e-39))
    e^x < 2^-104 e^x``.  (The standard library's decimal loads in a millisecond; Arb would cost
    a first profile tens of milliseconds of import.)
    """
    if float(x) > 710.0:  # e^x beyond the floats (the largest is about e^709.78), and beyond decimal's Emax
        return math.inf, 0.0
    with decimal.localcontext(prec=40, rounding=decimal.ROUND_HALF_EVEN, Emax=10**6, Emin=-(10**6)):
        d = decimal.Decimal(float(x)).exp()
        hi = float(d)
        if not math.isfinite(hi):  # e^x beyond the floats (or x a NaN): no second word
            return hi, 0.0
        lo = float(d - decimal.Decimal(hi))
    return hi, lo


def sum_up(values: Iterable[float]) -> float:
    """The exact sum of floats, rounded up to a float (via exact rationals)."""
    return fraction_up(sum((Fraction(float(v)) for v in values), Fraction(0)))


def fraction_up(q: Fraction) -> float:
    """The smallest float >= q (q an exact rational, finite)."""
    f = float(q)
    return f if Fraction(f) >= q else float(np.nextafter(f, np.inf))


def fraction_down(q: Fraction) -> float:
    """The largest float <= q."""
    f = float(q)
    return f if Fraction(f) <= q else float(np.nextafter(f, -np.inf))


def arb_interval(x: object) -> tuple[float, float]:
    """Floats (lo, hi) with lo <= every point of the Arb ball x <= hi."""
    from flint import arb  # deferred: Arb loads with the first certified enclosure

    if not isinstance(x, arb):
        raise TypeError("arb_interval needs a flint.arb ball")
    if not x.is_finite():
        return -math.inf, math.inf
    lo = float(np.nextafter(float(x.lower()), -np.inf))
    hi = float(np.nextafter(float(x.upper()), np.inf))
    return lo, hi


def log_fraction_enclosure(q: Fraction) -> tuple[float, float]:
    """(lo, hi) floats enclosing log(q) for a rational 0 < q, by :mod:`decimal` at 50 digits.

    The quotient ``x = p / r`` is rounded once to 50 digits (relative error at most ``5e-50``),
    and ``Decimal.ln`` is correctly rounded (General Decimal Arithmetic specification), so the
    computed ``L`` satisfies ``|L - log q| <= 5e-50 |L| + 1.01 * 5e-50`` (``log(x (1 + d)) =
    log x + log(1 + d)``).  The two ends ``L -+ err`` are converted to floats and moved one ulp
    outward, as :func:`arb_interval` does for a ball.
    """
    if q <= 0:
        raise ValueError("log_fraction_enclosure needs a positive rational")
    with decimal.localcontext(prec=50, rounding=decimal.ROUND_HALF_EVEN, Emax=10**6, Emin=-(10**6)):
        L = (decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)).ln()
        err = abs(L) * decimal.Decimal("5e-50") + decimal.Decimal("5.05e-50")
        lo, hi = float(L - err), float(L + err)
    return float(np.nextafter(lo, -np.inf)), float(np.nextafter(hi, np.inf))


def log_one_minus_power(n: int, T: int) -> tuple[float, float]:
    """(lo, hi) enclosing log(1 - (1 - 1/n)^T) for integers n >= 2, T >= 1 (Arb, 128 bits,
    more when the power is close to 1)."""
    from flint import arb, ctx  # deferred: Arb loads with the first certified enclosure

    old = ctx.prec
    try:
        for prec in (128, 512, 4096):
            ctx.prec = prec
            x = 1 - (1 - 1 / arb(n)) ** T
            if x > 0:
                return arb_interval(x.log())
        raise ArithmeticError("log(1 - (1 - 1/n)^T) not resolved at 4096 bits")
    finally:
        ctx.prec = old


@dataclass(frozen=True)
class LogEnclosure:
    """Proven bounds ``lower <= log(delta) <= upper`` (natural logs, arrays or floats).

    Attributes
    ----------
    lower, upper : float or ndarray
        Natural logs; ``-inf`` is a bound of 0.  An upper bound of ``-inf``
        means the value is an exact 0.

    The linear views :attr:`delta_upper` and :attr:`delta_lower` are rounded
    outward; :attr:`width` is ``upper/lower - 1`` of the linear bounds.
    """

    lower: FloatArray
    upper: FloatArray

    @property
    def delta_upper(self) -> FloatArray:
        """A float >= delta (never 0 for a positive delta), at most 1."""
        return np.minimum(exp_up(self.upper), 1.0)

    @property
    def delta_lower(self) -> FloatArray:
        """A float <= delta (>= 0)."""
        return exp_down(self.lower)

    @property
    def width(self) -> FloatArray:
        """``upper/lower - 1`` (0 for an exact zero, inf where the lower bound is 0)."""
        lo = np.asarray(self.lower, dtype=float)
        hi = np.asarray(self.upper, dtype=float)
        with np.errstate(invalid="ignore"):
            out: FloatArray = np.where(np.isneginf(hi), 0.0, np.expm1(hi - lo))
        return out

    @staticmethod
    def around(mid: npt.ArrayLike, err: npt.ArrayLike, cap: float = 0.0) -> LogEnclosure:
        """``[mid - err, mid + err]`` rounded outward, both at most ``cap`` (a proven
        bound, by default log 1 = 0).  ``mid = -inf`` with a finite err is an exact 0."""
        m = np.asarray(mid, dtype=float)
        e = np.asarray(err, dtype=float)
        with np.errstate(invalid="ignore"):
            lo = next_down(m - e)
            hi = next_up(m + e)
        lo = np.where(np.isnan(lo), -np.inf, lo)
        hi = np.where(np.isnan(hi), np.inf, hi)
        return LogEnclosure(np.minimum(lo, cap), np.minimum(hi, cap))

    def cap(self, log_bound: npt.ArrayLike) -> LogEnclosure:
        """Both bounds clipped at a proven upper bound ``log_bound`` of the value."""
        c = np.asarray(log_bound, dtype=float)
        return LogEnclosure(np.minimum(self.lower, c), np.minimum(self.upper, c))

    def maximum(self, other: LogEnclosure) -> LogEnclosure:
        """Enclosure of the larger of two values."""
        return LogEnclosure(np.maximum(self.lower, other.lower), np.maximum(self.upper, other.upper))

    def logaddexp(self, other: LogEnclosure) -> LogEnclosure:
        """Enclosure of the sum of two values (log-add-exp rounded outward:
        its error is below ``2u |result| + 2 LIBM_REL``)."""

        def out(a: FloatArray, b: FloatArray, sign: float) -> FloatArray:
            v = np.logaddexp(a, b)
            err = 2.0 * U * np.abs(v) + 2.0 * LIBM_REL
            with np.errstate(invalid="ignore"):
                r = next_up(v + err) if sign > 0 else next_down(v - err)
            return np.where(np.isneginf(v), v, r)

        return LogEnclosure(out(self.lower, other.lower, -1.0), out(self.upper, other.upper, 1.0))

    def shift(self, lo: npt.ArrayLike, hi: npt.ArrayLike) -> LogEnclosure:
        """Enclosure of value x factor, the factor's log enclosed by [lo, hi]."""
        lo_a = np.asarray(lo, dtype=float)
        hi_a = np.asarray(hi, dtype=float)
        with np.errstate(invalid="ignore"):
            a = next_down(np.asarray(self.lower, dtype=float) + lo_a)
            b = next_up(np.asarray(self.upper, dtype=float) + hi_a)
        return LogEnclosure(np.where(np.isnan(a), -np.inf, a), np.where(np.isnan(b), -np.inf, b))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.upper))

    def squeeze(self) -> LogEnclosure:
        """Scalars as Python floats (a 0-d result), arrays unchanged."""
        lo, hi = np.asarray(self.lower), np.asarray(self.upper)
        if lo.ndim == 0:
            return LogEnclosure(float(lo), float(hi))  # type: ignore[arg-type]
        return self
