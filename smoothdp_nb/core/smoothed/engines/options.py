"""The keyword arguments :func:`~smoothdp_nb.smoothed_epsilon` (and
:meth:`SmoothedResult.epsilon_for`) pass on to :func:`~smoothdp_nb.smoothed_delta`, as a type."""

from __future__ import annotations

from concurrent.futures import Executor
from typing import TypedDict

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.runtime.executors import ClientLike

__all__ = ["SmoothedOptions", "SmoothedEpsilonOptions"]


class SmoothedOptions(TypedDict, total=False):
    """The keywords of :func:`~smoothdp_nb.smoothed_delta` after ``method``, as
    :func:`~smoothdp_nb.smoothed_delta_curve` passes them on."""

    progress: bool | None
    budget: float
    trials: int
    rng: SeedLike
    confidence: float
    candidates: int
    executor: Executor | ClientLike | None
    chunk: int
    interval: str


class SmoothedEpsilonOptions(SmoothedOptions, total=False):
    """The keywords :func:`~smoothdp_nb.smoothed_epsilon` accepts besides ``log``: those of
    :func:`~smoothdp_nb.smoothed_delta` (its exact path reads ``progress`` and ``budget``; the
    Monte Carlo ones are not used), ``method`` included, which may only be ``"exact"``."""

    method: str
