"""Benchmark: post-processed mechanisms.

Run on demand:  python benchmarks/bench_postprocess.py

1. The announced winner of every US presidential election 1920-2020 with 0.2 %
   (and 0.01 %) of the votes lost: the privacy profile of
   ``postprocess(SamplingHistogram(eta), winner)`` for all 26 elections at the
   three thresholds of Figure 3, by hypergeometric tails (target: < 1 s).
2. For scale, the same through the generic (enumerating) post-processing path
   on small elections: n = 200 votes, all 201 histograms.
3. The exact smoothed delta of a FiniteMechanism (3-ary randomized response,
   n = 12, two hull vertices) and of the sampling average on a 3-value grid.
"""

from __future__ import annotations

import os
import time

import numpy as np

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms.postprocess import PostProcessed, winner


def best_of(fn, reps=5):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    print(f"load average {os.getloadavg()}")
    hist = sdp.datasets.us_presidential_elections()[["winner_votes", "runner_up_votes"]].to_numpy()
    eps = np.log(np.array([0.5, 0.51, 0.6]) / (1 - np.array([0.5, 0.51, 0.6])))
    for eta in ("0.998", "0.9999"):
        w = sdp.postprocess(sdp.SamplingHistogram(eta=eta), sdp.winner)
        t = best_of(lambda w=w: sdp.privacy_profile(w, hist, eps, log=True))
        d = sdp.privacy_profile(w, hist, eps, log=True)
        zeros = int(np.sum(np.all(d == -np.inf, axis=1)))
        print(
            f"winner, eta = {eta}: 26 elections x 3 epsilon in {t * 1e3:.1f} ms; exactly 0 at every epsilon: {zeros} of 26"
        )
    small = np.stack([np.arange(201), 200 - np.arange(201)], axis=1)
    base = sdp.SamplingHistogram(eta=0.9)
    t_fast = best_of(lambda: sdp.privacy_profile(sdp.postprocess(base, sdp.winner), small, eps), 3)
    t_gen = best_of(lambda: sdp.privacy_profile(PostProcessed(base, winner), small, eps), 1)
    print(f"n = 200, all 201 histograms, 3 epsilon: fast {t_fast * 1e3:.1f} ms, generic {t_gen:.2f} s")

    rows = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])

    def rr3(h):
        law = np.zeros((sum(h) + 1,) * 2)
        law[0, 0] = 1.0
        for j, c in enumerate(h):
            for _ in range(c):  # one record: shift by its report
                new = rows[j, 2] * law
                new[1:, :] += rows[j, 0] * law[:-1, :]
                new[:, 1:] += rows[j, 1] * law[:, :-1]
                law = new
        n = sum(h)
        return {(a, b, n - a - b): float(law[a, b]) for a in range(n + 1) for b in range(n + 1 - a) if law[a, b] > 0}

    rr = sdp.FiniteMechanism(rr3, categories=3, name="rr3")
    t = best_of(lambda: sdp.smoothed_delta(rr, 12, [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]], [0.2, 0.9]), 1)
    print(f"FiniteMechanism 3-ary randomized response, n = 12, 2 vertices, 2 epsilon: exact in {t:.2f} s")
    avg = sdp.SamplingAverage(T=3, grid=[0.0, 0.5, 1.0])
    t = best_of(lambda: sdp.smoothed_delta(avg, 20, [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]], [0.2, 0.9]), 1)
    print(f"SamplingAverage T = 3, 3-value grid, n = 20, 2 vertices, 2 epsilon: exact in {t:.2f} s")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
