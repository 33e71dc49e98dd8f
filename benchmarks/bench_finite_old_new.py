"""Two trees against each other in one interleaved run: the ``finite`` case of
bench_next_order.py at n = 50, 100, 200 and ``finite-distinct`` at n = 200, each
with the package of the old tree and of the new one on the path (one process per
run, alternating), then n = 200 on the new tree alone and beside one CPU-bound
competitor (a busy loop in another process, stopped by its own id)::

    python benchmarks/bench_finite_old_new.py OLD_TREE NEW_TREE

The benchmark script itself is this tree's (so both trees run the same case).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).with_name("bench_next_order.py")


def run(tree: str, case: str, n: int, tag: str) -> None:
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run(
        [sys.executable, str(BENCH), case, str(n)], env=env, capture_output=True, text=True, check=True
    )
    print(f"[{tag}] {out.stdout.strip()}", flush=True)


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    for case, n in (("finite", 50), ("finite", 100), ("finite", 200), ("finite-distinct", 200)):
        run(old, case, n, "old")
        run(new, case, n, "new")
    run(new, "finite", 200, "new, alone")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        run(new, "finite", 200, "new, one competitor")
        run(old, "finite", 200, "old, one competitor")
    finally:
        busy.kill()
        busy.wait()
    run(new, "finite", 200, "new, alone again")


if __name__ == "__main__":
    main()
