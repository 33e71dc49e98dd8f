"""Composition as mechanisms: :func:`repeat` (k independent runs of one mechanism on
the same database) and :func:`joint` (several mechanisms on the same database).

Both return :class:`Mechanism` objects, so every generic feature works on them.
Their divergences are never computed on the product output space: for every
neighbouring pair ``(x, x')`` the privacy-loss distribution of each run is
built once (both directions), and the composition's hockey-stick divergence is
that of the convolution of the runs' loss distributions
(:mod:`smoothdp_nb.core.numerics.privacy_loss.pld`): exact while the composed support is
small, and a proven pessimistic discretisation beyond.  The reported delta is
a proven upper bound in both cases, with a proven lower bound
(:meth:`_Composed._log_profile_enclosure`): each run's output law enters with
its proven float error (:func:`run_losses`), widened outward before composing
-- P masses up and Q masses down for the upper bound, the reverse for the
lower -- and every step of the composition rounds in the bound's direction.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2 and
Proposition 5: the sum of the (epsilon, delta) of the runs, which this
computation never exceeds).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, U, lpmf_abs_error, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.lattice import LATTICE_FROM, composed_cells, lattice_step
from smoothdp_nb.core.numerics.privacy_loss.pld import (
    EXACT_SUPPORT,
    GRID_CELLS,
    ComposedLoss,
    LossDistribution,
    log_total,
    outward,
)
from smoothdp_nb.core.numerics.validation import as_int, as_rng
from smoothdp_nb.core.runtime.budget import ComputationTooLarge, Estimate, check_budget, current_budget
from smoothdp_nb.core.smoothed.mechanisms.base import MAX_CELLS, Mechanism, RunLosses
from smoothdp_nb.core.smoothed.mechanisms.generic import neighbour_moves
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism import SamplingHistogram

__all__ = [
    "Repeat",
    "Joint",
    "repeat",
    "joint",
    "pair_loss",
    "run_losses",
    "build_estimate",
    "check_composition_work",
    "check_pair_evaluation",
    "evaluation_seconds",
    "grid_seconds",
    "pair_seconds",
]

# widest exact single-run loss support built from the sampling histogram's count law
_MAX_RUN_SUPPORT = 2**23
#: most runs a composition lists one by one (sampling, output laws); the profile composes repeats as one part
_MAX_LISTED_RUNS = 10**6
#: most mechanisms a joint's repr lists one by one
_REPR_MECHANISMS = 6
# neighbour pairs whose losses a composed mechanism remembers
_PAIR_CACHE = 16
_CACHE_LOCK = threading.Lock()


def run_losses(mech: Mechanism, x: IntArray, x2: IntArray) -> RunLosses:
    """(forward, backward) parts rounded for an upper bound, then (forward, backward)
    rounded for a lower bound: the loss distributions of the runs of ``mech`` on the
    pair, forward ``log P/Q`` under ``P = M(x)``, backward under ``Q = M(x')``, each
    with its multiplicity.

    Each run's distribution comes from its output law *with its proven error*:
    :meth:`Mechanism._aligned_log_pmfs` (``with_error=True``: ``LIBM_REL`` of each
    value, the renormalisation and :meth:`Mechanism.log_output_pmf_error`), or for
    the two-category sampling histogram the count law's Loader log-pmf error
    (:func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`) and the error of the
    closed-form log-ratio (:func:`_log_ratio_error`); and it is rounded outward by
    :meth:`LossDistribution.from_log_pmfs` (upper: P masses up, Q masses down)."""
    if isinstance(mech, Repeat):
        parts = run_losses(mech.mechanism, x, x2)
        fu, bu, fl, bl = ([(d, k * mech.k) for d, k in p] for p in parts)
        return fu, bu, fl, bl
    if isinstance(mech, Joint):
        out: RunLosses = ([], [], [], [])
        for m in mech.mechanisms:
            for acc, p in zip(out, run_losses(m, x, x2)):
                acc += p
        return out
    own = mech._pair_losses(x, x2)
    if own is not None:
        return own
    if isinstance(mech, SamplingHistogram) and x.size == 2 and x.sum() == x2.sum():
        return (
            [(_sampling_binary_loss(mech, x, x2, True), 1)],
            [(_sampling_binary_loss(mech, x2, x, True), 1)],
            [(_sampling_binary_loss(mech, x, x2, False), 1)],
            [(_sampling_binary_loss(mech, x2, x, False), 1)],
        )
    L, err = mech._aligned_log_pmfs(np.stack([x, x2]), with_error=True)

    def one(i: int, j: int, upper: bool) -> list[tuple[LossDistribution, int]]:
        return [(LossDistribution.from_log_pmfs(L[i], L[j], err[i], err[j], upper), 1)]

    return one(0, 1, True), one(1, 0, True), one(0, 1, False), one(1, 0, False)


def _log_ratio_error(
    mech: SamplingHistogram, u: int, v: int, oa: FloatArray, ob: FloatArray, loss: FloatArray
) -> FloatArray:
    """A proven bound on the absolute error of :meth:`SamplingHistogram.log_ratio` at
    finite values.

    Without replacement ``L = -log1p(-a) + log1p(-b)``, ``a = o_a/(u+1)``,
    ``b = o_b/(v+1)``: each quotient is correctly rounded (u of it), and
    ``d log1p(-a)/da = -1/(1-a)``, so the argument's rounding moves the log by at
    most ``u a/(1-a) = u o_a/(u+1-o_a)``; log1p adds :data:`LIBM_REL` of its value,
    the final addition ``u |L|``.  With replacement ``L = o_a A - o_b B``,
    ``A = log1p(1/u)``: the quotient's u moves A by at most ``u (1/u)/(1+1/u) <= u A``
    (as ``x/(1+x) <= log1p(x)``), log1p adds ``LIBM_REL A``, the product ``u``, the
    difference ``u |L|``: at most ``(2u + LIBM_REL)(o_a A + o_b B) + u |L|``.
    Everything is padded by 1%."""
    uf, vf = float(u), float(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mech.replace:
            A = math.log1p(1.0 / uf) if u > 0 else 0.0
            B = math.log1p(1.0 / vf) if v > 0 else 0.0
            e = (2.0 * U + LIBM_REL) * (oa * A + ob * B)
        else:
            la = np.abs(np.log1p(-oa / (uf + 1.0)))
            lb = np.abs(np.log1p(-ob / (vf + 1.0)))
            e = U * (oa / np.maximum(uf + 1.0 - oa, 1.0) + ob / np.maximum(vf + 1.0 - ob, 1.0)) + LIBM_REL * (la + lb)
    out: FloatArray = next_up(1.01 * (e + U * np.abs(loss)) + 2.0**-1070)
    return out


def _sampling_binary_loss(mech: SamplingHistogram, x: IntArray, x2: IntArray, upper: bool) -> LossDistribution:
    """The loss of the two-category sampling histogram from its count law: with a the
    category x has one more record of, the output's count K of a has the law
    :meth:`SamplingHistogram.binary_dist` and the loss is
    :meth:`SamplingHistogram.log_ratio` of K (see :mod:`.sampling`), so the
    support is the range of K, not the output space.

    Rounded outward (``upper``: a measure pair ``P~ >= P``, ``Q~ <= Q`` at every K):
    with ``e_P`` the proven error of ``log P(K)`` (the running Loader bound, else
    :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`) and ``e_L`` that of the loss
    (:func:`_log_ratio_error`), ``log Q(K) = log P(K) - L(K)`` is within
    ``e_P + e_L``; so ``P~ = P e^(e_P)`` and ``Q~ = P e^(-e_P - L - e_L)`` give
    the mass ``log P + e_P`` and the loss ``L + e_L + 2 e_P`` (rounded up; the
    reverse for the lower bound).  ``K = u + 1`` (every a-record sampled) is
    impossible under Q exactly, an infinite loss."""
    a = int(np.argmax(x - x2))
    b = 1 - a
    n = int(x.sum())
    T = mech.sample_size(n)
    u = np.array([x[a] - 1], dtype=np.int64)
    v = np.array([x[b]], dtype=np.int64)
    dist = mech.binary_dist(u, v, n, T)
    lo, hi = int(dist.lo[0]), int(dist.hi[0])
    if hi - lo + 1 > _MAX_RUN_SUPPORT:
        raise ComputationTooLarge(
            f"the privacy loss of {mech!r} at n={n} has {hi - lo + 1:.3g} support points "
            f"(more than {_MAX_RUN_SUPPORT}); use a larger sampling rate or a smaller n"
        )
    K = np.arange(lo, hi + 1, dtype=float)[None, :]
    rows = np.zeros((1, 1), dtype=np.int64)
    lp = dist.logpmf(rows, K)[0]
    ep = lpmf_abs_error(lp, dist.size, dist.pmf_factors)
    if dist.logpmf_error is not None:  # the running bound, as in the tail sums of .divergence
        run = dist.logpmf_error(rows, K)[0] + dist.pmf_factors * 2.01 * U * (
            np.abs(lp) + 2.0 * math.log(dist.size + 2.0) + 2.0
        )
        ep = np.minimum(ep, run)
    loss = mech.log_ratio(u[0], v[0], K[0], T - K[0])
    fin = np.isfinite(loss) & np.isfinite(lp)
    inf = np.isposinf(loss) & np.isfinite(lp)
    el = _log_ratio_error(mech, int(u[0]), int(v[0]), K[0][fin], T - K[0][fin], loss[fin])
    mass = outward(lp, ep, upper)
    widened = loss[fin] + el + 2.0 * ep[fin] if upper else loss[fin] - el - 2.0 * ep[fin]
    widened = next_up(widened) if upper else next_down(widened)
    log_inf = log_total(mass[inf], upper)
    return LossDistribution.from_atoms(widened, mass[fin], log_inf, upper)


def _as_cells(cells: int | None) -> int | None:
    """None, or a number of grid cells in [2^10, 2^24]."""
    if cells is None:
        return None
    return as_int(cells, "grid_cells", minimum=2**10, maximum=2**24)


def pair_loss(mech: Mechanism, x: IntArray, x2: IntArray) -> tuple[ComposedLoss, ComposedLoss]:
    """(forward, backward) composed privacy losses of ``mech`` on the pair (x, x'),
    each carrying its runs rounded for the upper and for the lower bound.

    Refused first (:func:`check_composition_work`, arithmetic only) when building the runs'
    losses alone would exceed the time or memory budget."""
    check_composition_work(mech, x, pairs=1)
    fu, bu, fl, bl = run_losses(mech, np.asarray(x, dtype=np.int64), np.asarray(x2, dtype=np.int64))
    cells = getattr(mech, "grid_cells", None) or GRID_CELLS
    return (
        ComposedLoss(_gather(fu), cells=cells, lower_parts=_gather(fl)),
        ComposedLoss(_gather(bu), cells=cells, lower_parts=_gather(bl)),
    )


def _gather(parts: list[tuple[LossDistribution, int]]) -> list[tuple[LossDistribution, int]]:
    """Equal run distributions (the same object) are one part with the summed multiplicity."""
    seen: dict[int, int] = {}
    out: list[tuple[LossDistribution, int]] = []
    for d, k in parts:
        if id(d) in seen:
            i = seen[id(d)]
            out[i] = (d, out[i][1] + k)
        else:
            seen[id(d)] = len(out)
            out.append((d, k))
    return out


def _output_keys(outs: np.ndarray) -> list[Hashable]:
    """One hashable per output (rows of a 2-D output become tuples)."""
    if isinstance(outs, np.ndarray) and outs.ndim == 2:
        return [tuple(r) for r in outs.tolist()]
    return list(outs.tolist()) if isinstance(outs, np.ndarray) and outs.dtype != object else list(outs)


def neighbours(x: IntArray, relation: str = "replace") -> Iterator[IntArray]:
    """The neighbours of histogram x.

    ``"replace"``: one record of category a moved to b != a, for every a with
    x_a >= 1 (the neighbouring relation of Definitions 2-3); ``"add-remove"``:
    one record of a removed (x_a >= 1, and a database of one record keeps it) or
    one record of a added, for every a.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definitions 2 and 3.
    """
    for move in neighbour_moves(x.shape[0], relation):
        x2 = x + move
        if x2.min() >= 0 and x2.sum() >= 1:
            yield x2


#: seconds per cell and level of an FFT convolution (measured: 2.7 s for 6 * 10^6 cells on the project machine)
_FFT_SECONDS_PER_CELL_LEVEL = 2e-8
#: bytes per cell of the composed grid: the two factors, the product and the FFT's complex buffers
_BYTES_PER_CELL = 64.0


def _check_composed_size(losses: tuple[ComposedLoss, ComposedLoss]) -> None:
    """Refuse, before any composition, runs whose composed law would not fit the budget.

    Composing ``k`` runs of a law of ``s`` atoms gives up to ``k (s - 1) + 1``
    distinct losses, and the privacy-loss grid keeps about as many cells (its
    trim at ``2^-900`` of the largest cell drops almost none of a tilted law:
    6 * 10^6 cells for 10^6 runs of 7 atoms); the squarings then cost about
    ``N log2 N`` per level.
    """
    for loss in losses:
        parts = [(d, k) for d, k in loss.parts if k > 0]
        cells = 1.0 + sum(float(k) * max(d.size - 1, 0) for d, k in parts)
        runs = sum(k for _, k in parts)
        levels = max(1.0, math.log2(max(runs, 2)))
        seconds = _FFT_SECONDS_PER_CELL_LEVEL * cells * max(1.0, math.log2(cells)) * levels
        check_budget(
            Estimate(seconds, _BYTES_PER_CELL * cells),
            current_budget(),
            f"composing {runs:.3g} runs into one privacy-loss distribution (~{cells:.3g} losses)",
            "use fewer runs (a smaller k in repeat, fewer mechanisms in joint)",
            parameter="k",
        )


# --- the up-front cost of a composition (arithmetic: nothing is built or composed to estimate it) ---
# Measured with time.process_time on the project machine (2 cores, load 0.5-1.7, 2026-11-29):
# benchmarks/bench_composed_cost.py and benchmarks/COMPOSED.md.

#: seconds to build one run's loss distributions on one neighbour pair, both directions and both
#: bounds, from its output laws (a two-category sampling histogram's count law: 2.8 ms at n = 5;
#: a finite mechanism of two outputs: 0.8 ms)
_BUILD_SECONDS_PER_RUN = 3e-3
#: the same for a run whose loss laws are its own closed form (a noisy count: 0.04 ms, its
#: noise laws cached)
_BUILD_SECONDS_PER_OWN_RUN = 1e-4
#: seconds per atom of one run's loss law on one pair (its pmf, errors and outward rounding, four
#: times: 1.14 s for a sampling histogram's pair at n = 10^6, 5 x 10^5 atoms)
_BUILD_SECONDS_PER_ATOM = 2.5e-6
#: bytes per atom of one run's loss distributions (four laws of losses, masses and lattice indices)
_BYTES_PER_RUN_ATOM = 4 * 32.0
#: seconds of one grid or lattice evaluation (one epsilon, one bound) apart from its parts and cells
_GRID_BASE_SECONDS = 3e-3
#: seconds per part of a grid evaluation (the cut search, the saddle point, its tilted grid:
#: 4-7 ms for a part of 9 atoms, 6-12 ms for 4,096)
_GRID_PART_SECONDS = 3e-3
#: seconds per atom of a part (its tails, moments and split onto the grid: about 1 us at 10^5 atoms)
_GRID_ATOM_SECONDS = 1e-6
#: seconds per cell of the composed grid (its tilted cells, the final sum)
_GRID_CELL_SECONDS = 3e-8
#: seconds per cell and level (log2 of the cells) of one convolution of the composed grid (FFT;
#: 10^-8 per cell at 2^18 cells)
_GRID_CONVOLUTION_SECONDS = 6e-10
#: seconds per step of an exact composition, and per cell and level of its outer-sum table
#: (sort and merge of the table: 0.1 ms for 3 x 3 cells alone, 0.33 ms per step of a joint of 500 small
#: runs, 8 ms for 300 x 300 cells, 1.2-1.8 s at 4-8 x 10^6)
_EXACT_STEP_SECONDS = 3e-4
_EXACT_CELL_SECONDS = 1e-8
#: seconds per epsilon of an exactly composed law (its hockey-stick sum), and per atom
_EXACT_EVAL_SECONDS = 5e-5
_EXACT_EVAL_ATOM_SECONDS = 1e-8
# the largest outer-sum table of an exact step, and the table probed first (pld's limits)
_OUTER_CELLS = 2.0**23
_PROBE_CELLS = 2.0**17
# losses closer than this (relative, at least absolute) are one loss after an exact step
_MERGE_REL = 2.0**-44
# the grids' limits and window (privacy_loss.grid: the split's largest step, the window's
# half-width in standard deviations, a run's grid at most 16 cells-widths)
_SPLIT_STEP = 2.0**-7
_WINDOW_SD = 10.0


def _built_runs(mech: Mechanism) -> list[Mechanism]:
    """The mechanisms whose loss distributions :func:`run_losses` builds, one entry per build:
    a joint builds each of its mechanisms', a repeat its mechanism's once (whatever k)."""
    if isinstance(mech, Repeat):
        return _built_runs(mech.mechanism)
    if isinstance(mech, Joint):
        return [r for m in mech.mechanisms for r in _built_runs(m)]
    return [mech]


def _run_atoms(mech: Mechanism, n: int, m: int) -> float:
    """A bound on the atoms of one run's loss law where one is known by arithmetic (the
    two-category sampling histogram: the range of its count law, at most T + 1), else 1."""
    if isinstance(mech, SamplingHistogram) and m == 2:
        return float(min(mech.sample_size(n) + 1, _MAX_RUN_SUPPORT))
    return 1.0


def _run_seconds(mech: Mechanism) -> float:
    """Seconds to build one run's losses apart from its atoms: a run with its own closed-form
    loss laws (:meth:`Mechanism._pair_losses` overridden, as the noisy count's) costs a
    lookup, one built from its output laws :data:`_BUILD_SECONDS_PER_RUN`."""
    own = type(mech)._pair_losses is not Mechanism._pair_losses
    return _BUILD_SECONDS_PER_OWN_RUN if own else _BUILD_SECONDS_PER_RUN


def build_estimate(mech: Mechanism, n: int, m: int, pairs: int) -> Estimate:
    """Time and memory of building the runs' loss distributions of ``pairs`` neighbour pairs
    of databases of n records on m categories, by arithmetic on the composition's tree (its
    size is the caller's; a repeat counts once, whatever k): :func:`_run_seconds` per run and
    pair and :data:`_BUILD_SECONDS_PER_ATOM` per atom of its loss law (where
    :func:`_run_atoms` knows them); the bytes of the pairs kept at once (at most the pair
    cache).  A mechanism that is no composition is one run."""
    runs = _built_runs(mech)
    atoms = math.fsum(_run_atoms(r, n, m) for r in runs)
    per_run = math.fsum(_run_seconds(r) for r in runs)
    seconds = float(pairs) * (per_run + atoms * _BUILD_SECONDS_PER_ATOM)
    return Estimate(seconds, min(pairs, _PAIR_CACHE) * atoms * _BYTES_PER_RUN_ATOM)


def check_composition_work(mech: Mechanism, x: IntArray, pairs: int, budget: float | None = None) -> None:
    """Refuse (:class:`ComputationTooLarge`, before anything is built) a mechanism (a
    composition, or one run) whose runs' losses on ``pairs`` neighbour pairs of ``x``'s size (:func:`build_estimate`) would
    not fit the budget (``budget`` seconds, default
    :func:`~smoothdp_nb.core.runtime.budget.current_budget`) or the memory budget."""
    x = np.asarray(x)
    n, m = int(x.sum()), int(x.size)
    est = build_estimate(mech, n, m, pairs)
    check_budget(
        est,
        current_budget() if budget is None else budget,
        f"building the privacy losses of {len(_built_runs(mech)):.3g} runs on {pairs:.3g} neighbour pairs",
        "use fewer mechanisms in joint (a repeat builds its mechanism once, whatever k)"
        if isinstance(mech, Joint)
        else "use smaller databases (n records)",
        parameter="mechanisms" if isinstance(mech, Joint) else "n",
    )


def _convolutions(k: int) -> int:
    """Convolutions of k copies by repeated squaring: ``bit_length(k) - 1`` squarings and
    ``popcount(k)`` products (the first of them with the one-cell identity)."""
    return k.bit_length() - 1 + bin(k).count("1")


def grid_seconds(
    parts: list[tuple[LossDistribution, int]], cells: int, upper: bool, step: float | None = None
) -> float:
    """Seconds of one evaluation of the tilted grid (:func:`~smoothdp_nb.core.numerics.privacy_loss.grid.log_delta_grid`)
    at one epsilon, estimated from the parts' sizes and ranges (nothing is composed).

    The price is ``_GRID_BASE_SECONDS + parts * _GRID_PART_SECONDS + atoms * _GRID_ATOM_SECONDS
    + C (_GRID_CELL_SECONDS + V log2(C) _GRID_CONVOLUTION_SECONDS)``, with
    V the convolutions of the repeated squarings (:func:`_convolutions`) and C the cells of
    the composed grid: its step is the lattice's (``step``), else the grid's own rule --
    ``h = max(W / cells, r / (16 cells))`` with the window W twenty standard deviations of
    the composed law (its untilted variance, from the parts' coarse summaries) and r the
    widest part's range, four times coarser for the upper bound's split
    (``min(4h, max(2^-7, h/4))``) -- and C at most the composed range over h, or the window
    and one part's range over h."""
    live = [(d, int(k)) for d, k in parts if k > 0 and d.size]
    if not live:
        return 0.0
    ranges = [float(d.losses[-1]) - float(d.losses[0]) for d, _ in live]
    reach = math.fsum(k * r for (_, k), r in zip(live, ranges))
    spread = max(ranges)
    var = math.fsum(k * d.coarse().tilted_moments(0.0)[1] for d, k in live)
    width = 2.0 * _WINDOW_SD * math.sqrt(max(var, 0.0))
    if step is not None:
        h = step
    else:
        h = max((width if width > 0 else spread) / cells, spread / (16.0 * cells))
        if upper and h > 0:
            h = min(4.0 * h, max(_SPLIT_STEP, 0.25 * h))
    composed = 1.0 if h <= 0 or not math.isfinite(h) else min(reach / h, (width + spread) / h) + 1.0
    convolutions = sum(_convolutions(k) for _, k in live)
    atoms = math.fsum(float(d.size) for d, _ in live)
    level = max(1.0, math.log2(composed))
    return (
        _GRID_BASE_SECONDS
        + len(live) * _GRID_PART_SECONDS
        + atoms * _GRID_ATOM_SECONDS
        + composed * (_GRID_CELL_SECONDS + convolutions * level * _GRID_CONVOLUTION_SECONDS)
    )


def _merges_whole(d: LossDistribution) -> bool:
    """Whether an exact composition step merges all of a run's losses into one (they lie within
    :data:`_MERGE_REL` of each other, relative to their size or 1: losses equal in the reals that
    floats tell apart, as ``log(P/Q)`` of two equal laws)."""
    lo, hi = float(d.losses[0]), float(d.losses[-1])
    return hi - lo <= _MERGE_REL * max(1.0, abs(lo), abs(hi))


def _lattice_values(d: LossDistribution, g: float | None) -> float:
    """The values a run's losses can take on the lattice of step g, between its least and its
    largest: ``range / g' + 1`` with ``g'`` g times the gcd of the gaps between its lattice
    indices (``+-log 3`` of randomized response: 2 values, not 3); infinite without a lattice."""
    if g is None:
        return math.inf
    index = np.rint(d.losses / g).astype(np.int64)
    gap = int(np.gcd.reduce(np.diff(index))) if index.size > 1 else 1
    return float(index[-1] - index[0]) / max(gap, 1) + 1.0


def _evaluation(loss: ComposedLoss, upper: bool) -> tuple[float, float, bool]:
    """(once, per epsilon, whether the exact attempt is expected to give up): see
    :func:`evaluation_seconds`."""
    parts = [(d, int(k)) for d, k in loss.parts_for(upper) if k > 0 and d.size]
    if not parts:
        return 0.0, 0.0, False
    lat = loss.lattice(upper)
    lattice_cells = composed_cells(loss.parts, lat[0]) if lat is not None else math.inf
    if lat is not None and lattice_cells >= LATTICE_FROM:
        return 0.0, grid_seconds(parts, loss.cells, upper, step=lat[0]), False
    g = lat[0] if lat is not None else lattice_step(loss.parts)
    # the exact attempt; runs with bit-identical losses are one law here, whichever mechanism built them
    group = {d.losses.tobytes(): i for i, (d, _) in enumerate(parts)}
    # a law narrower than the merging distance of close losses is one atom after its first step
    sizes = [1.0 if _merges_whole(d) else float(d.size) for d, _ in parts]
    steps = [1.0 if _merges_whole(d) else _lattice_values(d, g) for d, _ in parts]

    def most(copies: dict[int, int]) -> float:
        """A bound on the support of a sum of copies of the groups (not capped)."""
        log_count = sum(_log_comb(c + sizes[i] - 1.0, sizes[i] - 1.0) for i, c in copies.items())
        on_lattice = 1.0 + sum(c * (steps[i] - 1.0) for i, c in copies.items())
        return min(math.exp(min(log_count, 700.0)), on_lattice)

    seconds = 0.0
    may_give_up = False

    def step(a_lo: float, a_hi: float, b_lo: float, b_hi: float, out_most: float) -> bool:
        """Price one outer-sum step of supports a and b into a law of at most ``out_most``
        atoms; True when it gives up (for sure, or as the probe is expected to)."""
        nonlocal seconds, may_give_up
        if a_lo * b_lo > _OUTER_CELLS:  # refused before any table
            return True
        if a_hi * b_hi > _PROBE_CELLS and out_most > EXACT_SUPPORT:
            # the probe (a few rows of the table) is expected to find too many sums already
            seconds += _EXACT_STEP_SECONDS + _EXACT_CELL_SECONDS * _PROBE_CELLS * math.log2(_PROBE_CELLS)
            return True
        table = min(a_hi * b_hi, _OUTER_CELLS)
        seconds += _EXACT_STEP_SECONDS + _EXACT_CELL_SECONDS * table * max(1.0, math.log2(table))
        may_give_up = may_give_up or a_hi * b_hi > _OUTER_CELLS or out_most > EXACT_SUPPORT
        return a_lo + b_lo - 1.0 > EXACT_SUPPORT

    hi = float(parts[0][0].size)
    gave_up = False
    if not (len(parts) == 1 and parts[0][1] == 1):  # one run alone is not composed
        total: dict[int, int] = {}
        lo, hi = 0.0, 0.0  # no total yet (the identity)
        for d, k in parts:
            i = group[d.losses.tobytes()]
            copies = 1
            p_lo, p_hi = sizes[i], min(most({i: 1}), float(EXACT_SUPPORT))
            while k and not gave_up:
                if k & 1:
                    total[i] = total.get(i, 0) + copies
                    if hi == 0.0:
                        lo, hi = p_lo, p_hi
                    else:
                        out = most(total)
                        gave_up = step(lo, hi, p_lo, p_hi, out)
                        lo, hi = lo + p_lo - 1.0, min(out, float(EXACT_SUPPORT))
                k >>= 1
                if k and not gave_up:
                    out = most({i: 2 * copies})
                    gave_up = step(p_lo, p_hi, p_lo, p_hi, out)
                    copies *= 2
                    p_lo, p_hi = 2.0 * p_lo - 1.0, min(out, float(EXACT_SUPPORT))
            if gave_up:
                break
    on_grid = lat[0] if lat is not None else None
    if gave_up:
        return seconds, grid_seconds(parts, loss.cells, upper, step=on_grid), True
    per_epsilon = _EXACT_EVAL_SECONDS + hi * _EXACT_EVAL_ATOM_SECONDS
    if may_give_up:
        per_epsilon += grid_seconds(parts, loss.cells, upper, step=on_grid)
    return seconds, per_epsilon, False


def evaluation_seconds(loss: ComposedLoss, upper: bool = True) -> tuple[float, float]:
    """Seconds of :meth:`ComposedLoss.log_delta` (estimated): (once per bound, per epsilon).

    The exact composition is computed once per bound and kept (each epsilon then reads it);
    the lattice and the grid paths run at each epsilon (:func:`grid_seconds`).

    From the runs' supports, without composing anything (the lattice test it starts with is
    one pass over the atoms).  It follows :meth:`ComposedLoss.method`: the lattice when its
    composed cells reach :data:`LATTICE_FROM`; else an exact composition is tried, step by
    step as :func:`~smoothdp_nb.core.numerics.privacy_loss.pld.compose_exact` does it
    (repeated squaring).  Each step sorts the outer-sum table of its two supports
    (:data:`_EXACT_STEP_SECONDS`, and :data:`_EXACT_CELL_SECONDS` per cell and level),
    with bounds (least, most) on the supports: the sum set of A and B has at least
    ``|A| + |B| - 1`` values; a sum of c runs of one law of s losses at most the
    ``C(c + s - 1, s - 1)`` multisets of its losses and, when every loss is a multiple of
    one step g, at most ``1 + sum c (range / g)``.  A table of more than 2^23 cells is
    given up at once; one of more than 2^17 cells whose sums may exceed
    :data:`EXACT_SUPPORT` is expected to be given up after its probe (a few rows).  When
    the path may give up, the lattice or the grid is added at each epsilon.

    Errs high where equal losses merge beyond what the bounds know; errs low when a probe
    keeps going against the expectation (losses that merge without a common step).
    """
    once, per, _ = _evaluation(loss, upper)
    return once, per


def _log_comb(a: float, b: float) -> float:
    """log C(a, b) for reals a >= b >= 0 (the log-gamma form)."""
    return math.lgamma(a + 1.0) - math.lgamma(b + 1.0) - math.lgamma(a - b + 1.0)


def check_pair_evaluation(mech: Mechanism, losses: tuple[ComposedLoss, ComposedLoss]) -> None:
    """Refuse a pair's composed losses (of a repeat or a joint) whose composed law would not
    fit the memory budget or whose evaluation at one epsilon, both bounds and directions,
    would exceed :func:`~smoothdp_nb.core.runtime.budget.current_budget`."""
    if isinstance(mech, _Composed):
        _check_composed_size(losses)
        _check_evaluations(losses, 1, 1, f"the privacy-loss distribution of {mech!r}")


def pair_seconds(losses: tuple[ComposedLoss, ComposedLoss], n_epsilon: int) -> float:
    """Seconds to evaluate one pair's losses, both directions and bounds, at ``n_epsilon``
    epsilons (:func:`evaluation_seconds`).  The exact attempt runs once per direction when it
    gives up (the other bound then skips it)."""
    total = 0.0
    for loss in losses:
        lower = _evaluation(loss, False)  # the profile asks for the lower bound first
        upper = _evaluation(loss, True)
        total += lower[0] + (0.0 if lower[2] else upper[0]) + n_epsilon * (lower[1] + upper[1])
    return total


def _check_evaluations(losses: tuple[ComposedLoss, ComposedLoss], pairs: int, n_epsilon: int, what: str) -> None:
    """Refuse, before composing, ``pairs`` pairs like this one evaluated at ``n_epsilon``
    epsilons (:func:`pair_seconds`) when that exceeds the budget."""
    per = pair_seconds(losses, n_epsilon)
    check_budget(
        Estimate(per * pairs, 0.0),
        current_budget(),
        f"{what} ({pairs:.3g} neighbour pairs at {n_epsilon} epsilon(s), ~{per:.3g} s each)",
        "use fewer runs (a smaller k in repeat, fewer mechanisms in joint) or fewer epsilons",
        parameter="k",
    )


def _distinct_pairs(hists: IntArray, relation: str) -> int:
    """The neighbour pairs the profile of ``hists`` builds and evaluates: each unordered pair
    of a row and its neighbour once (both directions come from one build), at least one."""
    h = np.asarray(hists, dtype=np.int64)
    nb = h[:, None, :] + neighbour_moves(h.shape[1], relation)[None]  # (k, M, m)
    ok = (nb >= 0).all(axis=2) & (nb.sum(axis=2) >= 1)
    rows, mv = np.nonzero(ok)
    if rows.size == 0:
        return 1
    a, b = h[rows], nb[rows, mv]
    # the pair keyed by its two histograms in lexicographic order: the first differing count decides
    diff = a - b
    first = np.argmax(diff != 0, axis=1)
    swap = diff[np.arange(diff.shape[0]), first] > 0
    keys = np.concatenate([np.where(swap[:, None], b, a), np.where(swap[:, None], a, b)], axis=1)
    return max(1, int(np.unique(keys, axis=0).shape[0]))


class _Composed(Mechanism):
    """What :class:`Repeat` and :class:`Joint` share: the profile by composed losses."""

    @abstractmethod
    def _runs(self) -> list[Mechanism]:
        """The mechanisms run, one entry per run."""

    def _run_counts(self) -> list[tuple[Mechanism, int]]:
        """The mechanisms run, each with its number of runs (no per-run loop)."""
        return [(m, 1) for m in self._runs()]

    @property
    def categories(self) -> int | None:
        ms = {m.categories for m, _ in self._run_counts()} - {None}
        return ms.pop() if ms else None

    def sample_size(self, n: int) -> int:
        return max(m.sample_size(n) for m, _ in self._run_counts())

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        for m, _ in self._run_counts():
            m.check_histograms(hists, name)

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """``1 - prod (1 - b_i)`` with b_i each run's bound at epsilon = 0: a bound on the
        total variation of every run, and total variation composes so (coupling);
        rounded up."""
        log_keep = 0.0
        for m, c in self._run_counts():
            b = float(np.max(m._delta_upper_bound(n, np.zeros(1))))
            log_keep += c * math.log1p(-b) if b < 1 else -math.inf
        bound = min(1.0, -math.expm1(log_keep) * (1 + 1e-12))
        return np.full(np.shape(epsilon), bound)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The product law, enumerated (small cases only: the profile never uses it).
        Outputs are tuples of the runs' outputs."""
        once = [(m.log_output_pmf(hist), c) for m, c in self._run_counts()]
        cells = math.prod(len(lp) ** c for (_, lp), c in once)
        if cells > MAX_CELLS // 10:
            raise ComputationTooLarge(
                f"the output space of {self!r} has {cells:.3g} outputs; output_pmf enumerates them "
                "and is meant for small cases (the privacy profile does not need it)"
            )
        laws = [law for law, c in once for _ in range(c)]
        keys = [_output_keys(o) for o, _ in laws]
        outs = np.empty(cells, dtype=object)
        outs[:] = list(itertools.product(*keys))
        logp = np.zeros(1)
        for _, lp in laws:
            logp = (logp[:, None] + np.asarray(lp, dtype=float)[None, :]).ravel()
        return outs, logp

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> Any:
        """One output: a tuple of the runs' outputs; ``size`` outputs: an object array of them."""
        gen = as_rng(rng)
        if size is None:
            return tuple(m.sample_histogram(hist, gen) for m in self._runs())
        size = as_int(size, "size", minimum=1)
        draws = [np.asarray(m.sample_histogram(hist, gen, size)) for m in self._runs()]
        out = np.empty(size, dtype=object)
        out[:] = [tuple(_output_keys(d[i : i + 1])[0] for d in draws) for i in range(size)]
        return out

    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x) (Definition 2), shape (k, E): for every
        neighbour x' the runs' loss distributions of the pair are composed in both
        directions and the larger divergence kept; each ordered pair once per call.

        The argument.  For one ordered pair (P, Q) of a composition,
        ``d_eps(P, Q) = sum_o max(0, P(o) - e^eps Q(o))`` over the product outputs o,
        with ``P(o)`` and ``Q(o)`` the products of the runs' probabilities: a sum of
        terms each non-decreasing in every run's P-masses and non-increasing in its
        Q-masses.  The upper bound composes measures ``P~ >= P`` and ``Q~ <= Q`` of
        every run (:func:`run_losses`: the runs' log-pmfs widened by their proven
        errors), so its exact value is at least the truth, and every step of the
        composition rounds outward (:mod:`smoothdp_nb.core.numerics.privacy_loss.pld`: merged
        losses move up, masses are summed with a proven error, the grid rounds
        losses up and adds its truncations).  The lower bound is the same with every
        rounding reversed.  A profile is the maximum over neighbours and directions,
        which preserves both bounds."""
        return self._composed_profile(hists, epsilon, "replace")

    def _log_profile_add_remove(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """:meth:`_log_profile_enclosure` over the add-remove neighbours (the same argument:
        every pair of databases, of whatever sizes, composes its runs' losses)."""
        return self._composed_profile(hists, epsilon, "add-remove")

    def _composed_profile(self, hists: IntArray, epsilon: FloatArray, relation: str) -> LogEnclosure:
        """The profile of :meth:`_log_profile_enclosure` over the neighbours of ``relation``."""
        h = np.asarray(hists, dtype=np.int64)
        k = h.shape[0]
        pairs = _distinct_pairs(h, relation)
        check_composition_work(self, h[0], pairs)
        cache: dict[tuple[bytes, bytes], tuple[FloatArray, FloatArray]] = {}

        def direction(p: IntArray, q: IntArray) -> tuple[FloatArray, FloatArray]:
            key = (p.tobytes(), q.tobytes())
            if key not in cache:
                f, b = self._pair(p, q, pairs, epsilon.size)
                cache[key] = (f.log_delta(epsilon, upper=False), f.log_delta(epsilon, upper=True))
                cache[(q.tobytes(), p.tobytes())] = (
                    b.log_delta(epsilon, upper=False),
                    b.log_delta(epsilon, upper=True),
                )
            return cache[key]

        lo = np.full((k, epsilon.size), -np.inf)
        hi = np.full((k, epsilon.size), -np.inf)
        for r in range(k):
            x = h[r]
            for x2 in neighbours(x, relation):
                for dl, dh in (direction(x, x2), direction(x2, x)):
                    lo[r] = np.maximum(lo[r], dl)
                    hi[r] = np.maximum(hi[r], dh)
        return LogEnclosure(np.minimum(lo, 0.0), np.minimum(hi, 0.0))

    def _pair(self, x: IntArray, x2: IntArray, pairs: int = 1, n_epsilon: int = 1) -> tuple[ComposedLoss, ComposedLoss]:
        """:func:`pair_loss`, remembered for the last few pairs (an inverse curve evaluates
        the same pairs at many epsilons; a large single-run loss costs a second to build).
        A new pair is refused before composing when its composed law would not fit
        (:func:`_check_composed_size`) or ``pairs`` pairs like it at ``n_epsilon`` epsilons
        would exceed the time budget (:func:`pair_seconds`)."""
        cache: OrderedDict[tuple[bytes, bytes], tuple[ComposedLoss, ComposedLoss]]
        cache = self.__dict__.setdefault("_pair_cache", OrderedDict())
        key = (x.tobytes(), x2.tobytes())
        with _CACHE_LOCK:  # executors may run profiles of one mechanism in threads
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        val = pair_loss(self, x, x2)
        _check_composed_size(val)
        _check_evaluations(val, pairs, n_epsilon, f"the privacy profile of {self!r}")
        with _CACHE_LOCK:
            cache[key] = val
            if len(cache) > _PAIR_CACHE:
                cache.popitem(last=False)
        return val

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the remembered pair losses (large, and rebuilt on demand)."""
        state = dict(self.__dict__)
        state.pop("_pair_cache", None)
        state.pop("_cost_memo", None)  # timed on this machine
        return state

    def _profile_cost(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> Estimate:
        """The neighbour pairs of ``count`` histograms of n records on m categories, each
        built (:func:`build_estimate`) and evaluated in both directions and bounds at
        ``n_epsilon`` epsilons; bytes: the pairs' two bounds in both directions, and the
        neighbour histograms.

        The pairs: each histogram has ``m (m - 1)`` moves, valid for ``n / (n + m - 1)`` of
        them on average (a record to move), and a pair shared by two histograms of one chunk
        is built once: ``M (count + 1) / 2`` pairs for ``M`` valid moves, at most ``count M``.

        By arithmetic first: when building the pairs' runs alone exceeds ``budget`` that is
        returned.  Else the pair of the middle histogram ``(n - n/2, n/2)`` is built (a
        probe) and its evaluations are timed on up to four epsilons, unless
        :func:`pair_seconds` prices that timing itself above ``budget`` (then the model
        alone).  Pairs differ -- near the simplex's edges a sampling mechanism's laws are
        narrow and compose exactly -- so, where building is cheap, up to four more pairs
        spread over the histograms are built and priced by :func:`pair_seconds`, and the
        measured time is scaled by their mean price over the middle one's.  The price of one
        pair is remembered per (n, m, epsilons): a job's estimate asks for it more than once."""
        moves = m * (m - 1) * n / (n + m - 1.0)
        pairs = max(1, math.ceil(min(count * moves, moves * (count + 1) / 2.0)))
        nbytes = pairs * (32.0 * max(1, n_epsilon) + 8.0 * m)
        build = build_estimate(self, n, m, pairs)
        if build.seconds > budget:
            return Estimate(build.seconds, max(build.bytes, nbytes))

        memo: dict[tuple[int, int, int], float] = self.__dict__.setdefault("_cost_memo", {})
        if (n, m, n_epsilon) in memo:  # the estimate of one job asks more than once
            return Estimate(pairs * memo[n, m, n_epsilon], max(build.bytes, nbytes))

        def probe(a: int) -> tuple[ComposedLoss, ComposedLoss]:
            x = np.zeros(m, dtype=np.int64)
            x[0], x[1] = n - a, a
            x2 = x.copy()
            x2[0] -= 1
            x2[1] += 1
            return pair_loss(self, x, x2)

        t0 = time.perf_counter()
        f, b = probe(n // 2)
        built = time.perf_counter() - t0
        e = np.linspace(0.0, 1.0, max(1, min(n_epsilon, 4)))
        middle = pair_seconds((f, b), n_epsilon)
        shape = 1.0
        if n > 2 and build_estimate(self, n, m, 4).seconds <= 0.05 * min(budget, 60.0):
            spread = {round(a) for a in np.linspace(0.0, n - 1.0, 5)} - {n // 2}
            prices = [pair_seconds(probe(a), n_epsilon) for a in sorted(spread)]
            if middle > 0:
                shape = (middle + math.fsum(prices)) / ((1 + len(prices)) * middle)
        if pair_seconds((f, b), e.size) > budget:  # timing the evaluations would itself overrun: the model
            per = built + middle * shape
        else:
            t0 = time.perf_counter()
            for upper in (False, True):  # the enclosure computes both bounds, the lower first
                f.log_delta(e, upper)
                b.log_delta(e, upper)
            per = built + (time.perf_counter() - t0) * max(1.0, n_epsilon / e.size) * shape
        memo[n, m, n_epsilon] = per
        return Estimate(pairs * per, max(build.bytes, nbytes))


class Repeat(_Composed):
    """k independent runs of one mechanism on the same database; the output is the k outputs.

    Parameters
    ----------
    mechanism : Mechanism
    k : int >= 1
    grid_cells : int, optional
        The accuracy of the grid evaluation (losses on no single lattice and too many
        to compose exactly): cells of the composed grid, default ``2^18``.  Four times
        the cells give a grid step four times finer -- a bracket about four times
        narrower (``privacy_loss_distribution(...).delta_enclosure(eps)`` reports
        it) -- for about four times the time.  Exact and lattice compositions ignore it.
    """

    def __init__(self, mechanism: Mechanism, k: int, *, grid_cells: int | None = None) -> None:
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a smoothdp_nb Mechanism, got {type(mechanism).__name__}")
        self.mechanism = mechanism
        self.k = as_int(k, "k", minimum=1)
        self.grid_cells = _as_cells(grid_cells)

    def _runs(self) -> list[Mechanism]:
        if self.k > _MAX_LISTED_RUNS:  # k references would take 8 k bytes (8 GB at k = 10^9)
            raise ComputationTooLarge(
                f"{self!r} lists its {self.k:.3g} runs one by one here (~{8.0 * self.k:.3g} bytes); "
                f"at most {_MAX_LISTED_RUNS} runs are listed: use the privacy profile (it composes "
                "the k runs as one part), or a smaller k",
                "k",
            )
        return [self.mechanism] * self.k

    # what the runs share, read from the one mechanism (never from a list of k copies)
    @property
    def categories(self) -> int | None:
        return self.mechanism.categories

    def sample_size(self, n: int) -> int:
        return self.mechanism.sample_size(n)

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        self.mechanism.check_histograms(hists, name)

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """``1 - (1 - b)^k`` for the run's bound b at epsilon = 0 (see the base class), rounded up."""
        b = float(np.max(self.mechanism._delta_upper_bound(n, np.zeros(1))))
        log_keep = self.k * math.log1p(-b) if b < 1 else -math.inf
        bound = min(1.0, -math.expm1(log_keep) * (1 + 1e-12))
        return np.full(np.shape(epsilon), bound)

    def _run_counts(self) -> list[tuple[Mechanism, int]]:
        return [(self.mechanism, self.k)]

    def __repr__(self) -> str:
        extra = f", grid_cells={self.grid_cells}" if self.grid_cells is not None else ""
        return f"repeat({self.mechanism!r}, {self.k}{extra})"

    def _key(self) -> tuple[Mechanism, int, int | None]:
        return (self.mechanism, self.k, self.grid_cells)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The product law of the k runs (small cases only)."""
        return super().log_output_pmf(hist)


class Joint(_Composed):
    """Several mechanisms run independently on the same database; the output is their outputs.

    Parameters
    ----------
    *mechanisms : Mechanism
        At least one; all must accept the same number of categories.
    """

    def __init__(self, *mechanisms: Mechanism) -> None:
        if not mechanisms:
            raise ValueError("joint needs at least one mechanism")
        for i, m in enumerate(mechanisms):
            if not isinstance(m, Mechanism):
                raise TypeError(f"mechanisms[{i}] must be a smoothdp_nb Mechanism, got {type(m).__name__}")
        cats = {c for c in (m.categories for m in mechanisms) if c is not None}
        if len(cats) > 1:
            raise ValueError(f"mechanisms must accept the same number of categories, got {sorted(cats)}")
        self.mechanisms: tuple[Mechanism, ...] = tuple(mechanisms)

    def _runs(self) -> list[Mechanism]:
        return list(self.mechanisms)

    def __repr__(self) -> str:
        if len(self.mechanisms) > _REPR_MECHANISMS:  # a message naming a joint of 5,000 stays readable
            shown = ", ".join(repr(m) for m in self.mechanisms[:2])
            return f"joint({shown}, ... {len(self.mechanisms)} mechanisms)"
        return "joint(" + ", ".join(repr(m) for m in self.mechanisms) + ")"

    def _key(self) -> tuple[Mechanism, ...]:
        return self.mechanisms


def repeat(mechanism: Mechanism, k: int, *, grid_cells: int | None = None) -> Repeat:
    """k independent runs of ``mechanism`` on the same database, as one mechanism.

    Its privacy profile is computed by composing the privacy-loss distributions
    of the runs on every neighbouring pair: exactly while the composed support is
    small, by counting when every loss is a multiple of one step (a lattice), else
    with a proven pessimistic discretisation of ``grid_cells`` cells (see
    :class:`Repeat`): never larger than Proposition 5's ``k delta_eps/k``-style
    sums, and usually far smaller.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 5 (composition).

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> m = sdp.repeat(sdp.SamplingHistogram(eta=0.5), 3)
    >>> round(sdp.privacy_profile(m, [3, 2], 1.0), 6) <= 1
    True
    """
    return Repeat(mechanism, k, grid_cells=grid_cells)


def joint(*mechanisms: Mechanism) -> Joint:
    """The mechanisms run independently on the same database, as one mechanism
    (see :func:`repeat` for how its profile is computed)."""
    return Joint(*mechanisms)
