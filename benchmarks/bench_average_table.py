"""Benchmark: the sampling-average profile per database, this tree against another.

Run on demand:  python benchmarks/bench_average_table.py [--old PATH] [--rounds R] [--databases N] [--competitor]
                [--output sum|rounded_mean]

The authors' setting (N = 225 records, T = 15 draws, 8-bit grid, epsilon = 1, 3, 5,
``output="sum"`` by default; databases drawn alternately from the quantized Gaussians
N(0, 0.12^2) and N(0.1, 0.12^2), as in ``bench_contention.py``): the certified
profile ``sdp.privacy_profile`` of N distinct databases (50 by default), one call
each, after one warm-up call on another database.  Each round runs the old tree
(``--old``, default ``/work/main``) and this tree in fresh processes, in
alternating order, so both see the same machine load; each process prints its
first call (cold: includes the one-time set-up), the median wall and CPU time per
database and the load average before it.  ``--competitor`` starts one CPU-bound
process (``python -c "while True: pass"``) for the whole run.  The deltas of both
trees are compared (upper and lower ends of the enclosures).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, os, statistics, sys, time
t0 = time.perf_counter()
import numpy as np
import smoothdp_nb as sdp
laws = [sdp.quantized_gaussian(0.0, 0.12, 8), sdp.quantized_gaussian(0.1, 0.12, 8)]
mech = sdp.SamplingAverage(T=15, grid=laws[0].values, output=sys.argv[2])
rng = np.random.default_rng(2021)
count = int(sys.argv[1])
hists = [rng.multinomial(225, laws[k % 2].pmf) for k in range(count + 1)]
eps = [1.0, 3.0, 5.0]
load = os.getloadavg()[0]
t = time.perf_counter()
sdp.privacy_profile(mech, hists[-1], eps)  # warm-up (first call of the process)
first = time.perf_counter() - t
wall, cpu, deltas = [], [], []
for h in hists[:-1]:
    t, c = time.perf_counter(), time.process_time()
    d = sdp.privacy_profile(mech, h, eps)
    wall.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
    deltas.append(np.asarray(d, dtype=float).tolist())
print(json.dumps({"module": sdp.__file__, "first": first, "wall": statistics.median(wall), "cpu": statistics.median(cpu),
                  "load": load, "deltas": deltas}))
"""


def run(tree: Path, count: int, output: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(count), output], env=env, capture_output=True, text=True, check=True, cwd="/"
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    if not str(result["module"]).startswith(str(tree)):
        raise RuntimeError(f"imported {result['module']}, not the tree {tree}")
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", default="/work/main")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--databases", type=int, default=50)
    ap.add_argument("--competitor", action="store_true")
    ap.add_argument("--output", default="sum", choices=["sum", "rounded_mean"])
    args = ap.parse_args()
    trees = {"old": Path(args.old), "new": HERE}
    comp = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.competitor else None
    try:
        res: dict[str, list[dict[str, object]]] = {"old": [], "new": []}
        for r in range(args.rounds):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                x = run(trees[name], args.databases, args.output)
                res[name].append(x)
                print(
                    f"round {r + 1} {name}: median {1e3 * float(x['wall']):.2f} ms wall, "  # type: ignore[arg-type]
                    f"{1e3 * float(x['cpu']):.2f} ms CPU per database; first call "  # type: ignore[arg-type]
                    f"{1e3 * float(x['first']):.1f} ms; load {float(x['load']):.2f}",  # type: ignore[arg-type]
                    flush=True,
                )
    finally:
        if comp is not None:
            comp.kill()
            comp.wait()
    import numpy as np

    old = np.array(res["old"][0]["deltas"])
    new = np.array(res["new"][0]["deltas"])
    print(f"deltas: max relative difference old vs new {np.max(np.abs(new / old - 1)):.2e}")
    for name in ("old", "new"):
        walls = sorted(1e3 * float(x["wall"]) for x in res[name])  # type: ignore[arg-type]
        print(f"{name}: per-round medians {', '.join(f'{w:.2f}' for w in walls)} ms wall")


if __name__ == "__main__":
    main()
