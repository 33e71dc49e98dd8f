"""Post-processing (Proposition 4): postprocess(M, f) and the winner of a sampled election."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms.postprocess import PostProcessed, winner
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.winner import SampledWinner
from tests import exact


def generic_winner(mech):
    """The same mechanism through the generic (enumerating) path."""
    return PostProcessed(mech, winner)


@pytest.mark.parametrize("eta", [0.5, 0.7, 1])
def test_winner_fast_path_matches_enumeration_in_fractions(eta):
    base = sdp.SamplingHistogram(eta=eta)
    fast = sdp.postprocess(base, sdp.winner)
    assert isinstance(fast, SampledWinner)
    epsilon = [0.0, 0.2, 1.0]
    for n in (1, 2, 5, 6, 9):
        T = base.sample_size(n)
        hists = exact.all_hists(n, 2)
        got = sdp.privacy_profile(fast, np.array(hists), epsilon)
        slow = sdp.privacy_profile(generic_winner(base), np.array(hists), epsilon)
        for h, g, s in zip(hists, got, slow):
            want = [float(exact.profile_of_law(lambda x, T=T: exact.winner_law(x, T), h, e)) for e in epsilon]
            assert g == pytest.approx(want, rel=1e-9, abs=1e-15)
            # the generic path's value is a proven upper bound: where the truth
            # is 0 but the two output laws are sums rounded differently, it is a few 1e-15
            assert s == pytest.approx(want, rel=1e-9, abs=1e-14)
            assert np.all((np.array(want) == 0) == (g == 0))  # exact zeros stay exact


def test_winner_three_categories_uses_the_generic_path():
    base = sdp.SamplingHistogram(eta=0.5)
    w = sdp.postprocess(base, sdp.winner)
    for h in [(2, 1, 1), (3, 1, 0), (2, 2, 0)]:
        got = sdp.privacy_profile(w, h, 0.3)
        want = exact.profile_of_law(lambda x: exact.winner_law(x, base.sample_size(4)), h, 0.3)
        assert got == pytest.approx(float(want), rel=1e-9, abs=1e-15)


def test_winner_cannot_change_means_exactly_zero():
    """With 0.2 % lost and a margin of more than twice the lost votes (plus the
    changed record), no sample can change the winner: delta is exactly 0."""
    w = sdp.postprocess(sdp.SamplingHistogram(eta=0.998), sdp.winner)
    n = 100_000
    lost = n - math.ceil(0.998 * n)
    safe = [n // 2 + lost + 2, n - (n // 2 + lost + 2)]
    close = [n // 2 + 1, n - n // 2 - 1]
    d = sdp.privacy_profile(w, [safe, close], [0.0, 0.05], log=True)
    assert np.all(d[0] == -np.inf)
    assert np.all(np.isfinite(d[1]))


def test_elections_winner_far_below_the_histogram():
    elections = sdp.datasets.us_presidential_elections()
    hist = elections[["winner_votes", "runner_up_votes"]].to_numpy()
    mech = sdp.SamplingHistogram(eta=0.998)
    full = sdp.privacy_profile(mech, hist, 0.04, log=True)
    win = sdp.privacy_profile(sdp.postprocess(mech, sdp.winner), hist, 0.04, log=True)
    assert np.all(win <= full)
    assert np.sum(win == -np.inf) >= 1


def test_function_maps_vectorised_per_output_and_randomized_agree():
    base = sdp.SamplingHistogram(eta=0.6)
    vec = sdp.postprocess(base, lambda o: np.sign(np.asarray(o)[..., 0] - np.asarray(o)[..., 1]))
    per = sdp.postprocess(base, lambda o: int(np.sign(o[0] - o[1])) if np.ndim(o) == 1 else None.bad)
    # the winner as a user's randomized map: ties split by a law {output: probability}
    rnd = sdp.postprocess(base, lambda o: sdp.winner(o) if np.ndim(o) == 1 else None.bad)
    hists = np.array(exact.all_hists(7, 2))
    a = sdp.privacy_profile(vec, hists, [0.0, 0.5])
    b = sdp.privacy_profile(per, hists, [0.0, 0.5])
    assert np.array_equal(a, b)
    c = sdp.privacy_profile(rnd, hists, [0.0, 0.5])
    d = sdp.privacy_profile(sdp.postprocess(base, sdp.winner), hists, [0.0, 0.5])
    assert c == pytest.approx(d, rel=1e-9, abs=1e-14)  # c: a proven upper bound


def test_postprocessed_smoothed_delta_and_dp_delta():
    base = sdp.SamplingHistogram(eta=0.5)
    w = sdp.postprocess(base, sdp.winner)
    pi = [[0.4, 0.6], [0.55, 0.45]]
    res_w = sdp.smoothed_delta(w, 6, pi, [0.0, 0.3])
    res_b = sdp.smoothed_delta(base, 6, pi, [0.0, 0.3])
    assert np.all(res_w.delta <= res_b.delta)
    assert np.all(res_w.dp_delta <= res_b.dp_delta)
    # Definition 3 literally, every database of X^6 in Fractions
    pi_f = [[Fraction(2, 5), Fraction(3, 5)], [Fraction(11, 20), Fraction(9, 20)]]
    for e, d in zip([0.0, 0.3], res_w.delta):
        want = exact.smoothed_of_law(lambda x: exact.winner_law(x, 3), pi_f, 6, e)
        assert d == pytest.approx(float(want), rel=1e-9)
    # the generic path agrees with the fast one
    res_g = sdp.smoothed_delta(generic_winner(base), 6, pi, [0.0, 0.3])
    assert res_g.delta == pytest.approx(res_w.delta, rel=1e-9)


def test_bad_input():
    with pytest.raises(TypeError, match="mechanism must be"):
        sdp.postprocess("M", sdp.winner)
    with pytest.raises(TypeError, match="f must be"):
        sdp.postprocess(sdp.SamplingHistogram(eta=0.5), 3)
    bad = sdp.postprocess(sdp.SamplingHistogram(eta=0.5), lambda o: {0: 0.5, 1: 0.2})
    with pytest.raises(ValueError, match="summing to 1"):
        sdp.privacy_profile(bad, [2, 2], 0.1)


# -- Proposition 4, as a property ------------------------------------------------------
hist2 = st.tuples(st.integers(0, 9), st.integers(0, 9)).filter(lambda h: sum(h) >= 1)
hist3 = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)).filter(lambda h: sum(h) >= 1)


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(hist2, hist3),
    st.sampled_from([0.3, 0.5, 0.8, 1]),
    st.booleans(),
    st.lists(st.integers(0, 3), min_size=1, max_size=4),
    st.floats(0, 3),
    st.booleans(),
)
def test_postprocessing_never_increases_delta(h, eta, replace, weights, epsilon, randomized):
    """delta(f(M)) <= delta(M) for random output maps, deterministic or randomized."""
    base = sdp.SamplingHistogram(eta=eta, replace=replace)
    w = np.resize(np.array(weights), len(h))

    def f(o):
        key = int(np.dot(o, w)) % 3
        return {key: 0.75, (key + 1) % 3: 0.25} if randomized else key

    post = sdp.postprocess(base, f)
    d_post = sdp.privacy_profile(post, h, epsilon)
    d_base = sdp.privacy_profile(base, h, epsilon)
    assert 0.0 <= d_post <= d_base * (1 + 1e-9) + 1e-15
    n = sum(h)
    assert sdp.dp_delta(post, n, epsilon, categories=len(h)) <= sdp.dp_delta(base, n) * (1 + 1e-9) + 1e-15


@pytest.mark.parametrize(
    "h,eta", [((10_090, 9_910), "0.99"), ((50_050, 49_950), "0.998"), ((34_227_096, 34_107_646), "0.998")]
)
def test_winner_at_large_n_against_mpmath(h, eta):
    """Close elections at large n (the last: 1960 of the shipped table, delta ~ 1e-27142)
    against 60-digit tail sums; relative 1e-9 on delta where float64 holds its log to
    that, and 1e-12 relative on log delta far below the float64 range."""
    base = sdp.SamplingHistogram(eta=eta)
    T = base.sample_size(sum(h))
    w = sdp.postprocess(base, sdp.winner)
    for e in (0.0, 0.04):
        got = sdp.privacy_profile(w, list(h), e, log=True)
        want = float(exact.winner_profile_mp(h, T, e))
        assert math.isfinite(want)  # margin below the lost votes: the winner can change
        if abs(want) < 700:
            assert math.exp(got) == pytest.approx(math.exp(want), rel=1e-9)
        else:
            assert got == pytest.approx(want, rel=1e-12)
