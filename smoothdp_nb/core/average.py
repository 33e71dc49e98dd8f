"""The sampling-average mechanism on a finite value grid, and quantized noise laws.

* :class:`SamplingAverage` -- Algorithm 3 of *Smoothed Differential Privacy*
  (Liu, Wang, Xia): draw ``T = ceil(eta n)`` records without replacement and
  publish their sum (equivalently their mean), or the mean rounded to the
  grid step (the 8-bit SGD experiment of Appendix G.2).
* :func:`quantized_gaussian` -- Definition 5 (Appendix G.1), for any number
  of bits; :func:`quantized_laplace` -- the same construction for a Laplace law.

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
:func:`smoothdp_nb.core.divergence.log_hockey_stick`.

On evenly spaced grids (whenever the counts stay below ~2^130, e.g. n = 484,
T = 22) the tables are exact integer counts instead
(:mod:`smoothdp_nb.core.average_profile`: the removal of one record is a
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
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from .average_profile import candidate_pairs, exact_path_applies, leave_one_out_counts, profile_seconds
from .budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget
from .divergence import log1mexp, log_hockey_stick, log_hockey_stick_enclosure
from .enclosures import LGAMMA_REL, LIBM_REL, LogEnclosure, U, fraction_up, gamma, log_fraction_enclosure
from .mechanisms import MAX_CELLS, ComputationTooLarge, sampling_size_spec
from .mechanisms.base import Mechanism
from .mechanisms.size import SampleSize
from .validation import as_epsilon, as_histograms, as_int, as_rng

__all__ = ["SamplingAverage", "QuantizedLaw", "quantized_gaussian", "quantized_laplace", "continuous_limit_profile"]

_OUTPUTS = ("sum", "rounded_mean")
# Below this linear-scale value (relative to the largest probability), the fast
# profile path hands over to the all-pairs log-space path.
_LINEAR_FLOOR = 1e-280
# Relative tolerance for recognising an evenly spaced float grid.
_EVEN_RTOL = 1e-9


# ---------------------------------------------------------------------------
# grid handling
# ---------------------------------------------------------------------------
def _check_grid(grid: Any) -> np.ndarray:
    try:
        g = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"grid must be a 1-D array of numbers, got {grid!r}") from None
    if g.ndim != 1 or g.size < 2:
        raise ValueError(f"grid must be a 1-D array of at least 2 values, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("grid must contain finite values")
    if np.any(g < -1) or np.any(g > 1):
        raise ValueError(f"grid values must lie in [-1, 1], got min {g.min()!r}, max {g.max()!r}")
    if np.any(np.diff(g) <= 0):
        raise ValueError("grid must be sorted in increasing order without duplicates")
    return g


def _lattice(g: np.ndarray) -> tuple[np.ndarray, float | Fraction, bool]:
    """Integer weights w (w_0 = 0) and the step when the grid is evenly spaced;
    otherwise the values as exact integers on their common binary lattice and
    ``1/denominator`` as the step."""
    m = g.size
    step = (g[-1] - g[0]) / (m - 1)
    d = np.diff(g)
    if np.all(np.abs(d - step) <= _EVEN_RTOL * step):
        return np.arange(m, dtype=np.int64), float(step), True
    fr = [Fraction(float(x)) for x in g]
    den = 1
    for f in fr:
        den = den * f.denominator // math.gcd(den, f.denominator)
    ints = np.array([int(f * den) for f in fr], dtype=object)
    return ints, Fraction(1, den), False


class _EvenSums:
    """Sums of up to T values of an evenly spaced grid: weight sums 0..T*(m-1)."""

    def __init__(self, w: np.ndarray, T: int, g0: float, step: float):
        self.w = w
        self.width = T * int(w[-1]) + 1
        self.zero = 0
        self.T = T
        self.g0, self.step = g0, step

    def shift(self, arr: np.ndarray, j: int, k: int, fill: float = 0.0) -> np.ndarray:
        """Move the last axis by k records of value j (a new array; fill elsewhere)."""
        sh = k * int(self.w[j])
        out = np.full(arr.shape, fill)
        if sh < self.width:
            out[..., sh:] = arr[..., : self.width - sh]
        return out

    def shift_all(self, arr: np.ndarray, fill: float, rows: np.ndarray | None = None) -> np.ndarray:
        """(len(rows), width): row k is ``arr`` moved by one record of value rows[k] (default: every value)."""
        W = int(self.w[-1])
        padded = np.concatenate([np.full(W, fill), arr])
        windows = np.lib.stride_tricks.sliding_window_view(padded, self.width)
        return np.asarray(windows[W - (self.w if rows is None else self.w[rows])])

    def values(self, t: int) -> np.ndarray:
        return t * self.g0 + self.step * np.arange(self.width)


class _GeneralSums:
    """Sums of up to T values of an arbitrary grid, as exact rationals.

    Positions are the distinct achievable sums (on the common binary lattice
    of the float values), so sums that coincide exactly are one output.
    """

    def __init__(self, ints: np.ndarray, T: int, unit: Fraction):
        vals = [int(v) for v in ints]
        level = {0}
        allsums = {0}
        for _ in range(T):
            level = {x + v for x in level for v in vals}
            allsums |= level
            if len(allsums) > 200_000:
                raise ComputationTooLarge(
                    f"the grid is not evenly spaced and sums of T={T} of its values take more than "
                    "200000 distinct values; use an evenly spaced grid or a smaller T"
                )
        self.pos = sorted(allsums)
        self.index = {p: i for i, p in enumerate(self.pos)}
        self.width = len(self.pos)
        self.zero = self.index[0]
        self.vals = vals
        self.unit = unit
        self._maps: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def _map(self, j: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        key = (j, k)
        if key not in self._maps:
            add = k * self.vals[j]
            src, dst = [], []
            for i, p in enumerate(self.pos):
                q = self.index.get(p + add)
                if q is not None:
                    src.append(i)
                    dst.append(q)
            self._maps[key] = (np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64))
        return self._maps[key]

    def shift(self, arr: np.ndarray, j: int, k: int, fill: float = 0.0) -> np.ndarray:
        src, dst = self._map(j, k)
        out = np.full(arr.shape, fill)
        out[..., dst] = arr[..., src]
        return out

    def shift_all(self, arr: np.ndarray, fill: float, rows: np.ndarray | None = None) -> np.ndarray:
        """(len(rows), width): row k is ``arr`` moved by one record of value rows[k] (default: every value)."""
        which = range(len(self.vals)) if rows is None else rows.tolist()
        return np.stack([self.shift(arr, int(b), 1, fill) for b in which])

    def values(self, t: int) -> np.ndarray:
        return np.array([float(p * self.unit) for p in self.pos])


_Sums = _EvenSums | _GeneralSums
_LogTail = Callable[[np.ndarray], np.ndarray]


def _round_half_away(num: np.ndarray, den: int) -> np.ndarray:
    """round(num / den) with ties away from zero (MATLAB ``round``), exact on integers."""
    a = np.abs(num)
    q = (2 * a + den) // (2 * den)
    return np.asarray(np.sign(num) * q)


# ---------------------------------------------------------------------------
# count-and-sum dynamic programme with per-row log scales
# ---------------------------------------------------------------------------
class _Table:
    """Counts ``A[t, s]`` = exp(scale[t]) * rows[t, s] of t-subsets with weight sum s."""

    __slots__ = ("rows", "scale")

    def __init__(self, rows: np.ndarray, scale: np.ndarray):
        self.rows = rows
        self.scale = scale

    @classmethod
    def empty(cls, tmax: int, sums: _Sums) -> _Table:
        rows = np.zeros((tmax + 1, sums.width))
        rows[0, sums.zero] = 1.0  # the empty sample
        scale = np.full(tmax + 1, -np.inf)
        scale[0] = 0.0
        return cls(rows, scale)

    def times(self, sums: _Sums, j: int, c: int) -> _Table:
        """Multiply the generating function by ``(1 + z y^(g_j))^c`` (c records of value j)."""
        if c == 0:
            return self
        tmax = self.rows.shape[0] - 1
        cmax = min(c, tmax)
        k = np.arange(cmax + 1)
        t = np.arange(tmax + 1)
        src = t[:, None] - k[None, :]
        logc = special.gammaln(c + 1.0) - special.gammaln(k + 1.0) - special.gammaln(c - k + 1.0)
        L = np.where(src >= 0, logc[None, :] + self.scale[np.maximum(src, 0)], -np.inf)
        M = L.max(axis=1)
        Mf = np.where(np.isfinite(M), M, 0.0)
        fac = np.exp(L - Mf[:, None])  # (tmax+1, cmax+1), 0 where unreachable
        new = np.zeros_like(self.rows)
        for kk in range(cmax + 1):
            moved = self.rows[: tmax + 1 - kk] if kk == 0 else sums.shift(self.rows[: tmax + 1 - kk], j, kk)
            new[kk:] += fac[kk:, kk, None] * moved
        top = new.max(axis=1)
        ok = top > 0
        new[ok] /= top[ok, None]
        scale = np.where(ok, Mf + np.log(np.where(ok, top, 1.0)), -np.inf)
        return _Table(new, scale)

    def log_row(self, t: int) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.asarray(np.log(self.rows[t]) + self.scale[t])


def _leave_one_out(table: _Table, sums: _Sums, items: list[tuple[int, int]], out: dict[int, _Table]) -> None:
    """For every (grid index, count) item, store the table of all records with
    one record of that value removed (divide and conquer over the items)."""
    if len(items) == 1:
        j, c = items[0]
        out[j] = table.times(sums, j, c - 1)
        return
    half = len(items) // 2
    left, right = items[:half], items[half:]
    t_left = table
    for j, c in right:
        t_left = t_left.times(sums, j, c)
    _leave_one_out(t_left, sums, left, out)
    t_right = table
    for j, c in left:
        t_right = t_right.times(sums, j, c)
    _leave_one_out(t_right, sums, right, out)


def _group_logsumexp(logp: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Aggregate log-probabilities (last axis) over contiguous runs beginning at ``starts``."""
    M = np.max(logp, axis=-1, keepdims=True)
    Mf = np.where(np.isfinite(M), M, 0.0)
    acc = np.add.reduceat(np.exp(logp - Mf), starts, axis=-1)
    with np.errstate(divide="ignore"):
        return np.log(acc) + Mf


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

    A :class:`~smoothdp_nb.core.mechanisms.Mechanism` whose categories are the
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

    Examples
    --------
    >>> m = SamplingAverage(T=2, grid=[0.0, 0.5, 1.0])
    >>> m.sample_size(5)
    2
    """

    def __init__(self, eta: Any = None, *, T: int | None = None, grid: Any, output: str = "sum") -> None:
        self._rate, self.eta, self.T = sampling_size_spec(eta, T)
        if output not in _OUTPUTS:
            raise ValueError(f"output must be 'sum' or 'rounded_mean', got {output!r}")
        self.output = output
        self.grid = _check_grid(grid)
        self.grid.setflags(write=False)
        self._w, self._step, self._even = _lattice(self.grid)
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

    def dp_delta(
        self,
        n: int,
        epsilon: np.ndarray,
        categories: int | None = None,
        log: bool = False,
        budget: float | None = None,
        all_profiles: np.ndarray | None = None,
    ) -> np.ndarray:
        """``T/n`` (Theorem 4), rounded up from the exact fraction (its log by Arb, rounded up).

        The changed record is sampled with probability T/n, and with all other
        records at one grid value and the changed one at another the outputs are
        disjoint (for the sum; for the rounded mean T/n remains an upper bound,
        attained when the grid step separates the two means)."""
        frac = self.sampled_fraction(n)
        val = log_fraction_enclosure(frac)[1] if log else fraction_up(frac)
        return np.full(np.shape(epsilon), val)

    def dp_delta_enclosure(
        self,
        n: int,
        epsilon: np.ndarray,
        categories: int | None = None,
        budget: float = math.inf,
    ) -> LogEnclosure:
        """Proven bounds on log(T/n) (Arb)."""
        llo, lhi = log_fraction_enclosure(self.sampled_fraction(n))
        return LogEnclosure(np.full(np.shape(epsilon), llo), np.full(np.shape(epsilon), min(lhi, 0.0)))

    def delta_upper_bound(self, n: int, epsilon: np.ndarray) -> np.ndarray:
        """T/n rounded up: the outputs differ in law only when the changed record is sampled."""
        return np.full(np.shape(epsilon), fraction_up(self.sampled_fraction(n)))

    def log_output_pmf(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(output values in increasing order, their log-probabilities), zeros omitted."""
        h = np.asarray(hist, dtype=np.int64)
        n = int(h.sum())
        T = self.sample_size(n)
        sums = self._sums(T)
        self._guard(T, sums.width, int(np.count_nonzero(h)))
        tab = _Table.empty(T, sums)
        for j in np.nonzero(h)[0]:
            tab = tab.times(sums, int(j), int(h[j]))
        logp = tab.log_row(T) - _log_comb(n, T)
        if self.output == "sum":
            vals = sums.values(T)
        else:
            logp, vals = self._rounded(logp[None], T)
            logp = logp[0]
        keep = np.isfinite(logp)
        return vals[keep], logp[keep]

    def log_profile_batch(self, hists: np.ndarray, n: int, epsilon: np.ndarray) -> np.ndarray:
        """The exact profile kernel (see the module docstring), proven upper bounds, clipped to T/n."""
        return self.log_profile_enclosure(hists, n, epsilon).upper

    def profile_seconds(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> float:
        """Estimated seconds of ``count`` profiles, before seeing the data.

        Evenly spaced grids within the exact-count error bound: the work-unit
        model of :func:`~smoothdp_nb.core.average_profile.profile_seconds`
        with every grid value occupied (span ``len(grid) - 1``, ``min(n,
        len(grid))`` occupied values: an upper estimate).  Otherwise from the
        size of the count-and-sum tables of one profile (see :meth:`_guard`):
        ~3e-9 s per table cell, plus ~3 ms of fixed work per histogram
        (measured on 3-5 value grids, T <= 4, n <= 40, with the machine
        loaded: an upper estimate)."""
        T = self.sample_size(n)
        K = self.grid.size
        if self._even and exact_path_applies(n, T):
            return count * profile_seconds(n, T, K, K - 1, min(n, K), n_epsilon)
        k = min(m, n)
        width = self._sums(T).width
        per = min(T + 1.0, 1.0 + n / k)
        cells = (T + 1) * width * k * max(1.0, math.log2(max(k, 2))) * per
        return count * (3e-3 + 3e-9 * cells + 1e-4 * n_epsilon * k)

    def _hist(self, hist: Any) -> np.ndarray:
        h, single = as_histograms(hist)
        if not single:
            raise ValueError("hist must be a single histogram of shape (len(grid),) here")
        if h.shape[1] != self.grid.size:
            raise ValueError(f"hist must have one count per grid value ({self.grid.size}), got {h.shape[1]}")
        return np.asarray(h[0])

    # -- outputs -----------------------------------------------------------
    def _sums(self, T: int) -> _Sums:
        """The support of sums of up to T grid values (cached per T)."""
        cache: dict[int, _Sums] = self.__dict__.setdefault("_sums_cache", {})
        if T not in cache:
            if isinstance(self._step, float):  # evenly spaced: a float step
                cache[T] = _EvenSums(self._w, T, float(self.grid[0]), self._step)
            else:
                cache[T] = _GeneralSums(self._w, T, self._step)
        return cache[T]

    def _rounded_index(self, s: np.ndarray, T: int) -> np.ndarray:
        """Rounded mean, in steps from the first grid value, of weight sums s."""
        s = np.asarray(s, dtype=np.int64)
        return np.asarray(_round_half_away(T * self._k0 + s, T) - self._k0)

    def sample_histogram(self, hist: Any, rng: Any = None, size: int | None = None) -> float | np.ndarray:
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

    def output_pmf(self, hist: Any) -> Any:
        """Exact output distribution of the mechanism on one database.

        Returns
        -------
        pandas.DataFrame
            One row per possible output, in increasing order: ``value``,
            ``probability`` and ``log_probability`` (outputs of probability 0
            are omitted).
        """
        import pandas as pd

        vals, logp = self.log_output_pmf(self._hist(hist))
        return pd.DataFrame({"value": vals, "probability": np.exp(logp), "log_probability": logp})

    def _rounded(self, logp: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
        """Post-process sum pmfs (last axis) to rounded-mean pmfs (on the grid)."""
        grp = self._rounded_index(np.arange(logp.shape[-1]), T)
        # the rounded mean is non-decreasing in the sum and takes every grid value
        starts = np.searchsorted(grp, np.arange(self.grid.size), side="left")
        return _group_logsumexp(logp, starts), self.grid.copy()

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
    def _log_profile_batch(
        self, h: np.ndarray, n: int, epsilon: np.ndarray, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> np.ndarray:
        """Proven upper bounds on log delta_eps(x) (:meth:`_log_profile_bounds`), shape (k, E)."""
        out: np.ndarray = self._log_profile_bounds(h, n, epsilon, budget)[1]
        return out

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
            (:class:`~smoothdp_nb.core.budget.ComputationTooLarge`) when it
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
        distinct = np.unique(h, axis=0)
        from .smoothed.estimate import sampling_average_units

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

    def log_profile_enclosure(self, hists: np.ndarray, n: int, epsilon: np.ndarray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x): every pair divergence that can attain
        the maximum is enclosed by
        :func:`~smoothdp_nb.core.divergence.log_hockey_stick_enclosure` with the
        error bound of the output laws set by :meth:`_log_profile_one` (the pruning to
        those pairs uses linear-scale values with a margin of 1e-6 relative,
        far above their rounding errors); clipped to T/n rounded up."""
        lo, hi = self._log_profile_bounds(hists, n, epsilon)
        cap = self.dp_delta(n, epsilon, log=True)
        return LogEnclosure(np.minimum(lo, cap), np.minimum(hi, cap))

    def _histogram_seconds(self, h: np.ndarray, n: int, T: int, n_epsilon: int) -> float:
        """Estimated seconds of one profile: the exact-count model
        (:func:`~smoothdp_nb.core.average_profile.profile_seconds`) on the
        occupied range of ``h``, or the divide-and-conquer tables' cell count."""
        occ = np.flatnonzero(h)
        if self._even and exact_path_applies(n, T):
            span = int(occ[-1] - occ[0])
            return profile_seconds(n, T, self.grid.size, span, occ.size, n_epsilon)
        return self.profile_seconds(n, self.grid.size, 1, n_epsilon)

    #: proven absolute error bound of the output laws' logs of the profile being computed
    #: (set by _log_profile_one before the pair divergences that use it)
    _law_err: float = 0.0

    def _log_profile_one(self, h: np.ndarray, n: int, T: int, epsilon: np.ndarray) -> np.ndarray:
        sums = self._sums(T)
        occ = [int(j) for j in np.nonzero(h)[0]]
        self._guard(T, sums.width, len(occ), n)
        lc = _log_comb(n, T)
        # the error of lc (three lgamma values and two subtractions)
        lgs = math.lgamma(n + 1.0) + math.lgamma(T + 1.0) + math.lgamma(n - T + 1.0)
        err_lc = (LGAMMA_REL + 2 * U) * lgs + 3e-15
        tables: dict[int, _Table] = {}
        if self._even:
            # count-and-sum tables over the occupied range only (weights relative
            # to the smallest occupied value), then placed on the full sum axis
            lo, hi = occ[0], occ[-1]
            occ_arr = np.asarray(occ, dtype=np.int64)
            counts = leave_one_out_counts(occ_arr - lo, h[occ_arr], T)
            logR = np.full((len(occ), sums.width), -np.inf)
            logS = np.full((len(occ), sums.width), -np.inf)
            if counts is not None:  # exact integer counts (see core.average_profile)
                # counts within 2 ulp (core.average_profile): their logs carry 4.1u plus LIBM_REL
                self._law_err = err_lc + 4.1 * U + (LIBM_REL + 2 * U) * (lgs + 1.0)
                return self._log_profile_counts(occ_arr, counts, T, epsilon, sums, lc)
            else:
                loc = _EvenSums(np.arange(hi - lo + 1), T, 0.0, 1.0)
                _leave_one_out(_Table.empty(T, loc), loc, [(j - lo, int(h[j])) for j in occ], tables)
                for i, a in enumerate(occ):
                    logR[i, T * lo : T * lo + loc.width] = tables[a - lo].log_row(T) - lc
                    logS[i, (T - 1) * lo : (T - 1) * lo + loc.width] = tables[a - lo].log_row(T - 1) - lc
        else:
            _leave_one_out(_Table.empty(T, sums), sums, [(j, int(h[j])) for j in occ], tables)
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
        counts: tuple[np.ndarray, np.ndarray, np.ndarray],
        T: int,
        epsilon: np.ndarray,
        sums: _Sums,
        lc: float,
    ) -> np.ndarray:
        """The profile from exact leave-one-out counts (evenly spaced grids).

        :func:`~smoothdp_nb.core.average_profile.candidate_pairs` narrows the
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
        self, logR_a: np.ndarray, logS_a: np.ndarray, a: int, bs: Any, T: int, epsilon: np.ndarray, sums: _Sums
    ) -> tuple[LogEnclosure, LogEnclosure]:
        """log d_eps(P_x, P_x') and log d_eps(P_x', P_x) for x' = x with one record a -> b,
        every b in ``bs`` (rows), computed in log space (the reference computation),
        enclosed: the laws carry the error bound ``self._law_err`` of
        :meth:`_log_profile_one`, the log-add-exp of the two parts ``2u`` of its
        result and ``2 LIBM_REL``, the rounded-mean grouping ``gamma_W`` and
        ``2 LIBM_REL (1 + 2 max |log p|)``."""
        rows = np.concatenate([[a], np.asarray(bs, dtype=np.int64)])
        lall = np.logaddexp(logR_a[None, :], sums.shift_all(logS_a, -np.inf, rows))
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
        self, occ: list[int], logR: np.ndarray, logS: np.ndarray, T: int, epsilon: np.ndarray, sums: _Sums
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
        self, occ: list[int], logR: np.ndarray, logS: np.ndarray, T: int, epsilon: np.ndarray, sums: _Sums
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


def _log_hockey_stick_both(lp: np.ndarray, lq: np.ndarray, epsilon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log d_eps(P, Q_b) and log d_eps(Q_b, P) for one pmf P against B pmfs Q_b (logs).

    The positive terms ``P(o) (1 - e^(epsilon - log P(o)/Q(o)))`` are summed in
    linear scale relative to ``max P`` (no cancellation: each term is
    computed from its log-ratio); rows where a contributing term would
    underflow that scale are recomputed fully in log space with
    :func:`log_hockey_stick`, so the result is exact to rounding either way.
    """
    live = np.isfinite(lp) | np.isfinite(lq).any(axis=0)
    idx = np.nonzero(live)[0]
    B, E = lq.shape[0], epsilon.size
    if idx.size == 0:
        return np.full((B, E), -np.inf), np.full((B, E), -np.inf)
    lp = lp[idx[0] : idx[-1] + 1]
    lq = lq[:, idx[0] : idx[-1] + 1]
    M = float(np.max(np.concatenate([lp[np.isfinite(lp)], lq[np.isfinite(lq)]])))
    p = np.exp(lp - M)
    q = np.exp(lq - M)
    with np.errstate(invalid="ignore"):
        D = lq - lp[None, :]  # log Q/P; nan where both are 0
    both0 = np.isnan(D)
    low_p = (lp - M < -700.0)[None, :]
    low_q = lq - M < -700.0
    out = []
    for sign, base, low in ((1.0, p[None, :], low_p), (-1.0, q, low_q)):
        res = np.empty((B, E))
        redo = np.zeros(B, dtype=bool)
        for i, e in enumerate(epsilon):
            with np.errstate(invalid="ignore"):
                x = e + sign * D
            mask = (x < 0) & ~both0
            terms = np.where(mask, base * -np.expm1(np.minimum(x, 0.0)), 0.0)
            with np.errstate(divide="ignore"):
                res[:, i] = np.log(terms.sum(axis=1)) + M
            redo |= np.any(mask & low, axis=1)
        if np.any(redo):
            lpr, lqr = np.broadcast_to(lp, lq.shape)[redo], lq[redo]
            res[redo] = log_hockey_stick(lpr, lqr, epsilon) if sign > 0 else log_hockey_stick(lqr, lpr, epsilon)
        out.append(res)
    return out[0], out[1]


def _log_comb(n: int, k: int) -> float:
    return float(special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0))


# ---------------------------------------------------------------------------
# quantized laws (Definition 5)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantizedLaw:
    """A law on the quantization grid: ``values[i] = (i - 2^(bits-1)) / 2^bits``."""

    values: np.ndarray
    pmf: np.ndarray

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.values, self.pmf))


