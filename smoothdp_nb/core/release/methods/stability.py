"""The stability-based release (distance to instability) of a quantile: the exact value, or ⊥.

On the lattice data (:mod:`.base`) the ``m``-th order statistic ``c_(m)`` changes only when enough
records move across it: lowering it needs ``m - L`` replacements (``L = #{c_i < c_(m)}``; possible
when ``c_(m) > k_lo``), raising it ``L + E - m + 1`` (``E`` the records equal to ``c_(m)``; possible
when ``c_(m) < k_hi``).  The distance to instability ``d(x)`` is the smaller of the two minus one:
the number of records an adversary may replace with every neighbour of the result still having the
same median.  It changes by at most one between neighbours.  The mechanism releases ``f(x)`` itself
if ``d + Lap(1 / epsilon) > ln(1 / (2 delta)) / epsilon`` and ⊥ otherwise: when ``d(x) >= 1`` both
outputs' probabilities move by at most ``e^epsilon`` and the value is the neighbour's, and when
``d(x) = 0`` the value is released with probability ``delta``, so it is (epsilon, delta)-DP.  It pays
off on data with many ties (a coarse lattice); on continuous data ``d = 0`` and it refuses.

References
----------
Wang, Lecture 14 ("Data-dependent DP algorithm design"): stability-based query release
(Distance2Stability).  Thakurta and Smith, "Differentially private feature selection via stability
arguments, and the robustness of the lasso", COLT 2013.  Vadhan, "The complexity of differential
privacy" (2017), Section 3.3 (stability-based release).
"""

from __future__ import annotations

import numpy as np

from smoothdp_nb.core.release.methods.base import (
    CellLaw,
    LatticeData,
    ReleaseMethod,
    pass_probability,
    pass_split,
    sample_bernoulli,
)

__all__ = ["StabilityRelease", "distance_to_instability"]


def distance_to_instability(data: LatticeData) -> int | None:
    """Records that can be replaced with the order statistic unchanged at every neighbour (None: it never changes)."""
    c = data.true_cell
    below = int(np.searchsorted(data.cells, c, side="left"))
    equal = int(np.searchsorted(data.cells, c, side="right")) - below
    moves = []
    if c > data.k_lo:
        moves.append(data.rank - below)
    if c < data.k_hi:
        moves.append(below + equal - data.rank + 1)
    return min(moves) - 1 if moves else None


class StabilityRelease(ReleaseMethod):
    """Distance-to-stability release of the exact lattice value ((epsilon, delta)-DP)."""

    name = "stability"
    label = "stability (distance to instability)"
    needs_delta = True

    def guarantee(self, epsilon: float, delta: float | None) -> str:
        return f"({epsilon:g}, {delta:g})-DP (stability-based release: the exact value or ⊥)"

    def prepare(self, data: LatticeData, epsilon: float, delta: float | None, proposal: float | None) -> int | None:
        return distance_to_instability(data)

    def law(
        self, data: LatticeData, prepared: object, epsilon: float, delta: float | None, proposal: float | None
    ) -> CellLaw:
        assert delta is not None
        p_pass, refusal = pass_split(prepared if isinstance(prepared, int) else None, epsilon, delta)
        cells = np.arange(data.k_lo, data.k_hi + 1, dtype=np.int64)
        probs = np.zeros(cells.size)
        probs[data.true_cell - data.k_lo] = p_pass
        return CellLaw(cells, probs, refusal, data.step, data.true_cell * data.step)

    def sample(
        self,
        data: LatticeData,
        prepared: object,
        epsilon: float,
        delta: float | None,
        proposal: float | None,
        gen: np.random.Generator | None,
    ) -> int | None:
        assert delta is not None
        passed = sample_bernoulli(
            pass_probability(prepared if isinstance(prepared, int) else None, epsilon, delta), gen
        )
        return data.true_cell if passed else None
