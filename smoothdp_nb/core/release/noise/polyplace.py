"""PolyPlace noise (Hladik and Tetek, Definition 6): the distribution, its calibration and exact tail.

Density (Definition 6), normalisation (Lemma 7; the cdf and ppf below are the
antiderivatives ``I1``, ``I2`` of its proof, Appendix A), variance (Lemma 13)
and the calibration ``SS * Z`` with ``Z ~ PolyPlace(1/gamma, epsilon/gamma)``,
epsilon-DP for ``0 < gamma < epsilon`` (Theorem 8).

References
----------
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
Definition 6, Lemmas 7 and 13, Theorem 8.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx
from scipy.stats import rv_continuous

from smoothdp_nb.core.numerics.array_types import BoolArray, FloatArray
from smoothdp_nb.core.numerics.ball_arithmetic import float_down, float_up
from smoothdp_nb.core.numerics.validation import as_positive, as_real, as_rng
from smoothdp_nb.core.release.noise.base import Calibration, FrozenNoise, NoiseFamily, calibration_value
from smoothdp_nb.core.release.noise.registry import register_family

__all__ = ["PolyPlace", "PolyPlaceFamily", "polyplace_gen", "polyplace_variance"]


def _scalar_or_array(x: FloatArray) -> Any:
    """A 0-d result as a numpy scalar, anything else unchanged (hence ``Any``)."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _pp_log_apow(alpha: float | FloatArray) -> FloatArray | np.float64:
    """log(a^alpha) with a = (alpha-1)/alpha, computed without cancellation."""
    return alpha * np.log1p(-1.0 / alpha)


def _pp_K(alpha: float | FloatArray) -> FloatArray | np.float64:
    """K = 2((alpha-1)/alpha)^alpha + alpha - 1, so that N_{s,alpha} = alpha/(2 K s)."""
    return 2.0 * np.exp(_pp_log_apow(alpha)) + alpha - 1.0


