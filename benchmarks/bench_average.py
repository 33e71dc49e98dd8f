"""Benchmark: the sampling-average mechanism on 8-bit grids.

Run on demand:  python benchmarks/bench_average.py [--quick] [--figure5] [--trials N] [--candidates K]

1. CPU time per database of the exact privacy profile at the authors' setting
   (N = 225, T = 15, 8-bit grid of 256 values, epsilon = 1, 3, 5; databases drawn
   from the quantized Gaussians mu = 0 and 0.1, sigma = 0.12), both outputs, with
   the page faults per database, the time estimate's ratio to it, and the exact
   deltas of one database from each Gaussian.
2. CPU time per database at Figure 5's sizes (T = sqrt(n), n = 64 .. 484, rounded
   mean, epsilon = 0.5, 1; settings 1 and 3 of Appendix G.2, all three candidate
   compositions), and the time estimate's ratio to it.
3. With --figure5: a Monte Carlo smoothed delta of setting 1 over the 8 values of n
   (``sdp.smoothed_delta(method="monte-carlo")``, 80 trials x 3 candidate
   compositions per n by default) on 2 worker processes, printing run times and the
   99 % band.
"""

from __future__ import annotations

import argparse
import math
import resource
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import smoothdp_nb as sdp
from smoothdp_nb import SamplingAverage, quantized_gaussian, quantized_laplace
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import profile_seconds

EPS = np.array([1.0, 3.0, 5.0])
EPS_FIG5 = np.array([0.5, 1.0])


def per_database(reps: int) -> None:
    g0 = quantized_gaussian(0.0, 0.12)
    g1 = quantized_gaussian(0.1, 0.12)
    rng = np.random.default_rng(2026)
    hists = [rng.multinomial(225, (g0 if i % 2 == 0 else g1).pmf) for i in range(reps)]
    print(f"authors' setting: N = 225, T = 15, 8-bit grid, epsilon = {EPS.tolist()}, {reps} databases")
    for output in ("sum", "rounded_mean"):
        mech = SamplingAverage(T=15, grid=g0.values, output=output)
        mech._log_profile_bounds(hists[0][None], 225, EPS)  # warm-up (sum support cache)
        wall, cpu, est = [], [], []
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for h in hists:
            t, c = time.perf_counter(), time.process_time()
            mech._log_profile_bounds(h[None], 225, EPS)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            occ = np.flatnonzero(h)
            est.append(profile_seconds(225, 15, g0.values.size, int(occ[-1] - occ[0]), occ.size, EPS.size))
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / len(hists)
        print(
            f"  output={output!r:15} per database: median {1e3 * np.median(cpu):.1f} ms cpu, "
            f"{1e3 * np.median(wall):.1f} ms wall (min {1e3 * min(wall):.1f} ms), {faults:.0f} page faults; "
            f"estimate / cpu: median x{np.median(np.array(est) / np.array(cpu)):.2f}"
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


def figure5_sizes(ns, reps: int) -> None:
    """CPU per database at Figure 5's sizes, the three candidate compositions of settings 1 and 3."""
    settings = {
        "setting 1": (quantized_gaussian(0.0, 0.15), quantized_gaussian(0.2, 0.15)),
        "setting 3": (quantized_gaussian(0.0, 0.12), quantized_laplace(0.0, 0.12 / math.sqrt(2))),
    }
    rng = np.random.default_rng(5)
    print(
        f"Figure 5 sizes (T = isqrt(n), rounded mean, epsilon = {EPS_FIG5.tolist()}), {reps} databases per composition:"
    )
    for name, (a, b) in settings.items():
        for n in ns:
            T = math.isqrt(n)
            mech = SamplingAverage(T=T, grid=a.values, output="rounded_mean")
            hists = [rng.multinomial(n, a.pmf) for _ in range(reps)] + [rng.multinomial(n, b.pmf) for _ in range(reps)]
            hists += [rng.multinomial(n // 2, a.pmf) + rng.multinomial(n - n // 2, b.pmf) for _ in range(reps)]
            mech._log_profile_bounds(hists[0][None], n, EPS_FIG5)
            cpu, est = [], []
            for h in hists:
                c = time.process_time()
                mech._log_profile_bounds(h[None], n, EPS_FIG5)
                cpu.append(time.process_time() - c)
                occ = np.flatnonzero(h)
                est.append(profile_seconds(n, T, a.values.size, int(occ[-1] - occ[0]), occ.size, EPS_FIG5.size))
            ratio = np.array(est) / np.array(cpu)
            print(
                f"  {name}, n = {n:3d} (T = {T:2d}): median {1e3 * np.median(cpu):6.1f} ms cpu "
                f"(max {1e3 * max(cpu):6.1f}); estimate / cpu x{ratio.min():.2f}-x{ratio.max():.2f}"
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
    ap.add_argument("--figure5", action="store_true", help="also the Monte Carlo smoothed delta of setting 1")
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    per_database(4 if args.quick else 20)
    ns = [64, 100, 144, 196, 256, 324, 400, 484]  # notebook 04's default run
    if args.quick:
        ns = ns[:3]
    figure5_sizes(ns, 2 if args.quick else 5)
    if args.figure5:
        figure5(ns, args.trials or (10 if args.quick else 80), args.candidates, args.workers)


if __name__ == "__main__":
    main()
