"""Parameter sweeps and chunked Monte Carlo on any ``concurrent.futures`` executor.

Two entry points:

:func:`sweep`
    Evaluate ``fn(**params)`` on every point of a parameter grid and collect the results
    in a tidy table (:class:`SweepResult`).
:func:`monte_carlo_map`
    Run ``trials`` Monte Carlo trials in fixed-size chunks and return the per-trial
    results, concatenated in order.

Both accept any :class:`concurrent.futures.Executor`: ``None`` (the default) runs the work
in the calling process, a :class:`~concurrent.futures.ThreadPoolExecutor` or
:class:`~concurrent.futures.ProcessPoolExecutor` runs it locally, and the executor of a
Dask cluster (``dask.distributed.Client(...).get_executor()``) runs it on that cluster.
This module never imports Dask itself.

The parts live in modules of their own: :mod:`~smoothdp_nb.core.executor_tasks`
runs tasks on an executor, :mod:`~smoothdp_nb.core.sweep_table` turns the grid
into points and the results into a table, and
:mod:`~smoothdp_nb.core.chunked_trials` defines :func:`monte_carlo_map`
(re-exported here).

Reproducibility
---------------
Random streams are derived with :meth:`numpy.random.SeedSequence.spawn`: one child per
grid point in :func:`sweep`, one child per chunk in :func:`monte_carlo_map`. The child
used for a grid point (or chunk) depends only on the seed and on the point's (chunk's)
index, never on the executor, the task size or the number of workers, so results are
bit-for-bit identical however the work is distributed.

Pickling
--------
With a process pool or a Dask cluster, ``fn`` / ``trial_fn`` and everything passed to it
are pickled and sent to other processes. Define those functions at the top level of a
module (not as lambdas or nested functions; in a notebook, top-level functions of the
notebook work with Dask, which uses cloudpickle, but not always with a standard process
pool); :func:`functools.partial` of a top-level function is fine.

Dask note: ``client.get_executor()`` submits "pure" tasks by default, so Dask may reuse
the result of an identical task (same function, same arguments, same seed) that the
cluster still holds instead of recomputing it. As tasks here are deterministic this
gives the same numbers; pass ``client.get_executor(pure=False)`` to force recomputation
(e.g. when timing).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .array_types import SeedLike
from .budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget
from .chunked_trials import DEFAULT_MC_CHUNK, monte_carlo_map
from .executor_tasks import Bar, TaskRunner, check_executor, task_outcome, task_progress_bar, worker_count
from .sweep_table import SweepResult, as_record, grid_points
from .validation import as_int, as_real, as_seed_sequence

__all__ = ["DEFAULT_MC_CHUNK", "SweepResult", "sweep", "sweep_estimate", "monte_carlo_map"]

#: ``(point index, record, error repr)`` of one evaluated grid point
PointOutcome = tuple[int, dict[str, Any] | None, str | None]


def _sweep_chunk(
    fn: Callable[..., Any],
    indices: Sequence[int],
    points: Sequence[Mapping[str, Any]],
    seeds: Sequence[np.random.SeedSequence] | None,
    fixed: Mapping[str, Any],
) -> tuple[list[PointOutcome], bool]:
    """Evaluate one chunk of grid points (runs in the worker).

    Returns ``(outcomes, interrupted)``; each outcome is ``(index, record, error)``.
    A KeyboardInterrupt inside ``fn`` stops the chunk and sets ``interrupted``; the
    points already evaluated are kept.
    """
    outcomes: list[PointOutcome] = []
    for j, (index, params) in enumerate(zip(indices, points)):
        kwargs = dict(fixed)
        kwargs.update(params)
        if seeds is not None:
            kwargs["rng"] = np.random.default_rng(seeds[j])
        try:
            record = as_record(fn(**kwargs))
        except KeyboardInterrupt:
            return outcomes, True
        except Exception as exc:
            outcomes.append((index, None, repr(exc)))
        else:
            outcomes.append((index, record, None))
    return outcomes, False


def _probe_point(
    fn: Callable[..., Any],
    index: int,
    params: Mapping[str, Any],
    seed: np.random.SeedSequence | None,
    fixed: Mapping[str, Any],
) -> tuple[list[PointOutcome], bool, float, float, float]:
    """Evaluate one grid point (where the tasks run), timed and traced by tracemalloc.

    Returns ``(outcomes, interrupted, seconds, peak bytes, retained bytes)``
    as :func:`_sweep_chunk` plus the measurements: the peak is the largest
    traced allocation above what was allocated before the call, the retained
    bytes what is still allocated after it (the record kept for the table).
    A tracemalloc session the caller started is left running.
    """
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    else:
        tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        t0 = time.perf_counter()
        outcomes, interrupted = _sweep_chunk(fn, [index], [params], None if seed is None else [seed], fixed)
        seconds = time.perf_counter() - t0
        current, peak = tracemalloc.get_traced_memory()
    finally:
        if started:
            tracemalloc.stop()
    return outcomes, interrupted, seconds, float(max(peak - base, 0)), float(max(current - base, 0))


def sweep_estimate(seconds: float, peak: float, retained: float, points: int, workers: int) -> Estimate:
    """Time and memory of ``points`` more grid points, from one probe point.

    Time: the probe's seconds per point, shared among ``min(workers, points)``
    workers.  Memory: the probe's peak in each of those workers at once, and
    one retained record per point (the table of results).
    """
    concurrent = max(1, min(workers, points))
    return Estimate(seconds * points / concurrent, peak * concurrent + retained * points)


class _SweepRun:
    """The state of one :func:`sweep`: the points, their records and failures, the probe's progress."""

    def __init__(
        self,
        fn: Callable[..., Any],
        points: list[dict[str, Any]],
        seeds: list[np.random.SeedSequence] | None,
        fixed: Mapping[str, Any],
        executor: cf.Executor | None,
    ) -> None:
        self.fn, self.points, self.seeds, self.fixed, self.executor = fn, points, seeds, fixed, executor
        self.n = len(points)
        self.records: list[dict[str, Any] | None] = [None] * self.n
        self.failures: list[tuple[int, str]] = []
        self.first = 0  # the points before this one ran in the probe
        self.partial = False

    def store(self, outcomes: list[PointOutcome]) -> None:
        """Keep each point's record, or its failure."""
        for index, record, message in outcomes:
            if message is None:
                self.records[index] = record
            else:
                self.failures.append((index, message))

    def _probe_next(self) -> tuple[Any, BaseException | None]:
        """Run point ``first`` alone (where the tasks run), timed; ``(probe, error)``."""
        seed = None if self.seeds is None else self.seeds[self.first]
        payload = (self.fn, self.first, self.points[self.first], seed, self.fixed)
        self.first += 1
        try:
            if self.executor is None:
                return _probe_point(*payload), None
            return task_outcome(self.executor.submit(_probe_point, *payload))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # submit refused
            return None, exc

    def probe(self, budget: float, workers: int) -> None:
        """Run points one at a time until one succeeds; its extrapolation must fit ``budget``."""
        while self.first < self.n:
            try:
                probe, error = self._probe_next()
            except KeyboardInterrupt:
                self.partial = True
                return
            if probe is None:
                # the task itself failed (fn not picklable, worker died): the other tasks report their own
                self.failures.append((self.first - 1, repr(error)))
                return
            outcomes, self.partial, seconds, peak, kept = probe
            self.store(outcomes)
            if self.partial:
                return
            if outcomes[0][2] is None:
                if self.first < self.n:
                    check_budget(
                        sweep_estimate(seconds, peak, kept, self.n - self.first, workers),
                        budget,
                        f"the sweep of {self.n} grid points (one point took {seconds:.3g} s)",
                        "use fewer grid points",
                        parameter="grid",
                    )
                return

    def payloads(self, chunksize: int) -> list[tuple[Any, ...]]:
        """The same chunks as without a probe; the points it ran are left out of the first ones."""
        payloads = []
        for start in range(0, 0 if self.partial else self.n, chunksize):
            stop = min(start + chunksize, self.n)
            start = max(start, self.first)
            if start >= stop:
                continue
            seeds = None if self.seeds is None else self.seeds[start:stop]
            payloads.append((self.fn, list(range(start, stop)), self.points[start:stop], seeds, self.fixed))
        return payloads

    def run_chunks(self, payloads: list[tuple[Any, ...]], bar: Bar) -> None:
        """Run the chunks; an interrupt (in ``fn`` or here) keeps every chunk already finished."""

        def collect(k: int, out: Any, error: BaseException | None) -> bool:
            """Store one task's outcome; return True if it reports an interrupt."""
            if error is not None:
                # the whole task failed (e.g. fn not picklable, worker process died)
                for index in payloads[k][1]:
                    self.failures.append((index, repr(error)))
                bar.update(len(payloads[k][1]))
                return False
            outcomes, interrupted = out
            self.store(outcomes)
            bar.update(len(outcomes))
            return bool(interrupted)

        tasks = TaskRunner(self.executor, _sweep_chunk, payloads)
        try:
            for k, out, error in tasks:
                if collect(k, out, error):
                    self.partial = True
                    break
        except KeyboardInterrupt:
            self.partial = True
        finally:
            try:
                for k, out, error in tasks.stop():
                    self.partial = collect(k, out, error) or self.partial
            finally:
                bar.close()


