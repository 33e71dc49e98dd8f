"""Up-front cost model of the exact smoothed-delta engines.

It drives refusals (``budget=``), progress bars and the panels' choice between
the exact method and Monte Carlo, so it must be right within a factor of two
before any work is done.  For two categories and at most two hull vertices
(:func:`smoothdp_nb.core.smoothed.engines.binary.exact_binary`) the model walks the
engine's own block schedule and counts its work units -- multiply-adds of the
blocked advance and of the correlation, correlation segments and blocks
(:func:`binary_work_units`, tested against the counts the engine reports) --
and prices them with per-unit CPU costs fitted on the 2-core reference machine
(``python benchmarks/bench_smoothed.py --calibrate``, figures in
``benchmarks/README.md``).  What sets those counts besides n -- the spread
and the slope of log delta, how many epsilon columns differ -- comes from the
profile of a sample of histograms (:func:`profile_sample`).  The
general engine (m >= 3 or more vertices) is priced per composition, per
log-space term (:func:`general_work_units`, counted exactly) and per entry of
its histogram index.  The windowed certificate
(:mod:`~smoothdp_nb.core.smoothed.engines.window`) is priced by the histograms it is
expected to profile (:func:`~smoothdp_nb.core.smoothed.engines.window.planned_profiles`)
and its bounds' arithmetic (:func:`window_seconds`).
"""

from __future__ import annotations

import math
import time
from typing import Any, NamedTuple

import numpy as np
from scipy.special import comb

from smoothdp_nb.core.smoothed.engines.general import exact_general
from smoothdp_nb.core.smoothed.engines.pruning import PRUNE_MIN_N, engine_groups, estimated_stops
from smoothdp_nb.core.smoothed.engines.schedule import (
    block_at,
    block_schedule,
    block_steps,
    truncation_level,
    window_log_bound,
)

__all__ = [
    "window_seconds",
    "window_bytes",
    "window_profile_seconds",
    "estimate_exact_seconds",
    "engine_seconds",
    "binary_work_units",
    "general_work_units",
    "profile_sample",
    "ProfileSample",
]

# seconds per unit, single BLAS thread (benchmarks/README.md, "cost model")
_PER_ADVANCE = 6e-11  # one multiply-add of the banded advance (BLAS trmm, zero halves not counted)
_PER_CORRELATION = 6e-11  # one multiply-add of np.correlate
# one np.correlate call per correlation segment and epsilon column (the segments'
# preparation is vectorised per block; from profiles
# at load 6-10 scaled to the reference machine, not refitted by --calibrate yet)
_PER_SEGMENT = 4e-6
_PER_BLOCK = 1.35e-4  # Python round trip per block of compositions
# the pruning certificate per histogram and epsilon column (pieces, the end expectations,
# the spread of the bounds; measured at n = 1e5 .. 1e6)
_PER_PRUNE_ROW = 1.5e-7
_PER_PRUNE_FIXED = 0.05  # its Chernoff grid (plus 15 % of it per column)
_PER_COMPOSITION = 1.15e-4  # general engine: Python round trip per composition (a dot and a step)
_PER_LOG_TERM = 6.6e-8  # general engine: one log-space term per epsilon column
# general engine: one histogram-index entry and shift-map lookup per category (1.45e-6 while
# every call rebuilt each size's enumeration; refitted on m = 3, n = 100-300, CPU seconds
# at load 5: the index part is 1-2 % of the engine's time now, benchmarks/README.md)
_PER_INDEX_ROW = 1.5e-8
# blocks the cost model walks at most (beyond, a sample of them stands for all)
_MAX_BLOCKS_WALKED = 4096
# guess of the spread of log delta (natural log per record) for the window width
_SPREAD_PER_RECORD = 0.005
# the windowed certificate besides its profiles: a fixed part (partition, range bounds, the
# interval bounds' tilts), per epsilon column (the interval bounds and the induction's ratios)
# and per profiled histogram and column (the induction's correlations and its base); CPU
# seconds fitted at 3e6 and 1e7 records, three cases (benchmarks/ELECTORATE.md)
_WINDOW_FIXED = 0.4
_WINDOW_PER_COLUMN = 0.2
_WINDOW_PER_ROW = 1.2e-5


