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
finite masses, :func:`_log_inf_of_product`).  Every float step then rounds in
the bound's direction: log-sums by :func:`_lse_error`, additions one ulp out.

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
from scipy.signal import fftconvolve
from scipy.special import logsumexp

from ..array_types import FloatArray
from ..divergence import log1mexp
from ..enclosures import LIBM_REL, U, gamma, log_rel, next_down, next_up

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
#: cells of the composed grid (its spacing h follows from the width of the law)
GRID_CELLS = 2**18
# losses closer than this (relative) are one loss after an exact composition step
_MERGE_REL = 2.0**-44
# tilted grids keep cells down to this fraction of their largest cell (the rest is bounded)
_LOG_KEEP = -900.0 * math.log(2.0)
# half-width of a tilted grid, in tilted standard deviations of the composed law
_WINDOW_SD = 40.0
_U = float(np.finfo(float).eps)
# atoms of the coarse summary used to choose the tilt and the cut
_COARSE_BINS = 4096


def _log1mexp_scalar(x: float) -> float:
    return float(log1mexp(np.array(x)))


def outward(value: npt.ArrayLike, err: npt.ArrayLike, upper: bool) -> FloatArray:
    """``value + err`` rounded up (upper) or ``value - err`` rounded down; ``-inf`` (an
    exact zero mass) stays ``-inf``."""
    v = np.asarray(value, dtype=float)
    e = np.asarray(err, dtype=float)
    with np.errstate(invalid="ignore"):
        r = next_up(v + e) if upper else next_down(v - e)
    out: FloatArray = np.where(np.isneginf(v), -np.inf, r)
    return out


def _lse_error(count: npt.ArrayLike, spread: npt.ArrayLike, result: npt.ArrayLike) -> FloatArray:
    """A proven bound on the absolute error of a log-sum-exp of ``count`` finite terms
    whose largest minus smallest is ``spread``, computed as ``top + log(sum exp(t - top))``
    (scipy's logsumexp and :func:`_log_sum_by` both): the differences ``t - top`` are
    off by ``u |t - top|``, each exp by :data:`LIBM_REL` (and ``2^-1073`` absolute where
    it underflows, against a sum of at least 1, the top term), the sum of ``count``
    non-negative terms by ``gamma_count``; the log of the sum (at most ``count``) adds
    ``LIBM_REL log(count)`` and the relative error r of the sum ``log_rel(r)``; the final
    addition ``u`` of the result."""
    c = np.asarray(count, dtype=float)
    r = gamma(c) + LIBM_REL + 1.0001 * U * np.asarray(spread, dtype=float) + c * 2.0**-1073
    res = np.abs(np.where(np.isfinite(result), result, 0.0))
    out: FloatArray = 1.01 * (log_rel(r) + LIBM_REL * np.log1p(c) + U * res) + 2.0**-1070
    return out


def _log_sum_bounded(
    groups: np.ndarray, log_vals: FloatArray, count: int, upper: bool, val_err: npt.ArrayLike = 0.0
) -> FloatArray:
    """:func:`_log_sum_by`, rounded outward: each value is the log of a mass known to
    within ``val_err`` (absolute, per value), so the group's log-sum is within the group's
    largest ``val_err`` plus the rounding of :func:`_lse_error`."""
    if count == 0:
        return np.empty(0)
    out = _log_sum_by(groups, log_vals, count)
    fin = np.isfinite(log_vals)
    top = np.full(count, -np.inf)
    np.maximum.at(top, groups, log_vals)
    low = np.full(count, np.inf)
    np.minimum.at(low, groups[fin], log_vals[fin])
    cnt = np.bincount(groups[fin], minlength=count)
    spread = np.where(np.isfinite(low) & np.isfinite(top), top - low, 0.0)
    ve = np.zeros(count)
    np.maximum.at(ve, groups, np.broadcast_to(np.asarray(val_err, dtype=float), log_vals.shape))
    return outward(out, _lse_error(cnt, spread, out) + ve, upper)


def log_total(log_vals: FloatArray, upper: bool) -> float:
    """log of the sum of the masses ``e^log_vals``, rounded outward."""
    if log_vals.size == 0:
        return -math.inf
    return float(_log_sum_bounded(np.zeros(log_vals.size, dtype=np.int64), log_vals, 1, upper)[0])


