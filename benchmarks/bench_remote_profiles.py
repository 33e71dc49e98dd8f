"""Benchmark: the exact smoothed delta of a user mechanism with its profile chunks on executors.

Run on demand (from the repository root):

    python benchmarks/bench_remote_profiles.py            # n = 1000, 4 epsilons
    python benchmarks/bench_remote_profiles.py --n 2000 --no-dask

The mechanism is randomized response on one bit per record, given as a ``FiniteMechanism`` (its
output law is a convolution of two binomials), whose profiles are nearly all of Algorithm 1's
work.  The same smoothed delta runs in this process, on a 2-process ``process_pool`` and, if
installed, on a Dask ``LocalCluster`` of two worker processes on 127.0.0.1; the script checks that
every result is bit-identical to the serial one and prints the wall times (pools started
beforehand) and the load average around the runs (figures in benchmarks/figures.md).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime.parallel import process_pool

PI = [[0.3, 0.7], [0.6, 0.4]]
EPS = [0.5, 1.0, 2.0, 7.0]


def _binomial(h: int, p: float) -> np.ndarray:
    k = np.arange(h + 1, dtype=float)
    log_choose = np.array([math.lgamma(h + 1) - math.lgamma(i + 1) - math.lgamma(h - i + 1) for i in k])
    return np.exp(log_choose + k * math.log(p) + (h - k) * math.log1p(-p))


def randomized_response(hist: tuple[int, ...]) -> dict[int, float]:
    """Each record reports its bit, kept with probability 3/4; the count of zeros is published."""
    h0, h1 = hist
    return dict(enumerate(np.convolve(_binomial(h0, 0.75), _binomial(h1, 0.25)).tolist()))


def timed(n: int, executor: object = None) -> tuple[float, sdp.SmoothedResult]:
    mech = sdp.FiniteMechanism(randomized_response, categories=2, name="randomized response")
    t = time.perf_counter()
    res = sdp.smoothed_delta(mech, n, PI, EPS, progress=False, budget=math.inf, executor=executor)  # type: ignore[arg-type]
    return time.perf_counter() - t, res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="database size (default 1000)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask cluster")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    serial_s, serial = timed(args.n)
    rows.append(("in-process", 1, serial_s))
    with process_pool(2) as pool:
        pool.submit(int).result()  # started
        s, res = timed(args.n, pool)
        assert np.array_equal(res.log_delta_values, serial.log_delta_values), "process pool differs"
        rows.append(("process_pool", 2, s))
    if not args.no_dask:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            print("dask.distributed is not installed: skipped")
        else:
            import cloudpickle

            cloudpickle.register_pickle_by_value(sys.modules[__name__])
            with (
                LocalCluster(
                    n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                s, res = timed(args.n, client)
                assert np.array_equal(res.log_delta_values, serial.log_delta_values), "Dask differs"
                rows.append(("Dask LocalCluster", 2, s))
    print(
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, n = {args.n}, {len(EPS)} epsilons, "
        f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}; every result bit-identical to the serial one"
    )
    for name, workers, s in rows:
        print(f"{name:20s} {workers} worker(s)  {s:7.2f} s  speed-up {serial_s / s:.2f}x")


if __name__ == "__main__":
    main()
