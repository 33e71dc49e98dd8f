"""Laplace-log-normal noise ``Z = X e^{sigma Y}``: distribution, calibration (zCDP) and exact sampling pieces.

With ``Z ~ LLN(sigma)``, ``SS e^{3 sigma^2/2} / (epsilon - gamma / sigma) * Z``
is ``rho``-zCDP with ``rho = epsilon^2 / 2`` for ``gamma < epsilon sigma``
(Bun and Steinke 2019, as Proposition 3 of Wang, Lecture 14, with
``t = gamma`` and ``s = epsilon - gamma / sigma``, rearranged ``e^{3
sigma^2/2} s``).

References
----------
Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth
Sensitivity and Mean Estimation", NeurIPS 2019, as cited in Wang, Lecture 14
("Data-dependent DP algorithm design"), Proposition 3.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb
from scipy import optimize, special
from scipy.stats import rv_continuous

from smoothdp_nb.core.numerics.array_types import BoolArray, FloatArray
from smoothdp_nb.core.numerics.ball_arithmetic import arb_from_fraction, decimal_up, float_up, working_precision
from smoothdp_nb.core.numerics.validation import as_positive, as_real, as_rng
from smoothdp_nb.core.release.noise.base import Calibration, FrozenNoise, NoiseFamily, calibration_value
from smoothdp_nb.core.release.noise.laplace import laplace_tail
from smoothdp_nb.core.release.noise.registry import register_family

__all__ = ["LaplaceLogNormal", "LaplaceLogNormalFamily", "lln_gen", "lln_std", "mixture_integral"]

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

    Bun and Steinke; Wang, Lecture 14, Proposition 3.  The density
    ``f(z) = E[e^{-sigma Y} exp(-|z| e^{-sigma Y})] / 2`` has no closed form
    and is evaluated by quadrature; sampling is exact.

    References
    ----------
    Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth Sensitivity and Mean
    Estimation", NeurIPS 2019, as cited in Wang,
        Lecture 14 ("Data-dependent DP algorithm design"), Proposition 3.
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


def LaplaceLogNormal(sigma: float = 1.0, scale: float = 1.0, loc: float = 0.0) -> FrozenNoise:
    """Frozen Laplace-log-normal distribution LLN(sigma) (Bun and Steinke).

    ``Z = X exp(sigma Y)`` with X standard Laplace and Y standard normal;
    ``Var Z = 2 exp(2 sigma^2)``.  pdf/cdf by quadrature (relative accuracy
    ~1e-12), ppf by bisection; ``rvs`` draws floats from the exact
    representation (for simulation, not for releases: use
    :func:`smoothdp_nb.release`).

    References
    ----------
    Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth Sensitivity and Mean
    Estimation", NeurIPS 2019.
    Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
    """
    sigma = as_positive(sigma, "sigma")
    frozen: FrozenNoise = _lln(
        sigma, loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale")
    )  # scipy is untyped
    return frozen


def lln_std(eps: float, gamma: float, sigma: float) -> float:
    """sqrt(2) e^{sigma^2} * e^{3 sigma^2/2} / (eps - gamma/sigma)  (Proposition 3 of Wang, Lecture 14).

    References
    ----------
    Wang, Lecture 14 ("Data-dependent DP algorithm design"), Proposition 3
    (Bun and Steinke 2019).
    """
    budget = eps - gamma / sigma
    if budget <= 0.0:
        return math.inf
    if 2.5 * sigma * sigma > 709.0:  # e^{5 sigma^2 / 2} beyond the doubles: the std is infinite as a double
        return math.inf
    return math.sqrt(2.0) * math.exp(2.5 * sigma * sigma) / budget


def mixture_integral(x: arb, sigma: float) -> arb:
    """Ball of ``J(x) = E exp(-x e^{-sigma Y})``, Y standard normal, for a ball ``x > 0``.

    Arb's rigorous quadrature (``acb.integral``; the integrand is entire) on
    ``|y| <= 40``; the rest lies in ``[0, P(|Y| > 40)] = [0, erfc(40 / sqrt 2)]``
    (the integrand is between 0 and the normal density) and is added as such.
    """
    s = acb(sigma)
    xc = acb(x)
    norm = 1 / (2 * arb.pi()).sqrt()

    def f(y: acb, analytic: bool) -> acb:
        return (-(y * y) / 2).exp() * norm * (-(xc * (-s * y).exp())).exp()

    body = acb.integral(f, -40, 40).real
    rest = (arb(40) / arb(2).sqrt()).erfc()
    return body + arb(0).union(rest)


class LaplaceLogNormalFamily(NoiseFamily):
    """Laplace-log-normal noise LLN(sigma): rho-zCDP with ``rho = epsilon^2 / 2`` for ``gamma < epsilon sigma``.

    Scale ``e^{3 sigma^2/2} / (epsilon - gamma / sigma)`` (an Arb ball,
    rounded up); rho is ``epsilon^2 / 2`` rounded up, and printed rounded up.
    ``shape=None`` picks the sigma minimising the std, the positive root of
    ``5 eps sigma^3 - 5 gamma sigma^2 - gamma = 0``.  The lattice sampler
    draws ``Y`` itself (:attr:`log_normal_mixture`); :meth:`tail_enclosure`
    is the Laplace factor's tail.

    References
    ----------
    Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth
    Sensitivity and Mean Estimation", NeurIPS 2019, as cited in Wang,
    Lecture 14 ("Data-dependent DP algorithm design"), Proposition 3.
    """

    name = "laplace_log_normal"
    label = "Laplace log-normal (zCDP)"
    aliases = ("lln",)
    shape_name = "sigma"
    free_shape = True
    shape_lower = 0.0
    privacy_kind = "zcdp"
    guarantee = "rho-zCDP with rho = epsilon^2 / 2 (Bun and Steinke 2019; Wang, Lecture 14, Proposition 3)"
    log_normal_mixture = True

    def distribution(self, shape: float | None) -> FrozenNoise:
        return LaplaceLogNormal(self._given_shape(shape))

    def tail_enclosure(self, a: arb, shape: float) -> arb:
        return laplace_tail(a)  # the Laplace factor X of the mixture

    def cdf_enclosure(self, a: arb, sign: int, shape: float) -> arb:
        """``F(a) = 1 - J(a) / 2`` (``a > 0``), ``J(|a|) / 2`` (``a < 0``), J by :func:`mixture_integral`."""
        if sign == 0:
            return arb(0.5)
        J = mixture_integral(a if sign > 0 else -a, shape)
        return J / 2 if sign < 0 else 1 - J / 2

    def _gamma_sup(self, eps: float, delta: float | None, shape: float | None) -> float:
        return eps * shape if shape is not None else math.inf

    def _std(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        return lln_std(eps, gamma, self._given_shape(shape))

    def _optimal_shape(self, eps: float, gamma: float) -> float:
        """sigma minimising 5 sigma^2/2 - log(eps - gamma/sigma): the positive root of 5 eps s^3 - 5 gamma s^2 - gamma."""
        lo = gamma / eps

        def f(s: float) -> float:
            return 5.0 * eps * s**3 - 5.0 * gamma * s**2 - gamma

        hi = max(2.0 * lo, 1.0)
        while f(hi) <= 0:
            hi *= 2.0
        return float(optimize.brentq(f, lo, hi, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500))

    def _calibrate(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> Calibration:
        E, G = calibration_value(eps), Fraction(gamma)
        with working_precision(160):
            sigma = self._resolved_shape(eps, gamma, delta, shape)
            C = Fraction(sigma)
            den = arb_from_fraction(E) - arb_from_fraction(G) / arb_from_fraction(C)
            self._require_positive_budget(den, eps, gamma, delta, sigma)
            scale = float_up((3 * arb_from_fraction(C) * arb_from_fraction(C) / 2).exp() / den)
        rho_exact = E * E / 2
        return Calibration(
            self.name,
            eps,
            gamma,
            None,
            sigma,
            scale,
            LaplaceLogNormal(sigma),
            lln_std(eps, gamma, sigma),
            f"rho-zCDP with rho={decimal_up(rho_exact)}",
            float_up(rho_exact),
        )


# the family joins the registry when its module is imported: its one home declares it
register_family(LaplaceLogNormalFamily())
