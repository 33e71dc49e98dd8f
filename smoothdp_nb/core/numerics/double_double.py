"""Double-word ("double-double") arithmetic on numpy arrays, with proven error bounds.

A double-word number is a pair of float64 arrays ``(hi, lo)`` with ``|lo| <= u |hi|``
(u = 2^-53) standing for ``hi + lo``: about 106 bits, enough to evaluate a log-pmf of size 10^6
to an absolute error far below one ulp of its float64 value.  The algorithms are the ones of
Joldes, Muller and Popescu (2017), whose relative error bounds are proven there; the exact
products are Dekker's (:func:`~smoothdp_nb.core.numerics.enclosures.two_prod`, no fma needed).
Every operation below has a relative error at most :data:`DD_REL` ``= 32 u^2`` (the published
bounds of these algorithms are 2u^2 to 15u^2 + 56u^3), for normal floats well inside the range
(no overflow, no result below 2^-900).

References
----------
M. Joldes, J.-M. Muller, V. Popescu, "Tight and rigorous error bounds for basic building blocks
of double-word arithmetic", ACM Transactions on Mathematical Software 44(2), 2017.
T. J. Dekker, "A floating-point technique for extending the available precision",
Numerische Mathematik 18, 1971.
"""

from __future__ import annotations

import decimal
import functools
import math

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.enclosures import U, two_prod

__all__ = ["DD_REL", "LOG_DD_REL", "dd_add", "dd_add_fp", "dd_div", "dd_log", "dd_mul", "dd_mul_fp", "two_sum"]

#: relative error bound of every double-word operation of this module (Joldes et al. 2017)
DD_REL = 32.0 * U * U
#: :func:`dd_log`'s absolute error is at most ``LOG_DD_REL (|e| ln 2 + 1)``, e the binary exponent
LOG_DD_REL = 2.0**-92

DD = tuple[FloatArray, FloatArray]


def two_sum(a: npt.ArrayLike, b: npt.ArrayLike) -> DD:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth's TwoSum)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _fast_two_sum(a: FloatArray, b: FloatArray) -> DD:
    """TwoSum for ``|a| >= |b|`` (or a = 0): exact (Dekker)."""
    s = a + b
    return s, b - (s - a)


def dd_add(xh: FloatArray, xl: FloatArray, yh: FloatArray, yl: FloatArray) -> DD:
    """x + y, both double-word (AccurateDWPlusDW, Algorithm 6 of Joldes et al.: relative error
    at most ``3u^2 + 13u^3``, whatever the cancellation).

    References
    ----------
    Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
    double-word arithmetic", ACM TOMS 44(2), 2017.
    """
    sh, sl = two_sum(xh, yh)
    th, tl = two_sum(xl, yl)
    vh, vl = _fast_two_sum(sh, sl + th)
    return _fast_two_sum(vh, tl + vl)


def dd_add_fp(xh: FloatArray, xl: FloatArray, y: npt.ArrayLike) -> DD:
    """x + y, x double-word, y a float (DWPlusFP, Algorithm 4: relative error at most ``2u^2``).

    References
    ----------
    Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
    double-word arithmetic", ACM TOMS 44(2), 2017.
    """
    sh, sl = two_sum(xh, y)
    return _fast_two_sum(sh, xl + sl)


def dd_mul_fp(xh: FloatArray, xl: FloatArray, y: npt.ArrayLike) -> DD:
    """x y, x double-word, y a float (DWTimesFP1, Algorithm 7 of Joldes et al.; with the exact
    product the relative error is at most ``3u^2``: the rounding of ``xl y`` (at most ``u^2 |x y|``)
    and of the sum of the two low parts (at most ``2u^2 |x y|``)).

    References
    ----------
    Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
    double-word arithmetic", ACM TOMS 44(2), 2017.
    """
    ch, cl1 = two_prod(xh, y)
    th, tl1 = _fast_two_sum(ch, xl * np.asarray(y, dtype=float))
    return _fast_two_sum(th, tl1 + cl1)


def dd_mul(xh: FloatArray, xl: FloatArray, yh: FloatArray, yl: FloatArray) -> DD:
    """x y, both double-word (DWTimesDW1, Algorithm 10 of Joldes et al., its fma replaced by a
    product and a sum: ``xh yh`` exact; the neglected ``xl yl`` and the roundings of ``xh yl``,
    ``xl yh``, their sum and the sum of the low parts are at most ``u^2, u^2, u^2, 2.01u^2,
    3.01u^2`` of ``|x y|``: relative error below ``9u^2``).

    References
    ----------
    Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
    double-word arithmetic", ACM TOMS 44(2), 2017.
    """
    ch, cl1 = two_prod(xh, yh)
    cl2 = xh * yl + xl * yh
    return _fast_two_sum(ch, cl1 + cl2)


def dd_div(xh: FloatArray, xl: FloatArray, yh: FloatArray, yl: FloatArray) -> DD:
    """x / y, both double-word (DWDivDW1, Algorithm 15 of Joldes et al.: relative error at most
    ``15u^2 + 56u^3``).

    References
    ----------
    Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
    double-word arithmetic", ACM TOMS 44(2), 2017.
    """
    th = xh / yh
    rh, rl = dd_mul_fp(yh, yl, th)
    ph, pl = two_sum(xh, -rh)
    dl = (pl - rl) + xl
    tl = (ph + dl) / yh
    return _fast_two_sum(th, tl)


