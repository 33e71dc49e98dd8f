"""Benchmark: how long each public entry point takes to refuse work of size 10^18.

Run on demand (from the repository root):

    python benchmarks/bench_refusals.py              # budget 2 s, size 10^18
    python benchmarks/bench_refusals.py --size 1e9 --budget 600

Each call runs in this process after one warm-up call of the same entry point at size 1; the
script prints the outcome (refused, out of range, finished) and the wall time.  Figures:
benchmarks/refusals.md.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime.budget import ComputationTooLarge

PI = [[0.3, 0.7], [0.6, 0.4]]


def entry_points(budget: float) -> dict[str, Callable[[int], object]]:
    """Entry point -> a call at size s (records, runs, mechanisms, grid points)."""
    mech = sdp.SamplingHistogram(eta=0.5)
    return {
        "smoothed_delta exact n": lambda s: sdp.smoothed_delta(mech, s, PI, 1.0, budget=budget, progress=False),
        "smoothed_delta monte-carlo n": lambda s: sdp.smoothed_delta(
            mech, s, PI, 1.0, method="monte-carlo", budget=budget, progress=False
        ),
        "smoothed_epsilon n": lambda s: sdp.smoothed_epsilon(mech, s, PI, 1e-3, budget=budget, progress=False),
        "smoothed_renyi n": lambda s: sdp.smoothed_renyi(mech, s, PI, 2.0, budget=budget),
        "privacy_profile repeat k": lambda s: sdp.privacy_profile(sdp.repeat(mech, s), [3, 2], 1.0, budget=budget),
        "privacy_profile joint (<= 20,000)": lambda s: sdp.privacy_profile(
            sdp.joint(*[mech] * min(s, 20_000)), [3, 2], 1.0, budget=budget
        ),
        "privacy_loss_distribution repeat k": lambda s: sdp.privacy_loss_distribution(
            sdp.repeat(mech, s), [3, 2], [2, 3], budget=budget
        ),
        "sweep points": lambda s: sdp.sweep(abs, {"x": range(s)}, budget=budget, progress=False),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=1e18)
    parser.add_argument("--budget", type=float, default=2.0)
    args = parser.parse_args()
    size = int(args.size)
    print(f"size {size:.3g}, budget {args.budget:g} s, load {os.getloadavg()[0]:.1f}")
    for name, call in entry_points(args.budget).items():
        call(1)  # warm-up: imports and caches
        t0 = time.perf_counter()
        try:
            call(size)
            outcome = "finished"
        except ComputationTooLarge:
            outcome = "refused"
        except ValueError:
            outcome = "out of range"
        print(f"{name:38s} {outcome:12s} {time.perf_counter() - t0:8.3f} s")


if __name__ == "__main__":
    main()
