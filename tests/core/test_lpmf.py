"""Loader's log-pmfs against mpmath log-gamma at 60 digits."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from smoothdp_nb.core.numerics import lpmf
from tests.exact import forward_divergence_binary_mp, log_hypergeom_mp

CASES = [
    (3, 10, 5, 6),
    (6, 10, 5, 6),
    (0, 3, 9, 4),
    (998000, 1000000, 500, 998300),
    (5000, 10000, 10000, 10000),
    (81_100_000, 81_283_501, 74_223_975, 155_196_524),
    (1, 1, 0, 1),
]


@pytest.mark.parametrize("k,good,bad,draws", CASES)
def test_hypergeom_log_pmf(k, good, bad, draws):
    got = float(lpmf.log_hypergeom_pmf(k, good, bad, draws))
    want = float(log_hypergeom_mp(k, good, bad, draws))
    # absolute error of the log = relative error of the probability
    assert abs(got - want) <= 1e-12 * max(1.0, abs(want)) ** 0.5 + 1e-13


@pytest.mark.parametrize(
    "k,n,p", [(3, 10, 0.3), (0, 100, 0.001), (100, 100, 0.999), (499_999, 1_000_000, 0.5), (7, 10**9, 1e-8)]
)
def test_binom_log_pmf(k, n, p):
    mp.mp.dps = 60
    pm = mp.mpf(p)
    want = mp.log(mp.binomial(n, k)) + k * mp.log(pm) + (n - k) * mp.log(1 - pm)
    got = float(lpmf.log_binom_pmf(k, n, p))
    assert got == pytest.approx(float(want), abs=1e-12)


def test_outside_support_is_minus_inf():
    assert lpmf.log_hypergeom_pmf(5, 3, 10, 6) == -np.inf
    assert lpmf.log_binom_pmf(11, 10, 0.5) == -np.inf


def test_log_comb_matches_math_comb():
    for n, k in [(10, 3), (200, 100), (1000, 1)]:
        assert float(lpmf.log_comb(n, k)) == pytest.approx(math.log(math.comb(n, k)), rel=1e-14)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    log10_n=st.floats(2.0, 8.3),
    share=st.floats(0.3, 0.7),
    eta=st.sampled_from([0.9, 0.99, 0.998]),
    epsilon=st.floats(0.02, 2.0),
)
def test_a_priori_error_path_contains_the_truth(monkeypatch, log10_n, share, eta, epsilon):
    """The cheap path of the tail sums (the a-priori log-pmf error bound
    ``enclosures.lpmf_abs_error`` alone, no running bound, forced here for
    every row, deep tails included) still encloses the profile computed at 60
    digits by mpmath log-gamma sums."""
    import smoothdp_nb as sdp
    from smoothdp_nb.core.numerics import divergence

    monkeypatch.setattr(divergence, "RUNNING_ERROR_FROM", math.inf)
    n = max(3, int(10**log10_n))
    w = min(n - 1, max(1, round(share * n)))
    r = n - w
    m = sdp.SamplingHistogram(eta=eta)
    T = m.sample_size(n)
    want = max(
        forward_divergence_binary_mp(u, v, T, epsilon) for u, v in [(w - 1, r), (r, w - 1), (r - 1, w), (w, r - 1)]
    )
    enc = sdp.privacy_profile_enclosure(m, [w, r], epsilon)
    lo, hi = float(np.ravel(enc.lower)[0]), float(np.ravel(enc.upper)[0])
    if want == -mp.inf:
        assert lo == -math.inf
        return
    # the reference sum stops at terms below 1e-40 of the total: a lower bound within 1e-39
    assert mp.mpf(lo) <= want <= mp.mpf(hi) + mp.mpf("1e-38")
    # still informative without the running bound (relative: log-deltas reach -3.6e6 at n = 1e8)
    assert hi - lo < 1e-6 + 1e-12 * abs(lo)


@settings(max_examples=60, deadline=None)
@given(
    log10_total=st.floats(1.0, 8.5),
    share=st.floats(0.05, 0.95),
    draw_share=st.floats(0.001, 0.999),
    where=st.floats(0.0, 1.0),
)
def test_a_priori_log_hypergeom_error_bound(log10_total, share, draw_share, where):
    """``enclosures.lpmf_abs_error(value, n, 3)`` bounds the error of the Loader
    hypergeometric log-pmf against 60-digit mpmath log-gamma, anywhere in the
    support (deep tails included: the cheap path of the tail sums rests on it)."""
    from smoothdp_nb.core.numerics.enclosures import lpmf_abs_error

    total = max(2, int(10**log10_total))
    good = min(total - 1, max(1, round(share * total)))
    bad = total - good
    draws = min(total - 1, max(1, round(draw_share * total)))
    lo, hi = max(0, draws - bad), min(good, draws)
    k = lo + round(where * (hi - lo))
    got = float(lpmf.log_hypergeom_pmf(k, good, bad, draws))
    want = log_hypergeom_mp(k, good, bad, draws)
    bound = float(lpmf_abs_error(got, total, 3))
    assert abs(mp.mpf(got) - want) <= bound


@settings(max_examples=40, deadline=None)
@given(
    log10_s=st.floats(2.5, 6.3),
    p=st.floats(0.01, 0.99),
    level=st.floats(5.0, 3000.0),
    where=st.floats(0.0, 1.0),
)
def test_anchored_binomial_window_error_bound(log10_s, p, level, where):
    """The two-vertex engine's window log-weights (Loader at anchors, term-ratio
    products between) stay within Loader's a-priori bound plus ``ANCHOR_ERROR``
    of 60-digit mpmath, the bound ``engine_error`` uses."""
    from smoothdp_nb.core.numerics.enclosures import U, lpmf_abs_error
    from smoothdp_nb.core.smoothed.engines.binary import ANCHOR_ERROR, BinomialWeights

    s = int(10**log10_s)
    a, b, lw = BinomialWeights(s, p).window(s, level)
    x = a + round(where * (b - a))
    mp.mp.dps = 60
    pm = mp.mpf(p)
    exact = mp.log(mp.binomial(s, x)) + x * mp.log(pm) + (s - x) * mp.log(1 - pm)
    lmax = float(np.max(-lw))
    bound = float(lpmf_abs_error(lmax, s, 1)) + 3.03 * U * s + ANCHOR_ERROR[0] + ANCHOR_ERROR[1] * lmax
    assert abs(mp.mpf(float(lw[x - a])) - exact) <= bound


@settings(max_examples=40, deadline=None)
@given(
    log10_total=st.floats(1.0, 8.5),
    share=st.floats(0.05, 0.95),
    draw_share=st.floats(0.001, 0.999),
    wheres=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    cut=st.floats(-2000.0, 0.0),
)
def test_hypergeom_pmf_with_its_running_error_in_one_pass(log10_total, share, draw_share, wheres, cut):
    """``log_hypergeom_pmf_with_error``: the value is the one of
    ``log_hypergeom_pmf`` (bit for bit); where ``want`` asks for it the bound
    holds against 60-digit mpmath log-gamma (support ends included), and it
    is ``+inf`` (no claim) elsewhere."""
    total = max(2, int(10**log10_total))
    good = min(total - 1, max(1, round(share * total)))
    bad = total - good
    draws = min(total - 1, max(1, round(draw_share * total)))
    lo, hi = max(0, draws - bad), min(good, draws)
    k = np.array([[lo + round(w * (hi - lo))] for w in wheres], dtype=float)
    value, err = lpmf.log_hypergeom_pmf_with_error(k, good, bad, draws, lambda v: v < cut)
    np.testing.assert_array_equal(value, lpmf.log_hypergeom_pmf(k, good, bad, draws))
    for kk, v, e in zip(k[:, 0], value[:, 0], err[:, 0]):
        if not v < cut:
            assert e == math.inf
            continue
        assert abs(mp.mpf(float(v)) - log_hypergeom_mp(int(kk), good, bad, draws)) <= e


@settings(max_examples=40, deadline=None)
@given(
    log10_n=st.floats(1.0, 9.0),
    p=st.floats(1e-6, 1 - 1e-6),
    wheres=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
)
def test_binom_pmf_with_its_running_error_in_one_pass(log10_n, p, wheres):
    """``log_binom_pmf_with_error``: the value of ``log_binom_pmf`` and, where
    wanted (here everywhere), a bound that holds against 60-digit mpmath for
    the binomial law of the given p and q = 1 - p (an exact float here)."""
    n = int(10**log10_n)
    q = 1.0 - p
    p = 1.0 - q  # so that p + q = 1 exactly
    k = np.array([round(w * n) for w in wheres], dtype=float)
    value, err = lpmf.log_binom_pmf_with_error(k, float(n), p, q, lambda v: np.ones(v.shape, dtype=bool))
    np.testing.assert_array_equal(value, lpmf.log_binom_pmf(k, float(n), p, q))
    mp.mp.dps = 60
    pm, qm = mp.mpf(p), mp.mpf(q)
    for kk, v, e in zip(k, value, err):
        kk = int(kk)
        exact = (
            mp.loggamma(n + 1) - mp.loggamma(kk + 1) - mp.loggamma(n - kk + 1) + kk * mp.log(pm) + (n - kk) * mp.log(qm)
        )
        assert abs(mp.mpf(float(v)) - exact) <= e
