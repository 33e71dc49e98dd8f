"""The paper's question at the size of the electorate: the exact smoothed delta of the sampling
histogram for the 2020 district shares (eta = 0.998, four epsilon) and for two vertices
(0.3, 0.6) at eta = 0.998 (``two-vertex``) and eta = 0.9 (``two-vertex-0.9``, epsilon = 1), and the
authors' configuration (``authors``: Pi = the winners' shares 1920-2020, eta = 0.998, 21 epsilon),
from 10^5 to 1.58 * 10^8 records.  Each run is a fresh process (its own peak memory); prints
one Markdown row per run with the date, the machine, the load before and after, wall and CPU
seconds, peak RSS, log delta and its enclosure width (relative), and the engine that ran.

    python benchmarks/bench_electorate.py            # every size
    python benchmarks/bench_electorate.py 1e7 1.58e8 # chosen sizes
    CASES=two-vertex-0.9 python benchmarks/bench_electorate.py 1e5 1e6
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
import smoothdp_nb as sdp
case, n = sys.argv[1], int(float(sys.argv[2]))
if case == "districts":
    mech, pi, eps = sdp.SamplingHistogram(eta=0.998), sdp.datasets.us_2020_district_shares(), [0.5, 1.0, 2.0, 7.0]
elif case == "authors":  # the authors' configuration: winner shares 1920-2020, 21 epsilon
    el = sdp.datasets.us_presidential_elections()
    share = el.winner_share.to_numpy()
    mech, pi = sdp.SamplingHistogram(eta=0.998), np.stack([share, 1 - share], axis=1)
    eps = [0.1] + [0.5 * k for k in range(1, 21)]
elif case == "two-vertex":
    mech, pi, eps = sdp.SamplingHistogram(eta=0.998), [[0.3, 0.7], [0.6, 0.4]], [0.5, 1.0, 2.0, 7.0]
else:
    mech, pi, eps = sdp.SamplingHistogram(eta=0.9), [[0.3, 0.7], [0.6, 0.4]], [1.0]
from smoothdp_nb.core.smoothed.engines.estimate import estimate_smoothed
predicted = estimate_smoothed(mech, [n], pi, eps)
t0, c0 = time.perf_counter(), time.process_time()
res = sdp.smoothed_delta(mech, n, pi, eps, budget=float("inf"), progress=False)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
hi = np.asarray(res.log_delta_values, dtype=float)
lo = np.asarray(res.log_delta_lower_values, dtype=float)
print(json.dumps({
    "wall": wall, "cpu": cpu, "predicted": predicted.seconds, "predicted_gb": predicted.bytes / 2**30, "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    "log_delta": hi.tolist(), "width": float(np.max(hi - lo)),
    "engine": "window" if any("windowed certificate" in s for s in res.notes) else "full",
}))
"""

SIZES = [1e5, 1e6, 3e6, 1e7, 3e7, 1e8, 1.58e8]


def main() -> None:
    sizes = [float(a) for a in sys.argv[1:]] or SIZES
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, {os.cpu_count()} CPUs")
    print(
        "| case | n | wall s | CPU s | predicted s | predicted / CPU | peak RSS GB | predicted GB | log delta "
        "| width (rel.) | engine | load before/after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    cases = os.environ.get("CASES", "districts,two-vertex").split(",")
    for case in cases:
        for n in sizes:
            before = os.getloadavg()[0]
            out = subprocess.run(
                [sys.executable, "-c", CHILD, case, str(n)], capture_output=True, text=True, check=True
            ).stdout
            r = json.loads(out.strip().splitlines()[-1])
            after = os.getloadavg()[0]
            ld = ", ".join(f"{v:.6g}" for v in r["log_delta"])
            print(
                f"| {case} | {n:.3g} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['predicted']:.2f} | "
                f"{r['predicted'] / r['cpu']:.2f} | {r['rss_gb']:.2f} | {r['predicted_gb']:.2f} | {ld} | "
                f"{r['width']:.1e} | {r['engine']} | {before:.1f}/{after:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
