"""The count-and-sum tables of the sampling average (Algorithm 3 of *Smoothed Differential Privacy*).

The grid's integer lattice, the support of sums of up to T grid values, and the dynamic
programme over the occupied values with one log scale per row (see
:mod:`smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism`).

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*, Algorithm 3.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from smoothdp_nb.core.numerics.divergence import log_hockey_stick
from smoothdp_nb.core.runtime.budget import ComputationTooLarge

__all__ = [
    "EvenSums",
    "GeneralSums",
    "Sums",
    "SumTable",
    "check_grid",
    "group_logsumexp",
    "lattice",
    "leave_one_out",
    "log_comb",
    "log_hockey_stick_both",
    "sampling_average_units",
    "round_half_away",
]

# Relative tolerance for recognising an evenly spaced float grid.
_EVEN_RTOL = 1e-9


# ---------------------------------------------------------------------------
# grid handling
# ---------------------------------------------------------------------------
def check_grid(grid: Any) -> np.ndarray:
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


def lattice(g: np.ndarray) -> tuple[np.ndarray, float | Fraction, bool]:
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


class EvenSums:
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


class GeneralSums:
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


Sums = EvenSums | GeneralSums


def round_half_away(num: np.ndarray, den: int) -> np.ndarray:
    """round(num / den) with ties away from zero (MATLAB ``round``), exact on integers."""
    a = np.abs(num)
    q = (2 * a + den) // (2 * den)
    return np.asarray(np.sign(num) * q)


# ---------------------------------------------------------------------------
# count-and-sum dynamic programme with per-row log scales
# ---------------------------------------------------------------------------
class SumTable:
    """Counts ``A[t, s]`` = exp(scale[t]) * rows[t, s] of t-subsets with weight sum s."""

    __slots__ = ("rows", "scale")

    def __init__(self, rows: np.ndarray, scale: np.ndarray):
        self.rows = rows
        self.scale = scale

    @classmethod
    def empty(cls, tmax: int, sums: Sums) -> SumTable:
        rows = np.zeros((tmax + 1, sums.width))
        rows[0, sums.zero] = 1.0  # the empty sample
        scale = np.full(tmax + 1, -np.inf)
        scale[0] = 0.0
        return cls(rows, scale)

    def times(self, sums: Sums, j: int, c: int) -> SumTable:
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
        return SumTable(new, scale)

    def log_row(self, t: int) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.asarray(np.log(self.rows[t]) + self.scale[t])


def leave_one_out(table: SumTable, sums: Sums, items: list[tuple[int, int]], out: dict[int, SumTable]) -> None:
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
    leave_one_out(t_left, sums, left, out)
    t_right = table
    for j, c in left:
        t_right = t_right.times(sums, j, c)
    leave_one_out(t_right, sums, right, out)


def group_logsumexp(logp: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Aggregate log-probabilities (last axis) over contiguous runs beginning at ``starts``."""
    M = np.max(logp, axis=-1, keepdims=True)
    Mf = np.where(np.isfinite(M), M, 0.0)
    acc = np.add.reduceat(np.exp(logp - Mf), starts, axis=-1)
    with np.errstate(divide="ignore"):
        return np.log(acc) + Mf


def log_comb(n: int, k: int) -> float:
    return float(special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0))


def log_hockey_stick_both(lp: np.ndarray, lq: np.ndarray, epsilon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


# CPU seconds per (occupied value, replacement value, possible sum) of the sampling average
# (measured by benchmarks/bench_estimates.py)
_AVG_CELL = 8e-10


def sampling_average_units(K: int, T: int, occupied: float) -> tuple[float, float]:
    """(seconds, peak bytes) of one sampling-average profile: K grid values, T draws, ``occupied`` values used.

    The search over (removed value, replacement) pairs visits every possible
    sum (``T (K - 1) + 1`` of them) for each of the ``occupied`` x K pairs, and
    holds about six arrays of K x (number of sums) floats at its peak.
    """
    width = T * (K - 1) + 1
    return _AVG_CELL * occupied * K * width, 6.0 * K * width * 8
