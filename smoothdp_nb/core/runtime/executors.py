"""Tasks on any ``concurrent.futures`` executor, with a progress bar: the engine of the sweeps.

:class:`TaskRunner` runs ``func(*payload)`` for every payload, in this process
(``executor=None``) or on an executor (a thread or process pool, a Dask
cluster's ``client.get_executor()``), and yields each outcome as it finishes;
an interrupted run keeps what already finished.  :func:`sweep
<smoothdp_nb.core.runtime.sweeps.sweep>` and :func:`monte_carlo_map
<smoothdp_nb.core.runtime.sweeps.monte_carlo_map>` are built on it.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from smoothdp_nb.core.runtime import parallel
from smoothdp_nb.core.runtime.progress import progress_bar

__all__ = [
    "AUTO_PROGRESS_DELAY",
    "Bar",
    "ClientLike",
    "Outcome",
    "TaskRunner",
    "as_executor",
    "check_executor",
    "task_outcome",
    "task_progress_bar",
    "worker_count",
]

#: With ``progress=None`` a bar appears only when the work takes longer than this (s).
AUTO_PROGRESS_DELAY = 2.0

#: ``(task index, result, error)``: ``error`` is the exception of a failed task, else None
Outcome = tuple[int, Any, BaseException | None]


class Bar(Protocol):
    """What the tasks need of a progress bar (tqdm's two methods)."""

    def update(self, n: int = 1) -> object:
        """``n`` more units are done."""
        ...

    def close(self) -> None:
        """The work is over."""
        ...


class ClientLike(Protocol):
    """What is needed of a Dask ``distributed.Client``: its ``concurrent.futures`` view."""

    def get_executor(self, **kwargs: Any) -> cf.Executor:
        """An executor that submits to the cluster."""
        ...


def as_executor(executor: object) -> cf.Executor | None:
    """``executor`` as a :class:`concurrent.futures.Executor` (or None): a Dask client becomes its
    ``get_executor(pure=False)`` (every task runs, none is merged with an equal-looking one);
    anything else as :func:`check_executor`."""
    if not isinstance(executor, cf.Executor) and type(executor).__module__.split(".")[0] == "distributed":
        get = getattr(executor, "get_executor", None)
        if callable(get):
            out = get(pure=False)
            if isinstance(out, cf.Executor):
                return out
    return check_executor(executor)


def check_executor(executor: object) -> cf.Executor | None:
    """``executor`` if it is None or a :class:`concurrent.futures.Executor`, else TypeError (with a Dask hint)."""
    if executor is None or isinstance(executor, cf.Executor):
        return executor
    hint = ""
    if hasattr(executor, "get_executor"):
        hint = " (for a Dask client pass client.get_executor())"
    raise TypeError(f"executor must be None or a concurrent.futures.Executor, got {type(executor).__name__}{hint}")


def worker_count(executor: cf.Executor | None) -> int:
    """Workers of ``executor``: 1 in-process, a pool's size, a Dask cluster's threads, else the CPUs
    this process may use."""
    if executor is None:
        return 1
    count = getattr(executor, "_max_workers", None)  # thread and process pools
    if isinstance(count, int) and count > 0:
        return count
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    nthreads = getattr(client, "nthreads", None)
    if callable(nthreads):
        try:
            total = sum(int(v) for v in nthreads().values())
        except Exception:  # a closed client: the local count below
            total = 0
        if total > 0:
            return total
    return parallel.available_cpus()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def task_progress_bar(progress: bool | None, total: int, n_tasks: int, desc: str) -> Bar:
    """A bar over ``total`` units: always (True), never (False), or for long runs of several tasks (None).

    Raises
    ------
    TypeError
        If ``progress`` is not True, False or None.
    """
    if progress is not None:
        if not isinstance(progress, (bool, np.bool_)):
            raise TypeError(f"progress must be True, False or None, got {progress!r}")
        progress = bool(progress)
    if progress is False or (progress is None and n_tasks <= 1):
        return _NoBar()
    delay = 0.0 if progress else AUTO_PROGRESS_DELAY
    bar: Bar = progress_bar(total, desc, delay=delay, leave=bool(progress))
    return bar


def task_outcome(fut: cf.Future[Any]) -> tuple[Any, BaseException | None]:
    """``(result, None)`` or ``(None, exception)`` of a finished future; a KeyboardInterrupt propagates."""
    try:
        return fut.result(), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return None, exc


class TaskRunner:
    """Run ``func(*payload)`` for every payload, in-process or on an executor.

    Iterating yields ``(task index, result, error)`` as tasks finish (``error`` is the
    exception of a failed task, else None). In-process (``executor=None``) the tasks run
    in order when iterated and a KeyboardInterrupt simply propagates. With an executor
    every task is submitted up front. :meth:`stop` cancels what has not started and
    returns the finished tasks that were not yet yielded, so that an interrupted run
    keeps everything already computed.
    """

    def __init__(
        self,
        executor: cf.Executor | None,
        func: Callable[..., Any],
        payloads: Sequence[tuple[Any, ...]],
    ) -> None:
        self._executor = executor
        self._func = func
        self._payloads = payloads
        self._futures: dict[cf.Future[Any], int] = {}
        self._yielded: set[int] = set()

    def _in_process(self) -> Iterator[Outcome]:
        for k, payload in enumerate(self._payloads):
            try:
                out = self._func(*payload)
            except Exception as exc:
                yield k, None, exc
            else:
                yield k, out, None

    def __iter__(self) -> Iterator[Outcome]:
        if self._executor is None:
            yield from self._in_process()
            return
        for k, payload in enumerate(self._payloads):
            try:
                fut = self._executor.submit(self._func, *payload)
            except Exception as exc:
                self._yielded.add(k)
                yield k, None, exc
            else:
                self._futures[fut] = k
        for fut in cf.as_completed(self._futures):
            k = self._futures[fut]
            self._yielded.add(k)
            out, error = task_outcome(fut)
            yield k, out, error

    def stop(self) -> list[Outcome]:
        """Cancel the tasks not started; return finished tasks not yet yielded."""
        for fut in self._futures:
            fut.cancel()
        finished = []
        for fut, k in self._futures.items():
            if k in self._yielded or not fut.done() or fut.cancelled():
                continue
            self._yielded.add(k)
            out, error = task_outcome(fut)
            finished.append((k, out, error))
        return finished