def _check_bits(bits: Any) -> int:
    b = as_int(bits, "bits")
    if not (1 <= b <= 16):
        raise ValueError(f"bits must be in 1..16, got {b}")
    return b


def _check_positive(x: Any, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {x!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive finite number, got {x!r}")
    return v


def _check_mu(mu: Any) -> float:
    try:
        v = float(mu)
    except (TypeError, ValueError):
        raise TypeError(f"mu must be a number, got {mu!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"mu must be finite, got {mu!r}")
    return v


def _log_interval_mass(
    log_cdf: _LogTail, log_sf: _LogTail, lo: np.ndarray, hi: np.ndarray, centre: float
) -> np.ndarray:
    """log P((lo, hi]) from a log-cdf / log-sf pair, using the tail that avoids cancellation."""
    upper = lo >= centre
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(upper, log_sf(lo), log_cdf(hi))  # the larger of the two
        b = np.where(upper, log_sf(hi), log_cdf(lo))
        return np.asarray(a + log1mexp(np.minimum(b - a, 0.0)))


def _quantize(log_cdf: _LogTail, log_sf: _LogTail, centre: float, bits: int) -> QuantizedLaw:
    K = 2**bits
    i = np.arange(K)
    values = (i - K // 2) / K
    lo = values
    hi = (i - K // 2 + 1) / K
    logm = _log_interval_mass(log_cdf, log_sf, lo, hi, centre)
    logm = logm - special.logsumexp(logm)  # normalise by Z = mass of (-1/2, 1/2]
    pmf = np.exp(logm)
    pmf = pmf / pmf.sum()
    values.setflags(write=False)
    pmf.setflags(write=False)
    return QuantizedLaw(values, pmf)


def quantized_gaussian(mu: float, sigma: float, bits: int = 8) -> QuantizedLaw:
    """The quantized Gaussian N_{bits-bit}(mu, sigma^2) of Definition 5 (Appendix G.1).

    With ``K = 2^bits``, the support is ``x_i = (i - K/2) / K`` for
    ``i = 0..K-1`` (for 8 bits: ``(i - 128)/256``, from -1/2 to 127/256), and

        PMF(x_i) = p_{mu,sigma}((x_i, x_i + 1/K]) / Z,   Z = p_{mu,sigma}((-1/2, 1/2]),

    where ``p_{mu,sigma}(I)`` is the N(mu, sigma^2) probability of I.  Each
    point thus receives the mass of the cell *to its right* (a quantizer that
    rounds down), exactly as in Definition 5, and the cells tile (-1/2, 1/2],
    so the law is the Gaussian conditioned on that interval, then quantized.
    Masses are computed as log-differences of the normal cdf (or survival
    function in the upper tail), so far tails keep full relative precision.

    Parameters
    ----------
    mu : float
    sigma : float > 0
    bits : int in 1..16

    Returns
    -------
    QuantizedLaw
        Frozen dataclass with ``values`` and ``pmf`` (read-only arrays of
        length 2^bits, pmf summing to 1 up to rounding); unpacks as
        ``values, pmf = quantized_gaussian(...)``.
    """
    mu = _check_mu(mu)
    sigma = _check_positive(sigma, "sigma")
    bits = _check_bits(bits)
    return _quantize(
        lambda x: special.log_ndtr((x - mu) / sigma),
        lambda x: special.log_ndtr((mu - x) / sigma),
        mu,
        bits,
    )


def quantized_laplace(mu: float, scale: float, bits: int = 8) -> QuantizedLaw:
    """The Laplace analogue of Definition 5: Laplace(mu, scale) on (-1/2, 1/2], quantized.

    Same support ``x_i = (i - 2^(bits-1)) / 2^bits`` and the same cells
    ``(x_i, x_i + 2^-bits]`` as :func:`quantized_gaussian`; the mass of a cell
    is its probability under the Laplace law with density
    ``exp(-|x - mu| / scale) / (2 scale)``, normalised by the probability of
    (-1/2, 1/2].

    Parameters
    ----------
    mu : float
    scale : float > 0
    bits : int in 1..16
    """
    mu = _check_mu(mu)
    b = _check_positive(scale, "scale")

    def log_cdf(x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=float) - mu) / b
        return np.where(z < 0, z - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(z))))

    def log_sf(x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=float) - mu) / b
        return np.where(z > 0, -z - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(z))))

    return _quantize(log_cdf, log_sf, mu, _check_bits(bits))


