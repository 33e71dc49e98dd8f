"""Smoothed DP (Definition 3): Algorithm 1, exactly and fast, and Monte Carlo.

The smoothed delta of an anonymous mechanism M for a set of distributions Pi is

    delta_SDP(epsilon) = max over pi_1..pi_n in Pi of  E_{x ~ (pi_1..pi_n)} [delta_eps(x)].

By Proposition 7 only the l* vertices of the convex hull of Pi matter, and as
M is anonymous only the *composition* (how many records follow each vertex)
does: Algorithm 1 enumerates the compositions and takes the largest
expectation.

How we compute every expectation at once
----------------------------------------
Write ``H_r(x) = E[delta(x + Mult(r, pi_l))]`` for histograms x of n - r
records.  Then ``H_0 = delta`` and

    H_{r+1}(x) = sum_j pi_l[j] H_r(x + e_j),

one averaging step per record drawn from the last vertex.  Repeating the
construction vertex by vertex, the expectation for a composition
``(c_1, ..., c_l)`` is a single dot product of ``Mult(c_1, pi_1)`` with the
function obtained after ``c_l, ..., c_2`` steps.  For two categories each step
is two shifted vector operations, so all n + 1 compositions cost O(n^2)
work in total -- instead of O(n^(2m + l* - 3)) for the literal algorithm
(Theorem 2) -- and every epsilon is carried along in the same pass, because the
composition laws do not depend on epsilon.  The two-vertex path takes the
compositions 128 at a time as triangular BLAS products (see :func:`exact_binary`).

Exactness: the averaging is a convex combination of positive numbers (no
cancellation).  The two-category path runs in block floating point (one power-of-two scale,
an integer exponent, per chunk of 129 histograms) and checks as it runs that every product is a
normal float64 number, so no contribution is lost to underflow and every
expectation is exact to rounding at every magnitude (1e-3500 included); data
that fail the checks are recomputed one averaging step per composition.  The
general path (m > 2 or l* > 2) runs in log space throughout.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3, Proposition 7, Algorithm 1, Theorem 2).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor

import numpy as np
from numpy.typing import ArrayLike

from smoothdp_nb.core.numerics.array_types import FloatArray, FloatOrArray, SeedLike
from smoothdp_nb.core.numerics.hull import HullReduction, reduce_to_vertices
from smoothdp_nb.core.numerics.intervals import INTERVALS
from smoothdp_nb.core.numerics.validation import as_epsilon, as_int, as_open_unit
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate, budget_scope, check_budget
from smoothdp_nb.core.runtime.executors import ClientLike, as_executor
from smoothdp_nb.core.smoothed.accounting.inverse import as_log_targets, invert_log_delta
from smoothdp_nb.core.smoothed.engines.estimate import (
    candidate_count,
    estimate_monte_carlo,
    estimate_smoothed,
    profile_units,
)
from smoothdp_nb.core.smoothed.engines.exact import smoothed_exact
from smoothdp_nb.core.smoothed.engines.monte_carlo import smoothed_monte_carlo
from smoothdp_nb.core.smoothed.engines.options import SmoothedOptions
from smoothdp_nb.core.smoothed.engines.results import SmoothedCurve, SmoothedResult, fit_exponential
from smoothdp_nb.core.smoothed.engines.window import window_may_apply
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.enumeration import count_histograms
from smoothdp_nb.core.smoothed.mechanisms.relations import with_neighbours
from smoothdp_nb.core.smoothed.profiles import check_mechanism

__all__ = [
    "SmoothedResult",
    "SmoothedCurve",
    "smoothed_delta",
    "smoothed_delta_curve",
    "smoothed_epsilon",
    "estimate_smoothed",
    "fit_exponential",
]


def smoothed_delta(
    mechanism: Mechanism,
    n: int,
    pi: ArrayLike,
    epsilon: ArrayLike,
    *,
    method: str = "exact",
    progress: bool | None = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
    trials: int = 10**4,
    rng: SeedLike = None,
    confidence: float = 0.99,
    candidates: int = 16,
    executor: Executor | ClientLike | None = None,
    chunk: int = 10_000,
    interval: str = "betting",
    neighbours: str = "replace",
) -> SmoothedResult:
    """Smoothed delta (Definition 3) of any mechanism for the set Pi.

    Parameters
    ----------
    mechanism : Mechanism
        Any implementation of the protocol (sampling histograms, sampling
        average, :class:`FiniteMechanism`, :func:`postprocess`, subclasses).
    n : int >= 1, database size
    pi : array_like (l, m) or DataFrame
        The set Pi of distributions over the m categories (rows sum to 1).
        Only the convex-hull vertices are used (Proposition 7).
    epsilon : float or 1-D array
    method : {"exact", "monte-carlo"}
        "exact" is Algorithm 1 over every composition (see module docstring),
        for every mechanism: the profile of every histogram of n records, then
        the expectations; refused before any work when the estimated time
        (profiles and averaging) exceeds ``budget``.
        "monte-carlo" samples databases from candidate compositions (all
        vertex-pure compositions and an even grid, at most ``candidates``)
        and evaluates delta(x) exactly for each sample.
    progress : bool or None
        Show a tqdm progress bar; None shows one when the estimated run time
        exceeds two seconds.
    budget : float
        Refuse (before any work) computations estimated to take longer than
        this many seconds (``math.inf``: no time limit); the estimated memory
        is always checked against :func:`~smoothdp_nb.core.runtime.budget.memory_budget`.
    trials : int >= 1, Monte Carlo samples per candidate composition
    rng : None, int or Generator, Monte Carlo randomness
    confidence : float in (0, 1), Monte Carlo interval level
    candidates : int, Monte Carlo: at most this many candidate compositions
    executor : concurrent.futures.Executor, dask.distributed.Client or None
        Where the work runs: any Executor (a ProcessPoolExecutor,
        ``client.get_executor()``) or a Dask client itself.  Monte Carlo: the
        chunks of trials (per-chunk seeds from ``SeedSequence.spawn``, chunk
        boundaries fixed by ``chunk``).  Exact: the chunks of the profile table,
        the bulk of the work for mechanisms whose profiles dominate (a
        :class:`FiniteMechanism`, the sampling average); the averaging over
        compositions and the sampling histogram's windowed certificate run in
        this process.  Results are bit-identical for every executor; a chunk
        that fails there stops the run with an error naming it (a Dask cluster
        reruns the tasks of a lost worker on the others by itself).
    chunk : int, Monte Carlo trials per task
    interval : {"betting", "bernstein"}
        Monte Carlo: the confidence interval of each candidate's mean delta,
        valid for any law on [0, T/n] (the DP bound on delta(x)), Bonferroni
        over the candidates.  "betting" (default): :func:`betting_interval`,
        the hedged-capital interval of Waudby-Smith & Ramdas, much narrower at
        small trial counts and small deltas; "bernstein":
        :func:`empirical_bernstein_interval` (Maurer & Pontil).
    neighbours : {"replace", "add-remove"}
        The neighbouring relation of the profile delta(x) averaged over x ~ Pi^n:
        ``"replace"`` (the paper's, default) or ``"add-remove"`` -- the databases
        drawn still have n records, and each is compared with its neighbours of
        n - 1 and n + 1 records (docs/neighbours.md).

    Returns
    -------
    SmoothedResult

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3, Proposition 7, Algorithm 1).
    """
    mechanism = with_neighbours(check_mechanism(mechanism), neighbours)
    n = as_int(n, "n", minimum=1)
    e, scalar = as_epsilon(epsilon)
    if method not in ("exact", "monte-carlo"):
        raise ValueError(f"method must be 'exact' or 'monte-carlo', got {method!r}")
    red = _check_pi(mechanism, n, pi)
    with budget_scope(budget):  # the checks inside the mechanisms' hooks refuse against it too
        res = _smoothed_delta(
            mechanism,
            n,
            red,
            e,
            method,
            progress,
            budget,
            trials,
            rng,
            confidence,
            candidates,
            executor,
            chunk,
            interval,
        )
    object.__setattr__(res, "scalar_epsilon", scalar)
    return res


def _smoothed_delta(
    mechanism: Mechanism,
    n: int,
    red: HullReduction,
    e: FloatArray,
    method: str,
    progress: bool | None,
    budget: float,
    trials: int,
    rng: SeedLike,
    confidence: float,
    candidates: int,
    executor: Executor | ClientLike | None,
    chunk: int,
    interval: str,
) -> SmoothedResult:
    """:func:`smoothed_delta` after its arguments are validated: the exact engine or Monte Carlo."""
    pool = as_executor(executor)
    if method == "exact":
        if not window_may_apply(mechanism, n, red.vertices, e):
            _check_exact_floor(n, red.vertices.shape[1], e.size, budget)
        res = smoothed_exact(mechanism, n, red, e, progress, budget, pool)
    else:
        trials = as_int(trials, "trials", minimum=1)
        confidence = as_open_unit(confidence, "confidence")
        candidates = as_int(candidates, "candidates", minimum=1)
        if interval not in INTERVALS:
            raise ValueError(f"interval must be one of {sorted(INTERVALS)}, got {interval!r}")
        chunk = as_int(chunk, "chunk", minimum=1)
        if n > _MAX_RECORDS:
            raise ValueError(
                f"n must be at most 2**53 for the Monte Carlo smoothed delta (databases are drawn), got {n}"
            )
        if _monte_carlo_window(n) > _MC_WINDOW_POINTS:  # the fine estimate would itself be the runaway
            est, units = _monte_carlo_bound(mechanism, n, red.vertices, e.size, trials, candidates, chunk)
        else:
            est, units = estimate_monte_carlo(mechanism, n, red.vertices, e.size, trials, candidates, chunk)
        check_budget(
            est,
            budget,
            f"the Monte Carlo smoothed delta for n={n} ({trials} trials x "
            f"{units['candidates']} candidate compositions)",
            "use fewer trials or candidates",
            parameter="trials" if trials >= units["candidates"] else "candidates",
        )
        res = smoothed_monte_carlo(
            mechanism,
            n,
            red,
            e,
            trials,
            rng,
            confidence,
            candidates,
            progress,
            pool,
            chunk,
            interval,
        )
    return res


#: the largest database Monte Carlo draws (a multinomial of more records loses integers in float64)
_MAX_RECORDS = 2**53
#: the fine Monte Carlo estimate sums each candidate's marginal law over this many points at most
_MC_WINDOW_POINTS = 2**20


def _monte_carlo_window(n: int) -> float:
    """Points of a candidate's marginal count law that the fine Monte Carlo estimate sums
    (:func:`~smoothdp_nb.core.smoothed.engines.estimate.expected_distinct_histograms`: 24
    standard deviations, each at most ``sqrt(n) / 2``)."""
    return 12.0 * math.sqrt(float(n)) + 2.0


def _monte_carlo_bound(
    mechanism: Mechanism, n: int, vertices: np.ndarray, E: int, trials: int, candidates: int, chunk: int
) -> tuple[Estimate, dict[str, float]]:
    """Time and memory of the Monte Carlo smoothed delta at large n by arithmetic: every
    trial draws a distinct database (the most profiles there can be), each priced by one
    profile at n (:func:`~smoothdp_nb.core.smoothed.engines.estimate.profile_units`, the
    mechanism's own model) -- an upper estimate where the fine one
    (:func:`~smoothdp_nb.core.smoothed.engines.estimate.estimate_monte_carlo`) would sum
    marginal laws of millions of points to count the distinct ones."""
    l, m = vertices.shape
    count = candidate_count(n, l, candidates)
    profiles = float(count) * trials
    per, per_bytes = profile_units(mechanism, n, m, DEFAULT_BUDGET_SECONDS / max(1.0, profiles * E))
    size = min(chunk, trials)
    nbytes = 2.0 * trials * E * 8 + size * (8.0 * m * (l + 3) + 16.0 * E) + per_bytes + count * (8.0 * l + 24.0 * E)
    return Estimate(profiles * E * per, nbytes), {"candidates": count, "databases": profiles, "profiles": profiles}


#: Algorithm 1 visits every histogram; no engine spends less than this per histogram (10^7 per second)
_FLOOR_SECONDS_PER_HISTOGRAM = 1e-7
#: the two-category engine holds four float64 arrays of (n + 1) x E: the profiles, the padded copy,
#: its scaled mantissas and the result (engines/binary.py)
_FLOOR_BYTES_PER_BINARY_POINT = 32.0


def _check_exact_floor(n: int, m: int, n_epsilon: int, budget: float) -> None:
    """Refuse, by arithmetic alone, an exact smoothed delta whose *least* possible cost is over budget.

    The engines' own estimate probes the mechanism at ``n`` (one neighbour pair,
    a count law of about ``n`` points), which for ``n = 10^9`` is itself the
    runaway; this floor runs first and costs nothing.  Algorithm 1 sums over the
    ``C(n + m - 1, m - 1)`` histograms of n records (Liu, Wang, Xia, Algorithm
    1), each needing at least one profile value per epsilon: at most
    :data:`_FLOOR_SECONDS_PER_HISTOGRAM` less than that is impossible; for two
    categories the engine's arrays take ``32 (n + 1) E`` bytes.  Both are lower
    bounds of the full engine's cost, so a refusal here is never wrong for it.  The
    windowed certificate (:mod:`~smoothdp_nb.core.smoothed.engines.window`) visits only the
    histograms that can carry the expectation: where it applies the caller skips this floor,
    the certificate stops at the budget, and the full engine it may fall back to checks its own
    estimate before it starts.
    """
    hists = count_histograms(n, m)
    seconds = float(hists) * n_epsilon * _FLOOR_SECONDS_PER_HISTOGRAM if hists < 10**300 else math.inf
    nbytes = _FLOOR_BYTES_PER_BINARY_POINT * (n + 1.0) * n_epsilon if m == 2 else 8.0 * n_epsilon
    check_budget(
        Estimate(seconds, nbytes),
        budget,
        f"the exact smoothed delta for n={n}, m={m} ({hists:.3g} histograms, at least "
        f"{_FLOOR_SECONDS_PER_HISTOGRAM:g} s each)",
        "use method='monte-carlo' or a smaller n",
        parameter="n",
    )


def _check_pi(mechanism: Mechanism, n: int, pi: object) -> HullReduction:
    """The hull vertices of Pi (Proposition 7), checked against the mechanism's
    categories, and n against its sample size (T <= n)."""
    red = reduce_to_vertices(pi)
    if mechanism.categories is not None and red.vertices.shape[1] != mechanism.categories:
        raise ValueError(
            f"pi must have {mechanism.categories} columns (one per category of {mechanism!r}), "
            f"got {red.vertices.shape[1]}"
        )
    mechanism.sample_size(n)  # T <= n check
    return red


def smoothed_delta_curve(
    mechanism: Mechanism,
    ns: ArrayLike,
    pi: ArrayLike,
    epsilon: ArrayLike,
    *,
    method: str = "exact",
    progress: bool | None = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
    trials: int = 10**4,
    rng: SeedLike = None,
    confidence: float = 0.99,
    candidates: int = 16,
    executor: Executor | ClientLike | None = None,
    chunk: int = 10_000,
    interval: str = "betting",
    neighbours: str = "replace",
) -> SmoothedCurve:
    """Run :func:`smoothed_delta` for every n in ``ns`` and fit exp(a + b n) per epsilon.

    The keyword-only options are those of :func:`smoothed_delta` (``neighbours`` included).  Every point
    is estimated before the first starts: the sum of the estimated times must
    fit ``budget`` (and each point's memory the memory budget).
    """
    mechanism = with_neighbours(check_mechanism(mechanism), neighbours)
    ns = [as_int(v, "ns", minimum=1) for v in np.atleast_1d(ns)]
    if not ns:
        raise ValueError("ns must contain at least one database size")
    if method == "exact":
        m = reduce_to_vertices(pi).vertices.shape[1]
        for n in ns:
            _check_exact_floor(n, m, as_epsilon(epsilon)[0].size, budget)
    # Monte Carlo at large n: the arithmetic bound, as in smoothed_delta (the fine estimate would be the runaway)
    big = [n for n in ns if method == "monte-carlo" and _monte_carlo_window(n) > _MC_WINDOW_POINTS]
    if any(n > _MAX_RECORDS for n in big):
        raise ValueError(f"ns must be at most 2**53 for the Monte Carlo smoothed delta, got {max(big)}")
    small = [n for n in ns if n not in big]
    total = (
        estimate_smoothed(mechanism, small, pi, epsilon, method, trials=trials, candidates=candidates, chunk=chunk)
        if small
        else Estimate(0.0, 0.0)
    )
    if big:
        V = reduce_to_vertices(pi).vertices
        E = as_epsilon(epsilon)[0].size
        t, c, ch = (
            as_int(trials, "trials", minimum=1),
            as_int(candidates, "candidates", minimum=1),
            as_int(chunk, "chunk", minimum=1),
        )
        for n in big:
            mechanism.sample_size(n)
            total = total + _monte_carlo_bound(mechanism, n, V, E, t, c, ch)[0]
    check_budget(
        total,
        budget,
        f"the smoothed delta curve over {len(ns)} values of n (up to {max(ns)})",
        "use fewer or smaller n" + (", or method='monte-carlo'" if method == "exact" else ""),
        parameter="n",
    )
    # the whole curve fits the time budget: the points run without a time limit of their own
    points: SmoothedOptions = {
        "progress": progress,
        "budget": math.inf,
        "trials": trials,
        "rng": rng,
        "confidence": confidence,
        "candidates": candidates,
        "executor": executor,
        "chunk": chunk,
        "interval": interval,
    }
    with budget_scope(budget):  # the checks inside the mechanisms' hooks see the caller's budget
        results = [smoothed_delta(mechanism, n, pi, epsilon, method=method, **points) for n in ns]
    return SmoothedCurve.from_results(results)


def smoothed_epsilon(
    mechanism: Mechanism,
    n: int,
    pi: ArrayLike,
    delta: ArrayLike,
    *,
    log: bool = False,
    method: str = "exact",
    progress: bool | None = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
    trials: int = 10**4,
    rng: SeedLike = None,
    confidence: float = 0.99,
    candidates: int = 16,
    executor: Executor | ClientLike | None = None,
    chunk: int = 10_000,
    interval: str = "betting",
    neighbours: str = "replace",
) -> FloatOrArray:
    """The smallest epsilon with smoothed delta (Definition 3) at most ``delta``.

    The forward curve is :func:`~smoothdp_nb.smoothed_delta` with
    ``method="exact"`` (Algorithm 1; a Monte Carlo estimate is not a proven
    bound, so it is not inverted).  Certified and tight as :func:`profile_epsilon`.

    Parameters
    ----------
    mechanism, n, pi
        As :func:`smoothed_delta`.
    delta : float or 1-D array in (0, 1]
        Target(s); with ``log=True`` their natural logs.
    log : bool, default False
        ``delta`` is given as natural logs (targets below the float64 range).
    method, progress, budget, trials, rng, confidence, candidates, executor, chunk, interval, neighbours
        The keyword-only options of :func:`smoothed_delta`, so that one set of
        options serves both; ``method`` must be ``"exact"``, ``executor`` runs
        the profile chunks of each step, and the Monte Carlo options
        (``trials``, ``rng``, ``confidence``, ``candidates``, ``chunk``,
        ``interval``) are not used.
        ``budget`` holds for the whole inversion: an n whose one evaluation cannot fit
        is refused by arithmetic before any (as :func:`smoothed_delta`), and each
        evaluation is refused before it starts when its estimate exceeds what is left.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 3, Algorithm 1.
    """
    mechanism = with_neighbours(check_mechanism(mechanism), neighbours)
    if method != "exact":
        raise ValueError("smoothed_epsilon inverts the exact smoothed delta only: method must be 'exact'")
    t, scalar = as_log_targets(delta, log)
    n = as_int(n, "n", minimum=1)
    red = _check_pi(mechanism, n, pi)
    pool = as_executor(executor)
    with budget_scope(budget) as seconds:
        if not window_may_apply(mechanism, n, red.vertices, np.ones(1)):
            _check_exact_floor(n, red.vertices.shape[1], 1, seconds)  # by arithmetic, before any step
        deadline = time.perf_counter() + seconds

        # validated once above: each step of the bisection runs the exact engine itself, within
        # what is left of the budget (refused before a step that would not fit)
        def curve(e: FloatArray) -> FloatArray:
            left = max(deadline - time.perf_counter(), 1e-9)
            res = smoothed_exact(mechanism, n, red, as_epsilon(np.ravel(e))[0], progress, left, pool)
            return np.reshape(np.asarray(res.log_delta_values, dtype=float), (1, e.size))

        with mechanism._law_scope():  # each output law once over the whole bisection
            out = invert_log_delta(curve, t, 1)[0]
    return float(out[0]) if scalar else out


# a result answers epsilon_for(delta) with the inverse above (results.py sits below this package)
SmoothedResult.epsilon_solver = smoothed_epsilon
