"""Noisy counts, subsampling and pipelines: build time of the loss laws, the pipeline's profile and
smoothed delta, and the gap to dp_accounting on one pair.

Run from the repository root: ``.venv/bin/python benchmarks/bench_pipelines.py``.
"""

from __future__ import annotations

import os
import time

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as dpl

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.privacy_loss.noise import noise_log_delta, noise_losses


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label:62s} wall {time.perf_counter() - w:7.2f} s   cpu {time.process_time() - c:7.2f} s")
    return out


def main() -> None:
    print(f"load average before: {os.getloadavg()}")
    eps = np.array([0.5, 1.0, 2.0])
    for noise, scale in [("gaussian", 2.0), ("laplace", 1.0), ("discrete_gaussian", 2.0), ("discrete_laplace", 1.0)]:
        for cells in (2**12, 2**14):
            laws = timed(
                f"loss laws of {noise}({scale}), {cells} cells", lambda: noise_losses(noise, scale, 1.0, cells)
            )
            up, closed = laws[0].log_delta(eps, True), noise_log_delta(noise, scale, eps).upper
            live = np.isfinite(closed)  # (a pure-DP noise's delta is 0 above 1/scale: its upper bound is ~1e-16)
            ratio = np.exp(up[live] - closed[live])
            print(f"    upper / closed form at eps {eps[live].tolist()}: {np.round(ratio, 5).tolist()}")
    timed("loss laws of the Poisson-subsampled gaussian(2.0), q = 0.1", lambda: noise_losses("gaussian", 2.0, 0.1))
    pipeline = sdp.joint(sdp.SamplingHistogram(eta=0.5), sdp.noisy_count(0, 3.0))
    for n in (10, 24, 48):
        timed(
            f"smoothed delta of the pipeline, n = {n}, 3 epsilons",
            lambda: sdp.smoothed_delta(pipeline, n, [[0.4, 0.6], [0.6, 0.4]], eps, progress=False),
        )
    x, x2 = np.array([13, 11]), np.array([12, 12])
    ours = timed("pair loss of the pipeline, n = 24", lambda: sdp.privacy_loss_distribution(pipeline, x, x2).delta(eps))

    def theirs() -> np.ndarray:
        hist = sdp.SamplingHistogram(eta=0.5)

        def pmf(h):  # type: ignore[no-untyped-def]
            df = hist.output_pmf(h)
            cols = [c for c in df.columns if c not in ("probability", "log_probability")]
            return {str(tuple(r)): lp for r, lp in zip(df[cols].to_numpy().tolist(), df["log_probability"])}

        g = dpl.from_gaussian_mechanism(3.0, value_discretization_interval=1e-4, use_connect_dots=False)
        out = np.zeros(eps.size)
        for lo, up in ((pmf(x2), pmf(x)), (pmf(x), pmf(x2))):
            pair = dpl.from_two_probability_mass_functions(lo, up, value_discretization_interval=1e-4)
            out = np.maximum(out, pair.compose(g).get_delta_for_epsilon(list(eps)))
        return out

    dp = timed("dp_accounting, the same pair (pessimistic, 1e-4)", theirs)
    print(f"    ours / dp_accounting: {np.round(ours / dp, 5).tolist()}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
