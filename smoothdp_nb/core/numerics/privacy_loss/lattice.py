"""Losses on a lattice: composition by counting.

When every finite loss of every run is an integer multiple of one step ``g`` -- as for every
mechanism whose likelihood ratios are powers of one number: k-fold randomized response
(losses ``+-log(p/(1-p))``), or any law with ratios ``r^c`` -- the loss of a composition is
``K g`` with K the sum of the runs' integers, and its law is the law of an integer sum: a
count of lattice paths (for two atoms a binomial law, for more a multinomial one aggregated
by K).  :func:`~smoothdp_nb.core.numerics.privacy_loss.grid.log_delta_grid` with ``step=g``
computes it by convolving the runs' integer laws, exponentially tilted, by FFT: no loss is
rounded to a grid, and the bounds differ only by the float error of the convolutions (added
to every cell for the upper bound, subtracted for the lower) and by the shift below.

Proven, not assumed.  The float losses of a run are only near ``c g``: the upper measure
(:meth:`LossDistribution.from_log_pmfs`) has losses ``L+_i >= L_i``, the lower ``L-_i <= L_i``.
Each atom is placed at ``c_i g + tau``, with ``tau`` the largest residual ``L+_i - c_i g``
rounded up (upper) or the smallest ``L-_i - c_i g`` rounded down (lower): the upper atoms
only move up and the lower ones only down, so both stay bounds (the hockey stick is
non-decreasing in every loss).  A composition's losses are then ``K g + T``, ``T`` the sum of
the runs' shifts, and ``d_eps(K g + T) = d_(eps - T)(K g)``.  ``T`` is a few ulps per run
times the number of runs, so the two bounds stay within that shift of each other.

References
----------
Meiser, Mohammadi. *Tight on budget? Tight bounds for r-fold approximate differential
privacy*, CCS 2018 (randomized response composed by counting).
Koskela, Jälkö, Honkela. *Computing tight differential privacy guarantees using FFT*,
AISTATS 2020 (FFT composition of a discrete loss law).
"""

from __future__ import annotations

import math

import numpy as np

from smoothdp_nb.core.numerics.enclosures import U, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution

__all__ = ["lattice_step", "on_lattice", "composed_cells", "LATTICE_CELLS", "LATTICE_FROM"]

#: largest composed index range (cells) counted on the lattice
LATTICE_CELLS = 2**24
#: composed index ranges from this many cells are counted on the lattice (smaller ones are
#: composed exactly by outer sums, which is as fast there and exact to the ulp)
LATTICE_FROM = 2**11
# losses within this (relative to the largest) of a multiple of the step are on the lattice
_ON_REL = 2.0**-40
# largest |integer| of one run's loss
_MAX_INDEX = 2**12


def lattice_step(parts: list[tuple[LossDistribution, int]]) -> float | None:
    """A step g (a float) of which every finite loss of every part is an integer multiple
    to within ``2^-40`` of the largest loss, with integers at most ``2^12``; None when
    there is none.  Tried: the smallest nonzero loss divided by 1..12."""
    live = [d for d, k in parts if k > 0 and d.size]
    if not live:
        return None
    L = np.concatenate([d.losses for d in live])
    top = float(np.max(np.abs(L)))
    if top == 0.0:
        return None
    tol = _ON_REL * top
    nz = np.abs(L)[np.abs(L) > tol]
    if nz.size == 0:
        return None
    base = float(nz.min())
    for q in range(1, 13):
        g = base / q
        c = np.rint(L / g)
        if np.max(np.abs(c)) > _MAX_INDEX:
            return None
        if np.all(np.abs(L - c * g) <= tol):
            return g
    return None


def on_lattice(d: LossDistribution, g: float, upper: bool) -> tuple[LossDistribution, float]:
    """(the law on the lattice ``c g``, the shift tau): every atom of ``d`` placed at
    ``c g + tau``, tau rounded so that the atoms only move up (``upper``) or down.

    The residual ``L - c g`` is computed in floats: the product is within
    ``u |c g|`` of the real one and the difference within ``u`` of its value, so
    ``2u |c g| + u |r|`` more covers both.  The lattice law's float losses are
    ``c g`` rounded outward too (they feed the Chernoff bound of the grid)."""
    c = np.rint(d.losses / g)
    cg = c * g
    r = d.losses - cg
    err = 2.0 * U * np.abs(cg) + U * np.abs(r)
    if d.size:
        tau = float(next_up(np.max(r + err))) if upper else float(next_down(np.min(r - err)))
    else:
        tau = 0.0
    losses = next_up(cg + U * np.abs(cg)) if upper else next_down(cg - U * np.abs(cg))
    return LossDistribution(losses, d.log_mass, d.log_inf, index=c), tau


def composed_cells(parts: list[tuple[LossDistribution, int]], g: float) -> float:
    """The number of cells of the composed lattice law: ``1 + sum k (c_max - c_min)``."""
    total = 1.0
    for d, k in parts:
        if k > 0 and d.size:
            total += k * (math.floor(float(d.losses[-1]) / g + 0.5) - math.floor(float(d.losses[0]) / g + 0.5))
    return total
