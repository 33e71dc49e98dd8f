"""Propose-test-release (Dwork-Lei) for a quantile: test the distance to a large local sensitivity, then add Laplace noise.

The analyst proposes a public bound ``beta`` on the local sensitivity.  On the lattice data
(:mod:`.base`) the distance ``d(x)`` to the nearest database whose local sensitivity exceeds
``beta`` is ``min{k : A(k) > beta}`` with ``A(k) = max{LS(y) : d(x, y) <= k}``
(``= max_{0 <= t <= k+1} (c_{m+t} - c_{m+t-k-1}) h``, records padded by the end cells of the
bounds: Nissim-Raskhodnikova-Smith, lecture 14); ``d`` changes by at most one between neighbours.
The mechanism splits epsilon in halves:

1. ``d_hat = d + Lap(2 / epsilon)``; if ``d_hat <= T = (2 / epsilon) ln(1 / (2 delta))`` it refuses (⊥);
2. otherwise it releases ``f(x) + Lap(2 beta / epsilon)`` on the lattice (exact, :func:`..lattice.sample_cell`).

Privacy: if ``d(x) >= 1`` then ``|f(x) - f(x')| <= LS(x) <= beta`` for every neighbour, the test is
epsilon/2-DP and the noisy value epsilon/2-DP: epsilon-DP for every output, ⊥ included.  If
``d(x) = 0`` the test passes with probability ``P(Lap(2/epsilon) > T) = delta``, so every event
loses at most ``delta``: the release is (epsilon, delta)-DP.  The pass probability
``P(d + Lap(2/epsilon) > T)`` has the closed form of :func:`.base.pass_probability`.

References
----------
Dwork and Lei, "Differential privacy and robust statistics", STOC 2009 (propose-test-release).
Wang, Lecture 14 ("Data-dependent DP algorithm design"): local sensitivity, ``A(k)`` for the median.
Nissim, Raskhodnikova and Smith, "Smooth sensitivity and sampling in private data analysis", STOC 2007.
"""

from __future__ import annotations

import math

import numpy as np

from smoothdp_nb.core.release import lattice as _lattice
from smoothdp_nb.core.release.methods.base import (
    CellLaw,
    LatticeData,
    ReleaseMethod,
    laplace_cell_probabilities,
    pass_probability,
    pass_split,
    sample_bernoulli,
)

__all__ = ["ProposeTestRelease", "distance_to_unsafe", "noise_scale", "sensitivity_within"]


def sensitivity_within(data: LatticeData, k: int) -> int:
    """``A(k) / h``: the largest local sensitivity (in cells) of a database within distance k of the data."""
    p = np.concatenate(([data.k_lo], data.cells, [data.k_hi]))
    m, top = data.rank, data.n + 1
    t = np.arange(0, k + 2)
    hi = np.clip(m + t, 0, top)
    lo = np.clip(m + t - k - 1, 0, top)
    return int(np.max(p[hi] - p[lo]))


def distance_to_unsafe(data: LatticeData, proposal: float) -> int | None:
    """``min{k : A(k) > beta}`` (None if no database has local sensitivity above beta).

    ``A`` is non-decreasing in k: a bisection over ``0 .. n + 1`` (``A(n + 1)`` is the whole range).
    """
    limit = math.floor(proposal / data.step)  # A(k) h > beta  <=>  A(k) > floor(beta / h) (A an integer)
    if sensitivity_within(data, data.n + 1) <= limit:
        return None
    lo, hi = 0, data.n + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if sensitivity_within(data, mid) > limit:
            hi = mid
        else:
            lo = mid + 1
    return lo


def noise_scale(proposal: float, epsilon: float) -> float:
    """The Laplace scale ``2 beta / epsilon``, rounded up (a larger scale is private too)."""
    return math.nextafter(2.0 * proposal / epsilon, math.inf)


class ProposeTestRelease(ReleaseMethod):
    """Propose-test-release with the distance-to-instability test ((epsilon, delta)-DP)."""

    name = "propose-test-release"
    label = "propose-test-release"
    needs_delta = True
    uses_proposal = True

    def guarantee(self, epsilon: float, delta: float | None) -> str:
        return f"({epsilon:g}, {delta:g})-DP (propose-test-release: epsilon/2 for the test, epsilon/2 for the noise)"

    def prepare(self, data: LatticeData, epsilon: float, delta: float | None, proposal: float | None) -> int | None:
        assert proposal is not None
        return distance_to_unsafe(data, proposal)

    def law(
        self, data: LatticeData, prepared: object, epsilon: float, delta: float | None, proposal: float | None
    ) -> CellLaw:
        assert delta is not None and proposal is not None
        p_pass, refusal = pass_split(_distance(prepared), epsilon / 2, delta)
        probs = p_pass * laplace_cell_probabilities(
            data.true_cell * data.step, noise_scale(proposal, epsilon), data.step, data.k_lo, data.k_hi
        )
        cells = np.arange(data.k_lo, data.k_hi + 1, dtype=np.int64)
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
        assert delta is not None and proposal is not None
        if not sample_bernoulli(pass_probability(_distance(prepared), epsilon / 2, delta), gen):
            return None
        scale = noise_scale(proposal, epsilon)
        return _lattice.sample_cell(
            "laplace", None, data.true_cell * data.step, scale, data.step, data.k_lo, data.k_hi, gen
        )


def _distance(prepared: object) -> int | None:
    return prepared if isinstance(prepared, int) else None
