"""A proven upper bound on the profile of the two-category sampling histogram over a whole
range of histograms at once, in O(1) per range: what lets an engine leave out the databases
that cannot carry an expectation without computing their profiles.

Neighbours x ~ x' of n records differ in one record, of category a in x and b in x'; ``u``
and ``v = n - 1 - u`` count the other records of a and b (see
:mod:`~smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism`).  Without
replacement ``T`` records are sampled and ``D = n - T`` are not; with ``m`` the number of
unsampled a-records under x (so ``D - m`` unsampled b-records), the likelihood ratio of an
output is ``r(m) = (u + 1)(D - m + 1) / (m (v + 1))``, strictly decreasing in m.  So

    d(x, x') = sum_o (P(o) - e^eps Q(o))_+ <= P(r > e^eps) = P(m < m*),
    m* = (u + 1)(D + 1) / (e^eps (v + 1) + u + 1),

and m is hypergeometric (D draws from n records of which u + 1 are a-records).  Hoeffding
(1963, Theorem 4: sampling without replacement is dominated in convex order by sampling with
replacement) gives the binomial Chernoff bound ``P(m <= m*) <= exp(-D KL(m*/D || (u+1)/n))``
when ``m*/D <= (u + 1)/n``.  Over a range of u both ``q(u) = m*(u)/D`` and ``a(u) = (u+1)/n``
increase with u, and for ``q < a`` the divergence ``KL(q || a)`` decreases in q and increases
in a; so over ``u in [ul, uh]`` it is at least ``KL(q(uh) || a(ul))`` (when ``q(uh) < a(ul)``).

That exponent ignores the finite-population factor: when a tenth of the records is left out it
is several per cent of log delta too weak.  The hypergeometric tail itself is bounded with its
exact exponent: the pmf ``h`` of m is log-concave (``h(k) / h(k - 1) = (K - k + 1)(D - k + 1) /
(k (n - K - D + k))`` decreases in k, K = u + 1), so below the mode, with ``M`` the largest
integer under m*, ``h(k - 1) <= rho h(k)`` for every ``k <= M``, ``rho = h(M - 1) / h(M) < 1``,
and ``P(m <= M) <= h(M) / (1 - rho)``.  Over a range of u the event ``m < m*(u)`` only grows
with u and m only grows stochastically with K (one more a-record in the urn), so
``P_{K = ul + 1}(m <= M(uh))`` bounds every u in ``[ul, uh]``.  ``log h(M)`` comes from
:func:`~smoothdp_nb.core.numerics.lpmf.log_hypergeom_pmf` with the proven absolute error of
:func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`; m* and rho are pushed up by a
relative slack far above their rounding.  The smaller of the two bounds is returned.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Algorithm 2).
Hoeffding. *Probability inequalities for sums of bounded random variables*, JASA 58 (1963), Theorem 4.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import lpmf_abs_error

__all__ = ["log_hypergeom_lower_tail_upper", "log_pair_range_upper", "log_profile_range_upper"]

# relative slack on every rounded quantity: far above the few ulps of the float64 operations
_SLACK = 1e-9


def log_pair_range_upper(ul: IntArray, uh: IntArray, n: int, T: int, epsilon: FloatArray) -> FloatArray:
    """Proven upper bound on ``log d(x, x')`` for every pair with ``u`` in ``[ul, uh]``
    (module docstring), shape (len(ul), E); 0 (a bound of 1) where the Chernoff bound does not apply."""
    D = n - T
    ul = np.asarray(ul, dtype=float)[:, None]
    uh = np.asarray(uh, dtype=float)[:, None]
    e = np.asarray(epsilon, dtype=float)[None, :]
    if D <= 0:
        return np.zeros((ul.shape[0], e.shape[1]))
    # the larger q and the smaller a, each pushed outward far beyond its rounding
    q = (uh + 1.0) * (D + 1.0) / (D * (np.exp(e) * (n - uh) + uh + 1.0)) * (1.0 + _SLACK)
    a = (ul + 1.0) / n * (1.0 - _SLACK)
    ok = (q < a) & (a < 1.0) & (q > 0.0)
    qs = np.where(ok, q, 0.25)
    as_ = np.where(ok, a, 0.5)
    t1 = qs * (np.log(qs) - np.log(as_))  # <= 0
    t2 = (1.0 - qs) * (np.log1p(-qs) - np.log1p(-as_))  # >= 0
    kl = t1 + t2
    val = -D * kl + _SLACK * D * (np.abs(t1) + np.abs(t2)) + 1e-300
    chernoff = np.where(ok, np.minimum(val, 0.0), 0.0)
    # the hypergeometric tail with its exact exponent: urn of n records, ul + 1 of them a-records
    mstar = (uh + 1.0) * (D + 1.0) / (np.exp(e) * (n - uh) + uh + 1.0) * (1.0 + _SLACK)
    exact: FloatArray = log_hypergeom_lower_tail_upper(np.ceil(mstar) - 1.0, ul + 1.0, n, D)
    out: FloatArray = np.minimum(chernoff, exact)
    return out


def log_hypergeom_lower_tail_upper(M: npt.ArrayLike, good: npt.ArrayLike, n: int, draws: int) -> FloatArray:
    """Proven upper bound on ``log P(m <= M)``, m the a-records among ``draws`` records drawn
    without replacement from ``n`` of which ``good`` are a-records (arrays broadcast; integer
    values as floats): ``log h(M) - log(1 - rho)`` below the mode (module docstring), ``-inf``
    below the support, 0 (a bound of 1) at or above the mode."""
    M, good = np.broadcast_arrays(np.asarray(M, dtype=float), np.asarray(good, dtype=float))
    bad = n - good
    low = np.maximum(0.0, draws - bad)  # the smallest possible m
    # rho = h(M - 1) / h(M) (0 at the bottom of the support), pushed up
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = M * (bad - draws + M) / ((good - M + 1.0) * (draws - M + 1.0)) * (1.0 + _SLACK)
    inside = (M >= low) & (M <= np.minimum(good, draws))
    below = inside & (M > low) & (rho < 1.0 - 1e-12)
    rho = np.where(M > low, rho, 0.0)
    use = below | (inside & (M == low))
    out = np.where(M < low, -np.inf, 0.0)
    if np.any(use):
        k, g = M[use], good[use]
        lh = lpmf.log_hypergeom_pmf(k, g, n - g, float(draws))
        err = lpmf_abs_error(lh, n, 3)
        geo = -np.log1p(-rho[use]) * (1.0 + _SLACK) + 1e-300
        out[use] = np.minimum(lh + err + geo + _SLACK * np.abs(lh), 0.0)
    res: FloatArray = out
    return res


def log_profile_range_upper(lo: IntArray, hi: IntArray, n: int, T: int, epsilon: FloatArray) -> FloatArray:
    """Proven upper bound on ``log delta_eps(k, n - k)`` for every k in ``[lo, hi]`` (per range), (len(lo), E).

    The profile is the largest of the four divergences of a histogram's neighbour pairs, whose
    ``u`` are ``k - 1``, ``k``, ``n - k - 1`` and ``n - k`` (those that exist); over the range
    they lie in ``[k_lo - 1, k_hi]`` and ``[n - k_hi - 1, n - k_lo]`` (clipped to 0 .. n - 1),
    and :func:`log_pair_range_upper` bounds each.
    """
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    u1l, u1h = np.maximum(lo - 1, 0), np.minimum(hi, n - 1)
    u2l, u2h = np.maximum(n - hi - 1, 0), np.minimum(n - lo, n - 1)
    b1 = log_pair_range_upper(u1l, u1h, n, T, epsilon)
    b2 = log_pair_range_upper(u2l, u2h, n, T, epsilon)
    out: FloatArray = np.maximum(b1, b2)
    return out
