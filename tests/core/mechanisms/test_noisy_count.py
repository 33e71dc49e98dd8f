"""noisy_count and subsample: closed-form profiles against mpmath, loss laws and compositions
against the analytic Gaussian curve, dp_accounting and autodp."""

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpl
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from tests.exact import hockey, pmf_without_replacement

mp.mp.dps = 60


# -- independent references (mpmath, 60 digits) -------------------------------------------------
def gaussian_delta(sigma, epsilon):
    """Balle & Wang (2018), Theorem 8, sensitivity 1."""
    s, e = mp.mpf(sigma), mp.mpf(epsilon)
    return mp.ncdf(1 / (2 * s) - e * s) - mp.e**e * mp.ncdf(-1 / (2 * s) - e * s)


def laplace_delta(b, epsilon):
    """The definition: the integral of max(0, p(o) - e^eps q(o)), p = Lap(1, b), q = Lap(0, b)."""
    b, E = mp.mpf(b), mp.e ** mp.mpf(epsilon)

    def gap(o):
        return max(mp.mpf(0), mp.e ** (-abs(o - 1) / b) / (2 * b) - E * mp.e ** (-abs(o) / b) / (2 * b))

    kink = (1 + b * mp.mpf(epsilon)) / 2  # where p = e^eps q: the integrand's corner
    return mp.quad(gap, [-mp.inf, 0, min(kink, 1), 1, mp.inf])


def discrete_delta(weight, epsilon, K=400):
    """sum_k max(0, P(k) - e^eps Q(k)), P = w(k - 1)/Z, Q = w(k)/Z, summed over |k| <= K."""
    Z = mp.fsum(weight(k) for k in range(-K, K + 1))
    E = mp.e ** mp.mpf(epsilon)
    return mp.fsum(max(mp.mpf(0), (weight(k - 1) - E * weight(k)) / Z) for k in range(-K, K + 1))


def _inside(enc, truth, rel):
    """Whether the enclosure holds the truth and its upper end is within ``rel`` of it."""
    lo, hi = math.exp(enc.lower), math.exp(enc.upper)
    return (
        lo <= float(truth) * (1 + 1e-12) + 1e-300
        and float(truth) <= hi * (1 + 1e-12) <= float(truth) * (1 + rel) * (1 + 1e-12) + 1e-300
    )


@settings(max_examples=15, deadline=None)
@given(sigma=st.floats(0.3, 8.0), epsilon=st.floats(0.0, 4.0))
def test_gaussian_profile_is_the_analytic_curve(sigma, epsilon):
    enc = sdp.privacy_profile_enclosure(sdp.noisy_count(1, sigma), [4, 2, 1], epsilon)
    assert _inside(enc, gaussian_delta(sigma, epsilon), 1e-9)


@pytest.mark.parametrize("noise,scale", [("laplace", 0.7), ("laplace", 2.0), ("discrete_laplace", 1.5)])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 0.6])
def test_laplace_profiles_are_the_definition(noise, scale, epsilon):
    m = sdp.noisy_count(0, scale, noise=noise)
    if noise == "laplace":
        truth = laplace_delta(scale, epsilon)
    else:
        truth = discrete_delta(lambda k: mp.e ** (-abs(mp.mpf(k)) / scale), epsilon)
    assert _inside(sdp.privacy_profile_enclosure(m, [2, 3], epsilon), truth, 1e-9)


@pytest.mark.parametrize("sigma", [0.8, 2.5])
@pytest.mark.parametrize("epsilon", [0.0, 0.7, 2.0])
def test_discrete_gaussian_profile_is_the_definition(sigma, epsilon):
    m = sdp.noisy_count(0, sigma, noise="discrete_gaussian")
    truth = discrete_delta(lambda k: mp.e ** (-(mp.mpf(k) ** 2) / (2 * mp.mpf(sigma) ** 2)), epsilon, K=60)
    assert _inside(sdp.privacy_profile_enclosure(m, [2, 3], epsilon), truth, 1e-9)


def test_the_profile_is_the_same_for_every_database_and_relation():
    m = sdp.noisy_count(0, 1.3, noise="laplace")
    rows = sdp.privacy_profile(m, [[5, 0], [0, 5], [2, 3]], 0.2)
    assert np.all(rows == rows[0])
    assert sdp.dp_delta(m, 5, 0.2) == rows[0]
    assert sdp.privacy_profile(m, [2, 3], 0.2, neighbours="add-remove") == rows[0]


