"""Algorithm 1 (smoothed delta) against independent brute force, hull reduction,
Monte Carlo intervals and bad input."""

import itertools
import math
import threading

import mpmath as mp
import numpy as np
import pandas as pd
import pytest

import smoothdp_nb as sdp
from tests import exact


def brute_smoothed(pi, n, T, epsilon, replace=False):
    """max over every assignment of a vertex to each record of E[delta(x)],
    enumerating every database x in X^n (Definition 3 literally)."""
    cache = {}

    def d(h):
        if h not in cache:
            cache[h] = exact.profile(h, T, epsilon, replace)
        return cache[h]

    m = len(pi[0])
    best = mp.mpf(0)
    for assign in itertools.combinations_with_replacement(range(len(pi)), n):
        s = mp.mpf(0)
        for x in itertools.product(range(m), repeat=n):
            p = mp.mpf(1)
            for i, xi in enumerate(x):
                p *= mp.mpf(pi[assign[i]][xi])
            s += p * d(tuple(x.count(j) for j in range(m)))
        best = max(best, s)
    return best


def brute_composition_binary(p_list, counts, n, T, epsilon):
    """E[delta] for a composition, by exact convolution of binomials (Fractions)."""
    from fractions import Fraction

    dist = {0: Fraction(1)}
    for p, c in zip(p_list, counts):
        pf = Fraction(p).limit_denominator(10**15)
        for _ in range(c):
            new = {}
            for k, w in dist.items():
                new[k + 1] = new.get(k + 1, 0) + w * pf
                new[k] = new.get(k, 0) + w * (1 - pf)
            dist = new
    return sum(exact.to_mp(w) * exact.profile((k, n - k), T, epsilon) for k, w in dist.items())


CASES_ENUM = [
    ([[0.3, 0.7], [0.8, 0.2]], 5, 0.5),
    ([[0.3, 0.7], [0.8, 0.2], [0.5, 0.5]], 6, 0.9),  # an interior point is dropped
    ([[0.1, 0.9], [0.45, 0.55]], 7, 0.5),
    ([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.5, 0.2]], 4, 0.5),
    ([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.5, 0.2], [0.35, 0.35, 0.3]], 3, 0.7),
]


@pytest.mark.parametrize("pi,n,eta", CASES_ENUM)
def test_exact_matches_enumeration_of_all_databases(pi, n, eta):
    m = sdp.SamplingHistogram(eta=eta)
    T = m.sample_size(n)
    epsilon = [0.3, 1.5]
    res = sdp.smoothed_delta(m, n, pi, epsilon)
    for j, e in enumerate(epsilon):
        want = brute_smoothed(pi, n, T, e)
        assert res.delta[j] == pytest.approx(float(want), rel=1e-9)


@pytest.mark.parametrize(
    "n,eta,epsilon", [(10, 0.5, [0.5, 3.0]), (12, 0.9, [0.2, 1.0]), (12, 1, [1.0]), (9, 0.7, [6.0])]
)
def test_binary_every_composition_against_exact_convolution(n, eta, epsilon):
    pi = [[0.15, 0.85], [0.7, 0.3]]
    m = sdp.SamplingHistogram(eta=eta)
    T = m.sample_size(n)
    res = sdp.smoothed_delta(m, n, pi, epsilon)
    tab = res.table
    for e in epsilon:
        sub = tab[tab.epsilon == e]
        assert len(sub) == n + 1
        for row in sub.itertuples():
            want = brute_composition_binary([0.15, 0.7], [row.n_0, row.n_1], n, T, e)
            if want == 0:
                assert row.delta == 0
            else:
                assert row.log_delta == pytest.approx(float(mp.log(want)), abs=1e-9)


def test_tiny_smoothed_values_agree_in_log_space():
    """Values around 1e-50 and below: compare logs with the exact convolution."""
    pi = [[0.45, 0.55], [0.55, 0.45]]
    n = 12
    m = sdp.SamplingHistogram(T=1)
    # with T = 1 and epsilon large the only positive part is the impossible-output event
    res = sdp.smoothed_delta(m, n, pi, [0.5])
    want = max(brute_composition_binary([0.45, 0.55], [c, n - c], n, 1, 0.5) for c in range(n + 1))
    assert res.log_delta[0] == pytest.approx(float(mp.log(want)), abs=1e-9)
    # a large case where delta underflows float64: the log path takes over
    big = sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.5), 4000, [[0.45, 0.55], [0.5, 0.5]], 3.0)
    assert np.isfinite(big.log_delta) and big.log_delta < math.log(1e-300)


