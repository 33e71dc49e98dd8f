"""The inverse sensitivity mechanism (ISM) for a quantile, and the notes' bound for unbiased mechanisms.

The inverse sensitivity of the ``m``-th order statistic at an output cell ``y`` is the number of
records to replace so that ``y`` becomes the ``m``-th order statistic:
``D_f(x, y) = max(L(y) - (m - 1), G(y) - (n - m), 0)`` with ``L(y) = #{c_i < y}``,
``G(y) = #{c_i > y}`` (``L`` and ``G`` cannot both be too large, and one replacement lowers one
of them by one).  ``D_f`` changes by at most one between neighbours, so the exponential mechanism
with utility ``-D_f``, ``P(M(x) = y) ∝ e^{-D_f(x, y) epsilon / 2}``, is epsilon-DP; when the lattice
has exactly two cells (``|Y| = 2``, e.g. the median of binary data) the notes' sharper
``e^{-D_f(x, y) epsilon}`` is epsilon-DP and is used.  ``D_f`` is constant on the blocks cut at
the records and one cell above them: at most ``2n + 1`` blocks.

Every unbiased epsilon-DP mechanism has ``P(M(x) = f(x)) <= 1 / sum_y e^{-2 D_f(x, y) epsilon}``
(:func:`unbiased_bound`), and the ISM beats every unbiased epsilon/4-DP mechanism.

References
----------
Course notes "Differential Privacy for Machine Learning" (Master IASD): inverse sensitivity, the
lower bound for unbiased mechanisms, the epsilon-DP ISM, its 1/4-optimality and the ``|Y| = 2``
remark.  Asi and Duchi, "Instance-optimality in differential privacy via approximate inverse
sensitivity mechanisms", NeurIPS 2020.
"""

from __future__ import annotations

import numpy as np
from flint import arb, arb_poly

from smoothdp_nb.core.numerics.array_types import IntArray
from smoothdp_nb.core.numerics.ball_arithmetic import float_up, working_precision
from smoothdp_nb.core.release.methods.base import BlockedExponential, LatticeData

__all__ = ["InverseSensitivityMechanism", "inverse_sensitivity_blocks", "ism_theta", "unbiased_bound"]


def inverse_sensitivity_blocks(data: LatticeData) -> tuple[IntArray, IntArray]:
    """Blocks of constant ``D_f(x, y)``: their first cells and ``D_f`` on them."""
    above = data.cells + 1
    starts = np.unique(np.concatenate(([data.k_lo], data.cells, above[above <= data.k_hi]))).astype(np.int64)
    n, m = data.n, data.rank
    low = np.searchsorted(data.cells, starts, side="left")  # L(y)
    high = n - np.searchsorted(data.cells, starts, side="right")  # G(y)
    d = np.maximum(np.maximum(low - (m - 1), high - (n - m)), 0)
    return starts, d.astype(np.int64)


def ism_theta(data: LatticeData, epsilon: float) -> float:
    """The weight exponent per unit of ``D_f``: ``epsilon / 2``, or ``epsilon`` on a two-cell lattice."""
    return epsilon if data.k_hi - data.k_lo + 1 == 2 else epsilon / 2


def unbiased_bound(data: LatticeData, epsilon: float) -> float:
    """``1 / sum_y e^{-2 D_f(x, y) epsilon}``, rounded up: no unbiased epsilon-DP mechanism returns f(x) more often.

    References
    ----------
    Course notes "Differential Privacy for Machine Learning" (Master IASD), lower bound for discrete
    unbiased mechanisms.
    """
    starts, d = inverse_sensitivity_blocks(data)
    lens = np.diff(np.append(starts, data.k_hi + 1))
    counts = np.zeros(int(d.max()) + 1, dtype=np.int64)
    np.add.at(counts, d, lens)
    with working_precision(128 + int(d.max()).bit_length()):
        total = arb_poly([int(c) for c in counts])((-2 * arb(epsilon)).exp())
        bound = 1 / total
        return min(1.0, float_up(bound))


class InverseSensitivityMechanism(BlockedExponential):
    """The epsilon-DP inverse sensitivity mechanism (exponential mechanism with utility ``-D_f``)."""

    name = "inverse-sensitivity"
    label = "inverse sensitivity mechanism"

    def guarantee(self, epsilon: float, delta: float | None) -> str:
        return f"{epsilon:g}-DP (pure; inverse sensitivity mechanism, D_f of sensitivity 1)"

    def blocks(self, data: LatticeData) -> tuple[IntArray, IntArray]:
        return inverse_sensitivity_blocks(data)

    def theta(self, data: LatticeData, epsilon: float) -> float:
        return ism_theta(data, epsilon)
