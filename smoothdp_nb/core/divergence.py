"""Hockey-stick divergences, in log space.

This is the one place that evaluates

    d_eps(P, Q) = max_S P(S) - e^eps Q(S) = sum_o max(0, P(o) - e^eps Q(o))

(Definition 2 of *Smoothed Differential Privacy*).  Two kernels:

* :func:`log_hockey_stick` for two explicit finite distributions given by
  their log-pmfs (small cases, brute force, the noisy mechanism);
* :func:`log_monotone_tail_sum` for the large cases, where the likelihood
  ratio is monotone in a scalar count K, so the positive part of the
  divergence is a *tail* ``K >= k0`` of a discrete log-concave distribution.
  Only a window of that tail is evaluated; the neglected part is bounded by a
  geometric series (log-concavity makes consecutive pmf ratios monotone), and
  the window is widened until that bound is below 2^-60 of the sum.

All results are natural logarithms (``-inf`` for an exact zero), so values far
below the float64 range (1e-5000) are representable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import logsumexp

__all__ = ["log1mexp", "log_hockey_stick", "log_monotone_tail_sum", "log_pmf_on_support", "LogConcaveCounts"]

# The window is widened until the neglected tail is below this fraction of the sum.
_TAIL_REL_TOL = 2.0**-60


def log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate for x near 0 and x << 0.

    (Maechler's two-branch rule: ``log(-expm1(x))`` near 0, ``log1p(-exp(x))``
    further out.)  ``x = 0`` gives ``-inf``; ``x = -inf`` gives 0.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_hockey_stick(logp: np.ndarray, logq: np.ndarray, eps) -> np.ndarray:
    """Log of ``sum_o max(0, P(o) - e^eps Q(o))`` for explicit distributions.

    Parameters
    ----------
    logp, logq : array_like, shape (..., K)
        Log-probabilities over a common finite output space (last axis);
        ``-inf`` marks outputs outside a distribution's support.
    eps : float or array_like of shape (E,)
        Privacy parameter(s).

    Returns
    -------
    ndarray of shape ``logp.shape[:-1]`` (scalar eps) or ``(..., E)``.
        Each term ``P(o) (1 - e^(eps - log P(o)/Q(o)))`` is positive on the set
        where ``P > e^eps Q``, so the sum has no cancellation.
    """
    logp = np.asarray(logp, dtype=float)
    logq = np.asarray(logq, dtype=float)
    eps_arr = np.asarray(eps, dtype=float)
    scalar = eps_arr.ndim == 0
    e = np.atleast_1d(eps_arr)
    lp = logp[..., None, :]
    lq = logq[..., None, :]
    with np.errstate(invalid="ignore"):
        llr = lp - lq  # +inf where Q = 0 < P; nan where both are 0
    x = e[:, None] - llr
    x = np.where(np.isnan(x), 0.0, x)
    terms = np.where(x < 0, lp + log1mexp(np.minimum(x, 0.0)), -np.inf)
    out = logsumexp(terms, axis=-1)
    return out[..., 0] if scalar else out


@dataclass(frozen=True)
class LogConcaveCounts:
    """A batch of discrete log-concave count distributions on integer ranges.

    ``logpmf(rows, k)`` evaluates log-probabilities of the distributions with
    batch indices ``rows`` (shape (B', 1)) at integers ``k`` (shape (B', L));
    ``log_ratio(rows, k)`` returns ``log P(k+1)/P(k)`` (used for the geometric
    tail bound); ``lo``/``hi`` are the support bounds, ``mode`` a
    mode and ``sd`` the standard deviation, each of shape (B,).
    """

    logpmf: Callable[[np.ndarray, np.ndarray], np.ndarray]
    log_ratio: Callable[[np.ndarray, np.ndarray], np.ndarray]
    lo: np.ndarray
    hi: np.ndarray
    mode: np.ndarray
    sd: np.ndarray


def log_monotone_tail_sum(
    dist: LogConcaveCounts,
    start: np.ndarray,
    stop: np.ndarray,
    log_factor: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """``log sum_{start <= k <= stop} P(k) f(k)`` for a batch, with ``0 <= f <= 1``.

    Only a window around the part of ``[start, stop]`` that carries mass is
    evaluated.  For a log-concave P, once past the mode the ratio
    ``rho = P(k+1)/P(k)`` is non-increasing, so everything beyond a window end
    ``e`` is at most ``P(e) rho/(1 - rho)`` (and symmetrically on the left);
    since ``f <= 1`` the same bounds the neglected terms.  Rows whose bound is
    not below ``2^-60`` of their window sum are recomputed with a wider window.

    Parameters
    ----------
    dist : LogConcaveCounts
        The batch of distributions (B rows).
    start, stop : int arrays of shape (B,)
        Inclusive summation range per row (empty when ``start > stop``).
    log_factor : callable ``(row_index, k) -> log f(k)``
        ``row_index`` has shape (B', 1) and ``k`` shape (B', L).

    Returns
    -------
    ndarray of shape (B,), natural logs (``-inf`` for an empty or zero sum).
    """
    start = np.maximum(np.asarray(start, dtype=np.int64), dist.lo)
    stop = np.minimum(np.asarray(stop, dtype=np.int64), dist.hi)
    B = start.shape[0]
    out = np.full(B, -np.inf)
    todo = np.nonzero(start <= stop)[0]
    width = (np.ceil(10.0 * dist.sd) + 16).astype(np.int64)
    while todo.size:
        s, t = start[todo], stop[todo]
        mode = np.clip(dist.mode[todo], s, t)
        w = width[todo]
        # Window: around the mode if the range contains it, else from the end
        # nearest to the mode outward.
        ws = np.maximum(s, mode - w)
        we = np.minimum(t, mode + w)
        L = int((we - ws).max()) + 1
        k = ws[:, None] + np.arange(L)[None, :]
        valid = k <= we[:, None]
        kk = np.where(valid, k, ws[:, None])
        rows = todo[:, None]
        # One accurate log-pmf at the window start, then the exact term
        # ratios accumulated: far cheaper than evaluating every term afresh.
        lt = _log_terms_from(dist, rows, kk, valid)
        lt = lt + np.where(valid, log_factor(rows, kk), 0.0)
        total = logsumexp(lt, axis=1)
        # Proven bounds on what lies outside the window (only where truncated).
        bound = np.full(todo.size, -np.inf)
        right = we < t
        if np.any(right):
            r = todo[right]
            e = we[right]
            lpe = dist.logpmf(r[:, None], e[:, None])[:, 0]
            lrho = dist.log_ratio(r[:, None], e[:, None])[:, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                b = np.where(lrho < 0, lpe + lrho - np.log(-np.expm1(lrho)), np.inf)
            bound[right] = b
        left = ws > s
        if np.any(left):
            r = todo[left]
            e = ws[left]
            lpe = dist.logpmf(r[:, None], e[:, None])[:, 0]
            # log P(e-1)/P(e) = -log_ratio(e-1)
            lrho = -dist.log_ratio(r[:, None], (e - 1)[:, None])[:, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                b = np.where(lrho < 0, lpe + lrho - np.log(-np.expm1(lrho)), np.inf)
            bound[left] = np.logaddexp(bound[left], b)
        with np.errstate(invalid="ignore"):
            ok = (bound - total <= np.log(_TAIL_REL_TOL)) | (bound == -np.inf)
        out[todo[ok]] = total[ok]
        todo = todo[~ok]
        width[todo] *= 4
    return out


def _log_terms_from(dist: LogConcaveCounts, rows: np.ndarray, k: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """log P(k) on a row-wise contiguous grid: one accurate value at the first
    column, then the exact term ratios accumulated (rounding ~1e-13 relative)."""
    first = dist.logpmf(rows, k[:, :1])
    steps = dist.log_ratio(rows, k[:, :-1])
    with np.errstate(invalid="ignore"):
        lt = np.concatenate([first, first + np.cumsum(steps, axis=1)], axis=1)
    return np.where(valid & ~np.isnan(lt), lt, -np.inf)


def log_pmf_on_support(dist: LogConcaveCounts, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole support of the given rows: ``(k, log P(k), valid)``, each (B', L).

    For distributions with a short support (e.g. sampling 99.8 % of the records
    leaves 0.2 % n + 1 possible counts) evaluating everything once and
    reusing it for every eps is cheaper than windowed tails per eps.
    """
    lo, hi = dist.lo[rows], dist.hi[rows]
    L = int((hi - lo).max()) + 1
    k = lo[:, None] + np.arange(L)[None, :]
    valid = k <= hi[:, None]
    kk = np.where(valid, k, lo[:, None])
    return kk, _log_terms_from(dist, rows[:, None], kk, valid), valid