@pytest.mark.parametrize("n,eta,p1,p2", [(300, 0.6, 0.3, 0.6), (1500, 0.5, 0.45, 0.55), (900, 0.9, 0.02, 0.99)])
def test_float_and_block_paths_match_log_space(n, eta, p1, p2, monkeypatch):
    """The blocked BLAS path (without falling back) and the one-step path agree
    with a plain log-space recursion, including expectations far below the
    float64 range (down to ~1e-200 here; see the synthetic test below for 1e-1000)."""
    from smoothdp_nb.core.smoothed.engines import binary as S

    m = sdp.SamplingHistogram(eta=eta)
    h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    ld = sdp.privacy_profile(m, h, [0.5, 3.0], log=True)
    ref = exact.composition_expectations_log(ld, p1, p2)
    fin = np.isfinite(ref)
    one_step = S.exact_binary_blocks(ld, p1, p2, block=64)

    def no_fallback(*args, **kwargs):
        raise AssertionError("the blocked path fell back to the one-step path")

    monkeypatch.setattr(S, "exact_binary_blocks", no_fallback)
    for got in (S.exact_binary(ld, p1, p2, None), one_step):
        assert np.array_equal(np.isfinite(got), fin)
        np.testing.assert_allclose(got[fin], ref[fin], rtol=1e-11, atol=1e-9)


@pytest.mark.parametrize(
    "depth,block,p1,p2,below", [(4000.0, 16, 0.4, 0.7, 1000), (4000.0, 16, 0.5, 0.5, 1000), (900.0, 128, 0.3, 0.6, 230)]
)
def test_blocked_path_far_below_the_float_range(depth, block, p1, p2, below, monkeypatch):
    """A synthetic delta(x) between e^-(0.6 depth) and e^-depth: every
    composition's expectation (all below 10^-below, down to 1e-1000 and less)
    equals the plain log-space recursion, and the blocked path needs no fallback."""
    from smoothdp_nb.core.smoothed.engines import binary as S

    n = 1000
    x = np.arange(n + 1) / n
    ld = -depth * np.stack([0.6 + 0.4 * (1 - np.abs(2 * x - 1)) ** 1.5, 0.6 + 0.4 * np.sin(np.pi * x) ** 2], axis=1)
    ref = exact.composition_expectations_log(ld, p1, p2)
    assert ref.max() < -below * math.log(10)

    def no_fallback(*args, **kwargs):
        raise AssertionError("the blocked path fell back to the one-step path")

    monkeypatch.setattr(S, "exact_binary_blocks", no_fallback)
    got = S.exact_binary(ld, p1, p2, None, block=block)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("p1,p2,depth", [(0.3, 0.35, 1200.0), (0.62, 0.5, 0.0), (0.5, 0.2, 700.0)])
def test_truncated_advance_matches_log_space(p1, p2, depth, monkeypatch):
    """Where delta varies little, the engine advances only the chunks of H
    near [(n - r) min p, (n - r) max p] (a fraction of them here, counted),
    and every composition still equals the plain log-space recursion -- also
    with every expectation below 1e-500 or around the smallest normal float64."""
    from smoothdp_nb.core.smoothed.engines import binary as S
    from smoothdp_nb.core.smoothed.engines.cost import binary_work_units

    n = 2500
    x = np.arange(n + 1) / n
    ld = -depth - np.stack([20.0 * np.sin(3 * x) ** 2, 8.0 * x + 3.0 * np.cos(7 * x)], axis=1)
    ref = exact.composition_expectations_log(ld, p1, p2)
    assert ref.max() < 1.0 - depth  # below 1e-520 (depth 1200) and 1e-303 (depth 700)

    def no_fallback(*args, **kwargs):
        raise AssertionError("the blocked path fell back to the one-step path")

    monkeypatch.setattr(S, "exact_binary_blocks", no_fallback)
    work = {}
    got = S.exact_binary(ld, p1, p2, None, work=work)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)
    untruncated = binary_work_units(n, 2, p1, p2, log_bound=math.inf)["advance"]
    assert work["advance"] < 0.7 * untruncated


def test_blocked_path_falls_back_when_its_range_checks_fail(monkeypatch):
    """With the range checks made impossible to meet, every column is
    recomputed one step per composition, and the values are unchanged."""
    from smoothdp_nb.core.smoothed.engines import binary as S

    n = 700
    m = sdp.SamplingHistogram(eta=0.5)
    h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    ld = sdp.privacy_profile(m, h, [0.5, 3.0], log=True)
    ref = exact.composition_expectations_log(ld, 0.45, 0.55)
    calls = []
    original = S.exact_binary_blocks

    def spy(logdelta, *args, **kwargs):
        calls.append(logdelta.shape)
        return original(logdelta, *args, **kwargs)

    monkeypatch.setattr(S, "exact_binary_blocks", spy)
    monkeypatch.setattr(S, "_SEG_RANGE", 1e-3)
    got = S.exact_binary(ld, 0.45, 0.55, None)
    assert calls == [(n + 1, 2)]
    fin = np.isfinite(ref)
    np.testing.assert_allclose(got[fin], ref[fin], rtol=1e-11, atol=1e-9)


