"""The grid path of :mod:`.pld`: a composed privacy-loss law too large to compose exactly.

For the upper bound every loss is split between its two neighbouring points of a grid of
spacing h, keeping its P-mass and its Q-mass (:func:`split_onto_grid`: a dominating law, second
order in h); for the lower bound every loss is rounded down and the residuals' sum is kept as a
shift of epsilon (:func:`_residual_shift`).  The law is exponentially tilted at the saddle
point of the target epsilon and the grids are convolved by FFT, every step bounded; the
argument (and the tilting identity) is in :mod:`.pld`'s docstring.

References
----------
Koskela, Jälkö, Honkela. *Computing tight differential privacy guarantees
using FFT*, AISTATS 2020 (PLD composition by FFT).
Meiser, Mohammadi. *Tight on budget? Tight bounds for r-fold approximate
differential privacy*, CCS 2018 (pessimistic rounding of privacy losses).
Doroshenko, Ghazi, Kamath, Kumar, Manurangsi. *Connect the dots: tighter discrete
approximations of privacy loss distributions*, PETS 2022 (the split of the upper bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.divergence import log1mexp
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, gamma, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution, log_inf_of_product
from smoothdp_nb.core.numerics.privacy_loss.rounding import (
    add_outward,
    log1mexp_scalar,
    log_add_outward,
    lse_error,
    outward,
)

__all__ = ["GRID_CELLS", "log_delta_grid", "split_onto_grid"]

#: cells of the composed grid (its spacing h follows from the width of the law)
GRID_CELLS = 2**18
# tilted grids keep cells down to this fraction of their largest cell (the rest is bounded)
_LOG_KEEP = -64.0 * math.log(2.0)
# half-width of a tilted grid, in tilted standard deviations of the composed law
_WINDOW_SD = 10.0
_U = float(np.finfo(float).eps)
# the largest grid step of the upper bound's split, where the cells allow
_SPLIT_STEP = 2.0**-7
# largest product of grid sizes convolved directly (beyond: by FFT)
_DIRECT_WORK = 2**25


@dataclass
class _Grid:
    """A tilted law on the grid ``(offset + i) h``: linear cell masses (summing to about 1)
    and a proven bound on the tilted mass not represented by the cells."""

    offset: int
    cells: FloatArray
    slack: float = 0.0


def _fft_bound(a: FloatArray, b: FloatArray, size: int) -> float:
    """A bound on the Euclidean norm of the error vector of an FFT convolution of
    non-negative a and b, zero-padded to ``size`` (so on every cell, and by Cauchy-Schwarz
    on any m cells together at most ``sqrt(m)`` times it).

    An FFT of length N is normwise stable: its computed transform is within ``theta``
    times the norm of the exact one, ``theta = log2(N) eta``, ``eta <= 8u`` for accurate
    twiddle factors (Higham, *Accuracy and Stability of Numerical Algorithms*, Thm 24.2).
    With ``A, B`` the exact transforms (``||A||_2 = sqrt(N) ||a||_2``, ``||A||_inf <=
    ||a||_1``), the products' error is at most ``sqrt(N) (theta + 3u)(||a||_2 ||b||_1 +
    ||a||_1 ||b||_2)`` to first order, and the inverse transform (its ``1/N`` included)
    divides that by ``sqrt(N)`` and adds ``theta ||c||_2 <= theta ||a||_2 ||b||_1``.  Four
    times the sum covers the second-order terms and the norms' own rounding."""
    theta = 8.0 * _U * max(1.0, math.log2(size))
    a1, b1 = float(a.sum()), float(b.sum())
    a2, b2 = math.sqrt(float(np.sum(np.square(a)))), math.sqrt(float(np.sum(np.square(b))))
    return 4.0 * (theta + 3.0 * _U) * (a2 * b1 + a1 * b2) + 1e-300


