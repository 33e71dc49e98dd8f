"""Up-front time and memory estimates of the smoothed delta, before any work starts.

A smoothed delta costs

* the **privacy profiles** delta_eps(x) it needs: every histogram of size n for
  the exact method (``C(n + m - 1, m - 1)`` of them), the distinct sampled
  histograms of every chunk for Monte Carlo;
* the **expectations**: the exact engine's recursion (its own cost model,
  :func:`.cost.estimate_exact_seconds`), or for Monte Carlo the sampled
  databases (one multinomial draw per hull vertex each).

Each part is a count of work units -- profile evaluations, databases drawn --
times a per-unit cost measured on the reference machine (2 shared cores, see
benchmarks/README.md).  The tests compare every count with a count measured on
the running code; the per-unit costs are the benchmarks' business.

Memory is the largest set of arrays alive at once: the profile table and the
engine's working arrays (exact), or the per-candidate result vector that
:func:`~smoothdp_nb.core.runtime.sweeps.monte_carlo_map` concatenates (Monte Carlo).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from smoothdp_nb.core.numerics.hull import reduce_to_vertices
from smoothdp_nb.core.numerics.validation import as_epsilon, as_int
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate
from smoothdp_nb.core.smoothed.engines.chunks import HELPER_MIN_N, profile_chunk_rows
from smoothdp_nb.core.smoothed.engines.cost import (
    engine_seconds,
    estimate_exact_seconds,
    profile_sample,
    window_bytes,
    window_profile_seconds,
    window_seconds,
)
from smoothdp_nb.core.smoothed.engines.monte_carlo import MAX_COMPLETIONS, candidate_compositions, composition_cells
from smoothdp_nb.core.smoothed.engines.window import WINDOW_ROWS, planned_profiles, window_may_apply
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism import sampling_average_units

__all__ = [
    "profile_units",
    "estimate_exact",
    "estimate_monte_carlo",
    "expected_distinct_histograms",
    "candidate_count",
    "sampling_average_units",
    "estimate_smoothed",
    "estimate_exact_cost",
]

# CPU seconds per sampled database and hull vertex (multinomial draw, np.unique over the chunk)
_DRAW = 6e-7
# bytes per (histogram, epsilon) of the two-category exact path: the profile table, its
# distinct columns and the engine's arrays; and per (histogram, epsilon) of one chunk of
# profiles being computed (measured with tracemalloc, benchmarks/README.md)
_EXACT2_BYTES = 50.0
_PROFILE_PAIR_BYTES = 900.0
# CPU seconds of a two-vertex exact run besides its profiles and its engine's work units (the
# residual of the measured runs, fitted as a + (b + c E) sqrt(n), E epsilon values, on four
# cases from 3e3 to 1e6 records: benchmarks/ELECTORATE.md); the profiles themselves are the mechanism's own price
# on the engine's chunks (a sample of spread histograms costs 2-4 times more per histogram than
# the contiguous chunks the engine computes, whose neighbours share their pairs)
_TWO_VERTEX_FIXED = 0.03
_TWO_VERTEX_SQRT = 3e-4
_TWO_VERTEX_SQRT_COLUMN = 3.3e-4
# bytes of one entry (a tuple key) of the general engine's histogram index (its time: cost.general_work_units)
_INDEX_ENTRY_BYTES = 170.0


def profile_units(mechanism: Mechanism, n: int, m: int, budget: float = DEFAULT_BUDGET_SECONDS) -> tuple[float, float]:
    """(seconds, peak bytes) of the privacy profile of one histogram of size n at one epsilon.

    The mechanism prices itself through the protocol
    (:meth:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism._profile_cost`): the
    package's mechanisms by their fitted models, any other (FiniteMechanism,
    post-processed, a user's subclass) by timing its laws on the running
    machine; ``budget`` (seconds for this one profile) stops that timing as
    soon as the work is sure to exceed it.
    """
    cost = mechanism._profile_cost(n, m, 1, 1, budget)
    return cost.seconds, cost.bytes


def estimate_profiles(mechanism: Mechanism, n: int, m: int, E: int) -> float:
    """Seconds of the privacy profiles of every histogram of n records at E epsilon.

    The mechanism prices itself through the protocol
    (:meth:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism._profile_cost`) on the
    chunks the exact method passes to it (a generic mechanism's laws are
    shared between neighbours within a chunk); the probing of a generic
    mechanism stops (and returns a lower bound) once the work is sure to
    exceed the default budget.  A ``label_symmetric`` mechanism on two
    categories is profiled on one histogram of each mirror pair.
    """
    count = n // 2 + 1 if m == 2 and mechanism.label_symmetric else math.comb(n + m - 1, m - 1)
    rows = profile_chunk_rows(E)
    full, rest = divmod(count, rows)
    seconds = full * float(mechanism._profile_cost(n, m, rows, E, DEFAULT_BUDGET_SECONDS).seconds) if full else 0.0
    if rest:
        seconds += float(mechanism._profile_cost(n, m, rest, E, DEFAULT_BUDGET_SECONDS).seconds)
    return seconds


def estimate_exact(mechanism: Mechanism, n: int, m: int, l: int, E: int) -> Estimate:
    """Time and memory of the exact smoothed delta (all histograms profiled, then Algorithm 1).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 1.
    """
    hists = math.comb(n + m - 1, m - 1)
    # the memory of one chunk of profiles, as the mechanism prices it
    per_bytes = mechanism._profile_cost(n, m, min(hists, profile_chunk_rows(E)), E, DEFAULT_BUDGET_SECONDS).bytes
    seconds = estimate_profiles(mechanism, n, m, E)
    if l > 1:  # one vertex: a single weighted sum over the histograms, no recursion
        seconds += estimate_exact_seconds(n, m, l, E)
    if m == 2 and l <= 2:
        nbytes = _EXACT2_BYTES * hists * E + _PROFILE_PAIR_BYTES * min(hists, profile_chunk_rows(E)) * E
        if n >= HELPER_MIN_N:  # the helper process: a chunk of profiles and half of the engine's columns
            nbytes += 0.5 * _EXACT2_BYTES * hists * E + _PROFILE_PAIR_BYTES * min(hists, profile_chunk_rows(E)) * E
    else:
        # the general engine keeps the histograms of every size s <= n it visits (sum over s of
        # C(s + m - 1, m - 1) = C(n + m, m) rows: arrays, shift maps and an index dict entry each);
        # with one vertex only size n
        rows = hists if l == 1 else math.comb(n + m, m)
        nbytes = rows * (16.0 * m + _INDEX_ENTRY_BYTES) + hists * E * 8.0 * (m + 3)
    return Estimate(seconds, max(nbytes, per_bytes))


def estimate_exact_cost(
    mechanism: Mechanism,
    n: int,
    vertices: npt.ArrayLike,
    n_epsilon: int,
    epsilon: npt.ArrayLike | None = None,
    *,
    window: bool = True,
) -> tuple[float, int]:
    """(seconds, bytes) the exact smoothed delta is expected to take, before any work.

    Parameters
    ----------
    mechanism : object
        The mechanism (its privacy profiles are priced by
        :func:`smoothdp_nb.core.smoothed.engines.estimate.profile_units`).
    n : int
        Number of records.
    vertices : array_like (l, m)
        The hull vertices of Pi (after :func:`~smoothdp_nb.core.numerics.hull.reduce_to_vertices`).
    n_epsilon : int
        Number of epsilon values (an upper bound on the distinct profile columns).
    epsilon : 1-D array, optional
        The epsilon values: for two categories and two vertices the engine's
        work is then taken from :func:`profile_sample` (a few profile
        evaluations) instead of guessed.
    window : bool
        Whether the windowed certificate is priced where it applies
        (:func:`~smoothdp_nb.core.smoothed.engines.window.window_may_apply`, given
        ``epsilon``): the histograms it is expected to profile
        (:func:`~smoothdp_nb.core.smoothed.engines.window.planned_profiles`) and its
        arithmetic.  False prices the full engine (what runs when the certificate
        has failed).

    Returns
    -------
    (float, int)
        Estimated seconds on the 2-core reference machine with one BLAS
        thread (the n + 1 profiles and the engine), and peak bytes of the
        main arrays.
    """
    V = np.atleast_2d(np.asarray(vertices, dtype=float))
    l, m = V.shape
    E = max(1, int(n_epsilon))
    if window and epsilon is not None:
        e = np.asarray(epsilon, dtype=float).ravel()
        plan = planned_profiles(mechanism, n, V, e) if window_may_apply(mechanism, n, V, e) else None
        if plan is not None:
            # the profiles timed on a block at the more lopsided end (computed first), and one
            # chunk of them in memory while computed (the certificate's rows per call); the
            # streamed middle holds one chunk and adds two rounds of interval bounds
            lop = max(range(l), key=lambda i: abs(float(V[i, 0]) - 0.5))
            center = n * float(V[lop, 0])
            prof = window_profile_seconds(mechanism, n, center, plan.held, e)
            if plan.streamed:
                mid = n * float(np.mean(V[:, 0]))
                prof += window_profile_seconds(mechanism, n, mid, plan.streamed, e[plan.streamed_columns])
            chunk = _PROFILE_PAIR_BYTES * min(plan.held + plan.streamed, WINDOW_ROWS) * E
            seconds = prof + window_seconds(plan.held, E, middle=plan.streamed > 0)
            return seconds, int(window_bytes(plan.held, E) + chunk)
    est = estimate_exact(mechanism, n, m, l, E)
    sample = None
    if epsilon is not None and m == 2 and l <= 2:
        sample = profile_sample(mechanism, n, np.asarray(epsilon, dtype=float).ravel())
    # estimate_exact prices the engine with the default vertices; use the actual ones
    seconds = est.seconds - estimate_exact_seconds(n, m, l, E) + engine_seconds(n, V, E, sample)
    if m == 2 and l == 2:
        # the work the unit counts leave out: this estimate's own sample, the pruning
        # certificate over the n + 1 profiles, the DP delta and the result
        seconds += _TWO_VERTEX_FIXED + (_TWO_VERTEX_SQRT + _TWO_VERTEX_SQRT_COLUMN * E) * math.sqrt(n)
    return seconds, int(est.bytes)


def _binom_pmf(c: int, p: float) -> np.ndarray:
    """Bin(c, p) pmf on 0..c (scipy.stats is slow to import; the estimates run before every job)."""
    k = np.arange(c + 1)
    logp = (
        special.gammaln(c + 1.0)
        - special.gammaln(k + 1.0)
        - special.gammaln(c - k + 1.0)
        + special.xlogy(k, p)
        + special.xlog1py(c - k, -p)
    )
    out: np.ndarray = np.exp(logp)
    return out


def _count_pmf(n_counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """pmf of a sum of independent binomials Bin(n_v, p_v) (the count of one category), on 0..sum n_v."""
    pmf = np.ones(1)
    for c, p in zip(n_counts, probs):
        if c:
            pmf = np.convolve(pmf, _binom_pmf(int(c), float(p)))
    return pmf


def _marginal_pmf(counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Law of one category's count: a sum of binomials (exact for small n, normal beyond)."""
    n = int(counts.sum())
    if n <= 2000:
        return _count_pmf(counts, probs)
    mean = float(counts @ probs)
    sd = math.sqrt(float(counts @ (probs * (1 - probs)))) + 1e-12
    k = np.arange(max(0, math.floor(mean - 12 * sd)), min(n, math.ceil(mean + 12 * sd)) + 2)
    return np.diff(special.ndtr((k - 0.5 - mean) / sd))


