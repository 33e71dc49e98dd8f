"""Proven bounds on the Renyi divergence of a privacy-loss law, for every order alpha >= 0.

With ``b = alpha - 1`` and the loss ``L = log P/Q`` under P,
``D_alpha(P || Q) = log E_P[e^(b L)] / b`` (the KL divergence ``E_P[L]`` at b = 0).  Written so,
the value near alpha = 1 is the quotient of two vanishing quantities; here it is computed as

    D_alpha = a + log1p(b G) / b,    G = E_P[g_b(L - a)],    g_b(d) = expm1(b d) / b,

for any ``a`` (below every loss, for the lower bound): ``E_P[e^(b L)] = e^(b a) (1 + b G)``
because P is a probability law.  ``g_b(d)`` tends to ``d`` and ``log1p(b y)/b`` to ``y`` as
b -> 0, and both are evaluated through ``log(expm1(x)/x)`` (a series for ``|x| < 1/2``) and
``log1p`` / ``log1mexp``: no cancellation, whatever b, and b = 0 *is* the KL divergence.

Certification.  The runs' laws come as two measures (:meth:`LossDistribution.from_log_pmfs`):
``upper`` puts at least the true mass at losses at least the true ones, ``lower`` at most the
true mass at losses at most the true ones.  ``g_b`` is increasing, and by the tail formula
``E_P[f(L)] = f(a) + int_a^inf f'(t) P(L > t) dt - int_{-inf}^a f'(t) P(L < t) dt``
(f increasing): the upper measure's tails ``mu+(L > t) >= P(L > t)`` give
``G <= sum mu+_i g_b(L+_i - a)`` for any a (the last integral only subtracts), and the
lower measure's ``mu-(L > t) <= P(L > t)`` give ``G >= sum mu-_i g_b(L-_i - a)`` once a is
at most every true loss (then the last integral vanishes): ``a`` is the smallest loss of the
lower measure, which is below the true loss it represents.  An infinite loss enters with
``g_b(inf) = inf`` (b >= 0) or ``1/|b|`` (b < 0).  ``log1p(b y)/b`` is increasing in y for
every b, so the two sums give the two bounds.  Every float step is then rounded outward
(the error argument is in :func:`_log_g`, :func:`_phi` and :func:`renyi_enclosure`).  The
order itself: ``alpha - 1`` is used when it is exact (checked with fractions), else rounded
outward (D is non-decreasing in alpha).  ``alpha = inf`` is the largest loss.

References
----------
Mironov. *Renyi differential privacy*, CSF 2017 (the divergence and its composition).
van Erven, Harremoes. *Renyi divergence and Kullback-Leibler divergence*, IEEE Trans. IT 2014
(monotonicity in the order; the limits alpha -> 0, 1, inf).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.divergence import log1mexp
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, gamma, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution
from smoothdp_nb.core.numerics.privacy_loss.rounding import lse_error

__all__ = ["renyi_enclosure", "renyi_of_parts", "renyi_monotone"]

# terms of the series of expm1(x)/x = sum x^j / (j+1)! used for |x| < 1/2: the remainder
# after _SERIES terms is below 2 (1/2)^_SERIES / (_SERIES+1)! < 1e-40
_SERIES = 24
# a generous multiple of the unit roundoff per elementary step (each term below is a
# handful of libm calls and additions, each within LIBM_REL or u of its magnitude)
_STEP = 8.0 * (U + LIBM_REL)


def _log_expm1_over(x: FloatArray) -> FloatArray:
    """``log(expm1(x)/x)`` (0 at x = 0), for finite x."""
    out = np.zeros(x.shape)
    small = np.abs(x) < 0.5
    xs = x[small]
    term = np.ones(xs.shape)
    s = np.ones(xs.shape)
    for j in range(1, _SERIES + 1):
        term = term * xs / (j + 1)
        s = s + term
    out[small] = np.log(s)
    pos = ~small & (x > 0)
    xp = x[pos]
    out[pos] = xp + log1mexp(-xp) - np.log(xp)  # log(e^x - 1) - log x
    neg = ~small & (x < 0)
    xn = x[neg]
    out[neg] = np.log(-np.expm1(xn)) - np.log(-xn)
    return out


def _log_g(d: FloatArray, b: float) -> tuple[FloatArray, FloatArray]:
    """(``log g_b(d)`` for d > 0, a bound on its absolute error).

    ``log g_b(d) = log d + h(b d)`` with ``h(x) = log(expm1(x)/x)``, whose slope is in
    (0, 1): the product ``b d`` (``u |x|``) moves h by at most ``u |x|``; the series sums
    terms of size at most ``(1/2)^j/(j+1)!`` to a value in [0.78, 1.3], each with ``2j u``,
    so within ``8u`` relative, and its log adds ``LIBM_REL``; the two other branches are
    three libm calls and two additions (``LIBM_REL`` of each part, ``u`` of each sum).  All
    of it is inside :data:`_STEP` times the sum of the magnitudes plus one."""
    x = b * d
    ld = np.log(d)
    h = _log_expm1_over(x)
    with np.errstate(divide="ignore"):
        lx = np.where(x != 0, np.abs(np.log(np.abs(np.where(x != 0, x, 1.0)))), 0.0)
    val = ld + h
    err = _STEP * (1.0 + np.abs(ld) + np.abs(x) + np.abs(h) + lx + np.abs(val))
    return val, err


def _exact_beta(alpha: float, upper: bool) -> float:
    """``alpha - 1``, rounded toward the bound's side when the float difference is inexact
    (D_alpha is non-decreasing in alpha)."""
    b = alpha - 1.0
    if Fraction(b) == Fraction(alpha) - 1:
        return b
    return float(next_up(b)) if upper else float(next_down(b))


def _log_G(d: LossDistribution, a: float, b: float, upper: bool) -> float:
    """log of a bound on ``G = E_P[g_b(L - a)]`` from the measure ``d`` (rounded
    outward; ``inf`` when an infinite loss with b >= 0 makes G infinite)."""
    if d.log_inf > -math.inf and b >= 0:
        return math.inf
    diff = d.losses - a
    diff = next_up(diff) if upper else np.maximum(next_down(diff), 0.0)  # g_b increasing: round toward the bound
    pos = diff > 0
    lg, eg = _log_g(diff[pos], b)
    terms = d.log_mass[pos] + lg
    errs = eg + U * (np.abs(d.log_mass[pos]) + np.abs(terms))
    if d.log_inf > -math.inf:  # b < 0: g_b(inf) = 1/|b|
        li = d.log_inf - math.log(-b)
        terms = np.append(terms, li)
        errs = np.append(errs, _STEP * (1.0 + abs(d.log_inf) + abs(math.log(-b)) + abs(li)))
    fin = np.isfinite(terms)
    if not fin.any():
        return -math.inf
    terms, errs = terms[fin], errs[fin]
    v = float(logsumexp(terms))
    spread = float(terms.max() - terms.min())
    e = float(lse_error(terms.size, spread, v)) + float(errs.max())
    return float(next_up(v + e)) if upper else float(next_down(v - e))


def _phi(log_G: float, b: float, upper: bool) -> float:
    """A bound on ``log1p(b G)/b`` (G at b = 0) from a bound on log G, outward.

    With ``y = log|b| + log G`` (``u |y|`` and ``LIBM_REL |log|b||`` off): b > 0 gives
    ``softplus(y)/b``, whose log-slope in y is at most 1; b < 0 gives ``log(1 - e^y)/b``,
    whose log-slope is ``z / ((1 - z) (-log(1 - z)))`` with ``z = e^y`` (at least 1, and
    evaluated at the far end of y's error); each adds ``LIBM_REL`` twice and the
    quotient ``u``."""
    if log_G == -math.inf:
        return 0.0
    if log_G == math.inf:
        return math.inf
    if b == 0.0:
        v = math.exp(log_G)
        r = 2.0 * LIBM_REL * (1.0 + abs(log_G))
        return float(next_up(v * (1 + r))) if upper else float(next_down(v * (1 - r)))
    lb = math.log(abs(b))
    y = lb + log_G
    ey = U * abs(y) + LIBM_REL * abs(lb) + 2.0**-1070
    y_far = y + ey if upper else y - ey  # phi is increasing in y for both signs of b
    if b > 0:
        num = float(np.logaddexp(0.0, y_far))  # log1p(e^y)
        rel = 4.0 * LIBM_REL + 2.0 * U
    else:
        if y_far >= 0.0:  # b G >= 1 is possible at this bound: no finite upper bound
            return math.inf if upper else 0.0
        lm = float(log1mexp(np.array(y_far)))  # log(1 - e^y) < 0
        num = lm
        rel = 4.0 * LIBM_REL + 2.0 * U
        if not math.isfinite(num):
            return math.inf if upper else 0.0
    v = num / b
    if upper:
        return float(next_up(v * (1.0 + rel)))
    return float(next_down(v * (1.0 - rel)))


def renyi_enclosure(upper: LossDistribution, lower: LossDistribution, alpha: float) -> tuple[float, float]:
    """(lower, upper) proven bounds on ``D_alpha(P || Q)`` (nats) for one pair whose loss law
    under P is bracketed by the measures ``upper`` and ``lower`` (module docstring); any
    alpha >= 0, ``inf`` included.

    The bounds are ``a + phi`` with ``a`` the smallest loss of ``lower`` and ``phi`` from
    :func:`_phi`; the sum is rounded outward, and both are at least 0 (a divergence)."""
    if alpha == math.inf:
        hi = math.inf if upper.log_inf > -math.inf else (float(upper.losses[-1]) if upper.size else 0.0)
        lo = math.inf if lower.log_inf > -math.inf else (float(lower.losses[-1]) if lower.size else 0.0)
        return max(lo, 0.0), max(hi, 0.0)
    if alpha == 0.0:
        return _renyi_zero(upper, lower)
    a = float(lower.losses[0]) if lower.size else 0.0
    out = []
    for up in (False, True):
        b = _exact_beta(alpha, up)
        d = upper if up else lower
        p = _phi(_log_G(d, a, b, up), b, up)
        if p == math.inf:
            out.append(math.inf)
            continue
        v = a + p
        v = float(next_up(v)) if up else float(next_down(v))
        out.append(max(v, 0.0))
    return out[0], out[1]


def _renyi_zero(upper: LossDistribution, lower: LossDistribution) -> tuple[float, float]:
    """(lower, upper) bounds on ``D_0(P || Q) = -log Q(supp P)``, directly: the Q-mass of an
    atom is ``e^(log_mass - L)``, of Q~ <= Q in the upper measure and of Q~ >= Q in the lower
    one, so the two sums bound ``Q(supp P)`` from below and above (an infinite loss has
    Q = 0 and adds nothing).  Each term is within ``u (|log_mass| + |L| + |term|)``, the sum
    :func:`lse_error`; no difference of nearly equal numbers is formed (the general formula
    ``a + log1p(-G)/(-1)`` would cancel when Q(supp P) is near 1)."""
    out = []
    for up in (False, True):
        d = upper if up else lower  # the upper bound on D needs the lower bound on Q
        if d.size == 0:
            out.append(math.inf)  # no output that both can produce: Q(supp P) = 0
            continue
        t = d.log_mass - d.losses
        v = float(logsumexp(t))
        fin = np.isfinite(t)
        spread = float(t[fin].max() - t[fin].min()) if fin.any() else 0.0
        err = float(lse_error(int(fin.sum()), spread, v)) + float(
            np.max(U * (np.abs(d.log_mass) + np.abs(d.losses) + np.abs(t)))
        )
        log_q = min(0.0, float(next_down(v - err)) if up else float(next_up(v + err)))  # Q(supp P) <= 1
        out.append(max(0.0, -log_q))
    return out[0], out[1]


def renyi_of_parts(
    parts: list[tuple[LossDistribution, int]], lower_parts: list[tuple[LossDistribution, int]], alpha: float
) -> tuple[float, float]:
    """(lower, upper) bounds on the Renyi divergence of a composition: the runs'
    divergences add (Mironov, Proposition 1), each bound times its multiplicity, the
    sums rounded outward (``gamma`` of the count).

    References
    ----------
    Mironov. *Renyi differential privacy*, CSF 2017 (Proposition 1: composition).
    """
    if len(parts) != len(lower_parts):
        raise ValueError("the upper and lower runs must match")
    lo_terms: list[float] = []
    hi_terms: list[float] = []
    for (du, k), (dl, kl) in zip(parts, lower_parts):
        if k != kl:
            raise ValueError("the upper and lower runs must match")
        if k == 0:
            continue
        lo, hi = renyi_enclosure(du, dl, alpha)
        lo_terms.append(k * lo)
        hi_terms.append(k * hi)
    if not hi_terms:
        return 0.0, 0.0
    c = float(gamma(len(hi_terms) + 1))
    hi_sum = math.fsum(hi_terms)
    lo_sum = math.fsum(lo_terms)
    hi_v = math.inf if math.isinf(hi_sum) else float(next_up(hi_sum * (1 + c)))
    lo_v = math.inf if math.isinf(lo_sum) else float(next_down(lo_sum * (1 - c)))
    return max(lo_v, 0.0), hi_v


def renyi_monotone(lo: FloatArray, hi: FloatArray, alphas: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bounds made monotone in alpha (last axis): D_alpha is non-decreasing in alpha, so an
    upper bound at a larger order bounds every smaller one, and a lower bound at a smaller
    order every larger one."""
    order = np.argsort(alphas, kind="stable")
    h = np.asarray(hi, dtype=float)[..., order]
    lw = np.asarray(lo, dtype=float)[..., order]
    h = np.minimum.accumulate(h[..., ::-1], axis=-1)[..., ::-1]
    lw = np.maximum.accumulate(lw, axis=-1)
    inv = np.argsort(order)
    return lw[..., inv], h[..., inv]