def sweep(
    fn: Callable[..., object],
    grid: Mapping[str, Sequence[object]] | Sequence[Mapping[str, object]] | pd.DataFrame,
    executor: cf.Executor | None = None,
    *,
    rng: SeedLike = None,
    chunksize: int | None = None,
    progress: bool | None = None,
    fixed: Mapping[str, object] | None = None,
    budget: float | None = DEFAULT_BUDGET_SECONDS,
) -> SweepResult:
    """Evaluate ``fn`` on every point of a parameter grid, on any executor.

    Parameters
    ----------
    fn : callable
        Called as ``fn(**fixed, **params)`` for every grid point ``params`` (plus
        ``rng=<numpy Generator>`` when the sweep has an ``rng``). It returns a number
        (result column ``value``), a dict of numbers (one column per key) or an object
        with a ``to_dict()`` method. With a process pool or a Dask cluster it must be
        picklable: define it at the top level of a module.
    grid : dict, list of dict or pandas.DataFrame
        A dict ``{name: sequence of values}`` sweeps the cartesian product (the last
        name varies fastest); a list of dicts or a DataFrame (one row per point) gives
        the points explicitly.
    executor : concurrent.futures.Executor or None
        Where the tasks run. ``None`` runs them one after the other in this process;
        any ``concurrent.futures.Executor`` works, including
        ``dask.distributed.Client(...).get_executor()``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Seed of the sweep. If given, grid point ``i`` receives
        ``rng=np.random.default_rng(children[i])`` with
        ``children = SeedSequence(rng).spawn(n_points)``, so results do not depend on the
        executor, the chunk size or the number of workers. An int gives the same
        streams on every call; a SeedSequence or Generator is spawned from (as numpy's
        ``spawn`` does), so repeated calls with the same object get fresh streams.
    chunksize : int, optional
        Grid points per task. Default: about four tasks per worker of the executor
        (up to 1000 tasks in-process, for a fine-grained progress bar). Executors that
        do not expose their worker count (e.g. Dask's) are assumed to have
        :func:`~smoothdp_nb.core.parallel.available_cpus` workers; on a cluster, set ``chunksize`` explicitly.
    progress : bool or None
        ``True`` shows a ``tqdm.auto`` progress bar; ``False`` never does; ``None``
        (default) shows one only for sweeps of more than one task that run for more
        than a couple of seconds.
    fixed : dict, optional
        Keyword arguments passed unchanged to every call (keep them small: they are
        sent with every task).
    budget : float or None
        Refuse (:class:`~smoothdp_nb.core.budget.ComputationTooLarge`) when the
        rest of the sweep is estimated to take longer than ``budget`` seconds or
        more than the memory budget (:func:`~smoothdp_nb.core.budget.memory_budget`).
        The estimate comes from a probe: the first grid point runs alone (on
        the executor, if any), timed and traced by :mod:`tracemalloc` (if it
        fails, the next one, until one succeeds), and its time and memory are
        extrapolated to the remaining points (:func:`sweep_estimate`).  The probe's result is
        kept, not recomputed.  ``None`` skips the probe, for callers that
        estimated the work themselves.

    Returns
    -------
    SweepResult
        ``.to_frame()`` gives the tidy table; ``.complete`` tells whether every point
        succeeded; ``.errors`` lists ``(params, exception repr)`` of failed points (the
        other points still run); ``.partial`` is True if the sweep was interrupted by a
        KeyboardInterrupt, in which case the results computed so far are returned.

    Raises
    ------
    TypeError
        If ``fn`` is not callable, ``executor`` is not an Executor, or ``grid``,
        ``rng``, ``chunksize`` or ``progress`` has the wrong type.
    ValueError
        If ``grid`` is empty (or one of its parameters has no values), ``chunksize`` is
        not positive, or a grid parameter clashes with ``rng``/``fixed``.
    ComputationTooLarge
        If the probe's extrapolation exceeds ``budget`` or the memory budget
        (after the probe, before the other points).

    Examples
    --------
    >>> def area(width, height):
    ...     return width * height
    >>> res = sweep(area, {"width": [1, 2], "height": [10, 20]})
    >>> res.to_frame()["value"].tolist()
    [10, 20, 20, 40]
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    executor = check_executor(executor)
    names, points = grid_points(grid)
    fixed = dict(fixed or {})
    clash = set(names) & set(fixed)
    if clash:
        raise ValueError(f"fixed: names {sorted(clash)} are also grid parameters")
    root = as_seed_sequence(rng, "rng", allow_none=True)
    if root is not None and ("rng" in names or "rng" in fixed):
        raise ValueError("grid: 'rng' cannot be a parameter when the sweep has an rng")
    if chunksize is not None:
        chunksize = as_int(chunksize, "chunksize", minimum=1)
    if budget is not None:
        budget = as_real(budget, "budget", lo=0.0, lo_open=True, finite=False)
    n = len(points)
    run = _SweepRun(fn, points, root.spawn(n) if root is not None else None, fixed, executor)
    workers = worker_count(executor)
    t0 = time.perf_counter()
    if budget is not None:
        run.probe(budget, workers)
    if chunksize is None:
        n_target = 1000 if executor is None else 4 * workers
        chunksize = max(1, math.ceil(n / n_target))
    n_tasks = math.ceil(n / chunksize)
    payloads = run.payloads(chunksize)
    bar = task_progress_bar(progress, n, n_tasks, "sweep")
    bar.update(run.first)
    run.run_chunks(payloads, bar)
    run.failures.sort()
    return SweepResult(
        parameters=tuple(names),
        points=tuple(points),
        records=tuple(run.records),
        failures=tuple(run.failures),
        partial=run.partial,
        elapsed=time.perf_counter() - t0,
        n_tasks=n_tasks,
    )
