"""Noise distributions for smooth-sensitivity releases, and their calibration.

Five families, each a :class:`scipy.stats.rv_continuous` subclass; the public
constructors return *frozen* distributions (``pdf``, ``logpdf``, ``cdf``,
``sf``, ``ppf``, ``rvs(size, random_state)``, ``mean``, ``var``, ``std``).

``rvs`` / ``sample`` draw **floats**: they are distributions for simulation
and plots, not releases.  A float ``true + s * Z`` leaks through its low-order
bits (Mironov 2012); to publish a value use
:func:`smoothdp_nb.release`, which samples the lattice cell exactly
(:mod:`.lattice`).


* :func:`PolyPlace` -- Hladik & Tetek, "Smooth Sensitivity Revisited: Towards
  Optimality", Definition 6 (density), Lemma 7 (normalisation; the cdf and ppf
  below are the antiderivatives ``I1``, ``I2`` of its proof, Appendix A) and
  Lemma 13 (variance).
* :func:`GeneralizedCauchy` -- density proportional to ``1/(1+|x|^c)``
  (Nissim-Raskhodnikova-Smith, lecture notes Lemma 2.7; Hladik-Tetek Claim 16).
* :func:`StudentT` -- Student's t with ``df`` degrees of freedom (Bun-Steinke;
  Hladik-Tetek Claim 17).
* :func:`LaplaceLogNormal` -- ``X * exp(sigma * Y)``, X standard Laplace, Y
  standard normal (Bun-Steinke; lecture notes Proposition 3, concentrated DP).
* :func:`Laplace` -- density ``exp(-|x|/b)/(2b)`` (NRS Lemma 2.9;
  Hladik-Tetek Claim 18; only (epsilon, delta)-DP with smooth sensitivity).

Calibration (noise added = ``SS * scale * Z``; see :func:`calibrate`):

======================  ==========================================  =======================  ==========================
family                  Z and scale per unit of smooth sensitivity  allowed gamma            guarantee
======================  ==========================================  =======================  ==========================
``polyplace``           Z ~ PolyPlace(1, eps/gamma), scale 1/gamma  0 < gamma < eps          eps-DP (Theorem 8)
``cauchy`` (shape c)    (c+1) / (eps - gamma (c+1))                 gamma < eps/(c+1), c>1   eps-DP (Claim 16)
``student_t`` (d)       (d+1) / (2 sqrt(d) (eps - gamma (d+1)))     gamma < eps/(d+1), d>0   eps-DP (Claim 17)
``laplace``             1 / (eps - gamma ln(2/delta))               gamma < eps/ln(2/delta)  (eps, delta)-DP (Claim 18)
``laplace_log_normal``  exp(3 sigma^2/2) / (eps - gamma/sigma)      gamma < eps * sigma      rho-zCDP, rho = eps^2/2
======================  ==========================================  =======================  ==========================

:func:`noise_std` gives the resulting standard deviation per unit of smooth
sensitivity, choosing the shape parameter that minimises it when
``shape=None`` (Appendix B, Figure 1 of Hladik-Tetek).
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb
from scipy import optimize, special
from scipy.stats import rv_continuous

from .array_types import BoolArray, FloatArray
from .ball_arithmetic import working_precision
from .validation import as_positive, as_real, as_rng

__all__ = [
    "PolyPlace",
    "GeneralizedCauchy",
    "StudentT",
    "LaplaceLogNormal",
    "Laplace",
    "polyplace_variance",
    "FAMILIES",
    "family_names",
    "canonical_family",
    "Calibration",
    "calibrate",
    "noise_std",
    "optimal_shape",
    "gamma_range",
]

FAMILIES = ("polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal")


# --------------------------------------------------------------------------- #
# small validation helpers
# --------------------------------------------------------------------------- #
def _scalar_or_array(x: FloatArray) -> Any:
    """A 0-d result as a numpy scalar, anything else unchanged (hence ``Any``)."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


# --------------------------------------------------------------------------- #
# PolyPlace (Definition 6)
# --------------------------------------------------------------------------- #
def _pp_log_apow(alpha: float | FloatArray) -> FloatArray | np.float64:
    """log(a^alpha) with a = (alpha-1)/alpha, computed without cancellation."""
    return alpha * np.log1p(-1.0 / alpha)


def _pp_K(alpha: float | FloatArray) -> FloatArray | np.float64:
    """K = 2((alpha-1)/alpha)^alpha + alpha - 1, so that N_{s,alpha} = alpha/(2 K s)."""
    return 2.0 * np.exp(_pp_log_apow(alpha)) + alpha - 1.0


