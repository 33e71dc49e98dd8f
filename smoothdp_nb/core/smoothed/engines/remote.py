"""The profile chunks of the exact smoothed delta on an executor: a ``concurrent.futures`` pool or a Dask cluster.

For mechanisms whose profiles dominate the cost of Algorithm 1 (a
:class:`~smoothdp_nb.core.smoothed.mechanisms.FiniteMechanism`, the sampling
average), the exact engine cuts the table of profiles into the same fixed chunks
of histograms whether it runs alone or not (:func:`~.chunks.profile_chunk_rows`);
:func:`remote_profile_table` sends each chunk to an executor and writes each
answer into its own rows.  A chunk is a pure function of the mechanism, its
histograms and the epsilons, computed with the same BLAS setting as in this
process (:func:`~smoothdp_nb.core.runtime.parallel.engine_threads`), so the
table -- and the smoothed delta -- is bit-identical to the serial run's.

Work in flight is bounded (a few chunks per worker), so the client holds a few
chunks' histograms and answers at a time, not the whole run's pickled tasks.
Nothing is silently missing: a chunk whose task fails (an exception in the
mechanism, a worker that died and was not replaced) stops the run with a
:class:`ProfileChunkError` naming the chunk and the cause, and no smoothed delta
is returned.  A Dask scheduler already runs the tasks of a lost worker again on
the others (up to its ``allowed-failures``), so there a killed worker costs time,
not the result; a ``ProcessPoolExecutor`` whose worker is killed is broken for
good (``BrokenProcessPool``), which this module reports as such.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 1 (the profile of every histogram).
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from smoothdp_nb.core.runtime.executors import worker_count
from smoothdp_nb.core.runtime.parallel import engine_threads
from smoothdp_nb.core.smoothed.mechanisms.generic import active_memo

__all__ = ["IN_FLIGHT_PER_WORKER", "ProfileChunkError", "remote_profile_table"]

#: chunks submitted ahead per worker: enough to keep each busy while answers travel back
IN_FLIGHT_PER_WORKER = 3

ChunkFunction = Callable[[Any, np.ndarray, np.ndarray], np.ndarray]


class ProfileChunkError(RuntimeError):
    """A chunk of the profile table was not computed on the executor; the run stopped without a result."""


def run_chunk(compute: ChunkFunction, mech: Any, hists: np.ndarray, e: np.ndarray) -> np.ndarray:
    """One chunk where the task runs: ``compute(mech, hists, e)`` with the engines' BLAS threads."""
    with engine_threads():
        return compute(mech, hists, e)


def shippable(mech: Any) -> Any:
    """A shallow copy of ``mech`` without the law memo of an engine's scope (laws of histograms
    other chunks need; the workers compute their own), so each task pickles the mechanism only."""
    memo = active_memo(mech)
    if memo is None:
        return mech
    out = copy.copy(mech)
    store = getattr(out, "__dict__", None)
    if store is not None:
        for key in [k for k, v in store.items() if v is memo]:
            del store[key]
    return out


def remote_profile_table(
    executor: cf.Executor,
    compute: ChunkFunction,
    mech: Any,
    hists: np.ndarray,
    e: np.ndarray,
    rows: int,
) -> np.ndarray:
    """``compute(mech, hists[i : i + rows], e)`` for every chunk start ``i``, on ``executor``, stacked
    in order: the same array as the serial loop over the chunks.

    Parameters
    ----------
    executor : concurrent.futures.Executor
        A thread or process pool, or a Dask client's ``get_executor()``.
    compute : callable
        A module-level function (pickled by reference), ``(mech, hists, e) -> (rows, w)`` array.
    mech, hists, e
        The mechanism, the histograms (rows) and the epsilons.
    rows : int
        Histograms per chunk.

    Raises
    ------
    ProfileChunkError
        If a chunk could not be submitted, failed on the executor, or came back with the wrong
        shape; the chunk and the cause are named, and the tasks not yet started are cancelled.
    """
    starts = list(range(0, len(hists), rows))
    total = len(starts)
    mech = shippable(mech)
    window = max(2, IN_FLIGHT_PER_WORKER * worker_count(executor))
    out: np.ndarray | None = None
    pending: dict[cf.Future[np.ndarray], int] = {}
    queue = iter(range(total))

    def where(k: int) -> str:
        i = starts[k]
        return f"profile chunk {k + 1} of {total} (histograms {i} to {min(i + rows, len(hists)) - 1})"

    try:
        while True:
            while len(pending) < window:
                k = next(queue, None)
                if k is None:
                    break
                i = starts[k]
                try:
                    fut = executor.submit(run_chunk, compute, mech, hists[i : i + rows], e)
                except Exception as exc:
                    raise ProfileChunkError(
                        f"{where(k)} could not be submitted to the executor ({type(exc).__name__}: {exc})"
                    ) from exc
                pending[fut] = k
            if not pending:
                break
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                k = pending.pop(fut)
                try:
                    part = np.asarray(fut.result())
                except Exception as exc:
                    raise ProfileChunkError(
                        f"{where(k)} failed on the executor ({type(exc).__name__}: {exc}); "
                        "no smoothed delta is computed from the other chunks"
                    ) from exc
                i = starts[k]
                size = min(i + rows, len(hists)) - i
                if part.ndim != 2 or part.shape[0] != size or (out is not None and part.shape[1] != out.shape[1]):
                    raise ProfileChunkError(f"{where(k)} came back with shape {part.shape}")
                if out is None:
                    out = np.empty((len(hists), part.shape[1]))
                out[i : i + size] = part
    finally:
        for fut in pending:
            fut.cancel()
    if out is None:  # no histograms at all
        raise ProfileChunkError("the profile table has no histograms")
    return out
