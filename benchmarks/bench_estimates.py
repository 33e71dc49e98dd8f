"""Benchmark: the up-front estimates (time and memory) against measured wall time and peak memory.

Run on demand (from the repository root):

    python benchmarks/bench_estimates.py

For a table of cases (exact smoothed delta on each engine path, Monte Carlo,
the sampling-average profile of ``continuous_limit_profile``) it prints the
estimate that decides refusals, the measured wall time (best of ``--repeat``)
and the tracemalloc peak, and their ratios.  The per-unit costs in
``smoothdp_nb/core/smoothed/engines/estimate.py`` come from these runs; the unit
tests compare the *counts* of work units, never times.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.hull import reduce_to_vertices
from smoothdp_nb.core.smoothed.engines.estimate import (
    estimate_exact_cost,
    estimate_monte_carlo,
    sampling_average_units,
)

TWO = [[0.4, 0.6], [0.6, 0.4]]


def _measure(fn, repeat: int) -> tuple[float, float, float]:
    """(best wall time, best CPU time with a helper process's, tracemalloc peak)."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        t0, c0, k0 = time.perf_counter(), time.process_time(), os.times()
        fn()
        k1 = os.times()
        helper = (k1.children_user + k1.children_system) - (k0.children_user + k0.children_system)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0 + helper)
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best, best_cpu, peak


def cases():
    sh = sdp.SamplingHistogram(eta=0.5)
    for n, pi, E in [
        (10**4, [[0.4, 0.6]], 1),
        (10**5, [[0.4, 0.6]], 1),
        (10**6, [[0.4, 0.6]], 1),
        (10**4, TWO, 1),
        (3 * 10**4, TWO, 2),
    ]:
        eps = np.linspace(0.02, 0.05, E)  # deltas well above 1e-250: the float path
        V = reduce_to_vertices(pi).vertices
        yield (
            f"exact m=2 l={len(pi)} n={n} E={E}",
            sdp.budget.Estimate(*estimate_exact_cost(sh, n, V, E, eps)),
            lambda n=n, pi=pi, eps=eps: sdp.smoothed_delta(sh, n, pi, eps, budget=1e9, progress=False),
        )
    deep = sdp.SamplingHistogram(eta=0.9)
    for n in (10**5, 3 * 10**5):  # delta down to 1e-354 and 1e-1054: far below the float64 range
        V = np.array([[0.3, 0.7], [0.6, 0.4]])
        yield (
            f"exact m=2 l=2 n={n} E=1 (deep)",
            sdp.budget.Estimate(*estimate_exact_cost(deep, n, V, 1, np.array([1.0]))),
            lambda n=n, V=V: sdp.smoothed_delta(deep, n, V, 1.0, budget=1e9, progress=False),
        )
    t3 = sdp.SamplingHistogram(T=3)
    three = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]
    for n in (40, 80, 120):
        yield (
            f"exact m=3 l=2 n={n} T=3",
            sdp.budget.Estimate(*estimate_exact_cost(t3, n, np.array(three), 1, np.array([1.0]))),
            lambda n=n: sdp.smoothed_delta(t3, n, three, 1.0, budget=1e9, progress=False),
        )
    for n, trials in [(1000, 20000), (10**5, 20000)]:
        est, _ = estimate_monte_carlo(sh, n, np.array(TWO), 1, trials, 8, 10_000)
        yield (
            f"monte carlo n={n} trials={trials} x 8 candidates",
            est,
            lambda n=n, trials=trials: sdp.smoothed_delta(
                sh, n, TWO, 1.0, method="monte-carlo", trials=trials, candidates=8, rng=1, progress=False
            ),
        )
    for b in (8, 10):
        K = 2**b
        p = np.full(K, 1.0 / K)
        occ = float(np.sum(-np.expm1(20 * np.log1p(-p))))
        sec, nbytes = sampling_average_units(K, 4, occ)
        yield (
            f"sampling-average profile n=20 T=4 {b} bits",
            sdp.budget.Estimate(2 * sec, nbytes),
            lambda b=b: sdp.continuous_limit_profile(stats.uniform.cdf, 20, 4, [1.0], bits=[b], databases=2, rng=0),
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    print("| case | estimate (s) | wall (s) | CPU (s) | estimate / CPU | estimate (MiB) | peak (MiB) | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, est, fn in cases():
        t, cpu, peak = _measure(fn, args.repeat)
        print(
            f"| {name} | {est.seconds:.3g} | {t:.3g} | {cpu:.3g} | {est.seconds / cpu:.2f} | "
            f"{est.bytes / 2**20:.3g} | {peak / 2**20:.3g} | {est.bytes / peak:.2f} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
