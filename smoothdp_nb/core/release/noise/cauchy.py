"""Generalized Cauchy noise, density proportional to ``1 / (1 + |x|^c)``: distribution, calibration, exact tail.

With ``Z`` of this density, ``SS (c + 1) / (epsilon - gamma (c + 1)) * Z`` is
epsilon-DP for ``gamma < epsilon / (c + 1)`` (Nissim, Raskhodnikova and Smith
2007, as Lemma 2.7 of Wang, Lecture 14; the calibration and std are
Hladik and Tetek's Claim 16).

References
----------
Nissim, Raskhodnikova and Smith, "Smooth Sensitivity and Sampling in Private
Data Analysis", STOC 2007 (Wang, Lecture 14, Lemma 2.7).
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 16.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx
from scipy import optimize, special
from scipy.stats import rv_continuous

from smoothdp_nb.core.numerics.array_types import BoolArray, FloatArray
from smoothdp_nb.core.numerics.ball_arithmetic import float_up, working_precision
from smoothdp_nb.core.numerics.validation import as_positive, as_real, as_rng
from smoothdp_nb.core.release.noise.base import Calibration, FrozenNoise, NoiseFamily, calibration_value
from smoothdp_nb.core.release.noise.registry import register_family

__all__ = ["CauchyFamily", "GeneralizedCauchy", "cauchy_std", "gencauchy_gen"]


class gencauchy_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Density ``c sin(pi/c) / (2 pi (1 + |x|^c))``, ``c > 1`` (Claim 16's normalisation).

    cdf: for x <= 0, ``F(x) = I_w(1 - 1/c, 1/c) / 2`` with ``w = 1/(1+|x|^c)``
    (substituting ``u = t^c/(1+t^c)`` turns the integral into a Beta integral),
    so ``|X| = (B/(1-B))^(1/c)`` with ``B ~ Beta(1/c, 1-1/c)``, i.e. a ratio
    of two gamma variables.

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 16.
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


def GeneralizedCauchy(c: float = 4.0, scale: float = 1.0, loc: float = 0.0) -> FrozenNoise:
    """Frozen generalized Cauchy distribution, density ``proportional to 1/(1+|x/scale|^c)``.

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).

    Nissim-Raskhodnikova-Smith (Wang, Lecture 14, Lemma 2.7); Hladik and Tetek, Claim 16.  Variance
    ``1/(2 cos(2 pi/c) + 1)`` for ``c > 3`` and infinite for ``2 < c <= 3``.

    Parameters
    ----------
    c : float
        Tail exponent, ``c > 1`` (``c > 3`` for a finite variance).
    scale, loc : float

    References
    ----------
    Nissim, Raskhodnikova and Smith, "Smooth Sensitivity and Sampling in Private Data Analysis",
    STOC 2007 (Wang, Lecture 14, Lemma 2.7).
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 16.
    Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
    """
    c = as_real(c, "c", finite=False)
    if not (1.0 < c < math.inf):
        raise ValueError(f"c must satisfy 1 < c < inf for GeneralizedCauchy, got {c!r}")
    frozen: FrozenNoise = _gencauchy(
        c, loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale")
    )  # scipy is untyped
    return frozen


def cauchy_std(eps: float, gamma: float, c: float) -> float:
    """Claim 16 of Hladik and Tetek: (c+1) / ((eps - gamma (c+1)) sqrt(2 cos(2 pi/c) + 1)).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 16.
    """
    budget = eps - gamma * (c + 1.0)
    if c <= 3.0 or budget <= 0.0:
        return math.inf
    return (c + 1.0) / (budget * math.sqrt(2.0 * math.cos(2.0 * math.pi / c) + 1.0))


# --------------------------------------------------------------------------- #
# the exact tail for the lattice sampler
# --------------------------------------------------------------------------- #
@functools.lru_cache(maxsize=64)
def _cauchy_constants(c: float, prec: int) -> tuple[arb, arb, arb]:
    cc = arb(c)
    return cc, 1 - 1 / cc, 1 / cc


def _tail(a: arb, c: float) -> arb:
    """Ball of P(Z > a) for a ball a > 0: a regularised incomplete beta, the side that does not cancel."""
    cc, big, small = _cauchy_constants(c, ctx.prec)
    L = cc * a.log()
    if a.mid() >= 1:  # w = 1/(1 + a^c) <= 1/2
        e = (-L).exp()
        return (e / (1 + e)).beta_lower(big, small, regularized=True) / 2
    e = L.exp()
    return (1 - (e / (1 + e)).beta_lower(small, big, regularized=True)) / 2


class CauchyFamily(NoiseFamily):
    """Generalized Cauchy noise with tail exponent ``c``, epsilon-DP for ``gamma < epsilon / (c + 1)``.

    Scale ``(c + 1) / (epsilon - gamma (c + 1))`` (computed exactly, rounded
    up); ``shape=None`` picks the c minimising the std (finite for c > 3,
    so gamma < epsilon / 4).

    References
    ----------
    Nissim, Raskhodnikova and Smith, "Smooth Sensitivity and Sampling in
    Private Data Analysis", STOC 2007 (Wang, Lecture 14, Lemma 2.7).
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Claim 16 and Appendix B.
    """

    name = "cauchy"
    label = "generalized Cauchy"
    aliases = ("generalized_cauchy",)
    shape_name = "c"
    free_shape = True
    shape_lower = 1.0
    guarantee = "epsilon-DP (Nissim, Raskhodnikova and Smith 2007; Hladik and Tetek, Claim 16)"

    def distribution(self, shape: float | None) -> FrozenNoise:
        return GeneralizedCauchy(self._given_shape(shape))

    def tail_enclosure(self, a: arb, shape: float) -> arb:
        return _tail(a, shape)

    def _gamma_sup(self, eps: float, delta: float | None, shape: float | None) -> float:
        return eps / (shape + 1.0) if shape is not None else eps / 4.0

    def _range_note(self, delta: float | None, shape: float | None) -> str:
        return f" (c={shape:g})" if shape is not None else " (c > 3)"

    def _std(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        return cauchy_std(eps, gamma, self._given_shape(shape))

    def _optimal_shape(self, eps: float, gamma: float) -> float:
        """The root in (3, eps/gamma - 1) of the log-derivative of Claim 16's std (Brent, full precision)."""
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

    def _calibrate(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> Calibration:
        E, G = calibration_value(eps), Fraction(gamma)
        with working_precision(160):
            c = self._resolved_shape(eps, gamma, delta, shape)
            C = Fraction(c)
            budget = E - G * (C + 1)  # pure DP, heavy tails of degree c + 1
            self._require_positive_budget(budget, eps, gamma, delta, c)
            scale = float_up((C + 1) / budget)
            return Calibration(
                self.name, eps, gamma, None, c, scale, GeneralizedCauchy(c), cauchy_std(eps, gamma, c), f"{eps:g}-DP"
            )


# the family joins the registry when its module is imported: its one home declares it
register_family(CauchyFamily())