def test_binomial_window_leaves_out_less_than_2_to_the_minus_60():
    """The window level grows with the spread of delta, and the weights it
    leaves out are below 2^-60 min delta / max delta (checked in log space)."""
    from scipy.special import logsumexp

    from smoothdp_nb.core.smoothed.engines import binary as S

    ld = np.array([[0.0], [-300.0], [-800.0], [-5.0]])
    bound = S.window_log_bound(ld)
    assert bound == pytest.approx(61 * math.log(2) + 800.0)
    assert S.window_log_bound(np.array([[0.0], [-np.inf]])) == math.inf
    s, p = 20000, 0.3
    a, b, lw = S.BinomialWeights(s, p).window(s, bound)
    full = S.log_binom_vector(s, p)
    left_out = logsumexp(np.concatenate([full[:a], full[b + 1 :]]))
    assert left_out < -bound + math.log(2.0)
    np.testing.assert_allclose(lw, full[a : b + 1], rtol=0, atol=1e-8)


def test_election_2020_hull_keeps_DC_and_NE3():
    pi = sdp.datasets.us_2020_district_shares()
    red = sdp.reduce_to_vertices(pi)
    assert sorted(red.vertex_labels) == ["DC", "NE-3"]
    assert len(red.dropped_labels) == 54
    assert "NE-2" in red.dropped_labels  # the paper's "NE-2" is not a vertex
    res = sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.998), 2000, pi, [0.5, 7.0])
    assert sorted(res.vertex_labels) == ["DC", "NE-3"]
    assert np.all(res.delta < res.dp_delta)


def test_figure2_smoothed_delta_decreases_exponentially_in_n():
    pi = sdp.datasets.us_2020_district_shares()
    m = sdp.SamplingHistogram(eta=0.998)
    curve = sdp.smoothed_delta_curve(m, [2000, 4000, 6000, 8000], pi, [0.5, 7.0])
    for row in curve.fits.itertuples():
        assert row.slope < 0 and row.r2 > 0.99
    t = curve.table
    for e in [0.5, 7.0]:
        d = t[t.epsilon == e].sort_values("n")["log10_delta"].to_numpy()
        assert np.all(np.diff(d) < 0)
        assert np.all(t[t.epsilon == e]["delta"] < t[t.epsilon == e]["dp_delta"])