def expected_distinct_histograms(counts: npt.ArrayLike, vertices: npt.ArrayLike, draws: int) -> float:
    """Expected number of distinct histograms among ``draws`` databases of one composition.

    For two categories this is sum over the values k of the first count of
    1 - (1 - P(k))^draws (P: a sum of binomials, exact up to n = 2000, normal
    beyond).  For m > 2 it is the product of that number over the first m - 1
    categories' marginal counts (an upper bound), capped by ``draws``.
    """
    counts = np.asarray(counts)
    V = np.asarray(vertices, dtype=float)
    m = V.shape[1]
    n = int(counts.sum())
    out = 1.0
    for j in range(m - 1):
        p = np.minimum(_marginal_pmf(counts, V[:, j]), 1 - 1e-16)
        out *= float(np.sum(-np.expm1(draws * np.log1p(-p))))
        if out >= draws:
            break
    return min(out, float(draws), float(math.comb(n + m - 1, m - 1)))


def estimate_monte_carlo(
    mechanism: Mechanism, n: int, vertices: npt.ArrayLike, E: int, trials: int, candidates: int, chunk: int
) -> tuple[Estimate, dict[str, float]]:
    """Time and memory of the Monte Carlo smoothed delta, and its work units.

    Returns ``(Estimate, units)`` with ``units = {"candidates", "databases",
    "profiles"}``: candidate compositions, databases drawn, and histograms
    profiled (distinct within each chunk, as :func:`._mc_trials` evaluates them).
    """
    V = np.asarray(vertices, dtype=float)
    l, m = V.shape
    total = math.comb(n + l - 1, l - 1)
    if total > candidates:  # cells (see .monte_carlo): each trial also profiles Y + every completion
        base, extra, _ = composition_cells(n, l, candidates)
        D = int(n - base.sum(axis=1).min())
        if math.comb(D + m - 1, m - 1) <= MAX_COMPLETIONS:
            return _estimate_cells(mechanism, n, V, E, trials, chunk, base, extra)
    count = candidate_count(n, l, candidates)
    if count <= 256:
        comps = candidate_compositions(n, l, candidates)
        weight = 1.0
    else:  # too many to enumerate here: the vertex-pure compositions stand for all
        comps = np.eye(l, dtype=np.int64) * n
        weight = count / l
    full, rest = divmod(trials, chunk)
    profiles = 0.0
    for c in comps:  # at most 256 compositions
        profiles += weight * full * expected_distinct_histograms(c, V, chunk)
        if rest:
            profiles += weight * expected_distinct_histograms(c, V, rest)
    per, per_bytes = profile_units(mechanism, n, m, DEFAULT_BUDGET_SECONDS / max(1.0, profiles * E))
    databases = float(count) * trials
    seconds = databases * l * _DRAW + profiles * E * per
    size = min(chunk, trials)
    # the per-candidate results (list of chunks, then their concatenation), one chunk's arrays,
    # and per candidate its composition, seed and interval
    nbytes = (
        2.0 * trials * E * 8 + size * (8.0 * m * (l + 3) + 16.0 * E) + per_bytes + count * (8.0 * l + 24.0 * E + 400.0)
    )
    return Estimate(seconds, nbytes), {"candidates": count, "databases": databases, "profiles": profiles}


