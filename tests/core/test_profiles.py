"""Privacy profiles (Definition 2) against independent exact computations."""

import math

import mpmath as mp
import numpy as np
import pytest

import smoothdp_nb as sdp
from tests import exact

ETAS = [0.5, 0.9, 0.998, 1]
EPS = [0.04, 0.3, 1.0, 2.5, 7.0]
BINARY = [(3, 4), (0, 7), (7, 0), (1, 6), (10, 2), (12, 13), (1, 1), (29, 1), (15, 15)]
TERNARY = [(2, 3, 4), (0, 5, 1), (6, 0, 0), (3, 3, 3), (1, 0, 8)]


def _rel(got, want):
    want = float(want)
    if want == 0:
        return abs(got)
    return abs(got - want) / want


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("hist", BINARY + TERNARY)
def test_profile_matches_enumeration(hist, replace):
    h = np.array(hist)
    for eta in ETAS:
        m = sdp.SamplingHistogram(eta=eta, replace=replace)
        T = m.sample_size(int(h.sum()))
        got = m and sdp.privacy_profile(m, h, EPS)
        for e, g in zip(EPS, got):
            want = exact.profile(tuple(hist), T, e, replace=replace)
            assert _rel(g, want) < 1e-9, (hist, eta, e, g, float(want))


def test_fixed_T_and_degenerate_T_equals_n():
    h = np.array([4, 6])
    m = sdp.SamplingHistogram(T=10)
    # T = n: the output is the database itself, so neighbours are told apart surely.
    assert sdp.privacy_profile(m, h, [0.5, 5.0]) == pytest.approx([1.0, 1.0])
    m = sdp.SamplingHistogram(T=3)
    want = exact.profile((4, 6), 3, 1.0)
    assert _rel(sdp.privacy_profile(m, h, 1.0), want) < 1e-9


def test_tiny_values_in_log_space():
    # n = 30, T = 29: values near 1e-8 .. and the log form agrees with mpmath.
    h = (15, 15)
    m = sdp.SamplingHistogram(T=2)
    for e in [3.0, 7.0]:
        want = exact.profile(h, 2, e)
        got = sdp.privacy_profile(m, np.array(h), e, log=True)
        if want == 0:
            assert got == -math.inf
        else:
            assert got == pytest.approx(float(mp.log(want)), abs=1e-9)


def test_profile_far_below_float_range_is_finite_log():
    # A huge balanced electorate: delta underflows float64 but its log is finite.
    m = sdp.SamplingHistogram(eta=0.5)
    h = np.array([5 * 10**7, 5 * 10**7])
    val = sdp.privacy_profile(m, h, 2.0, log=True)
    assert np.isfinite(val) and val < math.log(1e-300)
    # the linear value is a proven upper bound: a positive delta below the float
    # range is reported as the smallest subnormal (above it), never as 0
    assert sdp.privacy_profile(m, h, 2.0) == 5e-324


@pytest.mark.parametrize("year_votes", [(16_147_249, 9_140_864), (81_283_501, 74_223_975), (50_992_335, 50_455_156)])
def test_huge_n_against_mpmath(year_votes):
    """Figure 1 setting: top-2 votes, 0.2 % lost, epsilon = ln(0.51/0.49)."""
    w, r = year_votes
    m = sdp.SamplingHistogram(eta=0.998)
    n = w + r
    T = m.sample_size(n)
    epsilon = math.log(0.51 / 0.49)
    candidates = []
    for u, v in [(w - 1, r), (r, w - 1), (r - 1, w), (w, r - 1)]:
        candidates.append(exact.forward_divergence_binary_mp(u, v, T, epsilon))
    want = max(candidates)
    got = sdp.privacy_profile(m, np.array([w, r]), epsilon, log=True)
    assert got == pytest.approx(float(want), abs=1e-9 * abs(float(want)))


def test_figure1_orders_of_magnitude():
    df = sdp.datasets.us_presidential_elections()
    m = sdp.SamplingHistogram(eta=0.998)
    hist = df[["winner_votes", "runner_up_votes"]].to_numpy()
    logd = sdp.privacy_profile(m, hist, math.log(0.51 / 0.49), log=True) / math.log(10)
    years = df["year"].to_numpy()
    # Paper (Figure 1): about 1e-8 in 1920 down to about 1e-32 in 2020.
    assert -9 < logd[years == 1920][0] < -7
    assert -33 < logd[years == 2020][0] < -31
    # the decreasing trend: later decades are more private
    assert np.mean(logd[-5:]) < np.mean(logd[:5]) - 10


