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

Certified versions (:func:`log_hockey_stick_enclosure`,
:func:`log_monotone_tail_sum_enclosure`) return a
:class:`~smoothdp_nb.core.numerics.enclosures.LogEnclosure`: the same float
computation plus a proven bound on its rounding error (the error model of
:mod:`smoothdp_nb.core.numerics.enclosures`), added outward.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.double_double import two_sum
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, U, gamma, lpmf_abs_error, next_down, next_up

#: ``f(row_index, k)``: a value per (row, count) of a batch of count laws; ``row_index``
#: of shape (B', 1), ``k`` of shape (B', L) (counts: int64, or floats holding integers), result (B', L)
RowFunction = Callable[[IntArray, np.ndarray], FloatArray]
#: ``f(row_index, k, want)``: a log-pmf per (row, count) and, where ``want(log-pmf)``
#: holds, a proven bound on its error (``+inf`` elsewhere)
BoundedRowFunction = Callable[
    [IntArray, np.ndarray, Callable[[FloatArray], npt.NDArray[np.bool_]]], tuple[FloatArray, FloatArray]
]
#: ``f(row_index, k, want)``: ``(value, lo, error)``, a log-pmf per (row, count) and, where
#: ``want(value)`` holds, a proven bound on ``|value + lo - log P(k)|`` (``+inf`` elsewhere, lo = 0)
DoubleWordRowFunction = Callable[
    [IntArray, np.ndarray, Callable[[FloatArray], npt.NDArray[np.bool_]]], tuple[FloatArray, FloatArray, FloatArray]
]

__all__ = [
    "LogConcaveCounts",
    "RUNNING_ERROR_FROM",
    "log1mexp",
    "log_hockey_stick",
    "log_hockey_stick_enclosure",
    "log_divergence_terms_enclosure",
    "log_monotone_tail_sum",
    "log_monotone_tail_sum_enclosure",
]

# The window is widened until the neglected tail is below this fraction of the sum.
_TAIL_REL_TOL = 2.0**-60
_LOG_TOL_INV = 60 * math.log(2.0)
#: a-priori log-pmf error bound (absolute, natural log) above which the tail sums
#: also compute the running bound of ``LogConcaveCounts.logpmf_error``: the
#: a-priori bound then widens an enclosure by at most ~2e-10 (upper/lower - 1)
RUNNING_ERROR_FROM = 1e-10
# cells per chunk of rows (32768 float64 = 256 kB per temporary array)
_CHUNK_CELLS = 32768