def _estimate_cells(
    mechanism: Mechanism,
    n: int,
    V: np.ndarray,
    E: int,
    trials: int,
    chunk: int,
    base: np.ndarray,
    extra: np.ndarray,
) -> tuple[Estimate, dict[str, float]]:
    """The Monte Carlo estimate when the compositions are cut into cells: per
    chunk of trials, the distinct candidate databases plus the distinct
    ``Y + z`` (z: every histogram of the cell's D extra records) -- for two
    categories the windows of D + 1 counts above the distinct Y overlap into
    about (distinct Y) + D histograms, for more the product, at most all
    ``C(n + m - 1, m - 1)`` histograms."""
    l, m = V.shape
    H = float(math.comb(n + m - 1, m - 1))
    full, rest = divmod(trials, chunk)
    profiles = 0.0
    completions_max = 1.0
    for s, x in zip(base, extra):
        D = int(n - s.sum())
        nz = float(math.comb(D + m - 1, m - 1))
        completions_max = max(completions_max, nz)
        for size, times in ((chunk, full), (rest, 1 if rest else 0)):
            if times:
                ed_y = expected_distinct_histograms(s, V, size) if s.sum() else 1.0
                spread = ed_y + D if m == 2 else ed_y * nz
                profiles += times * min(H, spread + expected_distinct_histograms(s + x, V, size))
    per, per_bytes = profile_units(mechanism, n, m, DEFAULT_BUDGET_SECONDS / max(1.0, profiles * E))
    count = len(base)
    databases = float(count) * trials
    seconds = databases * l * 2 * _DRAW + profiles * E * per + databases * completions_max * E * 2e-8
    size = min(chunk, trials)
    nbytes = (
        2.0 * trials * 2 * E * 8
        + min(size * completions_max, 2.0**18) * (8.0 * m * 3 + 16.0 * E)
        + per_bytes
        + count * (8.0 * l + 24.0 * E + 400.0)
    )
    return Estimate(seconds, nbytes), {"candidates": count, "databases": databases, "profiles": profiles}


