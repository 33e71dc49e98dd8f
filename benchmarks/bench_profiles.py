"""Benchmark: privacy profiles against their targets.

Run on demand:  python benchmarks/bench_profiles.py
Targets (2-core machine): one election < 20 ms; all 26 elections < 0.5 s;
a batch of 10^5 binary histograms at n = 10^5 < 5 s.
"""

from __future__ import annotations

import math
import time

import numpy as np

import smoothdp_nb as sdp


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    df = sdp.datasets.us_presidential_elections()
    hist = df[["winner_votes", "runner_up_votes"]].to_numpy()
    m = sdp.SamplingHistogram(eta=0.998)
    epsilon = math.log(0.51 / 0.49)
    sdp.privacy_profile(m, hist[:1], epsilon)  # warm-up
    one = best_of(lambda: sdp.privacy_profile(m, hist[-1], epsilon, log=True))
    all26 = best_of(lambda: sdp.privacy_profile(m, hist, epsilon, log=True))
    rng = np.random.default_rng(0)
    n = 10**5
    a = rng.integers(0, n + 1, size=10**5)
    batch = np.stack([a, n - a], axis=1)
    tb = best_of(lambda: sdp.privacy_profile(m, batch, 1.0, log=True), repeat=2)
    print(f"one election (2020):              {one * 1e3:8.2f} ms   (target < 20 ms)")
    print(f"all 26 elections:                 {all26 * 1e3:8.2f} ms   (target < 500 ms)")
    print(f"10^5 binary histograms, n = 10^5: {tb:8.2f} s    (target < 5 s)")


if __name__ == "__main__":
    main()