def _convolve(a: _Grid, b: _Grid, upper: bool) -> _Grid:
    # direct sums while they are cheap: a relative error per cell (non-negative terms),
    # where the FFT's is absolute (of the largest cell), which tells on the small cells
    slack = a.slack + b.slack + a.slack * b.slack
    if min(a.cells.size, b.cells.size) <= 64 or a.cells.size * b.cells.size <= _DIRECT_WORK:
        c = np.convolve(a.cells, b.cells)
        # non-negative terms: each cell's relative error is at most (len) u
        rel = (min(a.cells.size, b.cells.size) + 2) * _U
        c = c * (1 + rel) if upper else c * (1 - rel)
        return _trim(_Grid(a.offset + b.offset, c, slack))
    n = a.cells.size + b.cells.size - 1
    size = 1 << (n - 1).bit_length()  # a power of two: numpy's FFT is fastest there
    c = np.fft.irfft(np.fft.rfft(a.cells, size) * np.fft.rfft(b.cells, size), size)[:n]
    err = _fft_bound(a.cells, b.cells, size)
    if not upper:
        return _trim(_Grid(a.offset + b.offset, np.maximum(c - err, 0.0), slack))
    # the ends whose computed cells are below the error level (or 2^-64 of the largest)
    # hold only rounding noise: they are dropped, their mass bounded by the sum of the
    # computed cells plus sqrt(count) err (Cauchy-Schwarz on the error vector); the kept
    # cells each carry err
    top = float(c.max())
    keep = np.nonzero(c >= max(top * math.exp(_LOG_KEEP), 64.0 * err))[0]
    lo, hi = (int(keep[0]), int(keep[-1]) + 1) if keep.size else (0, n)
    cut = np.concatenate([c[:lo], c[hi:]])
    dropped = float(np.maximum(cut, 0.0).sum()) * (1.0 + 2.0 * float(gamma(cut.size + 2)))
    dropped += math.sqrt(cut.size) * err * (1.0 + 1e-12)
    return _Grid(a.offset + b.offset + lo, c[lo:hi] + err, slack + dropped * (1.0 + 1e-12))


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


def split_onto_grid(losses: FloatArray, log_mass: FloatArray, h: float) -> tuple[IntArray, FloatArray] | None:
    """Every atom split between its two neighbouring points of the grid ``i h``: (grid
    indices, log masses), a law that dominates the given one; None where that cannot be
    proven in float64 (a step below the rounding of the losses themselves).

    An atom of P-mass p at loss L, with ``a = i h <= L <= b = (i + 1) h``, is the output o
    with ``P(o) = p``, ``Q(o) = p e^-L``.  It is replaced by two outputs of losses a and b
    with P-masses ``p w_a`` and ``p w_b``,

        w_b = (1 - e^-(L - a)) / (1 - e^-h),   w_a = e^-(L - a) (1 - e^-(b - L)) / (1 - e^-h),

    the unique split with ``w_a + w_b = 1`` (P-mass kept) and ``w_a e^-a + w_b e^-b = e^-L``
    (Q-mass kept).  Merging the two outputs gives o back, so the split pair dominates the
    given one, and so does every composition of it: a product term ``max(0, P(o) R -
    e^eps Q(o) R')`` is at most the sum of the two terms of the parts (``max(0, .)`` is
    subadditive).  Unlike rounding every loss up, which moves each one by up to h, the
    split keeps the divergence exact at every grid point for one run and moves a
    composition's loss law by second order in h only (the connect-the-dots construction
    of Doroshenko et al., PETS 2022).

    Rounding.  ``i`` is checked so that the real ``a <= L <= b`` (the float products
    ``i h`` are within ``u |i h|``, a margin ``2u`` is kept; a loss too close to a grid
    point to tell its side is split over the two cells around it, ``b = a + 2h``, the same
    formulas with 2h for h); the real ``d = L - a`` lies
    within ``u (|i h| + |d|)`` of its float; ``w_b`` is increasing and ``w_a``
    decreasing in d, so each is evaluated at the end of d's interval that makes it
    larger, with ``expm1``, ``exp``, the quotient and the product rounded up (``4
    LIBM_REL``), and each is at most 1.  Raising the P-mass of an atom at a fixed loss
    scales its Q-mass alike and every product term containing it, so masses rounded up
    keep a dominating law.  The log masses ``log p + log w`` are rounded up.

    References
    ----------
    Doroshenko, Ghazi, Kamath, Kumar, Manurangsi. *Connect the dots: tighter discrete
    approximations of privacy loss distributions*, PETS 2022.
    """
    L = losses
    i = np.floor(L / h)
    ih = i * h
    i = i - (ih + 2.0 * U * np.abs(ih) > L)  # the real a above L: one cell lower
    ih = i * h
    j = i + 1
    bh = j * h
    j = j + (bh - 2.0 * U * np.abs(bh) < L)  # L too close to b to tell: two cells wide
    bh = j * h
    if not (bool(np.all(ih + 2.0 * U * np.abs(ih) <= L)) and bool(np.all(bh - 2.0 * U * np.abs(bh) >= L))):
        return None
    width = (j - i) * h  # h or 2h, exactly
    d = L - ih
    e = 1.01 * U * (np.abs(ih) + np.abs(d)) + 2.0**-1074
    d_hi = np.minimum(next_up(d + e), width)
    d_lo = np.maximum(next_down(d - e), 0.0)
    den = -np.expm1(-width)
    with np.errstate(under="ignore"):
        w_b = np.minimum(-np.expm1(-d_hi) / den * (1.0 + 4.0 * LIBM_REL), 1.0)
        s_up = next_up(width - d_lo)
        w_a = np.minimum(np.exp(-d_lo) * (-np.expm1(-s_up)) / den * (1.0 + 4.0 * LIBM_REL), 1.0)
    w = np.concatenate([w_a, w_b])
    lm = np.concatenate([log_mass, log_mass])
    keep = (w > 0) & np.isfinite(lm)
    lw = np.log(w[keep])
    lm = lm[keep]
    out = next_up(lm + lw + 1.01 * (LIBM_REL * np.abs(lw) + U * (np.abs(lm) + np.abs(lw))))
    idx = np.concatenate([i, j])[keep].astype(np.int64)
    return idx, out


