"""Property-based invariants of the privacy profile (hypothesis)."""

import numpy as np
from hypothesis import given, strategies as st

import smoothdp_nb as sdp

hist2 = st.tuples(st.integers(0, 60), st.integers(0, 60)).filter(lambda h: sum(h) >= 1)
hist3 = st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8)).filter(lambda h: sum(h) >= 1)
etas = st.sampled_from([0.1, 0.5, 0.9, 0.998, 1])
eps_lists = st.lists(st.floats(0, 8, allow_nan=False), min_size=1, max_size=6)


def _mech(eta, replace):
    return sdp.SamplingHistogram(eta=eta, replace=replace)


@given(st.one_of(hist2, hist3), etas, st.booleans(), eps_lists)
def test_delta_in_unit_interval_and_non_increasing_in_eps(h, eta, replace, epsilon):
    m = _mech(eta, replace)
    e = np.sort(np.array(epsilon))
    d = sdp.privacy_profile(m, np.array(h), e)
    assert np.all(d >= 0) and np.all(d <= 1)  # exactly: no rounding above 1
    assert np.all(np.diff(d) <= 1e-12 * (1 + d[:-1]))
    logd = sdp.privacy_profile(m, np.array(h), e, log=True)
    assert np.all(logd[1:] <= logd[:-1] + 1e-9)


@given(st.one_of(hist2, hist3), etas, st.booleans(), eps_lists)
def test_never_above_the_dp_delta(h, eta, replace, epsilon):
    m = _mech(eta, replace)
    d = sdp.privacy_profile(m, np.array(h), epsilon)
    assert np.all(d <= sdp.dp_delta(m, sum(h)))  # exactly, T/n correctly rounded


@given(hist3, etas, st.permutations([0, 1, 2]), st.floats(0, 5))
def test_symmetric_under_relabelling(h, eta, perm, epsilon):
    m = _mech(eta, False)
    a = sdp.privacy_profile(m, np.array(h), epsilon)
    b = sdp.privacy_profile(m, np.array(h)[list(perm)], epsilon)
    assert abs(a - b) <= 1e-12 * max(a, 1e-300) + 1e-300


@given(st.lists(hist2, min_size=1, max_size=6), etas, eps_lists)
def test_batch_equals_one_by_one(hists, eta, epsilon):
    m = _mech(eta, False)
    H = np.array(hists)
    batch = sdp.privacy_profile(m, H, epsilon, log=True)
    for i, h in enumerate(H):
        np.testing.assert_allclose(batch[i], sdp.privacy_profile(m, h, epsilon, log=True), rtol=1e-13, atol=0)