def test_hull_degenerate_inputs():
    # duplicates and collinear points in the simplex (m = 3)
    pi = np.array([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [0.4, 0.3, 0.3], [0.3, 0.3, 0.4]])
    red = sdp.reduce_to_vertices(pi)
    assert red.vertex_labels == [0, 2] and red.dropped_labels == [1, 3]
    one = sdp.reduce_to_vertices([[0.5, 0.5], [0.5, 0.5]])
    assert one.vertex_labels == [0]
    df = pd.DataFrame({"a": [0.1, 0.5, 0.9, 0.3], "b": [0.9, 0.5, 0.1, 0.7]}, index=["w", "x", "y", "z"])
    red = sdp.reduce_to_vertices(df)
    assert red.vertex_labels == ["w", "y"] and set(red.dropped_labels) == {"x", "z"}
    # a square inside the 4-simplex plane: 4 vertices, centre dropped
    sq = np.array(
        [
            [0.4, 0.1, 0.1, 0.4],
            [0.1, 0.4, 0.4, 0.1],
            [0.4, 0.4, 0.1, 0.1],
            [0.1, 0.1, 0.4, 0.4],
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    red = sdp.reduce_to_vertices(sq)
    assert red.vertex_labels == [0, 1, 2, 3] and red.dropped_labels == [4]


def test_monte_carlo_interval_covers_the_exact_value():
    pi = [[0.2, 0.8], [0.6, 0.4]]
    n = 40
    m = sdp.SamplingHistogram(eta=0.8)
    exact_res = sdp.smoothed_delta(m, n, pi, 1.0)
    tab = exact_res.table
    covered = 0
    runs = 20
    for seed in range(runs):
        mc = sdp.smoothed_delta(
            m, n, pi, 1.0, method="monte-carlo", trials=400, rng=seed, confidence=0.99, candidates=41
        )
        # every candidate's interval must cover that composition's exact value
        mt = mc.table
        merged = mt.merge(tab, on=["epsilon", "n_0", "n_1"], suffixes=("_mc", ""))
        assert len(merged) == n + 1
        covered += bool(np.all((merged.ci_low <= merged.delta) & (merged.delta <= merged.ci_high)))
        assert mc.ci_low <= exact_res.delta <= mc.ci_high
    assert covered >= 0.99 * runs - 1  # simultaneous (Bonferroni) coverage, conservative


def test_monte_carlo_reproducible_and_larger_m():
    pi = [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.5, 0.2]]
    m = sdp.SamplingHistogram(eta=0.9)
    a = sdp.smoothed_delta(m, 30, pi, [1.0, 2.0], method="monte-carlo", trials=300, rng=7)
    b = sdp.smoothed_delta(m, 30, pi, [1.0, 2.0], method="monte-carlo", trials=300, rng=7)
    np.testing.assert_array_equal(a.delta, b.delta)
    np.testing.assert_array_equal(a.ci_high, b.ci_high)
    assert np.all(a.ci_low <= a.delta) and np.all(a.delta <= a.ci_high)
    c = sdp.smoothed_delta(m, 30, pi, [1.0, 2.0], method="monte-carlo", trials=300, rng=8)
    assert not np.array_equal(a.delta, c.delta)


def test_empirical_bernstein_is_valid_and_shrinks():
    rng = np.random.default_rng(0)
    v = rng.beta(0.5, 30, size=(200, 2000))
    _means, lo, hi = sdp.empirical_bernstein_interval(v, 0.01, axis=1)
    true = 0.5 / 30.5
    assert np.mean((lo <= true) & (true <= hi)) >= 0.99
    _, lo2, hi2 = sdp.empirical_bernstein_interval(v[:, :200], 0.01, axis=1)
    assert np.mean(hi - lo) < np.mean(hi2 - lo2)


def test_refuses_with_an_estimate_and_suggestion():
    with pytest.raises(sdp.ComputationTooLarge, match="monte-carlo"):
        # (since pruning, ~26 s predicted for the n = 10^6 two-vertex job: a 1 s budget refuses it)
        sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.5), 10**6, [[0.2, 0.8], [0.6, 0.4]], 1.0, budget=1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(pi=[[0.2, 0.7]]), "sum"),
        (dict(pi=[[0.2, 0.8, 0.1]]), "sum"),
        (dict(pi=[[-0.1, 1.1]]), "negative"),
        (dict(pi=[[[0.5, 0.5]]]), "shape"),
        (dict(n=0), "n must be >= 1"),
        (dict(method="monte-carlo", trials=0), "trials"),
        (dict(method="monte-carlo", confidence=1.0), "confidence"),
        (dict(method="magic"), "method"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(mechanism=sdp.SamplingHistogram(eta=0.5), n=10, pi=[[0.2, 0.8], [0.6, 0.4]], epsilon=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sdp.smoothed_delta(**args)


def test_result_objects():
    res = sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 30, [[0.2, 0.8], [0.6, 0.4]], 1.0)
    assert isinstance(res.delta, float) and isinstance(res.log_delta, float)
    assert res.worst_composition.sum() == 30
    assert "ε = 1: δ ≤ " in str(res)
    d = res.to_dict()
    assert d["n"] == 30 and len(d["delta"]) == 1
    f = res.to_frame()
    assert list(f.columns[:4]) == ["epsilon", "delta", "log10_delta", "dp_delta"]
    assert res.table.delta.max() == pytest.approx(res.delta)


def test_monte_carlo_identical_on_any_executor():
    from concurrent.futures import ThreadPoolExecutor

    from smoothdp_nb.core.runtime.parallel import process_pool

    pi = [[0.2, 0.8], [0.6, 0.4]]
    m = sdp.SamplingHistogram(eta=0.8)
    kw = dict(method="monte-carlo", trials=900, rng=3, chunk=200, candidates=5)
    base = sdp.smoothed_delta(m, 60, pi, [0.5, 1.0], **kw)
    with ThreadPoolExecutor(2) as ex:
        thr = sdp.smoothed_delta(m, 60, pi, [0.5, 1.0], executor=ex, **kw)
    with process_pool(2) as ex:  # forkserver/spawn: the trial function is the package's, importable
        proc = sdp.smoothed_delta(m, 60, pi, [0.5, 1.0], executor=ex, **kw)
    for other in (thr, proc):
        np.testing.assert_array_equal(base.delta, other.delta)
        np.testing.assert_array_equal(base.ci_high, other.ci_high)


def test_monte_carlo_for_the_sampling_average():
    """Pi of two laws on a 4-value grid: every candidate interval covers the exact
    expectation obtained by enumerating all databases of the composition."""
    grid = np.array([0.0, 0.25, 0.5, 0.75])
    q1 = np.array([0.4, 0.3, 0.2, 0.1])
    q2 = np.array([0.1, 0.2, 0.3, 0.4])
    n, epsilon = 4, [0.5]
    m = sdp.SamplingAverage(T=2, grid=grid)
    mc = sdp.smoothed_delta(m, n, [q1, q2], epsilon, method="monte-carlo", trials=300, rng=1, candidates=5)
    assert mc.dp_delta == pytest.approx(0.5)
    xs = np.array(list(itertools.product(range(4), repeat=n)))
    hists = np.stack([np.bincount(x, minlength=4) for x in xs])
    uniq, inv = np.unique(hists, axis=0, return_inverse=True)
    deltas = sdp.privacy_profile(m, uniq, epsilon[0])[inv.ravel()]  # checked against brute force elsewhere
    for row in mc.table.itertuples():
        c1 = row.n_0
        laws = np.array([q1] * c1 + [q2] * (n - c1))
        probs = np.prod(laws[np.arange(n)[None, :], xs], axis=1)
        total = float(probs @ deltas)
        assert row.ci_low - 1e-12 <= total <= row.ci_high + 1e-12
    # and the exact Algorithm 1 gives the enumeration's expectation for every composition
    ex = sdp.smoothed_delta(m, n, [q1, q2], epsilon)
    for row in ex.table.itertuples():
        laws = np.array([q1] * row.n_0 + [q2] * (n - row.n_0))
        total = float(np.prod(laws[np.arange(n)[None, :], xs], axis=1) @ deltas)
        assert row.delta == pytest.approx(total, rel=1e-12)


# --------------------------------------------------------------------------
# the hedged-capital betting interval
# --------------------------------------------------------------------------
_LAWS = {
    # name: (sampler(rng, shape), true mean), all on [0, 1]
    "beta(0.5, 30)": (lambda r, s: r.beta(0.5, 30, s), 0.5 / 30.5),
    "beta(2, 2)": (lambda r, s: r.beta(2, 2, s), 0.5),
    "0.4 x Bernoulli(0.3)": (lambda r, s: 0.4 * (r.random(s) < 0.3), 0.12),
    "Bernoulli(0.01)": (lambda r, s: 1.0 * (r.random(s) < 0.01), 0.01),
}


@pytest.mark.parametrize("law", sorted(_LAWS))
@pytest.mark.parametrize("N", [15, 200])
def test_betting_interval_coverage(law, N):
    """Repeated seeded runs: the 95 % (and 80 %) intervals cover the known mean at
    least at the nominal rate (minus a binomial margin for 600 runs)."""
    draw, true = _LAWS[law]
    rng = np.random.default_rng([sorted(_LAWS).index(law), N])
    runs = 600
    v = draw(rng, (N, runs))
    for alpha in (0.05, 0.2):
        _mean, lo, hi = sdp.betting_interval(v, alpha, axis=0)
        assert lo.shape == hi.shape == (runs,)
        assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))
        cov = np.mean((lo <= true) & (true <= hi))
        margin = 3 * math.sqrt(alpha * (1 - alpha) / runs)
        assert cov >= 1 - alpha - margin, (law, N, alpha, cov)


