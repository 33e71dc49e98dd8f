"""Run the tutorial notebooks: headless into HTML reports, or open them in JupyterLab.

``python -m smoothdp_nb tutorials --out reports/`` executes every
``NN_*.ipynb`` notebook shipped in the package (``smoothdp_nb/notebooks``, found
with :mod:`importlib.resources`, so from any directory) top to bottom in a fresh kernel of the running
interpreter and writes ``reports/NN_*.html`` (the notebook as a course
handout, see :mod:`smoothdp_nb.reports`) plus ``reports/index.html`` (the
contents page: title, status, run time and headline numbers of each
notebook).  ``--ci`` sets ``SMOOTHDP_CI=1`` (each notebook's ``parameters``
cell then uses small sizes).  ``--lab`` launches JupyterLab on the notebooks
instead (the ``lab`` extra: ``pip install "smoothdp_nb[lab]"``); from an
installed package it opens copies in ``./smoothdp-tutorials``.

While it runs, a progress bar on the terminal counts the code cells of all
notebooks and names the notebook and cell executing (without a terminal, one
line per notebook started and finished).  The kernels' own stderr (ZeroMQ and
transport warnings) goes to a log file that is printed only when a notebook
fails.  Each kernel is shut down as soon as its notebook finishes, and at
most ``--jobs`` notebooks run at once (default: the CPUs this process may use
-- affinity mask and cgroup quota, see :mod:`smoothdp_nb.core.parallel` --
and at most the number of notebooks), the longest first (a notebook may state
its full-size run time in its metadata, ``"smoothdp": {"expected_seconds":
...}``; the reports keep the contents order).  The kernels' BLAS libraries get
``CPUs // jobs`` threads each (``OPENBLAS_NUM_THREADS`` and the like, unless
already set), so that the notebooks running at once do not oversubscribe the
CPU.  The contents page gives each notebook's wall time and the CPU time of
its kernel's process tree (the kernel, its pools and their workers).

Needs the ``tutorials`` extra (``nbclient``, ``nbformat``, ``ipykernel``,
``markdown-it-py``, ``mdit-py-plugins``, ``latex2mathml``).  HTML is written
by :mod:`smoothdp_nb.reports` rather than nbconvert, whose default template
loads require.js and MathJax from a CDN: the reports must open offline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

__all__ = ["default_jobs", "execute", "find_notebooks", "main", "run_all", "to_html"]

_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_MODEL_ID = re.compile(r"^[0-9a-zA-Z_-]{1,64}$")
#: a logger that swallows nbclient's and jupyter_client's chatter (kernel died, TCP, ...)
_QUIET = logging.getLogger("smoothdp_nb.tutorials.kernel")
_QUIET.setLevel(logging.CRITICAL)
_QUIET.propagate = False


def _default_dir() -> Path:
    """The tutorial notebooks shipped inside the package (``smoothdp_nb/notebooks``).

    Found with :mod:`importlib.resources`, so the runner works from any directory once the
    package is installed (a wheel, an editable install or a source checkout alike).
    """
    from importlib.resources import files

    shipped = files("smoothdp_nb").joinpath("notebooks")
    if isinstance(shipped, Path):
        return shipped
    # an installation that is not a directory tree (a zip): the notebooks have no path to run from
    raise FileNotFoundError(f"the tutorial notebooks are not on the file system ({shipped}); pass --notebooks DIR")


def _source_checkout() -> bool:
    """True when the package runs from a clone (editable install or PYTHONPATH), not from site-packages."""
    return (Path(__file__).resolve().parents[1] / "pyproject.toml").is_file()


def _numbers(notebooks: list[Path]) -> str:
    """``01..07`` (a run of consecutive numbers) or ``01, 03, 07``."""
    nums = sorted({p.name[:2] for p in notebooks})
    if not nums:
        return "none"
    consecutive = [int(n) for n in nums] == list(range(int(nums[0]), int(nums[0]) + len(nums)))
    return f"{nums[0]}..{nums[-1]}" if consecutive and len(nums) > 2 else ", ".join(nums)


def find_notebooks(directory: Path, only: list[str] | None = None) -> list[Path]:
    """The ``NN_*.ipynb`` notebooks of ``directory``, sorted; ``only`` keeps those whose name starts so."""
    nbs = sorted(Path(directory).glob("[0-9][0-9]_*.ipynb"))
    if only:
        nbs = [p for p in nbs if any(p.name.startswith(o) or p.stem == o for o in only)]
    return nbs


def _kernel_dir() -> tuple[Path, str]:
    """A temporary kernelspec pointing at this interpreter (so the notebooks see this install)."""
    d = Path(tempfile.mkdtemp(prefix="smoothdp-kernel-"))
    name = "smoothdp-tutorials"
    spec = d / "kernels" / name
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "smoothdp tutorials",
                "language": "python",
            }
        )
    )
    return d, name


# -- progress ---------------------------------------------------------------------------------
class _Progress:
    """One overall bar over the code cells of every notebook, naming what is running.

    Without a terminal (CI logs, pytest) the bar is off and each notebook
    prints one line when it starts and one when it ends.
    """

    def __init__(self, total_cells: int, stream: TextIO, enabled: bool | None) -> None:
        self.stream = stream
        self.running: dict[str, str] = {}
        tty = enabled if enabled is not None else stream.isatty()
        self.bar = None
        if tty:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total_cells,
                unit="cell",
                file=stream,
                dynamic_ncols=True,
                leave=False,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} cells [{elapsed}]",
            )

    def say(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def start_notebook(self, name: str, cells: int) -> None:
        if self.bar is None:
            self.say(f"{name:<32} running ({cells} code cells)")
            return
        self.running[name] = f"{name.split('_', 1)[0]} starting kernel"
        self._describe()

    def _describe(self) -> None:
        assert self.bar is not None
        self.bar.set_description_str(" | ".join(v for _, v in sorted(self.running.items())), refresh=True)

    def cell(self, name: str, k: int, n: int, source: str) -> None:
        if self.bar is None:
            return
        first = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
        self.running[name] = f"{name.split('_', 1)[0]} cell {k}/{n}" + (f" `{first[:28]}`" if first else "")
        self._describe()

    def advance(self, cells: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(cells)

    def end_notebook(self, name: str) -> None:
        self.running.pop(name, None)
        if self.bar is not None:
            self._describe()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _client_class() -> type:
    """NotebookClient that reports progress and snapshots live panels after each cell."""
    import nbclient

    class ReportClient(nbclient.NotebookClient):
        progress: _Progress | None = None
        label: str = ""
        interrupted: list[bool] | None = None  # shared by the notebooks of one run

        async def _async_cleanup_kernel(self) -> None:
            # nbclient calls this from its SIGINT/SIGTERM handler (with a kernel manager
            # passed in, it does not call it at the end of a run): note the interruption
            # so that the run stops instead of going on with the next notebook
            if self.interrupted is not None:
                self.interrupted.append(True)
            await super()._async_cleanup_kernel()

        async def async_execute_cell(
            self, cell: Any, cell_index: int, execution_count: int | None = None, store_history: bool = True
        ) -> Any:
            if cell.cell_type != "code" or not cell.source.strip():
                return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            code = [i for i, c in enumerate(self.nb.cells) if c.cell_type == "code"]
            if self.progress is not None:
                self.progress.cell(self.label, code.index(cell_index) + 1, len(code), cell.source)
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            await self._snapshot_widgets(cell)
            if self.progress is not None:
                self.progress.advance()
            return cell

        async def _snapshot_widgets(self, cell: Any) -> None:
            """Ask the kernel for a static picture of each live panel the cell displayed."""
            for out in cell.get("outputs", []):
                view = out.get("data", {}).get(_WIDGET_MIME)
                if not view or "image/svg+xml" in out["data"]:
                    continue
                model_id = str(view.get("model_id", ""))
                if not _MODEL_ID.match(model_id):
                    continue
                expr = (
                    "__import__('smoothdp_nb.reports.snapshot', fromlist=['widget_snapshot'])"
                    f".widget_snapshot({model_id!r})"
                )
                assert self.kc is not None  # inside async_execute: the client is connected
                msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions={"s": expr})
                reply = await self.async_wait_for_reply(msg_id)
                found = (reply or {}).get("content", {}).get("user_expressions", {}).get("s", {})
                snap = found.get("data", {}).get("application/json") if found.get("status") == "ok" else None
                if not snap:
                    continue
                if snap.get("svg"):
                    out["data"]["image/svg+xml"] = snap["svg"]
                out.setdefault("metadata", {})["smoothdp_snapshot"] = {
                    "title": snap.get("title"),
                    "controls": list(snap.get("controls", [])),
                }

    return ReportClient


class _Interrupted(Exception):
    """The user pressed Ctrl-C (or the run got SIGTERM) while a notebook ran."""


async def _execute_async(
    path: Path,
    kernel_dir: Path,
    kernel_name: str,
    *,
    timeout: int,
    env: dict,
    progress: _Progress | None,
    stderr_log: Path | None,
    interrupted: list[bool] | None = None,
    cpu: list[float] | None = None,
) -> Any:
    """Execute one notebook in a fresh kernel, shut the kernel down, return the notebook.

    Raises ``nbclient.exceptions.CellExecutionError`` (and others) with the
    partly executed notebook in ``exc.notebook``.  ``cpu``, if given, receives
    the CPU seconds of the kernel's process tree (measured just before the
    kernel is shut down; nothing where it cannot be measured).
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    nb = nbformat.read(path, as_version=4)
    ksm = KernelSpecManager(kernel_dirs=[str(kernel_dir / "kernels")], ensure_native_kernel=False, log=_QUIET)
    km = AsyncKernelManager(kernel_name=kernel_name, kernel_spec_manager=ksm, log=_QUIET)
    client = _client_class()(
        nb,
        km=km,
        kernel_name=kernel_name,
        timeout=timeout,
        log=_QUIET,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.progress, client.label, client.interrupted = progress, path.stem, interrupted
    # a local file, closed below; opening it does not hold the event loop up noticeably
    log = open(stderr_log, "wb") if stderr_log is not None else None
    try:
        sink = log if log is not None else subprocess.DEVNULL
        await client.async_execute(env={**os.environ, **env}, stderr=sink, stdout=sink)
    except Exception as exc:
        if interrupted:
            raise _Interrupted from None
        exc.notebook = nb  # type: ignore[attr-defined]
        raise
    finally:
        # nbclient leaves a kernel it did not create running: stop it now, not at exit
        # (now=True: the notebook is done; a polite shutdown request costs 1-2 s per kernel)
        try:
            pid = getattr(getattr(km, "provisioner", None), "pid", None)
            used = _tree_cpu_seconds(pid) if cpu is not None and isinstance(pid, int) else None
            if used is not None and cpu is not None:
                cpu.append(used)
            if client.kc is not None:
                client.kc.stop_channels()
            if km is not None and km.has_kernel:
                await km.shutdown_kernel(now=True)
        finally:
            if log is not None:
                log.close()
    code = [c for c in nb.cells if c.cell_type == "code"]
    missing = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    if missing:
        stopped = RuntimeError(f"{path.name}: code cells {missing} did not run")
        stopped.notebook = nb  # type: ignore[attr-defined]
        raise stopped
    return nb


def execute(path: Path, kernel_dir: Path, kernel_name: str, timeout: int = 1800, env: dict | None = None) -> Any:
    """Execute one notebook in a fresh kernel; returns the executed notebook (raises on error).

    The kernel is shut down before this returns; its stderr is discarded.
    """
    return asyncio.run(
        _execute_async(
            Path(path), kernel_dir, kernel_name, timeout=timeout, env=env or {}, progress=None, stderr_log=None
        )
    )


def to_html(nb: Any, title: str) -> str:
    """Self-contained, offline HTML of an executed notebook (see :func:`smoothdp_nb.reports.notebook_page`)."""
    from .reports import notebook_page

    return notebook_page(nb, title)


def _tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) of a process and all its descendants, living or reaped.

    A process's own times plus its reaped children's (``children_user`` and
    ``children_system``: a notebook's finished pool workers), over the process
    and every living descendant (a pool still running, a forkserver and the
    workers it reaped).  None without psutil or once the process is gone.
    """
    try:
        import psutil
    except ImportError:
        return None
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    total = 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
        except psutil.Error:  # exited meanwhile: counted by its parent once reaped
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def default_jobs(notebooks: int) -> int:
    """Notebooks run at once by default: the CPUs this process may use, at most ``notebooks``."""
    from .core.parallel import available_cpus

    return max(1, min(available_cpus(), notebooks))


def _kernel_threads_env(jobs: int) -> dict[str, str]:
    """BLAS/OpenMP threads per kernel so that ``jobs`` kernels at once fit the available CPUs.

    Variables already set in this environment are left as they are.
    """
    from .core.parallel import available_cpus

    threads = str(max(1, available_cpus() // jobs))
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    return {k: threads for k in names if k not in os.environ}


# -- the whole run ------------------------------------------------------------------------------
@dataclass
class _Result:
    path: Path
    nb: Any
    seconds: float
    error: str | None
    cpu_seconds: float | None = None


def _short_error(exc: BaseException) -> str:
    text = str(exc).strip()
    ename = getattr(exc, "ename", None)
    if ename:  # CellExecutionError: the kernel's exception name and message
        return f"{ename}: {getattr(exc, 'evalue', '')}".strip()
    last = text.splitlines()[-1] if text else ""
    return f"{type(exc).__name__}: {last}" if last else type(exc).__name__


def _kernel_log_tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    kept = [ln for ln in text.splitlines() if ln.strip() and "running over TCP without encryption" not in ln]
    return "\n".join(kept[-lines:])


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
    """
    import nbformat

    from .reports import (
        Entry,
        RunInfo,
        headline_html,
        index_page,
        notebook_page,
        notebook_summary,
        notebook_title,
    )

    if jobs is None:
        jobs = default_jobs(len(notebooks))
    for name, value in (("jobs", jobs), ("timeout", timeout)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer >= 1, got {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value}")
    stream = stream if stream is not None else sys.stderr
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sources = {p: nbformat.read(p, as_version=4) for p in notebooks}
    entries = {p: Entry(p.stem, notebook_title(nb, p.stem), notebook_summary(nb)) for p, nb in sources.items()}
    counts = {p: sum(1 for c in nb.cells if c.cell_type == "code" and c.source.strip()) for p, nb in sources.items()}
    run = RunInfo(mode="ci" if ci else "full", version=_version())
    stems = [p.stem for p in notebooks]
    bar = _Progress(sum(counts.values()), stream, progress)
    env = {"SMOOTHDP_CI": "1"} if ci else {}
    env.update(_kernel_threads_env(jobs))
    load_before = _load()
    kdir, kname = _kernel_dir()
    interrupted: list[bool] = []
    t_all = time.perf_counter()

    def write_index(total: float | None = None) -> None:
        info = RunInfo(mode=run.mode, started=run.started, version=run.version, total_seconds=total)
        (out / "index.html").write_text(index_page([entries[p] for p in notebooks], info), encoding="utf-8")

    def finish(res: _Result) -> None:
        p, entry = res.path, entries[res.path]
        entry.seconds, entry.error, entry.cpu_seconds = res.seconds, res.error, res.cpu_seconds
        entry.status = "failed" if res.error else "ok"
        if res.nb is not None:
            i = stems.index(p.stem)
            neighbours = (stems[i - 1] if i else None, stems[i + 1] if i + 1 < len(stems) else None)
            page = notebook_page(res.nb, p.stem, run=run, error=res.error, neighbours=neighbours, seconds=res.seconds)
            (out / f"{p.stem}.html").write_text(page, encoding="utf-8")
            entry.has_page = True
            entry.headline = headline_html(res.nb)
        write_index()
        status = "ok" if not res.error else f"FAILED: {res.error}"
        used = f"CPU {res.cpu_seconds:7.1f} s" if res.cpu_seconds is not None else "CPU       - "
        bar.say(f"{p.name:<32} {res.seconds:7.1f} s  {used}  {status}")

    async def one(p: Path, gate: asyncio.Semaphore) -> None:
        async with gate:
            if interrupted:  # Ctrl-C while this one waited for its turn
                return
            bar.start_notebook(p.stem, counts[p])
            log = kdir / f"{p.stem}.stderr.log"
            t0 = time.perf_counter()
            nb, error = None, None
            cpu: list[float] = []
            try:
                nb = await _execute_async(
                    p,
                    kdir,
                    kname,
                    timeout=timeout,
                    env=env,
                    progress=bar,
                    stderr_log=log,
                    interrupted=interrupted,
                    cpu=cpu,
                )
            except _Interrupted:
                raise
            except Exception as exc:
                nb, error = getattr(exc, "notebook", None), _short_error(exc)
                ran = sum(
                    1
                    for c in (nb.cells if nb is not None else [])
                    if c.cell_type == "code" and c.source.strip() and c.get("execution_count") is not None
                )
                bar.advance(max(0, counts[p] - ran))
                tail = _kernel_log_tail(log)
                if tail:
                    bar.say(f"{p.name}: kernel stderr (last lines):\n{tail}")
            bar.end_notebook(p.stem)
            finish(_Result(p, nb, time.perf_counter() - t0, error, cpu[0] if cpu else None))

    def expected_seconds(p: Path) -> float:
        hint = sources[p].metadata.get("smoothdp", {}).get("expected_seconds", 0)
        return float(hint) if isinstance(hint, (int, float)) and not isinstance(hint, bool) else 0.0

    # longest first (a notebook's metadata "smoothdp": {"expected_seconds": ...}, else
    # contents order): the long one then overlaps the short ones instead of running last
    start_order = sorted(notebooks, key=lambda p: -expected_seconds(p))

    async def main_loop() -> None:
        gate = asyncio.Semaphore(jobs)
        tasks = [asyncio.create_task(one(p, gate)) for p in start_order]
        try:
            await asyncio.gather(*tasks)
        except _Interrupted:
            # stop the other notebooks too (their kernels are shut down as they unwind)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    write_index()
    try:
        asyncio.run(main_loop())
    except (KeyboardInterrupt, asyncio.CancelledError, _Interrupted):
        # Ctrl-C: nbclient's handler has stopped the kernels; the finished reports stay
        bar.close()
        write_index(time.perf_counter() - t_all)
        raise KeyboardInterrupt from None
    finally:
        bar.close()
        shutil.rmtree(kdir, ignore_errors=True)
    total = time.perf_counter() - t_all
    write_index(total)
    failed = sum(1 for e in entries.values() if e.status != "ok")
    no_headline = [e.stem for e in entries.values() if e.status == "ok" and e.headline is None]
    if no_headline:  # for the notebooks' authors; the contents page shows their summary only
        print(
            f"no cell tagged 'headline' in {', '.join(no_headline)} (see smoothdp_nb/notebooks/README.md)",
            file=stream,
            flush=True,
        )
    cpus = [e.cpu_seconds for e in entries.values() if e.cpu_seconds is not None]
    used = f"kernels' CPU {sum(cpus):.1f} s, " if cpus else ""
    print(
        f"{len(notebooks) - failed}/{len(notebooks)} notebooks ran in {total:.1f} s ({used}{jobs} at once; "
        f"load average {load_before} before, {_load()} after); reports in {out.resolve()}/index.html",
        file=stream,
        flush=True,
    )
    return failed


def _load() -> str:
    """The 1-minute load average (for the run's summary line: timings on a shared machine)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "-"


def _version() -> str:
    from . import __version__

    return __version__


def _run(args: argparse.Namespace) -> int:
    missing = [
        m
        for m in ("nbclient", "nbformat", "ipykernel", "markdown_it", "mdit_py_plugins", "latex2mathml")
        if not _has_module(m)
    ]
    if missing:
        print(f'missing {", ".join(missing)}: pip install "smoothdp_nb[tutorials]"', file=sys.stderr)
        return 2
    if Path(args.out).exists() and not Path(args.out).is_dir():
        print(f"--out must be a directory, got the file {args.out}", file=sys.stderr)
        return 2
    every = find_notebooks(args.notebooks)
    if not every:
        print(f"no notebooks NN_*.ipynb in {args.notebooks}", file=sys.stderr)
        return 2
    nbs = find_notebooks(args.notebooks, args.only)
    unknown = [o for o in args.only or [] if not find_notebooks(args.notebooks, [o])]
    if unknown or not nbs:
        which = ", ".join(unknown) if unknown else " ".join(args.only or [])
        print(
            f"no notebook numbered {which}; available: {_numbers(every)} (e.g. --only {every[0].name[:2]})",
            file=sys.stderr,
        )
        return 2
    try:
        failed = run_all(nbs, Path(args.out), ci=args.ci, timeout=args.timeout, jobs=args.jobs)
    except KeyboardInterrupt:
        print(f"interrupted; the reports finished so far are in {Path(args.out).resolve()}", file=sys.stderr)
        return 130
    return 1 if failed else 0


def _lab(args: argparse.Namespace) -> int:
    # JupyterLab runs as `python -m jupyterlab` of this interpreter: a `jupyter` command elsewhere
    # on PATH does not count (it left "No module named jupyterlab" in an activated venv)
    if not _has_module("jupyterlab"):
        print(
            "JupyterLab is not installed in this environment "
            f'({sys.prefix}): pip install "smoothdp_nb[lab]" (or pip install jupyterlab)',
            file=sys.stderr,
        )
        return 2
    where = Path(args.notebooks)
    if args.shipped and not _source_checkout():
        # the installed copies stay pristine: open (and edit) a copy in the working directory
        where = Path(args.workdir).resolve()
        where.mkdir(parents=True, exist_ok=True)
        for nb in find_notebooks(args.notebooks):
            if not (where / nb.name).exists():
                shutil.copy2(nb, where / nb.name)
        print(f"the tutorials are in {where} (copies; existing files are kept)", file=sys.stderr)
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={where}"]
    nbs = find_notebooks(where)
    if nbs:
        cmd.append(str(nbs[0].name))
    return subprocess.call(cmd, cwd=where)


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _positive_int(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer (>= 1), got {value}")
        return value

    return parse


def main(argv: list[str] | None = None) -> int:
    """``python -m smoothdp_nb tutorials [--out DIR] [--ci] [--only NN ...] [--jobs N] [--lab]``."""
    parser = argparse.ArgumentParser(
        prog="python -m smoothdp_nb tutorials",
        description="Run the tutorial notebooks shipped with the package: headless into HTML reports, "
        "or open them in JupyterLab (--lab).",
    )
    parser.add_argument("--out", default="reports", help="directory for the HTML reports (default: reports/)")
    parser.add_argument(
        "--notebooks",
        type=Path,
        default=None,
        help="notebook directory (default: the notebooks installed with the package)",
    )
    parser.add_argument(
        "--workdir",
        default="smoothdp-tutorials",
        help="--lab on an installed package: where the notebooks are copied to be opened "
        "(default: ./smoothdp-tutorials)",
    )
    parser.add_argument("--only", nargs="*", help="notebook prefixes to run, e.g. 01 03")
    parser.add_argument("--ci", action="store_true", help="small parameters (sets SMOOTHDP_CI=1)")
    parser.add_argument("--timeout", type=_positive_int("--timeout"), default=1800, help="per-cell timeout in seconds")
    parser.add_argument(
        "--jobs",
        type=_positive_int("--jobs"),
        default=None,
        help="notebooks executed at once, each in its own kernel (default: the CPUs this process may use)",
    )
    parser.add_argument("--lab", action="store_true", help="launch JupyterLab on the notebooks instead")
    args = parser.parse_args(argv)
    args.shipped = args.notebooks is None
    args.notebooks = Path(args.notebooks or _default_dir()).resolve()
    return _lab(args) if args.lab else _run(args)


if __name__ == "__main__":
    sys.exit(main())