def _tilted_grid(dist: LossDistribution, lam: float, h: float, upper: bool) -> tuple[_Grid, float]:
    """(the tilted law of the rounded losses on the grid, log of its normaliser M(lam)).

    A lattice law (``dist.index`` set, ``h`` its step) is placed at its own integers:
    nothing is rounded.  Otherwise the upper bound splits every atom between its two
    neighbouring grid points (:func:`split_onto_grid`) and the lower bound rounds every
    loss down."""
    log_mass = dist.log_mass
    if dist.index is not None:
        idx = dist.index.astype(np.int64)
    elif upper and (split := split_onto_grid(dist.losses, dist.log_mass, h)) is not None:
        idx, log_mass = split
    elif upper:  # a step too fine to split provably: every loss rounded up
        idx = np.ceil(dist.losses / h).astype(np.int64)
        idx = idx + (idx * h - 2.0 * U * np.abs(idx * h) < dist.losses)
    else:
        idx = np.floor(dist.losses / h).astype(np.int64)
        # the division rounds: make sure every grid value really lies below its loss
        # (the real grid value idx h is within u |idx h| of the float product: keep 2u clear)
        idx = idx - (idx * h + 2.0 * U * np.abs(idx * h) > dist.losses)
    t = log_mass + lam * (idx * h)
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
    err_t = 1.01 * U * float(np.max(np.abs(log_mass) + 3.0 * np.abs(lam * idx * h) + np.abs(rel)))
    r = 2.0 * (math.expm1(err_t) + LIBM_REL + float(gamma(idx.size + 1)))
    if upper:
        cells = cells * (1 + r)
        log_m = log_m + 4 * _U * (1 + abs(log_m))
    else:
        cells = np.maximum(cells * (1 - r), 0.0)
        log_m = log_m - 4 * _U * (1 + abs(log_m))
    return _Grid(lo, cells, dropped * (1 + r) * (1 + 1e-12) if upper else 0.0), log_m


# tilted standard deviations of the residuals' sum kept below its mean by the lower bound's shift
_RESIDUAL_SD = 6.0


