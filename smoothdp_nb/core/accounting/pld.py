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

Two evaluations, both returning a proven upper bound and a lower bound:

* **exact** (:func:`compose_exact`), while the composed support stays small:
  outer sums of the supports, equal losses merged.  Float sums may differ in
  the last bits where the real sums are equal, so losses closer than
  ``2^-44`` relative are merged -- into the largest of them, one ulp up, for
  the upper bound (the hockey stick is non-decreasing in every loss, so moving
  mass to a larger loss never decreases it) and into the smallest, one ulp
  down, for the lower bound; a merged mass of c terms is widened by
  ``(c + 4) u`` relative in the same direction (the rounding of its sum).
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

from .._types import FloatArray
from ..divergence import log1mexp

__all__ = [
    "LossDistribution",
    "ComposedLoss",
    "compose_exact",
    "log_delta_grid",
    "EXACT_SUPPORT",
    "GRID_CELLS",
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
# relative slack on the infinite-loss mass of a composition step (a few roundings)
_LOG_UP = math.log1p(2.0**-48)
# atoms of the coarse summary used to choose the tilt and the cut
_COARSE_BINS = 4096


def _log1mexp_scalar(x: float) -> float:
    return float(log1mexp(np.array(x)))


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
    def from_log_pmfs(cls, logp: npt.ArrayLike, logq: npt.ArrayLike) -> LossDistribution:
        """The PLD of P against Q, given their log-pmfs on a common output space.

        Outputs with equal losses are merged; outputs impossible under P carry
        no mass; where Q = 0 < P the mass goes to the ``+inf`` atom.
        """
        lp = np.asarray(logp, dtype=float).ravel()
        lq = np.asarray(logq, dtype=float).ravel()
        live = np.isfinite(lp)
        inf = live & ~np.isfinite(lq)
        fin = live & np.isfinite(lq)
        log_inf = float(logsumexp(lp[inf])) if inf.any() else -math.inf
        return cls.from_atoms(lp[fin] - lq[fin], lp[fin], log_inf)

    @classmethod
    def from_atoms(cls, losses: npt.ArrayLike, log_mass: npt.ArrayLike, log_inf: float = -math.inf) -> LossDistribution:
        """Atoms (loss, log-mass), in any order and possibly repeated (equal losses are summed)."""
        L = np.asarray(losses, dtype=float).ravel()
        lm = np.asarray(log_mass, dtype=float).ravel()
        keep = np.isfinite(lm)
        L, lm = L[keep], lm[keep]
        if L.size and bool(np.all(L[1:] > L[:-1])):  # already distinct and increasing
            return cls(L, lm, float(log_inf))
        uniq, inv = np.unique(L, return_inverse=True)
        return cls(uniq, _log_sum_by(inv.ravel(), lm, uniq.size), float(log_inf))

    @property
    def size(self) -> int:
        """Number of distinct finite losses."""
        return int(self.losses.size)

    def log_delta(self, epsilon: FloatArray) -> FloatArray:
        """log d_eps(P, Q) for every epsilon (shape (E,)): the ``+inf`` mass plus
        ``sum P(L) (1 - e^(eps - L))`` over the losses above epsilon (no cancellation)."""
        e = np.atleast_1d(np.asarray(epsilon, dtype=float))
        out = np.full(e.size, self.log_inf)
        if self.size == 0:
            return out
        step = max(1, 2**22 // self.size)
        for s in range(0, e.size, step):
            x = e[s : s + step, None] - self.losses[None, :]
            terms = np.where(x < 0, self.log_mass[None, :] + log1mexp(np.minimum(x, 0.0)), -np.inf)
            out[s : s + step] = np.logaddexp(logsumexp(terms, axis=1), self.log_inf)
        return out

    def log_moment(self, lam: float) -> float:
        """``log E_P[e^(lam L)]`` over the finite losses (the ``+inf`` atom excluded)."""
        if self.size == 0:
            return -math.inf
        with np.errstate(invalid="ignore"):
            t = self.log_mass + lam * self.losses
        return float(logsumexp(np.where(np.isnan(t), -np.inf, t)))

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


def _merge(L: FloatArray, lm: FloatArray, upper: bool) -> tuple[FloatArray, FloatArray]:
    """Merge losses closer than ``_MERGE_REL`` (relative) into one atom, pessimistically
    (upper: at the cluster's largest loss, one ulp up; lower: the smallest, one ulp down)."""
    order = np.argsort(L, kind="stable")
    L, lm = L[order], lm[order]
    if L.size == 0:
        return L, lm
    gap = np.diff(L)
    scale = np.maximum(np.abs(L[1:]), np.abs(L[:-1]))
    new = np.concatenate([[True], gap > _MERGE_REL * np.maximum(scale, 1.0)])
    groups = np.cumsum(new) - 1
    count = int(groups[-1]) + 1
    starts = np.nonzero(new)[0]
    ends = np.concatenate([starts[1:], [L.size]]) - 1
    # a sum of c positive terms (each a product of two rounded masses) is within
    # (c + 4) u relative of the exact sum: widen by that, in the bound's direction
    slack = np.log1p((ends - starts + 1 + 4) * _U)
    if upper:
        rep = np.nextafter(L[ends], np.inf)
        mass = _log_sum_by(groups, lm, count) + slack
    else:
        rep = np.nextafter(L[starts], -np.inf)
        mass = _log_sum_by(groups, lm, count) - slack
    return rep, mass


def _compose_two(a: LossDistribution, b: LossDistribution, upper: bool) -> LossDistribution | None:
    """The PLD of the product of two independent pairs (None when too large for the exact path)."""
    if a.size * b.size > _OUTER_CELLS:
        return None
    L = (a.losses[:, None] + b.losses[None, :]).ravel()
    lm = (a.log_mass[:, None] + b.log_mass[None, :]).ravel()
    L, lm = _merge(L, lm, upper)
    if L.size > EXACT_SUPPORT:
        return None
    # P(some loss infinite) = 1 - (1 - a)(1 - b), with slack in the bound's direction
    la, lb = a.log_inf, b.log_inf
    if la == -math.inf and lb == -math.inf:
        li = -math.inf
    else:
        li = _log1mexp_scalar(_log1mexp_scalar(la) + _log1mexp_scalar(lb))
        li = min(0.0, li + (_LOG_UP if upper else -_LOG_UP))
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
    if upper:
        idx = idx + (idx * h < dist.losses)
    else:
        idx = idx - (idx * h > dist.losses)
    t = dist.log_mass + lam * (idx * h)
    log_m = float(logsumexp(t))
    rel = t - log_m
    lo, hi = int(idx.min()), int(idx.max())
    keep = rel >= _LOG_KEEP
    dropped = float(np.exp(logsumexp(rel[~keep]))) if (~keep).any() else 0.0
    ki = idx[keep]
    lo, hi = int(ki.min()), int(ki.max())
    cells: FloatArray = np.bincount(ki - lo, weights=np.exp(rel[keep]), minlength=hi - lo + 1).astype(float)
    if upper:  # rounding of exp and of the sums in bincount, outward
        cells = cells * (1 + 4 * _U)
        log_m = log_m + 4 * _U * (1 + abs(log_m))
    else:
        cells = cells * (1 - 4 * _U)
        log_m = log_m - 4 * _U * (1 + abs(log_m))
    return _Grid(lo, cells, dropped * (1 + 1e-12) if upper else 0.0), log_m


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
    log_fin = sum(k * _log1mexp_scalar(d.log_inf) for d, k in live)  # log P(no infinite loss)
    log_inf = _log1mexp_scalar(log_fin)
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
        log_cut = float(np.logaddexp(log_cut, math.log(k) + lt))
    finite = trunc
    lam = _saddle([(d.coarse(), k) for d, k in finite], epsilon) if finite else 0.0
    top = sum(k * float(d.losses[-1]) for d, k in finite)
    if not finite or top < epsilon - 1e-9 * (1 + abs(top)):  # no finite composed loss exceeds epsilon
        return (float(np.logaddexp(log_inf, log_cut)) if upper else log_inf), 0.0
    chernoff = sum(k * d.log_moment(lam) for d, k in finite) - lam * epsilon  # valid for any lam >= 0
    var = sum(k * d.tilted_moments(lam)[1] for d, k in finite)
    width = 2 * _WINDOW_SD * math.sqrt(max(var, 0.0))
    spread = max(float(d.losses[-1] - d.losses[0]) for d, _ in finite)
    h = (width if width > 0 else spread) / cells
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
        lg = np.where(x < 0, log1mexp(np.minimum(x, 0.0)) + lam * x, -np.inf)  # log g(S)
        lc = np.log(total_grid.cells)
    val = float(logsumexp(lc + lg)) if np.isfinite(lg).any() else -math.inf
    if upper and total_grid.slack > 0:
        val = float(np.logaddexp(val, math.log(total_grid.slack)))
    if upper:  # g is evaluated at float grid values S = i h: its rounding, outward
        val += 16 * _U * (1 + lam * float(np.abs(S).max(initial=0.0)) + abs(epsilon))
    grid = log_norm - lam * epsilon + val
    if upper:
        fin = min(grid, chernoff + 4 * _U * (1 + abs(chernoff)))
        return float(np.logaddexp(np.logaddexp(fin, log_cut), log_inf)), h
    return float(np.logaddexp(grid, log_inf)), h


# ---------------------------------------------------------------------------
# a composition of pair losses, evaluated exactly or on the grid
# ---------------------------------------------------------------------------


@dataclass
class ComposedLoss:
    """The privacy loss of a composition on one ordered pair: ``k_i`` independent
    copies of each part (one direction).  Evaluated lazily: exactly when the
    composed support stays below :data:`EXACT_SUPPORT`, else on the tilted grid.
    """

    parts: list[tuple[LossDistribution, int]]
    cells: int = GRID_CELLS
    _exact: dict[bool, LossDistribution | None] = field(default_factory=dict, repr=False)

    def exact(self, upper: bool = True) -> LossDistribution | None:
        """The composed law in the bound's direction, or None when too large."""
        if upper not in self._exact:
            self._exact[upper] = compose_exact(self.parts, upper)
        return self._exact[upper]

    def log_delta(self, epsilon: FloatArray, upper: bool = True) -> FloatArray:
        """log of a proven upper (lower) bound on d_eps for every epsilon, shape (E,)."""
        e = np.atleast_1d(np.asarray(epsilon, dtype=float))
        ex = self.exact(upper)
        vals = (
            ex.log_delta(e)
            if ex is not None
            else np.array([log_delta_grid(self.parts, float(v), upper, self.cells)[0] for v in e])
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