def test_betting_interval_bound_axis_and_units():
    rng = np.random.default_rng(5)
    bound = 0.0625  # like T/n
    v = bound * rng.beta(1, 20, size=(3, 400))  # samples along axis 1
    mean, lo, hi = sdp.betting_interval(v, 0.01, bound=bound, axis=1)
    assert mean.shape == lo.shape == (3,)
    _, lo1, hi1 = sdp.betting_interval(v / bound, 0.01, axis=1)
    np.testing.assert_allclose(lo, bound * lo1, rtol=1e-12)
    np.testing.assert_allclose(hi, bound * hi1, rtol=1e-12)
    assert np.all(lo <= bound / 21) and np.all(bound / 21 <= hi)
    # all-zero data: the lower end is 0 and the upper end about log(2/alpha) / (c N)
    _, lo0, hi0 = sdp.betting_interval(np.zeros(1000), 0.01)
    assert lo0 == 0 and 0 < hi0 < 2 * math.log(200) / 1000
    with pytest.raises(ValueError, match="alpha"):
        sdp.betting_interval(v, 1.5)


@pytest.mark.parametrize("N", [20, 100, 1000])
def test_betting_narrower_than_bernstein_on_small_means(N):
    rng = np.random.default_rng(N)
    v = rng.beta(0.5, 30, size=(N, 300))
    _, lo, hi = sdp.betting_interval(v, 0.01, axis=0)
    _, lo2, hi2 = sdp.empirical_bernstein_interval(v, 0.01, axis=0)
    assert np.mean(hi - lo) < 0.7 * np.mean(hi2 - lo2)
    assert np.mean(hi) < np.mean(hi2)


def test_monte_carlo_interval_option():
    pi = [[0.2, 0.8], [0.6, 0.4]]
    m = sdp.SamplingHistogram(eta=0.8)
    kw = dict(method="monte-carlo", trials=200, rng=4, candidates=5)
    bet = sdp.smoothed_delta(m, 40, pi, 1.0, **kw)
    bern = sdp.smoothed_delta(m, 40, pi, 1.0, interval="bernstein", **kw)
    assert bet.delta == bern.delta  # same draws, different intervals
    assert "betting" in bet.interval and "Bernstein" in bern.interval
    assert bet.ci_high - bet.ci_low < bern.ci_high - bern.ci_low
    exact_res = sdp.smoothed_delta(m, 40, pi, 1.0)
    assert bet.ci_low <= exact_res.delta <= bet.ci_high
    with pytest.raises(ValueError, match="interval"):
        sdp.smoothed_delta(m, 40, pi, 1.0, interval="wald", **kw)


