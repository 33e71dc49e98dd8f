"""Sampling-average mechanism (Algorithm 3) and quantized laws (Definition 5).

The exact profile is checked against brute force over all T-subsets with
exact fractions; the quantized laws against direct integration.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms import ComputationTooLarge
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism import SamplingAverage
from smoothdp_nb.core.smoothed.profiles import privacy_profile
from smoothdp_nb.core.smoothed.quantized import quantized_gaussian, quantized_laplace
from tests import exact

EPS = np.array([0.0, 0.2, 0.7, 1.5, 3.0])


# -- brute force -------------------------------------------------------------
def _records(hist, grid):
    return [Fraction(float(grid[j])) for j in range(len(grid)) for _ in range(int(hist[j]))]


def _brute_pmf(hist, grid, T, output):
    """Exact output pmf by enumerating every T-subset of the records."""
    vals = _records(hist, grid)
    step = Fraction(float(grid[1])) - Fraction(float(grid[0]))
    counts: dict = {}
    for sub in itertools.combinations(range(len(vals)), T):
        s = sum((vals[i] for i in sub), Fraction(0))
        if output == "rounded_mean":
            q = s / T / step
            s = (1 if q >= 0 else -1) * math.floor(abs(q) + Fraction(1, 2))  # half away from zero
        counts[s] = counts.get(s, 0) + 1
    total = math.comb(len(vals), T)
    return {k: Fraction(v, total) for k, v in counts.items()}


def _hockey(P, Q, e):
    return sum(max(0.0, float(P.get(k, 0)) - math.exp(e) * float(Q.get(k, 0))) for k in set(P) | set(Q))


def _brute_delta(hist, grid, T, output, epsilon):
    P = _brute_pmf(hist, grid, T, output)
    best = np.zeros(len(epsilon))
    for a in range(len(grid)):
        if hist[a] == 0:
            continue
        for b in range(len(grid)):
            if b == a:
                continue
            h2 = list(hist)
            h2[a] -= 1
            h2[b] += 1
            Q = _brute_pmf(h2, grid, T, output)
            for i, e in enumerate(epsilon):
                best[i] = max(best[i], _hockey(P, Q, e), _hockey(Q, P, e))
    return best


def _assert_rel(got, want, rtol=1e-9):
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    scale = np.maximum(np.abs(want), 1e-300)
    assert np.all(np.abs(got - want) <= rtol * scale + 1e-15 * (want == 0)), (got, want)


def _cases(output, count, seed):
    rng = np.random.default_rng(seed)
    pool = np.array([-1.0, -0.75, -0.3, 0.0, 0.125, 0.4, 0.9, 1.0])
    for i in range(count):
        m = int(rng.integers(3, 7))
        if output == "sum" and i % 3 == 0:
            grid = np.sort(rng.choice(pool, m, replace=False))  # not evenly spaced
        else:
            k0 = int(rng.integers(-m, 1))
            grid = (np.arange(m) + k0) / 8  # evenly spaced, multiples of the step
        n = int(rng.integers(1, 11))
        T = int(rng.integers(1, min(4, n) + 1))
        hist = rng.multinomial(n, np.ones(m) / m)
        yield grid, hist, T


@pytest.mark.parametrize("output", ["sum", "rounded_mean"])
def test_profile_matches_brute_force(output):
    for grid, hist, T in _cases(output, 25, seed=11 if output == "sum" else 12):
        mech = SamplingAverage(T=T, grid=grid, output=output)
        got = privacy_profile(mech, hist, EPS)
        _assert_rel(got, _brute_delta(list(hist), list(grid), T, output, EPS))


def test_profile_batch_and_eta():
    grid = np.array([0.0, 0.25, 0.5, 0.75])
    hists = np.array([[2, 1, 0, 3], [0, 0, 6, 0], [1, 2, 2, 1]])
    mech = SamplingAverage(eta=0.5, grid=grid)
    got = privacy_profile(mech, hists, EPS)
    assert got.shape == (3, EPS.size)
    for row, h in zip(got, hists):
        _assert_rel(row, _brute_delta(list(h), list(grid), 3, "sum", EPS))
    logd = privacy_profile(mech, hists, EPS, log=True)
    np.testing.assert_allclose(np.exp(logd), got, rtol=1e-12)


def test_rounded_mean_ties_away_from_zero():
    # T = 2 on the grid {-2, -1, 0, 1, 2}/4: every mean below is half a step off the grid.
    grid = np.arange(-2, 3) / 4
    mech = SamplingAverage(T=2, grid=grid, output="rounded_mean")
    df = mech.output_pmf([0, 1, 1, 0, 0])  # records -1/4, 0: mean -1/8 -> -1/4
    assert list(df["value"]) == [-0.25]
    df = mech.output_pmf([0, 0, 1, 1, 0])  # 0, 1/4: mean 1/8 -> 1/4
    assert list(df["value"]) == [0.25]
    df = mech.output_pmf([1, 1, 0, 0, 0])  # records -1/2, -1/4: mean -3/8 -> -1/2
    assert list(df["value"]) == [-0.5]
    df = mech.output_pmf([0, 0, 0, 1, 1])  # 1/4, 1/2: mean 3/8 -> 1/2
    assert list(df["value"]) == [0.5]


@pytest.mark.parametrize("output", ["sum", "rounded_mean"])
def test_output_pmf_and_sampling(output):
    grid = np.arange(-3, 3) / 8
    hist = np.array([1, 0, 3, 2, 0, 2])
    mech = SamplingAverage(T=3, grid=grid, output=output)
    df = mech.output_pmf(hist)
    brute = _brute_pmf(list(hist), list(grid), 3, output)
    step = Fraction(1, 8)
    want = {float(k * step) if output == "rounded_mean" else float(k): float(v) for k, v in brute.items()}
    assert set(np.round(df["value"], 12)) == set(np.round(list(want), 12))
    for v, p in zip(df["value"], df["probability"]):
        assert p == pytest.approx(want[min(want, key=lambda k: abs(k - v))], rel=1e-12)
    np.testing.assert_allclose(df["log_probability"], np.log(df["probability"]))
    draws = mech.sample_histogram(hist, rng=3, size=4000)
    assert set(np.round(draws, 12)) <= set(np.round(df["value"], 12))
    single = mech.sample_histogram(hist, rng=3)
    assert isinstance(single, float)


def test_general_grid_pmf():
    grid = np.array([-0.3, 0.1, 0.2, 0.9])
    hist = np.array([2, 1, 1, 1])
    mech = SamplingAverage(T=2, grid=grid)
    df = mech.output_pmf(hist)
    brute = _brute_pmf(list(hist), list(grid), 2, "sum")
    assert len(df) == len(brute)  # equal exact sums are one output
    assert df["probability"].sum() == pytest.approx(1.0, abs=1e-14)


def test_worst_case_is_eta():
    # One record differs from the rest: the outputs are disjoint whenever it is sampled.
    grid = np.array([0.0, 0.5, 1.0])
    mech = SamplingAverage(T=2, grid=grid)
    d = privacy_profile(mech, [4, 0, 1], [0.0, 5.0, 50.0])
    np.testing.assert_allclose(d, 2 / 5, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(3, 6),
    T=st.integers(1, 4),
    extra=st.integers(0, 8),
    seed=st.integers(0, 2**31),
    output=st.sampled_from(["sum", "rounded_mean"]),
)
def test_profile_properties(m, T, extra, seed, output):
    rng = np.random.default_rng(seed)
    n = T + extra
    hist = rng.multinomial(n, rng.dirichlet(np.ones(m)))
    grid = np.arange(m) / 8 - 0.25
    mech = SamplingAverage(T=T, grid=grid, output=output)
    epsilon = np.linspace(0, 4, 9)
    d = privacy_profile(mech, hist, epsilon)
    assert np.all(d >= 0) and np.all(d <= 1)
    assert np.all(np.diff(d) <= 1e-15)
    assert np.all(d <= T / n + 1e-12)  # outputs agree unless the changed record is drawn


# -- quantized laws ------------------------------------------------------------
@pytest.mark.parametrize("mu,sigma,bits", [(0.0, 0.12, 8), (0.1, 0.12, 8), (0.2, 0.05, 6), (-0.4, 1.5, 3)])
def test_quantized_gaussian_definition5(mu, sigma, bits):
    law = quantized_gaussian(mu, sigma, bits=bits)
    K = 2**bits
    np.testing.assert_array_equal(law.values, (np.arange(K) - K // 2) / K)
    cdf = stats.norm(mu, sigma).cdf
    Z = cdf(0.5) - cdf(-0.5)
    want = (cdf(law.values + 1 / K) - cdf(law.values)) / Z
    np.testing.assert_allclose(law.pmf, want, rtol=1e-9, atol=1e-15)
    assert law.pmf.sum() == pytest.approx(1.0, abs=1e-14)
    _values, pmf = law  # unpacks
    assert pmf is law.pmf


def test_quantized_gaussian_far_tail_mpmath():
    mpmath.mp.dps = 50
    mu, sigma = 0.0, 0.05
    law = quantized_gaussian(mu, sigma, bits=8)

    def mass(a, b):
        def f(x):
            return mpmath.ncdf(x, mu, sigma)

        return f(b) - f(a)

    Z = mass(mpmath.mpf(-0.5), mpmath.mpf(0.5))
    for i in (0, 5, 128, 250, 255):
        x = mpmath.mpf(i - 128) / 256
        want = float(mass(x, x + mpmath.mpf(1) / 256) / Z)
        assert law.pmf[i] == pytest.approx(want, rel=1e-9)
    assert law.pmf[0] > 0 and law.pmf[0] < 1e-20  # relative precision in the tail


@pytest.mark.parametrize("mu,scale,bits", [(0.0, 0.1, 8), (0.3, 0.05, 8), (-0.2, 2.0, 4)])
def test_quantized_laplace(mu, scale, bits):
    law = quantized_laplace(mu, scale, bits=bits)
    K = 2**bits
    dist = stats.laplace(mu, scale)
    Z = dist.cdf(0.5) - dist.cdf(-0.5)
    want = (dist.cdf(law.values + 1 / K) - dist.cdf(law.values)) / Z
    np.testing.assert_allclose(law.pmf, want, rtol=1e-9, atol=1e-15)
    assert law.pmf.sum() == pytest.approx(1.0, abs=1e-14)


def test_quantized_laws_feed_the_mechanism():
    law = quantized_gaussian(0.0, 0.12, bits=3)
    mech = SamplingAverage(T=2, grid=law.values, output="rounded_mean")
    hist = np.array([0, 1, 2, 3, 2, 1, 0, 0])
    d = privacy_profile(mech, hist, [0.5, 2.0])
    want = _brute_delta(list(hist), list(law.values), 2, "rounded_mean", [0.5, 2.0])
    _assert_rel(d, want)


# -- bad input -------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(T=2, grid=[0.0, 0.5, 1.5]), "grid"),
        (dict(T=2, grid=[0.0, 0.5, 0.5]), "grid"),
        (dict(T=2, grid=[0.5, 0.0, 1.0]), "grid"),
        (dict(T=2, grid=[0.5]), "grid"),
        (dict(T=2, grid=[0.0, np.nan]), "grid"),
        (dict(T=0, grid=[0.0, 1.0]), "T"),
        (dict(eta=1.5, grid=[0.0, 1.0]), "eta"),
        (dict(eta=0.5, T=2, grid=[0.0, 1.0]), "eta"),
        (dict(T=2, grid=[0.0, 1.0], output="mean"), "output"),
        (dict(T=2, grid=[0.0, 0.25, 1.0], output="rounded_mean"), "grid"),
        (dict(T=2, grid=[0.1, 0.35, 0.6], output="rounded_mean"), "grid"),
    ],
)
def test_bad_mechanism_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SamplingAverage(**kwargs)


def test_bad_profile_arguments():
    mech = SamplingAverage(T=5, grid=[0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="T"):
        privacy_profile(mech, [1, 1, 1], 1.0)
    with pytest.raises(ValueError, match="hist"):
        mech.output_pmf([3, 3])
    with pytest.raises(ValueError, match="hist"):
        privacy_profile(mech, [3, 3, 3, 3], 1.0)


@pytest.mark.parametrize(
    "args,name",
    [
        ((0.0, 0.0), "sigma"),
        ((0.0, -1.0), "sigma"),
        ((0.0, np.inf), "sigma"),
        ((np.nan, 0.1), "mu"),
    ],
)
def test_bad_gaussian(args, name):
    with pytest.raises(ValueError, match=name):
        quantized_gaussian(*args)


@pytest.mark.parametrize("bits", [0, 17, -3])
def test_bad_bits(bits):
    with pytest.raises(ValueError, match="bits"):
        quantized_gaussian(0.0, 0.1, bits=bits)
    with pytest.raises(ValueError, match="bits"):
        quantized_laplace(0.0, 0.1, bits=bits)


def test_bad_laplace_scale():
    with pytest.raises(ValueError, match="scale"):
        quantized_laplace(0.0, 0.0)


def test_general_grid_too_large():
    grid = np.linspace(-1, 1, 40) + 1e-3 * np.sin(np.arange(40))
    grid = np.clip(grid, -1, 1)
    mech = SamplingAverage(T=8, grid=grid)
    with pytest.raises(ComputationTooLarge):
        mech.output_pmf(np.ones(40, dtype=int))


@pytest.mark.parametrize("output", ["sum", "rounded_mean"])
def test_profile_matches_direct_pmfs_midsize(output):
    """Larger case (n = 60, 16 grid values, many occupied): the divide-and-conquer
    profile equals the hockey-stick of the two full output pmfs, every neighbour."""
    from smoothdp_nb.core.numerics.divergence import log_hockey_stick

    law = quantized_gaussian(0.05, 0.2, bits=4)
    hist = np.random.default_rng(5).multinomial(60, law.pmf)
    mech = SamplingAverage(T=7, grid=law.values, output=output)
    epsilon = np.array([0.0, 0.5, 2.0, 4.0])
    got = privacy_profile(mech, hist, epsilon, log=True)

    def logpmf(h):
        df = mech.output_pmf(h)
        return dict(zip(np.round(df["value"], 12), df["log_probability"]))

    base = logpmf(hist)
    best = np.full(epsilon.size, -np.inf)
    for a in np.nonzero(hist)[0]:
        for b in range(law.values.size):
            if b == a:
                continue
            h2 = hist.copy()
            h2[a] -= 1
            h2[b] += 1
            other = logpmf(h2)
            keys = sorted(set(base) | set(other))
            lp = np.array([base.get(k, -np.inf) for k in keys])
            lq = np.array([other.get(k, -np.inf) for k in keys])
            best = np.maximum(best, log_hockey_stick(lp, lq, epsilon))
            best = np.maximum(best, log_hockey_stick(lq, lp, epsilon))
    np.testing.assert_allclose(got, best, rtol=1e-9)


def test_edge_sizes():
    grid = np.array([-0.5, 0.0, 0.5])
    # T = n: the output is the sum of the whole database, so any change is visible.
    np.testing.assert_allclose(privacy_profile(SamplingAverage(T=3, grid=grid), [1, 1, 1], [0.0, 9.0]), 1.0)
    # n = 1
    np.testing.assert_allclose(privacy_profile(SamplingAverage(eta=0.3, grid=grid), [0, 1, 0], [1.0]), [1.0])
    # T = 1: delta is T/n at epsilon = 0 only if some neighbour moves all the mass
    d = privacy_profile(SamplingAverage(T=1, grid=grid), [2, 2, 0], [0.0, 0.5])
    _assert_rel(d, _brute_delta([2, 2, 0], list(grid), 1, "sum", [0.0, 0.5]))


def test_sampling_frequencies_match_pmf():
    law = quantized_gaussian(0.0, 0.12, bits=5)
    hist = np.random.default_rng(2).multinomial(40, law.pmf)
    mech = SamplingAverage(T=6, grid=law.values, output="rounded_mean")
    df = mech.output_pmf(hist)
    draws = mech.sample_histogram(hist, rng=7, size=20000)
    freq = np.array([(draws == v).mean() for v in df["value"]])
    assert np.all(np.abs(freq - df["probability"]) < 5 * np.sqrt(df["probability"] / 20000) + 1e-3)
    assert df["probability"].sum() == pytest.approx(1.0, abs=1e-13)


def _reference_log_profile(mech, hist, epsilon):
    """Every (removed value, replacement) pair in log space: the unpruned path."""
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average.sums import (
        SumTable as _Table,
        leave_one_out as _leave_one_out,
        log_comb as _log_comb,
    )

    hist = np.asarray(hist)
    n = int(hist.sum())
    T = mech.sample_size(n)
    sums = mech._sums(T)
    occ = [int(j) for j in np.nonzero(hist)[0]]
    tables = {}
    _leave_one_out(_Table.empty(T, sums), sums, [(j, int(hist[j])) for j in occ], tables)
    lc = _log_comb(n, T)
    logR = np.stack([tables[a].log_row(T) - lc for a in occ])
    logS = np.stack([tables[a].log_row(T - 1) - lc for a in occ])
    # (lower, upper) bounds; the profile reports the upper one, with the
    # law error bound of the profile computed just before (the same histogram)
    return mech._log_profile_all(occ, logR, logS, T, np.asarray(epsilon, dtype=float), sums)[1]


@pytest.mark.parametrize("output", ["sum", "rounded_mean"])
def test_fast_profile_equals_every_pair(output):
    """The fast path (linear scale, pruned d(P, Q_b), log-space recomputation of
    the winners) returns the all-pairs log-space value, including tiny deltas,
    bimodal databases and lopsided ones."""
    rng = np.random.default_rng(21)
    epsilon = np.array([0.0, 0.5, 1.0, 3.0, 5.0, 9.0])
    for case in range(12):
        bits = int(rng.integers(3, 7))
        mu = float(rng.uniform(-0.3, 0.3))
        law = quantized_gaussian(mu, float(rng.uniform(0.03, 0.3)), bits=bits)
        n = int(rng.integers(5, 80))
        hist = rng.multinomial(n, law.pmf)
        if case % 4 == 1:  # bimodal
            hist = hist + rng.multinomial(int(rng.integers(1, 10)), quantized_gaussian(-mu, 0.05, bits=bits).pmf)
        T = int(rng.integers(1, min(9, int(hist.sum())) + 1))
        mech = SamplingAverage(T=T, grid=law.values, output=output)
        got = privacy_profile(mech, hist, epsilon, log=True)
        want = _reference_log_profile(mech, hist, epsilon)
        # both are proven upper bounds of the same value, from differently
        # rounded laws: they agree within the enclosure width (~1e-11), not to rounding
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)


def test_fast_profile_tiny_delta_and_log_fallback(monkeypatch):
    """Deltas down to ~1e-23 (driven by outputs of probability ~1/C(n, T))
    is kept exactly by the linear scale; forcing the log-space fallback gives
    the same numbers."""
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average import mechanism as average

    grid = np.arange(-4, 5) / 8
    mech = SamplingAverage(T=21, grid=grid)
    hist = np.array([20, 0, 30, 60, 100, 60, 30, 0, 0])
    epsilon = np.array([1.0, 5.0, 50.0])
    got = privacy_profile(mech, hist, epsilon, log=True)
    want = _reference_log_profile(mech, hist, epsilon)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[-1] < np.log(1e-20)
    monkeypatch.setattr(average, "_LINEAR_FLOOR", 2.0)
    np.testing.assert_allclose(
        privacy_profile(SamplingAverage(T=21, grid=grid), hist, epsilon, log=True), want, rtol=1e-12
    )


def test_profile_guard_follows_the_divide_and_conquer_cost():
    """T = 20 on the 8-bit grid (Figure 5 at n = 400) is accepted; T = 60 with
    ~200 occupied values is refused before any work."""
    law = quantized_gaussian(0.0, 0.12)
    mech = SamplingAverage(T=60, grid=law.values)
    hist = np.random.default_rng(0).multinomial(3600, law.pmf)
    with pytest.raises(ComputationTooLarge):
        privacy_profile(mech, hist, [1.0])
    hist = np.random.default_rng(0).multinomial(400, law.pmf)
    small = SamplingAverage(T=20, grid=law.values)
    small._guard(20, small._sums(20).width, int(np.count_nonzero(hist)), 400)  # no exception


# ---------------------------------------------------------------------------
# Theorem 4: continuous_limit_profile
# ---------------------------------------------------------------------------
def test_distinct_subset_sums_give_eta_at_every_epsilon():
    """Theorem 4's mechanism, exactly: when all records differ and all their
    T-subset sums differ (values 2^-1, ..., 2^-n), the published sum tells
    whether a given record was sampled, so delta_eps(x) = T/n = eta at every
    epsilon, however large."""
    from fractions import Fraction

    n, T = 10, 3
    values = np.sort(2.0 ** -np.arange(1, n + 1))
    mech = SamplingAverage(T=T, grid=values, output="sum")
    d = privacy_profile(mech, np.ones(n, dtype=int), [0.0, 0.5, 5.0, 40.0])
    np.testing.assert_allclose(d, float(Fraction(T, n)), rtol=1e-12)


def test_continuous_limit_grows_towards_eta_on_finer_grids():
    """What the finite-grid experiment shows at n = 10, T = 2 (four databases
    per grid, Beta(2, 3) records): the mean delta never exceeds eta, it is
    well below eta on the 1-bit grid (larger epsilon helps there), and it
    grows with the number of bits at every epsilon, reaching eta for every
    database on the 10-bit grid (all records and pair sums distinct there)."""
    from scipy import stats

    epsilon = [0.25, 1.0, 5.0]
    df = sdp.continuous_limit_profile(stats.beta(2, 3).cdf, 10, 2, epsilon, bits=[1, 3, 10], databases=4, rng=11)
    assert list(df.columns) == ["bits", "grid_values", "epsilon", "delta", "se", "min_delta", "eta"]
    assert len(df) == 9 and set(df.grid_values) == {2, 8, 1024}
    assert np.all(df.delta <= df.eta + 1e-12)  # never above the DP delta T/n
    by_bits = df.pivot_table(index="bits", columns="epsilon", values="delta")
    assert np.all(np.diff(by_bits.to_numpy(), axis=0) > 0)  # finer grid, larger delta, at every epsilon
    coarse = df[df.bits == 1]
    assert np.all(coarse.delta < 0.2 * 0.9)
    assert coarse.delta.iloc[-1] < coarse.delta.iloc[0]
    np.testing.assert_allclose(df[df.bits == 10].min_delta, 0.2, rtol=1e-9)


def test_continuous_limit_matches_privacy_profile():
    from scipy import stats

    df = sdp.continuous_limit_profile(stats.uniform.cdf, 6, 2, [1.0], bits=[2], databases=1, rng=3)
    h = np.random.default_rng(3).multinomial(6, np.full(4, 0.25), size=1)
    d = sdp.privacy_profile(sdp.SamplingAverage(T=2, grid=[0, 0.25, 0.5, 0.75]), h, 1.0)
    assert df.delta.iloc[0] == pytest.approx(float(np.ravel(d)[0]), rel=1e-12)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(cdf=None), TypeError, "cdf"),
        (dict(cdf=lambda x: 2 * x), ValueError, "cdf"),
        (dict(T=11), ValueError, "T must be <= n"),
        (dict(bits=[17]), ValueError, "bits"),
        (dict(bits=[0]), ValueError, "bits"),
        (dict(epsilon=[-1.0]), ValueError, "epsilon"),
    ],
)
def test_continuous_limit_bad_input(kwargs, exc, match):
    from scipy import stats

    args = dict(cdf=stats.uniform.cdf, n=10, T=2, epsilon=[1.0], bits=[2], databases=2, rng=0)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sdp.continuous_limit_profile(**args)


# ---------------------------------------------------------------------------
# exact leave-one-out counts (core.average_profile)
# ---------------------------------------------------------------------------
def _int_subset_counts(weights, T):
    """t-subset counts by weight sum, t <= T, in Python integers (independent DP)."""
    rows = [dict() for _ in range(T + 1)]
    rows[0][0] = 1
    for w in weights:
        for t in range(T, 0, -1):
            for s, c in rows[t - 1].items():
                rows[t][s + w] = rows[t].get(s + w, 0) + c
    return rows


@pytest.mark.parametrize("n,T,seed", [(12, 4, 0), (60, 9, 1), (130, 22, 2), (90, 45, 3), (420, 21, 4)])
def test_leave_one_out_counts_are_exact_integers(n, T, seed):
    """R_a and S_a against Python-integer subset counts; the larger cases exceed
    2^64 (C(130, 22) ~ 2^82), so the float64 residue decides the high bits, and
    C(420, 21) ~ 2^114 needs the third residue (mod 2^31 - 1)."""
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average import count_tables as average_profile
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import (
        exact_path_applies,
        leave_one_out_counts,
    )

    rng = np.random.default_rng(seed)
    counts_by_value = rng.multinomial(n, rng.dirichlet(np.ones(9)))
    v = np.nonzero(counts_by_value)[0]
    c = counts_by_value[v]
    v = v - v[0]
    assert exact_path_applies(n, T)
    assert average_profile._residues_needed(n, T) == (3 if n == 420 else 2)
    R, S, P = leave_one_out_counts(v, c, T)
    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    full = _int_subset_counts(records, T)
    np.testing.assert_allclose(P, [float(full[T].get(u, 0)) for u in range(P.size)], rtol=4.5e-16, atol=0)
    for i, vi in enumerate(v):
        others = list(records)
        others.remove(int(vi))
        rows = _int_subset_counts(others, T)
        wantR = np.array([float(rows[T].get(u, 0)) for u in range(R.shape[1])])
        wantS = np.array([float(rows[T - 1].get(u, 0)) for u in range(S.shape[1])])
        # float(V) of an exact integer V: the reconstruction is within 2 ulp
        np.testing.assert_allclose(R[i], wantR, rtol=4.5e-16, atol=0)
        np.testing.assert_allclose(S[i], wantS, rtol=4.5e-16, atol=0)
    assert max(full[T].values()) > 2**64 or n < 100


def test_leave_one_out_counts_refuses_beyond_its_error_bound():
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import (
        exact_path_applies,
        leave_one_out_counts,
    )

    assert exact_path_applies(225, 15) and exact_path_applies(484, 22)
    assert not exact_path_applies(2000, 200)
    assert leave_one_out_counts(np.array([0, 1]), np.array([1000, 1000]), 200) is None


def test_leave_one_out_counts_drop_the_third_residue_after_the_fact(monkeypatch):
    """n = 200, T = 25: a priori the counts (up to C(200, 25) ~ 2^105) need the
    third residue, and float32's bound is too loose, but the float64 table's row maxima (~2^100) bound the error
    below 2^61, so only mod 2^64 and float64 are used; the counts (beyond 2^64)
    are still exact, against Python integers (object arrays, one table per removed record)."""
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average import count_tables as average_profile
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import leave_one_out_counts

    rng = np.random.default_rng(0)
    counts_by_value = rng.multinomial(200, rng.dirichlet(np.ones(9)))
    v = np.nonzero(counts_by_value)[0]
    c = counts_by_value[v]
    v = v - v[0]
    T = 25
    assert average_profile._residues_needed(200, T) == 3
    used = []
    forward = average_profile._forward_table

    def spy(*args):
        used.append(args[-1])
        return forward(*args)

    monkeypatch.setattr(average_profile, "_forward_table", spy)
    R, S, P = leave_one_out_counts(v, c, T)
    # float32 first (its a-posteriori bound is too loose here), then float64, which drops the third residue
    assert [np.dtype(d).name for d in used] == ["float32", "float64", "uint64"]
    W = R.shape[1]

    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    full = exact.subset_sum_counts(records, T, W)
    assert max(full[T]) > 2**64
    np.testing.assert_allclose(P, full[T].astype(float), rtol=4.5e-16, atol=0)
    for i, vi in enumerate(v):
        others = list(records)
        others.remove(int(vi))
        rows = exact.subset_sum_counts(others, T, W)
        np.testing.assert_allclose(R[i], rows[T].astype(float), rtol=4.5e-16, atol=0)
        np.testing.assert_allclose(S[i], rows[T - 1].astype(float), rtol=4.5e-16, atol=0)


# (law, sigma, n, T, output): Figure 5's and the authors' sizes, a narrow and a wide database
WORK_CASES = [
    ("N", 0.12, 225, 15, "sum"),
    ("N", 0.12, 225, 15, "rounded_mean"),
    ("N", 0.15, 64, 8, "rounded_mean"),
    ("N", 0.10, 400, 20, "rounded_mean"),
    ("N", 0.15, 484, 22, "rounded_mean"),
    ("L", 0.12, 484, 22, "rounded_mean"),
    ("N", 0.05, 60, 7, "sum"),
    ("N", 0.20, 300, 17, "sum"),
]


@pytest.mark.parametrize("case", WORK_CASES, ids=lambda c: f"{c[0]}{c[1]}-n{c[2]}-T{c[3]}-{c[4]}")
def test_profile_work_units_match_counted(monkeypatch, case):
    """The time estimate's work units (sizes only) against the units counted on
    the running code for a drawn database, within x3: forward-table cells and
    strided division cells per residue actually computed (from the arguments
    of every table built), reconstruction/bound entries (from R's shape) and
    pairs recomputed in log space (from every call)."""
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average import (
        count_tables as average_profile,
        mechanism as average_module,
    )

    kind, sigma, n, T, output = case
    law = quantized_gaussian(0.0, sigma) if kind == "N" else quantized_laplace(0.0, sigma / math.sqrt(2))
    epsilon = np.array([0.5, 1.0, 3.0])
    E = epsilon.size
    counted = {"tables": 0.0, "entries": 0.0, "pairs": 0.0}
    forward, loo, pair = (
        average_profile._forward_table,
        average_profile.leave_one_out_counts,
        average_module.SamplingAverage._pair_divergences,
    )

    def forward_spy(v, c, T_, W, dtype):
        steps, cells = 0, 0
        for w, k in zip(v.tolist(), c.tolist()):
            for _ in range(k):
                cells += min(steps + 1, T_) * (T_ * w + 1)
                steps += 1
        counted["tables"] += cells + sum(T_ * (W + w) for w in v.tolist())  # the table, then its division
        return forward(v, c, T_, W, dtype)

    def loo_spy(v, c, T_):
        R, S, P = loo(v, c, T_)
        counted["entries"] += 2 * R.size * (8 + E)
        counted["W"] = R.shape[1]
        return R, S, P

    def pair_spy(self, logR, logS, a, bs, T_, eps, sums):
        counted["pairs"] += 1.6 * (len(bs) + 1) * counted["W"] * E
        return pair(self, logR, logS, a, bs, T_, eps, sums)

    monkeypatch.setattr(average_profile, "_forward_table", forward_spy)
    monkeypatch.setattr(average_module, "leave_one_out_counts", loo_spy)
    monkeypatch.setattr(average_module.SamplingAverage, "_pair_divergences", pair_spy)
    h = np.random.default_rng(n).multinomial(n, law.pmf)
    mech = SamplingAverage(T=T, grid=law.values, output=output)
    mech._log_profile_bounds(h[None], n, epsilon)
    occ = np.flatnonzero(h)
    model = average_profile.profile_work_units(n, T, law.values.size, int(occ[-1] - occ[0]), occ.size, E)
    measured = counted["tables"] + counted["entries"] + counted["pairs"]
    assert measured / 3 <= model <= 3 * measured, (model, counted)


def test_profile_refused_over_budget_with_the_estimate():
    law = quantized_gaussian(0.0, 0.15)
    mech = SamplingAverage(T=22, grid=law.values, output="rounded_mean")
    hists = np.random.default_rng(0).multinomial(484, law.pmf, size=40)
    est = sum(mech._histogram_seconds(row, 484, 22, 2) for row in hists)
    assert 0.4 < est < 40  # ~40 profiles of tens of ms each
    with pytest.raises(ComputationTooLarge, match=r"sampling-average profile of 40 databases.*budget") as info:
        mech._log_profile_bounds(hists, 484, np.array([0.5, 1.0]), budget=est / 2)
    assert info.value.parameter == "T"
    data_free = mech.profile_cost(484, law.values.size, 40, 2).seconds
    assert est <= data_free <= 3 * est  # before the data: every grid value counted as occupied
