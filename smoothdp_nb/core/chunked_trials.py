"""Chunked Monte Carlo on any ``concurrent.futures`` executor: :func:`monte_carlo_map`.

``trials`` trials are cut into fixed-size chunks, each simulated by one
vectorised call of ``trial_fn`` with its own random stream (a child of
:meth:`numpy.random.SeedSequence.spawn`), and the chunks' results are
concatenated in trial order.  The chunk boundaries and streams depend only on
``trials``, ``chunk`` and the seed, never on the executor or the number of
workers, so a seed gives the same numbers bit for bit everywhere (see
:mod:`smoothdp_nb.core.sweeps` on pickling and Dask).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from .array_types import SeedLike
from .budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget
from .executor_tasks import TaskRunner, check_executor, task_progress_bar, worker_count
from .validation import as_int, as_seed_sequence

__all__ = ["DEFAULT_MC_CHUNK", "monte_carlo_map", "probe_estimate"]

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
        As in :func:`~smoothdp_nb.core.sweeps.sweep` (``None``: a bar only for runs longer than a few seconds).
    budget : float or None
        Refuse (:class:`~smoothdp_nb.core.budget.ComputationTooLarge`, before the
        run) when the estimated time exceeds ``budget`` seconds or the results
        would not fit the memory budget (:func:`~smoothdp_nb.core.budget.memory_budget`).
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