def polyplace_variance(s: float | FloatArray, alpha: float | FloatArray) -> Any:
    """Variance of PolyPlace(s, alpha), Lemma 13 of Hladik & Tetek.

    ``sigma^2 = 2 s^2 [(19 alpha^2 + 5) a^alpha + (alpha-2)(alpha-1)^2]
    / (K (alpha^4 - 5 alpha^2 + 4))`` with ``a = (alpha-1)/alpha`` and
    ``K = 2 a^alpha + alpha - 1``; this is the paper's expression after
    dividing numerator and denominator by ``(1 + 1/alpha)^alpha``.  Infinite
    (``inf``, never negative) for ``1 < alpha <= 2``.
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


def PolyPlace(s: float = 1.0, alpha: float = 3.0, loc: float = 0.0) -> Any:
    """Frozen PolyPlace(s, alpha) distribution (Hladik & Tetek, Definition 6).

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
    """
    s = as_positive(s, "s")
    alpha = as_real(alpha, "alpha", finite=False)
    if not (1.0 < alpha < math.inf):
        raise ValueError(f"alpha must satisfy 1 < alpha < inf for PolyPlace, got {alpha!r}")
    return _polyplace(alpha, loc=as_real(loc, "loc", finite=False), scale=s)


# --------------------------------------------------------------------------- #
# generalized Cauchy, density proportional to 1/(1+|x|^c)
# --------------------------------------------------------------------------- #
class gencauchy_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Density ``c sin(pi/c) / (2 pi (1 + |x|^c))``, ``c > 1`` (Claim 16's normalisation).

    cdf: for x <= 0, ``F(x) = I_w(1 - 1/c, 1/c) / 2`` with ``w = 1/(1+|x|^c)``
    (substituting ``u = t^c/(1+t^c)`` turns the integral into a Beta integral),
    so ``|X| = (B/(1-B))^(1/c)`` with ``B ~ Beta(1/c, 1-1/c)``, i.e. a ratio
    of two gamma variables.
    """

    def _argcheck(self, c: FloatArray) -> BoolArray:
        return np.isfinite(c) & (c > 1.0)

    def _logpdf(self, x: FloatArray, c: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            lx = np.log(np.abs(x))
        out: FloatArray = (
            np.log(c) + np.log(np.sin(np.pi / c)) - np.log(2.0 * np.pi) - np.logaddexp(0.0, c * lx)
        )  # numpy's stubs type this sum Any
        return out

    def _pdf(self, x: FloatArray, c: FloatArray) -> FloatArray:
        return np.exp(self._logpdf(x, c))

    def _lower(self, x: FloatArray, c: FloatArray) -> FloatArray:
        """F(-|x|) = P(X <= -|x|).

        With ``L = c log|x|``: for ``|x| >= 1`` it is ``I_w(1 - 1/c, 1/c) / 2``
        with ``w = 1/(1 + |x|^c) = expit(-L)``; for ``|x| < 1`` the complement
        ``1/2 - I_v(1/c, 1 - 1/c) / 2`` with ``v = |x|^c/(1 + |x|^c) = expit(L)``,
        so that neither ``w`` near 1 nor the cancellation in ``1 - w`` loses
        the body (``w`` rounds to 1 for ``|x|^c < 2^-53``); for ``|L| > 28``
        the leading term of the beta series, in log space (no underflow of
        ``w`` or ``v``; relative error ``O(e^-28)``).
        """
        with np.errstate(divide="ignore"):
            L = c * np.log(np.abs(x))
        a, b = 1.0 - 1.0 / c, 1.0 / c
        outer = 0.5 * special.betainc(a, b, special.expit(-L))
        # far tail (w < e^-28, or underflowing): I_w(a, b) = w^a (1 + O(w)) / (a B(a, b)), w = e^-L (1 + O(w))
        with np.errstate(over="ignore", invalid="ignore"):
            far = 0.5 * np.exp(-a * L - np.log(a) - special.betaln(a, b))
            # near 0 (v = e^L (1 + O(v)) < e^-28): I_v(b, a) = v^b (1 + O(v)) / (b B(a, b)), v^b = |x| e^{O(v)}
            near = 0.5 - 0.5 * np.exp(b * L - np.log(b) - special.betaln(a, b))
        inner = 0.5 - 0.5 * special.betainc(b, a, special.expit(L))
        out: FloatArray = np.where(
            L >= 0, np.where(L > 28.0, far, outer), np.where(L < -28.0, near, inner)
        )  # scipy.special is untyped
        return out

    def _cdf(self, x: FloatArray, c: FloatArray) -> FloatArray:
        lo = self._lower(x, c)
        return np.where(x <= 0, lo, 1.0 - lo)

    def _sf(self, x: FloatArray, c: FloatArray) -> FloatArray:
        lo = self._lower(x, c)
        return np.where(x >= 0, lo, 1.0 - lo)

    def _ppf(self, q: FloatArray, c: FloatArray) -> FloatArray:
        lower = q < 0.5
        p = np.where(lower, q, 1.0 - q)
        a, b = 1.0 - 1.0 / c, 1.0 / c
        # tail side (p < I_{1/2}(a, b)/2): w = 1/(1+|x|^c) from I_w(a, b) = 2p, |x|^c = (1-w)/w;
        # body side: v = 1 - w from I_v(b, a) = 1 - 2p (exact subtraction for p >= 1/4)
        p_half = 0.5 * special.betainc(a, b, 0.5)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            w = special.betaincinv(a, b, 2.0 * p)
            # betaincinv loses accuracy deep in the tail: polish log w by Newton on
            # log I_w(a, b) = log(2p), whose derivative is w^a (1-w)^(b-1) / (B(a,b) I_w)
            logB = special.betaln(a, b)
            for _ in range(3):
                small = (w > 0) & (w < 0.25)
                I = special.betainc(a, b, w)
                step = (np.log(I) - np.log(2.0 * p)) * I * np.exp(logB - a * np.log(w) - (b - 1.0) * np.log1p(-w))
                w = np.where(small & np.isfinite(step), w * np.exp(-step), w)
            L_tail = np.log1p(-w) - np.log(w)
            # w below 1e-12 (or underflowing): I_w(a, b) = w^a (1 + O(w)) / (a B(a, b)), so
            # log w = (log(2p) + log a + log B) / a to relative O(w), in log space
            log_w = (np.log(2.0 * p) + np.log(a) + logB) / a
            L_tail = np.where(log_w < math.log(1e-12), -log_w, L_tail)
            v = special.betaincinv(b, a, 1.0 - 2.0 * p)
            L_body = np.log(v) - np.log1p(-v)
            # v below e^-28 (or underflowing): I_v(b, a) = v^b (1 + O(v)) / (b B(a, b)), likewise
            log_v = (np.log1p(-2.0 * p) + np.log(b) + logB) / b
            L_body = np.where(log_v < -28.0, log_v, L_body)
            L = np.where(p <= p_half, L_tail, L_body)  # L = c log|x|
            t = np.exp(L / c)
        out: FloatArray = np.where(lower, -t, t)  # scipy.special is untyped
        return out

    def _isf(self, q: FloatArray, c: FloatArray) -> FloatArray:
        return -self._ppf(q, c)

    def _stats(self, c: FloatArray) -> tuple[Any, Any, Any, Any]:
        mean = np.where(c > 2.0, 0.0, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = np.where(c > 3.0, 1.0 / (2.0 * np.cos(2.0 * np.pi / c) + 1.0), np.inf)
        var = np.where(c > 2.0, var, np.nan)
        return mean, var, np.where(c > 4.0, 0.0, np.nan), np.nan

    def _rvs(
        self, c: FloatArray, size: int | tuple[int, ...] | None = None, random_state: object = None
    ) -> FloatArray | float:
        rng = as_rng(random_state, "random_state")
        c = np.broadcast_to(np.asarray(c, dtype=float), size if size is not None else ())
        g1 = rng.standard_gamma(1.0 / c)
        g2 = rng.standard_gamma(1.0 - 1.0 / c)
        with np.errstate(divide="ignore"):
            mag = np.exp((np.log(g1) - np.log(g2)) / c)
        sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        return sign * mag


_gencauchy = gencauchy_gen(name="generalized_cauchy")


def GeneralizedCauchy(c: float = 4.0, scale: float = 1.0, loc: float = 0.0) -> Any:
    """Frozen generalized Cauchy distribution, density ``proportional to 1/(1+|x/scale|^c)``.

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).

    NRS lecture notes Lemma 2.7; Hladik & Tetek Claim 16.  Variance
    ``1/(2 cos(2 pi/c) + 1)`` for ``c > 3`` and infinite for ``2 < c <= 3``.

    Parameters
    ----------
    c : float
        Tail exponent, ``c > 1`` (``c > 3`` for a finite variance).
    scale, loc : float
    """
    c = as_real(c, "c", finite=False)
    if not (1.0 < c < math.inf):
        raise ValueError(f"c must satisfy 1 < c < inf for GeneralizedCauchy, got {c!r}")
    return _gencauchy(c, loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale"))


# --------------------------------------------------------------------------- #
# Student's t
# --------------------------------------------------------------------------- #
class studentt_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Student's t with ``df`` degrees of freedom (Bun & Steinke; Claim 17)."""

    def _argcheck(self, df: FloatArray) -> BoolArray:
        return np.isfinite(df) & (df > 0)

    def _logpdf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = (
            special.gammaln((df + 1.0) / 2.0)
            - special.gammaln(df / 2.0)
            - 0.5 * np.log(df * np.pi)
            - (df + 1.0) / 2.0 * np.log1p(x * x / df)
        )  # scipy.special is untyped
        return out

    def _pdf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        return np.exp(self._logpdf(x, df))

    def _cdf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = special.stdtr(df, x)  # scipy.special is untyped
        return out

    def _sf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = special.stdtr(df, -x)  # scipy.special is untyped
        return out

    def _ppf(self, q: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = special.stdtrit(df, q)  # scipy.special is untyped
        return out

    def _isf(self, q: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = -special.stdtrit(df, q)  # scipy.special is untyped
        return out

    def _stats(self, df: FloatArray) -> tuple[Any, Any, Any, Any]:
        mean = np.where(df > 1.0, 0.0, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = np.where(df > 2.0, df / (df - 2.0), np.inf)
        var = np.where(df > 1.0, var, np.nan)
        return mean, var, np.where(df > 3.0, 0.0, np.nan), np.nan

    def _rvs(
        self, df: FloatArray, size: int | tuple[int, ...] | None = None, random_state: object = None
    ) -> FloatArray | float:
        return as_rng(random_state, "random_state").standard_t(df, size)


_studentt = studentt_gen(name="student_t")


def StudentT(df: float = 3.0, scale: float = 1.0, loc: float = 0.0) -> Any:
    """Frozen Student's t distribution with ``df > 0`` degrees of freedom.

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).

    Variance ``df/(df-2)`` for ``df > 2``, infinite for ``1 < df <= 2``.
    """
    df = as_real(df, "df", finite=False)
    if not (0.0 < df < math.inf):
        raise ValueError(f"df must satisfy 0 < df < inf for StudentT, got {df!r}")
    return _studentt(df, loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale"))


# --------------------------------------------------------------------------- #
# Laplace-log-normal: Z = X exp(sigma Y)
# --------------------------------------------------------------------------- #
_T_NODES = np.linspace(-13.0, 13.0, 521)  # standardised quadrature grid (step 0.05)
_T_LOGW = np.log(np.full(_T_NODES.size, 0.05))


def _lln_log_integral(z: FloatArray, sigma: float, beta: float) -> FloatArray:
    """log of  int phi(y) exp(-beta y - |z| e^{-sigma y}) dy,  elementwise in z.

    The log-integrand is strictly concave in y, so after centring the grid at
    its mode y* (solved by bisection) and scaling by its curvature width the
    trapezoidal rule on a fixed grid is accurate to ~1e-13 relative (analytic,
    fast-decaying integrand).
    """
    z = np.abs(np.asarray(z, dtype=float))
    flat = z.reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, 2048):
        zz = flat[start : start + 2048]
        with np.errstate(divide="ignore"):
            L = np.log(sigma * zz)
        # mode: -y - beta + sigma |z| e^{-sigma y} = 0  <=>  L - sigma y = log(y + beta)
        lo = np.full(zz.shape, -beta)
        hi = np.clip(np.abs(L), 1.0, 1e3) / sigma + sigma + 40.0
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            with np.errstate(divide="ignore", invalid="ignore"):
                pos = (L - sigma * mid) > np.log(mid + beta)
            lo = np.where(pos, mid, lo)
            hi = np.where(pos, hi, mid)
        ystar = 0.5 * (lo + hi)
        width = 1.0 / np.sqrt(1.0 + sigma * np.maximum(ystar + beta, 0.0))
        y = ystar[:, None] + width[:, None] * _T_NODES[None, :]
        with np.errstate(over="ignore", invalid="ignore"):  # 0 * inf at z = 0, replaced below
            logg = -0.5 * y * y - 0.5 * math.log(2.0 * math.pi) - beta * y - zz[:, None] * np.exp(-sigma * y)
        res = special.logsumexp(logg + _T_LOGW, axis=1) + np.log(width)
        # z = 0: int phi(y) e^{-beta y} dy = e^{beta^2/2} exactly (the grid has no mode to centre on)
        out[start : start + zz.size] = np.where(zz == 0.0, 0.5 * beta * beta, res)
    return out.reshape(z.shape)


class lln_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Laplace-log-normal LLN(sigma): Z = X e^{sigma Y}, X ~ Laplace(0, 1), Y ~ N(0, 1).

    Bun & Steinke; lecture notes Proposition 3.  The density
    ``f(z) = E[e^{-sigma Y} exp(-|z| e^{-sigma Y})] / 2`` has no closed form
    and is evaluated by quadrature; sampling is exact.
    """

    def _argcheck(self, sigma: FloatArray) -> BoolArray:
        return np.isfinite(sigma) & (sigma > 0)

    def _logpdf(self, x: FloatArray, sigma: FloatArray) -> FloatArray:
        s = float(np.asarray(sigma).reshape(-1)[0])
        return _lln_log_integral(x, s, s) - math.log(2.0)

    def _pdf(self, x: FloatArray, sigma: FloatArray) -> FloatArray:
        return np.exp(self._logpdf(x, sigma))

    def _tail(self, t: FloatArray, sigma: FloatArray) -> FloatArray:
        """P(Z > |t|) = E[exp(-|t| e^{-sigma Y})] / 2."""
        s = float(np.asarray(sigma).reshape(-1)[0])
        return np.exp(_lln_log_integral(t, s, 0.0)) * 0.5

    def _cdf(self, x: FloatArray, sigma: FloatArray) -> FloatArray:
        tail = self._tail(x, sigma)
        return np.where(x < 0, tail, 1.0 - tail)

    def _sf(self, x: FloatArray, sigma: FloatArray) -> FloatArray:
        tail = self._tail(x, sigma)
        return np.where(x > 0, tail, 1.0 - tail)

    def _ppf(self, q: FloatArray, sigma: FloatArray) -> FloatArray:
        q = np.asarray(q, dtype=float)
        lower = q < 0.5
        p = np.where(lower, q, 1.0 - q)
        # bisection on log t for P(Z > t) = p (tail is decreasing in t)
        lo = np.full(p.shape, -745.0)
        hi = np.full(p.shape, 710.0)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            big = self._tail(np.exp(mid), sigma) > p
            lo = np.where(big, mid, lo)
            hi = np.where(big, hi, mid)
        t = np.exp(0.5 * (lo + hi))
        t = np.where(p >= 0.5, 0.0, t)
        return np.where(lower, -t, t)

    def _stats(self, sigma: FloatArray) -> tuple[Any, Any, Any, Any]:
        return 0.0, 2.0 * np.exp(2.0 * sigma**2), 0.0, np.nan

    def _rvs(
        self, sigma: FloatArray, size: int | tuple[int, ...] | None = None, random_state: object = None
    ) -> FloatArray | float:
        rng = as_rng(random_state, "random_state")
        return rng.laplace(size=size) * np.exp(sigma * rng.standard_normal(size))


_lln = lln_gen(name="laplace_log_normal")


def LaplaceLogNormal(sigma: float = 1.0, scale: float = 1.0, loc: float = 0.0) -> Any:
    """Frozen Laplace-log-normal distribution LLN(sigma) (Bun & Steinke).

    ``Z = X exp(sigma Y)`` with X standard Laplace and Y standard normal;
    ``Var Z = 2 exp(2 sigma^2)``.  pdf/cdf by quadrature (relative accuracy
    ~1e-12), ppf by bisection; ``rvs`` draws floats from the exact
    representation (for simulation, not for releases: use
    :func:`smoothdp_nb.release`).
    """
    sigma = as_positive(sigma, "sigma")
    return _lln(sigma, loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale"))


# --------------------------------------------------------------------------- #
# Laplace
# --------------------------------------------------------------------------- #
class laplace_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Standard Laplace density ``exp(-|x|)/2`` (scale via scipy's ``scale``)."""

    def _logpdf(self, x: FloatArray) -> FloatArray:
        return -np.abs(x) - math.log(2.0)

    def _pdf(self, x: FloatArray) -> FloatArray:
        return 0.5 * np.exp(-np.abs(x))

    def _cdf(self, x: FloatArray) -> FloatArray:
        return np.where(x < 0, 0.5 * np.exp(-np.abs(x)), 1.0 - 0.5 * np.exp(-np.abs(x)))

    def _sf(self, x: FloatArray) -> FloatArray:
        return self._cdf(-x)

    def _ppf(self, q: FloatArray) -> FloatArray:
        return np.where(q < 0.5, np.log(2.0 * q), -np.log(2.0 * (1.0 - q)))

    def _isf(self, q: FloatArray) -> FloatArray:
        return -self._ppf(q)

    def _stats(self) -> tuple[Any, Any, Any, Any]:
        return 0.0, 2.0, 0.0, 3.0

    def _rvs(self, size: int | tuple[int, ...] | None = None, random_state: object = None) -> FloatArray | float:
        return as_rng(random_state, "random_state").laplace(size=size)


_laplace = laplace_gen(name="laplace")


def Laplace(scale: float = 1.0, loc: float = 0.0) -> Any:
    """Frozen Laplace distribution with density ``exp(-|x-loc|/scale) / (2 scale)``.

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).
    """
    return _laplace(loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale"))


# --------------------------------------------------------------------------- #
# calibration (Theorem 8; Claims 16-18; Proposition 3)
# --------------------------------------------------------------------------- #
_ALIASES = {
    "generalized_cauchy": "cauchy",
    "t": "student_t",
    "studentt": "student_t",
    "lln": "laplace_log_normal",
    "poly_place": "polyplace",
}


def family_names() -> tuple[str, ...]:
    """Canonical names of the noise families, in display order."""
    return FAMILIES


def canonical_family(family: object) -> str:
    """The canonical name of a noise family given its name or an alias.

    Case, hyphens and spaces are ignored ("Generalized-Cauchy" is "cauchy").

    Raises
    ------
    TypeError
        If ``family`` is not a string.
    ValueError
        If ``family`` names no family; the message lists the allowed names.
    """
    if not isinstance(family, str):
        raise TypeError(f"family must be a string, one of {FAMILIES}, got {type(family).__name__}")
    key = family.lower().replace("-", "_").replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    return key


def _check_family(family: Any) -> str:
    return canonical_family(family)


def _check_delta(family: str, delta: Any) -> float | None:
    if family == "laplace":
        if delta is None:
            raise ValueError("delta is required for family 'laplace': 0 < delta < 1")
        d = as_real(delta, "delta", finite=False)
        if not (0.0 < d < 1.0):
            raise ValueError(f"delta must satisfy 0 < delta < 1, got {delta!r}")
        return d
    if delta is not None:
        d = as_real(delta, "delta", finite=False)
        if not (0.0 <= d < 1.0):
            raise ValueError(f"delta must satisfy 0 <= delta < 1, got {delta!r}")
    return None


def _log_two_over_delta(delta: float | None) -> float:
    """``ln(2/delta)`` of Claim 18 (family ``laplace``, whose delta is required)."""
    if delta is None:
        raise ValueError("delta is required for family 'laplace': 0 < delta < 1")
    return math.log(2.0 / delta)


_SHAPE_NAME = {"cauchy": "c", "student_t": "d", "laplace_log_normal": "sigma"}


def gamma_range(family: str, epsilon: float, delta: float | None = None, shape: float | None = None) -> float:
    """Supremum of the admissible gamma (exclusive) for ``family`` at ``epsilon``.

    polyplace: epsilon (Theorem 8); cauchy: epsilon/(c+1), or epsilon/4 over
    all c > 3 (Claim 16); student_t: epsilon/(d+1), or epsilon/3 over all
    d > 2 (Claim 17); laplace: epsilon/ln(2/delta) (Claim 18);
    laplace_log_normal: epsilon*sigma, or inf over all sigma.
    """
    family = _check_family(family)
    eps = as_positive(epsilon, "epsilon")
    delta = _check_delta(family, delta)
    shape = _check_shape(family, shape)
    if family == "polyplace":
        return eps
    if family == "laplace":
        return eps / _log_two_over_delta(delta)
    if family == "cauchy":
        return eps / (shape + 1.0) if shape is not None else eps / 4.0
    if family == "student_t":
        return eps / (shape + 1.0) if shape is not None else eps / 3.0
    return eps * shape if shape is not None else math.inf


def _check_shape(family: str, shape: Any) -> float | None:
    if shape is None:
        return None
    if family not in _SHAPE_NAME:
        raise ValueError(f"shape must be None for family {family!r} (it has no free shape parameter)")
    v = as_real(shape, "shape", finite=False)
    lower = {"cauchy": 1.0, "student_t": 0.0, "laplace_log_normal": 0.0}[family]
    if not (lower < v < math.inf):
        raise ValueError(
            f"shape ({_SHAPE_NAME[family]}) must satisfy {lower:g} < shape < inf for family {family!r}, got {shape!r}"
        )
    return v


def _cauchy_std(eps: float, gamma: float, c: float) -> float:
    """Claim 16: (c+1) / ((eps - gamma (c+1)) sqrt(2 cos(2 pi/c) + 1))."""
    budget = eps - gamma * (c + 1.0)
    if c <= 3.0 or budget <= 0.0:
        return math.inf
    return (c + 1.0) / (budget * math.sqrt(2.0 * math.cos(2.0 * math.pi / c) + 1.0))


def _student_std(eps: float, gamma: float, d: float) -> float:
    """Claim 17: sqrt(d/(d-2)) (d+1) / (2 sqrt(d) (eps - gamma (d+1)))."""
    budget = eps - gamma * (d + 1.0)
    if d <= 2.0 or budget <= 0.0:
        return math.inf
    return (d + 1.0) / (2.0 * math.sqrt(d - 2.0) * budget)


def _lln_std(eps: float, gamma: float, sigma: float) -> float:
    """sqrt(2) e^{sigma^2} * e^{3 sigma^2/2} / (eps - gamma/sigma)  (Proposition 3)."""
    budget = eps - gamma / sigma
    if budget <= 0.0:
        return math.inf
    if 2.5 * sigma * sigma > 709.0:  # e^{5 sigma^2 / 2} beyond the doubles: the std is infinite as a double
        return math.inf
    return math.sqrt(2.0) * math.exp(2.5 * sigma * sigma) / budget


def optimal_shape(family: str, epsilon: float, gamma: float) -> float:
    """Shape parameter minimising the std per unit of smooth sensitivity.

    * ``student_t``: d minimises (d+1)/(sqrt(d-2)(eps - gamma(d+1))); setting
      the log-derivative to zero gives gamma u^2 + eps u - 6 eps = 0 for
      u = d + 1, i.e. d = 12 eps/(eps + sqrt(eps^2 + 24 gamma eps)) - 1
      (finite std needs gamma < eps/3).
    * ``cauchy``: the root in (3, eps/gamma - 1) of the log-derivative of
      Claim 16's std, found by Brent's method to full precision
      (needs gamma < eps/4).
    * ``laplace_log_normal``: sigma minimises 5 sigma^2/2 - log(eps - gamma/sigma),
      the positive root of 5 eps sigma^3 - 5 gamma sigma^2 - gamma = 0.

    Returns ``nan`` where no shape gives a finite std.
    """
    family = _check_family(family)
    eps = as_positive(epsilon, "epsilon")
    gamma = as_positive(gamma, "gamma")
    if family == "student_t":
        if gamma >= eps / 3.0:
            return math.nan
        return 12.0 * eps / (eps + math.sqrt(eps * eps + 24.0 * gamma * eps)) - 1.0
    if family == "cauchy":
        if gamma >= eps / 4.0:
            return math.nan

        def dlog(c: float) -> float:
            th = 2.0 * math.pi / c
            return (
                1.0 / (c + 1.0)
                + gamma / (eps - gamma * (c + 1.0))
                - (th / c) * math.sin(th) / (2.0 * math.cos(th) + 1.0)
            )

        lo = 3.0 * (1.0 + 1e-15)
        hi = eps / gamma - 1.0
        hi = hi * (1.0 - 1e-15)
        while dlog(lo) >= 0:  # pragma: no cover - guard against rounding at the edge
            lo = 3.0 + 2.0 * (lo - 3.0)
        return float(optimize.brentq(dlog, lo, hi, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500))
    if family == "laplace_log_normal":
        lo = gamma / eps

        def f(s: float) -> float:
            return 5.0 * eps * s**3 - 5.0 * gamma * s**2 - gamma

        hi = max(2.0 * lo, 1.0)
        while f(hi) <= 0:
            hi *= 2.0
        return float(optimize.brentq(f, lo, hi, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500))
    raise ValueError(f"family {family!r} has no free shape parameter")


@dataclass(frozen=True)
class Calibration:
    """How to add noise for one release: ``noise = SS * scale * distribution.rvs()``.

    Attributes
    ----------
    family, epsilon, gamma, delta : as requested
    shape : float or None
        c (cauchy), d (student_t), sigma (laplace_log_normal), alpha = eps/gamma
        rounded **down** to a double (polyplace).
    scale : float
        Multiplier per unit of smooth sensitivity: the exact constant of the
        family's theorem rounded **up** to a double (see :func:`_calibrate`).
    distribution : frozen scipy distribution of the standardised noise Z.
    std : float
        Standard deviation of ``scale * Z`` (``inf`` if infinite).
    guarantee : str
        The privacy statement, e.g. ``"1-DP"`` or ``"rho-zCDP with rho=0.5"``.
    rho : float or None
        zCDP parameter (laplace_log_normal only): ``epsilon**2 / 2``.
    """

    family: str
    epsilon: float
    gamma: float
    delta: float | None
    shape: float | None
    scale: float
    distribution: Any
    std: float
    guarantee: str
    rho: float | None = None


def _check_gamma_in_range(family: str, eps: float, gamma: float, delta: float | None, shape: float | None) -> None:
    sup = gamma_range(family, eps, delta, shape)
    if not (gamma < sup):
        extra = ""
        if family == "cauchy":
            extra = f" (c={shape:g})" if shape is not None else " (c > 3)"
        elif family == "student_t":
            extra = f" (d={shape:g})" if shape is not None else " (d > 2)"
        elif family == "laplace":
            extra = f" (ln(2/delta)={_log_two_over_delta(delta):.6g})"
        raise ValueError(
            f"gamma must satisfy 0 < gamma < {sup:.6g} for {family} at epsilon={eps:g}{extra}, got {gamma!r}"
        )


def calibrate(
    family: str, epsilon: float, gamma: float, delta: float | None = None, shape: float | None = None
) -> Calibration:
    """Calibrate noise of ``family`` for a gamma-smooth upper bound on the local sensitivity.

    Parameters
    ----------
    family : {"polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal"}
    epsilon : float
        Privacy parameter, ``epsilon > 0`` (for ``laplace_log_normal`` the
        release is ``rho``-zCDP with ``rho = epsilon**2/2``; Proposition 3).
    gamma : float
        Smoothness of the sensitivity bound; must lie in the family's range
        (see :func:`gamma_range`), e.g. ``0 < gamma < epsilon`` for PolyPlace.
    delta : float, optional
        Required for ``laplace`` (``0 < delta < 1``); ignored otherwise.
    shape : float, optional
        c / d / sigma; ``None`` picks the std-minimising value
        (:func:`optimal_shape`).

    Raises
    ------
    ValueError
        If gamma is outside the family's range, or a parameter is invalid.

    Notes
    -----
    The stated guarantee is proven, not approximately met: the scale is
    rounded up, PolyPlace's alpha down, and epsilon / delta enter as the
    smaller of the double and the decimal printed in ``guarantee`` (the
    argument is in :func:`_calibrate`'s docstring).

    References
    ----------
    Hladik & Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Theorem 8 and Claims 16-18; Bun & Steinke (lecture notes), Proposition 3.
    """
    family = _check_family(family)
    eps = as_positive(epsilon, "epsilon")
    gamma = as_positive(gamma, "gamma")
    delta = _check_delta(family, delta)
    shape = _check_shape(family, shape)
    cal = _calibrate(family, eps, gamma, delta, shape)
    if not math.isfinite(cal.scale):  # e.g. Laplace-log-normal's e^(3 shape^2 / 2) beyond the doubles
        raise ValueError(
            f"the {family} noise scale for epsilon={eps:g}, gamma={gamma:g}, shape={shape} is beyond the "
            "largest double: choose a smaller shape (or a larger epsilon)"
        )
    return cal


def _stated(x: float) -> Fraction:
    """The decimal a guarantee text states for ``x`` (``f"{x:g}"``), exactly."""
    return Fraction(f"{x:g}")


def _calibration_value(x: float) -> Fraction:
    """``min(x, stated decimal of x)``: calibrating at it makes both the double and the text true."""
    return min(Fraction(x), _stated(x))


def _arb(x: Fraction) -> arb:
    return arb(x.numerator) / arb(x.denominator)


def _float_up(x: Fraction | arb) -> float:
    """The smallest double >= x (for a ball: >= every point of it); ``inf`` if there is none."""
    if isinstance(x, arb):
        if not x.is_finite():
            return math.inf
        man, ex = x.upper().mid().man_exp()
        m, e = int(man), int(ex)
        # outside the double range the answer is known without building 2^e (a hostile
        # shape makes e astronomically large: the exact power would exhaust memory)
        if e + m.bit_length() > 1100:
            return math.inf if m > 0 else -sys.float_info.max
        if e + m.bit_length() < -1100:
            return math.ulp(0.0) if m > 0 else 0.0
        x = Fraction(m) * Fraction(2) ** e
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def _float_down(x: Fraction) -> float:
    """The largest double <= x (x > 0 and below the largest double)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _decimal_up(x: Fraction) -> str:
    """``x`` in 6 significant digits, rounded up (a stated bound must not be below the truth)."""
    text = f"{float(x):.6g}"
    while Fraction(text) < x:
        mant, _, exp = f"{float(Fraction(text)):.5e}".partition("e")
        text = f"{float(Fraction(mant) + Fraction(1, 10**5)) * 10 ** int(exp):.6g}"
    return text


def _positive_denominator(
    den: Fraction | arb, family: str, eps: float, gamma: float, delta: float | None, shape: float | None
) -> None:
    """Refuse a calibration whose budget ``eps - gamma * (...)`` is not proven positive."""
    if not den > 0:
        _check_gamma_in_range(family, eps, gamma, delta, shape)  # the usual message, if it applies
        raise ValueError(
            f"gamma must satisfy 0 < gamma < {gamma_range(family, eps, delta, shape):.6g} for {family} "
            f"at epsilon={eps:g} (as stated, {_stated(eps)}), got {gamma!r}: no positive privacy budget is left"
        )


@functools.lru_cache(maxsize=256)
def _calibrate(
    family: str, epsilon: float, gamma: float, delta: float | None = None, shape: float | None = None
) -> Calibration:
    """:func:`calibrate` on validated arguments (cached: freezing a scipy distribution costs ~1 ms).

    Every number the guarantee rests on is rounded in the safe direction.  The
    mechanisms are ``SS * scale * Z``; Theorem 8 / Claims 16-18 / Proposition 3
    hold for ``scale`` at the exact value ``c(eps, gamma, ...)``, and a larger
    scale is the same mechanism run with the sensitivity bound
    ``SS * scale / c`` -- still a gamma-smooth upper bound on the local
    sensitivity (multiplying a gamma-smooth bound by a constant >= 1 keeps it
    both) -- so each scale is computed exactly (fractions) or as an Arb ball and
    rounded **up** to a double.  PolyPlace's shape ``alpha = eps / gamma`` is
    rounded **down**: Theorem 8 with ``(gamma, eps' = alpha gamma)`` then gives
    ``eps'``-DP with ``eps' <= eps``.  The calibration uses ``eps`` (and
    Laplace's ``delta``) as ``min(value, stated decimal)``, the decimal being
    the ``:g`` text of the guarantee, so that both the returned double and the
    printed text are proven; rho is ``eps^2 / 2`` rounded up, and printed
    rounded up.
    """
    family = _check_family(family)
    eps = as_positive(epsilon, "epsilon")
    gamma = as_positive(gamma, "gamma")
    delta = _check_delta(family, delta)
    shape = _check_shape(family, shape)
    E, G = _calibration_value(eps), Fraction(gamma)
    if family == "polyplace":
        _check_gamma_in_range(family, eps, gamma, delta, shape)
        # Theorem 8: SS * Z' with Z' ~ PolyPlace(SS/gamma, eps/gamma) = (SS/gamma) * PolyPlace(1, eps/gamma)
        alpha = _float_down(E / G)
        if not alpha > 1.0:
            raise ValueError(
                f"gamma must satisfy 0 < gamma < {eps:.6g} for polyplace at epsilon={eps:g} with "
                f"epsilon/gamma > 1 after rounding down, got {gamma!r}"
            )
        scale = _float_up(1 / G)
        dist = PolyPlace(s=1.0, alpha=alpha)
        std = math.sqrt(polyplace_variance(scale, alpha))
        return Calibration(family, eps, gamma, None, alpha, scale, dist, std, f"{eps:g}-DP")
    with working_precision(160):
        if family == "laplace":
            _check_gamma_in_range(family, eps, gamma, delta, shape)
            D = _calibration_value(_required_delta(delta))
            den = _arb(E) - _arb(G) * (2 / _arb(D)).log()
            _positive_denominator(den, family, eps, gamma, delta, shape)
            scale = _float_up(1 / den)
            return Calibration(
                family, eps, gamma, delta, None, scale, Laplace(), math.sqrt(2.0) * scale, f"({eps:g}, {delta:g})-DP"
            )
        if shape is None:
            _check_gamma_in_range(family, eps, gamma, delta, None)
            shape = optimal_shape(family, eps, gamma)
        else:
            _check_gamma_in_range(family, eps, gamma, delta, shape)
        C = Fraction(shape)
        if family in ("cauchy", "student_t"):  # pure DP, heavy tails of degree shape + 1
            budget = E - G * (C + 1)
            _positive_denominator(budget, family, eps, gamma, delta, shape)
            if family == "cauchy":
                scale = _float_up((C + 1) / budget)
                z: Any = GeneralizedCauchy(shape)
                std = _cauchy_std(eps, gamma, shape)
            else:
                scale = _float_up(_arb(C + 1) / (2 * _arb(C).sqrt() * _arb(budget)))
                z, std = StudentT(shape), _student_std(eps, gamma, shape)
            return Calibration(family, eps, gamma, None, shape, scale, z, std, f"{eps:g}-DP")
        den = _arb(E) - _arb(G) / _arb(C)
        _positive_denominator(den, family, eps, gamma, delta, shape)
        scale = _float_up((3 * _arb(C) * _arb(C) / 2).exp() / den)
    rho_exact = E * E / 2
    rho = _float_up(rho_exact)
    return Calibration(
        family,
        eps,
        gamma,
        None,
        shape,
        scale,
        LaplaceLogNormal(shape),
        _lln_std(eps, gamma, shape),
        f"rho-zCDP with rho={_decimal_up(rho_exact)}",
        rho,
    )


def _required_delta(delta: float | None) -> float:
    if delta is None:
        raise ValueError("delta is required for family 'laplace': 0 < delta < 1")
    return delta


def noise_std(
    family: str, epsilon: float, gamma: float, delta: float | None = None, shape: float | None = None
) -> float:
    """Standard deviation of the noise per unit of smooth sensitivity.

    PolyPlace: ``sqrt(Var PolyPlace(1/gamma, eps/gamma))`` (Theorem 8, Lemma 13);
    cauchy, student_t, laplace: Claims 16, 17, 18 of Hladik & Tetek;
    laplace_log_normal: ``sqrt(2) e^{5 sigma^2/2} / (eps - gamma/sigma)``
    (Proposition 3; zCDP with rho = eps^2/2, so not comparable one-to-one).
    ``shape=None`` uses the minimising shape (Figure 1).

    Returns
    -------
    float
        ``math.inf`` when the std is infinite or gamma is outside the
        family's range (e.g. PolyPlace with ``epsilon/2 <= gamma``).

    Raises
    ------
    ValueError
        For epsilon <= 0, gamma <= 0, unknown family, missing/invalid delta
        for laplace, or an invalid shape.
    """
    family = _check_family(family)
    eps = as_positive(epsilon, "epsilon")
    gamma = as_positive(gamma, "gamma")
    delta = _check_delta(family, delta)
    shape = _check_shape(family, shape)
    if not gamma < gamma_range(family, eps, delta, shape):
        return math.inf
    if family == "polyplace":
        return float(math.sqrt(polyplace_variance(1.0 / gamma, eps / gamma)))
    if family == "laplace":
        return math.sqrt(2.0) / (eps - gamma * _log_two_over_delta(delta))
    if shape is None:
        shape = optimal_shape(family, eps, gamma)
        if math.isnan(shape):
            return math.inf
    if family == "cauchy":
        return _cauchy_std(eps, gamma, shape)
    if family == "student_t":
        return _student_std(eps, gamma, shape)
    return _lln_std(eps, gamma, shape)
