"""Benchmark: composition and accounting.

Run on demand:  python benchmarks/bench_composition.py

1. The 2020 election (n = 1.55e8), 50 runs of the sampling histogram at
   eta = 0.998, privacy profile at epsilon = 5 in log space (target: < 10 s):
   the single-run privacy loss is built from the hypergeometric count law
   (3.1e5 support points per direction), the 50-fold composition on the
   tilted pessimistic grid (the lower bound beside it is printed too).
2. 1000 runs of binary randomized response (exact composition, target < 1 s).
3. profile_epsilon of the single election at delta = 1e-40 (bisection).
"""

from __future__ import annotations

import os
import time

import numpy as np

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms.composed import pair_loss


def best_of(fn, reps=3):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def rr():
    def law(h):
        return {0: 0.75, 1: 0.25} if h[0] == 1 else {0: 0.25, 1: 0.75}

    return sdp.FiniteMechanism(law, categories=2, name="rr")


def main() -> None:
    print("load average before:", os.getloadavg())
    h = sdp.datasets.election_histogram(2020)
    shm = sdp.SamplingHistogram(eta=0.998)
    mech = sdp.repeat(shm, 50)
    t, val = best_of(lambda: sdp.privacy_profile(mech, h, 5.0, log=True), reps=2)
    print(f"repeat(SHM(0.998), 50), 2020 election, eps = 5: {t:.2f} s, log delta <= {val:.2f}")
    x2 = h - np.array([1, -1])
    f, _ = pair_loss(mech, h, x2)
    up, lo = f.log_delta(np.array([5.0])), f.log_delta(np.array([5.0]), upper=False)
    print(f"  one direction: log delta in [{lo[0]:.2f}, {up[0]:.2f}] (gap {up[0] - lo[0]:.2f})")
    t, val = best_of(lambda: sdp.privacy_profile(sdp.repeat(rr(), 1000), [1, 0], [550.0, 600.0], log=True))
    print(f"repeat(randomized response, 1000), 2 epsilon: {t * 1e3:.0f} ms, log delta = {val}")
    t, val = best_of(lambda: sdp.profile_epsilon(shm, h, 1e-40))
    print(f"profile_epsilon(SHM(0.998), 2020, 1e-40): {t * 1e3:.0f} ms, epsilon = {val:.9f}")
    print("load average after:", os.getloadavg())


if __name__ == "__main__":
    main()