def _residual_shift(parts: list[tuple[LossDistribution, int]], lam: float, h: float) -> tuple[float, float]:
    """(t, log of a bound on the tilted probability that the rounded-down residuals sum to less
    than t), for the lower bound: ``(0, -inf)`` when no shift pays.

    Every loss is rounded down to ``i h`` (the lower bound's grid), leaving a residual
    ``r = L - i h`` in ``[0, h)``; a composition's loss is ``S = K h + R``, R the sum of the
    runs' residuals.  Tilting by the *rounded* losses (normaliser ``M~``, the grid's), for
    any ``t`` and ``lam >= 0``,

        d_eps = E[f(K h + R)] >= M~ e^(-lam eps') (E~[g_eps'(K h)] - P~(R < t)),

    with ``f(s) = max(0, 1 - e^(eps - s))`` non-decreasing, ``eps' >= eps - t``,
    ``g_eps'(s) = f_eps'(s) e^(-lam (s - eps')) <= 1``: on ``R >= t``, ``f(K h + R) >=
    f_eps'(K h)``.  The first term is the grid's lower bound at ``eps'``; ``t`` is the
    residuals' tilted mean sum less ``_RESIDUAL_SD`` of their standard deviations, so the
    shift keeps what rounding down loses on average (``lam k h / 2`` in log delta) and costs
    only the spread (``lam sqrt(k) h``); the probability is bounded by Chernoff,
    ``P~(R < t) <= e^(theta t) prod E~[e^(-theta r)]^k`` for any ``theta >= 0``.

    Rounding: the residuals are rounded down (R only shrinks, so P~(R < t) only grows);
    each ``log E~[e^(-theta r)]`` is a difference of two log-sums, the first rounded up and
    the second down (their terms within ``u`` of a few of their operands, the sums
    :func:`lse_error`), and t, theta are any floats (the bound holds for every choice)."""
    rows = []
    for d, k in parts:
        idx = np.floor(d.losses / h)
        ih = idx * h
        idx = idx - (ih + 2.0 * U * np.abs(ih) > d.losses)  # as the grid rounds down
        ih = idx * h
        r = d.losses - ih
        r = np.maximum(next_down(r - 1.01 * U * (np.abs(ih) + np.abs(r))), 0.0)
        t0 = d.log_mass + lam * ih
        w = np.exp(t0 - float(logsumexp(t0)))
        mu = float(np.dot(w, r))
        var = float(np.dot(w, (r - mu) ** 2))
        rows.append((k, r, t0, mu, var))
    mean = sum(k * mu for k, _, _, mu, _ in rows)
    sd = math.sqrt(sum(k * var for k, _, _, _, var in rows))
    if sd == 0.0:
        return 0.0, -math.inf
    t = mean - _RESIDUAL_SD * sd
    if t <= 0.0:
        return 0.0, -math.inf
    theta = _RESIDUAL_SD / sd
    log_p = theta * t
    err = U * abs(theta * t)
    for k, r, t0, _, _ in rows:
        te = np.abs(t0) + 2.0 * U * float(np.max(np.abs(t0)))  # t0 is off by u (|log_mass| + |lam ih|)
        for sign, terms in ((1.0, t0 - theta * r), (-1.0, t0)):
            v = float(logsumexp(terms))
            e = float(lse_error(terms.size, float(terms.max() - terms.min()), v))
            e += 2.0 * U * float(np.max(te + np.abs(theta * r) + np.abs(terms)))
            log_p += k * sign * v
            err += k * (e + 2.0 * U * abs(v))
    return t, float(next_up(log_p + 1.01 * err))


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
    index = d.index[:keep] if d.index is not None else None
    return type(d)(d.losses[:keep], d.log_mass[:keep], index=index), float(tail[keep])  # no infinite mass


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
    parts: list[tuple[LossDistribution, int]],
    epsilon: float,
    upper: bool,
    cells: int = GRID_CELLS,
    step: float | None = None,
    residual: bool = True,
) -> tuple[float, float]:
    """(log of a bound on d_eps of the composition, grid spacing h) by the tilted grid.

    ``upper``: losses rounded up, FFT error and dropped mass added (a proven
    upper bound); else rounded down, errors subtracted (a lower bound).
    The largest losses of each run may be cut (their mass counted as an
    infinite loss, a union bound over the runs) where that makes the law
    tilt well: several cuts are tried by their Chernoff bound
    (``g <= 1`` in the identity of the module docstring), the best is
    computed on the grid, and the smaller of the two bounds is returned.

    ``step``: the parts are lattice laws (:mod:`.lattice`) of that step; the grid is the
    lattice itself, so no loss is rounded and the composition is a count of lattice
    paths (the convolutions), bounded only by their float error.

    ``residual`` (lower bound off the lattice): the losses rounded down keep their
    residuals' sum as a shift of epsilon, less what the residuals' tail may miss
    (:func:`_residual_shift`); False rounds every loss down and nothing more.
    """
    live = [(d, k) for d, k in parts if k > 0]
    # the +inf atoms: S = +inf when any run hits one
    log_inf = log_inf_of_product(live, upper)
    # the union bound of the cut below holds for probability laws; the upper measures may
    # weigh a hair above 1, so the cut mass is scaled by the product of their totals
    log_totals = max(0.0, sum(k * log_add_outward(d.log_total_finite(True), d.log_inf, True) for d, k in live))
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
            log_cut = log_add_outward(log_cut, add_outward(float(np.log(k)) * (1 + 2 * U), lt + acc, True), True)
    log_cut = add_outward(log_cut, log_totals, True)
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
    if step is not None:
        h = step
    elif upper:
        # the split's error is second order (:func:`split_onto_grid`): about lam k h^2 / 12 in
        # log delta against lam k h / 2 for losses rounded up.  Its step may be four times
        # coarser than the lower bound's (a sixteenth of the cells' work, an error still far
        # below the lower bound's), and is at most _SPLIT_STEP (an error ten times below
        # that of rounding up to dp_accounting's 1e-4 grid) while that takes at most four
        # times the cells
        h = min(4.0 * h, max(_SPLIT_STEP, 0.25 * h))
    shift, log_miss = 0.0, -math.inf
    if not upper and step is None and residual:
        shift, log_miss = _residual_shift(finite, lam, h)
    eps_g = epsilon if shift == 0.0 else float(next_up(epsilon - shift))  # at least epsilon - shift
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
    x = eps_g - S
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
    # are relative (per term), the sum is :func:`lse_error`
    delta = 2.02 * U * (float(np.abs(S).max(initial=0.0)) + abs(eps_g))
    absolute = (1.0 + lam) * delta * float(total_grid.cells.sum()) * (1.0 + 1e-12)
    if fin.any():
        t_err = float(
            np.max(
                np.where(fin, U * (np.abs(terms) + np.abs(lc) + 2.0 * lam * np.abs(x)) + LIBM_REL * np.abs(l1m), 0.0)
            )
        )
        spread = float(np.max(np.where(fin, terms, -np.inf)) - np.min(np.where(fin, terms, np.inf)))
        val = float(outward(val, float(lse_error(int(fin.sum()), spread, val)) + t_err + 3.0 * LIBM_REL, upper))
    if upper:
        if absolute > 0:
            val = log_add_outward(val, math.log(absolute), True)
        if total_grid.slack > 0:
            val = log_add_outward(val, math.log(total_grid.slack) + 2 * U, True)
    elif val > -math.inf and absolute > 0:  # subtract the evaluation error (0 if it is all of it)
        gap = val - math.log(absolute)
        if gap > 1e-3:  # gap is off by u (|val| + |log absolute|), moving log1mexp by that / gap
            l1 = log1mexp_scalar(-gap)
            slack = 4.0 * U * (1 + abs(val) + abs(math.log(absolute))) / gap + 3.0 * LIBM_REL * (1 + abs(l1))
            val = add_outward(val, l1 - slack, False)
        else:
            val = -math.inf
    if log_miss > -math.inf:  # E[g] less the tilted probability that the residuals fall short
        gap = val - log_miss
        if not gap > 1e-3:  # the shift does not pay here: every loss rounded down, nothing more
            return log_delta_grid(parts, epsilon, upper, cells, step, residual=False)
        l1 = log1mexp_scalar(-gap)
        slack = 4.0 * U * (1 + abs(val) + abs(log_miss)) / gap + 3.0 * LIBM_REL * (1 + abs(l1))
        val = add_outward(val, l1 - slack, False)
    grid = add_outward(add_outward(log_norm, -lam * eps_g, upper), val, upper)
    grid = float(outward(grid, 2.0 * U * (abs(log_norm) + lam * abs(eps_g) + abs(val)), upper))
    if upper:
        fin_b = min(grid, chernoff)
        return log_add_outward(log_add_outward(fin_b, log_cut, True), log_inf, True), h
    return log_add_outward(grid, log_inf, False), h
