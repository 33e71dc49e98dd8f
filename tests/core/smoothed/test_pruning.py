"""Certified pruning of compositions (core/smoothed/pruning.py) and the engine's ``stop``.

References: exact expectations by convolution in mpmath at 50 digits (small n,
synthetic profiles) and the plain log-space recursion of tests/exact.py.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.engines import binary as B, exact as X, pruning as P
from tests import exact


def mp_log_expectations(logdelta: np.ndarray, p1: float, p2: float) -> list[list[mp.mpf]]:
    """log E_r for every composition r and column, by exact convolution (50 digits)."""
    n, E = logdelta.shape[0] - 1, logdelta.shape[1]
    with mp.workdps(50):
        a, b = mp.mpf(p1), mp.mpf(p2)
        d = [[mp.exp(mp.mpf(float(v))) for v in logdelta[:, e]] for e in range(E)]
        out = []
        for r in range(n + 1):
            law = [mp.mpf(1)]
            for p, c in ((a, n - r), (b, r)):
                for _ in range(c):
                    law = [
                        (law[k] if k < len(law) else 0) * (1 - p) + (law[k - 1] * p if k else 0)
                        for k in range(len(law) + 1)
                    ]
            out.append([mp.log(mp.fsum(w * d[e][k] for k, w in enumerate(law))) for e in range(E)])
    return out


def sampling_profile(n: int, eta: float, eps: list[float]) -> np.ndarray:
    h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    return np.asarray(sdp.privacy_profile(sdp.SamplingHistogram(eta=eta), h, eps, log=True)).reshape(n + 1, -1)


profiles = st.builds(
    lambda n, steps, slope, shift: np.cumsum(np.r_[shift, (np.asarray(steps[:n]) * slope)])[:, None],
    st.integers(2, 28),
    st.lists(st.floats(-1.0, 1.0), min_size=28, max_size=28),
    st.floats(0.01, 3.0),
    st.floats(-50.0, 0.0),
)
probs = st.floats(0.01, 0.99)


@settings(max_examples=25, deadline=None)
@given(ld=profiles, p1=probs, p2=probs)
def test_upper_bounds_and_step_ratios_hold_exactly(ld, p1, p2):
    """Every bound of every composition is at or above the exact log E_r, and
    consecutive exact ratios lie in the proven step interval (any profile, any p)."""
    want = mp_log_expectations(ld, p1, p2)
    up = P.composition_upper_bounds(ld, p1, p2)
    lo, hi = P.step_ratio_bounds(ld, p1, p2)
    n = ld.shape[0] - 1
    for r in range(n + 1):
        assert up[r, 0] >= want[r][0]
        if r < n:
            step = want[r + 1][0] - want[r][0]
            assert lo[0] <= step <= hi[0]


@settings(max_examples=25, deadline=None)
@given(ld=profiles, p1=probs, p2=probs)
def test_plan_keeps_every_maximiser(ld, p1, p2):
    """The engine's range (per column, in its direction) holds every composition
    where the exact maximum is attained, and only provably smaller ones are left out."""
    plan = P.prune_plan(ld, p1, p2)
    want = [float(v[0]) for v in mp_log_expectations(ld, p1, p2)]
    n = ld.shape[0] - 1
    top = max(want)
    r = np.arange(n + 1)
    kept = (r >= n - plan.stop[0]) if plan.swapped[0] else (r <= plan.stop[0])
    assert kept[int(np.argmax(want))]
    for i in np.nonzero(~kept)[0]:
        assert plan.upper[i, 0] < top and want[i] < top


@pytest.mark.parametrize("p1,p2,eta,eps", [(0.3, 0.6, 0.9, [1.0]), (0.652, 0.501, 0.998, [0.1, 1.0, 5.0])])
def test_bounds_against_the_recursion_on_both_cases(p1, p2, eta, eps):
    """The two benchmark cases at n = 5000: bounds above the plain log-space
    recursion (float64, ~1e-12 relative: compared with that tolerance), and pruning
    as much as measured in benchmarks/README.md (two vertices: only a few hundred compositions kept)."""
    n = 5000
    ld = sampling_profile(n, eta, eps)
    ref = exact.composition_expectations_log(ld, p1, p2)
    up = P.composition_upper_bounds(ld, p1, p2)
    assert np.all(up >= ref - 1e-12 * np.abs(ref))
    plan = P.prune_plan(ld, p1, p2)
    if eta == 0.9:
        assert not plan.swapped[0] and plan.stop[0] < 400


@pytest.mark.parametrize("stop", [0, 3, 200, 1499, 2999])
def test_engine_stop_computes_the_same_prefix(stop):
    """exact_binary with ``stop`` gives the full run's values on 0 .. stop
    (narrower windows leave out no more than 2^-60) and -inf beyond."""
    ld = sampling_profile(3000, 0.9, [1.0, 3.0])
    full = B.exact_binary(ld, 0.3, 0.6, None)
    part = B.exact_binary(ld, 0.3, 0.6, None, stop=stop)
    np.testing.assert_allclose(part[: stop + 1], full[: stop + 1], rtol=1e-13)
    assert np.all(np.isneginf(part[stop + 1 :]))


def _no_pruning(*args, **kwargs):
    return None


@pytest.mark.parametrize(
    "pi,eta,eps,n",
    [
        ([[0.3, 0.7], [0.6, 0.4]], 0.9, [0.5, 1.0, 4.0], 4000),
        ([[0.7, 0.3], [0.35, 0.65]], 0.9, [1.0], 3000),  # the maximum at r = n: the swapped direction
        # the authors' vertices: 0.1 and 1 prune nothing at this n, 5 and 10 most (two engine runs)
        ([[0.652, 0.348], [0.501, 0.499]], 0.998, [0.1, 1.0, 5.0, 10.0], 10000),
    ],
)
def test_pruned_result_is_certified_and_honest(pi, eta, eps, n, monkeypatch):
    """With pruning the enclosure still holds the exact maximum and is no wider
    than without; pruned rows are flagged, carry upper bounds (at or above the
    exact values) and never a lower bound; the worst composition is the same.
    Exact values: the plain log-space recursion up to n = 4000, beyond it the
    full engine (its rows are proven within ~1e-10 relative)."""
    monkeypatch.setattr(X, "PRUNE_MIN_N", 1000)  # pruning from 20 000 records on: lowered here
    res = sdp.smoothed_delta(sdp.SamplingHistogram(eta=eta), n, pi, eps, progress=False)
    monkeypatch.setattr(X, "prune_plan", _no_pruning)
    old = sdp.smoothed_delta(sdp.SamplingHistogram(eta=eta), n, pi, eps, progress=False)
    if n <= 4000:
        ref = exact.composition_expectations_log(sampling_profile(n, eta, eps), pi[0][0], pi[1][0])
        rtol = 1e-12
    else:
        ref = old.table["log_delta"].to_numpy().reshape(len(eps), n + 1).T
        rtol = 1e-9
    best = ref.max(axis=0)
    tol = rtol * np.abs(best)
    assert np.all(res.log_delta >= best - tol) and np.all(res.log_delta_lower <= best + tol)
    assert np.all(res.log_delta - res.log_delta_lower <= old.log_delta - old.log_delta_lower + 1e-13)
    np.testing.assert_allclose(res.log_delta, old.log_delta, rtol=1e-10)
    assert np.array_equal(res.worst_composition, old.worst_composition)
    tab = res.table
    assert "pruned" in tab and tab["pruned"].any()
    assert any("pruned" in note for note in res.notes)
    got = tab["log_delta"].to_numpy().reshape(len(eps), n + 1).T
    flag = tab["pruned"].to_numpy().reshape(len(eps), n + 1).T
    assert np.all(got[flag] >= ref[flag] - rtol * np.abs(ref[flag]))
    assert np.all(got[flag] < res.log_delta_lower[np.nonzero(flag)[1]])
    np.testing.assert_allclose(got[~flag], ref[~flag], rtol=1e-9)


def test_helper_changes_nothing_when_pruning(monkeypatch):
    """The pruned runs split between the helper and this thread give the same bits as alone."""
    monkeypatch.setattr(X, "PRUNE_MIN_N", 1000)
    monkeypatch.setattr(X, "HELPER_MIN_N", 600)
    m = sdp.SamplingHistogram(eta=0.9)
    pi = [[0.3, 0.7], [0.6, 0.4]]
    eps = [0.3, 1.0, 2.0, 4.0, 9.0]
    authors = sdp.SamplingHistogram(eta=0.998), [[0.652, 0.348], [0.501, 0.499]], [0.1, 5.0]
    with_helper = sdp.smoothed_delta(m, 3000, pi, eps, progress=False)
    # 0.1 prunes nothing: computed from both ends, the second half on the helper
    both = sdp.smoothed_delta(authors[0], 6000, authors[1], authors[2], progress=False)
    monkeypatch.setattr(X, "_helper", lambda n: None)
    alone = sdp.smoothed_delta(m, 3000, pi, eps, progress=False)
    assert np.array_equal(with_helper.table["log_delta"], alone.table["log_delta"])
    assert with_helper.table["pruned"].any()
    both_alone = sdp.smoothed_delta(authors[0], 6000, authors[1], authors[2], progress=False)
    assert np.array_equal(both.table["log_delta"], both_alone.table["log_delta"])
    assert np.array_equal(both.log_delta_lower, both_alone.log_delta_lower)


def test_both_ends_equal_one_run(monkeypatch):
    """The two half runs (r <= n/2 forward, the rest with the vertices swapped)
    give every composition as one full run does, and a bound no looser."""
    ld = sampling_profile(5000, 0.998, [0.1, 1.0])
    full = B.exact_binary(ld, 0.652, 0.501, None)
    got, rel = X._from_both_ends(ld, 0.652, 0.501, None, None, float(np.abs(ld).max()))
    np.testing.assert_allclose(got, full, rtol=1e-13)
    assert 0 < rel < 1e-8


def test_no_certificate_no_pruning():
    """A zero delta (no lower bound on the ratios) or a vertex at 0 or 1: no plan."""
    ld = sampling_profile(200, 0.9, [1.0])
    assert P.prune_plan(ld, 0.3, 1.0) is None
    zero = ld.copy()
    zero[5] = -np.inf
    assert P.prune_plan(zero, 0.3, 0.6) is None


@pytest.mark.parametrize("stop", [0, 150, 1700])
def test_cost_model_counts_the_work_of_a_stopped_run(stop):
    """The cost model's units for ``stop`` are the ones the engine performs with it."""
    from smoothdp_nb.core.smoothed.engines.cost import binary_work_units

    ld = sampling_profile(3000, 0.9, [1.0, 3.0])
    work: dict[str, int] = {}
    B.exact_binary(ld, 0.3, 0.6, None, work=work, stop=stop)
    want = binary_work_units(3000, 2, 0.3, 0.6, log_bound=B.window_log_bound(ld), slope=B.log_slope(ld), stop=stop)
    assert work["blocks"] == want["blocks"]
    assert work["advance"] == pytest.approx(want["advance"], rel=0.01)
    assert work["correlation"] == pytest.approx(want["correlation"], rel=0.01)


