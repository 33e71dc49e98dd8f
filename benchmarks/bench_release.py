"""Timings of exact lattice releases (run on demand).

    PYTHONPATH=. /work/venv/bin/python benchmarks/bench_release.py [--quick]

``--quick``: 200 single calls per row and batches of 10^3 (for a loaded machine).

Targets: one release under 10 ms (median over single calls), 10^4 releases
under 10 s.  Data: five records (10, 20, 30, 40, 50) and 501 uniform
records on (0, 100); bounds (0, 100), epsilon = 1, default gamma and lattice;
OS entropy (rng=None) unless stated.  Prints the machine and `uptime` load.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time

import numpy as np

from smoothdp_nb import release

FAMILIES = [
    ("polyplace", {}),
    ("laplace", {"delta": 1e-5}),
    ("student_t", {}),
    ("cauchy", {}),
    ("laplace_log_normal", {}),
]


FINEST = 2.0**-46  # ulp(100): the finest lattice allowed for bounds (0, 100)


def singles(x, family, kw, reps=500, rng=None, lattice=None):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        release(x, "median", 1.0, noise=family, bounds=(0, 100), rng=rng, lattice=lattice, **kw)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, (np.percentile(ts, 99) * 1e3)


def batch(x, family, kw, n=10_000, rng=None):
    """Wall and CPU seconds for n releases (CPU time is the figure that load does not inflate)."""
    t, c = time.perf_counter(), time.process_time()
    for _ in range(n):
        release(x, "median", 1.0, noise=family, bounds=(0, 100), rng=rng, **kw)
    return f"{time.perf_counter() - t:6.2f} s wall, {time.process_time() - c:6.2f} s CPU"


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    reps, n_batch = (200, 1_000) if quick else (500, 10_000)
    print(platform.platform(), platform.python_version(), f"{os.cpu_count()} cores")
    print("load average (1, 5, 15 min):", os.getloadavg())
    small = [10.0, 20.0, 30.0, 40.0, 50.0]
    big = np.random.default_rng(0).uniform(0, 100, 501)
    for family, kw in FAMILIES:
        m5, p5 = singles(small, family, kw, reps=reps)
        m501, _ = singles(big, family, kw, reps=200)
        mf, pf = singles(small, family, kw, reps=reps, lattice=FINEST)
        print(
            f"{family:20s} median {m5:6.3f} ms (p99 {p5:6.3f}) n=5; median {m501:6.3f} ms n=501; "
            f"finest lattice 2^-46: median {mf:6.3f} ms (p99 {pf:6.3f}) n=5"
        )
    for family, kw in FAMILIES:
        print(f"{family:20s} {n_batch} releases (n=5, OS entropy): {batch(small, family, kw, n=n_batch)}")
    print(
        f"{'polyplace':20s} {n_batch} releases (n=5, seeded Generator): "
        f"{batch(small, 'polyplace', {}, n=n_batch, rng=np.random.default_rng(1))}"
    )
    print("load average after:", os.getloadavg())


if __name__ == "__main__":
    main()
