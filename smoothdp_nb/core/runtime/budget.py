"""Refusing work that is too large, before it starts.

Every computation that can grow large estimates its cost first -- run time
*and* memory -- and raises :class:`ComputationTooLarge` with the estimate, the
limit and a suggestion instead of running for hours or exhausting memory.

* Time: each entry point takes ``budget=`` seconds (default
  :data:`DEFAULT_BUDGET_SECONDS`) and holds it for the checks deep inside the
  computation while it runs (:func:`budget_scope`, read by :func:`current_budget`):
  a check inside a mechanism's hook refuses against the caller's budget without
  the hooks' signatures carrying it.
* Memory: a fraction of the memory available on the machine when the check
  runs (default :data:`DEFAULT_MEMORY_FRACTION`, configurable with
  :func:`set_memory_fraction` or the environment variable
  ``SMOOTHDP_MEMORY_FRACTION``).
* Workers: local pools are capped at the CPUs this process may use
  (:func:`cap_workers`); an external scheduler decides for itself.

The estimates are models of the work (counted in elementary operations and
bytes of the largest arrays), with per-unit costs measured on the reference
machine (benchmarks/README.md); the tests compare each model with a measured
count of work units.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from smoothdp_nb.core.numerics.validation import as_int, as_real
from smoothdp_nb.core.runtime import parallel

__all__ = [
    "ComputationTooLarge",
    "DEFAULT_BUDGET_SECONDS",
    "DEFAULT_MEMORY_FRACTION",
    "Estimate",
    "available_memory",
    "memory_budget",
    "set_memory_fraction",
    "check_budget",
    "cap_workers",
    "budget_scope",
    "current_budget",
]

#: default limit on the estimated run time of a computation (seconds)
DEFAULT_BUDGET_SECONDS = 600.0

#: default share of the machine's available memory one computation may use
DEFAULT_MEMORY_FRACTION = 0.5

_memory_fraction: float | None = None

#: the time budget of the computation running in this context (the outermost entry point's)
_current_budget: contextvars.ContextVar[float] = contextvars.ContextVar(
    "smoothdp_budget", default=DEFAULT_BUDGET_SECONDS
)


class ComputationTooLarge(ValueError):
    """Raised (before any work) when a computation would be too big.

    Attributes
    ----------
    parameter : str or None
        The argument that makes the computation large (``"n"``, ``"trials"``,
        ``"bits"``, ...), so that callers such as the spec layer can point at it.
    """

    def __init__(self, message: str, parameter: str | None = None):
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class Estimate:
    """Up-front cost of a computation: run time (s) and peak memory of its largest arrays (bytes)."""

    seconds: float
    bytes: float

    def __add__(self, other: Estimate) -> Estimate:
        # run one after the other: times add, memory is the larger peak
        return Estimate(self.seconds + other.seconds, max(self.bytes, other.bytes))


def available_memory() -> int:
    """Bytes of memory available to new allocations (``MemAvailable``; total RAM as a fallback)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 2**30


def _fraction() -> float:
    if _memory_fraction is not None:
        return _memory_fraction
    env = os.environ.get("SMOOTHDP_MEMORY_FRACTION")
    if env is None:
        return DEFAULT_MEMORY_FRACTION
    try:
        return as_real(float(env), "SMOOTHDP_MEMORY_FRACTION", lo=0.0, hi=1.0, lo_open=True)
    except ValueError:
        raise ValueError(f"SMOOTHDP_MEMORY_FRACTION must be a number in (0, 1], got {env!r}") from None


def set_memory_fraction(fraction: float | None) -> float | None:
    """Set the share of available memory one computation may use (None: back to the default).

    Returns the previous setting (None when it was the default).
    """
    global _memory_fraction
    previous = _memory_fraction
    _memory_fraction = None if fraction is None else as_real(fraction, "fraction", lo=0.0, hi=1.0, lo_open=True)
    return previous


def memory_budget() -> float:
    """The memory limit in bytes: the configured fraction of the available memory."""
    return _fraction() * available_memory()


def _bytes_text(b: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def check_budget(
    estimate: Estimate, budget: float, what: str, suggestion: str, *, parameter: str | None = None
) -> None:
    """Raise :class:`ComputationTooLarge` if ``estimate`` exceeds the time budget or the memory budget.

    Parameters
    ----------
    estimate : Estimate
    budget : float
        Seconds (``math.inf`` disables the time limit; memory is always checked).
    what : str
        The computation, for the message ("the exact smoothed delta for n=...").
    suggestion : str
        What to do instead ("use method='monte-carlo'").
    parameter : str, optional
        The argument that makes it large (stored on the exception).
    """
    budget = as_real(budget, "budget", lo=0.0, lo_open=True, finite=False)
    mem = memory_budget()
    if estimate.bytes > mem:
        raise ComputationTooLarge(
            f"{what} needs an estimated ~{_bytes_text(estimate.bytes)} of memory (limit {_bytes_text(mem)}, "
            f"{_fraction():.0%} of the available memory); {suggestion}, or raise the share with "
            "smoothdp_nb.core.runtime.budget.set_memory_fraction() or SMOOTHDP_MEMORY_FRACTION",
            parameter,
        )
    if estimate.seconds > budget:
        raise ComputationTooLarge(
            f"{what} is estimated to take ~{estimate.seconds:.3g} s (budget {budget:g} s); {suggestion}, "
            "or raise budget=",
            parameter,
        )


def current_budget() -> float:
    """The time budget (seconds) of the computation running here: the ``budget=`` of the entry
    point that started it (:func:`budget_scope`), else :data:`DEFAULT_BUDGET_SECONDS`."""
    return _current_budget.get()


@contextmanager
def budget_scope(budget: float) -> Iterator[float]:
    """Hold ``budget`` seconds (validated: > 0, ``math.inf`` for no limit) as :func:`current_budget`
    while the block runs; yields it.  Each thread and task has its own (:mod:`contextvars`)."""
    seconds = as_real(budget, "budget", lo=0.0, lo_open=True, finite=False)
    token = _current_budget.set(seconds)
    try:
        yield seconds
    finally:
        _current_budget.reset(token)


def cap_workers(workers: object, name: str = "workers", *, external: bool = False) -> int:
    """A worker count for a local pool: an integer >= 1, at most the CPUs this process may use.

    The CPUs are :func:`smoothdp_nb.core.runtime.parallel.available_cpus` (affinity
    mask and cgroup quota, not the host's ``os.cpu_count()``).  With
    ``external=True`` (an external scheduler places the work) only ``>= 1`` is
    checked.
    """
    cores = parallel.available_cpus()
    if external:
        return as_int(workers, name, minimum=1)
    return as_int(workers, name, minimum=1, maximum=cores)
