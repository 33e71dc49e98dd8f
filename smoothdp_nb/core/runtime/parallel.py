"""How much CPU this process may use, and how the engines use it without oversubscribing.

On a laptop the process may use every core; on Binder, JupyterHub or a CI runner
it usually may not: the scheduler's affinity mask and the cgroup's CPU quota are
both below ``os.cpu_count()``, which counts the host's cores.  A pool or a BLAS
library sized from ``os.cpu_count()`` then starts more busy threads than the
process has CPU, and OpenBLAS's threads, which spin while they wait for work,
burn the difference: on the 2-core reference machine with other jobs running,
the two-vertex engine at n = 10^5 used 10-12 s of CPU with the default BLAS
threads against 2.1-2.3 s with one (benchmarks/README.md).

* :func:`available_cpus` -- the CPUs this process may actually use: the
  affinity mask, the cgroup quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) and
  the environment variable ``SMOOTHDP_CPUS``, whichever is smallest.
* :func:`engine_threads` -- a context manager the engines enter around their
  hot paths: BLAS runs one thread per worker inside it (the engines' BLAS
  products are blocks of at most a few hundred rows, where a thread pool
  synchronises more than it computes), and the caller's limits are restored on
  exit, so numpy used outside the engines keeps its own setting.  (BLAS
  thread counts are per process, and OpenBLAS 0.3.30 ignores a count set from
  a secondary thread once the main thread has set one: an engine called from
  a worker thread after such a setting runs with the main thread's count.)
* :func:`helper_thread` -- the one extra worker of the exact engines (a thread:
  their heavy operations -- BLAS products, correlations, ufuncs -- release the
  GIL, and a thread needs no fork, no pickling and no second interpreter).
* :func:`process_pool` -- a process pool that never forks a threaded process
  (``forkserver`` where it exists, else ``spawn``: ``fork`` from a process with
  threads can deadlock the child, and CPython 3.12+ warns about it), with its
  workers' BLAS threads set so that workers x threads <= available CPUs.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import math
import multiprocessing
import os
import sys
import threading
from collections.abc import Iterator
from multiprocessing.context import BaseContext
from pathlib import Path

__all__ = [
    "ENGINE_BLAS_THREADS",
    "available_cpus",
    "cgroup_cpu_limit",
    "engine_threads",
    "helper_thread",
    "process_pool",
    "safe_mp_context",
]

#: BLAS threads per worker inside the engines (see the module docstring)
ENGINE_BLAS_THREADS = 1

_CGROUP_ROOT = Path("/sys/fs/cgroup")


def _quota_cpus(quota: float, period: float) -> float | None:
    return quota / period if quota > 0 and period > 0 else None


def _cgroup_paths(proc_cgroup: str) -> tuple[str | None, str | None]:
    """(v2 path, v1 cpu-controller path) of this process, from /proc/self/cgroup."""
    v2 = v1 = None
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _ancestors(root: Path, rel: str) -> list[Path]:
    """root/rel and each of its parents up to root (a quota anywhere above applies too)."""
    parts = [p for p in rel.strip("/").split("/") if p]
    return [root.joinpath(*parts[:k]) for k in range(len(parts), -1, -1)]


def cgroup_cpu_limit(root: Path = _CGROUP_ROOT, proc_cgroup: str | None = None) -> float | None:
    """The CPU quota of this process's cgroup in CPUs (e.g. 1.5), or None without one.

    Reads cgroup v2 ``cpu.max`` ("quota period" or "max period") of the
    process's cgroup and of every ancestor, else cgroup v1
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (-1: no quota), and returns
    the smallest quota found.  Inside a container the cgroup paths of
    /proc/self/cgroup may not exist under the mounted hierarchy; the mount's
    own files (the container's cgroup) are read then.

    Parameters
    ----------
    root : Path
        Where the cgroup file system is mounted (tests point it elsewhere).
    proc_cgroup : str, optional
        The contents of /proc/self/cgroup (read when omitted).
    """
    if proc_cgroup is None:
        proc_cgroup = _read(Path("/proc/self/cgroup")) or ""
    v2, v1 = _cgroup_paths(proc_cgroup)
    limits: list[float] = []
    if v2 is not None:
        for d in _ancestors(root, v2):
            text = _read(d / "cpu.max")
            fields = text.split() if text else []
            if len(fields) == 2 and fields[0] != "max":
                try:
                    q = _quota_cpus(float(fields[0]), float(fields[1]))
                except ValueError:
                    q = None
                if q is not None:
                    limits.append(q)
    if not limits:
        for mount in (root / "cpu,cpuacct", root / "cpu"):
            if not mount.is_dir():
                continue
            for d in _ancestors(mount, v1 or "/"):
                quota, period = _read(d / "cpu.cfs_quota_us"), _read(d / "cpu.cfs_period_us")
                if quota is None or period is None:
                    continue
                try:
                    q = _quota_cpus(float(quota), float(period))
                except ValueError:
                    q = None
                if q is not None:
                    limits.append(q)
            break
    return min(limits) if limits else None


def _env_cpus() -> int | None:
    text = os.environ.get("SMOOTHDP_CPUS", "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"SMOOTHDP_CPUS must be a positive integer (CPUs this process may use), got {text!r}")
    return value


def available_cpus() -> int:
    """The number of CPUs this process may keep busy (at least 1).

    The smallest of: the CPUs of the scheduler's affinity mask
    (``os.sched_getaffinity(0)``, else ``os.cpu_count()``); the cgroup CPU
    quota (:func:`cgroup_cpu_limit`), rounded up -- a quota of 1.5 CPUs is used
    in full only by two workers, and workers with one BLAS thread each do not
    spin while throttled; and ``SMOOTHDP_CPUS`` if set (for administrators of
    shared hubs whose limits the process cannot see).

    Raises
    ------
    ValueError
        If ``SMOOTHDP_CPUS`` is set to anything but a positive integer.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity API (macOS, Windows)
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_limit() if sys.platform.startswith("linux") else None
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    env = _env_cpus()
    if env is not None:
        cpus = min(cpus, env)
    return max(1, cpus)


# -- BLAS threads inside the engines ---------------------------------------------------------
# One process-wide gate: the outermost engine call sets the limit and the last one
# to leave restores the caller's limits (engine calls may overlap in several threads,
# and a per-call save/restore would then restore a limit another call had set).
_gate = threading.Lock()
_depth = 0
_limiter: object | None = None
_controller: tuple[tuple[int, int], object] | None = None


def _blas_controller() -> object:
    """threadpoolctl's controller, rebuilt after a fork or new imports (new BLAS libraries)."""
    global _controller
    from threadpoolctl import ThreadpoolController  # deferred: the command line imports this module

    key = (os.getpid(), len(sys.modules))
    if _controller is None or _controller[0] != key:
        _controller = (key, ThreadpoolController())
    return _controller[1]


@contextlib.contextmanager
def engine_threads(blas: int = ENGINE_BLAS_THREADS) -> Iterator[None]:
    """Run the enclosed engine code with ``blas`` BLAS threads, then restore the caller's limits.

    Re-entrant and safe from several threads at once: the outermost entry sets
    the limit, nested or concurrent entries keep it, and the last exit restores
    what the BLAS libraries had before.  While an engine runs, numpy calls made
    by other threads of the process see the same limit (BLAS thread counts are
    per process).

    Parameters
    ----------
    blas : int
        BLAS threads per worker (default :data:`ENGINE_BLAS_THREADS`).
    """
    global _depth, _limiter
    if isinstance(blas, bool) or not isinstance(blas, int) or blas < 1:
        raise ValueError(f"blas must be an integer >= 1 (BLAS threads), got {blas!r}")
    with _gate:
        if _depth == 0:
            _limiter = _blas_controller().limit(limits=blas, user_api="blas")  # type: ignore[attr-defined]
        _depth += 1
    try:
        yield
    finally:
        with _gate:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()  # type: ignore[attr-defined]
                _limiter = None


def helper_thread() -> cf.ThreadPoolExecutor | None:
    """One helper thread for an engine, if this process has a second CPU (None otherwise)."""
    if available_cpus() < 2:
        return None
    return cf.ThreadPoolExecutor(1, thread_name_prefix="smoothdp-helper")


# -- process pools ------------------------------------------------------------------------------
def safe_mp_context() -> BaseContext:
    """``forkserver`` where the platform has it, else ``spawn``: never ``fork``.

    A forked child of a process with threads (a Jupyter kernel always has
    some; so does any process that ran OpenBLAS) inherits their locks in
    whatever state they were, and can deadlock; CPython 3.12+ warns on such a
    fork and 3.14 no longer uses it by default on Linux.  What a pool runs must
    then be importable (functions defined at module level).
    """
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


def _init_worker(blas: int) -> None:
    """Pool worker start-up: its BLAS threads (the worker is ours: set for its lifetime)."""
    from threadpoolctl import threadpool_limits  # deferred: the command line imports this module

    threadpool_limits(limits=blas, user_api="blas")


def process_pool(workers: int | None = None) -> cf.ProcessPoolExecutor:
    """A process pool for sweeps and Monte Carlo that does not fork and does not oversubscribe.

    Parameters
    ----------
    workers : int, optional
        Worker processes (default :func:`available_cpus`).  Each worker gets
        ``max(1, available_cpus() // workers)`` BLAS threads.

    Returns
    -------
    concurrent.futures.ProcessPoolExecutor
        Started with :func:`safe_mp_context`.

    Raises
    ------
    TypeError, ValueError
        If ``workers`` is not an integer >= 1.
    """
    cpus = available_cpus()
    if workers is None:
        workers = cpus
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an integer >= 1, got {type(workers).__name__}")
    if workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers}")
    return cf.ProcessPoolExecutor(
        workers, mp_context=safe_mp_context(), initializer=_init_worker, initargs=(max(1, cpus // workers),)
    )