def candidate_count(n: int, l: int, k: int) -> int:
    """Number of candidate compositions Monte Carlo uses (at most; without enumerating them).

    All ``C(n + l - 1, l - 1)`` compositions when there are at most k, else an
    even grid of step g, the largest with ``C(g + l - 1, l - 1) <= k``.
    """
    if l == 1:
        return 1
    total = math.comb(n + l - 1, l - 1)
    if total <= k:
        return total
    lo, hi = 1, max(1, k)  # C(g + l - 1, l - 1) >= g + 1 > k for g >= k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if math.comb(mid + l - 1, l - 1) <= k:
            lo = mid
        else:
            hi = mid - 1
    return math.comb(lo + l - 1, l - 1)


def estimate_smoothed(
    mechanism: Mechanism,
    ns: npt.ArrayLike,
    pi: object,
    epsilon: npt.ArrayLike,
    method: str = "exact",
    *,
    trials: int = 10**4,
    candidates: int = 16,
    chunk: int = 10_000,
    **_ignored: Any,
) -> Estimate:
    """Estimated run time (s) and peak memory (bytes) of :func:`~smoothdp_nb.core.smoothed.delta.smoothed_delta` at every n in ``ns``, run in turn.

    The same models as the refusals use; nothing is computed.  Other keyword
    arguments of ``smoothed_delta`` are accepted and ignored.
    """
    e, _ = as_epsilon(epsilon)
    red = reduce_to_vertices(pi)
    _l, _m = red.vertices.shape
    if mechanism.categories is not None and _m != mechanism.categories:
        raise ValueError(f"pi must have {mechanism.categories} columns (one per category of {mechanism!r}), got {_m}")
    total = Estimate(0.0, 0.0)
    for n in np.atleast_1d(ns):
        n = as_int(n, "n", minimum=1)
        mechanism.sample_size(n)  # T <= n check
        if method == "exact":
            total = total + Estimate(*estimate_exact_cost(mechanism, n, red.vertices, e.size, e))
        elif method == "monte-carlo":
            total = (
                total
                + estimate_monte_carlo(
                    mechanism,
                    n,
                    red.vertices,
                    e.size,
                    as_int(trials, "trials", minimum=1),
                    as_int(candidates, "candidates", minimum=1),
                    as_int(chunk, "chunk", minimum=1),
                )[0]
            )
        else:
            raise ValueError(f"method must be 'exact' or 'monte-carlo', got {method!r}")
    return total