def _lae(a: float, b: float, upper: bool) -> float:
    """log(e^a + e^b) rounded outward (error below ``2u |result| + 2 LIBM_REL``)."""
    v = float(np.logaddexp(a, b))
    return float(outward(v, 2.0 * U * abs(v) + 2.0 * LIBM_REL, upper)) if math.isfinite(v) else v


def _add(a: float, b: float, upper: bool) -> float:
    """a + b rounded outward (``-inf`` absorbs)."""
    v = a + b
    if not math.isfinite(v):
        return v
    return float(next_up(v)) if upper else float(next_down(v))


def _log_inf_of_product(parts: list[tuple[LossDistribution, int]], upper: bool) -> float:
    """log of the mass of an infinite composed loss, ``prod_i T_i^k_i - prod_i F_i^k_i``
    (``F_i`` the finite mass of part i, ``T_i = F_i + I_i`` its total; for probability
    laws ``1 - prod (1 - I_i)^k_i``), rounded outward; it is non-decreasing in every
    ``F_i`` and ``I_i``, so bounds of the same direction give a bound.

    Computed as ``A + log(1 - e^x)`` with ``A = sum k_i log T_i`` and
    ``x = -sum k_i log(1 + I_i/F_i)``: the softplus terms carry ``2 LIBM_REL`` and
    ``u |log I_i - log F_i|`` relative to themselves, their sum ``gamma``, so x has
    a relative error r; ``|d log(1 - e^x)/d log|x|| <= 1``, so that is an absolute
    error r of the result, plus ``2 LIBM_REL`` and ``LIBM_REL`` of its size for
    log1mexp itself, and ``u`` per addition of A."""
    live = [(d, k) for d, k in parts if k > 0]
    if all(d.log_inf == -math.inf for d, _ in live):
        return -math.inf
    A = 0.0
    x = 0.0
    a_err = 0.0
    r = 0.0
    for d, k in live:
        F = d.log_total_finite(upper)
        T = _lae(F, d.log_inf, upper)
        A += k * T
        a_err += 2.0 * U * k * abs(T)
        if d.log_inf == -math.inf:
            continue
        if F == -math.inf:  # no finite mass: every copy is an infinite loss
            x = -math.inf
            continue
        y = d.log_inf - F
        x -= k * float(np.logaddexp(0.0, y))
        r = max(r, 4.0 * LIBM_REL + 2.0 * U * (abs(d.log_inf) + abs(F) + abs(y)))
    r += float(gamma(2 * len(live) + 2))
    lm = _log1mexp_scalar(x) if x != -math.inf else 0.0
    err = 1.01 * log_rel(r) + 2.0 * LIBM_REL + LIBM_REL * abs(lm) + a_err + 2.0 * U * abs(A + lm)
    v = float(outward(A + lm, float(err), upper))
    return min(v, 0.0)  # the true mass is a probability: at most 1 (log 0)


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
            mass = _log_sum_by(groups, self.log_mass, count)
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
        summed, the sum rounded up (``upper``) or down (:func:`_log_sum_bounded`)."""
        L = np.asarray(losses, dtype=float).ravel()
        lm = np.asarray(log_mass, dtype=float).ravel()
        keep = np.isfinite(lm)
        L, lm = L[keep], lm[keep]
        if L.size and bool(np.all(L[1:] > L[:-1])):  # already distinct and increasing
            return cls(L, lm, float(log_inf))
        uniq, inv = np.unique(L, return_inverse=True)
        return cls(uniq, _log_sum_bounded(inv.ravel(), lm, uniq.size, upper), float(log_inf))

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
        summed by logsumexp (:func:`_lse_error`) and the ``+inf`` mass added
        (:func:`_lae`)."""
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
            err = _lse_error(cnt, spread, total) + t_err.max(axis=1)
            part = outward(total, err, upper)
            out[s : s + step] = [_lae(float(a), self.log_inf, upper) for a in part]
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
        ``u (|log_mass| + 2 |lam L|)`` and the sum is :func:`_lse_error`."""
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
        return float(outward(v, float(_lse_error(int(fin.sum()), spread, v)) + te, True))

    def tilted_moments(self, lam: float) -> tuple[float, float]:
        """Mean and variance of the loss under the law tilted by ``e^(lam L)`` (finite part)."""
        t = self.log_mass + lam * self.losses
        w = np.exp(t - t.max())
        w /= w.sum()
        mean = float(np.dot(w, self.losses))
        dev = self.losses - mean
        var = float(np.dot(w, dev * dev))
        return mean, var


def _log_sum_by(groups: np.ndarray, log_vals: FloatArray, count: int) -> FloatArray:
    """logsumexp of ``log_vals`` within each group 0..count-1 (stable: scaled by the group max)."""
    if count == 0:
        return np.empty(0)
    top = np.full(count, -np.inf)
    np.maximum.at(top, groups, log_vals)
    safe = np.where(np.isfinite(top), top, 0.0)
    acc = np.zeros(count)
    np.add.at(acc, groups, np.exp(log_vals - safe[groups]))
    with np.errstate(divide="ignore"):
        out: FloatArray = safe + np.log(acc)
    return np.where(np.isfinite(top), out, -np.inf)


def _merge(L: FloatArray, lm: FloatArray, upper: bool, lm_err: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Merge losses closer than ``_MERGE_REL`` (relative) into one atom, pessimistically
    (upper: at the cluster's largest loss, one ulp up; lower: the smallest, one ulp down).
    ``lm_err``: a bound on the absolute error of each log-mass; the cluster's mass is
    their log-sum rounded outward (:func:`_log_sum_bounded`)."""
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
    return rep, _log_sum_bounded(groups, lm, count, upper, lm_err)


