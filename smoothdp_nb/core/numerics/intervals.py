"""Confidence intervals for the mean of bounded samples, valid at every sample size.

Generic statistics (nothing here is specific to privacy): the Monte Carlo
smoothed delta uses them for the mean of delta(x) over sampled databases.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import BoolArray, FloatArray
from smoothdp_nb.core.numerics.validation import as_open_unit

#: (sample mean, lower end, upper end), each of the shape of the other axes
Interval = tuple[FloatArray, FloatArray, FloatArray]

__all__ = ["empirical_bernstein_interval", "betting_interval", "INTERVALS"]


def empirical_bernstein_interval(values: npt.ArrayLike, alpha: float, bound: float = 1.0, axis: int = 0) -> Interval:
    """Two-sided empirical Bernstein interval for the mean of [0, bound] samples.

    Maurer & Pontil (2009), Theorem 4, applied to each side with alpha/2:
    with probability >= 1 - alpha the mean lies within
    ``sqrt(2 V log(4/alpha) / N) + 7 bound log(4/alpha) / (3 (N - 1))`` of the
    sample mean (V the unbiased sample variance).  Valid for any distribution
    on [0, bound]; conservative.  Returns (mean, low, high), clipped to [0, bound].

    References
    ----------
    Maurer, Pontil. *Empirical Bernstein bounds and sample variance penalization*, COLT 2009 (Theorem 4).
    """
    v = np.asarray(values, dtype=float)
    N = v.shape[axis]
    mean = v.mean(axis=axis)
    if N < 2:
        return mean, np.zeros_like(mean), np.full_like(mean, bound)
    var = v.var(axis=axis, ddof=1)
    L = math.log(4.0 / alpha)
    half = np.sqrt(2.0 * var * L / N) + 7.0 * bound * L / (3.0 * (N - 1))
    return mean, np.clip(mean - half, 0.0, bound), np.clip(mean + half, 0.0, bound)


def betting_interval(
    values: npt.ArrayLike,
    alpha: float,
    bound: float = 1.0,
    axis: int = 0,
    *,
    c: float = 0.75,
    theta: float = 0.5,
    iterations: int = 48,
) -> Interval:
    """Two-sided "hedged capital" betting confidence interval for the mean of [0, bound] samples.

    Waudby-Smith & Ramdas (2024), *Estimating means of bounded random variables
    by betting*, JRSS-B 86(1), Theorem 3 and Section 5 (fixed-sample CI).  With
    ``x_i = values_i / bound`` in [0, 1] and a candidate mean m, two gamblers bet
    for and against m:

        K+_t(m) = prod_{i<=t} (1 + min(lam_i, c/m)     (x_i - m))
        K-_t(m) = prod_{i<=t} (1 - min(lam_i, c/(1-m)) (x_i - m))

    with the predictable plug-in bets ``lam_i = sqrt(2 log(2/alpha) / (N s2_{i-1}))``,
    ``s2_t = (1/4 + sum_{j<=t} (x_j - mu_j)^2) / (t+1)``,
    ``mu_t = (1/2 + sum_{j<=t} x_j) / (t+1)`` (``s2_0 = 1/4``).  Under the true
    mean both are non-negative martingales, so by Ville's inequality the hedged
    capital ``max(theta K+, (1-theta) K-)`` ever reaches ``1/alpha`` with
    probability <= alpha.  The interval is the set of m where it does not, over
    all t <= N (the running intersection, still valid):
    ``[inf{m: theta max_t K+_t(m) < 1/alpha}, sup{m: (1-theta) max_t K-_t(m) < 1/alpha}]``.
    K+ is non-increasing and K- non-decreasing in m, so each endpoint is found
    by a vectorised bisection in log(m) (resp. log(1-m)), ``iterations`` steps,
    rounded outwards.

    Valid for any distribution on [0, bound] (i.i.d. samples, taken in the
    given order), at every sample size; typically much narrower than
    :func:`empirical_bernstein_interval`, above all when the mean and the
    variance are small against ``bound``.  Vectorised over the other axes.
    Returns (mean, low, high), in the units of ``values``.

    References
    ----------
    Waudby-Smith, Ramdas. *Estimating means of bounded random variables by betting*, JRSS-B 86(1), 2024
    (Theorem 3 and Section 5).
    """
    alpha, c, theta = (as_open_unit(x, name) for x, name in ((alpha, "alpha"), (c, "c"), (theta, "theta")))
    v = np.asarray(values, dtype=float)
    mean = v.mean(axis=axis)
    x = np.clip(np.moveaxis(v, axis, 0) / bound, 0.0, 1.0)
    N = x.shape[0]
    shape = x.shape[1:]
    x = x.reshape(N, -1)
    t = np.arange(1, N + 1, dtype=float)[:, None]
    mu = (0.5 + np.cumsum(x, axis=0)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=0)) / (t + 1)
    s2_prev = np.vstack([np.full((1, x.shape[1]), 0.25), s2[:-1]])
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (N * s2_prev))
    thr_plus = math.log(1.0 / (theta * alpha))
    thr_minus = math.log(1.0 / ((1.0 - theta) * alpha))

    def rejected_plus(m: FloatArray) -> BoolArray:  # theta max_t K+_t(m) >= 1/alpha ; m of shape (cols,)
        with np.errstate(divide="ignore"):
            bet = np.minimum(lam, c / m)
        logk = np.cumsum(np.log1p(bet * (x - m)), axis=0)
        out: BoolArray = logk.max(axis=0) >= thr_plus
        return out

    def rejected_minus(m: FloatArray) -> BoolArray:  # (1 - theta) max_t K-_t(m) >= 1/alpha
        with np.errstate(divide="ignore"):
            bet = np.minimum(lam, c / (1.0 - m))
        logk = np.cumsum(np.log1p(-bet * (x - m)), axis=0)
        out: BoolArray = logk.max(axis=0) >= thr_minus
        return out

    def boundary(
        rejected: Callable[[FloatArray], BoolArray], to_m: Callable[[FloatArray], FloatArray]
    ) -> tuple[FloatArray, BoolArray]:
        # bisection on u = log(m) (lower end) or log(1 - m) (upper end) in [log(tiny), 0]:
        # rejected(to_m(lo)) is True, rejected(to_m(hi)) is False
        cols = x.shape[1]
        lo = np.full(cols, math.log(1e-300))
        hi = np.zeros(cols)
        at_edge = ~rejected(to_m(lo))  # nothing rejected: the interval reaches the edge
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            r = rejected(to_m(mid))
            lo = np.where(r, mid, lo)
            hi = np.where(r, hi, mid)
        return lo, at_edge

    if N == 0:
        raise ValueError("values must contain at least one sample")
    u, edge = boundary(rejected_plus, np.exp)
    low = np.where(edge, 0.0, np.exp(u))
    u, edge = boundary(rejected_minus, lambda u: -np.expm1(u))
    high = np.where(edge, 1.0, -np.expm1(u))
    low = low.reshape(shape) * bound
    high = high.reshape(shape) * bound
    return mean, low, high


INTERVALS = {
    "betting": (betting_interval, "hedged-capital betting (Waudby-Smith & Ramdas)"),
    "bernstein": (empirical_bernstein_interval, "empirical Bernstein (Maurer-Pontil)"),
}
