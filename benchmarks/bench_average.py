"""Benchmark: the sampling-average mechanism on 8-bit grids (issue 4 targets).

Run on demand:  python benchmarks/bench_average.py [--quick] [--trials N] [--candidates K]

1. Time per database of the exact privacy profile at the authors' setting
   (N = 225, T = 15, 8-bit grid of 256 values, epsilon = 1, 3, 5; databases drawn
   from the quantized Gaussians mu = 0 and 0.1, sigma = 0.12), both outputs,
   and the exact deltas of one database from each Gaussian.
2. A Monte Carlo smoothed delta of one Figure 5 setting (setting 1 of
   Appendix G.2: Pi = quantized N(0, 0.15^2), N(0.2, 0.15^2); T = sqrt(n);
   output = mean rounded to the 8-bit grid) over the 8 values of n of
   notebook 04's default run, 80 trials x 3 candidate compositions per n
   (the notebook's defaults), epsilon = 0.5, 1, on 2 worker processes, with
   a progress bar, printing run times, trial counts and the 99 % betting band.
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import smoothdp_nb as sdp
from smoothdp_nb.core.average import SamplingAverage, quantized_gaussian

EPS = np.array([1.0, 3.0, 5.0])
EPS_FIG5 = np.array([0.5, 1.0])


def per_database(reps: int) -> None:
    g0 = quantized_gaussian(0.0, 0.12)
    g1 = quantized_gaussian(0.1, 0.12)
    rng = np.random.default_rng(2026)
    hists = [rng.multinomial(225, (g0 if i % 2 == 0 else g1).pmf) for i in range(reps)]
    print(f"authors' setting: N = 225, T = 15, 8-bit grid, epsilon = {list(EPS)}, {reps} databases")
    for output in ("sum", "rounded_mean"):
        mech = SamplingAverage(T=15, grid=g0.values, output=output)
        mech._log_profile_batch(hists[0][None], 225, EPS)  # warm-up (sum support cache)
        wall, cpu = [], []
        for h in hists:
            t, c = time.perf_counter(), time.process_time()
            mech._log_profile_batch(h[None], 225, EPS)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(
            f"  output={output!r:15} per database: median {np.median(wall):.3f} s wall, "
            f"{np.median(cpu):.3f} s cpu (min {min(wall):.3f} s)"
        )
    print("exact delta of one database drawn from each Gaussian:")
    for mu in (0.0, 0.1):
        h = np.random.default_rng(7).multinomial(225, quantized_gaussian(mu, 0.12).pmf)
        for output in ("sum", "rounded_mean"):
            d = sdp.privacy_profile(SamplingAverage(T=15, grid=g0.values, output=output), h, EPS)
            print(
                f"  mu = {mu:3.1f}, output={output!r:15} "
                + "  ".join(f"epsilon={e:g}: {v:.4g}" for e, v in zip(EPS, d))
            )


def figure5(ns, trials: int, candidates: int, workers: int) -> None:
    from tqdm import tqdm

    g0 = quantized_gaussian(0.0, 0.15)
    g1 = quantized_gaussian(0.2, 0.15)
    pi = np.stack([g0.pmf, g1.pmf])
    print(
        f"Figure 5 setting 1 (Pi = quantized N(0, 0.15^2), N(0.2, 0.15^2); T = ceil(sqrt(n)); output "
        f"'rounded_mean'), {trials} trials x <= {candidates} candidate compositions per n, {workers} processes:"
    )
    total = 0.0
    with ProcessPoolExecutor(workers) as ex:
        for n in tqdm(ns, desc="n"):
            T = math.ceil(math.sqrt(n))
            mech = SamplingAverage(T=T, grid=g0.values, output="rounded_mean")
            t = time.perf_counter()
            r = sdp.smoothed_delta(
                mech,
                n,
                pi,
                EPS_FIG5,
                method="monte-carlo",
                trials=trials,
                rng=n,
                candidates=candidates,
                executor=ex,
                chunk=max(1, -(-trials // workers)),
                progress=False,
            )
            dt = time.perf_counter() - t
            total += dt
            band = "  ".join(
                f"epsilon={e:g}: {d:.3g} [{lo:.2g}, {hi:.2g}]"
                for e, d, lo, hi in zip(EPS_FIG5, r.delta, r.ci_low, r.ci_high)
            )
            ncomp = len(r.table) // EPS_FIG5.size
            print(f"  n = {n:4d} (T = {T:2d}): {dt:6.1f} s, {ncomp} compositions x {trials} trials   {band}")
    print(f"  total {total:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    per_database(4 if args.quick else 10)
    ns = [64, 100, 144, 196, 256, 324, 400, 484]  # notebook 04's default run
    if args.quick:
        ns = ns[:3]
    trials = args.trials or (10 if args.quick else 80)
    figure5(ns, trials, args.candidates, args.workers)


if __name__ == "__main__":
    main()
