"""Benchmark: the exact engines alone and beside one CPU-bound competitor, in one run.

Run on demand:  python benchmarks/bench_contention.py [--rounds R] [--no-average]

Cases (benchmarks/README.md): two vertices (0.3, 0.6), eta = 0.9, epsilon = 1,
n = 10^5; the authors' configuration (history Pi, eta = 0.998, 21 epsilon),
n = 10^5; and the sampling-average profile at the authors' setting (N = 225,
T = 15, 8-bit grid, "sum", epsilon = 1, 3, 5; median over 20 databases).  Each
round measures every case alone, then every case again while a competitor
(``python -c "while True: pass"``, one busy thread) runs, so both sides see the
same machine; the ratio of the best times is reported with the load average
before each measurement.  No thread settings are made here: the engines size
their own (``smoothdp_nb.core.runtime.parallel``).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_smoothed import history_config

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime import parallel


def two_vertices() -> None:
    m = sdp.SamplingHistogram(eta=0.9)
    sdp.smoothed_delta(m, 10**5, [[0.3, 0.7], [0.6, 0.4]], 1.0, progress=False, budget=1e9)


def authors() -> None:
    mm, pi, eps = history_config()
    sdp.smoothed_delta(mm, 10**5, pi, eps, progress=False, budget=1e9)


def _average_setup() -> tuple[sdp.SamplingAverage, list[np.ndarray]]:
    laws = [sdp.quantized_gaussian(0.0, 0.12, 8), sdp.quantized_gaussian(0.1, 0.12, 8)]
    mech = sdp.SamplingAverage(T=15, grid=laws[0].values, output="sum")
    rng = np.random.default_rng(2021)
    return mech, [rng.multinomial(225, laws[k % 2].pmf) for k in range(20)]


def average_profile(mech: sdp.SamplingAverage, hists: list[np.ndarray]) -> float:
    """Median wall seconds of one database's exact profile (epsilon = 1, 3, 5)."""
    times = []
    for h in hists:
        t = time.perf_counter()
        sdp.privacy_profile(mech, h, [1.0, 3.0, 5.0])
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure(fn: Callable[[], None]) -> tuple[float, float, float]:
    """(wall s, CPU s of this process -- all its threads --, load average before)."""
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c, load


def main() -> None:
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
    with_average = "--no-average" not in sys.argv
    print(
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {platform.node()}, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}; os.cpu_count() = {os.cpu_count()}, "
        f"available_cpus() = {parallel.available_cpus()}, cgroup quota = {parallel.cgroup_cpu_limit()}"
    )
    cases: list[tuple[str, Callable[[], None]]] = [("two vertices, n = 10^5", two_vertices)]
    cases.append(("authors' configuration, n = 10^5", authors))
    mech, hists = _average_setup()
    sdp.privacy_profile(mech, hists[0], [1.0])  # warm-up (imports, malloc tuning)
    sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 10**4, [[0.3, 0.7], [0.6, 0.4]], 1.0, progress=False)
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for r in range(rounds):
        for mode in ("alone", "competitor"):
            rival = None
            if mode == "competitor":
                rival = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(0.5)
            try:
                for name, fn in cases:
                    res = measure(fn)
                    results.setdefault((name, mode), []).append(res)
                    print(
                        f"  round {r + 1} {mode:<10} {name:<34} wall {res[0]:6.2f} s  CPU {res[1]:6.2f} s  load {res[2]:.2f}",
                        flush=True,
                    )
                if with_average:
                    load = os.getloadavg()[0]
                    med = average_profile(mech, hists)
                    results.setdefault(("sampling-average profile (per database)", mode), []).append(
                        (med, float("nan"), load)
                    )
                    print(
                        f"  round {r + 1} {mode:<10} sampling-average profile: median {med * 1e3:.1f} ms  load {load:.2f}",
                        flush=True,
                    )
            finally:
                if rival is not None:
                    rival.kill()
                    rival.wait()
    print(
        "\n| case | alone: best wall (CPU) | with one competitor: best wall (CPU) | ratio of best walls | load before (range) |"
    )
    print("| --- | --- | --- | --- | --- |")
    names = [n for n, _ in cases] + (["sampling-average profile (per database)"] if with_average else [])
    for name in names:
        a, c = results[(name, "alone")], results[(name, "competitor")]
        ba, bc = min(a), min(c)
        loads = [x[2] for x in a + c]
        unit, scale = ("ms", 1e3) if "profile" in name else ("s", 1.0)

        def fmt(best: tuple[float, float, float]) -> str:
            cpu = "" if np.isnan(best[1]) else f" ({best[1] * scale:.2f} {unit})"
            return f"{best[0] * scale:.2f} {unit}{cpu}"

        print(f"| {name} | {fmt(ba)} | {fmt(bc)} | x{bc[0] / ba[0]:.2f} | {min(loads):.1f}-{max(loads):.1f} |")


if __name__ == "__main__":
    main()
