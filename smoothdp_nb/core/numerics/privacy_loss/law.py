"""The law of a privacy loss: :class:`LossDistribution`, the data type every other module of
:mod:`smoothdp_nb.core.numerics.privacy_loss` works on, and the infinite mass of a product of laws.

It lives below :mod:`.grid` and :mod:`.pld` (which compose laws) and above :mod:`.rounding`
(the outward-rounded arithmetic it uses), so that no two modules need each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.divergence import log1mexp
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, gamma, log_rel, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.rounding import (
    log1mexp_scalar,
    log_add_outward,
    log_sum_bounded,
    log_sum_by,
    log_total,
    lse_error,
    outward,
)

__all__ = ["LossDistribution", "log_inf_of_product", "probability_ball"]

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
    index : ndarray of float (integers), shape (S,), or None
        On a lattice law (:mod:`.lattice`): the integer multiple of the lattice step each
        loss stands for (``losses`` then holds those multiples, rounded outward).
    """

    losses: FloatArray
    log_mass: FloatArray
    log_inf: float = -math.inf
    index: FloatArray | None = field(default=None, compare=False, repr=False)
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
        # the widened bound toward the side of the measure, then each capped by what a
        # probability law allows (its own mass at most 1, at least 1 minus the others')
        P = _probability_bound(lp, ep, upper)
        Q = _probability_bound(lq, eq, not upper)
        live = np.isfinite(lp)
        inf = live & ~np.isfinite(lq)
        fin = live & np.isfinite(lq)
        L = _sub_outward(P[fin], Q[fin], upper)
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


def _sub_outward(a: FloatArray, b: FloatArray, upper: bool) -> FloatArray:
    """``a - b`` rounded toward the bound's side: the rounding error of the float difference
    is found exactly (Knuth's TwoSum), so an exact difference (0 where a = b) stays as it is."""
    s = a - b
    bb = s - a
    err = (a - (s - bb)) + (-b - bb)
    if upper:
        out: FloatArray = np.where(err > 0, next_up(s), s)
    else:
        out = np.where(err < 0, next_down(s), s)
    return out


def _probability_bound(logv: FloatArray, err: FloatArray, up: bool) -> FloatArray:
    """Bounds on the logs of a probability law's masses (along the last axis), each known to
    within ``err``: ``up``: ``log v + err`` rounded up, and at most ``log 1 = 0``; else
    ``log v - err`` rounded down, and at least ``log(1 - sum of the others' upper bounds)``
    -- the law sums to 1 -- which is exactly 0 when every other mass is an exact 0
    (``-inf``).  The others' sums are prefix plus suffix sums of the upper bounds
    (``exp_up``; no cancellation), each within ``gamma(n)`` of its value, plus ``u`` for
    the addition; ``1 - others`` is rounded down and its log carries ``LIBM_REL``."""
    if up:
        return np.minimum(outward(logv, err, True), 0.0)
    lo = outward(logv, err, False)
    n = logv.shape[-1] if logv.ndim else 0
    if n == 0:
        return lo
    with np.errstate(over="ignore"):
        hi = np.exp(np.minimum(outward(logv, err, True), 0.0)) * (1.0 + 2.0 * LIBM_REL)
    hi = np.where(np.isneginf(logv), 0.0, hi)
    zero = np.zeros(hi.shape[:-1] + (1,))
    pre = np.concatenate([zero, np.cumsum(hi, axis=-1)[..., :-1]], axis=-1)
    suf = np.concatenate([np.cumsum(hi[..., ::-1], axis=-1)[..., ::-1][..., 1:], zero], axis=-1)
    others = (pre + suf) * (1.0 + float(gamma(n + 2)))
    comp = next_down(1.0 - others)
    with np.errstate(divide="ignore", invalid="ignore"):
        lc = np.where(comp > 0, np.log(np.where(comp > 0, comp, 1.0)), -np.inf)
    lc = np.where(lc == 0.0, 0.0, next_down(lc - LIBM_REL * np.abs(lc)))
    lc = np.where(others == 0.0, 0.0, lc)  # every other mass an exact 0: this one is exactly 1
    out: FloatArray = np.where(np.isneginf(logv), -np.inf, np.maximum(lo, lc))
    return out


def probability_ball(logv: npt.ArrayLike, err: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(centre, radius): the log-masses of probability laws (rows, along the last axis)
    known to within ``err``, tightened by what a law allows (each mass at most 1 and at
    least 1 minus the others: :func:`_probability_bound`) and given back as a centre
    and a radius whose interval contains both bounds.  A mass alone in its law (every
    other one an exact 0, ``-inf``) is exactly 1: centre 0, radius 0.

    The centre is the float midpoint of the two bounds, the radius the larger distance
    from it to either bound, rounded up (0 where the bounds are equal: the midpoint is
    then exact); an exact 0 mass (``-inf``) keeps radius 0."""
    lv = np.asarray(logv, dtype=float)
    e = np.broadcast_to(np.asarray(err, dtype=float), lv.shape)
    hi = _probability_bound(lv, e, True)
    lo = _probability_bound(lv, e, False)
    live = np.isfinite(lo) & np.isfinite(hi)
    with np.errstate(invalid="ignore"):
        c = np.where(live, 0.5 * (lo + hi), lv)
        r = np.where(live, next_up(np.maximum(hi - c, c - lo)), e)
        r = np.where(live & (hi == lo), 0.0, r)  # equal bounds: the midpoint is exact
    centre: FloatArray = np.where(live, c, lv)
    radius: FloatArray = np.where(np.isneginf(lv), 0.0, np.maximum(r, 0.0))
    return centre, radius


def log_inf_of_product(parts: list[tuple[LossDistribution, int]], upper: bool) -> float:
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
        T = log_add_outward(F, d.log_inf, upper)
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
    lm = log1mexp_scalar(x) if x != -math.inf else 0.0
    err = 1.01 * log_rel(r) + 2.0 * LIBM_REL + LIBM_REL * abs(lm) + a_err + 2.0 * U * abs(A + lm)
    v = float(outward(A + lm, float(err), upper))
    return min(v, 0.0)  # the true mass is a probability: at most 1 (log 0)
