"""Privacy-loss distributions of one neighbouring pair, and their composition.

For two output laws P = M(x) and Q = M(x') the *privacy loss* of an output o
is ``L(o) = log P(o)/Q(o)`` (``+inf`` where Q(o) = 0 < P(o)).  Its law under
P -- the privacy-loss distribution (PLD) of the ordered pair -- determines the
hockey-stick divergence of Definition 2 of *Smoothed Differential Privacy*,

    d_eps(P, Q) = E_P[max(0, 1 - e^(eps - L))]      (+inf counts fully),

and the Renyi divergence, ``exp((alpha-1) D_alpha(P||Q)) = E_P[e^((alpha-1) L)]``.
For k independent runs on the same pair the loss is the sum of the k losses,
so the PLD of a composition is the convolution of the PLDs: that is how
:func:`~smoothdp_nb.repeat` and :func:`~smoothdp_nb.joint` are evaluated,
never by enumerating the product output space.

Certification.  A run's distribution is built from log-pmfs known to within a
proven error (:meth:`LossDistribution.from_log_pmfs`): for the upper bound it
is the PLD of measures ``P~ >= P``, ``Q~ <= Q`` output by output (masses
rounded up, losses ``log P~ - log Q~`` rounded up), for the lower bound the
reverse.  The divergence of a composition, ``sum_o max(0, prod P_i(o_i) -
e^eps prod Q_i(o_i))``, is non-decreasing in every P-mass and non-increasing in
every Q-mass, so composing the widened measures bounds the truth; masses need
not sum to 1 (the infinite-loss mass is ``prod T_i - prod F_i``, totals and
finite masses, :func:`log_inf_of_product`).  Every float step then rounds in
the bound's direction: log-sums by :func:`lse_error`, additions one ulp out.

Two evaluations, both returning a proven upper bound and a lower bound:

* **exact** (:func:`compose_exact`), while the composed support stays small:
  outer sums of the supports, equal losses merged.  Each float sum is rounded
  toward the bound's side only when it was inexact (TwoSum), so exact losses such
  as 0 stay exact; float sums may differ in the last bits where the real sums are
  equal, so losses closer than ``2^-44`` relative are merged -- into the largest
  of them for the upper bound (the hockey stick is non-decreasing in every loss,
  so moving mass to a larger loss never decreases it) and into the smallest for
  the lower bound; a merged mass is their log-sum, widened by the
  proven error of the sum and of the products' log-additions.
* **grid** (:func:`log_delta_grid`), when it is large: every loss is split
  between its two neighbouring points of a grid of spacing h, P-mass and Q-mass
  kept (a dominating law; for the lower bound: rounded down, the residuals' sum
  kept as a shift of epsilon, :mod:`.grid`), the law is
  exponentially tilted at the saddle point of the target epsilon (so the part
  of the composed law that matters sits at the centre of the grid, where
  float64 is accurate, however far below 1e-308 the divergence is), and the
  grids are convolved by FFT.  Every step is bounded: FFT rounding is added
  to (subtracted from) every cell, and tilted mass dropped at the ends of the
  grid is added to the result (``g <= 1`` below).  The distance between the
  two bounds is the reported gap.

The tilting identity: with ``M_i(lam) = E_{P_i}[e^(lam L_i)]`` and S the sum
of the losses, for ``lam >= 0``

    E[max(0, 1 - e^(eps - S))] = prod_i M_i(lam) e^(-lam eps) E_lam[g(S)],
    g(S) = max(0, 1 - e^(eps - S)) e^(-lam (S - eps)) in [0, 1],

where ``E_lam`` is the expectation under the tilted laws
``P_i(L) e^(lam L) / M_i(lam)`` -- an identity for any law, so it holds for
the rounded one, whose divergence bounds the true one.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2; Proposition 5).
Koskela, Jälkö, Honkela. *Computing tight differential privacy guarantees
using FFT*, AISTATS 2020 (PLD composition by FFT).
Meiser, Mohammadi. *Tight on budget? Tight bounds for r-fold approximate
differential privacy*, CCS 2018 (pessimistic rounding of privacy losses).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.enclosures import U, gamma, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.grid import GRID_CELLS, log_delta_grid
from smoothdp_nb.core.numerics.privacy_loss.lattice import (
    LATTICE_CELLS,
    LATTICE_FROM,
    composed_cells,
    lattice_step,
    on_lattice,
)
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution, log_inf_of_product
from smoothdp_nb.core.numerics.privacy_loss.renyi import renyi_of_parts
from smoothdp_nb.core.numerics.privacy_loss.rounding import (
    log_sum_bounded,
    log_total,
    outward,
)

__all__ = [
    "LossDistribution",
    "ComposedLoss",
    "compose_exact",
    "log_delta_grid",
    "EXACT_SUPPORT",
    "GRID_CELLS",
    "log_total",
    "outward",
]

#: largest support of an exactly composed loss distribution (beyond: the grid)
EXACT_SUPPORT = 2**15
#: largest outer-sum table built by one exact composition step
_OUTER_CELLS = 2**23
# outer-sum tables from this many cells are probed on a few rows first
_PROBE_CELLS = 2**17
# losses closer than this (relative) are one loss after an exact composition step
_MERGE_REL = 2.0**-44


def _merge(L: FloatArray, lm: FloatArray, upper: bool, lm_err: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Merge losses closer than ``_MERGE_REL`` (relative) into one atom, pessimistically
    (upper: at the cluster's largest loss; lower: the smallest).
    ``lm_err``: a bound on the absolute error of each log-mass; the cluster's mass is
    their log-sum rounded outward (:func:`log_sum_bounded`)."""
    order = np.argsort(L, kind="stable")
    L, lm, lm_err = L[order], lm[order], lm_err[order]
    if L.size == 0:
        return L, lm
    gap = np.diff(L)
    scale = np.maximum(np.abs(L[1:]), np.abs(L[:-1]))
    new = np.concatenate([[True], gap > _MERGE_REL * np.maximum(scale, 1.0)])
    groups = np.cumsum(new) - 1
    count = int(groups[-1]) + 1
    starts = np.nonzero(new)[0]
    ends = np.concatenate([starts[1:], [L.size]]) - 1
    # every loss is already rounded toward the bound's side (:func:`_compose_two`): the
    # cluster's largest (smallest) is a bound for all of them
    rep = L[ends] if upper else L[starts]
    return rep, log_sum_bounded(groups, lm, count, upper, lm_err)


