"""Wall time of one release per data-dependent method, and of the exact laws, against n and the lattice.

Run from the repository root: ``.venv/bin/python benchmarks/bench_release_methods.py [--quick]``.
Prints one Markdown table row per case (median of 5 releases; the first release of a size is
excluded: it measures the public deadlines once per process).  Figures: benchmarks/TOOLBOX.md.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

import smoothdp_nb as sdp

QUICK = "--quick" in sys.argv
SIZES = [56, 1_000] if QUICK else [56, 1_000, 10_000, 100_000]
METHODS = ["smooth-sensitivity", "exponential", "inverse-sensitivity", "propose-test-release", "stability"]


def timed(fn, repeat=5):
    fn()  # warm-up: the public deadlines are measured once per process and size
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| n | lattice | method | release (s) |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(1)
    for n in SIZES:
        x = rng.uniform(0.3, 0.7, n)
        for lattice in (None, 2.0**-52):
            for method in METHODS:
                kw = {"delta": 1e-6} if method in ("propose-test-release", "stability") else {}
                t = timed(
                    lambda: sdp.release(x, "median", 1.0, bounds=(0.0, 1.0), lattice=lattice, method=method, **kw)
                )
                print(f"| {n} | {'default' if lattice is None else '2^-52'} | {method} | {t:.4f} |", flush=True)
    print()
    print("| n | cells | compare_releases, 5 methods (s) |")
    print("|---|---|---|")
    for n in SIZES[:3]:
        x = rng.uniform(0.3, 0.7, n)
        for lattice in (2.0**-10, 2.0**-16):
            t = timed(lambda: sdp.compare_releases(x, "median", 1.0, bounds=(0.0, 1.0), lattice=lattice, delta=1e-6), 2)
            print(f"| {n} | {int(1 / lattice) + 1} | {t:.3f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
