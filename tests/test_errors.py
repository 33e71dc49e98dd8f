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


@pytest.mark.parametrize(
    "hist,msg",
    [
        ([-1, 5], "negative"),
        ([1.5, 2], "integer"),
        ([], "empty"),
        ([0, 0], "at least one record"),
        ([5], "at least 2 categories"),
        ([[[1, 2]]], "shape"),
    ],
)
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


# ---------------------------------------------------------------- the one validator vocabulary (core/validation.py)

from smoothdp_nb.core.numerics import validation as V


@pytest.mark.parametrize(
    "text", ["0.5_0", "\u0660.\u0665", " 0.5 ", "0.5 ", "+0.5", "-0.5", "0x1", "1/2", "", ".", "e3", "0.5\n", "１"]
)
def test_decimal_text_refuses_what_float_accepts(text):
    with pytest.raises(ValueError, match="plain decimal text"):
        V.as_decimal_text(text, "eta")


@pytest.mark.parametrize(
    "text,value", [("0.998", "499/500"), ("1", "1"), (".5", "1/2"), ("1e-3", "1/1000"), ("2.5E+1", "25")]
)
def test_decimal_text_exact(text, value):
    from fractions import Fraction

    assert V.as_decimal_text(text, "eta") == Fraction(value)


@pytest.mark.parametrize(
    "value,error",
    [
        ("0.5", TypeError),
        (True, TypeError),
        (np.bool_(True), TypeError),
        (None, TypeError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        ([0.5], TypeError),
    ],
)
def test_numbers_are_numbers(value, error):
    with pytest.raises(error, match="x must be"):
        V.as_real(value, "x", lo=0.0)


def test_epsilon_refuses_strings_and_bools_anywhere():
    for bad in ("0.5", [0.5, "1"], [True], np.array(["1"]), [[0.5], [1]]):
        with pytest.raises((TypeError, ValueError), match="epsilon"):
            V.as_epsilon(bad)
    assert V.as_epsilon(np.float32(1.5))[0].tolist() == [1.5]
    assert V.as_epsilon([0, math.inf])[0].tolist() == [0.0, math.inf]


def test_int_accepts_integral_floats_only_below_2_53():
    assert V.as_int(1e3, "n") == 1000 and V.as_int(np.int64(7), "n") == 7
    for bad, error in ((2.5, ValueError), (1e300, ValueError), ("3", TypeError), (True, TypeError)):
        with pytest.raises(error, match="n must be"):
            V.as_int(bad, "n", minimum=1)


def test_one_rng_normaliser():
    g = np.random.default_rng(1)
    assert V.as_rng(g) is g
    assert V.as_rng(5).random() == np.random.default_rng(5).random()
    assert V.as_seed_sequence(5).entropy == 5 and V.as_seed_sequence(None, allow_none=True) is None
    assert V.as_seed_sequence(g) is g.bit_generator.seed_seq
    with pytest.raises(ValueError, match="rng must be None, an int seed >= 0"):
        V.as_rng(-1)
    for bad in (True, 1.5, "1"):
        with pytest.raises(TypeError, match="rng must be"):
            V.as_rng(bad)


def test_bounds_need_a_finite_width():
    assert V.as_bounds([0, 1]) == (0.0, 1.0)
    with pytest.raises(ValueError, match=r"high - low < 1\.798e"):
        V.as_bounds([-1.7e308, 1.7e308])
    with pytest.raises(TypeError, match="bounds"):
        V.as_bounds("01")


@pytest.mark.parametrize("log", ["no", "0.5", 1, None])
@pytest.mark.parametrize(
    "call",
    [
        lambda m, log: sdp.privacy_profile(m, [3, 2], 0.5, log=log),
        lambda m, log: sdp.dp_delta(m, 5, 0.5, log=log),
        lambda m, log: sdp.adjusted_utility(m, [3, 2], 0.6, log=log),
    ],
    ids=["privacy_profile", "dp_delta", "adjusted_utility"],
)
def test_log_must_be_a_bool(call, log):
    # a truthy string or number must not ask for the logarithm
    with pytest.raises(TypeError, match="log must be True or False"):
        call(sdp.SamplingHistogram(T=2), log)
    assert call(sdp.SamplingHistogram(T=2), np.True_) == call(sdp.SamplingHistogram(T=2), True)
