"""Timings of smooth sensitivity and noise samplers (run on demand).

    python benchmarks/bench_sensitivity.py

Prints best-of-5 wall times.  Targets: median smooth sensitivity for
n = 10^6 under 1 s; PolyPlace sampling of 10^7 values at no less than half
the speed of numpy's Generator.laplace.
"""

from __future__ import annotations

import platform
import time

import numpy as np

from smoothdp_nb.core.release.noise import PolyPlace
from smoothdp_nb.core.release.noise.polyplace import (
    _polyplace_standard_rvs,  # the sampler alone, timed without validation
)
from smoothdp_nb.core.release.sensitivity import smooth_sensitivity


def best_of(f, reps: int = 5) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    rng = np.random.default_rng(0)
    for n in (10**5, 10**6):
        x = rng.uniform(0, 100, n)
        for q, kw in (("median", {}), ("trimmed_mean", {"trim": 0.1}), ("mean", {})):
            t = best_of(lambda: smooth_sensitivity(x, q, 0.1, bounds=(0, 100), **kw))
            print(f"smooth_sensitivity {q:13s} n={n:>8d} gamma=0.1: {t * 1e3:8.1f} ms")
    x = rng.lognormal(10, 1, 10**6)
    t = best_of(lambda: smooth_sensitivity(x, "median", 0.01, bounds=(0, 1e6)))
    print(f"smooth_sensitivity median (lognormal, clipped) n=1e6 gamma=0.01: {t * 1e3:8.1f} ms")

    n = 10**7
    g = np.random.default_rng(1)
    t_lap = best_of(lambda: g.laplace(size=n))
    t_pp = best_of(lambda: _polyplace_standard_rvs(10.0, n, g))
    d = PolyPlace(s=1.0, alpha=10.0)
    t_pp_scipy = best_of(lambda: d.rvs(size=n, random_state=g))
    for name, tt in (
        ("numpy Generator.laplace", t_lap),
        ("PolyPlace sampler (core)", t_pp),
        ("PolyPlace frozen .rvs", t_pp_scipy),
    ):
        print(f"{name:26s} 10^7 draws: {tt * 1e3:8.1f} ms  ({n / tt / 1e6:6.1f} M/s, {t_lap / tt:4.2f}x laplace speed)")
    for alpha in (1.5, 3.0, 100.0):
        dd = PolyPlace(s=1.0, alpha=alpha)
        tt = best_of(lambda: dd.rvs(size=n, random_state=g), reps=3)
        print(f"PolyPlace alpha={alpha:<6g} .rvs 10^7: {tt * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
