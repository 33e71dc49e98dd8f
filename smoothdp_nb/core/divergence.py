"""Hockey-stick divergences, in log space.

This is the one place that evaluates

    d_eps(P, Q) = max_S P(S) - e^epsilon Q(S) = sum_o max(0, P(o) - e^epsilon Q(o))

(Definition 2 of *Smoothed Differential Privacy*).  Two kernels:

* :func:`log_hockey_stick` for two explicit finite distributions given by
  their log-pmfs (small cases, brute force, the noisy mechanism);
* :func:`log_monotone_tail_sum` for the large cases, where the likelihood
  ratio is monotone in a scalar count K, so the positive part of the
  divergence is a *tail* ``K >= k0`` of a discrete log-concave distribution.
  Only a window of that tail is evaluated, relative to its largest term
  (products of exact term ratios in float64, so no term needs a log or an
  exponential, and nothing can overflow); the neglected part is bounded by a
  geometric series (log-concavity makes consecutive pmf ratios monotone), and
  the window is widened until that bound is below 2^-60 of the sum.

All results are natural logarithms (``-inf`` for an exact zero), so values far
below the float64 range (1e-5000) are representable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from ._types import FloatArray, IntArray

#: ``f(row_index, k)``: a value per (row, count) of a batch of count laws; ``row_index``
#: of shape (B', 1), ``k`` of shape (B', L) (counts: int64, or floats holding integers), result (B', L)
RowFunction = Callable[[IntArray, np.ndarray], FloatArray]

__all__ = ["log1mexp", "log_hockey_stick", "log_monotone_tail_sum", "LogConcaveCounts"]

# The window is widened until the neglected tail is below this fraction of the sum.
_TAIL_REL_TOL = 2.0**-60
_LOG_TOL_INV = 60 * math.log(2.0)
# cells per chunk of rows (32768 float64 = 256 kB per temporary array)
_CHUNK_CELLS = 32768


def log1mexp(x: npt.ArrayLike) -> FloatArray:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate for x near 0 and x << 0.

    (Maechler's two-branch rule: ``log(-expm1(x))`` near 0, ``log1p(-exp(x))``
    further out.)  ``x = 0`` gives ``-inf``; ``x = -inf`` gives 0.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
    return out


def log_hockey_stick(logp: npt.ArrayLike, logq: npt.ArrayLike, epsilon: npt.ArrayLike) -> FloatArray:
    """Log of ``sum_o max(0, P(o) - e^epsilon Q(o))`` for explicit distributions.

    Parameters
    ----------
    logp, logq : array_like, shape (..., K)
        Log-probabilities over a common finite output space (last axis);
        ``-inf`` marks outputs outside a distribution's support.
    epsilon : float or array_like of shape (E,)
        Privacy parameter(s).

    Returns
    -------
    ndarray of shape ``logp.shape[:-1]`` (scalar epsilon) or ``(..., E)``.
        Each term ``P(o) (1 - e^(epsilon - log P(o)/Q(o)))`` is positive on the set
        where ``P > e^epsilon Q``, so the sum has no cancellation.
    """
    logp = np.asarray(logp, dtype=float)
    logq = np.asarray(logq, dtype=float)
    eps_arr = np.asarray(epsilon, dtype=float)
    scalar = eps_arr.ndim == 0
    e = np.atleast_1d(eps_arr)
    lp = logp[..., None, :]
    lq = logq[..., None, :]
    with np.errstate(invalid="ignore"):
        llr = lp - lq  # +inf where Q = 0 < P; nan where both are 0
    x = e[:, None] - llr
    x = np.where(np.isnan(x), 0.0, x)
    terms = np.where(x < 0, lp + log1mexp(np.minimum(x, 0.0)), -np.inf)
    out: FloatArray = logsumexp(terms, axis=-1)  # scipy is untyped
    return out[..., 0] if scalar else out


@dataclass(frozen=True)
class LogConcaveCounts:
    """A batch of discrete log-concave count distributions on integer ranges.

    ``logpmf(rows, k)`` evaluates log-probabilities of the distributions with
    batch indices ``rows`` (shape (B', 1)) at integers ``k`` (shape (B', L));
    ``ratio(rows, k)`` returns the term ratio ``P(k+1)/P(k)`` for
    ``lo <= k < hi`` (a rational function of k for the binomial and
    hypergeometric laws, so it is cheap and exact to rounding);
    ``lo``/``hi`` are the support bounds, ``mode`` a mode and ``sd`` the
    standard deviation, each of shape (B,).
    """

    logpmf: RowFunction
    ratio: RowFunction
    lo: IntArray
    hi: IntArray
    mode: IntArray
    sd: FloatArray


def log_monotone_tail_sum(
    dist: LogConcaveCounts,
    start: IntArray,
    stop: IntArray,
    factor: RowFunction,
) -> FloatArray:
    """``log sum_{start <= k <= stop} P(k) f(k)`` for a batch, with ``0 <= f <= 1``.

    The terms are evaluated in a window around the range's largest term (its
    *anchor*: the mode, clipped into the range) as ``P(anchor)`` -- one
    accurate log-pmf -- times products of exact term ratios, so no term needs
    a logarithm or an exponential.  For a log-concave P the ratio
    ``rho = P(k+1)/P(k)`` is non-increasing, so everything beyond a window end
    ``e`` past the mode is at most ``P(e) rho/(1 - rho)`` (and symmetrically on
    the left); since ``f <= 1`` the same bounds the neglected terms.  The
    first window is where a Gaussian with the law's standard deviation would
    fall below 2^-60 of the anchor; rows whose *proven* bound is not below
    ``2^-60`` of their window sum are recomputed with a window four times as
    wide (ultimately the whole range, where nothing is neglected).

    Parameters
    ----------
    dist : LogConcaveCounts
        The batch of distributions (B rows).
    start, stop : int arrays of shape (B,)
        Inclusive summation range per row (empty when ``start > stop``).
    factor : callable ``(row_index, k) -> f(k)``
        Linear values in [0, 1]; ``row_index`` has shape (B', 1) and ``k``
        shape (B', L) (floats holding integers).  Must be finite on the whole
        support: padding positions repeat a window's end.

    Returns
    -------
    ndarray of shape (B,), natural logs (``-inf`` for an empty or zero sum).
    """
    start = np.maximum(np.asarray(start, dtype=np.int64), dist.lo)
    stop = np.minimum(np.asarray(stop, dtype=np.int64), dist.hi)
    B = start.shape[0]
    out = np.full(B, -np.inf)
    todo = np.nonzero(start <= stop)[0]
    anchor = np.clip(dist.mode, start, stop)
    # Gaussian guess: exp(-((k-mode)^2 - d^2) / (2 sd^2)) < 2^-60 beyond this.
    d = np.abs(anchor - dist.mode).astype(float)
    # (+10: room for a factor f as small as e^-10 at the anchor, typical at a threshold)
    width = (np.ceil(np.sqrt(d * d + 2 * (_LOG_TOL_INV + 10) * dist.sd**2) - d) + 8).astype(np.int64)
    log_anchor = np.full(B, -np.inf)
    if todo.size:  # the one accurate log-pmf per row, whatever the window
        log_anchor[todo] = dist.logpmf(todo[:, None], anchor[todo][:, None])[:, 0]
    while todo.size:
        # Rows sorted by window length and taken in chunks: little padding,
        # and every temporary stays small (large temporaries come as fresh
        # pages from the OS each time, which costs more than the arithmetic).
        s, t, a, w = start[todo], stop[todo], anchor[todo], width[todo]
        ws = np.maximum(s, a - w)
        we = np.minimum(t, a + w)
        order = np.argsort(we - ws, kind="stable")
        todo, s, t, a, ws, we = (x[order] for x in (todo, s, t, a, ws, we))
        total = np.empty(todo.size)
        bound = np.empty(todo.size)
        grow = np.empty(todo.size)
        cells = we - ws + 1  # non-decreasing
        i = 0
        while i < todo.size:
            # the most rows whose padded block (rows x longest window) fits
            j = i + max(
                1, int(np.searchsorted(np.arange(1, todo.size - i + 1) * cells[i:], _CHUNK_CELLS, side="right"))
            )
            c = slice(i, j)
            total[c], bound[c], grow[c] = _window_sum(dist, todo[c], s[c], t[c], a[c], ws[c], we[c], factor)
            i = j
        ok = (bound <= _TAIL_REL_TOL * total) | ((ws <= s) & (we >= t))
        done = todo[ok]
        with np.errstate(divide="ignore"):
            out[done] = log_anchor[done] + np.log(total[ok])
        todo, grow = todo[~ok], grow[~ok]
        # Widen by what the geometric decay at the window's end says is
        # missing (an upper bound, as the ratio only decreases further out);
        # fall back to a fourfold window where that estimate is unavailable.
        width[todo] = np.where(np.isfinite(grow), width[todo] + grow + 2, width[todo] * 4).astype(np.int64)
    return out


def _window_sum(
    dist: LogConcaveCounts,
    todo: IntArray,
    s: IntArray,
    t: IntArray,
    a: IntArray,
    ws: IntArray,
    we: IntArray,
    factor: RowFunction,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """For rows ``todo``: (sum of P(k) f(k) / P(a) over the window [ws, we],
    proven bound on the same sum over [s, t] outside the window, how many
    more steps on each side make that bound small enough (inf if unknown))."""
    rows = todo[:, None]
    af = a.astype(float)[:, None]  # float grids: int/float mixes convert on every operation
    total = factor(rows, af)[:, 0]
    bound = np.zeros(todo.size)
    side_bounds = []
    for end, outer, side in ((we, t, 1), (ws, s, -1)):
        steps = side * (end - a)  # terms on this side of the anchor, per row
        rel_end = np.ones(todo.size)  # P(end)/P(a)
        L = int(steps.max(initial=0))
        if L:
            # k = a, a +- 1, ... clipped at the window's end: P(k)/P(a) is a
            # product of exact term ratios (each value <= 1: a is the largest
            # term), and a step is taken only where the clipped grid still
            # moves, so the padding of short rows is an exact 0.
            grid = af + side * np.arange(L + 1, dtype=float)[None, :]
            grid = np.minimum(grid, end[:, None]) if side > 0 else np.maximum(grid, end[:, None])
            here, nxt = grid[:, :-1], grid[:, 1:]
            # (np.where, not a product: where the grid stands still the ratio
            # may be 0 or infinite, e.g. at the end of a degenerate law)
            with np.errstate(divide="ignore", invalid="ignore"):
                if side > 0:
                    step = np.where(nxt > here, dist.ratio(rows, here), 0.0)  # P(k+1)/P(k)
                else:
                    step = np.where(nxt < here, 1.0 / dist.ratio(rows, nxt), 0.0)  # P(k-1)/P(k)
            rel = np.cumprod(step, axis=1)
            total = total + (rel * factor(rows, nxt)).sum(axis=1)
            moved = steps > 0
            rel_end[moved] = rel[np.nonzero(moved)[0], steps[moved] - 1]
        # Geometric bound on the terms beyond the window's end (log-concavity:
        # the ratio only decreases away from the mode).  A relative pmf that
        # underflowed to 0 is bounded by the smallest subnormal, plus a cushion
        # for rounding in the subnormal range.
        cut = end != outer
        b = np.zeros(todo.size)
        rho = np.zeros(todo.size)
        if np.any(cut):
            e = end[cut][:, None].astype(float)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = dist.ratio(rows[cut], e)[:, 0] if side > 0 else 1.0 / dist.ratio(rows[cut], e - 1.0)[:, 0]
                b[cut] = np.where(r < 1, (rel_end[cut] + 1e-320) * r / (1 - r), np.inf)
            rho[cut] = r
        bound += b
        side_bounds.append((b, rho))
    # steps m with rho^m * b <= tol * total / 2 on each side
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        grow = np.zeros(todo.size)
        for b, rho in side_bounds:
            need = np.log(_TAIL_REL_TOL * total / (2 * b)) / np.log(rho)
            m = np.where(
                b == 0, 0.0, np.where((rho > 0) & (rho < 1) & (total > 0), np.ceil(np.maximum(need, 0.0)), np.inf)
            )
            grow = np.maximum(grow, m)
    return total, bound, grow