@pytest.mark.parametrize("hist", [(2, 3), (3, 1), (1, 1, 1), (2, 0, 1)])
def test_noisy_mechanism_matches_a_large_truncated_sum(hist):
    """Algorithm 4: compare the lumped exact computation with a brute-force sum
    over a box far larger than T (the neglected mass is < e^-60)."""
    from scipy.special import logsumexp

    ne = 2.0
    m = sdp.NoisySamplingHistogram(T=2, noise_epsilon=ne)
    lam = ne / 4
    box = 2 + int(60 / lam)
    h = np.array(hist)

    def pmf(x):
        samples = exact.pmf_without_replacement(tuple(x), 2)
        grids = np.meshgrid(*[np.arange(box)] * len(x), indexing="ij")
        out = np.full(grids[0].shape, -np.inf)
        for s, w in samples.items():
            lk = np.zeros(grids[0].shape)
            for j, g in enumerate(grids):
                # normaliser of one coordinate: sum_{k >= 0} e^(-lam |k - s_j|)
                z = sum(math.exp(-lam * abs(k - s[j])) for k in range(box + 200))
                lk = lk - lam * np.abs(g - s[j]) - math.log(z)
            out = np.logaddexp(out, math.log(w) + lk)
        return out.ravel()

    p = pmf(h)
    best = np.full(3, -np.inf)
    epsilon = np.array([0.1, 0.7, 2.0])
    for x in exact.neighbours(tuple(hist)):
        q = pmf(np.array(x))
        for j, e in enumerate(epsilon):
            for a, b in [(p, q), (q, p)]:
                with np.errstate(divide="ignore"):
                    d = logsumexp(np.where(a - b > e, a + np.log1p(-np.exp(np.minimum(e - (a - b), 0))), -np.inf))
                best[j] = max(best[j], d)
    got = sdp.privacy_profile(m, h, epsilon, log=True)
    np.testing.assert_allclose(got, best, rtol=1e-9, atol=1e-12)
    # the pmf itself sums to one on the lumped space
    df = m.output_pmf(h)
    assert df["probability"].sum() == pytest.approx(1.0, abs=1e-12)


def test_output_pmf_matches_enumeration():
    m = sdp.SamplingHistogram(T=3)
    df = m.output_pmf([2, 3, 1])
    want = exact.pmf_without_replacement((2, 3, 1), 3)
    assert len(df) == len(want)
    for _, row in df.iterrows():
        key = (int(row.c0), int(row.c1), int(row.c2))
        assert row.probability == pytest.approx(float(want[key]), rel=1e-12)
    m = sdp.SamplingHistogram(T=3, replace=True)
    df = m.output_pmf([2, 3])
    want = exact.pmf_with_replacement((2, 3), 3)
    for _, row in df.iterrows():
        assert row.probability == pytest.approx(float(want[(int(row.c0), int(row.c1))]), rel=1e-12)


def test_batch_shapes_and_mixed_sizes():
    m = sdp.SamplingHistogram(eta=0.9)
    H = np.array([[3, 4], [10, 2], [0, 5]])
    out = sdp.privacy_profile(m, H, [0.5, 1.0])
    assert out.shape == (3, 2)
    for i, h in enumerate(H):
        np.testing.assert_allclose(out[i], sdp.privacy_profile(m, h, [0.5, 1.0]), rtol=1e-14)
    assert isinstance(sdp.privacy_profile(m, H[0], 0.5), float)
    assert sdp.privacy_profile(m, H, 0.5).shape == (3,)


def test_sample_size_is_exact_decimal_ceiling():
    assert sdp.SamplingHistogram(eta=0.998).sample_size(1000) == 998
    assert sdp.SamplingHistogram(eta=0.9).sample_size(10) == 9
    assert sdp.SamplingHistogram(eta=0.1).sample_size(30) == 3
    assert sdp.SamplingHistogram(eta="0.9999").sample_size(155_507_476) == 155_491_926
    assert sdp.SamplingHistogram(eta=1).sample_size(7) == 7
    assert sdp.SamplingHistogram(T=5).sample_size(9) == 5


def test_sample_runs_the_mechanism():
    m = sdp.SamplingHistogram(eta=0.5)
    data = np.array(["b", "a", "a", "c", "b", "a"] * 10)
    out = m.sample(data, rng=1)
    assert out.sum() == 30 and out.shape == (3,)
    assert np.array_equal(out, m.sample(data, rng=1))
    assert np.all(out <= np.array([30, 20, 10]))
    # all records kept when eta = 1
    assert np.array_equal(sdp.SamplingHistogram(eta=1).sample(data), [30, 20, 10])
    noisy = sdp.NoisySamplingHistogram(T=3, noise_epsilon=1.0)
    draws = noisy.sample_histogram([2, 3], rng=0, size=20000)
    assert draws.min() >= 0
    # the empirical law of the noisy output agrees with the exact pmf
    df = noisy.output_pmf([2, 3])
    lumped = np.minimum(draws, 3)
    for _, row in df.iterrows():
        freq = np.mean((lumped[:, 0] == row.c0) & (lumped[:, 1] == row.c1))
        assert abs(freq - row.probability) < 5 * math.sqrt(row.probability / 20000) + 1e-3


