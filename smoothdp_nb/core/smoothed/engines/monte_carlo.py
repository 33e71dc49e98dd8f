"""Monte Carlo smoothed delta: databases drawn from candidate compositions, each
delta(x) exact (in log space), and confidence intervals valid for any law on
[0, DP delta].

What the interval covers
------------------------
The smoothed delta is the largest ``f(c) = E_c[delta(x)]`` over *every*
composition c of the n records among the hull vertices.  Sampling a few
candidate compositions bounds their own f from both sides, and the largest
lower end is a lower confidence bound on the smoothed delta; the upper end
must cover the compositions that were never sampled too:

* at most ``candidates`` compositions in all: every one is a candidate
  (Bonferroni over all of them);
* otherwise the compositions are cut into at most ``candidates`` cells,
  boxes of width w in the first l - 1 counts.  Every composition c of a
  cell is at least the cell's base s (componentwise), so a database of c is
  ``Y + Z`` with Y drawn from s (n - D records, the same law for the whole
  cell) and Z the other D records, independent of Y.  Hence
  ``delta(Y + Z) <= U(Y) = max over histograms z of D records of delta(Y + z)``
  and ``f(c) <= E[U(Y)]`` for every c of the cell.  U(Y) lies in [0, DP
  delta] too, so a confidence interval on its mean is an upper confidence
  bound on the largest f in the cell, and the largest over the cells (with
  Bonferroni over the cells) one on the smoothed delta.  The cell's
  candidate is one composition of the cell, drawn from the same Y;
* when a cell's D records have too many histograms to enumerate
  (``MAX_COMPLETIONS``), no such bound is computed: the interval then covers
  the candidate compositions only and says so (``covers``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.hull import HullReduction
from smoothdp_nb.core.numerics.intervals import INTERVALS
from smoothdp_nb.core.numerics.validation import as_rng
from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.core.runtime.progress import optional_progress_bar
from smoothdp_nb.core.runtime.sweeps import monte_carlo_map
from smoothdp_nb.core.smoothed.engines.results import SmoothedResult, assemble_result, dp_pair
from smoothdp_nb.core.smoothed.mechanisms import Mechanism, compositions
from smoothdp_nb.core.smoothed.profiles import privacy_profile

__all__ = [
    "smoothed_monte_carlo",
    "composition_cells",
    "composition_deltas",
    "candidate_compositions",
    "MAX_COMPLETIONS",
]

#: a cell's D extra records may have at most this many histograms (each trial evaluates them all)
MAX_COMPLETIONS = 512
# rows (trial x completion) per block of the cell trials: bounds their working memory
_BLOCK_ROWS = 2**18


def candidate_compositions(n: int, l: int, k: int) -> np.ndarray:
    """Compositions of ``n`` records over ``l`` vertices to search, about ``k`` of them at most.

    All of them when there are at most ``k``; otherwise an even grid on the
    simplex (step ``n / g`` for the largest ``g`` with at most ``k`` grid
    points), rounded down and completed in the last vertex, vertex-pure
    compositions included, duplicates removed.  Returns an ``(count, l)``
    integer array, rows summing to ``n``.
    """
    if l == 1:
        return np.array([[n]])
    total = math.comb(n + l - 1, l - 1)
    if total <= k:
        return compositions(n, l)
    # an even grid on the simplex of compositions, vertex-pure ones included
    g = 1
    while math.comb(g + 1 + l - 1, l - 1) <= k:
        g += 1
    grid = compositions(g, l)
    comps = np.floor(grid * n / g).astype(np.int64)
    comps[:, -1] = n - comps[:, :-1].sum(axis=1)
    return np.unique(comps, axis=0)


def composition_cells(n: int, l: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells covering every composition of n into l parts, at most k of them (k >= 1).

    Returns ``(base, extra, width)``: per cell its base s (every composition
    of the cell is >= s componentwise, ``n - sum(s) = D`` records on top), a
    candidate composition ``s + extra`` inside the cell, and the box width w.
    Cells are the boxes ``w b_j <= c_j <= w b_j + w - 1`` (j < l) of the
    smallest w giving at most k non-empty boxes.
    """
    # the smallest w with at most k boxes: the count is non-increasing in w, so bisect
    # (a step-by-step search takes n / k steps: forever at n = 10^18)
    lo_w, hi_w = 1, n + 1  # beyond n every box is the one composition (0, ..., 0, n)
    while lo_w < hi_w:
        mid = (lo_w + hi_w) // 2
        if math.comb(n // mid + l - 1, l - 1) > k:
            lo_w = mid + 1
        else:
            hi_w = mid
    w = lo_w
    g = n // w
    b = compositions(g, l)[:, :-1] if l > 1 else np.zeros((1, 0), dtype=np.int64)
    lo = w * b
    hi = np.minimum(lo + w - 1, n)
    last_lo = np.maximum(0, n - hi.sum(axis=1))
    base = np.concatenate([lo, last_lo[:, None]], axis=1)
    centre = np.minimum(hi, lo + (w - 1) // 2)
    fits = centre.sum(axis=1) <= n
    first = np.where(fits[:, None], centre, lo)
    cand = np.concatenate([first, (n - first.sum(axis=1))[:, None]], axis=1)
    return base, cand - base, np.array(w)


def _mc_trials(
    size: int, rng: np.random.Generator, mech: Any, counts: np.ndarray, vertices: np.ndarray, epsilon: np.ndarray
) -> np.ndarray:
    """``size`` databases drawn from a composition, and their exact delta (size, E).

    Module-level so that process pools and Dask can pickle it."""
    m = vertices.shape[1]
    hist = np.zeros((size, m), dtype=np.int64)
    for v, c in enumerate(counts):
        if c:
            hist += rng.multinomial(int(c), vertices[v], size=size)
    # delta depends on the histogram only: evaluate each distinct one once (log: no underflow)
    uniq, inv = np.unique(hist, axis=0, return_inverse=True)
    table = mech._profile(np.asarray(uniq, dtype=np.int64), epsilon).upper  # the hook: validated by smoothed_delta
    out: np.ndarray = table[inv.ravel()]
    return out


def composition_deltas(
    size: int,
    rng: np.random.Generator,
    mechanism: Mechanism,
    laws: Sequence[npt.ArrayLike],
    counts: Sequence[int],
    epsilon: npt.ArrayLike,
    spread: bool = False,
) -> np.ndarray:
    """``size`` databases with ``counts[j]`` records drawn from ``laws[j]``, and their exact delta_epsilon(x).

    The trial function of a Monte Carlo over one composition (Definition 3 of
    the smoothed-DP paper averages delta_epsilon(x) over such databases), for
    :func:`~smoothdp_nb.core.runtime.sweeps.monte_carlo_map`.  It is a module-level
    function so that a ``forkserver`` or ``spawn`` process pool
    (:func:`~smoothdp_nb.core.runtime.parallel.process_pool`) can import it: a
    notebook's own function can only run in a pool that forks the kernel.

    Parameters
    ----------
    size : int
        Databases to draw.
    rng : numpy.random.Generator
        Their randomness: for each j with ``counts[j] > 0`` in order, a
        multinomial draw of ``counts[j]`` records from ``laws[j]`` (the
        histograms are the sums).
    mechanism : Mechanism
        The mechanism whose profile is computed.  (``size`` and ``rng`` come
        first: the signature of every trial function of ``monte_carlo_map``.)
    laws : sequence of 1-D arrays
        Probability vectors over the mechanism's categories.
    counts : sequence of int
        Records per law (the composition).
    epsilon : float or 1-D array of floats
        Where the profile is evaluated.
    spread : bool, default False
        Append one column: the variance of each database's records in
        category steps (``sum_k h_k k^2 / n - (sum_k h_k k / n)^2``), a
        covariate for a control variate.

    Returns
    -------
    numpy.ndarray of shape (size, E) or (size, E + 1)
        :func:`~smoothdp_nb.core.smoothed.profiles.privacy_profile` of each database
        (a proven upper bound on delta_epsilon(x)), each distinct histogram
        evaluated once; then the spread if asked.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*, Definition 3 (the
    expectation over databases drawn from a composition).
    """
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    P = np.asarray([np.asarray(q, dtype=float) for q in laws])
    c = np.asarray(counts)
    if P.ndim != 2 or c.shape != (P.shape[0],):
        raise ValueError(f"laws and counts must have one entry per law, got {P.shape[0]} laws and counts {c.shape}")
    hist = _draw(size, rng, c, P)
    uniq, inv = np.unique(hist, axis=0, return_inverse=True)
    table = np.asarray(privacy_profile(mechanism, uniq, e)).reshape(len(uniq), e.size)
    out: np.ndarray = table[inv.ravel()]
    if spread:
        k = np.arange(hist.shape[1])
        n = hist.sum(axis=1)
        out = np.column_stack([out, hist @ (k * k) / n - (hist @ k / n) ** 2])
    return out


def _draw(size: int, rng: np.random.Generator, counts: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    hist = np.zeros((size, vertices.shape[1]), dtype=np.int64)
    for v, c in enumerate(counts):
        if c:
            hist += rng.multinomial(int(c), vertices[v], size=size)
    return hist


def _mc_cell_trials(
    size: int,
    rng: np.random.Generator,
    mech: Any,
    base: np.ndarray,
    extra: np.ndarray,
    vertices: np.ndarray,
    epsilon: np.ndarray,
    completions: np.ndarray,
) -> np.ndarray:
    """``size`` trials of one cell: (size, 2E) log values, the candidate's
    ``delta(Y + Z)`` then ``U(Y) = max_z delta(Y + z)`` (module docstring)."""
    E = epsilon.size
    Y = _draw(size, rng, base, vertices)
    X = Y + _draw(size, rng, extra, vertices)
    nz, m = completions.shape
    out = np.empty((size, 2 * E))
    step = max(1, _BLOCK_ROWS // max(1, nz))
    for s0 in range(0, size, step):
        y = Y[s0 : s0 + step]
        rows = np.concatenate([X[s0 : s0 + step], (y[:, None, :] + completions[None]).reshape(-1, m)])
        uniq, inv = np.unique(rows, axis=0, return_inverse=True)
        table = mech._profile(np.asarray(uniq, dtype=np.int64), epsilon).upper
        vals = table[inv.ravel()]
        b = len(y)
        out[s0 : s0 + b, :E] = vals[:b]
        out[s0 : s0 + b, E:] = vals[b:].reshape(b, nz, E).max(axis=1)
    return out


def _log_mean(logv: np.ndarray) -> np.ndarray:
    """log of the mean of exp(logv) over the first axis (no underflow)."""
    res: np.ndarray = logsumexp(logv, axis=0) - math.log(logv.shape[0])
    return res


def smoothed_monte_carlo(
    mech: Any,
    n: int,
    red: HullReduction,
    e: np.ndarray,
    trials: int,
    rng: Any,
    confidence: float,
    k: int,
    progress: bool | None,
    executor: Any,
    chunk: int,
    interval: str = "betting",
) -> SmoothedResult:
    t0 = time.perf_counter()
    V = red.vertices
    l, m = V.shape
    E = e.size
    total = math.comb(n + l - 1, l - 1)
    # every delta(x) lies in [0, bound]: the range of the confidence intervals
    bound = float(np.max(mech._delta_upper_bound(n, e)))
    ci_fn, ci_name = INTERVALS[interval]
    if total <= k:
        comps, base, extra = compositions(n, l) if l > 1 else np.array([[n]]), None, None
        completions = None
    else:
        base, extra, _ = composition_cells(n, l, k)
        D = int(n - base.sum(axis=1).min())
        if math.comb(D + m - 1, m - 1) <= MAX_COMPLETIONS:
            comps = base + extra
            completions = [compositions(int(n - s.sum()), m) for s in base]
        else:  # the cells' bound would enumerate too much: the candidate grid, honestly labelled
            comps, base, extra, completions = candidate_compositions(n, l, k), None, None, None
    seeds = np.random.SeedSequence(as_rng(rng).integers(2**63)).spawn(len(comps))
    cells = completions is not None
    # Bonferroni: over the candidates (and, for cells, half the level for their upper ends)
    alpha = (1.0 - confidence) / len(comps) / (2 if cells else 1)
    vals = np.empty((len(comps), E))
    lows = np.empty_like(vals)
    highs = np.empty_like(vals)
    bar = optional_progress_bar(len(comps), bool(progress), "candidate compositions")
    for i, (c, seed) in enumerate(zip(comps, seeds)):
        if cells:
            assert base is not None and extra is not None and completions is not None
            fn: Any = _mc_cell_trials
            kwargs = {"mech": mech, "base": base[i], "extra": extra[i], "vertices": V, "epsilon": e}
            kwargs["completions"] = completions[i]
        else:
            fn, kwargs = _mc_trials, {"mech": mech, "counts": c, "vertices": V, "epsilon": e}
        d = monte_carlo_map(
            fn, trials, seed, executor=executor, chunk=chunk, progress=False, budget=None, kwargs=kwargs
        )
        vals[i] = _log_mean(d[:, :E])
        _, lows[i], highs[i] = ci_fn(np.exp(d[:, :E]), alpha, bound)
        if cells:  # the cell's upper end: the mean of U(Y) >= every f(c) of the cell
            _, _, highs[i] = ci_fn(np.exp(d[:, E:]), alpha, bound)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    if total <= k:
        covers = f"all {total} compositions"
        what = f"{ci_name}, Bonferroni over all {total} compositions: an interval for the smoothed delta"
    elif cells:
        covers = f"all {total} compositions"
        what = (
            f"{ci_name}, Bonferroni over {len(comps)} cells covering all {total} compositions (upper end: "
            "each cell's E[max over its extra records], an upper bound for the smoothed delta)"
        )
    else:
        covers = f"{len(comps)} of {total} compositions"
        what = (
            f"{ci_name}, Bonferroni over {len(comps)} candidate compositions of {total}: an interval for the "
            "largest of these only, not for the smoothed delta (use candidates >= the number of compositions "
            "or fewer records per cell)"
        )
    notes = [f"Monte Carlo interval covers {covers}"]
    try:
        dp = dp_pair(mech, n, e, m)
    except ComputationTooLarge as exc:  # the worst case needs every database: say so, do not guess
        dp = (np.full(E, np.nan), np.full(E, np.nan))
        notes.append(f"DP delta not computed: {exc}")
    # the smoothed delta never exceeds the DP delta: a bound on the upper ends that needs no statistics
    highs = np.where(np.isnan(dp[1])[None, :], highs, np.minimum(highs, np.asarray(dp[1])[None, :]))
    return assemble_result(
        mech,
        n,
        red,
        e,
        comps,
        vals,
        "monte-carlo",
        t0,
        dp,
        lo=lows,
        hi=highs,
        extra_notes=notes,
        confidence=confidence,
        trials=trials,
        interval=what,
    )