@pytest.mark.parametrize(
    "noise,scale", [("gaussian", 1.5), ("laplace", 1.0), ("discrete_gaussian", 1.2), ("discrete_laplace", 0.8)]
)
def test_a_pair_loss_brackets_the_closed_form(noise, scale):
    m = sdp.noisy_count(0, scale, noise=noise)
    pld = sdp.privacy_loss_distribution(m, [3, 2], [2, 3])
    e = np.array([0.0, 0.5, 1.0])
    truth = np.exp(sdp.privacy_profile_enclosure(m, [3, 2], e).upper)
    lo, hi = np.exp(pld.delta_enclosure(e).lower), pld.delta(e)
    assert np.all(lo <= truth * (1 + 1e-12))
    assert np.all(truth <= hi * (1 + 1e-12))
    assert np.all(hi <= truth * 1.02 + 1e-10)  # (at eps = 1/b the Laplace's truth is 0: its atom's rounding)
    # a pair that leaves the count alone has no loss
    same = sdp.privacy_loss_distribution(m, [3, 2, 1], [3, 1, 2])
    assert same.delta(0.0) == 0.0


@pytest.mark.parametrize("k,sigma", [(4, 2.0), (10, 3.0)])
def test_repeated_gaussian_is_the_gaussian_of_the_composed_sigma(k, sigma):
    # k runs of N(0, sigma^2) at sensitivity 1 are the Gaussian mechanism with sigma / sqrt(k)
    m = sdp.repeat(sdp.noisy_count(0, sigma), k)
    for epsilon in [0.5, 1.5]:
        truth = float(gaussian_delta(mp.mpf(sigma) / mp.sqrt(k), epsilon))
        ours = sdp.privacy_profile(m, [3, 2], epsilon)
        assert truth <= ours * (1 + 1e-12)
        assert ours <= truth * 1.02


def test_gaussian_epsilon_agrees_with_autodp():
    from autodp.mechanism_zoo import ExactGaussianMechanism

    for sigma in [1.0, 3.0]:
        ours = sdp.dp_epsilon(sdp.noisy_count(0, sigma), 2, 1e-5)
        theirs = ExactGaussianMechanism(sigma=sigma).get_approxDP(1e-5)
        assert ours == pytest.approx(theirs, rel=2e-3)


@pytest.mark.parametrize("q", [0.05, 0.3])
def test_poisson_subsampled_gaussian_against_dp_accounting(q):
    sigma = 1.0
    ours = sdp.subsample(sdp.noisy_count(0, sigma), q)
    pess = dpl.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-4)
    opt = dpl.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=1e-4, pessimistic_estimate=False
    )
    for epsilon in [0.1, 0.5, 1.0]:
        enc = sdp.privacy_profile_enclosure(ours, [3, 2], epsilon)
        lo, hi = math.exp(enc.lower), math.exp(enc.upper)
        # both are bounds on one number: the intervals meet, and ours is as tight to a few percent
        assert lo <= pess.get_delta_for_epsilon(epsilon) * (1 + 1e-9)
        assert opt.get_delta_for_epsilon(epsilon) <= hi * (1 + 1e-9)
        assert hi <= pess.get_delta_for_epsilon(epsilon) * 1.03
        assert lo < hi


def test_a_sampling_histogram_then_a_noisy_count_against_dp_accounting():
    x, x2 = np.array([6, 4]), np.array([5, 5])
    S, G = sdp.SamplingHistogram(T=4), sdp.noisy_count(0, 2.0)
    ours = sdp.privacy_loss_distribution(sdp.joint(S, G), x, x2)
    # dp_accounting: the sampling histogram's exact pair laws (from our Fraction reference), then
    # its Gaussian, composed
    P = {k: float(v) for k, v in pmf_without_replacement([6, 4], 4).items()}
    Q = {k: float(v) for k, v in pmf_without_replacement([5, 5], 4).items()}
    for pessimistic in (True, False):
        gauss = dpl.from_gaussian_mechanism(
            2.0, value_discretization_interval=1e-4, pessimistic_estimate=pessimistic, use_connect_dots=False
        )
        theirs = np.zeros(3)
        for lower, upper in ((Q, P), (P, Q)):  # both directions: the profile's maximum
            pair = dpl.from_two_probability_mass_functions(
                {str(k): math.log(v) for k, v in lower.items()},
                {str(k): math.log(v) for k, v in upper.items()},
                pessimistic_estimate=pessimistic,
                value_discretization_interval=1e-4,
            )
            theirs = np.maximum(theirs, pair.compose(gauss).get_delta_for_epsilon([0.5, 1.0, 2.0]))
        for epsilon, t in zip([0.5, 1.0, 2.0], theirs):
            if pessimistic:
                assert math.exp(ours.delta_enclosure(epsilon).lower) <= t * (1 + 1e-9)
                assert ours.delta(epsilon) <= t * 1.03
            else:
                assert t <= ours.delta(epsilon) * (1 + 1e-9)


