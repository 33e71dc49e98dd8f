"""Sizes up to 10^18: every call is refused with an estimate, or finishes within its budget and the memory budget.

Each example runs in this process under ``tracemalloc`` (Python and numpy
allocations are traced): the peak must stay below the memory budget, and the
wall time below the time budget plus a margin for the machine's load.
"""

from __future__ import annotations

import time
import tracemalloc
import warnings
from collections.abc import Iterator, Mapping

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


# --- every public entry point, at random sizes up to 10^18 ------------------------------------------------

PI = [[0.3, 0.7], [0.6, 0.4]]
#: the largest database a histogram may hold: beyond it an entry point refuses the input itself
#: (ValueError naming the limit), which is a refusal before any work as well
RECORD_LIMIT = "2**53"


class _LazyLaw(Mapping[int, float]):
    """A pmf's answer with ``size`` outputs, uniform, listed only when iterated: a support of
    10^18 outputs must be refused from its length, before anything reads it."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.size))

    def __getitem__(self, key: int) -> float:
        if not 0 <= key < self.size:
            raise KeyError(key)
        return 1.0 / self.size


def _sampling() -> sdp.SamplingHistogram:
    return sdp.SamplingHistogram(eta=0.5)


def _uniform_pmf(size: int) -> sdp.FiniteMechanism:
    law = _LazyLaw(size)
    return sdp.FiniteMechanism(lambda hist: law, categories=2, name=f"uniform on {size}")


#: entry point -> a call at size s (a number of records, runs, mechanisms, outputs or grid points)
ENTRY_POINTS = {
    "smoothed_delta exact n": lambda s: sdp.smoothed_delta(_sampling(), s, PI, 1.0, budget=BUDGET, progress=False),
    "smoothed_delta monte-carlo n": lambda s: sdp.smoothed_delta(
        _sampling(), s, PI, 1.0, method="monte-carlo", trials=100, budget=BUDGET, progress=False
    ),
    "smoothed_delta_curve n": lambda s: sdp.smoothed_delta_curve(
        _sampling(), [s, s + 1], PI, 1.0, budget=BUDGET, progress=False
    ),
    "smoothed_epsilon n": lambda s: sdp.smoothed_epsilon(_sampling(), s, PI, 1e-3, budget=BUDGET, progress=False),
    "smoothed_renyi n": lambda s: sdp.smoothed_renyi(_sampling(), s, PI, 2.0, budget=BUDGET),
    "privacy_profile n": lambda s: sdp.privacy_profile(_sampling(), [s, s], 1.0, budget=BUDGET),
    "privacy_profile repeat k": lambda s: sdp.privacy_profile(sdp.repeat(_sampling(), s), [3, 2], 1.0, budget=BUDGET),
    "privacy_profile joint count": lambda s: sdp.privacy_profile(
        sdp.joint(*[_sampling()] * min(s, 20_000)), [3, 2], 1.0, budget=BUDGET
    ),
    "privacy_profile pmf support": lambda s: sdp.privacy_profile(_uniform_pmf(s), [3, 2], 1.0, budget=BUDGET),
    "privacy_loss_distribution repeat k": lambda s: sdp.privacy_loss_distribution(
        sdp.repeat(_sampling(), s), [3, 2], [2, 3], budget=BUDGET
    ).delta(1.0),
    "dp_delta n": lambda s: sdp.dp_delta(sdp.NoisySamplingHistogram(eta=0.5, noise_epsilon=1.0), s, 1.0, budget=BUDGET),
    "dp_delta repeat k": lambda s: sdp.dp_delta(sdp.repeat(_sampling(), s), 4, 1.0, budget=BUDGET),
    "renyi_profile repeat k": lambda s: sdp.renyi_profile(sdp.repeat(_sampling(), s), [3, 2], 2.0, budget=BUDGET),
    "renyi_profile n": lambda s: sdp.renyi_profile(_sampling(), [s, s], 2.0, budget=BUDGET),
    "sweep points": lambda s: sdp.sweep(_identity, {"a": range(s)}, budget=BUDGET, progress=False),
}


def _identity(a: int) -> int:
    return a


def assert_refused_finished_or_out_of_range(call, budget: float) -> str:  # type: ignore[no-untyped-def]
    """As :func:`assert_refused_or_within_budget`; a size beyond what a database may hold is
    refused as bad input (a ValueError naming the limit), before any work too."""
    try:
        return assert_refused_or_within_budget(call, budget)
    except ComputationTooLarge:
        raise
    except ValueError as exc:
        assert RECORD_LIMIT in str(exc), exc
        return "out of range"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(ENTRY_POINTS)), SIZES)
def test_every_entry_point_refuses_or_finishes_at_any_size(entry: str, size: int) -> None:
    """Random entry point x random size in [1, 10^18]: refused with an estimate (or as out of
    range), or finished within the budget plus the margin, below the memory budget, no warning."""
    assert_refused_finished_or_out_of_range(lambda: ENTRY_POINTS[entry](size), BUDGET)


#: entry points whose work does not grow with the size: the Renyi divergences of k runs add up
#: (k times one run's), so nothing is composed
SIZE_FREE = {"renyi_profile repeat k"}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_refuses_the_largest_size(entry: str) -> None:
    """At 10^18 every entry point refuses, whichever way, before any work (or, where the size
    costs nothing, finishes)."""
    t0 = time.perf_counter()
    outcome = assert_refused_finished_or_out_of_range(lambda: ENTRY_POINTS[entry](10**18), BUDGET)
    assert outcome == "finished" if entry in SIZE_FREE else outcome in ("refused", "out of range"), entry
    assert time.perf_counter() - t0 < MARGIN


def test_a_refusal_names_its_estimate_its_budget_and_how_to_raise_it() -> None:
    with pytest.raises(ComputationTooLarge) as info:
        sdp.privacy_profile(sdp.joint(*[_sampling()] * 5000), [3, 2], 1.0, budget=1.0)
    text = str(info.value)
    assert "estimated to take" in text and "budget 1 s" in text and "raise budget=" in text
    assert info.value.parameter == "mechanisms"
    assert isinstance(info.value, ValueError)


def test_a_pmf_with_a_huge_support_is_refused_from_its_length() -> None:
    """The first law's length prices all of them: no output of a 10^12-output law is read."""
    with pytest.raises(ComputationTooLarge, match="1e\\+12 outputs") as info:
        sdp.privacy_profile(_uniform_pmf(10**12), [3, 2], 1.0)
    assert info.value.parameter == "pmf"


def test_the_budget_reaches_the_checks_inside_a_composition() -> None:
    """The same composition fits the default budget and is refused under a tiny one."""
    mech = sdp.joint(*[_sampling()] * 50)
    assert 0.0 <= sdp.privacy_profile(mech, [3, 2], 1.0) <= 1.0
    with pytest.raises(ComputationTooLarge, match=r"budget 0\.01 s"):
        sdp.privacy_profile(mech, [3, 2], 1.0, budget=0.01)
