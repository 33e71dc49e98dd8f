"""The winner of a sampled election in closed form.

The sampling histogram without replacement followed by
:data:`~smoothdp_nb.core.smoothed.mechanisms.postprocess.winner` (Proposition 4 of *Smoothed
Differential Privacy*, Liu, Wang, Xia), offered by :meth:`SamplingHistogram._postprocessed` in
place of the generic enumeration of
:class:`~smoothdp_nb.core.smoothed.mechanisms.postprocess.PostProcessed`.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 4.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.divergence import LogConcaveCounts, log1mexp, log_monotone_tail_sum_enclosure
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, U, lpmf_abs_error, next_down, next_up
from smoothdp_nb.core.runtime.budget import Estimate
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.postprocess import PostProcessed, winner

__all__ = ["BinarySampler", "SampledWinner"]


@runtime_checkable
class BinarySampler(Protocol):
    """What the closed form asks of a sampling histogram drawn without replacement: the law of
    the sampled a-count (two categories) and the bounds of its DP delta.

    :class:`~smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism.SamplingHistogram`
    satisfies it; naming the two methods, not the class, keeps this module below it.
    """

    def binary_dist(self, u: IntArray, v: IntArray, n: int | IntArray, T: int | IntArray) -> LogConcaveCounts: ...

    def _dp_bounds(self, n: int) -> tuple[float, float, float, float]: ...


def _one(rows: IntArray, k: np.ndarray) -> FloatArray:
    return np.ones(np.shape(k))


class SampledWinner(PostProcessed):
    """The winner of a sample drawn without replacement (the announced winner of
    an election with lost votes), two categories in closed form.

    With u other records of category a and v of b, x has u + 1 a's and its
    neighbour x' one a-record turned into b.  Category a wins with probability
    ``W = (P(o_a >= k_lo) + P(o_a >= k_hi)) / 2`` (``k_lo = ceil(T/2)``,
    ``k_hi = floor(T/2) + 1``: a tie at T/2 counts half).  x and x' share the
    other n - 1 records, and the sampled a-counts differ only when the changed
    record is drawn, so exactly

        W_x - W_x' = T/(2n) (g(k_lo - 1) + g(k_hi - 1)),

    g the law of the a's among T - 1 draws from the other records.  As
    ``W_x >= W_x'``, the hockey-stick divergences over the two outcomes are
    ``d(x, x') = [dW - (e^eps - 1) W_x']_+`` and
    ``d(x', x) = [dW - (e^eps - 1)(1 - W_x)]_+``: a few hypergeometric tails
    (:func:`log_monotone_tail_sum`), no cancellation between nearly equal
    probabilities, exact zeros where the winner cannot change.
    """

    def __init__(self, inner: Mechanism) -> None:
        if not isinstance(inner, BinarySampler):
            raise TypeError(f"the sampled winner's closed form needs a sampling histogram, not {type(inner).__name__}")
        super().__init__(inner, winner)
        self.sampler: BinarySampler = inner

    def _profile_cost(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> Estimate:
        """m = 2: the closed form, a few tails per histogram and about sixteen
        floats per (histogram, epsilon); otherwise the generic enumeration."""
        if m != 2:
            return super()._profile_cost(n, m, count, n_epsilon, budget)
        return Estimate(2e-5 * count + 2e-6 * count * n_epsilon + 1e-4, 128.0 * count * max(1, n_epsilon))

    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x) from the closed form of the class docstring.

        The argument.  ``d = [dW - c O]_+`` with ``c = e^eps - 1`` and ``O`` one of
        ``W_x'`` and ``1 - W_x`` is non-decreasing in ``dW`` and non-increasing in
        ``c`` and ``O``, so its upper bound takes dW's upper and c's and O's lower
        bounds, and its lower bound the reverse.  ``O`` is a half-sum of two tail sums,
        each enclosed by :func:`~smoothdp_nb.core.numerics.divergence.log_monotone_tail_sum_enclosure`;
        ``dW`` is ``T/(2n)`` times two Loader hypergeometric pmfs, each within
        :func:`~smoothdp_nb.core.numerics.lpmf.log_hypergeom_pmf_error` (plus the two additions
        that function leaves to its caller); ``log c`` carries two library calls
        (expm1, log: :data:`~smoothdp_nb.core.numerics.enclosures.LIBM_REL` each).  The
        argument ``x = log c + log O - log dW`` of ``log(1 - e^x)`` is rounded in the
        direction that makes the result larger (upper) or smaller (lower), and the
        evaluation of ``log1mexp`` at that float carries at most
        ``2 LIBM_REL (1 + |result|)``.  Both bounds are clipped at the DP delta
        rounded up.  For m > 2 the generic enumeration (certified) is used.

        How tight.  The components are enclosed to about 1e-12 relative, and
        the subtraction ``dW - c O`` multiplies their error by ``dW / d``: the
        enclosure's relative width is about 1e-12 to 1e-11 times that
        cancellation (measured: 2.3e-9 at x = (11, 13), T = 17, eps = 1, where
        ``dW / d`` is about 195).
        """
        if hists.shape[1] != 2:
            return super()._log_profile_enclosure(hists, n, epsilon)
        T = self.sample_size(n)
        h0, h1 = hists[:, 0], hists[:, 1]
        u = np.concatenate([h0 - 1, h1 - 1])
        v = np.concatenate([h1, h0])
        ok = u >= 0
        lo = np.full((u.size, epsilon.size), -np.inf)
        hi = np.full((u.size, epsilon.size), -np.inf)
        if np.any(ok):
            lo[ok], hi[ok] = self._log_divergence_bounds(u[ok], v[ok], n, T, epsilon)
        k = hists.shape[0]
        enc = LogEnclosure(lo.reshape(2, k, -1).max(axis=0), hi.reshape(2, k, -1).max(axis=0))
        return enc.cap(self.sampler._dp_bounds(n)[1])

    def _log_divergence_bounds(
        self, u: IntArray, v: IntArray, n: int, T: int, epsilon: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of log max(d(x, x'), d(x', x)) for rows (u, v): (B, E) each."""
        k_lo, k_hi = (T + 1) // 2, T // 2 + 1
        dist_x = self.sampler.binary_dist(u, v, n, T)
        dist_y = self.sampler.binary_dist(u - 1, v + 1, n, T)
        B = u.size
        lo_k, hi_k = np.full(B, k_lo), np.full(B, k_hi)
        half = LogEnclosure(np.full(B, next_down(math.log(0.5))), np.full(B, next_up(math.log(0.5))))
        w_y = (
            log_monotone_tail_sum_enclosure(dist_y, lo_k, dist_y.hi, _one)
            .logaddexp(log_monotone_tail_sum_enclosure(dist_y, hi_k, dist_y.hi, _one))
            .shift(half.lower, half.upper)
        )
        not_w_x = (
            log_monotone_tail_sum_enclosure(dist_x, dist_x.lo, lo_k - 1, _one)
            .logaddexp(log_monotone_tail_sum_enclosure(dist_x, dist_x.lo, hi_k - 1, _one))
            .shift(half.lower, half.upper)
        )
        total = (u + v).astype(float)
        gs = []
        for kk in (k_lo - 1, k_hi - 1):
            val = lpmf.log_hypergeom_pmf(kk, u, v, T - 1)
            # the running bound where it is finite, else the a-priori one (3 Loader factors)
            run = lpmf.log_hypergeom_pmf_error(kk, u, v, T - 1)
            run = run + 2.0 * U * (np.abs(val) + 2.0 * (np.log(np.maximum(total, 1.0)) + 1.0))
            err = np.minimum(run, lpmf_abs_error(val, np.maximum(total, T), factors=3))
            gs.append(LogEnclosure.around(val, np.where(np.isneginf(val), 0.0, err)))
        g = gs[0].logaddexp(gs[1])
        scale = math.log(T) - math.log(n) + math.log(0.5)
        s_err = 2.0 * LIBM_REL * (math.log(T) + math.log(n) + 1.0) + 4.0 * U * abs(scale)
        dw = g.shift(next_down(scale - s_err), next_up(scale + s_err))
        with np.errstate(divide="ignore"):
            lc = np.log(np.expm1(epsilon))  # -inf at epsilon = 0: d = dW
        c_err = 2.0 * LIBM_REL * (1.0 + np.abs(np.where(np.isfinite(lc), lc, 0.0)))
        lc_lo, lc_hi = next_down(lc - c_err), next_up(lc + c_err)

        def bound(ldw: FloatArray, lo_other: FloatArray, lc_: FloatArray, upper: bool) -> FloatArray:
            with np.errstate(invalid="ignore"):
                x = lc_[None, :] + lo_other[:, None] - ldw[:, None]
                xe = 2.0 * U * (np.abs(lc_[None, :]) + np.abs(lo_other[:, None]) + np.abs(ldw[:, None]))
                x = next_down(x - xe) if upper else next_up(x + xe)
                r = log1mexp(np.minimum(x, 0.0))
                r = r + (1.0 if upper else -1.0) * 2.0 * LIBM_REL * (1.0 + np.abs(r))
                d = np.where(x < 0, ldw[:, None] + r, -np.inf)
                d = next_up(d + 2.0 * U * np.abs(d)) if upper else next_down(d - 2.0 * U * np.abs(d))
            return np.where(np.isnan(d), -np.inf, d)

        hi = np.full((B, epsilon.size), -np.inf)
        lo = np.full((B, epsilon.size), -np.inf)
        for other in (w_y, not_w_x):
            hi = np.maximum(hi, bound(np.asarray(dw.upper), np.asarray(other.lower), lc_lo, True))
            lo = np.maximum(lo, bound(np.asarray(dw.lower), np.asarray(other.upper), lc_hi, False))
        return lo, hi