def log1mexp(x: npt.ArrayLike) -> FloatArray:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate for x near 0 and x << 0.

    (Maechler's two-branch rule: ``log(-expm1(x))`` near 0, ``log1p(-exp(x))``
    further out.)  ``x = 0`` gives ``-inf``; ``x = -inf`` gives 0.
    """
    x = np.asarray(x, dtype=float)
    near = x > -0.6931471805599453
    out: FloatArray = np.empty(x.shape)
    # each branch only where it applies (np.where would evaluate both everywhere)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        far = ~near
        out[far] = np.log1p(-np.exp(x[far]))
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


def log_hockey_stick_enclosure(
    logp: npt.ArrayLike,
    logq: npt.ArrayLike,
    epsilon: npt.ArrayLike,
    err_p: npt.ArrayLike = 0.0,
    err_q: npt.ArrayLike = 0.0,
) -> LogEnclosure:
    """Proven enclosure of ``log sum_o max(0, P(o) - e^epsilon Q(o))``.

    ``logp``, ``logq`` and ``epsilon`` as in :func:`log_hockey_stick`;
    ``err_p``, ``err_q`` (broadcasting with ``logp``/``logq``) bound the absolute
    errors of the given log-probabilities (0: they are the exact logs).  The
    log-likelihood ratio ``log P - log Q`` then carries ``err_p + err_q`` and
    the subtraction's ``u`` of its size; see :func:`log_divergence_terms_enclosure`
    for the argument.

    Returns
    -------
    LogEnclosure with arrays of the shape :func:`log_hockey_stick` returns.
    """
    logp = np.asarray(logp, dtype=float)
    logq = np.asarray(logq, dtype=float)
    ep = np.asarray(err_p, dtype=float)
    eq = np.asarray(err_q, dtype=float)
    logp, logq, ep, eq = np.broadcast_arrays(logp, logq, ep, eq)
    with np.errstate(invalid="ignore"):
        llr = logp - logq  # +inf where Q = 0 < P; nan where both are 0
    err_llr = ep + eq + U * np.where(np.isfinite(llr), np.abs(llr), 0.0)
    return log_divergence_terms_enclosure(logp, ep, llr, err_llr, epsilon)


def log_divergence_terms_enclosure(
    logp: npt.ArrayLike,
    err_p: npt.ArrayLike,
    llr: npt.ArrayLike,
    err_llr: npt.ArrayLike,
    epsilon: npt.ArrayLike,
) -> LogEnclosure:
    """Proven enclosure of ``log sum_o P(o) max(0, 1 - e^(epsilon - llr(o)))`` over the last axis.

    ``logp`` (log P, error at most ``err_p``) and ``llr`` (the log-likelihood
    ratio log P/Q, error at most ``err_llr``; ``+inf`` where Q = 0 < P, nan
    where both are 0) broadcast together; ``epsilon`` a float or 1-D array
    (then a last-but-one axis of length E is added to the result).

    The argument.  Each term ``P(o) (1 - e^x)``, ``x = epsilon - llr(o)``, is
    non-negative where x < 0 and increasing in ``log P`` and decreasing in
    x.  The computed x is off by at most ``err_llr + u |x|`` (one correctly
    rounded subtraction of an input off by err_llr; an exact 0 when the two
    floats are equal), and the shift by ``slack = err_llr + 2u (|x| + epsilon)``
    is itself rounded by at most the remaining ``u |x|``, so shifting
    ``log P`` up by ``err_p`` and x down by that amount bounds every term
    from above, and the opposite shifts from below (a term whose shifted x is
    >= 0 contributes 0 to the lower bound, which stays a lower bound as every
    term is >= 0).  ``log1mexp`` (log of ``-expm1`` or of ``log1p(-exp)``) has
    an absolute error at most ``2 LIBM_REL (1 + |result|)``; the log-sum-exp
    of K terms at most ``4u max|term| + 2 LIBM_REL (1 + log K) + gamma_K``
    (each shifted exponential, the sum of K positive terms, its log and the
    final addition; :mod:`~smoothdp_nb.core.numerics.enclosures`).  Both error bounds
    are added outward.
    """
    logp = np.asarray(logp, dtype=float)
    llr = np.asarray(llr, dtype=float)
    ep = np.asarray(err_p, dtype=float)
    el = np.asarray(err_llr, dtype=float)
    logp, llr, ep, el = np.broadcast_arrays(logp, llr, ep, el)
    eps_arr = np.asarray(epsilon, dtype=float)
    scalar = eps_arr.ndim == 0
    e = np.atleast_1d(eps_arr)
    K = logp.shape[-1]
    lp = logp[..., None, :]
    lr = llr[..., None, :]
    with np.errstate(invalid="ignore"):
        x = e[:, None] - lr
        slack = el[..., None, :] + 2.0 * U * (np.abs(x) + e[:, None])
    x = np.where(np.isnan(x), 0.0, x)  # both probabilities 0: no term
    slack = np.where(np.isfinite(slack), slack, 0.0)  # x = -inf (Q = 0 < P) is exact
    live = np.isfinite(lp)
    lse_err = 2.0 * LIBM_REL * (1.0 + math.log(max(K, 1))) + float(gamma(K))
    epx = ep[..., None, :]

    def bound(sign: float) -> FloatArray:
        # (slack holds 2u |x|: one u for the subtraction that made x, one for this shift)
        xs = x - slack if sign > 0 else x + slack
        lm = log1mexp(np.minimum(xs, 0.0))
        with np.errstate(invalid="ignore"):
            lm = np.where(np.isfinite(lm), lm + sign * 2.0 * LIBM_REL * (1.0 + np.abs(lm)), lm)
            terms = np.where((xs < 0) & live, lp + sign * epx + lm, -np.inf)
        top = np.max(terms, axis=-1, initial=-np.inf)
        # the log-sum-exp of the argument, written out (scipy's logsumexp costs more in
        # per-call overhead than in arithmetic at these sizes)
        ftop = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            total: FloatArray = np.log(np.exp(terms - ftop[..., None]).sum(axis=-1)) + ftop
        err = 4.0 * U * np.abs(np.where(np.isfinite(top), top, 0.0)) + lse_err
        with np.errstate(invalid="ignore"):
            out: FloatArray = next_up(total + err) if sign > 0 else next_down(total - err)
        return np.where(np.isneginf(total), -np.inf, out)

    lo, hi = bound(-1.0), bound(1.0)
    if scalar:
        lo, hi = lo[..., 0], hi[..., 0]
    return LogEnclosure(lo, hi)


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
    #: for the error bounds: the largest count n of the laws (one for all rows, or
    #: one per row, shape (B,)), how many Loader binomial log-pmfs one ``logpmf``
    #: value combines (1 binomial, 3 hypergeometric) and how many roundings one
    #: ``ratio`` value takes
    size: float | FloatArray = 1.0
    pmf_factors: int = 3
    ratio_roundings: int = 6
    #: a proven bound on the absolute error of ``logpmf`` at the same arguments
    #: (a running bound from the terms it sums) but for the additions that combine
    #: its ``pmf_factors`` factors; None: the a-priori bound of
    #: :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`
    logpmf_error: RowFunction | None = None
    #: ``(rows, k, want) -> (logpmf, error)``: ``logpmf`` and, where ``want(logpmf)``
    #: holds, ``logpmf_error`` (``+inf`` elsewhere) from one pass over the arguments;
    #: None: the two functions are called in turn
    logpmf_with_error: BoundedRowFunction | None = None
    #: ``(rows, k, want) -> (logpmf, lo, error)``: where ``want(logpmf)`` holds, the log-pmf as a
    #: double-word number ``logpmf + lo`` and a proven bound on its *whole* error (the additions
    #: that combine its factors included); preferred to ``logpmf_with_error`` when given, so the
    #: anchor of a deep tail is known far below one ulp of its float64 value
    logpmf_dd: DoubleWordRowFunction | None = None


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
    log_anchor, total, _, _, _, _, _ = _tail_sums(dist, start, stop, factor)
    with np.errstate(divide="ignore"):
        out: FloatArray = log_anchor + np.log(total)
    return out


def log_monotone_tail_sum_enclosure(
    dist: LogConcaveCounts,
    start: IntArray,
    stop: IntArray,
    factor: RowFunction,
    factor_error: npt.ArrayLike = 0.0,
    factor_rel_error: float = 0.0,
) -> LogEnclosure:
    """Proven enclosure of the sum of :func:`log_monotone_tail_sum`.

    ``factor_rel_error``: a further error of each factor relative to its own
    value (added as that fraction of the sum).

    ``factor_error`` (scalar or per row, shape (B,)) bounds the absolute error
    of each computed ``f(k)`` against the exact factor.  The factor may return
    values below 0 (unclipped), which the sum takes as 0: a term whose
    computed factor is at most ``-factor_error`` is then provably 0 and adds
    nothing to the error bound either.

    The argument.  The computed sum is ``P(a) W`` with ``a`` the anchor.
    ``log P(a)`` has the proven error of
    :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error` (a-priori, from the
    value and n alone) and, where that bound exceeds
    :data:`RUNNING_ERROR_FROM` (deep tails, whose log-pmf is large) and
    ``dist.logpmf_error`` is given, the smaller of it and that running bound
    from the terms of Loader's formula: each is proven, so either, and their
    minimum, bounds the error; the choice only trades width for time.  When the law
    offers ``dist.logpmf_dd``, ``log P(a)`` there is a double-word number (high and low
    word) with its own bound, about 1e-13 at any size (:func:`_anchor_log_pmf`).  A term ``k`` steps
    from the anchor is a product of k ratios, each with at most
    ``r = dist.ratio_roundings`` roundings (integers below 2^53 are exact), and
    of one factor, so relative to the exact ratio product it carries at most
    ``gamma_{(r + 1) L + 1}`` (L the longer side of the window) and
    ``f(k)`` adds at most ``factor_error`` times the relative pmf (counted
    only where the computed factor exceeds ``-factor_error``); the
    window sum of at most ``2L + 1`` non-negative terms adds ``gamma_{2L+1}``.
    A relative pmf in the subnormal range has an absolute error of at most
    ``L`` times the smallest subnormal, added as such.  Hence
    ``|W_computed - W_exact| <= 2 gamma_{(r + 3) L + 2} W_computed
    + 2 factor_error M + (2L + 1)^2 1e-322`` with M the computed sum of the
    relative pmf over the window (the factor 2 covers the use of computed in
    place of exact values, as every gamma here is far below 1/2).  The part
    outside the window is at most the geometric bound of
    :func:`log_monotone_tail_sum` (proven from log-concavity, evaluated with
    the same products, so inflated by the same relative error), added to the
    upper bound only.  Logs of the sums carry :data:`LIBM_REL`.  The bounds are then
    ``log P(a) + log W`` plus or minus the errors, each formed as the exact sum of the
    two large words (TwoSum) and a small rest, and rounded once in the safe direction
    (:func:`_round_sum`): at most one ulp beyond the proven errors, so a divergence of
    ``e^-1.3e6`` is enclosed to one or two ulps (2e-10) of its log, where adding the parts
    in float64 would cost ``2u |log P(a)|`` on each side.
    """
    fe = np.broadcast_to(np.asarray(factor_error, dtype=float), np.shape(start))
    log_anchor, total, bound, mass, steps, err_a, anchor_lo = _tail_sums(
        dist, start, stop, factor, fe, anchor_error=True
    )
    L = steps.astype(float)
    g = gamma((dist.ratio_roundings + 3) * L + 2)
    err_w = 2.0 * (g + factor_rel_error) * total + 2.0 * fe * mass + (2 * L + 1) ** 2 * 1e-322
    hi_w = next_up((total + err_w + bound * (1.0 + 2.0 * g)) * (1.0 + 2.0 * U))
    lo_w = next_down((total - err_w) * (1.0 - 2.0 * U))
    with np.errstate(divide="ignore", invalid="ignore"):
        lhi = np.log(hi_w)
        llo = np.log(np.maximum(lo_w, 0.0))
        hi = _round_sum(log_anchor, lhi, anchor_lo, err_a + LIBM_REL * np.abs(lhi), 1.0)
        lo = _round_sum(log_anchor, llo, anchor_lo, err_a + LIBM_REL * np.abs(llo), -1.0)
    empty = np.isneginf(log_anchor) | (hi_w <= 0)
    hi = np.where(empty, -np.inf, hi)
    lo = np.where(empty | np.isnan(lo), -np.inf, lo)
    return LogEnclosure(lo, hi)


def _round_sum(a: FloatArray, b: FloatArray, c: FloatArray, err: FloatArray, sign: float) -> FloatArray:
    """The float nearest ``a + b + c + sign err`` in the direction of ``sign`` (up for +1, down for
    -1), at most one ulp beyond that exact sum: ``a + b`` by TwoSum (exact), the small rest
    ``t = e + c + sign err`` in float64, moved outward by ``3.01 u (|e| + |c| + err)`` (its two
    roundings), and ``s + t`` by TwoSum again, whose exact remainder tells the direction to round
    (nan where a term is infinite)."""
    with np.errstate(invalid="ignore"):
        s, e = two_sum(a, b)
        t = e + c + sign * err
        t = t + sign * 3.01 * U * (np.abs(e) + np.abs(c) + err)
        r, re = two_sum(s, t)
        plain = a + b + c + sign * err
        out: FloatArray = np.where(
            np.isfinite(plain), np.where(sign * re > 0, np.nextafter(r, sign * np.inf), r), plain
        )
    return out


def _tail_sums(
    dist: LogConcaveCounts,
    start: IntArray,
    stop: IntArray,
    factor: RowFunction,
    factor_error: FloatArray | None = None,
    anchor_error: bool = False,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, IntArray, FloatArray, FloatArray]:
    """Per row: (log P(anchor), window sum W of P(k) f(k)/P(anchor), proven bound on
    the same sum outside the window, window sum of P(k)/P(anchor), longest side
    of the window in steps, a proven bound on the error of log P(anchor) --
    :func:`_anchor_log_pmf` -- with ``anchor_error``, else 0, and the low word of a
    double-word log P(anchor), else 0: the error bound is for their sum); rows with an
    empty range have ``log P(anchor) = -inf``.
    The mass counts the terms whose factor exceeds ``-factor_error`` (all
    positive ones without it); factors below 0 count as 0 in the sum."""
    fe_all = np.zeros(np.shape(start)) if factor_error is None else np.asarray(factor_error, dtype=float)
    start = np.maximum(np.asarray(start, dtype=np.int64), dist.lo)
    stop = np.minimum(np.asarray(stop, dtype=np.int64), dist.hi)
    B = start.shape[0]
    tot_out = np.zeros(B)
    bound_out = np.zeros(B)
    mass_out = np.zeros(B)
    steps_out = np.zeros(B, dtype=np.int64)
    todo = np.nonzero(start <= stop)[0]
    anchor = np.clip(dist.mode, start, stop)
    # Gaussian guess: exp(-((k-mode)^2 - d^2) / (2 sd^2)) < 2^-60 beyond this.
    d = np.abs(anchor - dist.mode).astype(float)
    # (+10: room for a factor f as small as e^-10 at the anchor, typical at a threshold)
    width = (np.ceil(np.sqrt(d * d + 2 * (_LOG_TOL_INV + 10) * dist.sd**2) - d) + 8).astype(np.int64)
    log_anchor = np.full(B, -np.inf)
    err_anchor = np.zeros(B)
    lo_anchor = np.zeros(B)
    if todo.size:  # the one accurate log-pmf per row, whatever the window
        if anchor_error:
            log_anchor[todo], err_anchor[todo], lo_anchor[todo] = _anchor_log_pmf(dist, todo, anchor[todo])
        else:
            log_anchor[todo] = dist.logpmf(todo[:, None], anchor[todo][:, None])[:, 0]
    while todo.size:
        # Rows sorted by window length and taken in chunks (unless they fit in
        # one): little padding, and every temporary stays small (large temporaries
        # come as fresh pages from the OS each time, which costs more than the arithmetic).
        s, t, a, w = start[todo], stop[todo], anchor[todo], width[todo]
        ws = np.maximum(s, a - w)
        we = np.minimum(t, a + w)
        cells = we - ws + 1
        if todo.size * int(cells.max()) <= _CHUNK_CELLS:  # one block: the order does not matter
            total, bound, grow, mass = _window_sum(dist, todo, s, t, a, ws, we, factor, fe_all[todo])
            i = todo.size
        else:
            order = np.argsort(cells, kind="stable")
            todo, s, t, a, ws, we, cells = (x[order] for x in (todo, s, t, a, ws, we, cells))  # cells non-decreasing
            total = np.empty(todo.size)
            bound = np.empty(todo.size)
            grow = np.empty(todo.size)
            mass = np.empty(todo.size)
            i = 0
        while i < todo.size:
            # the most rows whose padded block (rows x longest window) fits
            j = i + max(
                1, int(np.searchsorted(np.arange(1, todo.size - i + 1) * cells[i:], _CHUNK_CELLS, side="right"))
            )
            c = slice(i, j)
            total[c], bound[c], grow[c], mass[c] = _window_sum(
                dist, todo[c], s[c], t[c], a[c], ws[c], we[c], factor, fe_all[todo[c]]
            )
            i = j
        ok = (bound <= _TAIL_REL_TOL * total) | ((ws <= s) & (we >= t))
        done = todo[ok]
        tot_out[done] = total[ok]
        bound_out[done] = bound[ok]
        mass_out[done] = mass[ok]
        steps_out[done] = np.maximum(we - a, a - ws)[ok]
        todo, grow = todo[~ok], grow[~ok]
        # Widen by what the geometric decay at the window's end says is
        # missing (an upper bound, as the ratio only decreases further out);
        # fall back to a fourfold window where that estimate is unavailable.
        width[todo] = np.where(np.isfinite(grow), width[todo] + grow + 2, width[todo] * 4).astype(np.int64)
    return log_anchor, tot_out, bound_out, mass_out, steps_out, err_anchor, lo_anchor


def _anchor_log_pmf(dist: LogConcaveCounts, rows: IntArray, k: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(log P(k), a proven bound on its absolute error, lo)`` for the given rows, ``lo`` the low
    word of a double-word log-pmf (0 for a float64 one): the bound is on ``|log P(k) + lo - log P|``.

    The a-priori bound of :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error` and, where
    that exceeds :data:`RUNNING_ERROR_FROM` (deep tails, whose log-pmf is large), a sharper one:
    the law's double-word log-pmf (``dist.logpmf_dd``, its bound complete, ``1e-13`` whatever the
    size of the value) or the running bound ``dist.logpmf_error`` plus the additions that combine
    its ``pmf_factors`` factors (``2u`` of ``|value| + 2 log(n + 2) + 2`` each).  Each bound is
    proven, so where the value is float64 their minimum is; the sharper one costs a second look
    at Loader's terms, so it is taken only where the a-priori one would widen an enclosure by more
    than ~2e-10, and from the same pass as the value when the law offers ``logpmf_dd`` or
    ``logpmf_with_error``."""
    r, kf = rows[:, None], k[:, None].astype(float)
    threshold = RUNNING_ERROR_FROM  # read at call time (tests force the a-priori path)
    size = np.asarray(dist.size, dtype=float)
    size = size[rows] if size.ndim else size

    def want(value: FloatArray) -> npt.NDArray[np.bool_]:  # value: (rows, 1)
        a_priori = lpmf_abs_error(value[:, 0], size, dist.pmf_factors)
        wanted: npt.NDArray[np.bool_] = np.isfinite(value) & (a_priori > threshold)[:, None]
        return wanted

    if dist.logpmf_dd is not None:
        value, low, run = (a[:, 0] for a in dist.logpmf_dd(r, kf, want))
        sharp = np.isfinite(run)
        err = np.where(sharp, run, lpmf_abs_error(value, size, dist.pmf_factors))
        return value, err, np.where(sharp, low, 0.0)
    if dist.logpmf_with_error is not None:
        value, run = (a[:, 0] for a in dist.logpmf_with_error(r, kf, want))
    else:
        column = dist.logpmf(r, kf)
        value, live = column[:, 0], want(column)[:, 0]
        run = np.full(value.shape, np.inf)
        if dist.logpmf_error is not None and np.any(live):
            run[live] = dist.logpmf_error(r[live], kf[live])[:, 0]
    err = lpmf_abs_error(value, size, dist.pmf_factors)
    live = np.isfinite(run)
    if np.any(live):
        logn = np.log(np.broadcast_to(size, value.shape)[live] + 2.0)
        run = run[live] + dist.pmf_factors * 2.01 * U * (np.abs(value[live]) + 2.0 * logn + 2.0)
        err[live] = np.minimum(err[live], run)
    return value, err, np.zeros(value.shape)


def _window_sum(
    dist: LogConcaveCounts,
    todo: IntArray,
    s: IntArray,
    t: IntArray,
    a: IntArray,
    ws: IntArray,
    we: IntArray,
    factor: RowFunction,
    fe: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """For rows ``todo``: (sum of P(k) f(k) / P(a) over the window [ws, we],
    proven bound on the same sum over [s, t] outside the window, how many
    more steps on each side make that bound small enough (inf if unknown),
    sum of P(k) / P(a) over the window)."""
    rows = todo[:, None]
    af = a.astype(float)[:, None]  # float grids: int/float mixes convert on every operation
    f0 = factor(rows, af)[:, 0]
    total = np.maximum(f0, 0.0)
    mass = (f0 > -fe).astype(float)
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
            fv = factor(rows, nxt)
            total = total + (rel * np.maximum(fv, 0.0)).sum(axis=1)
            mass = mass + np.where(fv > -fe[:, None], rel, 0.0).sum(axis=1)
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
    return total, bound, grow, mass