def _compose_two(a: LossDistribution, b: LossDistribution, upper: bool) -> LossDistribution | None:
    """The PLD of the product of two independent pairs (None when too large for the exact path).

    Both are measures rounded in the bound's direction; the product's losses are the
    sums (each float sum is within half an ulp, and the merge moves it one ulp
    outward), its masses the products (the float sum of two logs is within
    ``u |sum|``), and its infinite mass :func:`_log_inf_of_product`."""
    if a.size * b.size > _OUTER_CELLS:
        return None
    L = (a.losses[:, None] + b.losses[None, :]).ravel()
    lm = (a.log_mass[:, None] + b.log_mass[None, :]).ravel()
    L, lm = _merge(L, lm, upper, 1.0001 * U * np.abs(lm))
    if L.size > EXACT_SUPPORT:
        return None
    li = _log_inf_of_product([(a, 1), (b, 1)], upper)
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
# the grid path
# ---------------------------------------------------------------------------


@dataclass
class _Grid:
    """A tilted law on the grid ``(offset + i) h``: linear cell masses (summing to about 1)
    and a proven bound on the tilted mass not represented by the cells."""

    offset: int
    cells: FloatArray
    slack: float = 0.0


def _fft_bound(a: FloatArray, b: FloatArray) -> float:
    """A bound on the absolute error of every cell of an FFT convolution of non-negative
    a and b: a generous multiple of ``u log2(N) ||a||_1 ||b||_1``."""
    N = a.size + b.size
    return 16.0 * _U * max(1.0, math.log2(N)) * float(a.sum()) * float(b.sum()) + 1e-300


def _convolve(a: _Grid, b: _Grid, upper: bool) -> _Grid:
    if min(a.cells.size, b.cells.size) <= 64:
        c = np.convolve(a.cells, b.cells)
        # non-negative terms: each cell's relative error is at most (len) u
        rel = (min(a.cells.size, b.cells.size) + 2) * _U
        c = c * (1 + rel) if upper else c * (1 - rel)
    else:
        c = fftconvolve(a.cells, b.cells)
        err = _fft_bound(a.cells, b.cells)
        c = c + err if upper else c - err
        c = np.maximum(c, 0.0)
    out = _Grid(a.offset + b.offset, c, a.slack + b.slack + a.slack * b.slack)
    return _trim(out)


def _trim(g: _Grid) -> _Grid:
    """Drop the end cells below ``2^-900`` of the largest; their mass joins the slack."""
    c = g.cells
    top = float(c.max()) if c.size else 0.0
    if top <= 0:
        return g
    keep = np.nonzero(c >= top * math.exp(_LOG_KEEP))[0]
    lo, hi = int(keep[0]), int(keep[-1]) + 1
    dropped = float(c[:lo].sum() + c[hi:].sum())
    return _Grid(g.offset + lo, c[lo:hi], g.slack + dropped * (1 + 1e-12))