def test_dp_delta_is_the_worst_case():
    m = sdp.SamplingHistogram(eta=0.9)
    n = 12
    T = m.sample_size(n)
    assert sdp.dp_delta(m, n) == pytest.approx(T / n)
    hists = np.array([[j, n - j] for j in range(n + 1)])
    worst = sdp.privacy_profile(m, hists, [0.1, 1.0, 5.0]).max(axis=0)
    np.testing.assert_allclose(worst, T / n, rtol=1e-12)
    mr = sdp.SamplingHistogram(eta=0.5, replace=True)
    worst = sdp.privacy_profile(mr, hists, [0.1, 1.0, 5.0]).max(axis=0)
    np.testing.assert_allclose(worst, sdp.dp_delta(mr, n), rtol=1e-12)
    noisy = sdp.NoisySamplingHistogram(T=2, noise_epsilon=1.0)
    assert sdp.dp_delta(noisy, 4, 0.5) == pytest.approx(
        sdp.privacy_profile(noisy, np.array([[j, 4 - j] for j in range(5)]), 0.5).max()
    )


def test_remark8_bound():
    n, m, eta, epsilon, f = 1000, 2, 0.9, 3.0, 0.2
    g = ((1 - math.exp(-epsilon)) / eta - 1) ** 2
    want = math.exp(-g * f * n / 6) + m * math.exp(-f * n / 8)
    assert sdp.remark8_bound(n, m, eta, epsilon, f) == pytest.approx(want, rel=1e-14)
    with pytest.raises(ValueError, match="epsilon > ln"):
        sdp.remark8_bound(n, m, eta, 2.0, f)  # ln(1/0.1) = 2.303
    with pytest.raises(ValueError, match="f must be"):
        sdp.remark8_bound(n, m, eta, 3.0, 0.7)
    # log form stays finite for huge n
    assert sdp.remark8_bound(10**9, 2, 0.5, 2.0, 0.3, log=True) < -1e6


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("c", [(3, 4), (0, 6), (5, 0), (9, 2), (1, 1, 2)])
@pytest.mark.parametrize("t", [0.3, 0.5, 0.51, 0.6, 0.9])
def test_adjusted_utility_matches_definition(c, t, replace):
    m = sdp.SamplingHistogram(eta=0.5, replace=replace)
    T = m.sample_size(sum(c) + 1)
    want = exact.utility(c, T, t, replace=replace)
    got = sdp.adjusted_utility(m, np.array(c), t)
    assert _rel(got, exact.to_mp(want)) < 1e-9


def test_corollary3_utility_below_twice_delta():
    m = sdp.SamplingHistogram(eta=0.9)
    epsilon = 0.8
    t = math.exp(epsilon) / (math.exp(epsilon) + 1)
    for c in [(3, 4), (10, 2), (5, 5)]:
        x = np.array([c[0] + 1, c[1]])
        assert sdp.adjusted_utility(m, np.array(c), t) < 2 * sdp.privacy_profile(m, x, epsilon) + 1e-15


def test_compose():
    res = sdp.compose([(0.5, 1e-9), (1.0, 2e-9)])
    assert res.epsilon == 1.5 and res.delta == pytest.approx(3e-9)
    epsilon, delta = res
    assert (epsilon, delta) == (res.epsilon, res.delta)
    with pytest.raises(ValueError, match="delta"):
        sdp.compose([(0.5, 1.5)])


@pytest.mark.parametrize("hist", [(0, 1, 10**12), (5, 10**9, 3 * 10**9), (7, 2, 3 * 10**7), (10**6, 10**6, 1)])
@pytest.mark.parametrize("T", [3, 5])
def test_ternary_profile_at_huge_n_without_a_factorial_table(hist, T):
    """m > 2 without replacement at n up to 10^12: the binomial coefficients come from falling
    factorials of length <= T (a log-factorial table of n entries was 7 TiB here, and lost
    n log n * 1e-16 to cancellation).  Exact enumeration with Python integers is cheap because
    only the sample (T records) is enumerated."""
    m = sdp.SamplingHistogram(T=T)
    eps = [0.0, 0.5, 3.0]
    got = sdp.privacy_profile(m, np.array(hist), eps)
    for e, g in zip(eps, got):
        want = exact.profile(hist, T, e)
        assert _rel(g, want) < 1e-9, (hist, T, e, g, float(want))
