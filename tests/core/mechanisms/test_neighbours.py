"""The add-remove relation: profiles, DP deltas, smoothed deltas, compositions and
privacy-loss distributions against independent Fraction / mpmath enumerations."""

import itertools
import math
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from tests.exact import hockey, pmf_without_replacement

mp.mp.dps = 60


def _add_remove(h):
    """Every add-remove neighbour of h with at least one record."""
    h = list(h)
    for a in range(len(h)):
        up = h.copy()
        up[a] += 1
        yield tuple(up)
        if h[a] > 0 and sum(h) > 1:
            down = h.copy()
            down[a] -= 1
            yield tuple(down)


def _profile(law, h, epsilon):
    """max over add-remove neighbours and both directions of the exact hockey-stick divergence."""
    P = law(h)
    return max(max(hockey(P, law(x), epsilon), hockey(law(x), P, epsilon)) for x in _add_remove(h))


def _sample_law(T):
    return lambda h: pmf_without_replacement(list(h), T)


@settings(max_examples=12, deadline=None)
@given(
    a=st.integers(1, 5),
    b=st.integers(1, 5),
    T=st.integers(1, 2),
    epsilon=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_add_remove_profile_of_the_sampling_histogram_brackets_the_exact_value(a, b, T, epsilon):
    h = (a + T, b)  # n - 1 >= T: every neighbour can be sampled
    m = sdp.SamplingHistogram(T=T)
    enc = sdp.privacy_profile_enclosure(m, h, epsilon, neighbours="add-remove")
    truth = _profile(_sample_law(T), h, epsilon)
    assert math.exp(enc.lower) <= truth * (1 + 1e-12) + 1e-300
    assert truth <= math.exp(enc.upper) * (1 + 1e-12)
    assert math.exp(enc.upper) <= truth * (1 + 1e-9) + 1e-300


def test_replace_stays_the_default_and_differs_from_add_remove():
    m = sdp.SamplingHistogram(T=2)
    h = [4, 3]
    default = sdp.privacy_profile(m, h, 0.5)
    assert default == sdp.privacy_profile(m, h, 0.5, neighbours="replace")
    replace_truth = max(
        max(hockey(_sample_law(2)(h), _sample_law(2)(x), 0.5), hockey(_sample_law(2)(x), _sample_law(2)(h), 0.5))
        for x in [(3, 4), (5, 2)]
    )
    assert float(replace_truth) == pytest.approx(default, rel=1e-9)
    assert float(_profile(_sample_law(2), h, 0.5)) == pytest.approx(
        sdp.privacy_profile(m, h, 0.5, neighbours="add-remove"), rel=1e-9
    )
    assert sdp.privacy_profile(m, h, 0.5, neighbours="add-remove") != pytest.approx(default, rel=1e-3)


def test_a_rate_reveals_the_database_size_under_add_remove():
    # T = ceil(eta n): adding a record to 10 records samples 6 instead of 5, and the output's
    # total tells the two apart with certainty
    m = sdp.SamplingHistogram(eta=0.5)
    assert sdp.privacy_profile(m, [6, 4], [0.0, 3.0], neighbours="add-remove").tolist() == [1.0, 1.0]


def test_add_remove_dp_delta_is_the_worst_exact_profile():
    m = sdp.SamplingHistogram(T=2)
    n = 5
    worst = max(_profile(_sample_law(2), (k, n - k), 0.4) for k in range(n + 1))
    assert float(worst) == pytest.approx(sdp.dp_delta(m, n, 0.4, neighbours="add-remove"), rel=1e-9)
    assert float(worst) <= sdp.dp_delta(m, n, 0.4, neighbours="add-remove") * (1 + 1e-12)


def test_add_remove_smoothed_delta_averages_the_exact_profiles():
    m = sdp.SamplingHistogram(T=2)
    n, p = 6, Fraction(3, 10)
    expected = sum(
        mp.mpf(math.comb(n, k))
        * mp.mpf(p.numerator) ** k
        / p.denominator**k
        * (1 - mp.mpf(3) / 10) ** (n - k)
        * _profile(_sample_law(2), (k, n - k), 0.5)
        for k in range(n + 1)
    )
    res = sdp.smoothed_delta(m, n, [[0.3, 0.7]], 0.5, neighbours="add-remove")
    assert float(expected) == pytest.approx(float(res.delta), rel=1e-9)
    assert float(expected) <= float(res.delta) * (1 + 1e-12)


def test_add_remove_composition_against_the_product_law():
    m = sdp.SamplingHistogram(T=1)
    h = (3, 2)

    def law2(x):
        one = _sample_law(1)(x)
        return {(a, b): pa * pb for (a, pa), (b, pb) in itertools.product(one.items(), one.items())}

    truth = _profile(law2, h, 0.2)
    ours = sdp.privacy_profile(sdp.repeat(m, 2), h, 0.2, neighbours="add-remove")
    assert float(truth) <= ours * (1 + 1e-12)
    assert ours == pytest.approx(float(truth), rel=1e-6)


def test_privacy_loss_distribution_of_an_add_remove_pair():
    m = sdp.SamplingHistogram(T=2)
    pld = sdp.privacy_loss_distribution(m, [4, 3], [4, 4], neighbours="add-remove")
    P, Q = _sample_law(2)((4, 3)), _sample_law(2)((4, 4))
    truth = max(hockey(P, Q, 0.3), hockey(Q, P, 0.3))
    assert truth > 0
    assert pld.delta(0.3) == pytest.approx(float(truth), rel=1e-9)
    assert math.exp(pld.delta_enclosure(0.3).lower) <= float(truth) <= pld.delta(0.3)
    with pytest.raises(ValueError, match="add-remove neighbours"):
        sdp.privacy_loss_distribution(m, [4, 3], [3, 4], neighbours="add-remove")
    with pytest.raises(ValueError, match="neighbours must be one of"):
        sdp.privacy_profile(m, [4, 3], 0.3, neighbours="swap")


def test_a_fixed_sample_larger_than_a_removal_leaves_is_refused():
    with pytest.raises(ValueError, match="T must be <= n"):
        sdp.privacy_profile(sdp.SamplingHistogram(T=5), [3, 2], 0.3, neighbours="add-remove")