# ---------------------------------------------------------------------------
# the exact cost model (core/smoothed/cost.py)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "n,eta,p1,p2,epsilon",
    [
        (300, 0.6, 0.3, 0.6, [0.5, 3.0]),
        (2000, 0.9, 0.3, 0.6, [1.0]),
        (3000, 0.998, 0.45, 0.55, [0.5, 2.0, 7.0]),
        (1200, 0.5, 0.02, 0.99, [1.0]),
    ],
)
def test_cost_model_counts_the_engines_work(n, eta, p1, p2, epsilon):
    """The work units the cost model predicts are the ones the engine performs
    (advance and correlation multiply-adds within 1 %, blocks exactly,
    segments within a factor 2: the engine shortens them where delta is steep)."""
    from smoothdp_nb.core.smoothed.engines import binary as S
    from smoothdp_nb.core.smoothed.engines.cost import binary_work_units

    m = sdp.SamplingHistogram(eta=eta)
    h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    ld = sdp.privacy_profile(m, h, epsilon, log=True)
    work = {}
    S.exact_binary(ld, p1, p2, None, work=work)
    want = binary_work_units(n, ld.shape[1], p1, p2, log_bound=S.window_log_bound(ld), slope=S.log_slope(ld))
    assert work["blocks"] == want["blocks"]
    assert work["advance"] == pytest.approx(want["advance"], rel=0.01)
    assert work["correlation"] == pytest.approx(want["correlation"], rel=0.01)
    assert want["segments"] / 2 <= work["segments"] <= 2 * want["segments"]


def test_cost_model_scales_and_prices():
    from smoothdp_nb.core.smoothed.engines.cost import engine_seconds, estimate_exact_seconds
    from smoothdp_nb.core.smoothed.engines.estimate import estimate_exact_cost

    V = [[0.3, 0.7], [0.6, 0.4]]
    t4, b4 = estimate_exact_cost(sdp.SamplingHistogram(eta=0.9), 10**4, V, 1)
    t5, b5 = estimate_exact_cost(sdp.SamplingHistogram(eta=0.9), 10**5, V, 1)
    # ten times the histograms to profile, and an engine at most quadratic in n (pruning makes
    # it nearly linear; a fixed part of the run does not grow)
    assert 2 < t5 / t4 < 100
    assert b5 > 5 * b4 and isinstance(b5, int)
    # seven columns of profiles and of the engine's and the certificate's per-column work
    assert estimate_exact_cost(sdp.SamplingHistogram(eta=0.9), 10**4, V, 7)[0] > 2 * t4
    assert estimate_exact_seconds(10**4, 2, 2, 1) == pytest.approx(engine_seconds(10**4, V, 1))
    assert 0 < estimate_exact_seconds(10**4, 2, 2, 1) < t4  # the profiles come on top
    three = [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.5, 0.2]]
    assert (
        estimate_exact_cost(sdp.SamplingHistogram(eta=0.9), 60, three, 1)[0]
        > estimate_exact_cost(sdp.SamplingHistogram(eta=0.9), 30, three, 1)[0]
    )


@pytest.mark.parametrize(
    "n,pi", [(7, [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]), (5, [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2], [0.3, 0.5, 0.2]])]
)
def test_general_cost_model_counts_the_engines_terms(n, pi, monkeypatch):
    """general_work_units predicts exactly the log-space terms the general
    engine sums (counted in its logsumexp calls) and the compositions it visits."""
    from smoothdp_nb.core.smoothed.engines import general as G
    from smoothdp_nb.core.smoothed.engines.cost import general_work_units

    terms, calls = [], []
    real = G.logsumexp

    def counting(a, axis=0):
        terms.append(np.size(a))
        calls.append(1)
        return real(a, axis=axis)

    monkeypatch.setattr(G, "logsumexp", counting)
    E = 2
    V = np.array(pi)
    ld = -np.arange(math.comb(n + 2, 2) * E, dtype=float).reshape(-1, E) / 10
    comps, _ = G.exact_general(ld, n, 3, V, None)
    units = general_work_units(n, 3, len(pi))
    assert units["compositions"] == len(comps)
    assert units["terms"] * E == sum(terms)


_PARENT_CALLS: list[str] = []  # calls made by the calling thread (the helper thread's are not counted)


def _counted_profile_chunk(*args):

    if "helper" not in threading.current_thread().name:
        _PARENT_CALLS.append("profile")
    # the exact method's chunk: proven upper bounds, then their widths
    enc = args[0]._profile(np.asarray(args[1], dtype=np.int64), args[2])  # the engines' entry of the protocol
    hi = np.reshape(enc.upper, (-1, args[2].size))
    lo = np.reshape(enc.lower, (-1, args[2].size))
    return np.concatenate([hi, np.where(np.isneginf(hi), 0.0, hi - lo)], axis=1)


