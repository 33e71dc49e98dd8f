"""The up-front cost model of composed mechanisms (``repeat``, ``joint``) against measured runs.

For every case the model's price is taken first, in the same process, by the arithmetic the
refusal checks use: for every distinct neighbour pair, :func:`build_estimate` of its runs'
losses plus :func:`pair_seconds` of its composed losses (built for the price, as the check
does before composing).  For a smoothed delta the package's own up-front estimate (which
times one pair and scales it) is printed beside it.  Then the call runs, and its CPU seconds
(``time.process_time``: the machine is shared) and wall seconds are printed beside the price,
one Markdown row per case, with the date, the machine and the load.

    python benchmarks/bench_composed_cost.py            # every case (about 3 minutes)
    python benchmarks/bench_composed_cost.py --quick    # without the joint of 5,000 runs
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import time
from collections.abc import Callable

import numpy as np

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.engines.estimate import estimate_smoothed
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.composed import build_estimate, neighbours, pair_loss, pair_seconds

EPSILON = np.array([0.25, 0.5, 1.0, 2.0])
PI = [[0.4, 0.6], [0.6, 0.4]]


def _response(h: np.ndarray) -> dict[int, float]:
    """Binary randomized response on the majority: 3:1 towards it."""
    return {0: 0.75, 1: 0.25} if h[0] > h[1] else {0: 0.25, 1: 0.75}


def _price_profiles(mech: Mechanism, hists: list[list[int]], n_epsilon: int) -> tuple[float, str]:
    """The model's seconds for the profiles of ``hists`` (one size n): every distinct neighbour
    pair built (:func:`build_estimate`) and priced (:func:`pair_seconds`), as the refusal
    check prices each pair before composing it; and the path of the costliest pair's forward
    upper bound (exact, lattice or grid)."""
    m = len(hists[0])
    n = int(sum(hists[0]))
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    total, path, top = 0.0, "exact", -1.0
    for h in hists:
        x = np.array(h, dtype=np.int64)
        for x2 in neighbours(x):
            a, b = tuple(x.tolist()), tuple(x2.tolist())
            key = (a, b) if a <= b else (b, a)
            if key in seen:
                continue
            seen.add(key)
            losses = pair_loss(mech, x, x2)
            price = build_estimate(mech, n, m, 1).seconds + pair_seconds(losses, n_epsilon)
            total += price
            if price > top:
                top, path = price, losses[0].method(True)
    return total, path


def _all_histograms(n: int) -> list[list[int]]:
    return [[a, n - a] for a in range(n + 1)]


Case = tuple[str, Callable[[], tuple[float, str]], Callable[[], float | None], Callable[[], object]]


def cases(large: bool) -> list[Case]:
    """(label, price, the package's own up-front estimate where it gives one, run) per case."""
    sh = sdp.SamplingHistogram(eta=0.5)
    count = sdp.noisy_count(0, 3.0)
    rr = sdp.FiniteMechanism(_response, categories=2, name="rr")
    counts = [sdp.noisy_count(0, 2.0 + 0.1 * i) for i in range(20)]
    out: list[Case] = []

    def profile(label: str, mech: Mechanism, x: list[int]) -> None:
        out.append(
            (
                f"privacy_profile({label}, {x})",
                lambda: _price_profiles(mech, [x], EPSILON.size),
                lambda: None,
                lambda: sdp.privacy_profile(mech, x, EPSILON, budget=3600),
            )
        )

    def smoothed(label: str, mech: Mechanism, n: int) -> None:
        out.append(
            (
                f"smoothed_delta({label}, n={n})",
                lambda: _price_profiles(mech, _all_histograms(n), EPSILON.size),
                lambda: estimate_smoothed(copy.deepcopy(mech), n, PI, EPSILON).seconds,  # its own timings
                lambda: sdp.smoothed_delta(mech, n, PI, EPSILON, progress=False, budget=3600),
            )
        )

    profile("repeat(rr, 3)", sdp.repeat(rr, 3), [3, 2])
    profile("repeat(rr, 1000)", sdp.repeat(rr, 1000), [3, 2])
    profile("repeat(rr, 10^6)", sdp.repeat(rr, 10**6), [3, 2])
    profile("repeat(SH, 3)", sdp.repeat(sh, 3), [3, 2])
    profile("repeat(SH, 1000)", sdp.repeat(sh, 1000), [3, 2])
    profile("repeat(SH, 10^5)", sdp.repeat(sh, 10**5), [3, 2])
    profile("repeat(SH, 20)", sdp.repeat(sh, 20), [60, 40])
    profile("repeat(SH, 50)", sdp.repeat(sh, 50), [6000, 4000])
    profile("joint(SH, SH(eta=0.3))", sdp.joint(sh, sdp.SamplingHistogram(eta=0.3)), [300, 200])
    profile("joint(SH x 50)", sdp.joint(*[sh] * 50), [3, 2])
    profile("joint(SH x 500)", sdp.joint(*[sh] * 500), [3, 2])
    if large:
        profile("joint(SH x 5000)", sdp.joint(*[sh] * 5000), [3, 2])
    profile("joint(SH, count)", sdp.joint(sh, count), [9, 7])
    profile("joint(SH, count)", sdp.joint(sh, count), [200, 100])
    profile("repeat(count, 10)", sdp.repeat(count, 10), [3, 2])
    profile("repeat(count, 1000)", sdp.repeat(count, 1000), [3, 2])
    profile("joint(20 counts)", sdp.joint(*counts), [3, 2])
    profile("repeat(joint(SH, count), 10)", sdp.repeat(sdp.joint(sh, count), 10), [9, 7])
    smoothed("joint(SH, count)", sdp.joint(sh, count), 16)
    smoothed("joint(SH, count)", sdp.joint(sh, count), 24)
    smoothed("repeat(SH, 5)", sdp.repeat(sh, 5), 30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the joint of 5,000 runs (about a minute)")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, {os.cpu_count()} CPUs")
    print(
        "| call | path | predicted s | CPU s | wall s | predicted / CPU "
        "| package estimate s (timed probe) | load before/after |"
    )
    print("|---|---|---|---|---|---|---|---|")
    sdp.privacy_profile(sdp.noisy_count(0, 3.0), [3, 2], EPSILON)  # the noise's laws, built once per process
    for label, price, package, run in cases(not args.quick):
        before = os.getloadavg()[0]
        predicted, path = price()
        own = package()
        own_text = "-" if own is None else f"{own:.3g}"
        c0, w0 = time.process_time(), time.perf_counter()
        run()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        after = os.getloadavg()[0]
        print(
            f"| `{label}` | {path} | {predicted:.3g} | {cpu:.3g} | {wall:.3g} | {predicted / cpu:.2f} "
            f"| {own_text} | {before:.1f}/{after:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
