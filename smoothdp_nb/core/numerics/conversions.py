"""Certified conversions between privacy notions: zCDP, Renyi DP and Gaussian DP to (epsilon, delta).

Each function turns a guarantee of one kind into an (epsilon, delta)-DP guarantee by a published
theorem, evaluated in Arb ball arithmetic (python-flint) and rounded **outward** (up for epsilon
and delta), so the number returned is a proven bound, not a float approximation of one.

* :func:`zcdp_to_dp` -- rho-zCDP to (epsilon, delta): Canonne, Kamath and Steinke (2020),
  Corollary 13, ``epsilon = inf over alpha > 1 of alpha rho + log(1/(alpha delta)) / (alpha - 1)
  + log(1 - 1/alpha)``, never above Bun and Steinke (2016), Proposition 1.3,
  ``rho + 2 sqrt(rho log(1/delta))`` (both are evaluated; the smaller is returned).
* :func:`renyi_to_dp` -- (alpha, tau)-Renyi DP at several orders to (epsilon, delta): the same
  improved bound, Canonne, Kamath and Steinke (2020), Proposition 12 (Asoodeh, Liao, Calmon,
  Kosut and Sankar (2021) prove the optimal conversion and compare it with this one), which is
  below Mironov (2017), Proposition 3, ``tau + log(1/delta) / (alpha - 1)``, at every order.
* :func:`gdp_to_dp` and :func:`gdp_epsilon` -- mu-GDP to its (epsilon, delta(epsilon)) curve,
  Dong, Roth and Su (2022), Corollary 2.13:
  ``delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)``; a mechanism is
  mu-GDP if and only if it is (epsilon, delta(epsilon))-DP for every epsilon >= 0.

Why the numbers are proven
--------------------------
The infimum over alpha is attained at an order found in floating point; but *every* order
alpha > 1 gives a valid bound (each theorem holds for each alpha separately), so the bound is
evaluated exactly at the float order found (an exact rational) with Arb and the upper end of its
ball rounded up to a double (:func:`~.ball_arithmetic.float_up`).  A poor optimiser can only make
the bound looser, never wrong.  The inputs (rho, tau, mu, epsilon, delta) are taken as the exact
rationals of their doubles.  For the Gaussian curve the two terms cancel for large epsilon; the
precision is raised until the ball is narrow, and its upper end is returned in any case.

References
----------
M. Bun and T. Steinke, "Concentrated differential privacy: simplifications, extensions, and lower
bounds", TCC 2016, Proposition 1.3.
C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS
2020, Proposition 12 and Corollary 13.
I. Mironov, "Renyi differential privacy", CSF 2017, Proposition 3.
S. Asoodeh, J. Liao, F. Calmon, O. Kosut and L. Sankar, "Three variants of differential privacy:
lossless conversion and applications", IEEE JSAIT 2021.
J. Dong, A. Roth and W. Su, "Gaussian differential privacy", JRSS B 2022, Corollary 2.13.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt
from flint import arb
from scipy import optimize

from smoothdp_nb.core.numerics.array_types import FloatOrArray
from smoothdp_nb.core.numerics.ball_arithmetic import arb_from_fraction, float_up, working_precision
from smoothdp_nb.core.numerics.validation import as_real

__all__ = ["gdp_epsilon", "gdp_to_dp", "renyi_to_dp", "zcdp_to_dp"]

_PREC = 128  # bits of Arb precision: the balls are ~1e-38 wide, far below a double's rounding


def _arb(x: float) -> arb:
    return arb_from_fraction(Fraction(x))


def _delta(delta: object) -> float:
    return as_real(delta, "delta", lo=0.0, hi=1.0, lo_open=True, hi_open=True)


def _cks_bound(alpha: float, tau: arb, log_inv_delta: arb) -> arb:
    """Canonne-Kamath-Steinke Proposition 12 at one order ``alpha > 1`` (a ball)."""
    a = _arb(alpha)
    return tau + (log_inv_delta - a.log()) / (a - 1) + (1 - 1 / a).log()


def zcdp_to_dp(rho: float, delta: float) -> float:
    """The epsilon of a rho-zCDP mechanism at ``delta``: a proven upper bound.

    Parameters
    ----------
    rho : float
        ``rho >= 0`` (``inf`` allowed: then ``inf``).
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float
        The smaller of Canonne, Kamath and Steinke's Corollary 13 (evaluated at the order a float
        optimiser finds) and Bun and Steinke's ``rho + 2 sqrt(rho log(1/delta))``, each evaluated
        in Arb and rounded up; 0 for ``rho = 0``.

    Notes
    -----
    rho-zCDP is ``D_alpha(M(x) || M(x')) <= alpha rho`` for every alpha > 1 and neighbours
    x, x'; each order gives a valid epsilon (module docstring), so the order found need not be
    optimal for the result to be proven.

    References
    ----------
    Bun and Steinke, "Concentrated differential privacy: simplifications, extensions, and lower
    bounds", TCC 2016, Proposition 1.3.  Canonne, Kamath and Steinke, "The discrete Gaussian for
    differential privacy", NeurIPS 2020, Corollary 13.
    """
    r = as_real(rho, "rho", lo=0.0, finite=False)
    d = _delta(delta)
    if r == 0.0:
        return 0.0
    if math.isinf(r):
        return math.inf
    log_inv = -math.log(d)

    def f(t: float) -> float:  # t = log(alpha - 1)
        a = 1.0 + math.exp(t)
        if not 1.0 < a < math.inf:
            return math.inf
        return a * r + (log_inv - math.log(a)) / (a - 1.0) + math.log1p(-1.0 / a)

    a_bs = 1.0 + math.sqrt(log_inv / r)  # the order at which Proposition 1.3 is Mironov's bound
    t0 = math.log(a_bs - 1.0)
    lo, hi = min(t0, 0.0) - 40.0, max(t0, 0.0) + 40.0
    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    alpha = 1.0 + math.exp(float(res.x))
    with working_precision(_PREC):
        R, L = _arb(r), (1 / _arb(d)).log()
        bs = float_up(R + 2 * (R * L).sqrt())
        cks = float_up(_cks_bound(alpha, _arb(alpha) * R, L)) if math.isfinite(alpha) and alpha > 1.0 else bs
        return max(0.0, min(cks, bs))


def renyi_to_dp(alphas: npt.ArrayLike, rdp_values: npt.ArrayLike, delta: float) -> float:
    """The epsilon at ``delta`` of a mechanism with Renyi DP ``rdp_values`` at orders ``alphas``: proven.

    Parameters
    ----------
    alphas : array_like of float
        Orders ``alpha > 1`` (``inf`` allowed: ``D_inf <= tau`` is tau-DP); orders ``<= 1`` are
        refused, as no conversion uses them.
    rdp_values : array_like of float
        Upper bounds ``tau >= 0`` on ``D_alpha`` in natural-log units, one per order (``inf``
        allowed where the divergence is infinite).
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float
        ``min over the orders of max(0, tau + log(1/(alpha delta)) / (alpha - 1) + log(1 - 1/alpha))``
        (Canonne, Kamath and Steinke, Proposition 12), evaluated in Arb and rounded up; at
        ``alpha = inf`` the term is ``tau`` itself.

    References
    ----------
    Mironov, "Renyi differential privacy", CSF 2017, Proposition 3.  Canonne, Kamath and Steinke,
    "The discrete Gaussian for differential privacy", NeurIPS 2020, Proposition 12.  Asoodeh,
    Liao, Calmon, Kosut and Sankar, "Three variants of differential privacy: lossless conversion
    and applications", IEEE JSAIT 2021.
    """
    a = np.atleast_1d(np.asarray(alphas, dtype=float)).ravel()
    t = np.atleast_1d(np.asarray(rdp_values, dtype=float)).ravel()
    if a.size == 0 or a.size != t.size:
        raise ValueError(f"alphas and rdp_values must be non-empty and of the same length, got {a.size} and {t.size}")
    if np.isnan(a).any() or not (a > 1.0).all():
        raise ValueError("alphas must all satisfy 1 < alpha <= inf")
    if np.isnan(t).any() or not (t >= 0.0).all():
        raise ValueError("rdp_values must all satisfy 0 <= value <= inf")
    d = _delta(delta)
    best = math.inf
    with working_precision(_PREC):
        L = (1 / _arb(d)).log()
        for alpha, tau in zip(a.tolist(), t.tolist(), strict=True):
            if math.isinf(tau):
                continue
            if math.isinf(alpha):
                best = min(best, tau)
                continue
            best = min(best, max(0.0, float_up(_cks_bound(alpha, _arb(tau), L))))
    return best


def _gdp_delta_ball(mu: Fraction, epsilon: Fraction, prec: int) -> arb:
    with working_precision(prec):
        m, e = arb_from_fraction(mu), arb_from_fraction(epsilon)
        s = arb(2).sqrt()
        # Phi(x) = erfc(-x / sqrt 2) / 2
        first = ((e / m - m / 2) / s).erfc() / 2
        second = e.exp() * ((e / m + m / 2) / s).erfc() / 2
        return first - second


def _gdp_delta_up(mu: float, epsilon: float) -> float:
    M, E = Fraction(mu), Fraction(epsilon)
    ball = _gdp_delta_ball(M, E, _PREC)
    prec = _PREC
    while prec < 4096 and not (ball > 0 and ball.rad() < ball.mid() * arb(2) ** -30):
        prec *= 2
        ball = _gdp_delta_ball(M, E, prec)
    with working_precision(prec):
        return min(1.0, max(float_up(ball), 0.0))


def gdp_to_dp(mu: float, epsilon: npt.ArrayLike) -> FloatOrArray:
    """The delta(epsilon) curve of a mu-GDP mechanism: proven upper bounds.

    Parameters
    ----------
    mu : float
        ``mu > 0`` (finite).
    epsilon : float or array_like of float
        ``epsilon >= 0`` (``inf`` gives 0).

    Returns
    -------
    float or ndarray
        ``Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)``, each value the upper end
        of an Arb ball rounded up to a double.

    References
    ----------
    Dong, Roth and Su, "Gaussian differential privacy", JRSS B 2022, Corollary 2.13.
    """
    m = as_real(mu, "mu", lo=0.0, lo_open=True)
    eps = np.asarray(epsilon, dtype=float)
    if np.isnan(eps).any() or (eps < 0).any():
        raise ValueError("epsilon must be >= 0 (inf allowed) for the Gaussian-DP curve")
    flat = [0.0 if math.isinf(e) else _gdp_delta_up(m, e) for e in eps.ravel().tolist()]
    out = np.array(flat, dtype=float).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon (to about 1e-12 relative) at which a mu-GDP mechanism is (epsilon, delta)-DP.

    The result ``e`` is proven: :func:`gdp_to_dp` at ``e`` (an upper bound on the curve) is at most
    ``delta``.  It is found by bisection on the certified curve, which is decreasing in epsilon.

    References
    ----------
    Dong, Roth and Su, "Gaussian differential privacy", JRSS B 2022, Corollary 2.13.
    """
    m = as_real(mu, "mu", lo=0.0, lo_open=True)
    d = _delta(delta)
    if _gdp_delta_up(m, 0.0) <= d:
        return 0.0
    hi = m * m / 2.0 + m * math.sqrt(2.0 * math.log(1.0 / d)) + 1.0  # Gaussian tail: above the answer
    while _gdp_delta_up(m, hi) > d:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):
        if hi - lo <= 1e-12 * hi:
            break
        mid = 0.5 * (lo + hi)
        if _gdp_delta_up(m, mid) <= d:
            hi = mid
        else:
            lo = mid
    return hi