def test_poisson_subsample_of_a_finite_mechanism_is_its_exact_mixture():
    S = sdp.SamplingHistogram(T=1)
    m = sdp.subsample(S, 0.5)
    h = (3, 2)

    def law(x):
        out = {}
        for y0 in range(x[0] + 1):
            for y1 in range(x[1] + 1):
                w = Fraction(math.comb(x[0], y0) * math.comb(x[1], y1), 2 ** sum(x))
                if y0 + y1 == 0:
                    out[None] = out.get(None, 0) + w
                    continue
                for o, p in pmf_without_replacement([y0, y1], 1).items():
                    out[o] = out.get(o, 0) + w * p
        return out

    df = m.output_pmf(list(h))
    got = {(None if o is None else tuple(o)): p for o, p in zip(df["output"], df["probability"])}
    want = law(h)
    assert set(got) == set(want)
    for o, p in want.items():
        assert got[o] == pytest.approx(float(p), rel=1e-12)
    nbs = [(2, 3), (4, 1)]
    truth = max(max(hockey(law(h), law(x), 0.2), hockey(law(x), law(h), 0.2)) for x in nbs)
    enc = sdp.privacy_profile_enclosure(m, list(h), 0.2)
    assert _inside(enc, truth, 1e-9)
    # subsampling amplifies: below the mechanism on every record
    assert math.exp(enc.upper) < sdp.privacy_profile(S, list(h), 0.2)


def test_a_sample_of_a_sample_without_replacement_is_a_sample():
    # drawing ceil(n/2) of the records, then one of those, draws one record uniformly
    m = sdp.subsample(sdp.SamplingHistogram(T=1), 0.5, method="without-replacement")
    one = sdp.SamplingHistogram(T=1)
    for h in ([3, 4], [5, 0], [1, 6]):
        np.testing.assert_allclose(
            sdp.privacy_profile(m, h, [0.0, 0.5]), sdp.privacy_profile(one, h, [0.0, 0.5]), rtol=1e-9, atol=1e-300
        )


def test_subsampled_without_replacement_noisy_count_is_the_couplings_bound():
    m = sdp.subsample(sdp.noisy_count(0, 1.0), 0.25, method="without-replacement")
    n = 8  # T = 2, gamma = 1/4
    for eps_p in [0.1, 0.5]:
        eps = math.log1p(math.expm1(eps_p) / 0.25)
        bound = 0.25 * float(gaussian_delta(1.0, eps))
        ours = sdp.privacy_profile(m, [5, 3], eps_p)
        assert bound <= ours * (1 + 1e-12)
        assert ours == pytest.approx(bound, rel=1e-9)
    assert n == 8
    with pytest.raises(ValueError, match="method='poisson'"):
        sdp.privacy_profile(sdp.joint(m, sdp.noisy_count(0, 1.0)), [5, 3], 0.1)


def test_draws_follow_the_discrete_laplace_law():
    m = sdp.noisy_count(0, 1.0, noise="discrete_laplace")
    draws = np.asarray(m.sample_histogram([3, 1], rng=7, size=40_000)) - 3
    q = math.exp(-1.0)
    for k in [0, 1, -2]:
        p = (1 - q) / (1 + q) * q ** abs(k)
        assert abs(np.mean(draws == k) - p) < 5 * math.sqrt(p * (1 - p) / draws.size)


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="noise must be one of"):
        sdp.noisy_count(0, 1.0, noise="cauchy")
    with pytest.raises(ValueError, match="scale"):
        sdp.noisy_count(0, 0.0)
    with pytest.raises(ValueError, match="more than 2 counts"):
        sdp.privacy_profile(sdp.noisy_count(2, 1.0), [3, 2], 0.1)
    with pytest.raises(ValueError, match="rate"):
        sdp.subsample(sdp.noisy_count(0, 1.0), 0.0)
    with pytest.raises(ValueError, match="method must be one of"):
        sdp.subsample(sdp.SamplingHistogram(T=1), 0.5, method="bernoulli")
    with pytest.raises(TypeError, match="continuous"):
        sdp.noisy_count(0, 1.0).output_pmf([3, 2])
    with pytest.raises(TypeError, match="continuous"):  # a composition listing its product law asks each run
        sdp.joint(sdp.SamplingHistogram(eta=0.5), sdp.noisy_count(0, 1.0)).output_pmf([3, 2])
