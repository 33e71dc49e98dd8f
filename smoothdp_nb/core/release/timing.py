"""Deadlines from public inputs: the wall time of a release carries nothing about the data.

The problem
-----------
The work of a release is a function of its output (:mod:`.lattice`: the
boundaries compared are those of the bisection path of the released cell),
but the *duration* of each Arb evaluation depends on its argument, and the
argument ``a_j = (boundary - true) / s`` depends on the data.  The effect is
not small: Arb's incomplete beta for Student's t with ``d = 1000`` at 224
bits takes about 0.3 ms for ``a <= 12.03`` and 16-35 ms for ``12.04 <= a <=
18.9`` (an internal change of algorithm), so two neighbouring databases whose
first boundary falls on either side of 12.03 are told apart by a stopwatch
with certainty.  The smooth sensitivity before the sampler has a similar,
smaller channel (its sort and search do data-dependent amounts of work).

The defence: pad every phase to a public deadline
-------------------------------------------------
Each phase of a release starts a clock and, when its work is done, sleeps
until a deadline that is a function of public inputs only:

* **Sampling, per round** ``r`` (the precision of round ``r`` is fixed in
  advance): ``deadline = MARGIN * (depth * T_tail + D * T_normal) + FLOOR``
  where ``depth = ceil(log2(k_hi - k_lo + 1))`` bounds the number of
  comparisons of the bisection over the public index range, ``D`` is the
  fixed depth of Laplace-log-normal's normal quantile (0 for the other
  families), and ``T_tail`` / ``T_normal`` are the largest times of one
  evaluation measured on this machine over a fixed, public grid of arguments
  (:func:`tail_cost`, :func:`normal_cost`).  The grid covers ``|a|`` from
  ``2^-24`` to ``2^64`` at eight points per octave and is measured once per
  process for each (family, shape, precision); nothing in it depends on the
  data.
* **Smooth sensitivity and the query value**: ``deadline = SENSITIVITY_MARGIN * T + FLOOR``
  where ``T`` is the time the same computation takes on a public synthetic
  database with the same ``n``, query, trim, bounds and smoothness (a fixed
  pseudo-random permutation of an even grid over the bounds, so that the sort
  does its full work), measured once per process (:func:`sensitivity_cost`).

If a phase overruns its deadline (a load spike, or an argument slower than
``MARGIN`` times every grid point), the release does not return early nor at
a data-dependent time: it keeps waiting to the next public step ``deadline *
2^j``.  The only thing a stopwatch can then learn is the step, and an
overrun is counted (:func:`deadline_misses`) so that benchmarks and tests see
it.  The deadline is an upper bound of the cost with margin, not a guess:
:data:`MARGIN` = 3 over the slowest measured point, plus :data:`FLOOR` for the
Python overhead around the evaluations.

The cost of the defence is that every release takes its worst-case time for
its public parameters: for the default shapes, a few milliseconds; for
Student's t with ``d = 1000`` about ``depth * 0.1`` s (padding sleeps, it
does not spin, so it costs wall time and not CPU).

References
----------
Kocher, "Timing attacks on implementations of Diffie-Hellman, RSA, DSS, and
other systems", CRYPTO 1996 (the threat).  Haeberlen, Pierce and Narayan,
"Differential privacy under fire", USENIX Security 2011 (padding queries to a
fixed, public deadline as the defence for differentially private systems).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable

import numpy as np
from flint import arb

from smoothdp_nb.core.numerics.ball_arithmetic import ARB_LOCK, working_precision
from smoothdp_nb.core.release.noise.registry import get_family
from smoothdp_nb.core.release.sensitivity import clipping_silenced, evaluate_query, smooth_sensitivity

__all__ = [
    "FLOOR",
    "MARGIN",
    "SENSITIVITY_MARGIN",
    "deadline_misses",
    "normal_cost",
    "sensitivity_cost",
    "tail_cost",
    "wait_until",
]

#: the deadline is this many times the slowest measured evaluation
MARGIN = 3.0
#: plus this many seconds for the Python around the evaluations (boundaries, comparisons, calls)
FLOOR = 2e-3
#: the smooth-sensitivity phase's deadline is this many times its cost on the synthetic database
#: (its work is the same numpy passes over arrays of the same sizes for every database of n records)
SENSITIVITY_MARGIN = 2.0

_MISSES = [0]

#: public grid of |a|: 2^-24 .. 2^64, eight points per octave (and the branch point 1 itself)
_TAIL_GRID = tuple(math.ldexp(2.0 ** (i / 8), e) for e in range(-24, 64) for i in range(8))
#: public grid of the normal quantile's y: [-16, 16] in steps of 1/16 (scaled by 2^r in round r)
_NORMAL_GRID = tuple(j / 16 for j in range(-256, 257))


def deadline_misses() -> int:
    """Number of phases that overran their deadline in this process (each then waited to ``2^j`` times it)."""
    return _MISSES[0]


def wait_until(start: float, deadline: float) -> None:
    """Sleep until ``start + deadline`` (``time.perf_counter`` seconds), or the next ``start + deadline * 2^j``.

    Never returns before ``start + deadline``; if that time has passed, the
    phase overran and waits to the first public step ``deadline * 2^j`` still
    ahead (counted by :func:`deadline_misses`).
    """
    now = time.perf_counter()
    target = start + deadline
    if now > target:
        _MISSES[0] += 1
        step = deadline
        while start + step < now:
            step *= 2.0
        target = start + step
    while True:
        left = target - time.perf_counter()
        if left <= 0:
            return
        time.sleep(left)


def _slowest(fn: Callable[[float], object], grid: tuple[float, ...]) -> float:
    """Largest over the grid of the faster of two timed calls (one spike of the machine is not a cost)."""
    fn(grid[0])  # warm-up: Arb caches constants at a new precision on first use
    worst = 0.0
    for point in grid:
        best = math.inf
        for _ in range(2):
            t0 = time.perf_counter()
            fn(point)
            best = min(best, time.perf_counter() - t0)
        worst = max(worst, best)
    return worst


@functools.lru_cache(maxsize=256)
def tail_cost(family: str, shape: float, prec: int) -> float:
    """Slowest time (s) of one cdf enclosure of ``family`` at ``prec`` bits over the public grid of arguments.

    Both branches of the tail are measured: the cdf at a positive argument is
    ``1 - T(a)``, at a negative one ``T(-a)``; ``a`` enters as the quotient
    of two balls, as in the sampler.
    """
    tail = get_family(family).tail_enclosure
    scale = arb(3.0)

    def one(a: float) -> object:
        ball = arb(a * 3.0) / scale
        return 1 - tail(ball, shape)

    with ARB_LOCK, working_precision(prec):
        return _slowest(one, _TAIL_GRID)


@functools.lru_cache(maxsize=64)
def normal_cost(prec: int, r: int) -> float:
    """Slowest time (s) of one normal-cdf enclosure at ``prec`` bits on the public grid of round ``r``."""
    with ARB_LOCK, working_precision(prec):
        inv_sqrt2 = arb(2).rsqrt()

        def one(y: float) -> object:
            return (-arb(math.ldexp(y, r)) * inv_sqrt2).erfc() / 2

        return _slowest(one, _NORMAL_GRID)


@functools.lru_cache(maxsize=64)
def sensitivity_cost(query: str, n: int, trim: object, low: float, high: float, gamma: float) -> float:
    """Time (s) of the smooth sensitivity and query value on a public synthetic database of ``n`` records.

    The database is an even grid over the bounds in a fixed pseudo-random
    order (a function of ``n`` only), so that the sort does its full work;
    the best of two runs is returned (the deadline's margin absorbs the
    spread between databases).
    """
    grid = np.linspace(low, high, n) if n > 1 else np.array([low])
    synthetic = np.random.default_rng(n).permutation(grid)
    best = math.inf
    for _ in range(2):
        t0 = time.perf_counter()
        with clipping_silenced():
            smooth_sensitivity(synthetic, query, gamma, bounds=(low, high), trim=trim)  # type: ignore[arg-type]
            evaluate_query(synthetic, query, bounds=(low, high), trim=trim)  # type: ignore[arg-type]
        best = min(best, time.perf_counter() - t0)
    return best