def _add_outward(a: FloatArray, b: FloatArray, upper: bool) -> FloatArray:
    """``a + b`` rounded toward the bound's side, exact sums (``0 + 0``) left exact: the
    rounding error of the float sum is found exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    out: FloatArray = np.where(err > 0, next_up(s), s) if upper else np.where(err < 0, next_down(s), s)
    return out


def _compose_two(a: LossDistribution, b: LossDistribution, upper: bool) -> LossDistribution | None:
    """The PLD of the product of two independent pairs (None when too large for the exact path).

    Both are measures rounded in the bound's direction; the product's losses are the
    sums, each rounded toward the bound's side (:func:`_add_outward`), its masses the products (the float sum of two logs is within
    ``u |sum|``), and its infinite mass :func:`log_inf_of_product`."""
    if a.size * b.size > _OUTER_CELLS:
        return None
    if a.size * b.size > _PROBE_CELLS:
        # a part of the table first: when a few rows already hold more distinct sums than
        # the exact path keeps, the whole table will (a choice of method only: the grid
        # bounds hold as well)
        small, large = (a, b) if a.size <= b.size else (b, a)
        rows = max(1, _PROBE_CELLS // large.size)
        probe = (small.losses[:rows, None] + large.losses[None, :]).ravel()
        if np.unique(probe).size > EXACT_SUPPORT:
            return None
    la = np.broadcast_to(a.losses[:, None], (a.size, b.size)).ravel()
    lb = np.broadcast_to(b.losses[None, :], (a.size, b.size)).ravel()
    L = _add_outward(la, lb, upper)
    lm = (a.log_mass[:, None] + b.log_mass[None, :]).ravel()
    L, lm = _merge(L, lm, upper, 1.0001 * U * np.abs(lm))
    if L.size > EXACT_SUPPORT:
        return None
    li = log_inf_of_product([(a, 1), (b, 1)], upper)
    return LossDistribution(L, lm, li)


def compose_exact(parts: list[tuple[LossDistribution, int]], upper: bool) -> LossDistribution | None:
    """The composition of ``k_i`` copies of each part, exactly (up to the merging
    rule of the module docstring, in the bound's direction), by repeated
    squaring; None as soon as a support exceeds :data:`EXACT_SUPPORT`."""
    live = [(d, k) for d, k in parts if k > 0]
    if len(live) == 1 and live[0][1] == 1:  # nothing to compose, whatever the support
        return live[0][0]
    total: LossDistribution | None = None  # the identity (loss 0 with mass 1)
    for dist, k in live:
        power: LossDistribution | None = dist
        while k:
            if power is None:
                return None
            if k & 1:
                total = power if total is None else _compose_two(total, power, upper)
                if total is None:
                    return None
            k >>= 1
            if k:
                power = _compose_two(power, power, upper)
    return total if total is not None else LossDistribution(np.zeros(1), np.zeros(1))


# ---------------------------------------------------------------------------
# a composition of pair losses, evaluated exactly or on the grid
# ---------------------------------------------------------------------------


@dataclass
class ComposedLoss:
    """The privacy loss of a composition on one ordered pair: ``k_i`` independent
    copies of each part (one direction).  Evaluated lazily: exactly when the
    composed support stays below :data:`EXACT_SUPPORT`, else on the tilted grid.

    ``parts`` are the runs' loss distributions rounded for an upper bound (P
    masses up, Q masses down: :meth:`LossDistribution.from_log_pmfs`), and
    ``lower_parts`` the same runs rounded the other way (default: ``parts``,
    for runs given exactly).  Each bound is then composed in its own direction.
    """

    parts: list[tuple[LossDistribution, int]]
    cells: int = GRID_CELLS
    lower_parts: list[tuple[LossDistribution, int]] | None = None
    _exact: dict[bool, LossDistribution | None] = field(default_factory=dict, repr=False)
    _lattice: dict[tuple[str, bool], tuple[float, list[tuple[LossDistribution, int]], float] | None] = field(
        default_factory=dict, repr=False
    )

    def parts_for(self, upper: bool) -> list[tuple[LossDistribution, int]]:
        """The runs rounded in the bound's direction."""
        return self.parts if upper or self.lower_parts is None else self.lower_parts

    def exact(self, upper: bool = True) -> LossDistribution | None:
        """The composed law in the bound's direction, or None when too large."""
        if upper not in self._exact:
            if self._exact.get(not upper, True) is None:  # the other bound's support did not fit: nor will this one's
                self._exact[upper] = None
            else:
                self._exact[upper] = compose_exact(self.parts_for(upper), upper)
        return self._exact[upper]

    def lattice(self, upper: bool = True) -> tuple[float, list[tuple[LossDistribution, int]], float] | None:
        """(step g, the runs placed on the lattice of g, the composed shift T) when every
        loss is on one lattice and the composed index range is at most
        :data:`~smoothdp_nb.core.numerics.privacy_loss.lattice.LATTICE_CELLS`; else None.
        The composed loss is then ``K g + T`` (:mod:`.lattice`), T rounded toward the
        bound's side."""
        key = ("lattice", upper)
        if key not in self._lattice:
            g = lattice_step(self.parts)
            out = None
            if g is not None and composed_cells(self.parts, g) <= LATTICE_CELLS:
                placed = [(on_lattice(d, g, upper), k) for d, k in self.parts_for(upper) if k > 0]
                shifts = [k * tau for (_, tau), k in placed]
                T = math.fsum(shifts)
                err = float(gamma(len(shifts) + 2)) * math.fsum(abs(v) for v in shifts)
                T = float(next_up(T + err)) if upper else float(next_down(T - err))
                out = (g, [(d, k) for (d, _), k in placed], T)
            self._lattice[key] = out
        return self._lattice[key]

    def method(self, upper: bool = True) -> str:
        """How :meth:`log_delta` evaluates this composition: ``"exact"`` (outer sums, equal
        losses merged), ``"lattice"`` (counting on the lattice of one step) or ``"grid"``
        (the tilted pessimistic grid)."""
        lat = self.lattice(upper)
        if lat is not None and composed_cells(self.parts, lat[0]) >= LATTICE_FROM:
            return "lattice"
        if self.exact(upper) is not None:
            return "exact"
        return "lattice" if lat is not None else "grid"

    def log_delta(self, epsilon: FloatArray, upper: bool = True) -> FloatArray:
        """log of a proven upper (lower) bound on d_eps for every epsilon, shape (E,)."""
        e = np.atleast_1d(np.asarray(epsilon, dtype=float))
        how = self.method(upper)
        if how == "exact":
            ex = self.exact(upper)
            assert ex is not None
            vals = ex.log_delta(e, upper)
        elif how == "lattice":
            lat = self.lattice(upper)
            assert lat is not None
            g, placed, T = lat
            # d_eps(K g + T) = d_(eps - T)(K g); a smaller epsilon only raises the upper bound
            shifted = next_down(e - T) if upper else next_up(e - T)
            vals = np.array(
                [log_delta_grid(placed, float(v), upper, self.cells, step=g)[0] for v in np.atleast_1d(shifted)]
            )
        else:
            vals = np.array([log_delta_grid(self.parts_for(upper), float(v), upper, self.cells)[0] for v in e])
        out: FloatArray = np.minimum(vals, 0.0)
        return out

    def renyi(self, alpha: float) -> tuple[float, float]:
        """(lower, upper) proven bounds on the Renyi divergence of order ``alpha >= 0`` (nats):
        the runs' divergences add, so nothing is composed
        (:func:`~smoothdp_nb.core.numerics.privacy_loss.renyi.renyi_of_parts`)."""
        return renyi_of_parts(self.parts_for(True), self.parts_for(False), alpha)
