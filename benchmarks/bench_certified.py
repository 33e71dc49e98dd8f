"""Certified (proven upper bounds) against float answers: the benchmark rows of
benchmarks/README.md, timed in one process per code version.

Run ``python benchmarks/bench_certified.py`` with the package on the path; to
compare two versions, run it alternately with each on PYTHONPATH (the machine
is shared, so the two are interleaved and the load average is printed).
Prints the best of ``--reps`` CPU times per row.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import smoothdp_nb as sdp


def best_cpu(fn, reps: int) -> float:
    out = math.inf
    for _ in range(reps):
        c = time.process_time()
        fn()
        out = min(out, time.process_time() - c)
    return out


def rows() -> dict[str, object]:
    m = sdp.SamplingHistogram(eta=0.998)
    el = sdp.datasets.us_presidential_elections()
    H = np.array([sdp.datasets.election_histogram(int(y)) for y in el["year"]])
    fig1 = [math.log(0.51 / 0.49), 0.5, 1.0]
    n = 10**5
    rng = np.random.default_rng(0)
    k = rng.integers(0, n + 1, 10**4)
    batch = np.stack([k, n - k], axis=1)
    two = [[0.3, 0.7], [0.6, 0.4]]
    m9 = sdp.SamplingHistogram(eta=0.9)
    pi = np.stack([el.winner_share, 1 - el.winner_share], axis=1)
    eps21 = [0.1] + [0.5 * j for j in range(1, 21)]
    districts = sdp.datasets.us_2020_district_shares()
    g0 = sdp.quantized_gaussian(0.0, 0.12)
    avg = sdp.SamplingAverage(T=15, grid=g0.values)
    h225 = np.random.default_rng(2026).multinomial(225, g0.pmf)
    return {
        "Figure 1 profiles (26 elections x 3 eps)": lambda: sdp.privacy_profile(m, H, fig1),
        "10^4 binary histograms, n = 10^5, eps = 1": lambda: sdp.privacy_profile(m, batch, 1.0),
        "two vertices, n = 10^4": lambda: sdp.smoothed_delta(m9, 10**4, two, 1.0, progress=False),
        "two vertices, n = 3 x 10^4": lambda: sdp.smoothed_delta(m9, 3 * 10**4, two, 1.0, progress=False),
        "authors' configuration, n = 10^4": lambda: sdp.smoothed_delta(m, 10**4, pi, eps21, progress=False),
        "districts, n = 10^4, eps = 0.5": lambda: sdp.smoothed_delta(m, 10**4, districts, 0.5, progress=False),
        "sampling average, N = 225, T = 15": lambda: sdp.privacy_profile(avg, h225, [1.0, 3.0, 5.0]),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    for name, fn in rows().items():
        fn()  # warm-up (imports, caches)
        t = best_cpu(fn, args.reps)
        print(f"{args.label}\t{name}\t{t:.4f}\tload {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