def _tilted_grid(dist: LossDistribution, lam: float, h: float, upper: bool) -> tuple[_Grid, float]:
    """(the tilted law of the rounded losses on the grid, log of its normaliser M(lam))."""
    idx = (np.ceil(dist.losses / h) if upper else np.floor(dist.losses / h)).astype(np.int64)
    # the division rounds: make sure every grid value really lies on the bound's side
    # (the real grid value idx h is within u |idx h| of the float product: keep 2u clear)
    if upper:
        idx = idx + (idx * h - 2.0 * U * np.abs(idx * h) < dist.losses)
    else:
        idx = idx - (idx * h + 2.0 * U * np.abs(idx * h) > dist.losses)
    t = dist.log_mass + lam * (idx * h)
    log_m = float(logsumexp(t))
    rel = t - log_m
    keep = rel >= _LOG_KEEP
    dropped = float(np.exp(logsumexp(rel[~keep]))) if (~keep).any() else 0.0
    ki = idx[keep]
    lo, hi = int(ki.min()), int(ki.max())
    cells: FloatArray = np.bincount(ki - lo, weights=np.exp(rel[keep]), minlength=hi - lo + 1).astype(float)
    # cells e^log_m must bound e^(log_mass + lam idx h) cell by cell: t is off by
    # u (|log_mass| + 2 |lam idx h|) + u |t|, rel by u |rel|, exp by LIBM_REL, the
    # bincount sums by gamma(size); log_m is only a common factor (its own error
    # cancels), and is moved outward as well for safety
    err_t = 1.01 * U * float(np.max(np.abs(dist.log_mass) + 3.0 * np.abs(lam * idx * h) + np.abs(rel)))
    r = 2.0 * (math.expm1(err_t) + LIBM_REL + float(gamma(dist.size + 1)))
    if upper:
        cells = cells * (1 + r)
        log_m = log_m + 4 * _U * (1 + abs(log_m))
    else:
        cells = np.maximum(cells * (1 - r), 0.0)
        log_m = log_m - 4 * _U * (1 + abs(log_m))
    return _Grid(lo, cells, dropped * (1 + r) * (1 + 1e-12) if upper else 0.0), log_m


def _saddle(parts: list[tuple[LossDistribution, int]], epsilon: float) -> float:
    """The tilt lam >= 0 at which the composed tilted mean is epsilon (0 when the
    untilted mean is above it).  Newton steps on the increasing mean (its
    derivative is the tilted variance), kept inside a bisection bracket.  Any
    lam >= 0 gives a valid bound; this one makes it tight."""

    def moments(lam: float) -> tuple[float, float]:
        mv = [(k, d.tilted_moments(lam)) for d, k in parts if d.size]
        return sum(k * m for k, (m, _) in mv), sum(k * v for k, (_, v) in mv)

    mean, var = moments(0.0)
    if mean >= epsilon:
        return 0.0
    lo, hi = 0.0, math.inf
    lam = 0.0
    for _ in range(200):
        if mean < epsilon:
            lo = lam
        else:
            hi = lam
        if math.isfinite(hi) and hi - lo <= 1e-7 * hi:
            break
        step = lam + (epsilon - mean) / var if var > 0 else math.inf
        if not (lo < step < hi):  # Newton left the bracket: bisect (or grow)
            step = 0.5 * (lo + hi) if math.isfinite(hi) else max(2 * lo, 1.0)
        if step > 1e12:
            return 1e12
        lam = step
        mean, var = moments(lam)
    return hi if math.isfinite(hi) else lam


def _truncate(d: LossDistribution, log_tail: float) -> tuple[LossDistribution, float]:
    """(the atoms whose upper tail mass ``P(L >= loss)`` exceeds ``e^log_tail``, log of the
    mass of the others); the cut atoms are those of largest loss."""
    if d.size == 0:
        return d, -math.inf
    if log_tail == -math.inf:
        return d, -math.inf
    tail = d.log_tail()  # log P(L >= losses[i]), non-increasing
    keep = int(np.searchsorted(-tail, -log_tail, side="right"))  # atoms with tail >= e^log_tail
    keep = max(keep, 1)
    if keep >= d.size:
        return d, -math.inf
    return LossDistribution(d.losses[:keep], d.log_mass[:keep]), float(tail[keep])


