"""Certified pruning of compositions for the two-vertex engine.

The smoothed delta is the largest ``E_r = E[delta(X1 + X2)]`` over the
compositions r (``X1 ~ Bin(n - r, p1)``, ``X2 ~ Bin(r, p2)``).  Usually only a
few thousand of the n + 1 compositions come near the largest:
this module proves which ones cannot, cheaply, so that
:func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary` computes only the rest
(its ``stop`` argument).

* :func:`composition_upper_bounds` -- a proven upper bound on ``log E_r`` for
  every r: Chernoff bounds on pieces of x at a grid of r, spread between grid
  points by the one-step ratio bound (:func:`step_ratio_bounds`).
* :func:`single_vertex_lower` -- a proven lower bound on ``log E_0`` or
  ``log E_n`` (one binomial expectation): the lower bound that prunes.
* :func:`prune_plan` -- which compositions survive, and which contiguous range
  the engine runs (from r = 0, or from r = n with the vertices swapped).

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Algorithm 1).
Chernoff. *A measure of asymptotic efficiency for tests of a hypothesis based on the sum of observations*, Ann. Math. Statist. 23 (1952).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import expit, logsumexp

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, gamma, log_rel, lpmf_abs_error
from smoothdp_nb.core.smoothed.engines.schedule import log_slope

__all__ = [
    "PRUNE_MIN_N",
    "tilt_to",
    "PrunePlan",
    "engine_groups",
    "estimated_stops",
    "composition_upper_bounds",
    "prune_plan",
    "single_vertex_error",
    "single_vertex_lower",
    "step_ratio_bounds",
]

#: records from which the exact engine prunes (below, the certificate costs about what it saves)
PRUNE_MIN_N = 20_000
# compositions with a direct Chernoff bound (the others: spread by the step ratio)
_GRID = 512
# relative slack added to every computed bound: far above the rounding of the
# few dozen float64 operations (u = 1.1e-16 each, libm 8u) that make one
_SLACK = 1e-9


def _log_mgf(n1: np.ndarray, n2: np.ndarray, p1: float, p2: float, beta: np.ndarray) -> np.ndarray:
    """log E[exp(beta (X1 + X2))], X1 ~ Bin(n1, p1), X2 ~ Bin(n2, p2) (stable for any beta)."""
    t1 = np.logaddexp(math.log1p(-p1), math.log(p1) + beta)
    t2 = np.logaddexp(math.log1p(-p2), math.log(p2) + beta)
    out: np.ndarray = n1 * t1 + n2 * t2
    return out


def tilt_to(n1: np.ndarray, n2: np.ndarray, p1: float, p2: float, target: np.ndarray, steps: int = 8) -> np.ndarray:
    """beta with tilted mean ``n1 s(beta + logit p1) + n2 s(beta + logit p2)`` close to ``target``
    (s the logistic function): ``steps`` damped Newton steps from the one-law solution.
    Any beta gives a valid Chernoff bound; this one makes it tight."""
    l1, l2 = math.log(p1) - math.log1p(-p1), math.log(p2) - math.log1p(-p2)
    tot = n1 + n2
    t = np.clip(target / np.maximum(tot, 1.0), 0.25 / np.maximum(tot, 1.0), 1.0 - 0.25 / np.maximum(tot, 1.0))
    pbar = (n1 * p1 + n2 * p2) / np.maximum(tot, 1.0)
    beta = np.log(t) - np.log1p(-t) - (np.log(pbar) - np.log1p(-pbar))
    for _ in range(steps):
        s1, s2 = expit(beta + l1), expit(beta + l2)
        f = n1 * s1 + n2 * s2 - target
        df = n1 * s1 * (1 - s1) + n2 * s2 * (1 - s2)
        beta = np.clip(beta - np.clip(f / np.maximum(df, 1e-300), -4.0, 4.0), -100.0, 100.0)
    out: np.ndarray = beta
    return out


def step_ratio_bounds(logdelta: np.ndarray, p1: float, p2: float) -> tuple[np.ndarray, np.ndarray]:
    """(log lo, log hi) per column: ``lo <= E_{r+1} / E_r <= hi`` for every r < n.

    With ``S`` the ``n - r - 1`` records of vertex 1 and ``r`` of vertex 2 that
    compositions r and r + 1 share, ``E_r = E[delta(S + B(p1))]`` and
    ``E_{r+1} = E[delta(S + B(p2))]`` (B a Bernoulli variable).  Writing
    ``delta(s + 1) = u(s) delta(s)`` with ``u(s)`` in ``[e^-L, e^L]`` (L the
    largest slope of log delta, :func:`~smoothdp_nb.core.smoothed.engines.schedule.log_slope`),
    ``E[delta(S + B(p))] = E[delta(S) (1 - p + p u(S))]``: the ratio is one of
    two sums of non-negative terms whose term ratios are
    ``f(u) = (1 - p2 + p2 u) / (1 - p1 + p1 u)``, so it lies between the
    smallest and largest ``f`` over u in ``[e^-L, e^L]`` -- at the ends, as f
    is monotone (a Moebius map).  Needs every delta > 0 (the caller checks);
    L is widened by the rounding of the differences, the results by ``_SLACK``.
    """
    E = logdelta.shape[1]
    lo, hi = np.empty(E), np.empty(E)
    for e in range(E):
        L = log_slope(logdelta[:, e : e + 1])
        L = L * (1 + 1e-12) + 4 * U * float(np.abs(logdelta[:, e]).max())
        ends = []
        for x in (-L, L):
            num = np.logaddexp(math.log1p(-p2), math.log(p2) + x)
            den = np.logaddexp(math.log1p(-p1), math.log(p1) + x)
            ends.append(float(num - den))
        lo[e] = min(ends) - _SLACK * (1 + L) - 1e-15
        hi[e] = max(ends) + _SLACK * (1 + L) + 1e-15
    return lo, hi


def _piece_bounds(logdelta: np.ndarray, p1: float, p2: float, rs: np.ndarray, pieces: int) -> np.ndarray:
    """Proven upper bounds on ``log E_r`` for r in ``rs``: (len(rs), E).

    Cut x = 0 .. n into pieces ``I_j = [l_j, u_j]``.  On ``I_j``,
    ``log delta(x) <= c_j + s_j (x - l_j)`` with ``s_j`` the secant slope and
    ``c_j = max over I_j of log delta(x) - s_j (x - l_j)``.  For ``g >= 0``,
    ``1{x in I_j} <= exp(g (x - l_j))`` and for ``g <= 0``,
    ``1{x in I_j} <= exp(g (x - u_j))``, so with ``b = s_j + g`` and ``X = X1 + X2``
    (Chernoff)::

        E[delta(X) 1{X in I_j}] <= exp(c_j - s_j l_j - g m + K_r(b)),

    ``m = l_j`` (g >= 0) or ``u_j`` (g <= 0), ``K_r`` the log moment generating
    function of X.  Any such g gives a bound; the one used puts the tilted mean
    of X at the nearest end of ``I_j`` when the mean tilted by ``s_j`` falls
    outside it (that is the minimising g), else g = 0.  Summing over pieces
    bounds ``E_r``.  Each piece's value is raised by ``_SLACK`` times the
    magnitudes it combines, far above the rounding of its few operations.
    """
    n = logdelta.shape[0] - 1
    lj, uj, s, c = _pieces(logdelta, pieces)
    return _chernoff_sums(n, lj, uj, s, c, p1, p2, rs)


def _pieces(logdelta: np.ndarray, pieces: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(l_j, u_j, s_j, c_j) of ``_piece_bounds``: about ``pieces`` equal pieces of x = 0 .. n."""
    n = logdelta.shape[0] - 1
    E = logdelta.shape[1]
    w = -(-(n + 1) // pieces)
    J = -(-(n + 1) // w)
    lj = np.arange(J) * w
    uj = np.minimum(lj + w - 1, n)
    span = (uj - lj).astype(float)
    s = np.where(span[:, None] > 0, (logdelta[uj] - logdelta[lj]) / np.where(span > 0, span, 1.0)[:, None], 0.0)
    off = np.arange(w, dtype=float)
    c = np.empty((J, E))
    pad = np.full(J * w, -np.inf)
    for e in range(E):  # one column at a time: O(n) temporaries
        pad[: n + 1] = logdelta[:, e]
        c[:, e] = (pad.reshape(J, w) - s[:, e : e + 1] * off[None, :]).max(axis=1)
    return lj, uj, s, c


def _chernoff_sums(
    n: int,
    lj: np.ndarray,
    uj: np.ndarray,
    s: np.ndarray,
    c: np.ndarray,
    p1: float,
    p2: float,
    rs: np.ndarray,
) -> np.ndarray:
    """The sums over pieces of ``_piece_bounds`` for compositions ``rs``: (len(rs), E)."""
    E = s.shape[1]
    n1 = (n - rs).astype(float)[:, None]
    n2 = rs.astype(float)[:, None]
    b_lo = tilt_to(n1, n2, p1, p2, lj.astype(float)[None, :])  # (G, J): tilted mean at l_j
    b_hi = tilt_to(n1, n2, p1, p2, uj.astype(float)[None, :])
    out = np.empty((rs.size, E))
    for e in range(E):
        se = s[:, e][None, :]
        up = se < b_lo  # the mean tilted by s_j lies below I_j: g = b_lo - s_j > 0, m = l_j
        down = se > b_hi  # above: g = b_hi - s_j < 0, m = u_j
        b = np.where(up, b_lo, np.where(down, b_hi, se))
        m = np.where(up, lj[None, :], np.where(down, uj[None, :], 0)).astype(float)
        g = b - se
        K = _log_mgf(n1, n2, p1, p2, b)
        base = c[:, e][None, :] - se * lj[None, :]
        val = base - g * m + K
        mag = np.abs(c[:, e])[None, :] + np.abs(se * lj[None, :]) + np.abs(g * m) + np.abs(K) + 1.0
        out[:, e] = logsumexp(val + _SLACK * mag, axis=1)
    return out + _SLACK * (1.0 + np.abs(out))


def composition_upper_bounds(logdelta: np.ndarray, p1: float, p2: float) -> np.ndarray:
    """Proven upper bounds on ``log E_r`` for every composition r = 0 .. n: (n + 1, E).

    Chernoff bounds on pieces (``_piece_bounds``) at up to 512 compositions
    r, then for every r the smallest of ``U_g + (r - g) log hi`` over grid
    points g <= r and ``U_g - (g - r) log lo`` over g >= r
    (:func:`step_ratio_bounds`: ``E_{g+k} <= hi^k E_g``, ``E_{g-k} <= E_g / lo^k``).
    Needs every delta > 0 and 0 < p1, p2 < 1.
    """
    n = logdelta.shape[0] - 1
    rs = np.unique(np.linspace(0, n, min(n + 1, _GRID)).round().astype(int))
    pieces = max(1, min(n + 1, 256))
    Ug = _piece_bounds(logdelta, p1, p2, rs, pieces)
    lo, hi = step_ratio_bounds(logdelta, p1, p2)
    r = np.arange(n + 1, dtype=float)
    out = np.empty((logdelta.shape[1], n + 1))  # column-major: each column's pass is contiguous
    line = np.empty(n + 1)
    for e in range(logdelta.shape[1]):  # one column at a time: O(n) temporaries
        line.fill(np.inf)
        line[rs] = Ug[:, e] - rs * hi[e]
        np.minimum.accumulate(line, out=line)
        np.add(line, r * hi[e], out=out[e])
        line.fill(np.inf)
        line[rs] = Ug[:, e] - rs * lo[e]
        np.minimum.accumulate(line[::-1], out=line[::-1])
        np.minimum(out[e], line + r * lo[e], out=out[e])
        # the two products and sums above round by a few u of their magnitudes
        out[e] += _SLACK * (1.0 + np.abs(out[e]))
    return out.T


def single_vertex_error(n: int, lw: np.ndarray, logdelta: np.ndarray) -> float:
    """Proven relative error of ``logsumexp(lw + logdelta)`` with ``lw`` the
    log-pmf of Bin(n, p) from :func:`~smoothdp_nb.core.numerics.lpmf.log_binom_pmf`:
    Loader's weights (``q = 1 - p`` rounded), then a log-sum-exp of n + 1 terms."""
    lmax = float(np.max(-lw[np.isfinite(lw)], initial=0.0))
    ldmax = float(np.max(np.abs(logdelta[np.isfinite(logdelta)]), initial=0.0))
    lse = 4 * U * (lmax + ldmax) + 2 * LIBM_REL * (1 + math.log(n + 1.0))
    return (float(lpmf_abs_error(lmax, n, 1)) + 3.03 * U * n + lse) * 1.01 + float(gamma(n + 8)) + 4 * LIBM_REL


def single_vertex_lower(logdelta: np.ndarray, p: float) -> np.ndarray:
    """A proven lower bound on ``log E[delta(Bin(n, p))]`` per column -- E_0 (p = p1) or E_n (p = p2).

    ``b + log sum_x exp(lw(x) + logdelta(x) - b)`` (b the largest term) over
    the x within ``sqrt(400 n) + L n p (1 - p)`` of ``n p`` (L the slope of
    log delta): the terms left out or that underflow only lower a sum of
    non-negative terms.  Each kept term carries
    Loader's weight error (:func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`,
    ``3.03 u n`` for the rounded q), the rounding of the two differences
    (``u`` of their magnitudes) and of the two ``exp`` (``LIBM_REL`` each) and
    their product; the dot product adds ``gamma_(n+1)``, the final log
    ``LIBM_REL`` of its magnitude.  Their sum is subtracted, outward.
    """
    n = logdelta.shape[0] - 1
    # a sum over any subset of the x is a lower bound: the x within sqrt(400 n) of
    # n p, and as far again as a slope L of log delta tilts the largest term (L n p q)
    t = math.sqrt(400.0 * n) + log_slope(logdelta) * n * p * (1.0 - p)
    x0, x1 = max(0, math.floor(n * p - t)), min(n, math.ceil(n * p + t))
    lw = lpmf.log_binom_pmf(np.arange(x0, x1 + 1, dtype=float), float(n), p)
    terms = lw[:, None] + logdelta[x0 : x1 + 1]
    top = terms.max(axis=0)
    with np.errstate(divide="ignore"):
        ldot = np.log(np.exp(terms - top[None, :]).sum(axis=0))
    a, b = 0.0, top
    lmax = float(np.max(-lw[np.isfinite(lw)], initial=0.0))
    ldmax = float(np.max(np.abs(logdelta), initial=0.0))
    err = (
        float(lpmf_abs_error(lmax, n, 1))
        + 3.03 * U * n
        + 2 * U * (lmax + ldmax)
        + float(log_rel(2 * LIBM_REL + 2 * U + float(gamma(n + 1))))
    )
    out: np.ndarray = ldot + a + b
    low: np.ndarray = out - err * 1.01 - LIBM_REL * np.abs(ldot) - 2 * U * (abs(a) + np.abs(b) + np.abs(out))
    return low


class PrunePlan(NamedTuple):
    """What :func:`prune_plan` proves, per epsilon column e: the compositions
    that can hold the largest ``E_r`` lie in ``0 .. stop[e]`` of the vertices
    (p1, p2), or of (p2, p1) when ``swapped[e]`` (composition r of the
    swapped pair is composition n - r of the original); every other
    composition has the proven upper bound ``upper[:, e]``, below the largest
    ``E_r``.  ``stop[e] = n`` (not swapped): nothing pruned in that column."""

    stop: np.ndarray
    swapped: np.ndarray
    upper: np.ndarray

    def groups(self) -> list[tuple[np.ndarray, bool, int | None]]:
        """The engine runs of this plan (:func:`engine_groups`)."""
        return engine_groups(self.stop, self.swapped, self.upper.shape[0] - 1)


def engine_groups(stop: np.ndarray, swapped: np.ndarray, n: int) -> list[tuple[np.ndarray, bool, int | None]]:
    """The engine runs, as (columns, swapped, stop or None for all n + 1): the
    columns that prune less than half the compositions in one run over all of
    them, the others by direction and by the binary order of magnitude of
    their stop (each run computes up to its largest stop)."""
    full = 2 * stop > n
    bits = np.array([int(v).bit_length() for v in stop])
    out: list[tuple[np.ndarray, bool, int | None]] = []
    if np.any(full):
        out.append((np.nonzero(full)[0], False, None))
    for w, k in sorted({(bool(w), int(k)) for w, k, f in zip(swapped, bits, full) if not f}):
        cols = np.nonzero(~full & (swapped == w) & (bits == k))[0]
        out.append((cols, w, int(stop[cols].max())))
    return out


def prune_plan(logdelta: np.ndarray, p1: float, p2: float) -> PrunePlan | None:
    """The compositions that can hold the largest ``E_r``, per column, or None (no certificate).

    A composition r is pruned in column e when its proven upper bound
    (:func:`composition_upper_bounds`) is below a proven lower bound of
    ``max(E_0, E_n)`` (:func:`single_vertex_lower`): then
    ``E_r < max(E_0, E_n) <= max over all r``, so every composition where
    the maximum is attained survives, and the maximum over the compositions
    the engine computes (and their lower bounds) is the maximum over all of
    them.  The engine runs one contiguous range holding every survivor,
    starting from whichever end (0, or n with the vertices swapped) makes it
    shorter.  None when some delta is 0 or a vertex is 0 or 1.
    """
    n = logdelta.shape[0] - 1
    if n < 2 or not (0.0 < p1 < 1.0 and 0.0 < p2 < 1.0) or not np.all(np.isfinite(logdelta)):
        return None
    low = np.maximum(single_vertex_lower(logdelta, p1), single_vertex_lower(logdelta, p2))
    upper = composition_upper_bounds(logdelta, p1, p2)
    E = logdelta.shape[1]
    a, b = np.zeros(E, dtype=int), np.zeros(E, dtype=int)
    for e in range(E):  # the first and last survivor (upper.T is contiguous per column)
        alive = np.flatnonzero(upper.T[e] >= low[e])
        a[e], b[e] = (alive[0], alive[-1]) if alive.size else (0, 0)
    swapped = n - a < b  # running down from n is shorter
    stop = np.where(swapped, n - a, b)
    return PrunePlan(stop.astype(int), swapped, upper)


def _alive_span(rs: np.ndarray, Ug: np.ndarray, lo: float, hi: float, n: int) -> tuple[int, int]:
    """First and last r in 0 .. n with ``upper(r) >= max(upper(0), upper(n)) - 1``, where
    ``upper(r) = min(min_{g <= r} (Ug_g - g hi) + r hi, min_{g >= r} (Ug_g - g lo) + r lo)``
    over the grid points g of ``rs`` (sorted, 0 and n included): between two grid points both
    terms are linear in r, so each gap's alive part is an interval found by arithmetic (no
    array of n + 1 values, whatever n)."""
    F = np.minimum.accumulate(Ug - rs * hi)  # prefix minima, at and before each grid point
    B = np.minimum.accumulate((Ug - rs * lo)[::-1])[::-1]  # suffix minima, at and after
    at = np.minimum(F + rs * hi, B + rs * lo)  # upper at the grid points
    thr = max(at[0], at[-1]) - 1.0
    # the open gaps (g_k, g_{k+1}): F from the left point, B from the right one
    a0, b0 = rs[:-1] + 1.0, rs[1:] - 1.0
    lo_r, hi_r = a0.copy(), b0.copy()
    for const, slope in ((F[:-1], hi), (B[1:], lo)):  # (a tiny slope sends a bound to +-inf: no limit)
        with np.errstate(over="ignore", divide="ignore"):
            bound = (thr - const) / slope if slope != 0 else const
        if slope > 0:
            lo_r = np.maximum(lo_r, np.ceil(bound))
        elif slope < 0:
            hi_r = np.minimum(hi_r, np.floor(bound))
        else:
            hi_r = np.where(const >= thr, hi_r, -1.0)
    firsts = np.r_[rs[at >= thr], lo_r[lo_r <= hi_r]]
    lasts = np.r_[rs[at >= thr], hi_r[lo_r <= hi_r]]
    return int(firsts.min()), int(lasts.max())


def estimated_stops(
    x: np.ndarray, logdelta: np.ndarray, n: int, p1: float, p2: float, slope: float
) -> tuple[np.ndarray, np.ndarray]:
    """(stop, swapped) per column that :func:`prune_plan` is expected to find,
    from log delta at a sample of histograms only (the cost model's
    :func:`~smoothdp_nb.core.smoothed.engines.cost.profile_sample`, before any work).

    An estimate, not a certificate: the pieces of ``_piece_bounds`` are the
    intervals between sample points ``x`` (sorted, 0 and n included) with the
    secant through their ends, the step ratio comes from the sample's
    ``slope``, and the lower bound of the largest expectation is the larger
    of the end bounds less one nat (the Chernoff bounds are a few tenths of a
    nat to two nats above the values on the published cases).
    """
    E = logdelta.shape[1]
    if n < 2 or not (0.0 < p1 < 1.0 and 0.0 < p2 < 1.0) or not np.all(np.isfinite(logdelta)):
        return np.full(E, n), np.zeros(E, dtype=bool)
    # pieces of about four sample intervals: the secant through their ends, c_j the
    # largest sampled value above it (the Chernoff sums cost pieces x grid points)
    ends = np.unique(np.r_[np.arange(0, x.size - 1, 4), x.size - 1])
    lj = x[ends[:-1]].astype(np.int64)
    uj = np.maximum(lj, x[ends[1:]].astype(np.int64) - 1)
    uj[-1] = n
    span = (x[ends[1:]] - x[ends[:-1]]).astype(float)
    s = (logdelta[ends[1:]] - logdelta[ends[:-1]]) / np.maximum(span, 1.0)[:, None]
    c = np.full(s.shape, -np.inf)
    for k in range(5):  # the sampled points of each piece (the last one is the next piece's first)
        i = np.minimum(ends[:-1] + k, ends[1:])
        c = np.maximum(c, logdelta[i] - s * (x[i] - lj)[:, None].astype(float))
    rs = np.unique(np.linspace(0, n, min(n + 1, _GRID)).round().astype(int))
    Ug = _chernoff_sums(n, lj, uj, s, c, p1, p2, rs)
    steps = [
        float(np.logaddexp(math.log1p(-p2), math.log(p2) + u) - np.logaddexp(math.log1p(-p1), math.log(p1) + u))
        for u in (-slope, slope)
    ]
    lo, hi = min(steps), max(steps)
    stop, swapped = np.full(E, n), np.zeros(E, dtype=bool)
    for e in range(E):
        a, b = _alive_span(rs, Ug[:, e], lo, hi, n)
        swapped[e] = n - a < b
        stop[e] = n - a if swapped[e] else b
    return stop, swapped
