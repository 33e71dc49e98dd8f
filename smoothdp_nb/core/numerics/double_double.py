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
LOG_DD_REL = 2.0**-84

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


#: ln 2 as a double-word number (40 correct digits, rounded twice: relative error below 2^-104);
#: its high word split in two halves of at most 26 bits (Dekker), so ``e ln2_hi`` is two exact
#: products for every integer ``|e| < 2^11``
_LN2 = (0.6931471805599453, 2.3190468138462996e-17)
_LN2_A, _LN2_B = 0.6931471824645996, -1.904654323148236e-09
_TABLE = 1024  # c_j = j / 1024 for j in 768 .. 1536: |f / c_j - 1| <= 1/1536


@functools.lru_cache(maxsize=1)
def _log_table() -> tuple[FloatArray, FloatArray]:
    """``log(j / 1024)`` for j = 0 .. 1536 as double-word numbers (j < 768 unused, set to 0), by
    :mod:`decimal` at 40 digits (correctly rounded ``ln``): each within ``2^-104`` of its
    value, relatively (as :func:`~smoothdp_nb.core.numerics.enclosures.exp_double`)."""
    hi = np.zeros(_TABLE + _TABLE // 2 + 1)
    lo = np.zeros(hi.size)
    with decimal.localcontext(prec=40, rounding=decimal.ROUND_HALF_EVEN):
        for j in range(3 * _TABLE // 4, hi.size):
            d = (decimal.Decimal(j) / _TABLE).ln()
            h = float(d)
            hi[j], lo[j] = h, float(d - decimal.Decimal(h))
    return hi, lo


def dd_log(xh: npt.ArrayLike, xl: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(hi, lo, err)``: ``|hi + lo - log(xh + xl)| <= err`` for a double-word ``x > 0``
    (``|xl| <= u |xh|``, ``2^-900 < xh < 2^900``).

    The argument.  ``xh = f 2^e`` with ``f`` in [3/4, 3/2) (frexp, exact); ``c = j / 1024`` the
    nearest table point, so ``|f - c| <= 1/2048`` and ``|t| <= 1/3000 < 2^-11.5`` for
    ``t = (f + xl 2^-e - c) / (f + xl 2^-e + c)``, and
    ``log x = e ln 2 + log c + 2 atanh t``, ``2 atanh t = 2t + 2t^3/3 + 2t^5/5 + ...``.
    ``f - c`` is exact (Sterbenz) and TwoSum adds ``xl 2^-e`` exactly; the denominator is one
    TwoSum and one DWPlusFP, ``t`` one DWDivDW: ``2t`` is within ``2 DD_REL |2t|`` of its value.
    The rest ``2 t^3 (1/3 + t^2/5 + t^4/7)`` is float64 from ``t_hi``: below ``10 u`` of itself
    (``t_hi`` is within u of t, the cube and the products a few u, the constants u), i.e. below
    ``7u |t|^3 < 2^-85``; the series cut after ``t^7`` leaves less than ``2 |t|^9 / 9 < 2^-105``.  ``e ln2_hi`` is two exact products (``|e| < 2^11`` times halves of 26 bits) joined
    exactly by Fast2Sum, ``e ln2_lo`` one rounding (``u`` of ``2^-54 |e|``); ``ln 2`` and the table
    carry ``2^-104`` relatively.  The three double-word additions add ``DD_REL`` of the sums of
    the magnitudes, at most ``|e| ln 2 + 0.41 + 2 |t|``.  All told the error is below
    ``2^-85 + 2^-100 (|e| ln 2 + 1) <= 2^-84 (|e| ln 2 + 1)`` (:data:`LOG_DD_REL`), returned as
    ``err``: for ``x log(x/m)`` with ``x < 2^30`` that is below 1e-16 (|e| < 40).

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
    j = np.rint(f * _TABLE)
    c = j / _TABLE
    nh, nl = two_sum(f - c, fl)
    dh, dl = two_sum(f, c)
    dh, dl = dd_add_fp(dh, dl, fl)
    th, tl = dd_div(nh, nl, dh, dl)
    s2 = th * th
    rest = 2.0 * (s2 * th) * (1.0 / 3.0 + s2 * (0.2 + s2 / 7.0))
    ef = e.astype(float)
    lh, ll = _fast_two_sum(ef * _LN2_A, ef * _LN2_B)
    ll = ll + ef * _LN2[1]
    tab_h, tab_l = _log_table()
    ji = j.astype(np.int64)
    ah, al = dd_add(lh, ll, tab_h[ji], tab_l[ji])
    ah, al = dd_add(ah, al, 2.0 * th, 2.0 * tl)
    ah, al = dd_add_fp(ah, al, rest)
    err: FloatArray = LOG_DD_REL * (np.abs(ef) * math.log(2.0) + 1.0)
    return ah, al, err
