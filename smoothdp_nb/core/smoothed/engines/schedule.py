"""The data-dependent plan and the block schedule of the two-vertex engine.

:func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary` takes compositions K at a
time; this module chooses K (:func:`block_steps`, :func:`binary_plan`), the
Hoeffding level of its binomial windows (:func:`window_log_bound`,
:func:`truncation_level`) and walks its blocks (:func:`block_schedule`).  The
cost model (:mod:`smoothdp_nb.core.smoothed.engines.cost`) walks the same schedule.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

__all__ = [
    "ADVANCE_RANGE",
    "BLOCK_STEPS",
    "BinaryPlan",
    "binary_plan",
    "block_at",
    "block_schedule",
    "block_steps",
    "log_slope",
    "truncation_level",
    "window_log_bound",
]

#: compositions per block of the float64 path (see exact_binary)
BLOCK_STEPS = 128
#: the range (natural log) of an advance's operands below their pair's scale: >= e^-500, so
#: that times kernel weights >= 2^-250 = e^-173 every product stays a normal float64
#: (see :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary`)
ADVANCE_RANGE = 500.0


def _steps_per_block(p1: float, p2: float, block: int) -> int:
    """Compositions per block: at most ``block``, and few enough that every
    nonzero binomial weight of up to K records is >= 2^-250 (see exact_binary)."""
    K = block
    for p in (p1, p2):
        q = min(p, 1.0 - p)
        if q > 0.0:
            K = min(K, max(1, int(250.0 / -math.log2(q))))
    return K


def window_log_bound(logdelta: np.ndarray) -> float:
    """Hoeffding level for the binomial windows so that the weights left out
    carry at most 2^-60 of every expectation (see exact_binary)."""
    fin = logdelta[np.isfinite(logdelta)]
    if fin.size < logdelta.size:  # some delta(x) = 0: no lower bound on E, take every x
        return math.inf
    return math.log(2.0) + 60 * math.log(2.0) + float(fin.max() - fin.min())


def truncation_level(log_bound: float, n: int, K: int) -> float:
    """Hoeffding level of every window of :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary` with K
    compositions per block: the union of the at most ``blocks + 1`` events
    it leaves out stays below ``2 exp(-log_bound)`` (``log_bound`` from
    :func:`window_log_bound`)."""
    return log_bound + math.log(n // K + 2.0)


class BinaryPlan(NamedTuple):
    """The data-dependent choices of :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary`."""

    K: int  #: compositions per block
    level: float  #: Hoeffding level of every window (:func:`truncation_level`)
    slope: float  #: largest slope of log delta (:func:`log_slope`)


def binary_plan(logdelta: np.ndarray, p1: float, p2: float, block: int = BLOCK_STEPS) -> BinaryPlan:
    """K, the window level and the slope of :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary` for these columns of log delta."""
    slope = log_slope(logdelta)
    K = block_steps(p1, p2, block, slope)
    return BinaryPlan(K, truncation_level(window_log_bound(logdelta), logdelta.shape[0] - 1, K), slope)


def block_steps(p1: float, p2: float, block: int, slope: float) -> int:
    """K of :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary`: :func:`_steps_per_block`, and small enough
    that a chunk pair spans less than e^-480 at the largest slope of log delta."""
    K = _steps_per_block(p1, p2, block)
    if slope > 0:
        K = max(1, min(K, int(0.5 * (ADVANCE_RANGE - 20.0) / slope) - 1))
    return K


def log_slope(logdelta: np.ndarray) -> float:
    """Largest |log delta(x + 1) - log delta(x)| between nonzero neighbours: a
    bound on the slope of every log H_r too (each H_r(x + 1) / H_r(x) is a
    weighted mean of ratios delta(y + 1) / delta(y))."""
    with np.errstate(invalid="ignore"):  # -inf - -inf: two zeros, no slope
        d = np.diff(logdelta, axis=0)
    fin = np.isfinite(d)
    return float(np.abs(d[fin]).max()) if np.any(fin) else 0.0


def _hoeffding_radius(s: int, level: float) -> float:
    """t with 2 exp(-2 t^2 / s) <= 2 exp(-level): a sum of s independent
    Bernoulli variables is further than t from its mean with at most that probability."""
    return math.sqrt(0.5 * s * level) + 1.0


def block_at(
    n: int, K: int, p1: float, p2: float, level: float, r0: int, stop: int | None = None
) -> tuple[int, int, int, int, int]:
    """(k, a, b, lo, hi) of the block starting at composition r0, before the
    clamp to the previous block's live chunks (see :func:`block_schedule`).

    ``stop`` (default n): the last composition computed.  H_{r0+K} then only
    serves compositions r' in [r0 + K, stop], which read it at
    ``X1 + Y`` with ``X1 ~ Bin(n - r', p1)`` and ``Y ~ Bin(r' - r0 - K, p2)``:
    a sum of ``n - r0 - K`` Bernoulli variables whose mean lies between
    ``(n - r0 - K) p1`` and ``(n - r0 - K) p1 + (stop - r0 - K)(p2 - p1)``,
    so the window is that range widened by the Hoeffding radius (for
    ``stop = n`` the range is the one between ``(n - r0 - K) min(p1, p2)``
    and ``(n - r0 - K) max(p1, p2)``).
    """
    last = n if stop is None else stop
    Q = K + 1
    r1 = min(r0 + K, last + 1) - 1
    k = r1 - r0 + 1
    s = n - r1
    if math.isinf(level):
        a, b = 0, s
    else:
        t = _hoeffding_radius(s, level)
        a, b = max(0, math.floor(s * p1 - t)), min(s, math.ceil(s * p1 + t))
    if r1 >= last:
        return k, a, b, 0, -1
    sr = n - r0 - K  # H_{r0+K} is defined on x = 0 .. sr
    top = sr // Q
    if math.isinf(level):
        return k, a, b, 0, top
    t = _hoeffding_radius(sr, level)
    if stop is None or stop >= n:
        m0, m1 = sr * min(p1, p2), sr * max(p1, p2)
    else:
        ends = (sr * p1, sr * p1 + (stop - r0 - K) * (p2 - p1))
        m0, m1 = min(ends), max(ends)
    return k, a, b, max(0, math.floor(m0 - t) // Q), min(top, math.ceil(m1 + t) // Q)


def block_schedule(
    n: int, K: int, p1: float, p2: float, level: float, stop: int | None = None
) -> Iterator[tuple[int, int, int, int, int, int]]:
    """The blocks of :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary`, as (r0, k, a, b, lo, hi) per block.

    Compositions r0 .. r0 + k - 1; the binomial window x = a .. b of the
    block's base Bin(n - r0 - k + 1, p1); and the chunks lo .. hi (of
    ``Q = K + 1`` values) of H_{r0 + K} that the advance computes (hi < lo:
    none, the last block).  ``level`` is the Hoeffding level of every window
    (math.inf: no truncation).  ``stop`` (default n): only compositions
    0 .. stop, and H's windows sized for them (:func:`block_at`).  The cost
    model walks the same schedule.
    """
    lo, hi = 0, n // (K + 1)  # chunks that may hold a nonzero H_r
    last = n if stop is None else stop
    for r0 in range(0, last + 1, K):
        k, a, b, lo_new, hi_new = block_at(n, K, p1, p2, level, r0, stop)
        if hi_new < lo_new:  # the last block: no advance
            lo, hi = 0, -1
        else:
            # K < Q steps move the support down by less than one chunk
            lo, hi = max(lo_new, lo - 1), min(hi_new, hi)
        yield r0, k, a, b, lo, hi
