"""The exponential mechanism for a quantile with the rank utility, sampled exactly over the lattice cells.

For the ``m``-th order statistic of the lattice data (:mod:`.base`) and an output cell ``y`` the
utility is ``u(x, y) = -|#{i : c_i <= y} - m|``: zero on the cells from ``c_(m)`` up to the next
record, falling by one per record passed.  Replacing one record changes the count by at most one,
so ``Delta_u = 1`` and ``P(M(x) = y) ∝ e^{u(x, y) epsilon / 2}`` is epsilon-DP (the course notes'
exponential mechanism, with the proof that the ratio of the weights and of the normalisers are
each at most ``e^{epsilon / 2}``).  The utility is constant between consecutive distinct records,
so the law has at most ``n + 1`` blocks.

References
----------
Course notes "Differential Privacy for Machine Learning" (Master IASD), Discrete/Categorical
Mechanisms: the exponential mechanism and its privacy proof.  Smith, "Privacy-preserving
statistical estimation with optimal convergence rates", STOC 2011 (the rank utility for quantiles).
"""

from __future__ import annotations

import numpy as np

from smoothdp_nb.core.numerics.array_types import IntArray
from smoothdp_nb.core.release.methods.base import BlockedExponential, LatticeData

__all__ = ["ExponentialMechanism", "rank_blocks"]


def rank_blocks(data: LatticeData) -> tuple[IntArray, IntArray]:
    """Blocks of constant rank utility: their first cells and their losses ``|#{c_i <= y} - m|``."""
    starts = np.unique(np.concatenate(([data.k_lo], data.cells))).astype(np.int64)
    counts = np.searchsorted(data.cells, starts, side="right")
    return starts, np.abs(counts - data.rank).astype(np.int64)


class ExponentialMechanism(BlockedExponential):
    """The exponential mechanism with the rank utility (pure epsilon-DP)."""

    name = "exponential"
    label = "exponential mechanism (rank utility)"

    def guarantee(self, epsilon: float, delta: float | None) -> str:
        return f"{epsilon:g}-DP (pure; exponential mechanism, rank utility of sensitivity 1)"

    def blocks(self, data: LatticeData) -> tuple[IntArray, IntArray]:
        return rank_blocks(data)

    def theta(self, data: LatticeData, epsilon: float) -> float:
        return epsilon / 2