# thresholds tried for the cut of the largest losses (log of the tail mass an atom needs to be
# kept); -inf keeps every atom
_CUTS = (-20.0, -60.0, -200.0, -700.0, -2000.0, -7000.0, -2e4, -7e4, -2e5, -7e5, -2e6, -math.inf)


def _chernoff(parts: list[tuple[LossDistribution, int]], epsilon: float) -> tuple[float, float]:
    """(lam, log bound): ``sum k_i log M_i(lam) - lam eps`` at its minimum over lam >= 0,
    a bound on log E[max(0, 1 - e^(eps - S)); S finite] (the identity with g <= 1)."""
    top = sum(k * float(d.losses[-1]) for d, k in parts)
    if top < epsilon - 1e-9 * (1 + abs(top)):
        return 0.0, -math.inf
    lam = _saddle(parts, min(epsilon, top - 1e-6 * (1 + abs(top))))
    return lam, sum(k * d.log_moment(lam) for d, k in parts) - lam * epsilon


def log_delta_grid(
    parts: list[tuple[LossDistribution, int]], epsilon: float, upper: bool, cells: int = GRID_CELLS
) -> tuple[float, float]:
    """(log of a bound on d_eps of the composition, grid spacing h) by the tilted grid.

    ``upper``: losses rounded up, FFT error and dropped mass added (a proven
    upper bound); else rounded down, errors subtracted (a lower bound).
    The largest losses of each run may be cut (their mass counted as an
    infinite loss, a union bound over the runs) where that makes the law
    tilt well: several cuts are tried by their Chernoff bound
    (``g <= 1`` in the identity of the module docstring), the best is
    computed on the grid, and the smaller of the two bounds is returned.
    """
    live = [(d, k) for d, k in parts if k > 0]
    # the +inf atoms: S = +inf when any run hits one
    log_inf = _log_inf_of_product(live, upper)
    # the union bound of the cut below holds for probability laws; the upper measures may
    # weigh a hair above 1, so the cut mass is scaled by the product of their totals
    log_totals = max(0.0, sum(k * _lae(d.log_total_finite(True), d.log_inf, True) for d, k in live))
    finite = [(d, k) for d, k in live if d.size]
    if not finite:
        return log_inf, 0.0
    # choose the cut (per-run log tail mass) and the tilt on coarse summaries
    best: tuple[float, float] | None = None  # (bound, cut)
    for cut in reversed(_CUTS):  # from no cut to deep cuts: stop when cutting costs more
        cut_parts, coarse_parts, log_cut = [], [], -math.inf
        for d, k in finite:
            t, lt = _truncate(d, cut)
            cut_parts.append((t, k))
            coarse_parts.append((t.coarse(), k))
            log_cut = float(np.logaddexp(log_cut, math.log(k) + lt))
        lam_c, _ = _chernoff(coarse_parts, epsilon)  # the tilt, from the summaries
        bound = sum(k * d.log_moment(lam_c) for d, k in cut_parts) - lam_c * epsilon
        total = float(np.logaddexp(bound, log_cut))
        if best is not None and total > best[0] and best[1] > -math.inf:
            break  # past the balance of cut mass and Chernoff bound: shallower cuts only cost more
        if best is None or total < best[0]:
            best = (total, cut)
    assert best is not None
    cut = best[1]
    trunc, log_cut = [], -math.inf
    for d, k in finite:
        t, lt = _truncate(d, cut)
        trunc.append((t, k))
        if lt > -math.inf:  # the tail sums (a log-add-exp accumulation) and the union, outward
            tail = d.log_tail()
            acc = d.size * (2.0 * U * max(abs(float(tail[0])), abs(float(tail[-1]))) + 2.0 * LIBM_REL)
            log_cut = _lae(log_cut, _add(float(np.log(k)) * (1 + 2 * U), lt + acc, True), True)
    log_cut = _add(log_cut, log_totals, True)
    finite = trunc
    lam = _saddle([(d.coarse(), k) for d, k in finite], epsilon) if finite else 0.0
    top = sum(k * float(d.losses[-1]) for d, k in finite)
    if not finite or top < epsilon - 1e-9 * (1 + abs(top)):  # no finite composed loss exceeds epsilon
        return (float(np.logaddexp(log_inf, log_cut)) if upper else log_inf), 0.0
    chernoff = sum(k * d.log_moment_bound(lam) for d, k in finite) - lam * epsilon  # valid for any lam >= 0
    chernoff += 2.0 * U * (len(finite) + 2) * (sum(k * abs(d.log_moment(lam)) for d, k in finite) + lam * epsilon)
    var = sum(k * d.tilted_moments(lam)[1] for d, k in finite)
    width = 2 * _WINDOW_SD * math.sqrt(max(var, 0.0))
    spread = max(float(d.losses[-1] - d.losses[0]) for d, _ in finite)
    # any h gives proven bounds; a tilted law squeezed onto one atom (epsilon at the top
    # loss: a huge tilt, a tiny variance) must not make a run's grid span more than
    # 16 cells-widths of memory
    h = max((width if width > 0 else spread) / cells, spread / (16.0 * cells))
    if h <= 0 or not math.isfinite(h):  # point masses: one cell each
        h = max(1e-12, 1e-9 * max(abs(float(d.losses[0])) for d, _ in finite))
    total_grid = _Grid(0, np.ones(1))
    log_norm = 0.0
    for d, k in finite:
        g, log_m = _tilted_grid(d, lam, h, upper)
        log_norm += k * log_m
        power: _Grid | None = g
        while k:
            assert power is not None
            if k & 1:
                total_grid = _convolve(total_grid, power, upper)
            k >>= 1
            if k:
                power = _convolve(power, power, upper)
    S = (total_grid.offset + np.arange(total_grid.cells.size)) * h
    x = epsilon - S
    with np.errstate(divide="ignore"):
        l1m = np.where(x < 0, log1mexp(np.minimum(x, 0.0)), -np.inf)
        lg = l1m + lam * x  # log g(S)
        lc = np.log(total_grid.cells)
    terms = lc + lg
    fin = np.isfinite(terms)
    val = float(logsumexp(terms)) if fin.any() else -math.inf
    # g is evaluated at the float S and x, each within u (|S| + |eps|) of the real grid
    # value: g has slope at most 1 + lam where g > 0, an absolute error of at most
    # (1 + lam) delta per unit of tilted cell mass; log1mexp, exp, log and the additions
    # are relative (per term), the sum is :func:`_lse_error`
    delta = 2.02 * U * (float(np.abs(S).max(initial=0.0)) + abs(epsilon))
    absolute = (1.0 + lam) * delta * float(total_grid.cells.sum()) * (1.0 + 1e-12)
    if fin.any():
        t_err = float(
            np.max(
                np.where(fin, U * (np.abs(terms) + np.abs(lc) + 2.0 * lam * np.abs(x)) + LIBM_REL * np.abs(l1m), 0.0)
            )
        )
        spread = float(np.max(np.where(fin, terms, -np.inf)) - np.min(np.where(fin, terms, np.inf)))
        val = float(outward(val, float(_lse_error(int(fin.sum()), spread, val)) + t_err + 3.0 * LIBM_REL, upper))
    if upper:
        if absolute > 0:
            val = _lae(val, math.log(absolute), True)
        if total_grid.slack > 0:
            val = _lae(val, math.log(total_grid.slack) + 2 * U, True)
    elif val > -math.inf and absolute > 0:  # subtract the evaluation error (0 if it is all of it)
        gap = val - math.log(absolute)
        if gap > 1e-3:  # gap is off by u (|val| + |log absolute|), moving log1mexp by that / gap
            l1 = _log1mexp_scalar(-gap)
            slack = 4.0 * U * (1 + abs(val) + abs(math.log(absolute))) / gap + 3.0 * LIBM_REL * (1 + abs(l1))
            val = _add(val, l1 - slack, False)
        else:
            val = -math.inf
    grid = _add(_add(log_norm, -lam * epsilon, upper), val, upper)
    grid = float(outward(grid, 2.0 * U * (abs(log_norm) + lam * epsilon + abs(val)), upper))
    if upper:
        fin_b = min(grid, chernoff)
        return _lae(_lae(fin_b, log_cut, True), log_inf, True), h
    return _lae(grid, log_inf, False), h


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
