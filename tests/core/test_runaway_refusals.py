"""Sizes up to 10^18: every call is refused with an estimate, or finishes within its budget and the memory budget.

Each example runs in this process under ``tracemalloc`` (Python and numpy
allocations are traced): the peak must stay below the memory budget, and the
wall time below the time budget plus a margin for the machine's load.
"""

from __future__ import annotations

import time
import tracemalloc
import warnings

import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime.budget import ComputationTooLarge, memory_budget

BUDGET = 2.0  # seconds
MARGIN = 20.0  # seconds: the estimate's probes and a loaded two-core machine

#: log-uniform sizes from 1 to 10^18
SIZES = st.integers(0, 18 * 8).map(lambda i: max(1, round(10 ** (i / 8))))


def assert_refused_or_within_budget(call, budget: float) -> str:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a refusal comes with no warning first (no overflow on the way)
            call()
        outcome = "finished"
    except ComputationTooLarge as exc:
        assert "estimate" in str(exc)
        outcome = "refused"
    finally:
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert elapsed < budget + MARGIN, (outcome, elapsed)
    assert peak < memory_budget(), (outcome, peak)
    return outcome


@settings(max_examples=12, deadline=None)
@given(SIZES)
def test_smoothed_delta_at_any_n(n: int) -> None:
    mech = sdp.SamplingHistogram(eta=0.5)
    assert_refused_or_within_budget(
        lambda: sdp.smoothed_delta(mech, n, [[0.3, 0.7], [0.6, 0.4]], 1.0, budget=BUDGET, progress=False), BUDGET
    )


@pytest.mark.parametrize("n", [10**9, 10**18])
def test_huge_n_is_refused_at_once(n: int) -> None:
    mech = sdp.SamplingHistogram(eta=0.5)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ComputationTooLarge, match="estimated"):
            sdp.smoothed_delta(mech, n, [[0.3, 0.7], [0.6, 0.4]], 1.0, progress=False)
    assert time.perf_counter() - t0 < 1.0


@settings(max_examples=8, deadline=None)
@given(st.one_of(st.integers(1, 50), st.integers(8 * 8, 18 * 8).map(lambda i: round(10 ** (i / 8)))))
def test_repeat_of_any_size(k: int) -> None:
    """Small k finish; k from 10^8 up are refused (the composed grid would not fit), never a runaway."""
    mech = sdp.repeat(sdp.SamplingHistogram(eta=0.5), k)
    outcome = assert_refused_or_within_budget(lambda: sdp.privacy_profile(mech, [3, 2], 1.0), 30.0)
    assert outcome == ("finished" if k <= 50 else "refused")
