"""The next order of magnitude (n up to 10^6 and beyond): one case per process.

Run with the package on the path, one case at a time (the machine is shared;
the load average is printed beside every figure)::

    python benchmarks/bench_next_order.py two 1000000
    python benchmarks/bench_next_order.py authors 100000
    python benchmarks/bench_next_order.py finite 200
    python benchmarks/bench_next_order.py finite-distinct 200

``two``: two vertices (0.3, 0.6), eta = 0.9, epsilon = 1. ``authors``: the
history Pi, eta = 0.998, 21 epsilon. ``finite``: a ``FiniteMechanism`` on
m = 3 categories (randomized response on "is the record of category 0",
kept with probability 3/4, publishing the count: n + 1 outputs), two hull
vertices, 2 epsilon; ``finite-distinct``: the same with category 0 reported
with probability 3/4, 1/2, 1/4 by the three categories (no two histograms
share a law: the generic path's worst case). Prints wall and CPU time (main process plus the helper
process), the peak resident memory of the main process and of the largest
child, and the cost model's estimate before any work.
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np
from scipy.stats import binom

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.hull import reduce_to_vertices
from smoothdp_nb.core.smoothed.engines.estimate import estimate_exact_cost


def rr_count(h: tuple[int, ...]) -> dict[int, float]:
    """Each record says "category 0" with probability 3/4 if it is, 1/4 if not; the count is published."""
    h0, rest = h[0], sum(h[1:])
    law = np.convolve(binom.pmf(np.arange(h0 + 1), h0, 0.75), binom.pmf(np.arange(rest + 1), rest, 0.25))
    return dict(enumerate(law.tolist()))


def rr_count3(h: tuple[int, ...]) -> dict[int, float]:
    """As :func:`rr_count` with "category 0" reported with probability 3/4, 1/2, 1/4 by the
    three categories: the law reads every count, so no two histograms share a law."""
    law = np.ones(1)
    for c, p in zip(h, (0.75, 0.5, 0.25)):
        law = np.convolve(law, binom.pmf(np.arange(c + 1), c, p))
    return dict(enumerate(law.tolist()))


def case(name: str, n: int) -> tuple[object, object, np.ndarray]:
    if name == "two":
        return sdp.SamplingHistogram(eta=0.9), np.array([[0.3, 0.7], [0.6, 0.4]]), np.array([1.0])
    if name == "authors":
        el = sdp.datasets.us_presidential_elections()
        pi = np.stack([el.winner_share, 1 - el.winner_share], axis=1)
        eps = np.array([0.1] + [0.5 * j for j in range(1, 21)])
        return sdp.SamplingHistogram(eta=0.998), pi, eps
    if name == "finite":
        mech = sdp.FiniteMechanism(rr_count, categories=3, name="rr_count")
        return mech, np.array([[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]]), np.array([0.5, 1.0])
    if name == "finite-distinct":
        mech = sdp.FiniteMechanism(rr_count3, categories=3, name="rr_count3")
        return mech, np.array([[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]]), np.array([0.5, 1.0])
    raise SystemExit(f"unknown case {name!r} (two, authors, finite, finite-distinct)")


def main() -> None:
    name, n = sys.argv[1], int(float(sys.argv[2]))
    mech, pi, eps = case(name, n)
    V = reduce_to_vertices(pi).vertices
    est = estimate_exact_cost(mech, n, V, eps.size, eps)[0]
    load0 = os.getloadavg()[0]
    w, c, k = time.time(), time.process_time(), os.times()
    r = sdp.smoothed_delta(mech, n, pi, eps, progress=False, budget=1e9)
    wall, main_cpu = time.time() - w, time.process_time() - c
    k2 = os.times()
    child = (k2.children_user + k2.children_system) - (k.children_user + k.children_system)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{name} n = {n}: wall {wall:.2f} s, CPU {main_cpu:.2f} + {child:.2f} s (helper), "
        f"model {est:.2f} s (measured/model {wall / est:.2f}); peak RSS {rss:.0f} MiB (child {rss_child:.0f} MiB); "
        f"load {load0:.1f} -> {os.getloadavg()[0]:.1f}; max log10 delta {np.max(r.log_delta) / np.log(10):.4f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