# ---------------------------------------------------------------------------
# Theorem 4: the continuous limit
# ---------------------------------------------------------------------------
def continuous_limit_profile(
    cdf: Callable[[np.ndarray], Any],
    n: int,
    T: int,
    epsilon: Any,
    bits: Any = range(1, 11),
    databases: int = 8,
    rng: Any = None,
    *,
    budget: float = DEFAULT_BUDGET_SECONDS,
) -> Any:
    """Theorem 4 numerically: delta of the sampling average of a continuous law, finer and finer grids.

    Records are i.i.d. from a law on [0, 1] with the given ``cdf`` (a callable,
    e.g. ``scipy.stats.beta(2, 3).cdf``), quantized down to the grid
    ``i / 2**b`` (``i = 0 .. 2**b - 1``, probability ``cdf((i+1)/2**b) -
    cdf(i/2**b)``).  For each number of bits ``b`` this draws ``databases``
    databases of ``n`` records and computes each exact ``delta_eps(x)`` of
    :class:`SamplingAverage` (``output="sum"``, every neighbour), i.e. a Monte
    Carlo estimate of the smoothed delta for Pi = {the quantized law}.

    As the grid gets finer the records become distinct and their T-subset
    sums distinct, so the published sum tells whether a given record was
    sampled: delta_eps(x) -> T/n = eta for every epsilon (Theorem 4: with
    continuous values no delta < eta is possible).  The cost of one profile
    grows quickly with the grid (about 1 s at 10 bits, 15 s at 12 bits for
    n = 20, T = 4).

    Parameters
    ----------
    cdf : callable, the law's CDF on [0, 1]
    n, T : int, database size and sample size (1 <= T <= n)
    epsilon : float or 1-D array, finite, >= 0
    bits : int or iterable of int in 1..16
    databases : int >= 1, databases drawn per grid
    rng : None, int seed >= 0 or Generator
    budget : float
        Seconds.  Every grid's cost is estimated before the first starts
        (expected occupied grid values times grid values times possible sums,
        per database) and the whole run refused
        (:class:`~smoothdp_nb.core.budget.ComputationTooLarge`) if the time
        exceeds ``budget`` or one profile's arrays the memory budget.

    Returns
    -------
    pandas.DataFrame
        One row per (bits, epsilon): ``bits``, ``grid_values``, ``epsilon``,
        ``delta`` (mean over the databases), ``se`` (its standard error),
        ``min_delta``, ``eta`` (= T/n).

    Examples
    --------
    >>> from scipy import stats
    >>> df = continuous_limit_profile(stats.uniform.cdf, 10, 2, [1.0], bits=[2, 8], databases=2, rng=0)
    >>> list(df.bits)
    [2, 8]
    """
    import pandas as pd

    from .smoothed.estimate import sampling_average_units

    if not callable(cdf):
        raise TypeError("cdf must be a callable (the law's CDF on [0, 1])")
    n = as_int(n, "n", minimum=1)
    T = as_int(T, "T", minimum=1)
    if T > n:
        raise ValueError(f"T must be <= n, got T={T} > n={n}")
    databases = as_int(databases, "databases", minimum=1)
    e, _ = as_epsilon(epsilon)
    if not np.all(np.isfinite(e)):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    if isinstance(bits, (str, bytes)) or not isinstance(
        bits, (numbers.Integral, np.integer, range, list, tuple, np.ndarray)
    ):
        raise TypeError(f"bits must be an integer in 1..16 or a list of them, got {type(bits).__name__}")
    bits_list = [as_int(b, "bits", minimum=1, maximum=16) for b in np.atleast_1d(np.asarray(bits)).tolist()]
    if not bits_list:
        raise ValueError("bits must contain at least one number of bits in 1..16")
    gen = as_rng(rng)
    # every grid's law, and the estimated cost of all of them, before the first profile
    laws = []
    total = Estimate(0.0, 0.0)
    for b in bits_list:
        k = 2**b
        edges = np.arange(k + 1) / k
        p = np.diff(np.asarray(cdf(edges), dtype=float))
        if p.shape != (k,) or not np.all(np.isfinite(p)) or np.any(p < -1e-12) or not abs(p.sum() - 1.0) < 1e-6:
            raise ValueError("cdf must be a CDF of a law on [0, 1] (cdf(0) = 0, cdf(1) = 1, non-decreasing)")
        p = np.clip(p, 0.0, None)
        p /= p.sum()
        occupied = float(np.sum(-np.expm1(n * np.log1p(-np.minimum(p, 1 - 1e-16)))))  # expected distinct values
        sec, nbytes = sampling_average_units(k, T, occupied)
        total = total + Estimate(databases * sec * e.size, nbytes)
        laws.append((b, k, edges, p))
    check_budget(
        total,
        budget,
        f"continuous_limit_profile over bits={bits_list} (n={n}, T={T}, {databases} databases)",
        "use fewer bits or a smaller T",
        parameter="bits",
    )
    rows = []
    for b, k, edges, p in laws:
        mech = SamplingAverage(T=T, grid=edges[:-1])
        hists = gen.multinomial(n, p, size=databases)
        d = np.asarray(_profile(mech, hists, e)).reshape(databases, e.size)
        for j, ej in enumerate(e):
            rows.append(
                {
                    "bits": b,
                    "grid_values": k,
                    "epsilon": float(ej),
                    "delta": float(d[:, j].mean()),
                    "se": float(d[:, j].std(ddof=1) / math.sqrt(databases)) if databases > 1 else math.nan,
                    "min_delta": float(d[:, j].min()),
                    "eta": T / n,
                }
            )
    return pd.DataFrame(rows)


def _profile(mech: SamplingAverage, hists: np.ndarray, epsilon: np.ndarray) -> Any:
    from .profiles import privacy_profile

    return privacy_profile(mech, hists, epsilon)
