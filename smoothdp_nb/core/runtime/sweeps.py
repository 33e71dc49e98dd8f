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

This module is their one home: the grid and the table of a sweep (:func:`grid_points`,
:func:`as_record`, :class:`SweepResult`), chunked Monte Carlo (:func:`monte_carlo_map`,
:func:`probe_estimate`) and :func:`sweep`; :mod:`~smoothdp_nb.core.runtime.executors` runs
their tasks on an executor.

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
import dataclasses
import itertools
import math
import numbers
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.numerics.validation import as_int, as_real, as_seed_sequence, is_data_frame
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget
from smoothdp_nb.core.runtime.executors import (
    Bar,
    TaskRunner,
    check_executor,
    task_outcome,
    task_progress_bar,
    worker_count,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_MC_CHUNK",
    "SweepResult",
    "sweep",
    "sweep_estimate",
    "monte_carlo_map",
    "as_record",
    "grid_points",
    "probe_estimate",
    "check_grid_size",
]


# ----------------------------------------------------------------------------- the grid and the table

#: bytes per grid point held by a sweep: its parameter dict, its seed, its record in the table
_BYTES_PER_POINT = 1500.0
#: seconds per grid point a sweep spends at the least around ``fn`` (listing, dispatch, its record;
#: a floor: 2e-6 measured at load 12)
_SECONDS_PER_POINT = 5e-7


def check_grid_size(grid: Any, budget: float | None) -> None:
    """Refuse (:class:`~smoothdp_nb.core.runtime.budget.ComputationTooLarge`), before the
    points are listed, a grid whose points alone would not fit the memory budget or take
    longer than ``budget`` seconds to handle: the product of the axes' lengths for a dict
    (from ``len``; an axis without one is listed as given), the number of rows or dicts
    otherwise."""
    if is_data_frame(grid):
        points = float(grid.shape[0])
    elif isinstance(grid, Mapping):
        points = 1.0
        for values in grid.values():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
                continue  # listed (and refused, if it is not a sequence) by grid_points
            points *= float(len(values))
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        points = float(len(grid))
    else:
        return
    check_budget(
        Estimate(points * _SECONDS_PER_POINT, points * _BYTES_PER_POINT),
        math.inf if budget is None else budget,
        f"the sweep of {points:.3g} grid points (at least {_SECONDS_PER_POINT:g} s and "
        f"{_BYTES_PER_POINT:g} bytes each, before fn runs)",
        "use fewer grid points",
        parameter="grid",
    )


