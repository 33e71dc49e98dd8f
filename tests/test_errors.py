"""Bad input gets a clear error that names the parameter."""

import math

import numpy as np
import pytest

import smoothdp_nb as sdp


@pytest.mark.parametrize("eta", [0, -0.1, 1.5, float("nan"), "abc"])
def test_bad_eta(eta):
    with pytest.raises((ValueError, TypeError), match="eta"):
        sdp.SamplingHistogram(eta=eta)


def test_eta_or_T_exactly_one():
    with pytest.raises(ValueError, match="exactly one"):
        sdp.SamplingHistogram()
    with pytest.raises(ValueError, match="exactly one"):
        sdp.SamplingHistogram(eta=0.5, T=3)
    with pytest.raises(ValueError, match="T must be >= 1"):
        sdp.SamplingHistogram(T=0)


def test_T_larger_than_n():
    m = sdp.SamplingHistogram(T=50)
    with pytest.raises(ValueError, match="T must be <= n"):
        sdp.privacy_profile(m, [10, 20], 1.0)


@pytest.mark.parametrize("hist,msg", [([-1, 5], "negative"), ([1.5, 2], "integer"), ([], "empty"),
                                      ([0, 0], "at least one record"), ([5], "at least 2 categories"),
                                      ([[[1, 2]]], "shape")])
def test_bad_histograms(hist, msg):
    with pytest.raises(ValueError, match=msg):
        sdp.privacy_profile(sdp.SamplingHistogram(eta=0.5), hist, 1.0)


@pytest.mark.parametrize("epsilon", [-0.1, float("nan"), [[1.0]], []])
def test_bad_eps(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        sdp.privacy_profile(sdp.SamplingHistogram(eta=0.5), [3, 4], epsilon)


@pytest.mark.parametrize("t", [0, 1, -0.2, 1.2, math.nan])
def test_bad_threshold(t):
    with pytest.raises(ValueError, match="t must be a number with 0 < t < 1"):
        sdp.adjusted_utility(sdp.SamplingHistogram(eta=0.5), [3, 4], t)


def test_noise_epsilon_must_be_positive():
    with pytest.raises(ValueError, match="noise_epsilon"):
        sdp.NoisySamplingHistogram(eta=0.5, noise_epsilon=0)


def test_wrong_mechanism_type():
    with pytest.raises(TypeError, match="mechanism"):
        sdp.privacy_profile("not a mechanism", [3, 4], 1.0)


def test_refuses_huge_noisy_computation_up_front():
    m = sdp.NoisySamplingHistogram(eta=0.9, noise_epsilon=1.0)
    with pytest.raises(sdp.ComputationTooLarge, match="too large"):
        sdp.privacy_profile(m, np.array([500, 500, 500]), 1.0)
