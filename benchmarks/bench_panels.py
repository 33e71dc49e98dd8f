"""Kernel-side time of one panel update, by part (run on demand).

    PYTHONPATH=. /work/venv/bin/python benchmarks/bench_panels.py

For each panel, in the state the browser test drives (tests/browser/test_browser_voila.py):
the core call, the figure (the layers' rows as frames), the rows as JSON
records (what an update sends when the chart's shape is on screen), and, for
comparison, what every update cost before: building and serialising the
Altair chart and naming its datasets.  ``refresh`` is the whole update as a
slider move runs it (core, figure, rows, status line, widget messages).
Minimum and median of 30 repetitions; prints the machine and `uptime` load.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import smoothdp_nb as sdp
from smoothdp_nb import display
from smoothdp_nb.display.results import monte_carlo_note
from smoothdp_nb.panels.live import rename_datasets

REPS = 30


def timed(fn: Callable[[], Any], reps: int = REPS) -> str:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return f"{min(ts):6.1f} / {statistics.median(ts):6.1f}"


def altair_path(figure: display.Figure) -> None:
    rename_datasets(figure.chart().to_dict(validate=False))


def main() -> None:
    print(f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    print(f"{'panel':10s} {'part':28s} min / median (ms)")
    smoothed = sdp.panels.smoothed_dp(n=1000, epsilon_points=6, max_n=2000)
    result = smoothed.compute()
    fig = display.delta_vs_epsilon_figure(result.to_frame(), "t", note=monte_carlo_note(result))
    election = sdp.panels.election()
    frame = election.compute()
    noise = sdp.panels.noise_comparison()
    table = noise.compute()
    share = pd.Series(np.random.default_rng(0).beta(5, 4, 500), name="share")
    release = sdp.panels.release(share, bounds=(0, 1))
    for _ in range(3):
        release.draw()
    rows: list[tuple[str, str, Callable[[], Any]]] = [
        ("smoothed", "core (n = 1000, 6 ε, exact)", smoothed.compute),
        ("smoothed", "figure", lambda: display.delta_vs_epsilon_figure(result.to_frame(), "t", note=None)),
        ("smoothed", "rows", fig.rows),
        ("smoothed", "Altair chart (before)", lambda: altair_path(fig)),
        ("smoothed", "refresh", smoothed.refresh),
        ("election", "core (26 elections, cached)", election.compute),
        ("election", "figure", lambda: display.profile_figure(frame, x="year", title="t")),
        ("election", "rows", display.profile_figure(frame, x="year", title="t").rows),
        ("election", "Altair chart (before)", lambda: altair_path(display.profile_figure(frame, "year", title="t"))),
        ("election", "refresh", election.refresh),
        ("noise", "core (compare_noise, 80 γ)", noise.compute),
        ("noise", "figure", lambda: display.noise_figure(table, gamma=0.1, title="t")),
        ("noise", "rows", display.noise_figure(table, gamma=0.1, title="t").rows),
        ("noise", "Altair chart (before)", lambda: altair_path(display.noise_figure(table, gamma=0.1, title="t"))),
        ("noise", "refresh", noise.refresh),
        ("release", "refresh (3 releases)", release.refresh),
        ("release", "Altair chart (before)", lambda: altair_path(release._build_figure())),
    ]
    for panel, part, fn in rows:
        print(f"{panel:10s} {part:28s} {timed(fn)}")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