def grid_points(grid: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Normalise ``grid`` into (parameter names, list of parameter dicts).

    A dict ``{name: values}`` gives the cartesian product (the last name varies fastest), a
    list of dicts or a DataFrame the points themselves; TypeError/ValueError naming ``grid``
    otherwise.
    """
    if is_data_frame(grid):
        if grid.shape[0] == 0 or grid.shape[1] == 0:
            raise ValueError("grid: the DataFrame has no rows or no columns")
        names = list(grid.columns)
        points = grid.to_dict(orient="records")
    elif isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid must name at least one parameter, got an empty dict")
        names = list(grid)
        axes = []
        for name, values in grid.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(
                    f"grid[{name!r}] must be a sequence of values, got {type(values).__name__}"
                    " (wrap a single value in a list)"
                )
            values = list(values)
            if not values:
                raise ValueError(f"grid[{name!r}] is empty: every parameter needs a value")
            axes.append(values)
        points = [dict(zip(names, combo)) for combo in itertools.product(*axes)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        if len(grid) == 0:
            raise ValueError("grid is an empty list: there is nothing to sweep")
        names = []
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise TypeError(f"grid[{i}] must be a dict of parameter values, got {type(point).__name__}")
            for name in point:
                if name not in names:
                    names.append(name)
            points.append(dict(point))
    else:
        raise TypeError(
            "grid must be a dict of parameter -> values, a list of dicts or a pandas "
            f"DataFrame, got {type(grid).__name__}"
        )
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"grid: parameter names must be strings, got {name!r}")
    return names, points


def as_record(value: Any) -> dict[str, Any]:
    """Turn one return value of ``fn`` into a dict of result columns."""
    if isinstance(value, (numbers.Number, np.number, np.bool_)):
        return {"value": value}
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return {"value": value.item()}
    if isinstance(value, Mapping):
        return dict(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        record = to_dict()
        if isinstance(record, Mapping):
            return dict(record)
    raise TypeError(
        f"fn must return a number, a dict of numbers or an object with to_dict(); got {type(value).__name__}"
    )


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """Outcome of :func:`~smoothdp_nb.core.runtime.sweeps.sweep`.

    Attributes
    ----------
    parameters : tuple of str
        Parameter names, in grid order.
    points : tuple of dict
        Every grid point, in grid order.
    records : tuple of (dict or None)
        Result columns of each point; ``None`` where the point failed or was not run.
    failures : tuple of (int, str)
        ``(point index, repr of the exception)`` for every failed point.
    partial : bool
        True when the sweep was interrupted (KeyboardInterrupt) before every point ran.
    elapsed : float
        Wall-clock seconds.
    n_tasks : int
        Number of tasks (chunks of grid points) the work was split into.
    """

    parameters: tuple[str, ...]
    points: tuple[dict[str, object], ...]
    records: tuple[dict[str, object] | None, ...]
    failures: tuple[tuple[int, str], ...] = ()
    partial: bool = False
    elapsed: float = 0.0
    n_tasks: int = 0

    @property
    def n_points(self) -> int:
        """Number of grid points."""
        return len(self.points)

    @property
    def n_done(self) -> int:
        """Number of grid points evaluated successfully."""
        return sum(record is not None for record in self.records)

    @property
    def complete(self) -> bool:
        """True when every grid point was evaluated successfully."""
        return not self.partial and not self.failures and self.n_done == self.n_points

    @property
    def errors(self) -> list[tuple[dict[str, object], str]]:
        """``(parameters, exception repr)`` of every failed point, in grid order."""
        return [(dict(self.points[i]), message) for i, message in self.failures]

    def to_frame(self, include_missing: bool = False) -> pd.DataFrame:
        """Tidy table: one row per grid point, parameter columns then result columns.

        Parameters
        ----------
        include_missing : bool, default False
            If False, only the points evaluated successfully appear (in grid order). If
            True, every grid point appears, with missing results (failed or not run)
            as NaN.

        Returns
        -------
        pandas.DataFrame
            A result column whose name clashes with a parameter is suffixed ``_result``.
        """
        import pandas as pd  # deferred: sweeps run (and Monte Carlo engines import them) without a frame

        result_columns: list[str] = []
        for record in self.records:
            if record is not None:
                for key in record:
                    if key not in result_columns:
                        result_columns.append(key)
        rename = {c: (f"{c}_result" if c in self.parameters else c) for c in result_columns}
        rows = []
        for params, record in zip(self.points, self.records):
            if record is None and not include_missing:
                continue
            row = {name: params.get(name, np.nan) for name in self.parameters}
            for key in result_columns:
                row[rename[key]] = np.nan if record is None else record.get(key, np.nan)
            rows.append(row)
        columns = list(self.parameters) + [rename[c] for c in result_columns]
        return pd.DataFrame(rows, columns=columns)


# ----------------------------------------------------------------------------- chunked Monte Carlo
#: Default number of Monte Carlo trials per chunk (one task per chunk).
DEFAULT_MC_CHUNK = 100_000


def _mc_chunk(
    trial_fn: Callable[..., Any],
    size: int,
    seed: np.random.SeedSequence,
    kwargs: Mapping[str, Any],
) -> np.ndarray:
    """Run one chunk of Monte Carlo trials (runs in the worker)."""
    out = np.asarray(trial_fn(size, np.random.default_rng(seed), **kwargs))
    if out.ndim == 0 or out.shape[0] != size:
        raise ValueError(
            f"trial_fn(size={size}, rng) must return an array whose first axis has length {size}, got shape {out.shape}"
        )
    return out


def probe_estimate(
    trial_fn: Callable[..., Any], trials: int, chunk: int, kwargs: Mapping[str, Any], workers: int
) -> Estimate:
    """Time and memory of a Monte Carlo run, extrapolated from two small calls of ``trial_fn``.

    Two sizes separate the cost per call from the cost per trial; the memory is
    the concatenated result (twice: the chunks and their concatenation).
    """
    sizes = (min(16, trials, chunk), min(256, trials, chunk))
    times: list[float] = []
    out = np.empty(0)
    for size in sizes:
        t0 = time.perf_counter()
        try:
            out = _mc_chunk(trial_fn, size, np.random.SeedSequence(0x5EED), kwargs)
        except Exception as exc:
            exc.add_note(f"monte_carlo_map: the probe of {size} trials (cost estimate before the run) failed")
            raise
        times.append(time.perf_counter() - t0)
    per_trial = (
        max(times[1] - times[0], 0.0) / max(sizes[1] - sizes[0], 1) if sizes[1] > sizes[0] else times[1] / sizes[1]
    )
    per_call = max(times[0] - per_trial * sizes[0], 0.0)
    n_chunks = math.ceil(trials / chunk)
    seconds = (n_chunks * per_call + trials * per_trial) / max(1, min(workers, n_chunks))
    return Estimate(seconds, 2.0 * trials * out.nbytes / sizes[1])


def monte_carlo_map(
    trial_fn: Callable[..., npt.ArrayLike],
    trials: int,
    rng: SeedLike,
    executor: cf.Executor | None = None,
    chunk: int = DEFAULT_MC_CHUNK,
    *,
    kwargs: Mapping[str, object] | None = None,
    progress: bool | None = None,
    budget: float | None = DEFAULT_BUDGET_SECONDS,
) -> np.ndarray:
    """Run ``trials`` Monte Carlo trials in fixed-size chunks on any executor.

    The trials are cut into chunks ``[0, chunk), [chunk, 2*chunk), ...`` (the last one
    shorter); chunk ``c`` is simulated by ``trial_fn(size_c, rng_c, **kwargs)`` with
    ``rng_c = np.random.default_rng(children[c])`` and
    ``children = SeedSequence(rng).spawn(n_chunks)``. The chunk boundaries depend only
    on ``trials`` and ``chunk`` (never on the executor or the number of workers), so
    for a given seed and chunk size the result is bit-for-bit the same everywhere.

    Parameters
    ----------
    trial_fn : callable
        ``trial_fn(size, rng, **kwargs)`` simulates ``size`` independent trials with the
        numpy Generator ``rng`` and returns an array whose first axis has length
        ``size`` (one entry or row per trial). Vectorise it with numpy: it is called
        once per chunk, not once per trial. With a process pool or a Dask cluster it
        must be picklable: define it at the top level of a module.
    trials : int
        Total number of trials (positive).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Seed. An int gives the same result on every call; a SeedSequence or Generator is
        spawned from (repeated calls get fresh streams); None draws fresh OS entropy.
    executor : concurrent.futures.Executor or None
        Where the chunks run; ``None`` runs them in this process. Any
        ``concurrent.futures.Executor`` works, e.g. a ProcessPoolExecutor or
        ``dask.distributed.Client(...).get_executor()``.
    chunk : int, default 100_000
        Trials per chunk (= per task). Changing it changes the random streams, hence
        the individual results (not their distribution).
    kwargs : dict, optional
        Extra keyword arguments for ``trial_fn`` (small: they are sent with every task).
    progress : bool or None
        As in :func:`~smoothdp_nb.core.runtime.sweeps.sweep` (``None``: a bar only for runs longer than a few seconds).
    budget : float or None
        Refuse (:class:`~smoothdp_nb.core.runtime.budget.ComputationTooLarge`, before the
        run) when the estimated time exceeds ``budget`` seconds or the results
        would not fit the memory budget (:func:`~smoothdp_nb.core.runtime.budget.memory_budget`).
        The estimate comes from two small probe calls of ``trial_fn`` (16 and
        256 trials, with their own fixed seed: the results do not change),
        extrapolated to ``trials`` (time divided among the executor's workers).
        ``None`` skips the probe, for callers that estimated the work themselves.

    Returns
    -------
    numpy.ndarray
        The chunks' results concatenated along the first axis, in trial order
        (length ``trials``).

    Raises
    ------
    TypeError, ValueError
        On bad arguments (naming the parameter), or the error of a failing chunk, with
        a note naming the chunk's trial range. A KeyboardInterrupt cancels the chunks
        not yet started and propagates.

    Examples
    --------
    >>> def coin_flips(size, rng):
    ...     return rng.integers(0, 2, size=size)
    >>> heads = monte_carlo_map(coin_flips, 1000, rng=7, chunk=300)
    >>> heads.shape
    (1000,)
    """
    if not callable(trial_fn):
        raise TypeError(f"trial_fn must be callable, got {type(trial_fn).__name__}")
    trials = as_int(trials, "trials", minimum=1)
    chunk = as_int(chunk, "chunk", minimum=1)
    executor = check_executor(executor)
    # with allow_none=False, None gives fresh OS entropy: never None
    root = cast(np.random.SeedSequence, as_seed_sequence(rng, "rng", allow_none=False))
    kwargs = dict(kwargs or {})
    if budget is not None:
        est = probe_estimate(trial_fn, trials, chunk, kwargs, worker_count(executor))
        check_budget(est, budget, f"monte_carlo_map of {trials} trials", "use fewer trials", parameter="trials")

    bounds = [(start, min(start + chunk, trials)) for start in range(0, trials, chunk)]
    seeds = root.spawn(len(bounds))
    payloads = [(trial_fn, stop - start, seed, kwargs) for (start, stop), seed in zip(bounds, seeds)]
    results: list[np.ndarray | None] = [None] * len(payloads)
    bar = task_progress_bar(progress, trials, len(payloads), "monte carlo")
    tasks = TaskRunner(executor, _mc_chunk, payloads)
    try:
        for k, out, error in tasks:
            if error is not None:
                start, stop = bounds[k]
                error.add_note(f"monte_carlo_map: chunk {k} (trials {start}..{stop - 1}) failed")
                raise error
            results[k] = out
            bar.update(bounds[k][1] - bounds[k][0])
    finally:
        tasks.stop()
        bar.close()
    return np.concatenate([r for r in results if r is not None], axis=0)


# ----------------------------------------------------------------------------- sweeps
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
        :func:`~smoothdp_nb.core.runtime.parallel.available_cpus` workers; on a cluster, set ``chunksize`` explicitly.
    progress : bool or None
        ``True`` shows a ``tqdm.auto`` progress bar; ``False`` never does; ``None``
        (default) shows one only for sweeps of more than one task that run for more
        than a couple of seconds.
    fixed : dict, optional
        Keyword arguments passed unchanged to every call (keep them small: they are
        sent with every task).
    budget : float or None
        Refuse (:class:`~smoothdp_nb.core.runtime.budget.ComputationTooLarge`) when the
        rest of the sweep is estimated to take longer than ``budget`` seconds or
        more than the memory budget (:func:`~smoothdp_nb.core.runtime.budget.memory_budget`).
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
    if budget is not None:
        budget = as_real(budget, "budget", lo=0.0, lo_open=True, finite=False)
    check_grid_size(grid, budget)
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
