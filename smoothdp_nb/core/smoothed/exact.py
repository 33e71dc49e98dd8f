"""Exact smoothed delta (Algorithm 1): the profile of every histogram, then the
expectation of every composition of the hull vertices by the engines of
:mod:`.binary` (two categories, at most two vertices) or :mod:`.general`."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.special import logsumexp

from .._progress import optional_progress_bar
from ..budget import Estimate, check_budget
from ..hull import HullReduction
from ..profiles import privacy_profile
from .binary import exact_binary, log_binom_vector
from .cost import estimate_exact_cost
from .general import all_histograms, exact_general
from .results import SmoothedResult, assemble_result, dp_pair

__all__ = ["smoothed_exact"]


def _distinct_columns(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct columns of a, index of each original column among them).

    Bit-identical columns are found by their bytes (np.unique(axis=1) sorts
    whole columns and costs far more than the smoothed delta itself).
    """
    seen: dict[bytes, int] = {}
    col = np.array([seen.setdefault(np.ascontiguousarray(a[:, j]).tobytes(), len(seen)) for j in range(a.shape[1])])
    first = np.unique(col, return_index=True)[1]
    return a[:, first], col


# (histogram, epsilon) pairs per call of privacy_profile: its working arrays are
# several hundred bytes per pair (1.4 GB at once for the authors' 21 epsilon at
# n = 10^5), and chunks of this size are no slower (benchmarks/README.md)
_PROFILE_CHUNK = 65536


def profile_chunk_rows(n_epsilon: int) -> int:
    """Histograms per call of privacy_profile in the exact method."""
    return max(512, _PROFILE_CHUNK // max(1, n_epsilon))


def _profile_table(mech: Any, hists: np.ndarray, e: np.ndarray) -> np.ndarray:
    """log delta of every histogram (rows) at every epsilon (columns), in chunks of rows."""
    rows = profile_chunk_rows(e.size)
    out = np.empty((len(hists), e.size))
    for i in range(0, len(hists), rows):
        out[i : i + rows] = np.reshape(privacy_profile(mech, hists[i : i + rows], e, log=True), (-1, e.size))
    return out


def smoothed_exact(
    mech: Any, n: int, red: HullReduction, e: np.ndarray, progress: bool | None, budget: float
) -> SmoothedResult:
    t0 = time.perf_counter()
    V = red.vertices
    l, m = V.shape
    est = Estimate(*estimate_exact_cost(mech, n, V, e.size, e))
    check_budget(
        est,
        budget,
        f"the exact smoothed delta for n={n}, m={m}, {l} hull vertices and {e.size} epsilon values",
        "use method='monte-carlo' or fewer epsilon values",
        parameter="n",
    )
    show = (est.seconds > 2.0) if progress is None else bool(progress)
    hists = all_histograms(n, m)
    full = _profile_table(mech, hists, e)
    # the worst case over every database of n records: the same enumeration (Theorem 1)
    dp = dp_pair(mech, n, e, m, all_profiles=full)
    # Several epsilon often give bit-identical profiles (e.g. when only outputs
    # impossible under the neighbour count matter): average each distinct one once.
    logdelta, col = _distinct_columns(full)
    if m == 2 and l <= 2:
        p1 = float(V[0, 0])
        if l == 1:
            comps = np.array([[n]])
            lw = log_binom_vector(n, p1)
            vals = logsumexp(lw[:, None] + logdelta, axis=0)[None, :]
        else:
            p2 = float(V[1, 0])
            bar = optional_progress_bar(n + 1, show, "compositions")
            vals = exact_binary(logdelta, p1, p2, bar)
            if bar is not None:
                bar.close()
            r = np.arange(n + 1)
            comps = np.stack([n - r, r], axis=1)
    else:
        bar = optional_progress_bar(math.comb(n + l - 1, l - 1), show, "compositions")
        comps, vals = exact_general(logdelta, n, m, V, bar)
        if bar is not None:
            bar.close()
    vals = vals[:, col]
    return assemble_result(mech, n, red, e, comps, vals, "exact", t0, dp)
