"""The cost model against measured runs for user mechanisms: the estimate of
``smoothed_delta(FiniteMechanism(...), n, pi, eps)`` (taken first, in the same process) beside
the CPU and wall seconds of the run, one row per case, with the date, the machine and the load.
The sampling histogram's cases, 1e3 to 1.58e8 records, are in ``bench_electorate.py``.

    python benchmarks/bench_cost_model.py
"""

from __future__ import annotations

import math
import os
import platform
import time

import numpy as np
from scipy.special import gammaln

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.engines.estimate import estimate_smoothed


def _thinning(h: np.ndarray) -> dict[int, float]:
    """Category-0 records reported with probability 0.7, the others with 0.2: the count reported."""

    def binom_pmf(k: int, p: float) -> np.ndarray:
        j = np.arange(k + 1)
        out: np.ndarray = np.exp(
            gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + j * np.log(p) + (k - j) * np.log1p(-p)
        )
        return out

    law = np.convolve(binom_pmf(int(h[0]), 0.7), binom_pmf(int(sum(h[1:])), 0.2))
    return dict(enumerate(law.tolist()))


CASES = [(3, 36), (3, 60), (2, 400), (2, 2000)]


def main() -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, {os.cpu_count()} CPUs")
    print(
        "| mechanism | m | n | predicted s | CPU s | wall s | predicted / CPU | predicted / wall | load before/after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for m, n in CASES:
        M = sdp.FiniteMechanism(_thinning, categories=m, name=f"thinning{m}")
        pi = np.full((m, m), 0.2 / (m - 1)) + np.eye(m) * (0.8 - 0.2 / (m - 1))
        eps = [0.5, 1.0]
        before = os.getloadavg()[0]
        est = estimate_smoothed(M, [n], pi, eps).seconds
        t0, c0 = time.perf_counter(), time.process_time()
        sdp.smoothed_delta(M, n, pi, eps, budget=math.inf, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = os.getloadavg()[0]
        print(
            f"| thinning | {m} | {n} | {est:.3f} | {cpu:.3f} | {wall:.3f} | {est / cpu:.2f} | {est / wall:.2f} "
            f"| {before:.1f}/{after:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