def _counted_exact_binary(*args, **kwargs):
    from smoothdp_nb.core.smoothed.engines import binary

    if "helper" not in threading.current_thread().name:
        _PARENT_CALLS.append("engine")
    return binary.exact_binary(*args, **kwargs)


def test_helper_changes_nothing(monkeypatch):
    """Above the size where the two-category path shares its work with a
    helper thread (lowered here), half of the profile chunks and half of the
    columns run there, and the result is bit-identical with and without the
    helper, and equals the plain log-space recursion."""
    from smoothdp_nb.core.runtime import parallel
    from smoothdp_nb.core.smoothed.engines import chunks, exact as X

    monkeypatch.setattr(X, "HELPER_MIN_N", 600)
    monkeypatch.setattr(chunks, "PROFILE_CHUNK", 512 * 5)  # two chunks of rows
    monkeypatch.setattr(X, "_profile_chunk", _counted_profile_chunk)
    monkeypatch.setattr(X, "exact_binary", _counted_exact_binary)

    class Unmirrored(sdp.SamplingHistogram):  # every histogram profiled: two chunks
        label_symmetric = False

    m = Unmirrored(eta=0.9)
    pi = [[0.3, 0.7], [0.6, 0.4]]
    eps = [0.3, 1.0, 2.0, 4.0, 9.0]
    _PARENT_CALLS.clear()
    with_helper = sdp.smoothed_delta(m, 800, pi, eps)
    if parallel.available_cpus() >= 2:  # the helper ran one half of the columns (and took chunks from the queue)
        assert _PARENT_CALLS.count("engine") == 1 and _PARENT_CALLS.count("profile") <= 2
    monkeypatch.setattr(X, "_helper", lambda n: None)
    _PARENT_CALLS.clear()
    alone = sdp.smoothed_delta(m, 800, pi, eps)
    assert _PARENT_CALLS == ["profile", "profile", "engine", "engine"]
    assert np.array_equal(with_helper.table["log_delta"], alone.table["log_delta"])
    h = np.stack([np.arange(801), 800 - np.arange(801)], axis=1)
    ref = exact.composition_expectations_log(sdp.privacy_profile(m, h, eps, log=True), 0.3, 0.6)
    # the result is a proven upper bound: the recursion's value plus the engine's
    # proven error bound (~1e-10 relative, mostly the Loader weights' bound far from
    # the mean), so it lies at or above the reference, within 1e-10 relative
    want = np.clip(ref.max(axis=0), None, np.log(alone.dp_delta))
    assert np.all(alone.log_delta >= want - 1e-13 * np.abs(want))
    np.testing.assert_allclose(alone.log_delta, want, rtol=1e-10)


def test_cost_model_walks_a_sample_of_blocks_at_large_n(monkeypatch):
    """Beyond 4096 blocks the cost model walks every k-th block only (so that
    a refusal at n = 10^9 is instant); its counts stay within 0.1 % of the
    full walk of the engine's schedule."""
    from smoothdp_nb.core.smoothed.engines import cost

    sampled = cost.binary_work_units(10**6, 3, 0.3, 0.6, log_bound=900.0, slope=0.05)
    monkeypatch.setattr(cost, "_MAX_BLOCKS_WALKED", 10**9)
    full = cost.binary_work_units(10**6, 3, 0.3, 0.6, log_bound=900.0, slope=0.05)
    for key in full:
        assert sampled[key] == pytest.approx(full[key], rel=1e-3)


def test_curve_table_keeps_the_certified_log_delta():
    """The curve's log_delta column is the results' proven upper bounds themselves (it was
    rebuilt as log10_delta * ln 10: two roundings, an ulp below the bound in 2 of 28 cells)."""
    c = sdp.smoothed_delta_curve(
        sdp.SamplingHistogram(T=4), [8, 10, 12, 14, 16, 18, 20], [[0.7, 0.3], [0.4, 0.6]], [0.1, 0.5, 0.9, 1.3]
    )
    want = np.concatenate([r.log_delta_values for r in c.results])
    assert np.array_equal(c.table["log_delta"].to_numpy(), want)
    assert np.all(c.table["delta"].to_numpy() >= np.exp(want) * (1 - 1e-15))


def _exact_two_vertex_smoothed(T, n, p1, p2, epsilon):
    """max over compositions of E[delta(x)], every profile by enumeration and every
    weight a Fraction (Algorithm 1 with nothing shared with the package)."""
    from fractions import Fraction

    deltas = [exact.profile((k, n - k), T, epsilon) for k in range(n + 1)]

    def binom_law(s, p):
        return [math.comb(s, j) * p**j * (1 - p) ** (s - j) for j in range(s + 1)]

    best = mp.mpf(0)
    for r in range(n + 1):
        a, b = binom_law(n - r, p1), binom_law(r, p2)
        law = [Fraction(0)] * (n + 1)
        for i, wa in enumerate(a):
            for j, wb in enumerate(b):
                law[i + j] += wa * wb
        best = max(best, mp.fsum(exact.to_mp(w) * d for w, d in zip(law, deltas)))
    return best