@pytest.mark.parametrize(
    "eta,p1,p2,eps", [(0.9, 0.3, 0.6, [1.0, 3.0]), (0.9, 0.6, 0.3, [1.0]), (0.998, 0.652, 0.501, [0.1, 1.0, 5.0])]
)
def test_cost_model_predicts_the_pruned_range(eta, p1, p2, eps):
    """From the cost model's sample of 1024 histogram pairs, the predicted range
    of every column is within a factor 3 of the certified one (and in the same
    direction wherever it prunes), so the engine's priced work is too."""
    from smoothdp_nb.core.smoothed.engines.cost import profile_sample

    n = 30000
    plan = P.prune_plan(sampling_profile(n, eta, eps), p1, p2)
    sample = profile_sample(sdp.SamplingHistogram(eta=eta), n, np.asarray(eps))
    stop, swapped = P.estimated_stops(sample.x, sample.logdelta, n, p1, p2, sample.slope)
    assert stop.shape == plan.stop.shape
    for got, want, w_got, w_want in zip(stop, plan.stop, swapped, plan.swapped):
        assert want / 3 - 50 <= got <= 3 * want + 50
        if 2 * want <= n:
            assert w_got == w_want


@pytest.mark.parametrize("p", [0.2])
def test_lower_bound_of_an_end_on_a_steep_profile(p):
    """eta = 0.5: log delta spans 22 000 nats at n = 200 000 (slope up to log 2),
    so a product of separately scaled weights and deltas underflows to 0 (the
    first version returned -inf and pruned nothing); the log-sum-exp bound is
    within 1e-9 below the exact log E[delta(Bin(n, p))] (scipy's log-pmf, 50-digit mpmath sum)."""
    from scipy.stats import binom

    n = 200000
    ld = sampling_profile(n, 0.5, [1.0])
    assert ld.max() - ld.min() > 20000
    lw = binom.logpmf(np.arange(n + 1), n, p)
    with mp.workdps(50):
        want = float(mp.log(mp.fsum(mp.exp(mp.mpf(float(a)) + mp.mpf(float(b))) for a, b in zip(lw, ld[:, 0]))))
    got = float(P.single_vertex_lower(ld, p)[0])
    assert want - 1e-9 * abs(want) <= got <= want


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 400),
    grid=st.integers(2, 40),
    seed=st.integers(0, 2**32 - 1),
    lo=st.floats(-3, 1),
    width=st.floats(0, 2),
)
def test_alive_span_by_arithmetic_matches_every_composition(n, grid, seed, lo, width):
    """The estimate's first and last surviving composition, found per gap between grid points,
    equal those of the envelope evaluated at every r = 0 .. n."""
    rng = np.random.default_rng(seed)
    rs = np.unique(np.r_[0, n, rng.integers(0, n + 1, grid)])
    Ug = rng.normal(0.0, 3.0, rs.size)
    hi = lo + width
    r = np.arange(n + 1, dtype=float)
    fwd = np.full(n + 1, np.inf)
    fwd[rs] = Ug - rs * hi
    bwd = np.full(n + 1, np.inf)
    bwd[rs] = Ug - rs * lo
    upper = np.minimum(np.minimum.accumulate(fwd) + r * hi, np.minimum.accumulate(bwd[::-1])[::-1] + r * lo)
    alive = np.nonzero(upper >= max(upper[0], upper[n]) - 1.0)[0]
    assert P._alive_span(rs, Ug, lo, hi, n) == (int(alive[0]), int(alive[-1]))