def binary_work_units(
    n: int,
    n_columns: float,
    p1: float,
    p2: float,
    log_bound: float | None = None,
    block: int = 128,
    slope: float = 0.0,
    stop: int | None = None,
) -> dict[str, float]:
    """Work units of the two-vertex engine for n records and ``n_columns`` epsilon columns.

    Walks the engine's own block schedule
    (:func:`~smoothdp_nb.core.smoothed.engines.schedule.block_schedule`, without
    fallback): blocks of K compositions, the advance of the live chunks (two
    triangular (c x Q) @ (Q x Q) products per column), and the correlation
    of each block's binomial window in segments of at most 8 chunks.
    ``log_bound`` is :func:`~smoothdp_nb.core.smoothed.engines.schedule.window_log_bound`
    of the data (None guesses it from n) and ``slope`` the largest slope of
    log delta (it can shorten K); ``stop`` the engine's (compositions 0 .. stop only).
    """
    K = block_steps(p1, p2, block, slope)
    Q = K + 1
    if log_bound is None:
        log_bound = 61 * math.log(2.0) + _SPREAD_PER_RECORD * n
    level = truncation_level(log_bound, n, K)
    E = n_columns
    units = dict(advance=0.0, correlation=0.0, segments=0.0, blocks=0.0)
    p = p1 if 0.0 < p1 < 1.0 else 0.5
    lr = math.log(p / (1.0 - p))
    g_h = int(340.0 / slope) if slope > 0 else 8 * Q  # the engine's segments span < e^-340 of H
    last = n if stop is None else stop
    n_blocks = last // K + 1
    stride = math.ceil(n_blocks / _MAX_BLOCKS_WALKED)
    if stride == 1:  # every block, as the engine does
        walk: Any = ((r0, k, a, b, lo, hi, 1) for r0, k, a, b, lo, hi in block_schedule(n, K, p1, p2, level, stop))
    else:  # every stride-th block stands for the next stride blocks (the estimate stays fast at any n)
        walk = (
            (r0, *block_at(n, K, p1, p2, level, r0, stop), min(stride, -(-(last + 1 - r0) // K)))
            for r0 in range(0, last + 1, K * stride)
        )
    for r0, k, a, b, lo, hi, weight in walk:
        s = n - r0 - k + 1
        width = b - a + 1
        units["correlation"] += weight * E * width * k
        # segments: at most 8 chunks, short enough that H spans < e^-340 over them (g_h) and the
        # weights too (their log-slope is largest at the window's edges: log((s - x) / (x + 1) p / q))
        wslope = max(abs(math.log((s - x) / (x + 1.0)) + lr) for x in (a, max(a, b - 1))) if s > 0 else 0.0
        G = max(1, min(8 * Q, g_h - k + 1, int(0.9 * 340.0 / wslope) if wslope > 0 else 8 * Q))
        units["segments"] += weight * math.ceil(width / G)
        units["blocks"] += weight
        if hi >= lo:
            units["advance"] += weight * E * (hi - lo + 1) * Q * Q  # triangular halves of the two products
    return units


def general_work_units(n: int, m: int, l: int) -> dict[str, float]:
    """Work units of the general engine (:func:`~smoothdp_nb.core.smoothed.engines.general.exact_general`)
    per epsilon column: compositions visited, log-space terms, and histogram-index rows.

    At level L and size S the engine does, for r = 0 .. S, the work of level
    L - 1 at size S - r and (r < S) one averaging step over the ``h(s) =
    C(s + m - 1, m - 1)`` histograms of size ``s = S - r - 1``, m terms each;
    level 0 is one dot product over the h(S) histograms.  So
    ``T_L(S) = sum_{j <= S} T_{L-1}(j) + m sum_{j < S} h(j)`` and ``T_0 = h``.
    The index of every size it visits has ``C(n + m, m)`` rows (one vertex: none).
    """
    s = np.arange(n + 1, dtype=float)
    h = comb(s + m - 1, m - 1)
    T = h.copy()
    H_before = np.concatenate([[0.0], np.cumsum(h)[:-1]])  # sum_{j < S} h(j)
    for _ in range(l - 1):
        T = np.cumsum(T) + m * H_before
    return {
        "compositions": float(math.comb(n + l - 1, l - 1)),
        "terms": float(T[n]),
        "index_rows": float(math.comb(n + m, m)) if l > 1 else 0.0,
    }


class ProfileSample(NamedTuple):
    """What a sample of a two-category profile tells the cost model (:func:`profile_sample`)."""

    log_bound: float  #: :func:`~smoothdp_nb.core.smoothed.engines.schedule.window_log_bound` of the sample
    slope: float  #: largest |log delta(x + 1) - log delta(x)| between sampled neighbours
    distinct: int  #: epsilon columns that differ
    x: np.ndarray | None = None  #: the sampled histograms' first counts (sorted, 0 and n included)
    logdelta: np.ndarray | None = None  #: log delta there, one column per distinct epsilon column


def profile_sample(mechanism: Any, n: int, epsilon: np.ndarray, points: int = 1024) -> ProfileSample:
    """A two-category profile on a sample of histograms, before the computation.

    The profile at ``points`` pairs of neighbouring histograms ``(x, n - x)``,
    ``(x + 1, n - x - 1)`` spread evenly over 0 .. n (both ends included):
    the spread of log delta, the largest slope between neighbours and how
    many epsilon columns differ -- the three things besides n that set the
    engine's work.  The profiles themselves are priced by the mechanism on the
    engine's chunks, not timed here: spread histograms cost 2-4 times more each
    than the contiguous chunks the computation runs, whose neighbours share
    their pairs.  At most 2 ``points`` histograms, against n + 1 for the computation.
    """
    x = np.unique(np.linspace(0, max(n - 1, 0), min(points, n)).astype(np.int64))
    pairs = np.stack([x, x + 1], axis=1).ravel()
    hists = np.stack([pairs, n - pairs], axis=1)
    E = epsilon.size
    ld = mechanism._profile(hists.astype(np.int64), epsilon).upper  # the hook: the caller validated the input
    with np.errstate(invalid="ignore"):  # -inf - -inf: two zeros, no slope
        steps = ld[1::2] - ld[0::2]
    fin = np.isfinite(steps)
    slope = float(np.abs(steps[fin]).max()) if np.any(fin) else 0.0
    keys = [np.ascontiguousarray(ld[:, j]).tobytes() for j in range(E)]
    first = sorted({k: j for j, k in reversed(list(enumerate(keys)))}.values())
    xs = np.r_[x, x[-1] + 1]  # the sampled counts: every x and the last x + 1 (= n)
    lds = np.concatenate([ld[0::2], ld[-1:]])[:, first]
    return ProfileSample(window_log_bound(ld), slope, len(first), xs, lds)


def engine_seconds(
    n: int, vertices: Any, n_epsilon: int, sample: ProfileSample | None = None, *, measure_speed: bool = True
) -> float:
    """Seconds of the exact engine's recursion alone (the profiles are priced in :mod:`.estimate`).

    ``sample``: :func:`profile_sample` of the data (two categories, two
    vertices); without it the spread and slope of log delta and the number
    of distinct columns are guessed.
    """
    V = np.atleast_2d(np.asarray(vertices, dtype=float))
    l, m = V.shape
    E = max(1, int(n_epsilon))
    if l == 1:  # a single weighted sum over the histograms
        return 0.0
    if m == 2 and l == 2:
        if sample is None:
            # epsilon values whose profiles coincide are averaged once: E^0.85 columns is within
            # x1.6 of both extremes (all distinct, or the authors' 21 -> 7-15 at n = 1e4 .. 5e5)
            cols, log_bound, slope = E**0.85, None, 0.0
        else:
            log_bound, slope, cols = sample.log_bound, sample.slope, float(sample.distinct)
        p1, p2 = float(V[0, 0]), float(V[1, 0])
        runs: list[tuple[float, float, float, int | None]] = [(cols, p1, p2, None)]
        prune = 0.0

        if (
            sample is not None
            and sample.x is not None
            and sample.logdelta is not None
            and p2 < 1.0
            and n >= PRUNE_MIN_N
        ):
            # the engine runs pruning leaves (pruning.prune_plan), as the sample predicts them

            stop, swapped = estimated_stops(sample.x, sample.logdelta, n, p1, p2, slope)
            runs = [(float(len(c)), *((p2, p1) if w else (p1, p2)), s) for c, w, s in engine_groups(stop, swapped, n)]
            prune = _PER_PRUNE_FIXED * (1.0 + 0.15 * cols) + _PER_PRUNE_ROW * (n + 1) * cols
        total = prune
        for c, q1, q2, s in runs:
            u = binary_work_units(n, c, q1, q2, log_bound=log_bound, slope=slope, stop=s)
            total += (
                _PER_ADVANCE * u["advance"]
                + _PER_CORRELATION * u["correlation"]
                + _PER_SEGMENT * u["segments"] * c
                + _PER_BLOCK * u["blocks"]
            )
        return float(total)
    model = _general_model(n, m, l, E)
    # a run of under 50 ms needs no probe (the probe would cost more than the error it removes)
    return model * general_speed(V, E) if measure_speed and model > 0.05 else model


def _general_model(n: int, m: int, l: int, E: int) -> float:
    """Seconds of the general engine on the reference machine (its fitted per-unit costs)."""
    g = general_work_units(n, m, l)
    return float(
        _PER_COMPOSITION * g["compositions"] + _PER_LOG_TERM * g["terms"] * E + _PER_INDEX_ROW * g["index_rows"] * m
    )


# the general engine is run on a small instance of about this many reference seconds to
# measure how fast the running machine is now (load, other tenants, a slower CPU)
_PROBE_SECONDS = 0.01


def general_speed(vertices: np.ndarray, n_epsilon: int) -> float:
    """How many times slower the general engine runs here and now than the
    fitted reference costs say: the engine itself is run on a small instance
    (random log-deltas, the same vertices and epsilon count, the smallest n
    whose modelled time reaches ``_PROBE_SECONDS``) and its measured time
    divided by the model's.  Clipped to [0.5, 50]: one probe of ~30 ms is
    noisy, and a machine 50 times slower than the reference is refused anyway
    by any sensible budget.
    """
    l, m = vertices.shape
    E = max(1, n_epsilon)
    probe = 1
    while _general_model(probe, m, l, E) < _PROBE_SECONDS and probe < 4096:
        probe *= 2
    rows = math.comb(probe + m - 1, m - 1)
    logdelta = np.log(np.random.default_rng(2).uniform(1e-6, 1e-3, size=(rows, E)))
    t0 = time.perf_counter()
    exact_general(logdelta, probe, m, vertices, None)
    measured = time.perf_counter() - t0
    return min(50.0, max(0.5, measured / _general_model(probe, m, l, E)))


def window_seconds(rows: int, n_columns: int, middle: bool = False) -> float:
    """Seconds of the windowed certificate besides its profiles, for ``rows`` profiled
    histograms and ``n_columns`` epsilon columns (the fitted costs above); ``middle``: it also
    profiles the middle, which takes two more rounds of interval bounds (the per-column cost,
    twice)."""
    rounds = 3.0 if middle else 1.0
    return _WINDOW_FIXED + rounds * _WINDOW_PER_COLUMN * n_columns + _WINDOW_PER_ROW * rows


#: histograms of the contiguous block whose profiles price the windowed certificate's
_WINDOW_BLOCK = 4096


def window_profile_seconds(mechanism: Any, n: int, center: float, rows: int, epsilon: np.ndarray) -> float:
    """CPU seconds of the windowed certificate's ``rows`` profiles, from the profiles of one
    contiguous block of histograms around ``center`` timed here (the certificate computes
    contiguous ranges, whose neighbours share their pairs: at 1e8 records a histogram of a
    window costs a fifth of what a lone one does, so no per-histogram model prices both)."""
    k = min(rows, _WINDOW_BLOCK)
    x0 = int(min(max(0.0, center - k / 2), n + 1 - k))
    x = np.arange(x0, x0 + k, dtype=np.int64)
    t0 = time.process_time()
    mechanism._profile(np.stack([x, n - x], axis=1), epsilon)
    return (time.process_time() - t0) * rows / k


def window_bytes(rows: int, n_columns: int) -> float:
    """Peak bytes of the windowed certificate's arrays: the profiles' two bounds (twice while a
    range grows), the induction's scaled copies and correlations (about six more), and the
    interval bounds' temporaries (tens of MB, whatever n)."""
    return 96.0 * rows * n_columns + 6.4e7


def estimate_exact_seconds(n: int, m: int, l: int, E: int) -> float:
    """Seconds of the engine alone, from the shape (vertices at 0.3 / 0.6 for two categories)."""
    if l == 1:
        return 0.0
    if m == 2 and l == 2:
        return engine_seconds(n, [[0.3, 0.7], [0.6, 0.4]], E)
    return engine_seconds(n, [[1.0 / m] * m] * l, E, measure_speed=False)
