"""The sampling-histogram mechanism M_H of *Smoothed Differential Privacy*
(Liu, Wang, Xia), Algorithm 2: draw ``T = ceil(eta n)`` records without
replacement (or with replacement, Appendix F) and publish the histogram of
the sample.

Its fast paths of the :class:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism`
protocol rest on one reduction.  Neighbouring databases ``x ~ x'`` differ in
one record, of category ``a`` in x and ``b`` in x'.  Write ``u`` and ``v`` for
the numbers of *other* records of categories a and b.  The likelihood ratio of
an output depends only on its counts ``(o_a, o_b)`` of the two categories:

* without replacement: ``r = (u+1)/(u+1-o_a) * (v+1-o_b)/(v+1)``;
* with replacement:    ``r = ((u+1)/u)^o_a * (v/(v+1))^o_b``.

So ``d(x, x')`` is a sum over the joint law of ``(o_a, o_b)`` only, and for
two categories (``o_b = T - o_a``) the ratio is monotone in ``o_a``: the
positive part of the hockey-stick divergence is a tail, with a closed-form
threshold (:meth:`SamplingHistogram.binary_threshold`).  The divergences
themselves are summed by :mod:`smoothdp_nb.core.numerics.divergence`.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 2.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from scipy.special import expit, gammaln

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.divergence import (
    LogConcaveCounts,
    RowFunction,
    log_divergence_terms_enclosure,
    log_monotone_tail_sum,
    log_monotone_tail_sum_enclosure,
)
from smoothdp_nb.core.numerics.double_double import dd_add_fp, dd_div, dd_mul_fp
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, exp_double
from smoothdp_nb.core.numerics.validation import as_int, as_rng
from smoothdp_nb.core.runtime.budget import ComputationTooLarge, Estimate
from smoothdp_nb.core.smoothed.mechanisms.base import MAX_CELLS, Mechanism, compositions
from smoothdp_nb.core.smoothed.mechanisms.output_maps import PostProcessing, winner
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.grid import log_joint_ab, log_joint_error, log_ratio_error
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.tail_bound import log_profile_range_upper
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.winner import SampledWinner
from smoothdp_nb.core.smoothed.mechanisms.size import SampleSize, dp_delta_bounds

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SamplingHistogram"]

# seconds per (histogram, epsilon) of a two-category profile: a + b sqrt(n)
_SH2_BASE, _SH2_SQRT = 1e-6, 3e-9
# seconds per cell of the (T+1)^2 grid of one neighbour pair (m > 2)
_SH_GRID_CELL = 2.2e-7

#: relative part of the error bound of the without-replacement divergence factor
FACTOR_REL = 2.0 * 2.0**-53
#: relative error bound of the factor of :meth:`SamplingHistogram._linear_factor`
LINEAR_FACTOR_REL = 6.2 * 2.0**-53


class SamplingHistogram(SampleSize, Mechanism):
    """Sampling-histogram mechanism M_H (Algorithm 2; Appendix F with replacement).

    Parameters
    ----------
    eta : float, str, Decimal or Fraction, optional
        Sampling rate in (0, 1]; the sample size is ``T = ceil(eta * n)``,
        computed exactly from the decimal value.
    T : int, optional
        Fixed sample size instead of a rate (give exactly one of eta, T).
    replace : bool, default False
        Sample with replacement (multinomial, Appendix F) instead of without
        (multivariate hypergeometric, Algorithm 2).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 2.

    Examples
    --------
    >>> m = SamplingHistogram(eta=0.998)
    >>> m.sample_size(1000)
    998
    """

    def __init__(self, eta: object = None, *, T: int | None = None, replace: bool = False) -> None:
        self._set_size(eta, T)
        if not isinstance(replace, (bool, np.bool_)):
            raise TypeError(f"replace must be True or False, got {replace!r}")
        self.replace = bool(replace)

    # -- description -----------------------------------------------------
    def __repr__(self) -> str:
        extra = ", replace=True" if self.replace else ""
        return f"{type(self).__name__}({self._size_text()}{extra})"

    dp_delta_depends_on_epsilon = False
    #: swapping the two categories swaps the sample's histograms, so every profile is unchanged
    label_symmetric = True

    def _key(self) -> tuple[object, int | None, bool]:
        return (self._rate, self.T, self.replace)

    @property
    def categories(self) -> None:
        """Any number of categories m >= 2 (taken from the histograms)."""
        return None

    # -- running the mechanism ------------------------------------------------
    def sample(self, data: npt.ArrayLike, rng: object = None, *, categories: npt.ArrayLike | None = None) -> IntArray:
        """Run the mechanism on raw records.

        Parameters
        ----------
        data : array_like of category labels, shape (n,)
        rng : None, int or numpy Generator
        categories : sequence, optional
            The category set X (order of the returned counts).  Defaults to
            the sorted distinct labels of ``data``.

        Returns
        -------
        ndarray of int64, shape (len(categories),): the published histogram.
        """
        data = np.asarray(data)
        if data.ndim != 1 or data.size == 0:
            raise ValueError("data must be a non-empty 1-D array of category labels")
        cats = np.unique(data) if categories is None else np.asarray(categories)
        idx = np.searchsorted(cats, data) if categories is None else _label_index(cats, data)
        hist = np.bincount(idx, minlength=len(cats)).astype(np.int64)
        return self.sample_histogram(hist, rng=rng)

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> IntArray:
        """Draw the mechanism's output for a database given by its histogram.

        ``size`` draws independent outputs (shape (size, m)).
        """
        h = self._one_histogram(hist)
        n = int(h.sum())
        T = self.sample_size(n)
        gen = as_rng(rng)
        shape = None if size is None else (as_int(size, "size", minimum=1),)
        if self.replace:
            return gen.multinomial(T, h / n, size=shape).astype(np.int64)
        return gen.multivariate_hypergeometric(h, T, size=shape).astype(np.int64)

    # -- exact output distribution -----------------------------------------------
    def output_pmf(self, hist: object) -> pd.DataFrame:
        """Exact output distribution for a small histogram (teaching and tests).

        Returns
        -------
        pandas.DataFrame
            One row per possible output: a column per category (``c0``,
            ``c1``, ...), ``probability`` and ``log_probability``.
        """
        import pandas as pd  # deferred: a profile or a smoothed delta needs no data frame

        outs, logp = self.log_output_pmf(self._one_histogram(hist))
        df = pd.DataFrame(outs, columns=[f"c{j}" for j in range(outs.shape[1])])
        df["probability"] = np.exp(logp)
        df["log_probability"] = logp
        return df

    def log_output_pmf(self, h: IntArray) -> tuple[IntArray, FloatArray]:
        """Every sampled histogram (rows) and its log-probability (small cases)."""
        h = np.asarray(h, dtype=np.int64)
        n = int(h.sum())
        T = self.sample_size(n)
        m = len(h)
        count = math.comb(T + m - 1, m - 1)
        if count > MAX_CELLS:
            raise ComputationTooLarge(
                f"the output space has {count:.3g} histograms (T={T}, m={m}); "
                "output_pmf enumerates them and is meant for small cases"
            )
        outs = compositions(T, m)
        if self.replace:
            logp = _log_multinomial(outs, h / n)
        else:
            ok = np.all(outs <= h[None, :], axis=1)
            outs = outs[ok]
            logp = lpmf.log_comb(h[None, :], outs).sum(axis=1) - lpmf.log_comb(n, T)
        return outs, logp

    # -- worst cases ---------------------------------------------------------------
    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """The DP delta of Theorem 3 (iii), ``T/n`` for every epsilon >= 0 without
        replacement and ``1 - (1 - 1/n)^T`` with replacement, rounded **up** (the
        smallest float above the exact value): no database of n records exceeds it.

        The database with a single record of one category attains it, and no
        database exceeds it because the two outputs differ only when the
        changed record is sampled (with replacement: drawn at least once).
        :meth:`_dp_bounds` gives both bounds.
        """
        return np.full(np.shape(epsilon), self._dp_bounds(n)[3])

    def _dp_delta_enclosure(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        budget: float = math.inf,
    ) -> LogEnclosure:
        """Proven bounds on log of the closed form (Arb)."""
        llo, lhi, _, _ = self._dp_bounds(n)
        return LogEnclosure(np.full(np.shape(epsilon), llo), np.full(np.shape(epsilon), lhi))

    def _dp_bounds(self, n: int) -> tuple[float, float, float, float]:
        """(log lower, log upper, lower, upper) of the DP delta (exact rationals and Arb)."""
        return dp_delta_bounds(self.sample_size(n), n, self.replace)

    # -- the profile fast paths --------------------------------------------------------
    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x) for histograms of a common size n.

        For two categories the profile is a maximum of four tails of
        hypergeometric (binomial, with replacement) laws, summed from the
        closed-form threshold outward with a proven truncation bound, so the
        cost does not grow with n.  For ``m > 2`` the joint law of the two
        categories involved is summed on its full grid (exact; cost ~ m^2 T^2).
        The bounds are the tail sums of
        :func:`~smoothdp_nb.core.numerics.divergence.log_monotone_tail_sum_enclosure`
        (m = 2) or the grid terms of
        :func:`~smoothdp_nb.core.numerics.divergence.log_hockey_stick_enclosure` (m > 2),
        with the error bounds of the factors given in :meth:`_divergence_factor`
        and :func:`.sampling_grid.log_joint_ab`; clipped at the DP delta rounded up."""
        T = self.sample_size(n)
        if hists.shape[1] == 2:
            enc = self._log_profile_binary(hists, n, T, epsilon)
        else:
            enc = self._log_profile_grid(hists, n, T, epsilon)
        return enc.cap(self._dp_bounds(n)[1])

    def _log_profile_range_upper(self, lo: IntArray, hi: IntArray, n: int, epsilon: FloatArray) -> FloatArray | None:
        """Proven upper bounds on log delta_eps(k, n - k) over every k in ``[lo_i, hi_i]``, O(1) per
        range (:func:`~.tail_bound.log_profile_range_upper`), capped at the DP delta; None for
        sampling with replacement and for subclasses (whose profiles may differ)."""
        if type(self) is not SamplingHistogram or self.replace:
            return None
        out: FloatArray = np.minimum(
            log_profile_range_upper(lo, hi, n, self.sample_size(n), epsilon), min(self._dp_bounds(n)[1], 0.0)
        )
        return out

    def _profile_cost(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> Estimate:
        """Per histogram and epsilon: m = 2, a few hypergeometric tails, ``a + b sqrt(n)``
        seconds (measured 0.8-2.0e-6 at n = 1e4..1e5, eta = 0.9 and 0.998,
        benchmarks/README.md) and no large array; m > 2, the (T+1)^2 grid of
        each of the m (m - 1) neighbour pairs (about nine float arrays of its cells)."""
        per_cell = count * max(1, n_epsilon)
        if m == 2:
            return Estimate(per_cell * (_SH2_BASE + _SH2_SQRT * math.sqrt(n)), 0.0)
        cells = m * (m - 1) * float(self.sample_size(n) + 1) ** 2
        return Estimate(per_cell * _SH_GRID_CELL * cells, 9 * 8.0 * min(cells, MAX_CELLS / 4))

    def _log_profile_grid(self, h: IntArray, n: int, T: int, epsilon: FloatArray) -> LogEnclosure:
        """m > 2.  For every ordered pair (a, b) with h_a >= 1 the neighbour moves
        one a-record to b; d(x, x') = F(h_a - 1, h_b) and d(x', x) = F(h_b, h_a - 1)."""
        k, m = h.shape
        us, vs, owner = [], [], []
        for a in range(m):
            for b in range(m):
                if a == b:
                    continue
                rows = np.nonzero(h[:, a] >= 1)[0]
                u = h[rows, a] - 1
                v = h[rows, b]
                us += [u, v]
                vs += [v, u]
                owner += [rows, rows]
        u_all = np.concatenate(us)
        v_all = np.concatenate(vs)
        own = np.concatenate(owner)
        # One scalar key per pair (u, v <= n): a 1-D unique is far cheaper than np.unique(axis=0).
        if n < 2**31:
            keys, inverse = np.unique(u_all * (n + 1) + v_all, return_inverse=True)
            pu, pv = keys // (n + 1), keys % (n + 1)
        else:  # the key would overflow int64
            pairs, inverse = np.unique(np.stack([u_all, v_all], axis=1), axis=0, return_inverse=True)
            pu, pv = pairs[:, 0], pairs[:, 1]
        encF = self.log_pair_divergence_enclosure(pu, pv, n, T, epsilon)
        inv = inverse.ravel()
        lo = np.full((k, epsilon.size), -np.inf)
        hi = np.full((k, epsilon.size), -np.inf)
        np.maximum.at(lo, own, encF.lower[inv])
        np.maximum.at(hi, own, encF.upper[inv])
        return LogEnclosure(lo, hi)

    def _log_profile_sizes(self, hists: IntArray, sizes: IntArray, epsilon: FloatArray) -> LogEnclosure:
        """Two categories and several database sizes: the tails of every size in
        one vectorised pass (:meth:`_log_profile_binary` with one n and T per
        row), so the per-call cost of the tail sums and of their error bounds is
        paid once rather than once per size; each row clipped at its size's DP
        delta as in :meth:`_log_profile_enclosure`.  Otherwise (and for a subclass
        with its own :meth:`_log_profile_enclosure`) one call per size."""
        if sizes.size and sizes.min() == sizes.max():  # one size (the common case): one call
            return self._log_profile_enclosure(hists, int(sizes[0]), epsilon)
        ns, inv = np.unique(sizes, return_inverse=True)
        own = type(self)._log_profile_enclosure is not SamplingHistogram._log_profile_enclosure
        if hists.shape[1] != 2 or ns.size < 2 or ns[-1] >= 2**31 or own:
            return super()._log_profile_sizes(hists, sizes, epsilon)
        inv = inv.ravel()
        Ts = np.array([self.sample_size(int(n)) for n in ns], dtype=np.int64)
        caps = np.array([self._dp_bounds(int(n))[1] for n in ns])
        return self._log_profile_binary(hists, sizes, Ts[inv], epsilon).cap(caps[inv][:, None])

    def _log_profile_binary(
        self, h: IntArray, n: int | IntArray, T: int | IntArray, epsilon: FloatArray
    ) -> LogEnclosure:
        """m = 2: the same four divergences per histogram as the general case,
        indexed by u alone (every pair has u + v = n - 1), or by (n, u) when
        ``n`` and ``T`` are given per row (int arrays (k,), n < 2^31)."""
        h0, h1 = h[:, 0], h[:, 1]
        # the four (u) per row: x -> x' moves an a-record (a = 0 or 1); d(x, x') and d(x', x)
        cand = np.stack([h0 - 1, h1, h1 - 1, h0])  # (4, k)
        valid = np.stack([h0 >= 1, h0 >= 1, h1 >= 1, h1 >= 1])
        U = cand[valid]
        pn, pT = n, T  # the pairs' sizes
        if np.ndim(n):  # one size per row: one key per (n, u) pair
            key = np.broadcast_to(n, cand.shape)[valid] * 2**31 + U
            keys, first, inv = np.unique(key, return_index=True, return_inverse=True)
            pn, us, pT = keys >> 31, keys & (2**31 - 1), np.broadcast_to(T, cand.shape)[valid][first]
        elif n <= 16 * U.size:  # dense index: cheaper than sorting
            needed = np.zeros(n, dtype=bool)
            needed[U] = True
            us = np.nonzero(needed)[0]
            inv = (np.cumsum(needed) - 1)[U]
        else:
            us, inv = np.unique(U, return_inverse=True)
        idx = np.zeros(cand.shape, dtype=np.int64)
        idx[valid] = inv.ravel()
        encF = self.log_pair_divergence_enclosure(us, pn - 1 - us, pn, pT, epsilon)  # (len(us), E)
        lo = np.where(valid[:, :, None], encF.lower[idx], -np.inf).max(axis=0)  # (4, k, E) -> (k, E)
        hi = np.where(valid[:, :, None], encF.upper[idx], -np.inf).max(axis=0)
        return LogEnclosure(lo, hi)

    def _log_utility(self, hist_minus_i: IntArray, t: float) -> float:
        """eq. (3) before the factor 1/(1-t); two categories: monotone tails from
        the closed-form thresholds, otherwise the generic enumeration."""
        c = np.asarray(hist_minus_i, dtype=np.int64)
        if c.size != 2:
            return super()._log_utility(c, t)
        n = int(c.sum()) + 1
        T = self.sample_size(n)
        both = self._log_utility_binary(np.array([c[0], c[1]]), np.array([c[1], c[0]]), n, T, t)
        return float(np.max(both))

    def _log_utility_binary(self, u: npt.ArrayLike, v: npt.ArrayLike, n: int, T: int, t: float) -> FloatArray:
        """log sum_K P(K) max(0, sigma(|log r(K)|) - t) for rows (u, v): the
        expectation under the database with u+1 records of 'a' and v of 'b'."""
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        dist = self.binary_dist(u, v, n, T)

        def factor(rows: IntArray, k: np.ndarray) -> FloatArray:
            lr = np.abs(self.log_ratio(u[rows], v[rows], k, T - k))
            f = expit(lr) - t  # sigma(|lr|) = max posterior, >= 1/2
            return np.where(f > 0, f, 0.0)

        if t < 0.5:
            return log_monotone_tail_sum(dist, dist.lo, dist.hi, factor)
        L = math.log(t) - math.log1p(-t)  # logit(t) >= 0
        Ls = np.full(u.size, L)
        upper_start = self.binary_threshold(u, v, T, Ls)
        # log r(u, v; K, T-K) < -L  <=>  log r(v, u; T-K, K) > L
        lower_end = T - self.binary_threshold(v, u, T, Ls)
        upper = log_monotone_tail_sum(dist, upper_start, dist.hi, factor)
        lower_end = np.minimum(lower_end, upper_start - 1)  # keep the two tails disjoint
        lower = log_monotone_tail_sum(dist, dist.lo, lower_end, factor)
        out: FloatArray = np.logaddexp(upper, lower)
        return out

    def _postprocessed(self, f: PostProcessing) -> Mechanism | None:
        """The winner of the sample (:data:`~smoothdp_nb.winner`) has its own fast
        path without replacement (hypergeometric tails,
        :class:`~smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.winner.SampledWinner`); other maps are generic."""
        if f is winner and not self.replace:
            return SampledWinner(self)
        return None

    # -- the divergence kernel ---------------------------------------------------
    def log_pair_divergence_enclosure(
        self, u: npt.ArrayLike, v: npt.ArrayLike, n: int | IntArray, T: int | IntArray, epsilon: FloatArray
    ) -> LogEnclosure:
        """Proven bounds on log d(x, x') for neighbour pairs (u, v) of the module docstring.

        ``u``, ``v``: int arrays (B,) of the other records in categories a, b;
        ``n``: database size (all rows), ``T`` the sample size (one size, or one per pair where
        every pair has ``u + v = n - 1``); ``epsilon``: (E,).  For ``m > 2`` the remaining
        ``n - 1 - u - v`` records form the merged category "rest" (the ratio does not depend on
        how they split).  Bounds of shape (B, E).
        """
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        rest = n - 1 - u - v
        if not np.any(rest):  # two categories (the common case): one call, no scatter
            return self._log_pair_divergence_binary(u, v, n, T, epsilon)
        if np.ndim(n) or np.ndim(T):
            raise ValueError("pairs with a rest category (u + v < n - 1) take one size n and sample size T")
        lo = np.empty((u.size, epsilon.size))
        hi = np.empty((u.size, epsilon.size))
        for part, fn in ((rest == 0, self._log_pair_divergence_binary), (rest != 0, self._log_pair_divergence_grid)):
            if np.any(part):
                enc = fn(u[part], v[part], int(n), int(T), epsilon)
                lo[part], hi[part] = enc.lower, enc.upper
        return LogEnclosure(lo, hi)

    def log_ratio(self, u: npt.ArrayLike, v: npt.ArrayLike, oa: npt.ArrayLike, ob: npt.ArrayLike) -> FloatArray:
        """log P(o)/Q(o) as a function of the counts (o_a, o_b); arrays broadcast."""
        u = np.asarray(u, dtype=float)
        v = np.asarray(v, dtype=float)
        oa = np.asarray(oa, dtype=float)
        ob = np.asarray(ob, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.replace:
                a = np.log1p(1.0 / u)  # +inf when u = 0
                b = np.log1p(1.0 / v)
                ta = np.where(oa == 0, 0.0, oa * a)
                tb = np.where(ob == 0, 0.0, ob * b)
                return ta - tb
            return -np.log1p(-oa / (u + 1.0)) + np.log1p(-ob / (v + 1.0))

    def binary_dist(self, u: IntArray, v: IntArray, n: int | IntArray, T: int | IntArray) -> LogConcaveCounts:
        """Law of o_a (count of category a in the output) under x, binary case
        (``n``, ``T``: one database size and sample size, or one per row)."""
        good = (u + 1).astype(float)
        bad = v.astype(float)
        N = np.broadcast_to(np.asarray(n, dtype=float), u.shape)
        Tf = np.broadcast_to(np.asarray(T, dtype=float), u.shape)
        if self.replace:
            p = good / N
            q = bad / N

            def logpmf(rows: IntArray, k: np.ndarray) -> FloatArray:
                return lpmf.log_binom_pmf(k, Tf[rows], p[rows], q[rows])

            def logpmf_error(rows: IntArray, k: np.ndarray) -> FloatArray:
                # p = good/n and q = bad/n are rounded (u each, and p + q - 1 up to 2u):
                # log p^k q^(T-k) moves by at most u T and the formula's e^(-T(p+q-1)) by 2u T
                out: FloatArray = lpmf.log_binom_pmf_error(k, Tf[rows], p[rows], q[rows]) + 3.03 * 2.0**-53 * Tf[rows]
                return out

            def logpmf_with_error(rows: IntArray, k: np.ndarray, want: lpmf.Wanted) -> tuple[FloatArray, FloatArray]:
                value, err = lpmf.log_binom_pmf_with_error(k, Tf[rows], p[rows], q[rows], want)
                return value, err + 3.03 * 2.0**-53 * Tf[rows]  # as logpmf_error

            def ratio(rows: IntArray, k: np.ndarray) -> FloatArray:  # P(k+1)/P(k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out: FloatArray = (Tf[rows] - k) / (k + 1.0) * (p[rows] / q[rows])
                    return out

            lo = np.zeros(u.size, dtype=np.int64)
            hi = Tf.astype(np.int64)
            mode = np.floor((Tf + 1) * p).astype(np.int64)
            sd = np.sqrt(Tf * p * q)
            # ratio: one division, p, q and p/q, one product (and 1/ratio on the left)
            factors, roundings = 1, 6
            logpmf_dd = None
        else:

            def logpmf(rows: IntArray, k: np.ndarray) -> FloatArray:
                return lpmf.log_hypergeom_pmf(k, good[rows], bad[rows], Tf[rows])

            def logpmf_error(rows: IntArray, k: np.ndarray) -> FloatArray:
                return lpmf.log_hypergeom_pmf_error(k, good[rows], bad[rows], Tf[rows])

            def logpmf_with_error(rows: IntArray, k: np.ndarray, want: lpmf.Wanted) -> tuple[FloatArray, FloatArray]:
                return lpmf.log_hypergeom_pmf_with_error(k, good[rows], bad[rows], Tf[rows], want)

            def logpmf_dd(
                rows: IntArray, k: np.ndarray, want: lpmf.Wanted
            ) -> tuple[FloatArray, FloatArray, FloatArray]:
                # deep tails: the anchor in double-word arithmetic (its error ~1e-13 at any size)
                return lpmf.log_hypergeom_pmf_dd_where(k, good[rows], bad[rows], Tf[rows], want)

            shift = bad - Tf + 1.0

            def ratio(rows: IntArray, k: np.ndarray) -> FloatArray:  # P(k+1)/P(k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out: FloatArray = ((good[rows] - k) * (Tf[rows] - k)) / ((k + 1.0) * (k + shift[rows]))
                    return out

            lo = np.maximum(0.0, Tf - bad).astype(np.int64)
            hi = np.minimum(good, Tf).astype(np.int64)
            mode = np.floor((Tf + 1) * (good + 1) / (N + 2)).astype(np.int64)
            with np.errstate(divide="ignore", invalid="ignore"):  # (n = 1: no variance)
                var = np.where(N > 1, Tf * (good / N) * (bad / N) * ((N - Tf) / (N - 1)), 0.0)
            sd = np.sqrt(np.maximum(var, 0.0))
            # ratio: two products of integers, one division (and 1/ratio on the left)
            factors, roundings = 3, 4
        return LogConcaveCounts(
            logpmf=logpmf,
            ratio=ratio,
            lo=lo,
            hi=hi,
            mode=mode,
            sd=sd,
            size=N if np.ndim(n) else float(n),
            pmf_factors=factors,
            ratio_roundings=roundings,
            logpmf_error=logpmf_error,
            logpmf_with_error=logpmf_with_error,
            logpmf_dd=logpmf_dd,
        )

    def _log_pair_divergence_binary(
        self, u: IntArray, v: IntArray, n: int | IntArray, T: int | IntArray, epsilon: FloatArray
    ) -> LogEnclosure:
        """Tail sums from the closed-form threshold, one row per (pair, epsilon).

        Each row is anchored at its own largest term (see
        :func:`log_monotone_tail_sum`), so a divergence far below the
        distribution's mode is as accurate as one near it.  ``n``, ``T``: one
        size for all pairs or one per pair.
        """
        B, E = u.size, epsilon.size
        # One row per (pair, epsilon): the distribution depends on the pair only.
        uu = np.repeat(u, E)
        vv = np.repeat(v, E)
        ee = np.tile(epsilon, B)
        if np.ndim(T):
            n, T = np.repeat(n, E), np.repeat(T, E)
        dist = self.binary_dist(uu, vv, n, T)
        start = self.binary_threshold(uu, vv, T, ee)
        linear = None if self.replace else self._linear_factor(uu, vv, T, ee, np.maximum(start, dist.lo))
        if linear is not None:
            factor, f_err = linear
            res = log_monotone_tail_sum_enclosure(dist, start, dist.hi, factor, f_err, LINEAR_FACTOR_REL)
        else:
            factor = self._divergence_factor(uu, vv, T, ee)
            res = log_monotone_tail_sum_enclosure(
                dist, start, dist.hi, factor, self._factor_error(uu, vv, T, ee), 0.0 if self.replace else FACTOR_REL
            )
        return LogEnclosure(res.lower.reshape(B, E), res.upper.reshape(B, E))

    def _linear_factor(
        self, u: IntArray, v: IntArray, T: int | IntArray, epsilon: FloatArray, first: IntArray
    ) -> tuple[RowFunction, FloatArray] | None:
        """Without replacement: the factor ``f = 1 - e^eps Q(k)/P(k)`` of :meth:`_divergence_factor`
        to a *relative* error of :data:`LINEAR_FACTOR_REL`, plus a per-row absolute error (returned,
        about 1e-20), for the tail sums from ``first`` on; None when ``e^eps (n + 2)`` is beyond
        2^900 (the caller then takes :meth:`_divergence_factor`).

        Near the threshold f is tiny (at 10^8 records, 1e-7 over the whole summed window: the
        pmf falls by half per step while the likelihood ratio moves by 1e-7), so an absolute error
        of a few u in f, which the rounding of ``e^eps`` alone causes, is a relative error of 1e-9
        of the divergence.  But ``f D = D - e^eps B`` (``D = (k + s) g``, ``B = (v + 1)(g - k)``,
        ``g = u + 1``, ``s = v + 1 - T``) is *linear* in k: ``(g + c (v + 1)) (k - k*)`` with
        ``c = e^eps`` and ``k* = g (c (v + 1) - s) / (g + c (v + 1))``, so
        ``f = A (k - k*) / (k + s)``, ``A = (g + c (v + 1)) / g``.  Per row, ``k*`` is formed in
        double-word arithmetic from ``c`` to 40 digits (:func:`exp_double`; the products, sums
        and quotient of :mod:`~smoothdp_nb.core.numerics.double_double`): relative error at most
        ``(amp + 1) 2^-100``, amp ``= (c (v + 1) + |s|) / (c (v + 1) - s)`` the cancellation of
        its numerator (``c (v + 1) - s >= T > 0`` for eps >= 0); ``err_k`` below is four times
        that.  ``k* = K0 + delta`` with ``K0 = rint(k*_hi)`` (``k*_hi - K0`` exact by Sterbenz,
        ``|delta| <= 1/2 + tiny``, rounded once).  Per cell ``(k - K0) - delta`` is within
        ``2.01 u |k - k*| + err_k`` of ``k - k*`` (``k - K0`` is an exact integer; if it is 0 the
        result is ``-delta``, else ``|k - k*| >= 1/2 >= |delta|``); ``A`` carries ``2.01 u``
        (the double-word ``g + c (v + 1)`` rounded, one division), the product and the division by
        the exact integer ``k + s >= 1`` one u each: relative error at most ``6.2 u`` (with
        ``1 + 6.03u`` rounding headroom), absolute at most ``1.01 A err_k / (k + s)``, largest at
        the first summed count.  The value is then capped at 1 (f <= 1, so the cap only moves it
        toward f) and is exactly 1 where ``Q(k) = 0`` (``k = g``)."""
        uf = u.astype(float)
        vf = v.astype(float)
        g = uf + 1.0
        vp1 = vf + 1.0
        s = vf + 1.0 - np.asarray(T, dtype=float)
        vals, which = np.unique(epsilon, return_inverse=True)
        if vals.size and (vals.min() < 0.0 or vals.max() > 600.0):
            return None
        pairs = np.array([exp_double(float(val)) for val in vals]).reshape(-1, 2)
        ch, cl = pairs[which.ravel(), 0], pairs[which.ravel(), 1]
        if not np.all(ch * (g + vp1 + 2.0) < 2.0**900):
            return None
        cvh, cvl = dd_mul_fp(ch, cl, vp1)
        nh, nl = dd_add_fp(cvh, cvl, -s)
        nh, nl = dd_mul_fp(nh, nl, g)
        dh, dl = dd_add_fp(cvh, cvl, g)
        kh, kl = dd_div(nh, nl, dh, dl)
        k0 = np.rint(kh)
        delta = (kh - k0) + kl
        amp = (cvh + np.abs(s)) / (cvh - s)
        err_k = np.abs(kh) * (amp + 1.0) * 2.0**-98
        a = dh / g
        f_err: FloatArray = 1.01 * a * err_k / np.maximum(first.astype(float) + s, 1.0)

        def factor(rows: IntArray, k: np.ndarray) -> FloatArray:
            # unclipped below (< 0 below the threshold: the tail sum clips); at most 1, and exactly
            # 1 where Q(k) = 0 (k = g), so outputs only x can produce weigh the same at every eps
            lin = a[rows] * ((k - k0[rows]) - delta[rows]) / (k + s[rows])
            out: FloatArray = np.where(k == g[rows], 1.0, np.minimum(lin, 1.0))
            return out

        return factor, f_err

    def _factor_error(self, u: IntArray, v: IntArray, T: int | IntArray, epsilon: FloatArray) -> FloatArray:
        """Proven bound on the absolute error of each value of :meth:`_divergence_factor`
        (without replacement: together with a relative error of :data:`FACTOR_REL`).

        Without replacement ``f = (D - e^eps B)/D`` with the integers
        ``D = (k + shift) good`` and ``B = (v + 1)(good - k)`` (exact floats below
        2^53; above, each rounded by u, which moves f by at most ``2.1u``) and
        ``e_hi``, e^eps to 40 digits (:func:`exp_double`) correctly rounded, so
        ``|e^eps - e_hi| <= (u + 1e-39) e^eps``.
        The product ``e_hi B`` is rounded once, so ``e_hi B`` as computed is
        within ``2.001u e^eps B`` of ``e^eps B``, and ``e^eps B = (1 - f) D <= 2D``
        wherever f > -1; ``D - e_hi B`` is exact wherever ``|f| <= 1/2``
        (Sterbenz) and the division adds u of the result: the absolute error
        is at most ``4.1u`` (plus ``2.1u`` when the products are inexact) and
        :data:`FACTOR_REL` relative.  With replacement
        ``f = -expm1(min(x, 0))``, ``x = epsilon - (k a - (T - k) b)``,
        ``a = log1p(1/u)``: each of a, b carries ``LIBM_REL + u`` (plus its own
        quotient), the products and differences ``u`` each, so ``x`` is off by at
        most ``(LIBM_REL + 5u)(T max(a, b) + 2 epsilon)``, and ``|d f/d x| <= 1``;
        expm1 adds ``LIBM_REL``.  An infinite a or b only occurs with an exact
        f (0 or 1).
        """
        if not self.replace:
            # the integer products D, B are exact below 2^53, else rounded (u each)
            inexact = (u + 1.0) * (v + 1.0 + T) >= 2.0**53
            return np.where(inexact, 2.1 * 2.0**-53, 0.0) + 4.1 * 2.0**-53
        with np.errstate(divide="ignore"):
            a = np.log1p(1.0 / u.astype(float))
            b = np.log1p(1.0 / v.astype(float))
        big = np.maximum(np.where(np.isfinite(a), a, 0.0), np.where(np.isfinite(b), b, 0.0))
        out: FloatArray = (LIBM_REL + 6.0 * 2.0**-53) * (T * big + 2.0 * epsilon + 2.0) + LIBM_REL
        return out

    def _divergence_factor(
        self, u: npt.ArrayLike, v: npt.ArrayLike, T: int | IntArray, epsilon: npt.ArrayLike
    ) -> RowFunction:
        """The factor ``f(rows, k) = 1 - e^epsilon Q(k)/P(k)`` (its positive part is summed) for the rows
        (u, v, epsilon): P is the law of o_a = k under x, Q under its neighbour x'
        (one a-record turned into b), and each divergence term is ``P(k) f(k)``.
        ``k`` must lie in the support of P."""
        u = np.asarray(u, dtype=float)
        v = np.asarray(v, dtype=float)
        epsilon = np.broadcast_to(np.asarray(epsilon, dtype=float), u.shape)
        if self.replace:
            Tf = np.broadcast_to(np.asarray(T, dtype=float), u.shape)

            def factor(rows: IntArray, k: np.ndarray) -> FloatArray:
                lr = self.log_ratio(u[rows], v[rows], k, Tf[rows] - k)
                with np.errstate(invalid="ignore", over="ignore"):
                    f = -np.expm1(epsilon[rows] - lr)  # < 0 off the positive set (the sum clips)
                out: FloatArray = np.nan_to_num(f, nan=0.0, neginf=-1.0)  # nan only where P(k) = 0
                return out

            return factor
        # Q/P = (u + 1 - o_a)(v + 1) / ((u + 1)(v + 1 - o_b)) with o_b = T - o_a:
        # a rational function, so no logarithm is needed; o_b <= v on the
        # support, so the denominator is >= 1.  Near the threshold f = 1 - e^eps Q/P
        # is a small difference of numbers near 1, so it is formed from exact
        # integer products and e^eps in double-double (see _factor_error):
        # f = (D - e^eps B) / D, D = (k + shift) good, B = (v + 1)(good - k).
        good = u + 1.0
        vp1 = v + 1.0
        shift = v + 1.0 - T
        vals, which = np.unique(epsilon, return_inverse=True)  # e^eps to 40 digits, rounded: within u (+1e-39) of it
        e_hi = np.array([exp_double(float(val))[0] for val in vals])[which.reshape(u.shape)]

        def rational_factor(rows: IntArray, k: np.ndarray) -> FloatArray:
            # unclipped (< 0 off the positive set): the tail sum clips, and counts the
            # factor's error only where it may be positive
            g = good[rows]
            D = (k + shift[rows]) * g  # exact integers below 2^53
            B = vp1[rows] * (g - k)
            # B = 0 (Q = 0 there) must stay a zero product when e^eps overflows to inf
            with np.errstate(invalid="ignore"):
                scaled = e_hi[rows] * B
            out: FloatArray = (D - np.where(B == 0.0, 0.0, scaled)) / D
            return out

        return rational_factor

    def binary_threshold(self, u: IntArray, v: IntArray, T: int | IntArray, epsilon: FloatArray) -> IntArray:
        """Smallest o_a that can have log r > epsilon (one below the closed-form
        root, so rounding can only add a zero term, never drop a positive one:
        the first positive term is ``floor(root) + 1``, and the computed root,
        a few roundings of numbers below 2^53, is off by far less than 1)."""
        uf = u.astype(float)
        vf = v.astype(float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.replace:
                a = np.log1p(1.0 / uf)
                b = np.log1p(1.0 / vf)
                # K a - (T - K) b > epsilon  <=>  K > (epsilon + T b) / (a + b)
                k = (epsilon + T * b) / (a + b)
                k = np.where(np.isinf(a) & np.isfinite(b), 0.0, k)
                k = np.where(np.isinf(b), T - 1.0, k)
            else:
                em = np.exp(-epsilon)
                # (u+1)(v+1-T+K) > e^epsilon (v+1)(u+1-K), divided through by e^epsilon
                k = ((vf + 1) * (uf + 1) - em * (uf + 1) * (vf + 1 - T)) / (em * (uf + 1) + (vf + 1))
        k = np.nan_to_num(np.where(np.isposinf(k), T, k), nan=0.0, neginf=0.0)
        out: IntArray = np.floor(k).astype(np.int64)
        return out

    def _log_pair_divergence_grid(self, u: IntArray, v: IntArray, n: int, T: int, epsilon: FloatArray) -> LogEnclosure:
        """m > 2: sum over the joint law of (o_a, o_b) on the full grid, with the
        error bounds of :func:`.sampling_grid.log_joint_ab` and :func:`.sampling_grid.log_ratio_error`
        (:func:`~smoothdp_nb.core.numerics.divergence.log_hockey_stick_enclosure` on the
        grid, Q given through the likelihood ratio)."""
        B, E = u.size, epsilon.size
        cells = B * (T + 1) ** 2
        if cells * E > 20 * MAX_CELLS:  # ~ a minute of vector work
            raise ComputationTooLarge(
                f"exact profile for m > 2 needs ~{cells * E:.3g} grid cells "
                f"({B} neighbour pairs x (T+1)^2 with T={T}); use fewer categories, smaller n, "
                "or method='monte-carlo'"
            )
        lo = np.empty((B, E))
        hi = np.empty((B, E))
        chunk = max(1, MAX_CELLS // (T + 1) ** 2 // 4)
        oa = np.arange(T + 1, dtype=float)[:, None]
        ob = np.arange(T + 1, dtype=float)[None, :]
        err_p = log_joint_error(n, T)
        for s in range(0, B, chunk):
            uu = u[s : s + chunk, None, None].astype(float)
            vv = v[s : s + chunk, None, None].astype(float)
            rest = n - 1 - uu - vv
            logp = log_joint_ab(self.replace, uu, vv, rest, n, T, oa[None], ob[None])
            lr = self.log_ratio(uu, vv, oa[None], ob[None])
            err_lr = log_ratio_error(self.replace, uu, vv, oa[None], ob[None], T)
            lp = logp.reshape(logp.shape[0], -1)
            lrr = np.broadcast_to(lr, logp.shape).reshape(lp.shape)
            elr = np.broadcast_to(err_lr, logp.shape).reshape(lp.shape)
            enc = log_divergence_terms_enclosure(lp, err_p, np.where(np.isfinite(lp), lrr, np.nan), elr, epsilon)
            lo[s : s + chunk], hi[s : s + chunk] = enc.lower, enc.upper
        return LogEnclosure(lo, hi)


def _label_index(cats: np.ndarray, data: np.ndarray) -> IntArray:
    order = np.argsort(cats, kind="stable")
    sorted_cats = cats[order]
    pos = np.searchsorted(sorted_cats, data)
    pos = np.clip(pos, 0, len(cats) - 1)
    if np.any(sorted_cats[pos] != data):
        bad = data[sorted_cats[pos] != data][0]
        raise ValueError(f"data contains the label {bad!r}, which is not in categories")
    return order[pos]


def _log_multinomial(outs: IntArray, p: FloatArray) -> FloatArray:
    T = outs.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(outs > 0, outs * np.log(p)[None, :], 0.0)
    out: FloatArray = gammaln(T + 1.0) - gammaln(outs + 1.0).sum(axis=1) + terms.sum(axis=1)
    return out
