"""Benchmark: the first result in a fresh interpreter (figures in benchmarks/figures.md).

Run on demand (from the repository root):

    python benchmarks/bench_first_result.py             # 7 fresh interpreters
    python benchmarks/bench_first_result.py --runs 15
    python benchmarks/bench_first_result.py --other /path/to/another/tree   # both, interleaved

Each run is a new ``python`` process that times, from before ``import smoothdp_nb``:
(1) one ``privacy_profile`` of the 2020 election (``election_histogram(2020)``, two epsilons) and
(2) then one exact ``smoothed_delta`` at n = 2000 with a three-row Pi (a plain list), and, in a
second process each, (3) the same with Pi = ``us_2020_district_shares()`` (a data frame: pandas is
loaded because the data are one).  It prints the median and the best of the runs, the interpreter's
own start-up, which heavy packages each call left loaded, and the load average around the runs.
Wall and CPU time (``time.process_time``, the comparable figure on a loaded machine) are both shown;
with ``--other TREE`` the same runs alternate between this tree and that one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROFILE_AND_DELTA = """
import time
t0, c0 = time.perf_counter(), time.process_time()
import json, sys
import smoothdp_nb as sdp
m = sdp.SamplingHistogram(eta=0.998)
sdp.privacy_profile(m, sdp.datasets.election_histogram(2020), [0.5, 1.0])
t1, c1 = time.perf_counter(), time.process_time()
heavy1 = sorted({k.split(".")[0] for k in sys.modules} & {"pandas", "flint", "mpmath", "altair", "IPython"})
sdp.smoothed_delta(m, 2000, [[0.3, 0.7], [0.6, 0.4], [0.5, 0.5]], 0.5, progress=False)
t2, c2 = time.perf_counter(), time.process_time()
heavy2 = sorted({k.split(".")[0] for k in sys.modules} & {"pandas", "flint", "mpmath", "altair", "IPython"})
print(json.dumps([t1 - t0, t2 - t0, heavy1, heavy2, c1 - c0, c2 - c0]))
"""

DISTRICTS = """
import time
t0 = time.perf_counter()
import json
import smoothdp_nb as sdp
m = sdp.SamplingHistogram(eta=0.998)
sdp.smoothed_delta(m, 2000, sdp.datasets.us_2020_district_shares(), 0.5, progress=False)
print(json.dumps(time.perf_counter() - t0))
"""


def run(code: str, tree: Path = ROOT) -> object:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=tree)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per figure (default 7)")
    parser.add_argument("--other", type=Path, default=None, help="another source tree, measured interleaved")
    args = parser.parse_args()
    trees = [ROOT] + ([args.other.resolve()] if args.other else [])
    load_before = os.getloadavg()[0]
    t = time.perf_counter()
    for _ in range(3):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    startup = (time.perf_counter() - t) / 3
    first: dict[Path, list[list[object]]] = {tree: [] for tree in trees}
    districts: dict[Path, list[float]] = {tree: [] for tree in trees}
    for _ in range(args.runs):
        for tree in trees:
            first[tree].append(run(PROFILE_AND_DELTA, tree))  # type: ignore[arg-type]
            districts[tree].append(float(run(DISTRICTS, tree)))  # type: ignore[arg-type]
    load_after = os.getloadavg()[0]
    print(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, load average {load_before:.2f} -> {load_after:.2f}")
    print(f"interpreter start-up (python -c pass): {startup * 1e3:.0f} ms")
    for tree in trees:
        rows = first[tree]
        print(f"-- {tree}")
        for name, col, cpu in (
            ("import + privacy_profile (2020 election)", 0, 4),
            ("  + smoothed_delta n = 2000 (list Pi)", 1, 5),
        ):
            wall = [float(r[col]) for r in rows]  # type: ignore[arg-type]
            cpus = [float(r[cpu]) for r in rows]  # type: ignore[arg-type]
            print(
                f"{name:52s} wall median {statistics.median(wall):.3f} s (best {min(wall):.3f}), "
                f"CPU median {statistics.median(cpus):.3f} s"
            )
        dist = districts[tree]
        print(f"{'import + smoothed_delta n = 2000 (district frame)':52s} wall median {statistics.median(dist):.3f} s")
        print("heavy packages loaded after the profile:", rows[0][2], "after the smoothed delta:", rows[0][3])


if __name__ == "__main__":
    main()
