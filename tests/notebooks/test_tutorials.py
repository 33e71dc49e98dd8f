"""The tutorials runner's scheduling (smoothdp_nb.reports.runner.run_all), without kernels."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import nbformat
import pytest

from smoothdp_nb.reports import execute, runner


def _notebook(path: Path, expected: float | None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"), nbformat.v4.new_code_cell("1 + 1")]
    if expected is not None:
        nb.metadata["smoothdp"] = {"expected_seconds": expected}
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("jobs", [1, 2])
def test_longest_notebook_starts_first_and_reports_keep_contents_order(tmp_path, monkeypatch, jobs):
    paths = [
        _notebook(tmp_path / "01_a.ipynb", None),
        _notebook(tmp_path / "02_b.ipynb", 5),
        _notebook(tmp_path / "03_c.ipynb", None),
        _notebook(tmp_path / "04_d.ipynb", 300),
    ]
    started: list[str] = []

    async def fake_execute(path, kernel_dir, kernel_name, **kw):
        started.append(path.stem)
        await asyncio.sleep(0.01)
        nb = nbformat.read(path, as_version=4)
        nb.cells[1].execution_count = 1
        return nb

    monkeypatch.setattr(runner, "execute_async", fake_execute)
    out = tmp_path / "reports"
    failed = runner.run_all(paths, out, jobs=jobs, progress=False, stream=io.StringIO())
    assert failed == 0
    assert started == ["04_d", "02_b", "01_a", "03_c"]  # by expected seconds, then contents order
    index = (out / "index.html").read_text(encoding="utf-8")
    positions = [index.index(p.stem) for p in paths]
    assert positions == sorted(positions)  # the contents page lists them in contents order


def test_index_reports_wall_and_cpu_time_and_jobs_follow_the_available_cpus(tmp_path, monkeypatch):
    from smoothdp_nb.core.runtime import parallel

    paths = [_notebook(tmp_path / "01_a.ipynb", None), _notebook(tmp_path / "02_b.ipynb", None)]
    seen: list[tuple[int, dict]] = []
    running = [0]

    async def fake_execute(path, kernel_dir, kernel_name, *, env, cpu, **kw):
        running[0] += 1
        seen.append((running[0], dict(env)))
        await asyncio.sleep(0.05)
        running[0] -= 1
        nb = nbformat.read(path, as_version=4)
        nb.cells[1].execution_count = 1
        cpu.append(75.0 if path.stem == "01_a" else 3.25)  # what the kernel's process tree used
        return nb

    monkeypatch.setattr(runner, "execute_async", fake_execute)
    monkeypatch.setattr(parallel, "available_cpus", lambda: 3)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "reports"
    stream = io.StringIO()
    assert runner.run_all(paths, out, progress=False, stream=stream) == 0
    assert max(r for r, _ in seen) == 2  # min(3 CPUs, 2 notebooks) at once
    # 2 kernels on 3 CPUs: one BLAS thread each (2 x 1 <= 3)
    assert all(env["OPENBLAS_NUM_THREADS"] == "1" and env["OMP_NUM_THREADS"] == "1" for _, env in seen)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "CPU 1 min 15 s" in index and "CPU 3.2 s" in index
    assert "CPU time of the kernels 1 min 18 s" in index
    assert "kernels' CPU 78.2 s" in stream.getvalue()
    assert runner.default_jobs(7) == 3 and runner.default_jobs(1) == 1
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")  # the user's own setting is kept
    assert "OPENBLAS_NUM_THREADS" not in runner.kernel_threads_env(1)
    assert runner.kernel_threads_env(1)["OMP_NUM_THREADS"] == "3"


_TREE = r"""
import os, subprocess, sys, time
def burn(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass
burn(0.3)
subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass"])
alive = subprocess.Popen([sys.executable, "-c",
    "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\nprint(time.process_time(), flush=True)\nsys.stdin.read()"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
grandchild = float(alive.stdout.readline())
me = os.times()
print(me.user + me.system + me.children_user + me.children_system + grandchild, flush=True)
sys.stdin.read()
alive.communicate("")
"""


def test_cpu_time_of_a_process_tree_counts_reaped_and_living_descendants():
    """A process that used ~0.3 s itself, ~0.4 s in a finished (reaped) child and
    ~0.4 s in a child still alive: the tree's CPU is what the processes report
    of themselves (os.times inside them), within the little they use after reporting."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", _TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        reported = float(proc.stdout.readline())
        measured = execute.tree_cpu_seconds(proc.pid)
    finally:
        proc.communicate("")
    assert reported >= 1.1
    assert measured is not None
    assert reported - 0.02 <= measured <= reported + 0.5
