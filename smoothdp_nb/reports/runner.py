"""Run notebooks headless into HTML handouts (``python -m smoothdp_nb tutorials``).

:func:`run_all` executes notebooks top to bottom, each in a fresh kernel of
the running interpreter (:mod:`smoothdp_nb.reports.execute`), and writes
``out/NN_*.html`` (the notebook as a course handout, see
:func:`smoothdp_nb.reports.page.notebook_page`) plus ``out/index.html`` (the
contents page: title, status, run time and headline numbers of each notebook,
rewritten as each notebook finishes).

While it runs, a progress bar on the terminal counts the code cells of all
notebooks and names the notebook and cell executing (without a terminal, one
line per notebook started and finished).  The kernels' own stderr (ZeroMQ and
transport warnings) goes to a log file that is printed only when a notebook
fails.  At most ``jobs`` notebooks run at once (default: the CPUs this process
may use -- affinity mask and cgroup quota, see :mod:`smoothdp_nb.core.runtime.parallel`
-- and at most the number of notebooks), the longest first (a notebook may
state its full-size run time in its metadata, ``"smoothdp": {"expected_seconds":
...}``; the reports keep the contents order).  The kernels' BLAS libraries get
``CPUs // jobs`` threads each (``OPENBLAS_NUM_THREADS`` and the like, unless
already set), so that the notebooks running at once do not oversubscribe the
CPU.  The contents page gives each notebook's wall time and the CPU time of
its kernel's process tree (the kernel, its pools and their workers).

HTML is written by :mod:`smoothdp_nb.reports.page` rather than nbconvert, whose
default template loads require.js and MathJax from a CDN: the reports must
open offline.  Needs the ``tutorials`` extra.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, TextIO

from smoothdp_nb import __version__
from smoothdp_nb.core.runtime import parallel
from smoothdp_nb.reports.execute import Interrupted, execute_async, kernel_dir, kernel_log_tail, short_error
from smoothdp_nb.reports.page import (
    Entry,
    RunInfo,
    headline_html,
    index_page,
    notebook_page,
    notebook_summary,
    notebook_title,
)
from smoothdp_nb.reports.run_progress import RunProgress

__all__ = ["default_jobs", "find_notebooks", "kernel_threads_env", "run_all", "shipped_notebooks"]


def shipped_notebooks() -> Path:
    """The tutorial notebooks shipped inside the package (``smoothdp_nb/notebooks``).

    Found with :mod:`importlib.resources`, so the runner works from any directory once the
    package is installed (a wheel, an editable install or a source checkout alike).

    Raises
    ------
    FileNotFoundError
        When the package is installed in a form that is not a directory tree (a zip).
    """
    shipped = files("smoothdp_nb").joinpath("notebooks")
    if isinstance(shipped, Path):
        return shipped
    # an installation that is not a directory tree (a zip): the notebooks have no path to run from
    raise FileNotFoundError(f"the tutorial notebooks are not on the file system ({shipped}); pass --notebooks DIR")


def find_notebooks(directory: Path, only: list[str] | None = None) -> list[Path]:
    """The ``NN_*.ipynb`` notebooks of ``directory``, sorted; ``only`` keeps those whose name starts so."""
    nbs = sorted(Path(directory).glob("[0-9][0-9]_*.ipynb"))
    if only:
        nbs = [p for p in nbs if any(p.name.startswith(o) or p.stem == o for o in only)]
    return nbs


def default_jobs(notebooks: int) -> int:
    """Notebooks run at once by default: the CPUs this process may use, at most ``notebooks``."""
    return max(1, min(parallel.available_cpus(), notebooks))


def kernel_threads_env(jobs: int) -> dict[str, str]:
    """BLAS/OpenMP threads per kernel so that ``jobs`` kernels at once fit the available CPUs.

    Variables already set in this environment are left as they are.
    """
    threads = str(max(1, parallel.available_cpus() // jobs))
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    return {k: threads for k in names if k not in os.environ}


def _load() -> str:
    """The 1-minute load average (for the run's summary line: timings on a shared machine)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "-"


def _check_counts(jobs: int, timeout: int) -> None:
    for name, value in (("jobs", jobs), ("timeout", timeout)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer >= 1, got {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value}")


def _expected_seconds(nb: Any) -> float:
    """A notebook's own estimate of its full-size run time (metadata ``smoothdp.expected_seconds``), else 0."""
    hint = nb.metadata.get("smoothdp", {}).get("expected_seconds", 0)
    return float(hint) if isinstance(hint, (int, float)) and not isinstance(hint, bool) else 0.0


@dataclass
class _Finished:
    """What one notebook's run left: the (partly) executed notebook, its times, its error."""

    path: Path
    nb: Any
    seconds: float
    error: str | None
    cpu_seconds: float | None = None


class _Run:
    """The state of one :func:`run_all`: the notebooks, their contents entries, the kernelspec and the bar."""

    def __init__(self, notebooks: list[Path], out: Path, *, ci: bool, timeout: int, jobs: int) -> None:
        import nbformat  # deferred: the tutorials extra, needed only to run notebooks

        self.notebooks, self.out, self.timeout, self.jobs = notebooks, out, timeout, jobs
        self.sources = {p: nbformat.read(p, as_version=4) for p in notebooks}
        self.entries: dict[Path, Entry] = {
            p: Entry(p.stem, notebook_title(nb, p.stem), notebook_summary(nb)) for p, nb in self.sources.items()
        }
        self.counts = {
            p: sum(1 for c in nb.cells if c.cell_type == "code" and c.source.strip()) for p, nb in self.sources.items()
        }
        self.info: RunInfo = RunInfo(mode="ci" if ci else "full", version=__version__)
        self.env = {"SMOOTHDP_CI": "1"} if ci else {}
        self.env.update(kernel_threads_env(jobs))
        self.interrupted: list[bool] = []
        self.bar: RunProgress
        self.kdir, self.kname = Path(), ""

    def write_index(self, total: float | None = None) -> None:
        """(Re)write the contents page with what is known so far."""
        run = self.info
        info = RunInfo(mode=run.mode, started=run.started, version=run.version, total_seconds=total)
        page = index_page([self.entries[p] for p in self.notebooks], info)
        (self.out / "index.html").write_text(page, encoding="utf-8")

    def finish(self, res: _Finished) -> None:
        """Record a finished notebook: its handout, its contents entry, one line on the stream."""
        p, entry = res.path, self.entries[res.path]
        entry.seconds, entry.error, entry.cpu_seconds = res.seconds, res.error, res.cpu_seconds
        entry.status = "failed" if res.error else "ok"
        if res.nb is not None:
            stems = [q.stem for q in self.notebooks]
            i = stems.index(p.stem)
            neighbours = (stems[i - 1] if i else None, stems[i + 1] if i + 1 < len(stems) else None)
            page = notebook_page(
                res.nb, p.stem, run=self.info, error=res.error, neighbours=neighbours, seconds=res.seconds
            )
            (self.out / f"{p.stem}.html").write_text(page, encoding="utf-8")
            entry.has_page = True
            entry.headline = headline_html(res.nb)
        self.write_index()
        status = "ok" if not res.error else f"FAILED: {res.error}"
        used = f"CPU {res.cpu_seconds:7.1f} s" if res.cpu_seconds is not None else "CPU       - "
        self.bar.say(f"{p.name:<32} {res.seconds:7.1f} s  {used}  {status}")

    def _failed(self, p: Path, exc: Exception, log: Path) -> tuple[Any, str]:
        """The partly executed notebook and the error line; the bar skips the cells that never ran."""
        nb = getattr(exc, "notebook", None)
        cells = nb.cells if nb is not None else []
        ran = sum(
            1 for c in cells if c.cell_type == "code" and c.source.strip() and c.get("execution_count") is not None
        )
        self.bar.advance(max(0, self.counts[p] - ran))
        tail = kernel_log_tail(log)
        if tail:
            self.bar.say(f"{p.name}: kernel stderr (last lines):\n{tail}")
        return nb, short_error(exc)

    async def one(self, p: Path, gate: asyncio.Semaphore) -> None:
        """Run notebook ``p`` when ``gate`` lets it, then record it."""
        async with gate:
            if self.interrupted:  # Ctrl-C while this one waited for its turn
                return
            self.bar.start_notebook(p.stem, self.counts[p])
            log = self.kdir / f"{p.stem}.stderr.log"
            t0 = time.perf_counter()
            nb, error = None, None
            cpu: list[float] = []
            try:
                nb = await execute_async(
                    p,
                    self.kdir,
                    self.kname,
                    timeout=self.timeout,
                    env=self.env,
                    progress=self.bar,
                    stderr_log=log,
                    interrupted=self.interrupted,
                    cpu=cpu,
                )
            except Interrupted:
                raise
            except Exception as exc:
                nb, error = self._failed(p, exc, log)
            self.bar.end_notebook(p.stem)
            self.finish(_Finished(p, nb, time.perf_counter() - t0, error, cpu[0] if cpu else None))

    async def all(self) -> None:
        """Every notebook, ``jobs`` at once, the longest first; Ctrl-C stops the others too."""
        # longest first (a notebook's metadata "smoothdp": {"expected_seconds": ...}, else
        # contents order): the long one then overlaps the short ones instead of running last
        order = sorted(self.notebooks, key=lambda p: -_expected_seconds(self.sources[p]))
        gate = asyncio.Semaphore(self.jobs)
        tasks = [asyncio.create_task(self.one(p, gate)) for p in order]
        try:
            await asyncio.gather(*tasks)
        except Interrupted:
            # stop the other notebooks too (their kernels are shut down as they unwind)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    def summary(self, stream: TextIO, total: float, load_before: str) -> int:
        """Print the closing lines; returns the number of notebooks that did not run to the end."""
        entries = self.entries.values()
        failed = sum(1 for e in entries if e.status != "ok")
        no_headline = [e.stem for e in entries if e.status == "ok" and e.headline is None]
        if no_headline:  # for the notebooks' authors; the contents page shows their summary only
            print(
                f"no cell tagged 'headline' in {', '.join(no_headline)} (see smoothdp_nb/notebooks/README.md)",
                file=stream,
                flush=True,
            )
        cpus = [e.cpu_seconds for e in entries if e.cpu_seconds is not None]
        used = f"kernels' CPU {sum(cpus):.1f} s, " if cpus else ""
        n = len(self.notebooks)
        print(
            f"{n - failed}/{n} notebooks ran in {total:.1f} s ({used}{self.jobs} at once; "
            f"load average {load_before} before, {_load()} after); reports in {self.out.resolve()}/index.html",
            file=stream,
            flush=True,
        )
        return failed


def run_all(
    notebooks: list[Path],
    out: Path,
    *,
    ci: bool = False,
    timeout: int = 1800,
    jobs: int | None = None,
    progress: bool | None = None,
    stream: TextIO | None = None,
) -> int:
    """Execute ``notebooks`` into ``out``/NN_*.html and ``out``/index.html; the number that failed.

    Parameters
    ----------
    notebooks : list of Path
        The notebooks, in contents order.
    out : Path
        Directory for the reports (created).
    ci : bool
        Set ``SMOOTHDP_CI=1`` in the kernels (small parameters).
    timeout : int
        Per-cell timeout in seconds.
    jobs : int, optional
        Notebooks executed at once (each in its own kernel), at least 1;
        default :func:`default_jobs` (the CPUs this process may use).
    progress : bool, optional
        Force the terminal progress bar on or off (default: on for a terminal).
    stream : text file, optional
        Where progress goes (default ``sys.stderr``); finished-notebook lines go there too.

    Returns
    -------
    int
        The number of notebooks that did not run to the end.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C (or SIGTERM): the kernels are stopped, the finished reports and the contents page stay.
    """
    if jobs is None:
        jobs = default_jobs(len(notebooks))
    _check_counts(jobs, timeout)
    stream = stream if stream is not None else sys.stderr
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    run = _Run(notebooks, out, ci=ci, timeout=timeout, jobs=jobs)
    run.bar = RunProgress(sum(run.counts.values()), stream, progress)
    load_before = _load()
    run.kdir, run.kname = kernel_dir()
    t_all = time.perf_counter()
    run.write_index()
    try:
        asyncio.run(run.all())
    except (KeyboardInterrupt, asyncio.CancelledError, Interrupted):
        # Ctrl-C: nbclient's handler has stopped the kernels; the finished reports stay
        run.bar.close()
        run.write_index(time.perf_counter() - t_all)
        raise KeyboardInterrupt from None
    finally:
        run.bar.close()
        shutil.rmtree(run.kdir, ignore_errors=True)
    total = time.perf_counter() - t_all
    run.write_index(total)
    return run.summary(stream, total, load_before)
