"""Monte Carlo smoothed delta: databases drawn from candidate compositions, each
delta(x) exact, and a confidence interval valid for any law on [0, DP delta]."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .._progress import optional_progress_bar
from .._validate import as_rng
from ..budget import ComputationTooLarge
from ..hull import HullReduction
from ..intervals import INTERVALS
from ..mechanisms import compositions
from ..profiles import privacy_profile
from ..sweeps import monte_carlo_map
from .results import SmoothedResult, assemble_result, dp_pair

__all__ = ["smoothed_monte_carlo"]


def _candidate_compositions(n: int, l: int, k: int) -> np.ndarray:
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
    # delta depends on the histogram only: evaluate each distinct one once
    uniq, inv = np.unique(hist, axis=0, return_inverse=True)
    table = np.asarray(privacy_profile(mech, uniq, epsilon)).reshape(len(uniq), epsilon.size)
    return table[inv.ravel()]


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
    comps = _candidate_compositions(n, l, k)
    seeds = np.random.SeedSequence(as_rng(rng).integers(2**63)).spawn(len(comps))
    alpha = (1.0 - confidence) / len(comps)  # Bonferroni over the candidates
    # every delta(x) lies in [0, bound]: the range of the confidence intervals
    bound = float(np.max(mech.delta_upper_bound(n, e)))
    means = np.empty((len(comps), e.size))
    lows = np.empty_like(means)
    highs = np.empty_like(means)
    bar = optional_progress_bar(len(comps), bool(progress), "candidate compositions")
    ci_fn, ci_name = INTERVALS[interval]
    for i, (c, seed) in enumerate(zip(comps, seeds)):
        d = monte_carlo_map(
            _mc_trials,
            trials,
            seed,
            executor=executor,
            chunk=chunk,
            progress=False,
            budget=None,
            kwargs={"mech": mech, "counts": c, "vertices": V, "epsilon": e},
        )
        means[i], lows[i], highs[i] = ci_fn(d, alpha, bound)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    with np.errstate(divide="ignore"):
        vals = np.log(means)
    notes = []
    try:
        dp = dp_pair(mech, n, e, m)
    except ComputationTooLarge as exc:  # the worst case needs every database: say so, do not guess
        dp = (np.full(e.size, np.nan), np.full(e.size, np.nan))
        notes.append(f"DP delta not computed: {exc}")
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
        interval=f"{ci_name}, Bonferroni over {len(comps)} candidate compositions",
    )
