"""Why noise scaled to the local sensitivity is not private: its exact privacy loss against the neighbours of a dataset.

The mechanism under attack releases the median (or a quantile) of the data rounded to the lattice
(as :mod:`.methods` does) plus Laplace noise of scale ``LS(x) / epsilon``, rounded to the lattice and
clamped to the bounds: ``epsilon``-DP *if* the scale were a global bound, which it is not.  On a
neighbour ``x'`` the scale is ``LS(x') / epsilon`` and the centre ``f(x')``; where ``LS(x) = 0``
(ties at the median) the output is ``f(x)`` itself and any neighbour with ``LS(x') > 0`` or another
median puts mass where ``x`` puts none: the privacy loss is infinite.

:func:`local_sensitivity_leak` computes the two lattice laws exactly (in the log domain, so no
cell underflows) for the neighbours of ``x`` and reports the worst: ``epsilon_actual``, the
smallest epsilon for which ``x`` and that neighbour satisfy epsilon-DP (``max_k |ln P(k) / P'(k)|``,
infinite where the supports differ), ``delta_at_claimed`` (the hockey-stick divergence at the
claimed epsilon, both directions) and ``advantage`` (the total variation distance: the best test's
advantage in telling the two apart from one release).

Which neighbours.  Only the order statistics at ranks ``m - 1 .. m + 1`` of the neighbour matter
(its median and local sensitivity), so removing any record of rank at most ``m - 2`` has the same
effect, as has any of rank at least ``m + 2``: five removal classes.  The replacement value runs over
**every** lattice cell when the lattice has at most :data:`EXHAUSTIVE_CELLS` cells (the result is
then the exact worst case over all neighbours on the lattice), else over a candidate set (the
bounds, each record of ranks ``m - 3 .. m + 3`` and the cells next to it, and the midpoints between
them), and ``epsilon_actual`` is the exact loss of the neighbour found: a lower bound on the worst.

This is an analysis of a dataset for teaching, not a release: every number it returns is a
function of the data.

References
----------
Wang, Lecture 14 ("Data-dependent DP algorithm design"): local sensitivity and why noise
calibrated to it fails.  Nissim, Raskhodnikova and Smith, "Smooth sensitivity and sampling in
private data analysis", STOC 2007.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.validation import as_positive
from smoothdp_nb.core.release.methods.base import LatticeData
from smoothdp_nb.core.release.methods.run import check_inputs, lattice_data
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget

__all__ = ["EXHAUSTIVE_CELLS", "LocalSensitivityLeak", "local_sensitivity_leak", "log_laplace_cells"]

#: up to this many lattice cells every replacement value is tried (exact worst case)
EXHAUSTIVE_CELLS = 1025

_LN2 = math.log(2.0)


def log_laplace_cells(centre: float, scale: float, k_lo: int, k_hi: int) -> FloatArray:
    """``ln P(K = k)`` for ``K = clamp(round(centre + scale Z))`` on the cells ``k_lo .. k_hi`` (cell units).

    ``scale = 0`` is the point mass at ``centre`` (an integer).  Each cell is written without
    cancellation: above the centre ``-a + ln((1 - e^{-1/s}) / 2)``, below ``b + ln(...)``, around it
    ``ln((-expm1(a) - expm1(-b)) / 2)``, the clamp cells their tails.
    """
    k = np.arange(k_lo, k_hi + 1, dtype=float)
    if scale == 0.0:
        out = np.full(k.size, -np.inf)
        out[int(centre) - k_lo] = 0.0
        return out
    a = (k - 0.5 - centre) / scale
    b = (k + 0.5 - centre) / scale
    log_width = math.log(-math.expm1(-1.0 / scale)) - _LN2
    with np.errstate(divide="ignore"):
        inside = np.log((-np.expm1(np.minimum(a, 0.0)) - np.expm1(-np.maximum(b, 0.0))) / 2)
    out = np.where(a >= 0, -a + log_width, np.where(b <= 0, b + log_width, inside))
    if k.size == 1:
        return np.zeros(1)

    def log_cdf(z: float) -> float:
        return z - _LN2 if z < 0 else math.log1p(-math.exp(-z) / 2)

    out[0] = log_cdf(float(b[0]))
    out[-1] = log_cdf(-float(a[-1]))  # P(Z > a) = P(Z < -a)
    return np.asarray(out, dtype=float)


def _loss(lp: FloatArray, lq: FloatArray) -> float:
    """``max_k |ln P(k) - ln Q(k)|`` over the cells either law reaches (inf where only one does)."""
    p_in, q_in = np.isfinite(lp), np.isfinite(lq)
    if np.any(p_in != q_in):
        return math.inf
    both = p_in & q_in
    return float(np.max(np.abs(lp[both] - lq[both]))) if both.any() else 0.0


def _hockey(lp: FloatArray, lq: FloatArray, epsilon: float) -> float:
    """``sum_k max(0, P(k) - e^epsilon Q(k))``."""
    p = np.exp(lp)
    with np.errstate(invalid="ignore"):
        gap = np.where(np.isfinite(lq), -np.expm1(np.minimum(epsilon + lq - lp, 0.0)), 1.0)
    gap = np.where(np.isfinite(lp), gap, 0.0)
    return float(np.sum(p * gap))


def _stats_after(rest: IntArray, values: IntArray, ranks: tuple[int, ...], k_lo: int, k_hi: int) -> list[IntArray]:
    """Order statistics (1-based ranks, padded by k_lo at 0 and k_hi at n + 1) of ``rest`` plus each value."""
    n = rest.size + 1
    pos = np.searchsorted(rest, values, side="left")  # 0-based position of the inserted value
    out = []
    for j in ranks:
        if j <= 0:
            out.append(np.full(values.size, k_lo, dtype=np.int64))
            continue
        if j >= n + 1:
            out.append(np.full(values.size, k_hi, dtype=np.int64))
            continue
        i = j - 1  # 0-based
        before = rest[min(i, rest.size - 1)] if rest.size else k_lo
        after = rest[i - 1] if i >= 1 else k_lo
        out.append(np.where(pos > i, before, np.where(pos == i, values, after)).astype(np.int64))
    return out


def _median_and_ls(data: LatticeData) -> tuple[int, int]:
    p = np.concatenate(([data.k_lo], data.cells, [data.k_hi]))
    m = data.rank
    return int(p[m]), int(max(p[m + 1] - p[m], p[m] - p[m - 1]))


def _candidates(data: LatticeData, exhaustive: bool) -> IntArray:
    if exhaustive:
        return np.arange(data.k_lo, data.k_hi + 1, dtype=np.int64)
    p = np.concatenate(([data.k_lo], data.cells, [data.k_hi]))
    m = data.rank
    window = p[max(m - 3, 0) : min(m + 4, p.size)]
    mids = (window[:-1] + window[1:]) // 2
    vals = np.concatenate(([data.k_lo, data.k_hi], window - 1, window, window + 1, mids, mids + 1))
    return np.unique(np.clip(vals, data.k_lo, data.k_hi)).astype(np.int64)


@dataclass(frozen=True)
class LocalSensitivityLeak:
    """The exact privacy loss of noise scaled to the local sensitivity, against the worst neighbour found.

    Attributes
    ----------
    epsilon_claimed : float
        The epsilon the mechanism claims (the noise scale is ``LS(x) / epsilon_claimed``).
    epsilon_actual : float
        ``max_k |ln P_x(k) / P_x'(k)|`` for the neighbour below (inf where the supports differ).
    delta_at_claimed : float
        The smallest delta with ``(epsilon_claimed, delta)``-DP between x and the neighbour.
    advantage : float
        Total variation distance between the two output laws.
    neighbour : numpy.ndarray
        The neighbouring dataset (lattice values, sorted): x with one record replaced.
    removed, inserted : float
        The record replaced and its replacement (lattice values).
    local_sensitivity, neighbour_local_sensitivity : float
        ``LS(x)`` and ``LS(x')`` (lattice values).
    exhaustive : bool
        True when every replacement value on the lattice was tried (the worst case over all neighbours).
    """

    epsilon_claimed: float
    epsilon_actual: float
    delta_at_claimed: float
    advantage: float
    neighbour: FloatArray
    removed: float
    inserted: float
    local_sensitivity: float
    neighbour_local_sensitivity: float
    true_value: float
    neighbour_value: float
    step: float
    k_lo: int
    k_hi: int
    exhaustive: bool

    def laws(self) -> pd.DataFrame:
        """The two output laws, one row per lattice value either reaches (columns ``value, x, neighbour``)."""
        eps = self.epsilon_claimed
        lp = log_laplace_cells(
            self.true_value / self.step, self.local_sensitivity / self.step / eps, self.k_lo, self.k_hi
        )
        lq = log_laplace_cells(
            self.neighbour_value / self.step, self.neighbour_local_sensitivity / self.step / eps, self.k_lo, self.k_hi
        )
        keep = np.isfinite(lp) | np.isfinite(lq)
        values = np.arange(self.k_lo, self.k_hi + 1, dtype=float)[keep] * self.step
        return pd.DataFrame({"value": values, "x": np.exp(lp[keep]), "neighbour": np.exp(lq[keep])})

    def __str__(self) -> str:
        actual = "infinite" if math.isinf(self.epsilon_actual) else f"{self.epsilon_actual:.4g}"
        scope = "all neighbours on the lattice" if self.exhaustive else "a candidate set of neighbours"
        return (
            f"Laplace noise scaled to the local sensitivity claims epsilon = {self.epsilon_claimed:g}; against the "
            f"worst of {scope} (one record {self.removed:g} -> {self.inserted:g}) the privacy loss is {actual}, "
            f"delta at the claimed epsilon {self.delta_at_claimed:.4g}, distinguishing advantage {self.advantage:.4g} "
            f"(LS(x) = {self.local_sensitivity:g}, LS(x') = {self.neighbour_local_sensitivity:g})"
        )

    def __repr__(self) -> str:
        return (
            f"LocalSensitivityLeak(epsilon_claimed={self.epsilon_claimed!r}, epsilon_actual={self.epsilon_actual!r}, "
            f"delta_at_claimed={self.delta_at_claimed!r}, advantage={self.advantage!r})"
        )


def local_sensitivity_leak(
    x: npt.ArrayLike,
    query: str = "median",
    epsilon: float = 1.0,
    *,
    bounds: tuple[float, float] | None = None,
    lattice: float | None = None,
    quantile: float | None = None,
    exhaustive: bool | None = None,
) -> LocalSensitivityLeak:
    """The exact privacy loss of "Laplace noise of scale LS(x) / epsilon" between x and its worst neighbour.

    Parameters
    ----------
    x : array_like, 1-D
        The data (rounded to the lattice like the releases of :mod:`.methods`).
    query : {"median", "quantile"}
    epsilon : float
        The claimed epsilon.
    bounds : (low, high)
    lattice : float, optional
        A power of two (default as :func:`.smooth_sensitivity.release`); at most
        :data:`EXHAUSTIVE_CELLS` cells makes the search over all neighbours exact.
    quantile : float, optional
        With ``query="quantile"``.
    exhaustive : bool, optional
        Force (True) or skip (False) trying every lattice value as the replacement; default: when the
        lattice has at most :data:`EXHAUSTIVE_CELLS` cells.

    Returns
    -------
    LocalSensitivityLeak

    References
    ----------
    Wang, Lecture 14 ("Data-dependent DP algorithm design"): local sensitivity.
    """
    eps = as_positive(epsilon, "epsilon")
    inp = check_inputs("exponential", query, eps, bounds=bounds, lattice=lattice, quantile=quantile)
    data = lattice_data(x, inp, False)
    cells = data.k_hi - data.k_lo + 1
    full = cells <= EXHAUSTIVE_CELLS if exhaustive is None else bool(exhaustive)
    values = _candidates(data, full)
    check_budget(
        Estimate(seconds=5 * values.size * cells * 5e-8, bytes=cells * 8.0 * 6),
        DEFAULT_BUDGET_SECONDS,
        f"the privacy loss over {5 * values.size} neighbours and {cells} lattice cells",
        "pass a coarser lattice= or exhaustive=False",
        parameter="lattice",
    )
    f0, ls0 = _median_and_ls(data)
    lp = log_laplace_cells(float(f0), ls0 / eps, data.k_lo, data.k_hi)
    m, n = data.rank, data.n
    best: tuple[float, float, int, int, int, int, int] | None = None  # loss, delta, rank, value, f', ls'
    seen: dict[tuple[int, int], tuple[float, float]] = {}
    for r in sorted({min(max(j, 1), n) for j in range(m - 2, m + 3)}):
        rest = np.delete(data.cells, r - 1)
        low_, mid_, high_ = _stats_after(rest, values, (m - 1, m, m + 1), data.k_lo, data.k_hi)
        ls = np.maximum(high_ - mid_, mid_ - low_)
        pairs = np.unique(np.stack([mid_, ls], axis=1), axis=0)
        for fq, lq_s in pairs.tolist():
            key = (int(fq), int(lq_s))
            if key not in seen:
                lq = log_laplace_cells(float(fq), lq_s / eps, data.k_lo, data.k_hi)
                seen[key] = (_loss(lp, lq), max(_hockey(lp, lq, eps), _hockey(lq, lp, eps)))
            loss, delta = seen[key]
            if best is None or (loss, delta) > (best[0], best[1]):
                pick = int(np.flatnonzero((mid_ == fq) & (ls == lq_s))[0])
                best = (loss, delta, r, int(values[pick]), int(fq), int(lq_s), 0)
    assert best is not None
    loss, delta, r, v, fq, lq_s, _ = best
    lq = log_laplace_cells(float(fq), lq_s / eps, data.k_lo, data.k_hi)
    tv = 0.5 * float(np.sum(np.abs(np.exp(lp) - np.exp(lq))))
    step = data.step
    neighbour = np.sort(np.append(np.delete(data.cells, r - 1), v)).astype(float) * step
    return LocalSensitivityLeak(
        epsilon_claimed=eps,
        epsilon_actual=loss,
        delta_at_claimed=delta,
        advantage=tv,
        neighbour=neighbour,
        removed=float(data.cells[r - 1]) * step,
        inserted=float(v) * step,
        local_sensitivity=ls0 * step,
        neighbour_local_sensitivity=lq_s * step,
        true_value=f0 * step,
        neighbour_value=fq * step,
        step=step,
        k_lo=data.k_lo,
        k_hi=data.k_hi,
        exhaustive=full,
    )