def polyplace_variance(s: float | FloatArray, alpha: float | FloatArray) -> Any:
    """Variance of PolyPlace(s, alpha), Lemma 13 of Hladik and Tetek.

    ``sigma^2 = 2 s^2 [(19 alpha^2 + 5) a^alpha + (alpha-2)(alpha-1)^2]
    / (K (alpha^4 - 5 alpha^2 + 4))`` with ``a = (alpha-1)/alpha`` and
    ``K = 2 a^alpha + alpha - 1``; this is the paper's expression after
    dividing numerator and denominator by ``(1 + 1/alpha)^alpha``.  Infinite
    (``inf``, never negative) for ``1 < alpha <= 2``.

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Lemma 13.
    """
    s = np.asarray(s, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        apow = np.exp(_pp_log_apow(alpha))
        num = (19.0 * alpha**2 + 5.0) * apow + (alpha - 2.0) * (alpha - 1.0) ** 2
        den = _pp_K(alpha) * (alpha**2 - 1.0) * (alpha**2 - 4.0)
        var = 2.0 * s**2 * num / den
    var = np.where(alpha > 2.0, var, np.inf)
    return _scalar_or_array(var)


class polyplace_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """PolyPlace(s, alpha) of Definition 6; ``alpha`` is the shape, ``s`` the scipy scale.

    With ``s = 1``:  f(x) = N (alpha-1) (1-|x|)^(alpha-1) for |x| < 1/alpha and
    f(x) = N (alpha+1) (1-1/alpha^2)^alpha (1+|x|)^(-alpha-1) otherwise, where
    N = alpha / (2 (2((alpha-1)/alpha)^alpha + alpha - 1)).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Definition 6 and Lemma 7.
    """

    def _argcheck(self, alpha: FloatArray) -> BoolArray:
        return np.isfinite(alpha) & (alpha > 1.0)

    def _logpdf(self, x: FloatArray, alpha: FloatArray) -> FloatArray:
        ax = np.abs(x)
        logN = np.log(alpha) - np.log(2.0) - np.log(_pp_K(alpha))
        inner = ax * alpha < 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            li = logN + np.log(alpha - 1.0) + (alpha - 1.0) * np.log1p(-np.minimum(ax, 1.0))
            lo = logN + np.log(alpha + 1.0) + alpha * np.log1p(-1.0 / alpha**2) - (alpha + 1.0) * np.log1p(ax)
        out: FloatArray = np.where(inner, li, lo)  # numpy's stubs type this np.where Any
        return out

    def _pdf(self, x: FloatArray, alpha: FloatArray) -> FloatArray:
        return np.exp(self._logpdf(x, alpha))

    @staticmethod
    def _upper_tail(t: FloatArray, alpha: FloatArray) -> FloatArray:
        """P(X > t) for t >= 0, from the antiderivatives I1, I2 (proof of Lemma 7)."""
        K = _pp_K(alpha)
        inner = t * alpha < 1.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # 1/2 - (alpha-1)(1-(1-t)^alpha)/(2K)
            ti = 0.5 + (alpha - 1.0) * np.expm1(alpha * np.log1p(-np.minimum(t, 1.0))) / (2.0 * K)
            # (alpha+1)(1-1/alpha^2)^alpha (1+t)^(-alpha) / (2K)
            to = np.exp(np.log(alpha + 1.0) + alpha * np.log1p(-1.0 / alpha**2) - alpha * np.log1p(t) - np.log(2.0 * K))
        return np.where(inner, ti, to)

    def _cdf(self, x: FloatArray, alpha: FloatArray) -> FloatArray:
        tail = self._upper_tail(np.abs(x), alpha)
        return np.where(x < 0, tail, 1.0 - tail)

    def _sf(self, x: FloatArray, alpha: FloatArray) -> FloatArray:
        tail = self._upper_tail(np.abs(x), alpha)
        return np.where(x > 0, tail, 1.0 - tail)

    @staticmethod
    def _upper_tail_inv(p: FloatArray, alpha: FloatArray) -> FloatArray:
        """t >= 0 with P(X > t) = p, for 0 <= p <= 1/2 (inverse of ``_upper_tail``)."""
        K = _pp_K(alpha)
        log_apow = _pp_log_apow(alpha)
        p_out = (alpha + 1.0) * np.exp(log_apow) / (2.0 * K)  # P(X > 1/alpha)
        outer = p <= p_out
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            to = np.expm1(np.log1p(-1.0 / alpha**2) + (np.log(alpha + 1.0) - np.log(2.0 * K) - np.log(p)) / alpha)
            ti = -np.expm1(np.log1p(-(1.0 - 2.0 * p) * K / (alpha - 1.0)) / alpha)
        return np.where(outer, to, ti)

    def _ppf(self, q: FloatArray, alpha: FloatArray) -> FloatArray:
        lower = q < 0.5
        p = np.where(lower, q, 1.0 - q)  # exact for q >= 1/2 (Sterbenz)
        t = self._upper_tail_inv(p, alpha)
        return np.where(lower, -t, t)

    def _isf(self, q: FloatArray, alpha: FloatArray) -> FloatArray:
        return -self._ppf(q, alpha)

    def _stats(self, alpha: FloatArray) -> tuple[Any, Any, Any, Any]:
        var = polyplace_variance(1.0, alpha)
        g1 = np.where(alpha > 3.0, 0.0, np.nan)
        return 0.0, var, g1, np.nan

    def _rvs(
        self, alpha: FloatArray, size: int | tuple[int, ...] | None = None, random_state: object = None
    ) -> FloatArray | float:
        rng = as_rng(random_state, "random_state")
        alpha = np.asarray(alpha, dtype=float)
        if alpha.size == 1:
            n = int(np.prod(size)) if size is not None else 1
            out = _polyplace_standard_rvs(float(alpha.reshape(-1)[0]), n, rng)
            return out.reshape(size) if size is not None else out[0]
        u = rng.random(size)
        return self._ppf(u, alpha)


def _polyplace_standard_rvs(alpha: float, n: int, rng: np.random.Generator, chunk: int = 1 << 16) -> FloatArray:
    """Inverse-cdf sampling of PolyPlace(1, alpha), vectorised and cache-blocked.

    One uniform gives both the sign and |X|; |X| comes from inverting
    P(|X| > t), branch by branch, with a single ``log`` and ``exp`` per draw:
    inner branch  t = 1 - w^(1/alpha),        w = 1 - v K/(alpha-1),
    outer branch  t = C w^(-1/alpha) - 1,     w = 1 - v,
    where v = |2U - 1| and C = (1 - 1/alpha^2) ((alpha+1)/K)^(1/alpha).
    Blocks of 2^16 keep the temporaries in cache (faster than numpy's laplace).
    """
    K = float(_pp_K(alpha))
    p_in = (alpha - 1.0) * (-math.expm1(float(_pp_log_apow(alpha)))) / K  # P(|X| < 1/alpha)
    c1 = K / (alpha - 1.0)
    C = (1.0 - 1.0 / alpha**2) * ((alpha + 1.0) / K) ** (1.0 / alpha)
    out = np.empty(n)
    v = np.empty(min(chunk, max(n, 1)))
    av = np.empty_like(v)
    m = np.empty_like(v)
    t = np.empty_like(v)
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        vv, aa, mm, tt, oo = v[:k], av[:k], m[:k], t[:k], out[start : start + k]
        rng.random(out=vv)
        vv *= 2.0
        vv -= 1.0  # sign carrier in [-1, 1)
        np.abs(vv, out=aa)  # v = |2U - 1|
        np.less(aa, p_in, out=mm)  # 1.0 on the inner branch
        np.multiply(mm, c1 - 1.0, out=tt)
        tt += 1.0
        np.multiply(aa, tt, out=tt)
        np.subtract(1.0, tt, out=tt)  # w
        np.maximum(tt, 2.0**-64, out=tt)  # U = 0 would give w = 0
        np.log(tt, out=tt)
        np.multiply(mm, 2.0 / alpha, out=aa)
        aa -= 1.0 / alpha  # +-1/alpha
        tt *= aa
        np.exp(tt, out=tt)
        np.multiply(mm, -(C + 1.0), out=aa)
        aa += C
        np.multiply(aa, tt, out=oo)
        oo -= 1.0
        np.multiply(mm, 2.0, out=aa)
        oo += aa  # inner: 1 - e ; outer: C e - 1
        np.copysign(oo, vv, out=oo)
    return out


_polyplace = polyplace_gen(name="polyplace")


def PolyPlace(s: float = 1.0, alpha: float = 3.0, loc: float = 0.0) -> FrozenNoise:
    """Frozen PolyPlace(s, alpha) distribution (Hladik and Tetek, Definition 6).

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).

    Parameters
    ----------
    s : float
        Scale, ``s > 0``.  Theorem 8 uses ``s = SS / gamma``.
    alpha : float
        Shape, ``alpha > 1``.  Theorem 8 uses ``alpha = epsilon / gamma``.
        The variance (Lemma 13) is finite only for ``alpha > 2``; ``var()``
        returns ``inf`` otherwise.
    loc : float
        Location (0 for noise).

    Returns
    -------
    scipy.stats frozen distribution

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Definition 6, Lemma 13, Theorem 8.
    Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
    """
    s = as_positive(s, "s")
    alpha = as_real(alpha, "alpha", finite=False)
    if not (1.0 < alpha < math.inf):
        raise ValueError(f"alpha must satisfy 1 < alpha < inf for PolyPlace, got {alpha!r}")
    frozen: FrozenNoise = _polyplace(alpha, loc=as_real(loc, "loc", finite=False), scale=s)  # scipy is untyped
    return frozen


# --------------------------------------------------------------------------- #
# the exact tail for the lattice sampler
# --------------------------------------------------------------------------- #
def _times_ratio_below_one(x: arb, p: int, q: int) -> bool:
    """Exactly: is ``x * p / q < 1`` for an exact ball ``x`` (a point) and integers ``p, q > 0``?"""
    man, exp = x.man_exp()
    m, e = int(man), int(exp)
    return (m * p) << e < q if e >= 0 else m * p < q << -e


@functools.lru_cache(maxsize=64)
def _polyplace_constants(alpha: float, prec: int) -> tuple[arb, arb, arb, int, int]:
    """alpha, (alpha - 1)/(2K), (alpha + 1)(1 - 1/alpha^2)^alpha/(2K) at ``prec`` bits, and alpha = p/q."""
    al = arb(alpha)
    K2 = 4 * (al * (-1 / al).log1p()).exp() + 2 * al - 2
    outer = (al + 1) * (al * (-1 / (al * al)).log1p()).exp() / K2
    p, q = alpha.as_integer_ratio()
    return al, (al - 1) / K2, outer, p, q


def _tail(a: arb, alpha: float) -> arb:
    """Ball of P(Z > a), Z ~ PolyPlace(1, alpha), for a ball a > 0 (the antiderivatives of Lemma 7)."""
    al, c_in, c_out, p, q = _polyplace_constants(alpha, ctx.prec)

    def inner(x: arb) -> arb:  # x < 1/alpha
        return arb(0.5) + c_in * (al * (-x).log1p()).expm1()

    def outer(x: arb) -> arb:  # x >= 1/alpha
        return c_out * (-al * x.log1p()).exp()

    lo, hi = a.lower(), a.upper()  # exact end points
    if _times_ratio_below_one(hi, p, q):
        return inner(a)
    if not _times_ratio_below_one(lo, p, q):
        return outer(a)
    # the ball straddles the seam 1/alpha: T is decreasing, so T(a) lies between T(hi) and T(lo)
    return inner(lo).union(outer(hi))


class PolyPlaceFamily(NoiseFamily):
    """PolyPlace noise, epsilon-DP for ``0 < gamma < epsilon``: ``SS * Z``, ``Z ~ PolyPlace(1/gamma, eps/gamma)``.

    The shape ``alpha = epsilon / gamma`` is fixed by Theorem 8 (rounded down
    to a double), the scale ``1 / gamma`` is rounded up; the std per unit of
    smooth sensitivity is ``sqrt(Var PolyPlace(1/gamma, eps/gamma))``
    (Lemma 13), infinite for ``gamma >= epsilon / 2``.

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Definition 6, Lemma 13 and Theorem 8.
    """

    name = "polyplace"
    label = "PolyPlace"
    aliases = ("poly_place",)
    shape_name = "alpha"
    guarantee = "epsilon-DP (Hladik and Tetek, Theorem 8)"

    def distribution(self, shape: float | None) -> FrozenNoise:
        return PolyPlace(s=1.0, alpha=self._given_shape(shape))

    def fixed_shape(self, epsilon: float, gamma: float) -> float:
        """``alpha = epsilon / gamma`` (Theorem 8; unrounded, as in the std table).

        References
        ----------
        Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Theorem 8.
        """
        return as_positive(epsilon, "epsilon") / as_positive(gamma, "gamma")

    def tail_enclosure(self, a: arb, shape: float) -> arb:
        return _tail(a, shape)

    def _gamma_sup(self, eps: float, delta: float | None, shape: float | None) -> float:
        return eps

    def _std(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        return float(math.sqrt(polyplace_variance(1.0 / gamma, eps / gamma)))

    def _calibrate(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> Calibration:
        E, G = calibration_value(eps), Fraction(gamma)
        self._check_gamma_in_range(eps, gamma, delta, shape)
        # Theorem 8: SS * Z' with Z' ~ PolyPlace(SS/gamma, eps/gamma) = (SS/gamma) * PolyPlace(1, eps/gamma)
        alpha = float_down(E / G)
        if not alpha > 1.0:
            raise ValueError(
                f"gamma must satisfy 0 < gamma < {eps:.6g} for polyplace at epsilon={eps:g} with "
                f"epsilon/gamma > 1 after rounding down, got {gamma!r}"
            )
        scale = float_up(1 / G)
        dist = PolyPlace(s=1.0, alpha=alpha)
        std = math.sqrt(polyplace_variance(scale, alpha))
        return Calibration(self.name, eps, gamma, None, alpha, scale, dist, std, f"{eps:g}-DP")


# the family joins the registry when its module is imported: its one home declares it
register_family(PolyPlaceFamily())
