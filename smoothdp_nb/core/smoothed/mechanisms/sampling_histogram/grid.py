"""The m > 2 path of the sampling histogram (Algorithm 2 of *Smoothed Differential Privacy*).

The joint law of the sampled counts of the two categories a neighbour pair changes, on its full
(T + 1)^2 grid, and the proven error bounds of its logs and of the likelihood ratio (see
:mod:`smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism`).

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*, Algorithm 2 and Appendix F.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LGAMMA_REL, LIBM_REL, gamma

__all__ = ["log_factorials", "log_falling_factorials", "log_joint_ab", "log_joint_error", "log_ratio_error"]


def log_ratio_error(
    replace: bool, u: npt.ArrayLike, v: npt.ArrayLike, oa: npt.ArrayLike, ob: npt.ArrayLike, T: int
) -> FloatArray:
    """Proven bound on the absolute error of :meth:`SamplingHistogram.log_ratio`.

    Without replacement each ``log1p(-o/(w + 1))`` has the quotient's
    rounding ``u y`` amplified by ``1/(1 - y)``, i.e. ``u o/(w + 1 - o)``
    (``o = w + 1`` gives an exact quotient 1 and an exact -inf), and the log's own
    ``LIBM_REL``; with replacement each ``o log1p(1/w)`` carries
    ``LIBM_REL + 3u`` of its value; the final difference ``u`` of the result.
    """
    uf = np.asarray(u, dtype=float)
    vf = np.asarray(v, dtype=float)
    oaf = np.asarray(oa, dtype=float)
    obf = np.asarray(ob, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if replace:
            ta = np.where(oaf == 0, 0.0, oaf * np.log1p(1.0 / uf))
            tb = np.where(obf == 0, 0.0, obf * np.log1p(1.0 / vf))
            mag = np.abs(ta) + np.abs(tb)
            out = (LIBM_REL + 4.0 * 2.0**-53) * mag
        else:
            ta = np.log1p(-oaf / (uf + 1.0))
            tb = np.log1p(-obf / (vf + 1.0))
            mag = np.abs(ta) + np.abs(tb)
            # d log1p(-y) = -dy/(1 - y): the quotient's rounding u y becomes u o/(w + 1 - o)
            amp = np.where(oaf < uf + 1.0, oaf / (uf + 1.0 - oaf), 0.0) + np.where(
                obf < vf + 1.0, obf / (vf + 1.0 - obf), 0.0
            )
            out = (LIBM_REL + 2.0**-53) * mag + 1.01 * 2.0**-53 * amp
    res: FloatArray = np.where(np.isfinite(out), out, 0.0)  # an infinite ratio is exact (a zero probability)
    return res


def log_joint_error(n: int, T: int) -> float:
    """Proven bound on the absolute error of :func:`log_joint_ab` for counts up to T.

    Without replacement: three binomial coefficients and one divisor, each
    ``log C(N, k) = sum_{i<k} log(N - i) - log k!``: k logs of numbers up to
    n (``LIBM_REL`` each), their running sum (``gamma_T`` of the sum of the
    magnitudes, at most ``T log n``), and a table log k! (:data:`LGAMMA_REL`
    plus 1e-15); then the additions of the four (``gamma_4`` of their
    magnitudes).  With replacement: four table log-factorials and three
    products ``o log(p)`` (``LIBM_REL + 2u`` each), summed with ``gamma_7``.
    """
    logn = math.log(n + 1.0)
    lfT = math.lgamma(T + 1.0)
    mag = 4.0 * (T * logn + lfT)
    per = (LIBM_REL + float(gamma(T + 2))) * 4.0 * T * logn + 4.0 * (LGAMMA_REL * lfT + 1e-15)
    return float(per + float(gamma(8)) * mag)


def log_joint_ab(
    replace: bool,
    u: npt.ArrayLike,
    v: npt.ArrayLike,
    rest: npt.ArrayLike,
    n: int,
    T: int,
    oa: FloatArray,
    ob: FloatArray,
) -> FloatArray:
    """log P[(o_a, o_b)] under x (u+1 records of a, v of b, rest others).

    Every sample count is at most T, so only ``log k!`` for ``k <= T`` comes from a
    (lgamma, ulp-accurate) table; a binomial coefficient of a large argument N is
    ``log C(N, k) = sum_{i<k} log(N - i) - log k!``, a cumulative sum of k logs per N.
    Its absolute error is about ``k`` ulps of ``log N`` whatever n is (a table of
    ``log N!`` would lose ``n log n * 1e-16`` to cancellation and take 8 bytes per record:
    7 TiB at n = 10^12).
    """
    lf = log_factorials(T)
    oa_i = np.broadcast_to(oa, np.broadcast_shapes(np.shape(oa), np.shape(ob))).astype(np.int64)
    ob_i = np.broadcast_to(ob, oa_i.shape).astype(np.int64)
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    rest = np.asarray(rest, dtype=np.int64)
    oc = T - oa_i - ob_i  # records of the other categories in the sample

    def lgc(N: IntArray, k: IntArray) -> FloatArray:
        """log C(N, k) for 0 <= k <= T (-inf outside 0 <= k <= N)."""
        ok = (k >= 0) & (k <= N)
        falling = log_falling_factorials(N, T)  # shape N.shape + (T + 1,)
        kk = np.where(ok, k, 0)
        shape = np.broadcast_shapes(N.shape, kk.shape)
        picked = np.take_along_axis(
            np.broadcast_to(falling, shape + (T + 1,)), np.broadcast_to(kk, shape)[..., None], axis=-1
        )[..., 0]
        return np.where(ok, picked - lf[kk], -np.inf)

    if replace:
        with np.errstate(divide="ignore"):
            logs = np.log(np.stack([u + 1.0, v * 1.0, rest * 1.0])) - math.log(n)
        # 0 * log 0 = 0 (a category with no records is never drawn); np.where
        # picks the right branch, the discarded one may be nan
        with np.errstate(invalid="ignore"):
            res = (
                lf[T]
                - lf[oa_i]
                - lf[ob_i]
                - lf[np.maximum(oc, 0)]
                + np.where(oa_i > 0, oa_i * logs[0], 0.0)
                + np.where(ob_i > 0, ob_i * logs[1], 0.0)
                + np.where(oc > 0, oc * logs[2], 0.0)
            )
        res = np.where(oc >= 0, res, -np.inf)
    else:
        log_c_nT = float(lgc(np.array(n, dtype=np.int64), np.array(T, dtype=np.int64)))
        res = lgc(u + 1, oa_i) + lgc(v, ob_i) + lgc(rest, oc) - log_c_nT
    return np.where(np.isnan(res), -np.inf, res)


def log_falling_factorials(N: IntArray, T: int) -> FloatArray:
    """``out[..., k] = log(N (N-1) ... (N-k+1))`` for k = 0..T (terms with N - i <= 0 give -inf/nan,
    masked by the caller, which only reads k <= N)."""
    i = np.arange(T, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.log(np.asarray(N, dtype=np.float64)[..., None] - i)
    out: FloatArray = np.concatenate([np.zeros(np.shape(N) + (1,)), np.cumsum(terms, axis=-1)], axis=-1)
    return out


def log_factorials(n: int) -> FloatArray:
    """lf[k] = log k! for k = 0..n (cached per size)."""
    cached = _LF_CACHE.get("table")
    if cached is None or len(cached) <= n:
        cached = gammaln(np.arange(max(n, 1024) + 1, dtype=float) + 1.0)
        _LF_CACHE["table"] = cached
    return cached


_LF_CACHE: dict[str, FloatArray] = {}
