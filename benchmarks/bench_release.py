"""Timings for issue 12: exact lattice releases (run on demand).

    PYTHONPATH=. /work/venv/bin/python benchmarks/bench_release.py

Targets: one release under 10 ms (median over single calls), 10^4 releases
under 10 s.  Data: the five-record example of the issue and 501 uniform
records on (0, 100); bounds (0, 100), epsilon = 1, default gamma and lattice;
OS entropy (rng=None) unless stated.  Prints the machine and `uptime` load.
"""

from __future__ import annotations

import os
import platform
import statistics
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


def singles(x, family, kw, reps=500, rng=None):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        release(x, "median", 1.0, noise=family, bounds=(0, 100), rng=rng, **kw)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, (np.percentile(ts, 99) * 1e3)


def batch(x, family, kw, n=10_000, rng=None):
    """Wall and CPU seconds for n releases (CPU time is the figure that load does not inflate)."""
    t, c = time.perf_counter(), time.process_time()
    for _ in range(n):
        release(x, "median", 1.0, noise=family, bounds=(0, 100), rng=rng, **kw)
    return f"{time.perf_counter() - t:6.2f} s wall, {time.process_time() - c:6.2f} s CPU"


def main() -> None:
    print(platform.platform(), platform.python_version(), f"{os.cpu_count()} cores")
    print("load average (1, 5, 15 min):", os.getloadavg())
    small = [10.0, 20.0, 30.0, 40.0, 50.0]
    big = np.random.default_rng(0).uniform(0, 100, 501)
    for family, kw in FAMILIES:
        m5, p5 = singles(small, family, kw)
        m501, _ = singles(big, family, kw, reps=200)
        print(f"{family:20s} median {m5:6.3f} ms (p99 {p5:6.3f}) n=5; median {m501:6.3f} ms n=501")
    for family, kw in FAMILIES:
        print(f"{family:20s} 10^4 releases (n=5, OS entropy): {batch(small, family, kw)}")
    print(
        f"{'polyplace':20s} 10^4 releases (n=5, seeded Generator): "
        f"{batch(small, 'polyplace', {}, rng=np.random.default_rng(1))}"
    )
    print("load average after:", os.getloadavg())


if __name__ == "__main__":
    main()