#: ln 2 as a double-word number (40 correct digits, rounded twice: relative error below 2^-104)
_LN2 = (0.6931471805599453, 2.3190468138462996e-17)
_TABLE_BITS = 7  # c_j = j / 128 for j in 96 .. 192: |f / c_j - 1| <= 1/192


@functools.lru_cache(maxsize=1)
def _log_table() -> tuple[FloatArray, FloatArray]:
    """``log(j / 128)`` for j = 0 .. 192 as double-word numbers (j < 96 unused, set to 0), by
    :mod:`decimal` at 40 digits (correctly rounded ``ln``): each within ``2^-104`` of its
    value, relatively (as :func:`~smoothdp_nb.core.numerics.enclosures.exp_double`)."""
    hi = np.zeros(193)
    lo = np.zeros(193)
    with decimal.localcontext(prec=40, rounding=decimal.ROUND_HALF_EVEN):
        for j in range(96, 193):
            d = (decimal.Decimal(j) / 128).ln()
            h = float(d)
            hi[j], lo[j] = h, float(d - decimal.Decimal(h))
    return hi, lo


def dd_log(xh: npt.ArrayLike, xl: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(hi, lo, err)``: ``|hi + lo - log(xh + xl)| <= err`` for a double-word ``x > 0``
    (``|xl| <= u |xh|``, ``2^-900 < xh < 2^900``).

    The argument.  ``xh = f 2^e`` with ``f`` in [3/4, 3/2) (frexp, exact); ``c = j / 128`` the
    nearest table point, so ``|f - c| <= 1/256`` and ``|t| <= 1/380`` for
    ``t = (f + xl 2^-e - c) / (f + xl 2^-e + c)``, and
    ``log x = e ln 2 + log c + 2 atanh t``, ``2 atanh t = 2t + 2t^3/3 + 2t^5/5 + ...``.
    ``f - c`` is exact (Sterbenz) and TwoSum adds ``xl 2^-e`` exactly; the denominator is one
    TwoSum and one DWPlusFP, ``t`` one DWDivDW (relative error at most ``DD_REL`` each), ``t^3``
    two DWTimesDW and ``/ 3`` one DWTimesFP by the double-word 1/3 (``2^-104`` off): so
    ``t + t^3/3`` carries at most ``(3 DD_REL + 4 DD_REL) |t|``.  The rest
    ``2 t^5 (1/5 + t^2/7 + t^4/9 + t^6/11)`` is evaluated in float64 from ``t_hi``: its
    relative error is below ``16 u`` (``t_hi^2`` is within ``3.01 u`` of ``t^2``, its square and
    the product by ``t_hi`` add ``4.1 u``, the sum ``2.1 u``, the constants and the last product
    ``2 u``), i.e. below ``16 u (2/5) 1.001 |t|^5 < 2^-93.1`` for ``|t| <= 1/380``; the series cut
    after ``t^11`` leaves less than ``|t|^13 / 6 < 2^-110``.  ``e ln 2`` is exact in its high part
    (TwoProduct) and ``u |e ln2_lo|`` off in the low part; ``ln 2`` and the table carry ``2^-104``
    relatively.  The three double-word additions add ``DD_REL`` of the sums of the magnitudes, at
    most ``|e| ln 2 + 0.41 + 2.02 |t|``.  All told the error is below
    ``2^-93.1 + 2^-100 (|e| ln 2 + 1) <= 2^-92 (|e| ln 2 + 1)`` (:data:`LOG_DD_REL`), returned as
    ``err``.

    References
    ----------
    Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
    double-word arithmetic", ACM TOMS 44(2), 2017.
    """
    xh = np.asarray(xh, dtype=float)
    xl = np.asarray(xl, dtype=float)
    f, e = np.frexp(xh)  # f in [1/2, 1)
    small = f < 0.75
    f = np.where(small, 2.0 * f, f)
    e = np.where(small, e - 1, e)
    fl = np.ldexp(xl, -e)
    j = np.rint(f * 128.0)
    c = j / 128.0
    nh, nl = two_sum(f - c, fl)
    dh, dl = two_sum(f, c)
    dh, dl = dd_add_fp(dh, dl, fl)
    th, tl = dd_div(nh, nl, dh, dl)
    t2h, t2l = dd_mul(th, tl, th, tl)
    t3h, t3l = dd_mul(t2h, t2l, th, tl)
    ch, cl = dd_mul(t3h, t3l, np.full_like(th, 1.0 / 3.0), np.full_like(th, 1.850371707708594e-17))
    sh, sl = dd_add(th, tl, ch, cl)
    s2 = th * th
    rest = 2.0 * (s2 * s2 * th) * (0.2 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 + s2 * (1.0 / 11.0))))
    ef = e.astype(float)
    lh, ll = two_prod(ef, _LN2[0])
    ll = ll + ef * _LN2[1]
    tab_h, tab_l = _log_table()
    ji = j.astype(np.int64)
    ah, al = dd_add(lh, ll, tab_h[ji], tab_l[ji])
    ah, al = dd_add(ah, al, 2.0 * sh, 2.0 * sl)
    ah, al = dd_add_fp(ah, al, rest)
    err: FloatArray = LOG_DD_REL * (np.abs(ef) * math.log(2.0) + 1.0)
    return ah, al, err
