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
  outer sums of the supports, equal losses merged.  Float sums may differ in
  the last bits where the real sums are equal, so losses closer than
  ``2^-44`` relative are merged -- into the largest of them, one ulp up, for
  the upper bound (the hockey stick is non-decreasing in every loss, so moving
  mass to a larger loss never decreases it) and into the smallest, one ulp
  down, for the lower bound; a merged mass is their log-sum, widened by the
  proven error of the sum and of the products' log-additions.
* **grid** (:func:`log_delta_grid`), when it is large: every loss is rounded
  *up* onto a grid of spacing h (down, for the lower bound), the law is
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
import numpy.typing as npt
from scipy.special import logsumexp

from ..array_types import FloatArray
from ..divergence import log1mexp
from ..enclosures import LIBM_REL, U, next_down, next_up
from .grid import GRID_CELLS, log_delta_grid
from .rounding import (
    log_add_outward,
    log_inf_of_product,
    log_sum_bounded,
    log_sum_by,
    log_total,
    lse_error,
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
# losses closer than this (relative) are one loss after an exact composition step
_MERGE_REL = 2.0**-44
_U = float(np.finfo(float).eps)
# atoms of the coarse summary used to choose the tilt and the cut
_COARSE_BINS = 4096


@dataclass(frozen=True)
class LossDistribution:
    """The law of the privacy loss of one ordered pair (P, Q) under P.

    Attributes
    ----------
    losses : ndarray, shape (S,)
        Distinct finite losses ``log P(o)/Q(o)``, increasing.
    log_mass : ndarray, shape (S,)
        Natural log of the P-mass at each loss.
    log_inf : float
        Log of the P-mass where Q = 0 (loss ``+inf``); ``-inf`` when none.
    """

    losses: FloatArray
    log_mass: FloatArray
    log_inf: float = -math.inf
    _cache: dict[str, LossDistribution] = field(default_factory=dict, compare=False, repr=False)
    _arrays: dict[str, FloatArray] = field(default_factory=dict, compare=False, repr=False)

    def log_tail(self) -> FloatArray:
        """``log P(L >= losses[i])`` for every atom (cached)."""
        if "tail" not in self._arrays:
            self._arrays["tail"] = np.logaddexp.accumulate(self.log_mass[::-1])[::-1]
        return self._arrays["tail"]

    def coarse(self) -> LossDistribution:
        """At most ``_COARSE_BINS`` atoms: every loss rounded up to a bin's right end
        (so every tilted moment with lam >= 0 is an upper bound); used to choose
        the tilt and the cut, cheaply, never for a reported number."""
        if self.size <= _COARSE_BINS:
            return self
        if "coarse" not in self._cache:
            # consecutive atoms in groups of g, each at its largest loss
            g = -(-self.size // _COARSE_BINS)
            groups = np.arange(self.size) // g
            count = int(groups[-1]) + 1
            ends = np.minimum(np.arange(1, count + 1) * g, self.size) - 1
            mass = log_sum_by(groups, self.log_mass, count)
            self._cache["coarse"] = LossDistribution(self.losses[ends], mass, self.log_inf)
        return self._cache["coarse"]

    @classmethod
    def from_log_pmfs(
        cls,
        logp: npt.ArrayLike,
        logq: npt.ArrayLike,
        err_p: npt.ArrayLike = 0.0,
        err_q: npt.ArrayLike = 0.0,
        upper: bool = True,
    ) -> LossDistribution:
        """The PLD of P against Q, given their log-pmfs on a common output space,
        each value known to within ``err_p`` / ``err_q`` (absolute, in log).

        ``upper``: the masses are the P-masses rounded up and the losses
        ``log P - log Q`` with P rounded up and Q rounded down -- the PLD of a
        pair of measures ``P~ >= P``, ``Q~ <= Q`` (output by output), whose
        divergence, and that of any composition of it, is at least the true one
        (every ``max(0, P(o) - e^eps Q(o))`` of a product output is
        non-decreasing in the P-masses and non-increasing in the Q-masses).
        Else the reverse (a lower bound).  A ``-inf`` log-pmf is an exact 0
        (the law's support).  Outputs with equal losses are merged; outputs
        impossible under P carry no mass; where Q = 0 < P the mass goes to the
        ``+inf`` atom.
        """
        lp = np.asarray(logp, dtype=float).ravel()
        lq = np.asarray(logq, dtype=float).ravel()
        ep = np.broadcast_to(np.asarray(err_p, dtype=float), lp.shape)
        eq = np.broadcast_to(np.asarray(err_q, dtype=float), lq.shape)
        P = outward(lp, ep, upper)
        Q = outward(lq, eq, not upper)
        live = np.isfinite(lp)
        inf = live & ~np.isfinite(lq)
        fin = live & np.isfinite(lq)
        L = P[fin] - Q[fin]  # rounded to nearest: one ulp outward
        L = next_up(L) if upper else next_down(L)
        log_inf = log_total(P[inf], upper)
        return cls.from_atoms(L, P[fin], log_inf, upper)

    @classmethod
    def from_atoms(
        cls, losses: npt.ArrayLike, log_mass: npt.ArrayLike, log_inf: float = -math.inf, upper: bool = True
    ) -> LossDistribution:
        """Atoms (loss, log-mass), in any order and possibly repeated: equal losses are
        summed, the sum rounded up (``upper``) or down (:func:`log_sum_bounded`)."""
        L = np.asarray(losses, dtype=float).ravel()
        lm = np.asarray(log_mass, dtype=float).ravel()
        keep = np.isfinite(lm)
        L, lm = L[keep], lm[keep]
        if L.size and bool(np.all(L[1:] > L[:-1])):  # already distinct and increasing
            return cls(L, lm, float(log_inf))
        uniq, inv = np.unique(L, return_inverse=True)
        return cls(uniq, log_sum_bounded(inv.ravel(), lm, uniq.size, upper), float(log_inf))

    def log_total_finite(self, upper: bool) -> float:
        """log of the total mass of the finite losses, rounded outward (cached)."""
        key = "total_up" if upper else "total_lo"
        if key not in self._arrays:
            self._arrays[key] = np.array(log_total(self.log_mass, upper))
        return float(self._arrays[key])

    @property
    def size(self) -> int:
        """Number of distinct finite losses."""
        return int(self.losses.size)

    def log_delta(self, epsilon: FloatArray, upper: bool = True) -> FloatArray:
        """log d_eps for every epsilon (shape (E,)): the ``+inf`` mass plus
        ``sum P(L) (1 - e^(eps - L))`` over the losses above epsilon (no cancellation),
        of the atoms as given, rounded up (``upper``) or down.

        The rounding, per term ``log P(L) + log1mexp(eps - L)``: the sign of
        ``eps - L`` is exact (a correctly rounded difference), its value is off by
        ``u`` relative, which moves ``log(1 - e^x)`` by at most ``u`` (``|x e^x /
        (1 - e^x)| <= 1``); log1mexp's exp/expm1 and log add ``2.02 LIBM_REL`` and
        ``LIBM_REL`` of its size, the addition ``u`` of the term.  The terms are then
        summed by logsumexp (:func:`lse_error`) and the ``+inf`` mass added
        (:func:`log_add_outward`)."""
        e = np.atleast_1d(np.asarray(epsilon, dtype=float))
        out = np.full(e.size, self.log_inf)
        if self.size == 0:
            return out
        step = max(1, 2**22 // self.size)
        for s in range(0, e.size, step):
            x = e[s : s + step, None] - self.losses[None, :]
            pos = x < 0
            l1m = np.where(pos, log1mexp(np.minimum(x, 0.0)), -np.inf)
            terms = np.where(pos, self.log_mass[None, :] + l1m, -np.inf)
            fin = np.isfinite(terms)
            with np.errstate(invalid="ignore"):
                t_err = np.where(
                    fin, U * (1.0 + np.abs(terms)) + 2.02 * LIBM_REL + LIBM_REL * np.abs(np.where(fin, l1m, 0.0)), 0.0
                )
            cnt = fin.sum(axis=1)
            top = np.where(fin, terms, -np.inf).max(axis=1)
            low = np.where(fin, terms, np.inf).min(axis=1)
            with np.errstate(invalid="ignore"):
                spread = np.where(cnt > 0, top - low, 0.0)
            total = logsumexp(terms, axis=1)
            err = lse_error(cnt, spread, total) + t_err.max(axis=1)
            part = outward(total, err, upper)
            out[s : s + step] = [log_add_outward(float(a), self.log_inf, upper) for a in part]
        return out

    def log_moment(self, lam: float) -> float:
        """``log E_P[e^(lam L)]`` over the finite losses (the ``+inf`` atom excluded)."""
        if self.size == 0:
            return -math.inf
        with np.errstate(invalid="ignore"):
            t = self.log_mass + lam * self.losses
        return float(logsumexp(np.where(np.isnan(t), -np.inf, t)))

    def log_moment_bound(self, lam: float) -> float:
        """:meth:`log_moment` rounded up: each ``log_mass + lam L`` is within
        ``u (|log_mass| + 2 |lam L|)`` and the sum is :func:`lse_error`."""
        if self.size == 0:
            return -math.inf
        with np.errstate(invalid="ignore"):
            t = self.log_mass + lam * self.losses
        t = np.where(np.isnan(t), -np.inf, t)
        v = float(logsumexp(t))
        fin = np.isfinite(t)
        if not fin.any():
            return v
        te = float(np.max(np.where(fin, U * (np.abs(self.log_mass) + 2.0 * np.abs(lam * self.losses)), 0.0)))
        spread = float(np.max(t[fin]) - np.min(t[fin]))
        return float(outward(v, float(lse_error(int(fin.sum()), spread, v)) + te, True))

    def tilted_moments(self, lam: float) -> tuple[float, float]:
        """Mean and variance of the loss under the law tilted by ``e^(lam L)`` (finite part)."""
        t = self.log_mass + lam * self.losses
        w = np.exp(t - t.max())
        w /= w.sum()
        mean = float(np.dot(w, self.losses))
        dev = self.losses - mean
        var = float(np.dot(w, dev * dev))
        return mean, var


def _merge(L: FloatArray, lm: FloatArray, upper: bool, lm_err: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Merge losses closer than ``_MERGE_REL`` (relative) into one atom, pessimistically
    (upper: at the cluster's largest loss, one ulp up; lower: the smallest, one ulp down).
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
    rep = np.nextafter(L[ends], np.inf) if upper else np.nextafter(L[starts], -np.inf)
    return rep, log_sum_bounded(groups, lm, count, upper, lm_err)


def _compose_two(a: LossDistribution, b: LossDistribution, upper: bool) -> LossDistribution | None:
    """The PLD of the product of two independent pairs (None when too large for the exact path).

    Both are measures rounded in the bound's direction; the product's losses are the
    sums (each float sum is within half an ulp, and the merge moves it one ulp
    outward), its masses the products (the float sum of two logs is within
    ``u |sum|``), and its infinite mass :func:`log_inf_of_product`."""
    if a.size * b.size > _OUTER_CELLS:
        return None
    L = (a.losses[:, None] + b.losses[None, :]).ravel()
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

    def parts_for(self, upper: bool) -> list[tuple[LossDistribution, int]]:
        """The runs rounded in the bound's direction."""
        return self.parts if upper or self.lower_parts is None else self.lower_parts

    def exact(self, upper: bool = True) -> LossDistribution | None:
        """The composed law in the bound's direction, or None when too large."""
        if upper not in self._exact:
            self._exact[upper] = compose_exact(self.parts_for(upper), upper)
        return self._exact[upper]

    def log_delta(self, epsilon: FloatArray, upper: bool = True) -> FloatArray:
        """log of a proven upper (lower) bound on d_eps for every epsilon, shape (E,)."""
        e = np.atleast_1d(np.asarray(epsilon, dtype=float))
        ex = self.exact(upper)
        vals = (
            ex.log_delta(e, upper)
            if ex is not None
            else np.array([log_delta_grid(self.parts_for(upper), float(v), upper, self.cells)[0] for v in e])
        )
        out: FloatArray = np.minimum(vals, 0.0)
        return out

    def log_renyi_moment(self, alpha: float) -> float:
        """``log E_P[e^((alpha-1) S)]`` (``+inf`` when the loss can be infinite and alpha > 1):
        the moments multiply under composition, so this is exact without composing."""
        total = 0.0
        for d, k in self.parts:
            if k == 0:
                continue
            if d.log_inf > -math.inf and alpha > 1:
                return math.inf
            total += k * d.log_moment(alpha - 1.0)
        return total
