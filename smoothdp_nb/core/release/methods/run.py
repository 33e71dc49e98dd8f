"""Running a data-dependent release method: validation, the padded data-dependent phase, the exact draw, the law.

:func:`run_method` is what :func:`~smoothdp_nb.core.release.smooth_sensitivity.release` calls for
every ``method`` other than ``"smooth-sensitivity"``; :func:`method_law` gives the exact output law
of a method on a dataset (for comparisons and tests: it is a function of the data, never a release).

Adversary's view.  The arguments are checked before the data is read (the same error for every
database); errors about the data name a record's position only.  The data-dependent phase (rounding
to the lattice, sorting, the blocks or the distance) is padded to a deadline measured on a public
synthetic database of the same size and inputs (:mod:`..timing`); the draws pad their rounds
themselves (:func:`.base.sample_blocked`, :func:`.base.sample_bernoulli`,
:func:`..lattice.sample_cell`), and their work is a function of the output.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.numerics.validation import as_bounds, as_flag, as_positive, as_real, as_rng
from smoothdp_nb.core.release import lattice as _lattice, timing as _timing
from smoothdp_nb.core.release.methods.base import CellLaw, LatticeData, MethodOutcome, lattice_cells, order_rank
from smoothdp_nb.core.release.methods.registry import get_method
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget

__all__ = ["DEFAULT_PROPOSAL_FRACTION", "MethodInputs", "check_inputs", "lattice_data", "method_law", "run_method"]

#: propose-test-release's default proposal: this fraction of the width of the bounds (public)
DEFAULT_PROPOSAL_FRACTION = 2.0**-6

QUANTILE_QUERIES = ("median", "quantile")


class MethodInputs:
    """The validated public inputs of a method release (no data)."""

    def __init__(
        self,
        method: str,
        query: str,
        quantile: float | None,
        epsilon: float,
        delta: float | None,
        bounds: tuple[float, float],
        step: float,
        proposal: float | None,
    ) -> None:
        self.method = method
        self.query = query
        self.quantile = quantile
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.step = step
        self.proposal = proposal


def check_inputs(
    method: str,
    query: object,
    epsilon: object,
    *,
    bounds: object,
    lattice: object = None,
    delta: object = None,
    quantile: object = None,
    proposal: object = None,
) -> MethodInputs:
    """Validate the public inputs of a method (names the parameter and its allowed range)."""
    obj = get_method(method)
    if not isinstance(query, str):
        raise TypeError(f"query must be 'median' or 'quantile' for method={obj.name!r}, got {type(query).__name__}")
    q = query.strip().lower()
    if q not in QUANTILE_QUERIES:
        raise ValueError(
            f"query must be 'median' or 'quantile' (with quantile=) for method={obj.name!r}, got {query!r}: "
            "the trimmed mean and the mean are released with method='smooth-sensitivity'"
        )
    p: float | None = None
    if q == "quantile":
        if quantile is None:
            raise ValueError("quantile is required for query='quantile': a number with 0 < quantile < 1")
        p = as_real(quantile, "quantile", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    elif quantile is not None:
        raise ValueError("quantile is only for query='quantile' (the median is query='median')")
    eps = as_positive(epsilon, "epsilon")
    d: float | None = None
    if obj.needs_delta:
        if delta is None:
            raise ValueError(f"delta is required for method={obj.name!r}: a number with 0 < delta < 0.5")
        d = as_real(delta, "delta", lo=0.0, hi=0.5, lo_open=True, hi_open=True)
    elif delta is not None:
        raise ValueError(f"delta is not used by method={obj.name!r} (pure epsilon-DP); pass delta=None")
    low, high = as_bounds(bounds)
    step = _lattice.default_lattice((low, high)) if lattice is None else _lattice.check_lattice(lattice, (low, high))
    prop: float | None = None
    if obj.uses_proposal:
        prop = (
            (high - low) * DEFAULT_PROPOSAL_FRACTION
            if proposal is None
            else as_real(proposal, "proposal", lo=0.0, hi=high - low, lo_open=True)
        )
        if not math.isfinite(2.0 * prop / eps):
            raise ValueError(
                f"proposal / epsilon too large: the Laplace scale 2 * proposal / epsilon must be a finite double, "
                f"got proposal={prop!r}, epsilon={eps!r}"
            )
    elif proposal is not None:
        raise ValueError(f"proposal is only for method='propose-test-release', got method={obj.name!r}")
    return MethodInputs(obj.name, q, p, eps, d, (low, high), step, prop)


def lattice_data(x: npt.ArrayLike, inp: MethodInputs, clip_infinite: bool) -> LatticeData:
    """The records of ``x`` on the lattice of ``inp``, with the rank of its query (private)."""
    cells, k_lo, k_hi = lattice_cells(x, inp.bounds, inp.step, clip_infinite=clip_infinite)
    return LatticeData(cells, order_rank(cells.size, inp.query, inp.quantile), inp.step, k_lo, k_hi)


def _prepared(x: npt.ArrayLike, inp: MethodInputs, clip_infinite: bool) -> tuple[LatticeData, object]:
    data = lattice_data(x, inp, clip_infinite)
    obj = get_method(inp.method)
    return data, obj.prepare(data, inp.epsilon, inp.delta, inp.proposal)


@functools.lru_cache(maxsize=64)
def _prepare_cost(
    method: str,
    query: str,
    quantile: float | None,
    n: int,
    low: float,
    high: float,
    step: float,
    epsilon: float,
    delta: float | None,
    proposal: float | None,
) -> float:
    """Time (s) of the data-dependent phase on a public synthetic database of n records (best of two)."""
    grid = np.linspace(low, high, n) if n > 1 else np.array([low])
    synthetic = np.random.default_rng(n).permutation(grid)
    inp = MethodInputs(method, query, quantile, epsilon, delta, (low, high), step, proposal)
    best = math.inf
    for _ in range(2):
        t0 = time.perf_counter()
        _prepared(synthetic, inp, True)
        best = min(best, time.perf_counter() - t0)
    return best


def run_method(
    method: str,
    x: npt.ArrayLike,
    query: object,
    epsilon: object,
    *,
    bounds: object,
    lattice: object = None,
    rng: SeedLike = None,
    delta: object = None,
    quantile: object = None,
    proposal: object = None,
    reveal_true: object = False,
    clip_infinite: object = False,
) -> MethodOutcome:
    """Release a quantile with a data-dependent method other than smooth sensitivity (see :mod:`.methods`).

    Returns
    -------
    MethodOutcome
        ``value`` None when the method's test refused.
    """
    inp = check_inputs(
        method, query, epsilon, bounds=bounds, lattice=lattice, delta=delta, quantile=quantile, proposal=proposal
    )
    reveal = as_flag(reveal_true, "reveal_true")
    clip = as_flag(clip_infinite, "clip_infinite")
    gen = None if rng is None else as_rng(rng, "rng")
    obj = get_method(inp.method)
    n = int(np.size(x))
    deadline = (
        _timing.SENSITIVITY_MARGIN
        * _prepare_cost(
            inp.method, inp.query, inp.quantile, max(n, 1), *inp.bounds, inp.step, inp.epsilon, inp.delta, inp.proposal
        )
        + _timing.FLOOR
    )
    start = time.perf_counter()
    try:
        data, prepared = _prepared(x, inp, clip)
    finally:  # an error about the data is raised at the same public deadline
        _timing.wait_until(start, deadline)
    k = obj.sample(data, prepared, inp.epsilon, inp.delta, inp.proposal, gen)
    return MethodOutcome(
        value=None if k is None else float(k * inp.step),
        method=inp.method,
        lattice=inp.step,
        query=inp.query,
        quantile=inp.quantile,
        n=data.n,
        bounds=inp.bounds,
        epsilon=inp.epsilon,
        delta=inp.delta,
        guarantee=obj.guarantee(inp.epsilon, inp.delta),
        proposal=inp.proposal,
        true_value=float(data.true_cell * inp.step) if reveal else None,
    )


def method_law(
    method: str,
    x: npt.ArrayLike,
    query: object,
    epsilon: object,
    *,
    bounds: object,
    lattice: object = None,
    delta: object = None,
    quantile: object = None,
    proposal: object = None,
    clip_infinite: object = False,
) -> CellLaw:
    """The exact output law of ``method`` on ``x`` (all lattice cells and ⊥; data-dependent, not a release).

    Refused up front, with an estimate, when the lattice has too many cells to list
    (:func:`..runtime.budget.check_budget`): pass a coarser ``lattice=``.
    """
    inp = check_inputs(
        method, query, epsilon, bounds=bounds, lattice=lattice, delta=delta, quantile=quantile, proposal=proposal
    )
    low, high = inp.bounds
    cells = math.floor(high / inp.step) - math.ceil(low / inp.step) + 1
    check_budget(
        Estimate(seconds=cells * 2e-7, bytes=cells * 64.0),
        DEFAULT_BUDGET_SECONDS,
        f"the exact law over {cells} lattice cells",
        "pass a coarser lattice= (a larger power of two)",
        parameter="lattice",
    )
    data, prepared = _prepared(x, inp, as_flag(clip_infinite, "clip_infinite"))
    return get_method(inp.method).law(data, prepared, inp.epsilon, inp.delta, inp.proposal)
