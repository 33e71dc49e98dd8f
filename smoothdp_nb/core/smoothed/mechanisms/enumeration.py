"""The enumeration behind the generic path of the mechanism protocol: every
histogram of n records on m categories (stars and bars), and the price of the
generic divergence kernel on the running machine."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from smoothdp_nb.core.numerics.array_types import IntArray
from smoothdp_nb.core.numerics.divergence import log_hockey_stick_enclosure

__all__ = ["PAIR_CHUNK_CELLS", "cell_seconds", "compositions", "count_histograms"]

# cells (pairs x outputs x epsilon) per chunk of the generic divergence kernel (2^20 is as fast
# as 2^22, and its ~15 temporaries take 130 MB instead of 500)
PAIR_CHUNK_CELLS = 2**20
# pairs of the block the kernel is timed on, to price one (pair, outputs, epsilon) cell
_TIMED_PAIRS = 64


def cell_seconds(K: int, n_epsilon: int) -> float:
    """Seconds of the generic kernel per (row, neighbour) pair with K outputs
    and E epsilon (both directions), timed on the running machine on a block
    of that shape (the kernel is vectorised: its cost per cell is flat), the median of three runs."""
    E = max(1, n_epsilon)
    K_timed = max(1, min(K, PAIR_CHUNK_CELLS // (_TIMED_PAIRS * E)))
    gen = np.random.default_rng(1)
    a = np.log(gen.dirichlet(np.ones(K_timed), size=_TIMED_PAIRS))
    b = np.log(gen.dirichlet(np.ones(K_timed), size=_TIMED_PAIRS))
    eps = np.linspace(0.1, 1.0, E)
    z = np.zeros_like(a)
    times = []
    for _ in range(3):  # the median of three: one run may lose its time slice on a shared CPU
        t0 = time.perf_counter()
        log_hockey_stick_enclosure(a, b, eps, z, z).maximum(log_hockey_stick_enclosure(b, a, eps, z, z))
        times.append(time.perf_counter() - t0)
    return sorted(times)[1] / _TIMED_PAIRS * (K / K_timed)


def compositions(total: int, parts: int) -> IntArray:
    """All vectors of ``parts`` non-negative ints summing to ``total`` (stars and bars),
    shape ``(C(total + parts - 1, parts - 1), parts)``: every histogram of ``total``
    records on ``parts`` categories, and every composition of Algorithm 1.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 1.
    """
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    if parts == 2:
        k = np.arange(total + 1, dtype=np.int64)
        return np.stack([k, total - k], axis=1)
    if parts == 3:  # the same order as the bars below (first count, then second, ascending), without tuples
        first = np.repeat(np.arange(total + 1, dtype=np.int64), np.arange(total + 1, 0, -1))
        starts = np.concatenate([[0], np.cumsum(np.arange(total + 1, 1, -1))])
        second = np.arange(first.size, dtype=np.int64) - starts[first]
        return np.stack([first, second, total - first - second], axis=1)
    bars = np.array(list(itertools.combinations(range(total + parts - 1), parts - 1)), dtype=np.int64)
    padded = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), total + parts - 1)], axis=1)
    return np.diff(padded, axis=1) - 1


def count_histograms(n: int, m: int) -> int:
    """Number of histograms of n records on m categories, ``C(n + m - 1, m - 1)``."""
    return math.comb(n + m - 1, m - 1)