@pytest.mark.parametrize(
    "T, n, p1, p2, epsilon",
    [(10, 60, (7, 10), (9, 20), 1.0), (6, 40, (3, 4), (1, 2), 0.5), (12, 48, (2, 3), (2, 5), 2.0)],
)
def test_smoothed_lower_bound_stays_informative_when_some_profile_cannot_be_bounded_below(T, n, p1, p2, epsilon):
    """One histogram whose profile's lower bound is 0 made the smoothed
    delta's lower bound 0 (SHM(T=10), n = 60: upper 2.947e-07, lower 0). The wide profiles are
    now left out of the lower bound (exact.lower_offset): the enclosure holds the exact value
    and is narrow."""
    from fractions import Fraction

    from smoothdp_nb.core.smoothed.engines import exact as X

    f1, f2 = Fraction(*p1), Fraction(*p2)
    mech = sdp.SamplingHistogram(T=T)
    hists = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    enc = mech._profile(hists, np.array([epsilon]))
    some_wide = bool(np.any((enc.upper > -np.inf) & (enc.upper - enc.lower > X.WIDE_PROFILE)))
    r = sdp.smoothed_delta(mech, n, [[float(f1), float(1 - f1)], [float(f2), float(1 - f2)]], epsilon)
    truth = _exact_two_vertex_smoothed(T, n, f1, f2, epsilon)
    assert mp.mpf(r.delta_lower) <= truth <= mp.mpf(r.delta)
    assert r.delta_lower > 0 and r.delta / r.delta_lower - 1 < 1e-9, (some_wide, r.delta, r.delta_lower)


def test_lower_offset_takes_the_better_of_its_two_bounds():
    """lower_offset: with no wide profile it is the width plus log(1 + rel); a wide profile
    whose upper bound reaches the expectation leaves only the first bound."""
    from smoothdp_nb.core.numerics.enclosures import log_rel
    from smoothdp_nb.core.smoothed.engines.exact import ProfileWidths, lower_offset

    lr = float(log_rel(1e-12))
    w = ProfileWidths(
        np.array([1e-10, np.inf, np.inf]), np.array([1e-10, 1e-10, 1e-10]), np.array([-np.inf, -50.0, -5.0])
    )
    down = lower_offset(np.array([-10.0, -10.0, -10.0]), np.full(3, lr), w)
    assert down[0] == pytest.approx(1e-10 + lr, rel=1e-12) and down[0] >= 1e-10 + lr
    # B = e^-50 against e^-10: the bound loses log(1 / (1 - e^-40)) more
    assert 1e-10 + lr < down[1] < 1e-10 + lr + 2 * math.exp(-40)
    assert down[2] == np.inf


def test_point_mass_vertices_run_the_fallback_with_a_finite_error_bound():
    """Vertices (1, 0) and (0, 1) make every composition one histogram, so the smoothed
    delta is the largest profile. The one-step fallback runs here (T = 3); its error
    bound once counted weights that underflow to 0 (log weight -1.4e301) and overflowed
    (OverflowError, found by the fuzz test)."""
    n, T = 14, 3
    truth = max(exact.profile((k, n - k), T, 1.0) for k in range(n + 1))
    r = sdp.smoothed_delta(sdp.SamplingHistogram(T=T), n, [[1.0, 0.0], [0.0, 1.0]], 1.0)
    assert mp.mpf(r.delta_lower) <= truth <= mp.mpf(r.delta)
    assert r.delta / r.delta_lower - 1 < 1e-9


def test_label_symmetric_mechanisms_profile_one_histogram_of_each_mirror_pair(monkeypatch):
    """SamplingHistogram is label-symmetric: Algorithm 1 profiles k <= n/2 only and mirrors the
    rest, with the same smoothed delta as profiling every histogram."""
    from smoothdp_nb.core.smoothed.engines import exact as X

    class Plain(sdp.SamplingHistogram):
        label_symmetric = False

    assert sdp.SamplingHistogram(T=3).label_symmetric
    assert not sdp.postprocess(sdp.SamplingHistogram(T=3), sdp.winner).label_symmetric
    rows = []
    real = X._profile_chunk
    monkeypatch.setattr(X, "_profile_chunk", lambda mech, hists, e: rows.append(len(hists)) or real(mech, hists, e))
    pi, eps = [[0.7, 0.3], [0.35, 0.65]], [0.2, 1.0, 3.0]
    a = sdp.smoothed_delta(sdp.SamplingHistogram(T=7), 41, pi, eps)
    assert sum(rows) == 21
    rows.clear()
    b = sdp.smoothed_delta(Plain(T=7), 41, pi, eps)
    assert sum(rows) == 42
    assert np.array_equal(a.log_delta, b.log_delta) and np.array_equal(a.log_delta_lower, b.log_delta_lower)
