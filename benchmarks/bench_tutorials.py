"""The main job (``python -m smoothdp_nb tutorials``): wall time and kernel memory.

Runs the job ``--repeat`` times for each ``--jobs`` value (alternating, so that
a change in the machine's load hits every setting alike), sampling every 0.2 s
the summed resident memory of the live ipykernel processes, and prints one
line per run: jobs, wall time, peak kernel count, peak kernel RSS, load
average before the run.  Linux only (reads /proc).

    python benchmarks/bench_tutorials.py --ci --jobs 1 2 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kernels(parent: int) -> tuple[int, int]:
    """(count, summed RSS in bytes) of the ipykernel processes started by ``parent``."""
    count = rss = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid != parent or b"ipykernel_launcher" not in (proc / "cmdline").read_bytes():
                continue
            rss += int((proc / "statm").read_text().split()[1]) * page
            count += 1
        except (OSError, IndexError, ValueError):
            continue
    return count, rss


def run_once(jobs: int, ci: bool) -> dict:
    peak = {"count": 0, "rss": 0}
    done = threading.Event()

    def sample(parent: int) -> None:
        while not done.is_set():
            c, r = kernels(parent)
            peak["count"], peak["rss"] = max(peak["count"], c), max(peak["rss"], r)
            time.sleep(0.2)

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "smoothdp_nb", "tutorials", "--out", out, "--jobs", str(jobs)]
        cmd += ["--ci"] if ci else []
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        sampler = threading.Thread(target=sample, args=(proc.pid,), daemon=True)
        sampler.start()
        _, stderr = proc.communicate()
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
    if proc.returncode:
        print(stderr[-2000:], file=sys.stderr)
    return {
        "jobs": jobs,
        "wall": wall,
        "kernels": peak["count"],
        "rss": peak["rss"],
        "load": load,
        "load_after": os.getloadavg()[0],
        "rc": proc.returncode,
        # the runner's one line per finished notebook (name, seconds, status)
        "notebooks": [line.strip() for line in stderr.splitlines() if ".ipynb " in line and " s " in line],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ci", action="store_true", help="small parameters")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{'jobs':>4} {'wall s':>8} {'kernels':>7} {'kernel RSS':>11} {'load':>5}  rc")
    for _ in range(args.repeat):
        for jobs in args.jobs:
            r = run_once(jobs, args.ci)
            print(
                f"{r['jobs']:>4} {r['wall']:>8.1f} {r['kernels']:>7} {r['rss'] / 2**20:>8.0f} MB "
                f"{r['load']:>5.2f}  {r['rc']}  (load after: {r['load_after']:.2f})",
                flush=True,
            )
            for line in r["notebooks"]:
                print(f"      {line}", flush=True)


if __name__ == "__main__":
    main()
