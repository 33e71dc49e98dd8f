"""The sampling-average mechanism on a finite value grid.

* :class:`SamplingAverage` -- Algorithm 3 of *Smoothed Differential Privacy*
  (Liu, Wang, Xia): draw ``T = ceil(eta n)`` records without replacement and
  publish their sum (equivalently their mean), or the mean rounded to the
  grid step (the 8-bit SGD experiment of Appendix G.2).

The quantized noise laws of its experiments (Definition 5) and the continuous
limit of Theorem 4 are in :mod:`smoothdp_nb.core.smoothed.quantized`; the tables in
:mod:`.average_sums` and :mod:`.average_profile`.

Exact privacy profile
---------------------
Records take values on a grid ``g_0 < ... < g_{m-1}``.  Each value is written
``g_j = g_0 + step * w_j`` with integer weights ``w_j`` (``w_j = j`` on an
evenly spaced grid; otherwise the exact rational lattice spanned by the
binary floats), so a sum of T records is ``T g_0 + step * s`` with an integer
``s`` in ``[0, T w_max]``.

Neighbours replace one record of value ``a`` by any other grid value ``b``.
Let ``A_t(s)`` count the t-subsets of the *other* ``n - 1`` records with weight
sum ``s``.  The T-subsets of x either avoid the replaced record or contain it,
so

    P_x(s)  = (A_T(s) + A_{T-1}(s - w_a)) / C(n, T),
    P_x'(s) = (A_T(s) + A_{T-1}(s - w_b)) / C(n, T),

i.e. ``(1 - T/n) R + (T/n) (w_a + S)`` with R, S the laws of T and T-1 draws
from the other records.  The tables ``A_t`` are count-and-sum dynamic
programmes over the occupied grid values (one binomial convolution per
value), kept in floating point with one exact log-scale per row (every term is
non-negative, so there is no cancellation).  The "leave one record of value a
out" tables for all occupied a come from a divide-and-conquer over the values,
``O(k log k)`` convolution steps for k occupied values instead of ``k^2``.
The hockey-stick divergence of the two explicit pmfs is then
:func:`smoothdp_nb.core.numerics.divergence.log_hockey_stick`.

On evenly spaced grids (whenever the counts stay below ~2^130, e.g. n = 484,
T = 22) the tables are exact integer counts instead
(:mod:`smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables`: the removal of one record is a
polynomial division, exact in modular arithmetic), and the search over (a, b)
runs on those counts with rigorous bounds, only the surviving pairs being
recomputed in log space (``SamplingAverage._log_profile_counts``).  Otherwise
the divide-and-conquer tables span only the occupied range, and the search
runs in one linear scale: every replacement b is a window of one array per
(a, epsilon), whole groups of 32 replacements (and whole removed values a, for
the other direction) are skipped when a proven upper bound cannot beat the
best pair found, and the winning pairs are recomputed in log space.  Deltas
below ~1e-280 of the largest probability use the all-pairs log path (see
``SamplingAverage._log_profile_pruned``).

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 3, Definition 5, Theorem 4.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.divergence import log_hockey_stick_enclosure
from smoothdp_nb.core.numerics.enclosures import (
    LGAMMA_REL,
    LIBM_REL,
    LogEnclosure,
    U,
    fraction_up,
    gamma,
    log_fraction_enclosure,
)
from smoothdp_nb.core.numerics.validation import as_histograms, as_int, as_rng
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, ComputationTooLarge, Estimate, check_budget
from smoothdp_nb.core.smoothed.mechanisms.base import MAX_CELLS, Mechanism
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import (
    LeaveOneOutR,
    exact_path_applies,
    leave_one_out_counts,
    profile_seconds,
)
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.pairs import candidate_pairs
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.sums import (
    EvenSums,
    GeneralSums,
    Sums,
    SumTable,
    check_grid,
    group_logsumexp,
    lattice,
    leave_one_out,
    log_comb,
    round_half_away,
    sampling_average_units,
)
from smoothdp_nb.core.smoothed.mechanisms.size import SampleSize, sampling_size_spec

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SamplingAverage", "sampling_average_units"]  # (the cost model lives in .average_sums)
_OUTPUTS = ("sum", "rounded_mean")
# Below this linear-scale value (relative to the largest probability), the fast
# profile path hands over to the all-pairs log-space path.
_LINEAR_FLOOR = 1e-280


# ---------------------------------------------------------------------------
# the mechanism
# ---------------------------------------------------------------------------
class SamplingAverage(SampleSize, Mechanism):
    """Sampling-average mechanism M_A on a finite value grid (Algorithm 3).

    Draw ``T`` of the ``n`` records without replacement and publish the sum of
    their values (``output="sum"``; the same information as the exact mean
    ``sum / T``), or the mean rounded to the nearest multiple of the grid
    step with ties away from zero (``output="rounded_mean"``; MATLAB
    ``round``, as in the 8-bit SGD experiment of Appendix G.2).

    A :class:`~smoothdp_nb.core.smoothed.mechanisms.Mechanism` whose categories are the
    grid values (a database is its histogram over the grid).

    Parameters
    ----------
    eta : float, str, Decimal or Fraction, optional
        Sampling rate in (0, 1]; ``T = ceil(eta n)`` computed exactly from the
        decimal value.
    T : int, optional
        Fixed sample size (give exactly one of eta and T).
    grid : array_like of float
        The possible record values: sorted, distinct, in [-1, 1].  Databases
        are histograms of counts over this grid.
    output : {"sum", "rounded_mean"}
        What is published.  ``"rounded_mean"`` needs an evenly spaced grid
        whose values are integer multiples of its step (e.g. ``(i-128)/256``).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 3.

    Examples
    --------
    >>> m = SamplingAverage(T=2, grid=[0.0, 0.5, 1.0])
    >>> m.sample_size(5)
    2
    """

    def __init__(self, eta: object = None, *, T: int | None = None, grid: npt.ArrayLike, output: str = "sum") -> None:
        self._rate, self.eta, self.T = sampling_size_spec(eta, T)
        if output not in _OUTPUTS:
            raise ValueError(f"output must be 'sum' or 'rounded_mean', got {output!r}")
        self.output = output
        self.grid = check_grid(grid)
        self.grid.setflags(write=False)
        self._w, self._step, self._even = lattice(self.grid)
        if output == "rounded_mean":
            if not self._even:
                raise ValueError("grid must be evenly spaced for output='rounded_mean'")
            k0 = self.grid[0] / self._step
            if abs(k0 - round(k0)) > 1e-6:
                raise ValueError(
                    "grid must consist of integer multiples of its step for output='rounded_mean' "
                    f"(the first value is {k0:.6g} steps from 0)"
                )
            self._k0 = round(k0)

    # -- description -----------------------------------------------------
    def __repr__(self) -> str:
        return f"SamplingAverage({self._size_text()}, grid=<{self.grid.size} values>, output={self.output!r})"

    def _key(self) -> tuple[Any, ...]:
        return (self._rate, self.T, self.output, self.grid.tobytes())

    # -- the Mechanism protocol ------------------------------------------------
    dp_delta_depends_on_epsilon = False

    @property
    def categories(self) -> int:
        """The number of grid values (a database is a histogram over the grid)."""
        return int(self.grid.size)

    def _dp_delta_enclosure(
        self,
        n: int,
        epsilon: np.ndarray,
        categories: int | None = None,
        budget: float = math.inf,
    ) -> LogEnclosure:
        """Proven bounds on log(T/n) (Theorem 4; Arb).

        The changed record is sampled with probability T/n, and with all other
        records at one grid value and the changed one at another the outputs are
        disjoint (for the sum; for the rounded mean T/n remains an upper bound,
        attained when the grid step separates the two means)."""
        llo, lhi = log_fraction_enclosure(self.sampled_fraction(n))
        return LogEnclosure(np.full(np.shape(epsilon), llo), np.full(np.shape(epsilon), min(lhi, 0.0)))

    def _delta_upper_bound(self, n: int, epsilon: np.ndarray) -> np.ndarray:
        """T/n rounded up: the outputs differ in law only when the changed record is sampled."""
        return np.full(np.shape(epsilon), fraction_up(self.sampled_fraction(n)))

    def log_output_pmf(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(output values in increasing order, their log-probabilities), zeros omitted."""
        h = np.asarray(hist, dtype=np.int64)
        n = int(h.sum())
        T = self.sample_size(n)
        sums = self._sums(T)
        self._guard(T, sums.width, int(np.count_nonzero(h)))
        tab = SumTable.empty(T, sums)
        for j in np.nonzero(h)[0]:
            tab = tab.times(sums, int(j), int(h[j]))
        logp = tab.log_row(T) - log_comb(n, T)
        if self.output == "sum":
            vals = sums.values(T)
        else:
            logp, vals = self._rounded(logp[None], T)
            logp = logp[0]
        keep = np.isfinite(logp)
        return vals[keep], logp[keep]

    def _profile_cost(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> Estimate:
        """Estimated seconds of ``count`` profiles, before seeing the data, and the
        bytes of one profile's arrays (:func:`.average_sums.sampling_average_units`).

        Evenly spaced grids within the exact-count error bound: the work-unit
        model of :func:`~smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables.profile_seconds`
        with every grid value occupied (span ``len(grid) - 1``, ``min(n,
        len(grid))`` occupied values: an upper estimate).  Otherwise from the
        size of the count-and-sum tables of one profile (see :meth:`_guard`):
        ~3e-9 s per table cell, plus ~3 ms of fixed work per histogram
        (measured on 3-5 value grids, T <= 4, n <= 40, with the machine
        loaded: an upper estimate)."""
        T = self.sample_size(n)
        K = self.grid.size
        if self._even and exact_path_applies(n, T):
            seconds = count * profile_seconds(n, T, K, K - 1, min(n, K), n_epsilon)
            return Estimate(seconds, sampling_average_units(K, T, min(n, K))[1])
        k = min(m, n)
        width = self._sums(T).width
        per = min(T + 1.0, 1.0 + n / k)
        cells = (T + 1) * width * k * max(1.0, math.log2(max(k, 2))) * per
        seconds = count * (3e-3 + 3e-9 * cells + 1e-4 * n_epsilon * k)
        return Estimate(seconds, sampling_average_units(K, T, min(n, K))[1])

    def _hist(self, hist: Any) -> np.ndarray:
        h, single = as_histograms(hist)
        if not single:
            raise ValueError("hist must be a single histogram of shape (len(grid),) here")
        if h.shape[1] != self.grid.size:
            raise ValueError(f"hist must have one count per grid value ({self.grid.size}), got {h.shape[1]}")
        return np.asarray(h[0])

    # -- outputs -----------------------------------------------------------
    def _sums(self, T: int) -> Sums:
        """The support of sums of up to T grid values (cached per T)."""
        cache: dict[int, Sums] = self.__dict__.setdefault("_sums_cache", {})
        if T not in cache:
            if isinstance(self._step, float):  # evenly spaced: a float step
                cache[T] = EvenSums(self._w, T, float(self.grid[0]), self._step)
            else:
                cache[T] = GeneralSums(self._w, T, self._step)
        return cache[T]

    def _rounded_index(self, s: np.ndarray, T: int) -> np.ndarray:
        """Rounded mean, in steps from the first grid value, of weight sums s."""
        s = np.asarray(s, dtype=np.int64)
        return np.asarray(round_half_away(T * self._k0 + s, T) - self._k0)

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> float | np.ndarray:
        """Draw the mechanism's output for a database given by its grid histogram.

        Returns a float, or an array of ``size`` independent outputs (the same
        numbers as the ``value`` column of :meth:`output_pmf`).
        """
        h = self._hist(hist)
        T = self.sample_size(int(h.sum()))
        gen = as_rng(rng)
        shape = None if size is None else (as_int(size, "size", minimum=1),)
        counts = np.atleast_2d(gen.multivariate_hypergeometric(h, T, size=shape))
        if self._even:
            s = counts @ self._w
            if self.output == "sum":
                vals = T * float(self.grid[0]) + self._step * s
            else:
                vals = (self._rounded_index(s, T) + self._k0) * self._step
        else:
            vals = np.array([float(sum(int(c) * v for c, v in zip(row, self._w)) * self._step) for row in counts])
        return float(vals[0]) if size is None else vals

    def output_pmf(self, hist: object) -> pd.DataFrame:
        """Exact output distribution of the mechanism on one database.

        Returns
        -------
        pandas.DataFrame
            One row per possible output, in increasing order: ``value``,
            ``probability`` and ``log_probability`` (outputs of probability 0
            are omitted).
        """
        import pandas as pd  # deferred: a profile or a smoothed delta needs no data frame

        vals, logp = self.log_output_pmf(self._hist(hist))
        return pd.DataFrame({"value": vals, "probability": np.exp(logp), "log_probability": logp})

    def _rounded(self, logp: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
        """Post-process sum pmfs (last axis) to rounded-mean pmfs (on the grid)."""
        grp = self._rounded_index(np.arange(logp.shape[-1]), T)
        # the rounded mean is non-decreasing in the sum and takes every grid value
        starts = np.searchsorted(grp, np.arange(self.grid.size), side="left")
        return group_logsumexp(logp, starts), self.grid.copy()

    def _guard(self, T: int, width: int, k: int, n: int | None = None) -> None:
        """Refuse computations whose dynamic programme is too large.

        Each multiplication by ``(1 + z y^w)^c`` costs ``(T + 1) width (min(c, T) + 1)``
        cells; the output pmf needs k of them, the privacy profile (divide and
        conquer over the k occupied values, n records) about ``k log2 k``
        with ``c ~ n / k``."""
        if n is None:
            cells = (T + 1) ** 2 * width * max(1, k) * max(1.0, math.log2(max(k, 2)))
        else:
            per = min(T + 1.0, 1.0 + n / max(k, 1))
            cells = (T + 1) * width * max(1, k) * max(1.0, math.log2(max(k, 2))) * per
        if cells > 40 * MAX_CELLS:
            raise ComputationTooLarge(
                f"the exact sampling-average computation needs ~{cells:.3g} cells "
                f"(T={T}, {width} possible sums, {k} occupied grid values); use a smaller T or grid"
            )

    # -- exact privacy profile ---------------------------------------------------
    def _log_profile_bounds(
        self, h: np.ndarray, n: int, epsilon: np.ndarray, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> np.ndarray:
        """Proven (lower, upper) bounds on log delta_eps(x) for histograms over the grid,
        all of size n: shape (2, k, E).

        Parameters
        ----------
        h : int array (k, len(grid))
        n : the common database size
        epsilon : float array (E,)
        budget : float
            Seconds.  The run time of all distinct histograms is estimated
            before the first (:meth:`_histogram_seconds`) and the batch refused
            (:class:`~smoothdp_nb.core.runtime.budget.ComputationTooLarge`) when it
            exceeds ``budget`` or one profile's arrays the memory budget.

        Returns
        -------
        ndarray (k, E) of natural logs; neighbours replace one record by any
        other grid value, and both directions of the divergence are taken.
        """
        h = np.asarray(h, dtype=np.int64)
        if h.ndim != 2 or h.shape[1] != self.grid.size:
            raise ValueError(f"hist must have one count per grid value ({self.grid.size}), got shape {h.shape}")
        epsilon = np.asarray(epsilon, dtype=float)
        T = self.sample_size(n)
        distinct = h if h.shape[0] == 1 else np.unique(h, axis=0)  # (np.unique's axis path costs ~0.5 ms)
        seconds = sum(self._histogram_seconds(row, n, T, epsilon.size) for row in distinct)
        check_budget(
            Estimate(seconds, sampling_average_units(self.grid.size, T, 1)[1]),
            budget,
            f"the sampling-average profile of {len(distinct)} databases (n={n}, T={T}, {self.grid.size} grid values)",
            "use fewer databases, a smaller T or a coarser grid",
            parameter="T",
        )
        out = np.full((2, h.shape[0], epsilon.size), -np.inf)
        cache: dict[bytes, np.ndarray] = {}
        for i, row in enumerate(h):
            key = row.tobytes()
            if key not in cache:
                cache[key] = self._log_profile_one(row, n, T, epsilon)
            out[:, i] = cache[key]
        return out

    def _log_profile_enclosure(self, hists: np.ndarray, n: int, epsilon: np.ndarray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x): every pair divergence that can attain
        the maximum is enclosed by
        :func:`~smoothdp_nb.core.numerics.divergence.log_hockey_stick_enclosure` with the
        error bound of the output laws set by :meth:`_log_profile_one` (the pruning to
        those pairs uses linear-scale values with a margin of 1e-6 relative,
        far above their rounding errors); clipped to T/n rounded up."""
        lo, hi = self._log_profile_bounds(hists, n, epsilon)
        cap = log_fraction_enclosure(self.sampled_fraction(n))[1]
        return LogEnclosure(np.minimum(lo, cap), np.minimum(hi, cap))

    def _histogram_seconds(self, h: np.ndarray, n: int, T: int, n_epsilon: int) -> float:
        """Estimated seconds of one profile: the exact-count model
        (:func:`~smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables.profile_seconds`) on the
        occupied range of ``h``, or the divide-and-conquer tables' cell count."""
        occ = np.flatnonzero(h)
        if self._even and exact_path_applies(n, T):
            span = int(occ[-1] - occ[0])
            return profile_seconds(n, T, self.grid.size, span, occ.size, n_epsilon)
        return self._profile_cost(n, self.grid.size, 1, n_epsilon).seconds

    #: proven absolute error bound of the output laws' logs of the profile being computed
    #: (set by _log_profile_one before the pair divergences that use it)
    _law_err: float = 0.0

    def _log_profile_one(self, h: np.ndarray, n: int, T: int, epsilon: np.ndarray) -> np.ndarray:
        sums = self._sums(T)
        occ = [int(j) for j in np.nonzero(h)[0]]
        self._guard(T, sums.width, len(occ), n)
        lc = log_comb(n, T)
        # the error of lc (three lgamma values and two subtractions)
        lgs = math.lgamma(n + 1.0) + math.lgamma(T + 1.0) + math.lgamma(n - T + 1.0)
        err_lc = (LGAMMA_REL + 2 * U) * lgs + 3e-15
        tables: dict[int, SumTable] = {}
        if self._even:
            # count-and-sum tables over the occupied range only (weights relative
            # to the smallest occupied value), then placed on the full sum axis
            lo, hi = occ[0], occ[-1]
            occ_arr = np.asarray(occ, dtype=np.int64)
            counts = leave_one_out_counts(occ_arr - lo, h[occ_arr], T)
            if counts is not None:  # exact integer counts within 2 ulp: their logs carry 4.1u plus LIBM_REL
                self._law_err = err_lc + 4.1 * U + (LIBM_REL + 2 * U) * (lgs + 1.0)
                return self._log_profile_counts(occ_arr, counts, T, epsilon, sums, lc)
            logR = np.full((len(occ), sums.width), -np.inf)
            logS = np.full((len(occ), sums.width), -np.inf)
            loc = EvenSums(np.arange(hi - lo + 1), T, 0.0, 1.0)
            leave_one_out(SumTable.empty(T, loc), loc, [(j - lo, int(h[j])) for j in occ], tables)
            for i, a in enumerate(occ):
                logR[i, T * lo : T * lo + loc.width] = tables[a - lo].log_row(T) - lc
                logS[i, (T - 1) * lo : (T - 1) * lo + loc.width] = tables[a - lo].log_row(T - 1) - lc
        else:
            leave_one_out(SumTable.empty(T, sums), sums, [(j, int(h[j])) for j in occ], tables)
            logR = np.stack([tables[a].log_row(T) - lc for a in occ])  # samples avoiding the record
            logS = np.stack([tables[a].log_row(T - 1) - lc for a in occ])  # samples containing it
        # the divide-and-conquer tables: at most len(occ) + 1 products per table, each
        # a sum of at most T + 1 non-negative terms (gamma_{2T+6}) with exp factors
        # of arguments up to 2 log n! (LIBM_REL each) and log-binomials (3 LGAMMA_REL log n!)
        lfn = math.lgamma(n + 1.0)
        rho = float(gamma(2 * T + 6)) + LIBM_REL * (3.0 + 2.0 * lfn) + 3 * LGAMMA_REL * lfn + 3e-15
        self._law_err = err_lc + (len(occ) + 2) * rho + (LIBM_REL + 2 * U) * (lgs + 1.0)
        if self._even and T >= 1:
            res = self._log_profile_pruned(occ, logR, logS, T, epsilon, sums)
            if res is not None:
                return res
        return self._log_profile_all(occ, logR, logS, T, epsilon, sums)

    def _log_profile_counts(
        self,
        occ: np.ndarray,
        counts: tuple[LeaveOneOutR, np.ndarray, np.ndarray],
        T: int,
        epsilon: np.ndarray,
        sums: Sums,
        lc: float,
    ) -> np.ndarray:
        """The profile from exact leave-one-out counts (evenly spaced grids).

        :func:`~smoothdp_nb.core.smoothed.mechanisms.sampling_average.pairs.candidate_pairs` narrows the
        (removed value, replacement) pairs down to those that can attain the
        maximum, with rigorous linear-scale bounds on exact counts; those
        pairs are then computed in log space, as in :meth:`_log_profile_all`.
        """
        R, S, P = counts
        lo = int(occ[0])
        m = self.grid.size
        group = None
        if self.output == "rounded_mean":

            def group(u0: int, length: int) -> np.ndarray:
                grp = self._rounded_index(T * lo + u0 + np.arange(length), T)
                return np.concatenate([[0], np.nonzero(np.diff(grp))[0] + 1])

        pairs = candidate_pairs(R, S, P, occ - lo, np.arange(m) - lo, epsilon, T, group)
        W = R.shape[1]
        best = np.full(epsilon.size, -np.inf)
        best_lo = np.full(epsilon.size, -np.inf)
        for i, bs in pairs:
            logR = np.full(sums.width, -np.inf)
            logS = np.full(sums.width, -np.inf)
            with np.errstate(divide="ignore"):
                logR[T * lo : T * lo + W] = np.log(R[i]) - lc
                logS[(T - 1) * lo : (T - 1) * lo + W] = np.log(S[i]) - lc
            d1, d2 = self._pair_divergences(logR, logS, int(occ[i]), bs, T, epsilon, sums)
            best = np.maximum(best, np.maximum(d1.upper.max(axis=0), d2.upper.max(axis=0)))
            best_lo = np.maximum(best_lo, np.maximum(d1.lower.max(axis=0), d2.lower.max(axis=0)))
        return np.stack([np.minimum(best_lo, 0.0), np.minimum(best, 0.0)])

    def _pair_divergences(
        self, logR_a: np.ndarray, logS_a: np.ndarray, a: int, bs: Any, T: int, epsilon: np.ndarray, sums: Sums
    ) -> tuple[LogEnclosure, LogEnclosure]:
        """log d_eps(P_x, P_x') and log d_eps(P_x', P_x) for x' = x with one record a -> b,
        every b in ``bs`` (rows), computed in log space (the reference computation),
        enclosed: the laws carry the error bound ``self._law_err`` of
        :meth:`_log_profile_one`, the log-add-exp of the two parts ``2u`` of its
        result and ``2 LIBM_REL``, the rounded-mean grouping ``gamma_W`` and
        ``2 LIBM_REL (1 + 2 max |log p|)``."""
        rows = np.concatenate([[a], np.asarray(bs, dtype=np.int64)])
        lall = np.logaddexp(logR_a[None, :], sums.shift_all(logS_a, -np.inf, rows))
        live = np.flatnonzero(np.isfinite(lall).any(axis=0))  # outputs some law reaches: the others add no term
        if self.output == "sum" and live.size:
            lall = lall[:, live[0] : live[-1] + 1]
        lp = lall[0]
        lq = lall[1:]
        fin = lall[np.isfinite(lall)]
        top = float(np.max(np.abs(fin), initial=0.0))
        err = self._law_err + 2 * U * top + 2 * LIBM_REL
        if self.output == "rounded_mean":
            lp = self._rounded(lp[None], T)[0][0]
            lq = self._rounded(lq, T)[0]
            err += float(gamma(lall.shape[-1] + 2)) + 2 * LIBM_REL * (1 + 2 * top) + 2 * U * top
        lpb = np.broadcast_to(lp, lq.shape)
        return (
            log_hockey_stick_enclosure(lpb, lq, epsilon, err, err),
            log_hockey_stick_enclosure(lq, lpb, epsilon, err, err),
        )

    def _log_profile_all(
        self, occ: list[int], logR: np.ndarray, logS: np.ndarray, T: int, epsilon: np.ndarray, sums: Sums
    ) -> np.ndarray:
        """Every removed value a against every replacement b (reference path)."""
        m = self.grid.size
        best = np.full(epsilon.size, -np.inf)
        best_lo = np.full(epsilon.size, -np.inf)
        for i, a in enumerate(occ):
            bs = [b for b in range(m) if b != a]
            d1, d2 = self._pair_divergences(logR[i], logS[i], a, bs, T, epsilon, sums)
            best = np.maximum(best, np.maximum(d1.upper.max(axis=0), d2.upper.max(axis=0)))
            best_lo = np.maximum(best_lo, np.maximum(d1.lower.max(axis=0), d2.lower.max(axis=0)))
        return np.stack([np.minimum(best_lo, 0.0), np.minimum(best, 0.0)])

    def _fast_pairs(
        self,
        i: int,
        a: int,
        bs: np.ndarray,
        r: np.ndarray,
        st: np.ndarray,
        own_all: np.ndarray,
        lo: int,
        hi: int,
        olo: int,
        ohi: int,
        ee: np.ndarray,
        c: np.ndarray,
        w: np.ndarray,
        ws: int,
        y: np.ndarray,
        rounded: bool,
        gstarts: np.ndarray | None,
        forward: bool,
    ) -> np.ndarray:
        """Linear-scale divergences, one direction, of the pairs (a -> b), b in bs: (len(bs), E)."""
        E = ee.size
        vals = np.empty((bs.size, E))
        if rounded or forward:
            Sb = np.zeros((bs.size, ohi - olo + 1))
            for j, b in enumerate(bs):
                Sb[j, lo + w[b] - olo : hi + 1 + w[b] - olo] = st[i]
            rr = r[i, olo : ohi + 1]
            own = own_all[i, olo : ohi + 1]
        if rounded and gstarts is not None:
            P = np.add.reduceat(rr + own, gstarts)
            Q = np.add.reduceat(Sb, gstarts, axis=1) + np.add.reduceat(rr, gstarts)[None, :]
            for k in range(E):
                if forward:
                    vals[:, k] = np.maximum(P[None, :] - ee[k] * Q, 0.0).sum(axis=1)
                else:
                    vals[:, k] = np.maximum(Q - ee[k] * P[None, :], 0.0).sum(axis=1)
        elif forward:
            for k in range(E):
                x = own - c[k] * rr
                vals[:, k] = np.maximum(x[None, :] - ee[k] * Sb, 0.0).sum(axis=1)
        else:
            for k in range(E):
                Y = np.lib.stride_tricks.sliding_window_view(y[i, k], ws)[lo + w[bs]]  # (nb, ws)
                vals[:, k] = np.maximum(st[i][None, :] - Y, 0.0).sum(axis=1)
        return vals

    def _log_profile_pruned(
        self, occ: list[int], logR: np.ndarray, logS: np.ndarray, T: int, epsilon: np.ndarray, sums: Sums
    ) -> np.ndarray | None:
        """Same result as :meth:`_log_profile_all` (evenly spaced grids), faster.

        In one common linear scale, with ``r = (1 - T/n) R`` (samples avoiding
        the replaced record) and ``s = (T/n) S`` (samples containing it, before
        adding its value), ``P = r + s(. - w_a)`` and ``Q_b = r + s(. - w_b)``, so

        * ``d(Q_b, P) = sum_u [s(u) - y_a(u + w_b)]_+`` with
          ``y_a = (e^epsilon - 1) r + e^epsilon s(. - w_a)``: one array per (a, epsilon),
          and every b is a window of it (no copy), restricted to the support
          of s;
        * ``d(P, Q_b) <= U_a = sum [s(. - w_a) - (e^epsilon - 1) r]_+`` (free of b);
          this direction is evaluated only when ``U_a`` can beat the best value
          found so far (a's with the largest ``U_a`` first).

        Rounded-mean outputs group both pmfs (post-processing) and compare the
        grouped laws, with the same pruning bound (post-processing can only
        decrease the divergence).  Linear-scale sums of non-negative terms are
        only used to locate the maximising pairs: every pair within 1e-6 of
        the best is recomputed in log space with :func:`_log_hockey_stick_both`,
        so the returned value is the reference computation's.  Returns None (use
        the reference path) when the values are too small for one linear scale.
        """
        m = self.grid.size
        E = epsilon.size
        W = sums.width
        w = np.asarray(self._w, dtype=np.int64)
        wmax = int(w[-1])
        fin = np.concatenate([logR[np.isfinite(logR)], logS[np.isfinite(logS)]])
        if fin.size == 0:
            return None
        M = float(fin.max())
        ee = np.exp(epsilon)
        c = np.expm1(epsilon)
        if not np.all(np.isfinite(ee)):
            return None
        with np.errstate(under="ignore"):
            r = np.exp(logR - M)  # (A, W)
            s = np.exp(logS - M)
        # support of s (the same for every a up to the removed record)
        nzs = np.nonzero(s.any(axis=0))[0]
        if nzs.size == 0:
            return None
        lo, hi = int(nzs[0]), int(nzs[-1])
        ws = hi - lo + 1
        st = s[:, lo : hi + 1]
        # live outputs: supp r union supp s(. - w_b), b on the grid
        nzr = np.nonzero(r.any(axis=0))[0]
        olo = min(lo, int(nzr[0])) if nzr.size else lo
        ohi = min(W - 1, max(hi + wmax, int(nzr[-1]) if nzr.size else hi))
        rounded = self.output == "rounded_mean"
        if rounded:
            grp = self._rounded_index(np.arange(olo, ohi + 1), T)
            gstarts = np.concatenate([[0], np.nonzero(np.diff(grp))[0] + 1])
        A = len(occ)
        own_all = np.zeros((A, W))
        for i, a in enumerate(occ):
            own_all[i, lo + w[a] : hi + 1 + w[a]] = st[i]
        U1 = np.stack([np.maximum(own_all - ck * r, 0.0).sum(axis=1) for ck in c], axis=1) * (1 + 1e-9)
        # y[i, k] = (e^epsilon - 1) r + e^epsilon s(. - w_a), padded with +inf past the last output
        y = np.full((A, E, W + wmax + 1), np.inf)
        y[:, :, :W] = c[None, :, None] * r[:, None, :] + ee[None, :, None] * own_all[:, None, :]
        # groups of G consecutive replacements: min of y over each window of G outputs
        G = 32
        ymin = y.copy()
        span = 1
        while span < G:
            ymin[:, :, :-span] = np.minimum(ymin[:, :, :-span], ymin[:, :, span:])
            span *= 2
        gstart = np.arange(0, m, G)
        U2 = np.empty((A, gstart.size, E))
        for i in range(A):
            for k in range(E):
                win = np.lib.stride_tricks.sliding_window_view(ymin[i, k], ws)[lo + w[gstart]]
                U2[i, :, k] = np.maximum(st[i][None, :] - win, 0.0).sum(axis=1)
        U2 = U2 * (1 + 1e-9)
        bidx = np.arange(m)
        best = np.zeros(E)
        found: list[tuple[int, np.ndarray, np.ndarray]] = []
        # (removed value, group) by decreasing bound at the first epsilon, ties by value then group
        ii, gg = np.meshgrid(np.arange(A), np.arange(gstart.size), indexing="ij")
        order = np.lexsort((gg.ravel(), ii.ravel(), -U2[:, :, 0].ravel()))
        items = zip(ii.ravel()[order].tolist(), gg.ravel()[order].tolist())

        def pairs(i: int, bs: np.ndarray, forward: bool) -> np.ndarray:
            # the pair divergences of removed value i against replacements bs, in one direction
            grid_starts = gstarts if rounded else None
            return self._fast_pairs(
                i, occ[i], bs, r, st, own_all, lo, hi, olo, ohi, ee, c, w, ws, y, rounded, grid_starts, forward=forward
            )

        for i in np.argsort(-U1[:, 0]):  # the direction d(P, Q_b): every b at once
            k1 = U1[i] > best
            if not np.any(k1):
                continue
            bs = bidx[bidx != occ[i]]
            vals = pairs(i, bs, forward=True)
            best = np.maximum(best, vals.max(axis=0))
            found.append((i, bs, vals))
        for i, g in items:  # the direction d(Q_b, P), by groups of replacements
            if not np.any(U2[i, g] > best):
                continue
            bs = bidx[gstart[g] : gstart[g] + G]
            bs = bs[bs != occ[i]]
            if bs.size == 0:
                continue
            vals = pairs(i, bs, forward=False)
            best = np.maximum(best, vals.max(axis=0))
            found.append((i, bs, vals))
        if np.any(best < _LINEAR_FLOOR):  # too close to the underflow of the linear scale
            return None
        out = np.full(E, -np.inf)
        out_lo = np.full(E, -np.inf)
        for i, bs, vals in found:
            top = np.any(vals >= best[None, :] * (1 - 1e-6), axis=1)
            if np.any(top):
                d1, d2 = self._pair_divergences(logR[i], logS[i], occ[i], bs[top], T, epsilon, sums)
                out = np.maximum(out, np.maximum(d1.upper.max(axis=0), d2.upper.max(axis=0)))
                out_lo = np.maximum(out_lo, np.maximum(d1.lower.max(axis=0), d2.lower.max(axis=0)))
        return np.stack([np.minimum(out_lo, 0.0), np.minimum(out, 0.0)])
