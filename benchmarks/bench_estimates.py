"""Benchmark: the up-front estimates (time and memory) against measured wall time and peak memory (issue 15).

Run on demand (from the repository root):

    python benchmarks/bench_estimates.py

For a table of cases (exact smoothed delta on each engine path, Monte Carlo,
the sampling-average profile of ``continuous_limit_profile``) it prints the
estimate that decides refusals, the measured wall time (best of ``--repeat``)
and the tracemalloc peak, and their ratios.  The per-unit costs in
``smoothdp_nb/core/smoothed/estimate.py`` come from these runs; the unit
tests compare the *counts* of work units, never times.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats

import smoothdp_nb.core as sdp
from smoothdp_nb.core.smoothed.estimate import (
    estimate_exact,
    estimate_monte_carlo,
    sampling_average_units,
)

TWO = [[0.4, 0.6], [0.6, 0.4]]


def _measure(fn, repeat: int) -> tuple[float, float]:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best, peak


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
        yield (
            f"exact m=2 l={len(pi)} n={n} E={E}",
            estimate_exact(sh, n, 2, len(pi), E),
            lambda n=n, pi=pi, eps=eps: sdp.smoothed_delta(sh, n, pi, eps, budget=1e9),
        )
    t3 = sdp.SamplingHistogram(T=3)
    three = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]
    for n in (40, 80):
        yield (
            f"exact m=3 l=2 n={n} T=3",
            estimate_exact(t3, n, 3, 2, 1),
            lambda n=n: sdp.smoothed_delta(t3, n, three, 1.0, budget=1e9),
        )
    for n, trials in [(1000, 20000), (10**5, 20000)]:
        est, _ = estimate_monte_carlo(sh, n, np.array(TWO), 1, trials, 8, 10_000)
        yield (
            f"monte carlo n={n} trials={trials} x 8 candidates",
            est,
            lambda n=n, trials=trials: sdp.smoothed_delta(
                sh, n, TWO, 1.0, method="monte-carlo", trials=trials, candidates=8, rng=1
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
    print("| case | estimate (s) | measured (s) | ratio | estimate (MiB) | peak (MiB) | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, est, fn in cases():
        t, peak = _measure(fn, args.repeat)
        print(
            f"| {name} | {est.seconds:.3g} | {t:.3g} | {est.seconds / t:.2f} | {est.bytes / 2**20:.3g} | "
            f"{peak / 2**20:.3g} | {est.bytes / peak:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
