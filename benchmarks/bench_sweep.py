"""Benchmark: a 10^6-trial Monte Carlo on 1 vs 2 local workers.

Run on demand (from the repository root):

    python benchmarks/bench_sweep.py                  # process pools and, if installed, Dask
    python benchmarks/bench_sweep.py --no-dask        # process pools only
    python benchmarks/bench_sweep.py --trials 2000000 --chunk 50000 --repeat 5

Each trial draws ``--draws`` exponential variables and reduces them (log-sum-exp and a
max), so every chunk does real numpy work. The run is split into fixed chunks by
``monte_carlo_map``; the script checks that every executor returns bit-identical results
and prints the wall time (best of ``--repeat``, pools already started) and the speed-up
of 2 workers over 1. Pool start-up time is reported separately.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

try:
    from smoothdp_nb.core.runtime.sweeps import monte_carlo_map
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from smoothdp_nb.core.runtime.sweeps import monte_carlo_map


def toy_trials(size: int, rng: np.random.Generator, draws: int = 200) -> np.ndarray:
    """``size`` toy trials: log-sum-exp minus max of ``draws`` exponential variables each.

    Works through the chunk in blocks of 2048 trials so that the arrays stay in cache
    (the benchmark measures compute, not memory allocation).
    """
    out = np.empty(size)
    for start in range(0, size, 2048):
        stop = min(start + 2048, size)
        x = rng.exponential(size=(stop - start, draws))
        top = x.max(axis=1)
        x -= top[:, None]
        np.exp(x, out=x)
        out[start:stop] = np.log(x.sum(axis=1))
    return out


def best_of(fn: Callable[[], np.ndarray], repeat: int) -> tuple[float, np.ndarray]:
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10**6)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster runs")
    args = parser.parse_args()
    kwargs = {"draws": args.draws}

    def run(executor: cf.Executor | None) -> np.ndarray:
        return monte_carlo_map(
            toy_trials,
            args.trials,
            args.seed,
            executor,
            chunk=args.chunk,
            kwargs=kwargs,
            progress=False,
        )

    print(
        f"Monte Carlo: {args.trials:,} trials x {args.draws} draws, chunk {args.chunk:,} "
        f"({-(-args.trials // args.chunk)} tasks); os.cpu_count() = {os.cpu_count()}"
    )
    if hasattr(os, "getloadavg"):
        # other processes competing for the cores distort the speed-up: check this first
        print("load average before the run (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    rows: list[tuple[str, int, float, float]] = []
    t_ref, reference = best_of(lambda: run(None), args.repeat)
    rows.append(("in-process (executor=None)", 1, 0.0, t_ref))

    for workers in (1, 2):
        t0 = time.perf_counter()
        with cf.ProcessPoolExecutor(max_workers=workers) as pool:
            list(pool.map(abs, range(workers)))  # start the workers
            startup = time.perf_counter() - t0
            elapsed, out = best_of(lambda: run(pool), args.repeat)
        np.testing.assert_array_equal(out, reference)
        rows.append(("ProcessPoolExecutor", workers, startup, elapsed))

    if not args.no_dask:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            print("dask.distributed not installed: skipping (pip install 'smoothdp_nb[dask]')")
        else:
            for workers in (1, 2):
                t0 = time.perf_counter()
                with (
                    LocalCluster(
                        n_workers=workers,
                        processes=True,
                        threads_per_worker=1,
                        dashboard_address=None,
                    ) as cluster,
                    Client(cluster) as client,
                ):
                    client.wait_for_workers(workers)
                    startup = time.perf_counter() - t0
                    # pure=False: recompute on every repeat instead of reusing results
                    # of identical tasks still held by the cluster
                    executor = client.get_executor(pure=False)
                    elapsed, out = best_of(lambda: run(executor), args.repeat)
                np.testing.assert_array_equal(out, reference)
                rows.append(("dask LocalCluster", workers, startup, elapsed))

    print("all executors returned bit-identical results")
    print(f"{'executor':30s} {'workers':>7s} {'start-up s':>10s} {'run s':>8s} {'speed-up':>9s}")
    one_worker: dict[str, float] = {}
    for name, workers, startup, elapsed in rows:
        if workers == 1:
            one_worker[name] = elapsed
        speedup = one_worker[name] / elapsed
        print(f"{name:30s} {workers:7d} {startup:10.2f} {elapsed:8.2f} {speedup:8.2f}x")


if __name__ == "__main__":
    main()
