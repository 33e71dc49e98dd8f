"""Up-front estimates against measured counts of work units (no timed assertions).

Every refusal rests on a model: work units (profiles evaluated, databases drawn,
grid cells, bytes of the largest arrays) times a per-unit cost.  Here each
model's unit count is compared with the count measured on the running code
(instrumented calls, tracemalloc peaks), within a factor of three.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime import budget
from smoothdp_nb.core.runtime.sweeps import monte_carlo_map
from smoothdp_nb.core.smoothed import quantized as average_module
from smoothdp_nb.core.smoothed.engines import exact as exact_module, monte_carlo as mc_module
from smoothdp_nb.core.smoothed.engines.estimate import (
    candidate_count,
    estimate_exact,
    estimate_monte_carlo,
    expected_distinct_histograms,
)
from smoothdp_nb.core.smoothed.mechanisms import Mechanism

TWO = [[0.4, 0.6], [0.6, 0.4]]
THREE = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]


def _within3(estimate: float, measured: float) -> bool:
    return measured / 3 <= estimate <= 3 * measured


# (mechanism, n, Pi, trials, candidates, chunk)
MC_CASES = [
    (sdp.SamplingHistogram(eta=0.5), 100, TWO, 3000, 16, 1000),
    (sdp.SamplingHistogram(eta=0.5), 5000, TWO, 20000, 4, 10000),
    (sdp.SamplingHistogram(eta=0.5), 3 * 10**6, [[0.45, 0.55]], 20000, 1, 10000),
    (sdp.SamplingHistogram(T=3), 60, THREE, 2000, 4, 1000),
    (sdp.SamplingHistogram(eta=0.5), 300, [[0.1, 0.9], [0.5, 0.5], [0.9, 0.1]], 1000, 6, 300),
    (sdp.NoisySamplingHistogram(T=4, noise_epsilon=1.0), 80, TWO, 500, 3, 200),
]


@pytest.mark.parametrize("case", MC_CASES, ids=lambda c: f"{type(c[0]).__name__}-n{c[1]}-l{len(c[2])}")
def test_monte_carlo_units_match_measured(monkeypatch, case):
    mech, n, pi, trials, k, chunk = case
    profiled, drawn, candidates = [], [], []
    real_profile, real_trials, real_map = Mechanism._profile, mc_module._mc_trials, mc_module.monte_carlo_map

    def counting_profile(m, h, e):  # the engines' entry of the protocol
        profiled.append(len(h))
        return real_profile(m, h, e)

    def counting_trials(size, rng, **kw):
        drawn.append(size)
        return real_trials(size, rng, **kw)

    monkeypatch.setattr(Mechanism, "_profile", counting_profile)

    def counting_map(*args, **kw):
        candidates.append(1)  # one call per candidate composition
        return real_map(*args, **kw)

    real_cells = mc_module._mc_cell_trials

    def counting_cells(size, rng, **kw):
        drawn.append(size)
        return real_cells(size, rng, **kw)

    monkeypatch.setattr(mc_module, "_mc_trials", counting_trials)
    monkeypatch.setattr(mc_module, "_mc_cell_trials", counting_cells)
    monkeypatch.setattr(mc_module, "monte_carlo_map", counting_map)
    sdp.smoothed_delta(mech, n, pi, 1.0, method="monte-carlo", trials=trials, candidates=k, rng=3, chunk=chunk)
    _, units = estimate_monte_carlo(mech, n, np.array(pi), 1, trials, k, chunk)
    assert units["candidates"] == len(candidates)
    assert units["databases"] == sum(drawn)
    assert _within3(units["profiles"], sum(profiled)), (units["profiles"], sum(profiled))


@pytest.mark.parametrize("n,l,k", [(100, 2, 16), (100, 3, 16), (1000, 3, 50), (10, 4, 1000), (5, 2, 3), (1000, 4, 16)])
def test_candidate_count_without_enumerating(n, l, k):
    assert candidate_count(n, l, k) >= len(mc_module.candidate_compositions(n, l, k)) >= candidate_count(n, l, k) / 3


def test_expected_distinct_two_categories_against_simulation():
    # an independent check of the closed form: the mean number of distinct counts in 400 runs
    rng = np.random.default_rng(5)
    counts, V, draws = np.array([30, 20]), np.array(TWO), 50
    sims = [len(np.unique(rng.binomial(30, 0.4, draws) + rng.binomial(20, 0.6, draws))) for _ in range(400)]
    assert expected_distinct_histograms(counts, V, draws) == pytest.approx(np.mean(sims), rel=0.03)


# (mechanism, n, Pi, number of epsilon)
EXACT_CASES = [
    (sdp.SamplingHistogram(eta=0.5), 2000, TWO, 2),
    (sdp.SamplingHistogram(eta=0.5), 5000, [[0.4, 0.6]], 3),
    (sdp.SamplingHistogram(T=3), 30, THREE, 1),
    (sdp.SamplingHistogram(T=2), 12, THREE + [[0.3, 0.5, 0.2]], 2),
]


@pytest.mark.parametrize("case", EXACT_CASES, ids=lambda c: f"n{c[1]}-m{len(c[2][0])}-l{len(c[2])}")
def test_exact_profile_units_and_memory(monkeypatch, case):
    mech, n, pi, E = case
    m, l = len(pi[0]), len(pi)
    rows = []
    real = exact_module._profile_chunk

    def counting(mm, h, e):  # the exact engine's profile chunks (the estimate's own sample is not counted)
        rows.append(len(h) * np.size(e))
        return real(mm, h, e)

    monkeypatch.setattr(exact_module, "_profile_chunk", counting)
    tracemalloc.start()
    try:
        sdp.smoothed_delta(mech, n, pi, np.linspace(0.3, 1.0, E))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    est = estimate_exact(mech, n, m, l, E)
    # profiled (histogram, epsilon) pairs: the model counts C(n + m - 1, m - 1) histograms times E,
    # one of each mirror pair (n // 2 + 1) for a label-symmetric mechanism on two categories
    count = n // 2 + 1 if m == 2 and mech.label_symmetric else math.comb(n + m - 1, m - 1)
    assert sum(rows) == count * E
    assert _within3(est.bytes, peak), (est.bytes, peak)


def test_single_vertex_is_not_charged_the_two_vertex_recursion():
    # one vertex at n = 10^6 takes seconds: it must not be priced as the O(n^2) recursion (~1.25e3 s) and refused
    est = estimate_exact(sdp.SamplingHistogram(eta=0.5), 10**6, 2, 1, 1)
    assert est.seconds < 60 and est.seconds < budget.DEFAULT_BUDGET_SECONDS
    two = estimate_exact(sdp.SamplingHistogram(eta=0.5), 10**6, 2, 2, 1)
    # the recursion is still charged to two vertices (about 25 s at 10^6 since its segments were
    # vectorised, against a few seconds for one vertex)
    assert two.seconds > 5 * est.seconds


def test_continuous_limit_occupied_values(monkeypatch):
    seen = []
    real = average_module._profile

    def counting(mech, hists, e):
        seen.append(np.count_nonzero(hists, axis=1).mean())
        return real(mech, hists, e)

    monkeypatch.setattr(average_module, "_profile", counting)
    n, b = 20, 6
    sdp.continuous_limit_profile(stats.beta(2, 3).cdf, n, 3, [1.0], bits=[b], databases=30, rng=1)
    p = np.diff(stats.beta(2, 3).cdf(np.arange(2**b + 1) / 2**b))
    expected = np.sum(1 - (1 - p) ** n)  # the model's occupied-value count
    assert _within3(expected, seen[0])


def test_monte_carlo_map_probe_memory():
    def trial(size, rng):
        return rng.random((size, 3))

    from smoothdp_nb.core.runtime.sweeps import probe_estimate

    est = probe_estimate(trial, 5000, 1000, {}, 1)
    out = monte_carlo_map(trial, 5000, 1, chunk=1000)
    assert est.bytes == 2 * out.nbytes  # the chunks and their concatenation


# ---------------------------------------------------------------- refusals: before any work, with estimate, limit, suggestion


def test_runaway_monte_carlo_refused_before_drawing(monkeypatch):
    monkeypatch.setattr(mc_module, "_mc_trials", lambda *a, **k: pytest.fail("drew databases"))
    with pytest.raises(sdp.ComputationTooLarge) as info:
        sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.5), 100, TWO, 1.0, method="monte-carlo", trials=10**8)
    msg = str(info.value)
    assert "estimated" in msg and "budget 600 s" in msg and "fewer trials" in msg
    assert info.value.parameter == "trials"
    with pytest.raises(sdp.ComputationTooLarge, match="memory") as info:
        sdp.smoothed_delta(
            sdp.SamplingHistogram(eta=0.5), 100, TWO, 1.0, method="monte-carlo", trials=10**12, budget=math.inf
        )


def test_runaway_monte_carlo_map_refused_before_the_run():
    calls = []

    def trial(size, rng):
        calls.append(size)
        return np.zeros(size)

    with pytest.raises(sdp.ComputationTooLarge, match="memory"):
        monte_carlo_map(trial, 10**9, 0)
    assert sum(calls) <= 16 + 256  # only the probe ran


def test_exact_memory_refused_even_without_time_limit(monkeypatch):
    monkeypatch.setattr(exact_module, "_profile_chunk", lambda *a, **k: pytest.fail("started"))
    with pytest.raises(sdp.ComputationTooLarge, match="memory"):
        sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.5), 20000, THREE, 1.0, budget=math.inf)


def test_curve_estimates_every_point_before_the_first(monkeypatch):
    monkeypatch.setattr(exact_module, "_profile_chunk", lambda *a, **k: pytest.fail("started"))
    with pytest.raises(sdp.ComputationTooLarge, match="curve"):
        sdp.smoothed_delta_curve(sdp.SamplingHistogram(eta=0.5), [1e3, 1e5, 1e7], TWO, 1.0)


def test_continuous_limit_16_bits_refused_at_once():
    with pytest.raises(sdp.ComputationTooLarge, match="memory"):
        sdp.continuous_limit_profile(stats.uniform.cdf, 20, 4, [1.0], bits=[16])
    with pytest.raises(sdp.ComputationTooLarge):
        sdp.continuous_limit_profile(stats.uniform.cdf, 20, 4, [1.0], bits=16)


def test_memory_fraction_configurable(monkeypatch):
    est = budget.Estimate(0.0, 0.3 * budget.available_memory())
    budget.check_budget(est, 1.0, "x", "y")  # 30 % < the default half
    previous = budget.set_memory_fraction(0.1)
    try:
        with pytest.raises(sdp.ComputationTooLarge, match="10%"):
            budget.check_budget(est, 1.0, "x", "y")
    finally:
        budget.set_memory_fraction(previous)
    monkeypatch.setenv("SMOOTHDP_MEMORY_FRACTION", "0.2")
    with pytest.raises(sdp.ComputationTooLarge, match="20%"):
        budget.check_budget(est, 1.0, "x", "y")
    monkeypatch.setenv("SMOOTHDP_MEMORY_FRACTION", "2")
    with pytest.raises(ValueError, match="SMOOTHDP_MEMORY_FRACTION"):
        budget.check_budget(est, 1.0, "x", "y")
    with pytest.raises(ValueError, match="fraction"):
        budget.set_memory_fraction(0)


def test_workers_capped_at_cores_unless_external(monkeypatch):
    from smoothdp_nb.core.runtime import parallel

    cores = parallel.available_cpus()
    assert budget.cap_workers(cores) == cores
    with pytest.raises(ValueError, match="workers"):
        budget.cap_workers(cores + 1)
    assert budget.cap_workers(1000, external=True) == 1000
    with pytest.raises(TypeError, match="workers"):
        budget.cap_workers(True)
    # the CPUs the process may use, not the host's cores (e.g. a cgroup quota of 1.5 CPUs on a big host)
    monkeypatch.setattr(parallel, "available_cpus", lambda: 2)
    assert budget.cap_workers(2) == 2
    with pytest.raises(ValueError, match="workers"):
        budget.cap_workers(3)


# ---------------------------------------------------------------- sweeps of an opaque fn: one probe point, extrapolated

# (grid points, work units of point i, bytes allocated for a while by each point, result columns)
SWEEP_CASES = [
    (40, lambda i: 3.0, 8 * 10**6, 1),
    (400, lambda i: 1.0 + i % 3, 10**5, 1),  # the probe (i = 0) is the cheapest point: estimate x0.5
    (3000, lambda i: 0.5, 10**4, 40),  # the table of results dominates the memory
]


@pytest.mark.parametrize("case", SWEEP_CASES, ids=lambda c: f"points{c[0]}-bytes{c[2]}-cols{c[3]}")
def test_sweep_probe_estimate_matches_measured_units(monkeypatch, case):
    """The probe's extrapolation against the work units of the whole sweep (a
    clock advanced by the work units, never real time) and its tracemalloc peak."""
    import types

    from smoothdp_nb.core.runtime import sweeps as sweeps_module

    points, units, nbytes, columns = case
    clock = [0.0]
    monkeypatch.setattr(sweeps_module, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    estimates = []
    real = sweeps_module.sweep_estimate

    def recording(*args):
        estimates.append(real(*args))
        return estimates[-1]

    monkeypatch.setattr(sweeps_module, "sweep_estimate", recording)
    work = []

    def fn(i):
        clock[0] += units(i)
        work.append(units(i))
        tmp = np.ones(nbytes // 8)
        return {f"c{j}": float(tmp[j % tmp.size] + i) for j in range(columns)}

    tracemalloc.start()
    try:
        res = sdp.sweep(fn, {"i": range(points)}, progress=False, budget=math.inf)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.complete and len(work) == points  # the probe's point is not run twice
    (est,) = estimates
    assert _within3(est.seconds, sum(work[1:])), (est.seconds, sum(work[1:]))
    assert _within3(est.bytes, peak), (est.bytes, peak)


def test_sweep_refused_after_the_probe_before_the_rest():
    calls = []

    def slow(n):
        calls.append(n)
        tmp = 0.0
        for k in range(20000):  # a few milliseconds of real work per point
            tmp += k
        return tmp

    with pytest.raises(sdp.ComputationTooLarge) as info:
        sdp.sweep(slow, {"n": range(10**6)}, budget=1.0, progress=False)
    assert calls == [0]  # only the probe ran
    msg = str(info.value)
    assert "1000000 grid points" in msg and "budget 1 s" in msg and "fewer grid points" in msg
    assert info.value.parameter == "grid"


def test_sweep_memory_refused_after_the_probe(monkeypatch):
    calls = []

    def big(n):
        calls.append(n)
        return float(np.ones(2 * 10**6).sum())  # 16 MB for a while

    monkeypatch.setattr(budget, "available_memory", lambda: 10**7)  # limit: half of 10 MB
    with pytest.raises(sdp.ComputationTooLarge, match="memory"):
        sdp.sweep(big, {"n": range(20)}, budget=math.inf, progress=False)
    assert calls == [0]


def test_sweep_probe_skips_failing_points_and_budget_none_skips_it(monkeypatch):
    from smoothdp_nb.core.runtime import sweeps as sweeps_module

    calls = []

    def fn(n):
        calls.append(n)
        if n < 2:
            raise ValueError("bad point")
        return n

    res = sdp.sweep(fn, {"n": range(6)}, progress=False)
    assert calls == list(range(6)) and [i for i, _ in res.failures] == [0, 1]
    monkeypatch.setattr(sweeps_module, "_probe_point", lambda *a: pytest.fail("probed"))
    assert sdp.sweep(fn, {"n": range(2, 6)}, progress=False, budget=None).complete
    with pytest.raises(TypeError, match="budget"):
        sdp.sweep(fn, {"n": range(6)}, budget="1")
