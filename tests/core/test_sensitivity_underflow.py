"""Smooth sensitivity where the decay e^(-gamma k) underflows a double: the value is the exact
positive one (checked against the definition in mpmath at 80 digits), never 0, and an upper bound
(the smallest subnormal) when the truth is below every double."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp


def brute_smooth_sensitivity(x, query, gamma, bounds, trim_m=0):
    """max_k e^(-gamma k) A(k) by the definition of A(k) (Nissim-Raskhodnikova-Smith, Section 3.1),
    every k and every window, in mpmath at 80 digits.  O(n^2): small n only."""
    with mp.workdps(80):
        xs = sorted(mp.mpf(v) for v in x)
        n = len(xs)
        p = [mp.mpf(bounds[0]), *xs, mp.mpf(bounds[1])]
        if query == "median":
            a = b = (n + 1) // 2
            w, den = 1, 1
        else:
            a, b = trim_m + 1, n - trim_m
            w = den = n - 2 * trim_m
        g = mp.mpf(gamma)  # the double gamma, exactly
        best = mp.mpf(0)
        for k in range(n + 2):
            ak = max(
                (p[min(i + w + k, n + 1)] - p[max(i, 0)] for i in range(a - k - 1, a + 1) if i + w + k >= b),
                default=mp.mpf(0),
            )
            best = max(best, mp.exp(-g * k) * ak / den)
        return best


def nearest_double(v):
    """The double nearest an mpf, subnormals included (by exact integer arithmetic)."""
    if v == 0:
        return 0.0
    with mp.workdps(80):
        m, e = mp.frexp(v)
        bits = min(53, int(e) + 1074)
        q = int(mp.nint(mp.ldexp(m, bits)))
        return math.ldexp(q, int(e) - bits)


def test_equal_records_near_the_largest_double_give_the_exact_positive_value():
    got = sdp.smooth_sensitivity(np.full(16401, 5e305), "median", 0.1, bounds=(0, 1e306))
    # all records equal: A(k) = 0 until the window reaches a bound at k = (n-1)/2 = 8200
    with mp.workdps(60):
        exact = mp.mpf(5e305) * mp.exp(-mp.mpf(0.1) * 8200)
    assert float(exact) == pytest.approx(3.78e-51, rel=1e-3)
    assert got == nearest_double(exact)


@pytest.mark.parametrize(
    ("x", "query", "gamma", "bounds", "trim_m"),
    [
        (np.full(401, 5e305), "median", 4.0, (0.0, 1e306), 0),  # 5e305 e^-800: 1.6e-42
        (np.full(301, 1.0), "median", 5.0, (0.0, 2.0), 0),  # e^-750: subnormal range
        (np.full(301, 1.0), "median", 4.9, (0.0, 2.0), 0),  # e^-735: subnormal with few bits
        (np.linspace(1e300, 2e300, 201), "median", 8.0, (0.0, 1e301), 0),
        (np.full(151, 3e200), "mean", 10.0, (0.0, 1e201), 0),
        (np.full(151, 3e200), "trimmed_mean", 10.0, (0.0, 1e201), 20),
    ],
)
def test_underflowing_decay_matches_mpmath_brute_force(x, query, gamma, bounds, trim_m):
    kw = {"trim": trim_m} if query == "trimmed_mean" else {}
    got = sdp.smooth_sensitivity(x, query, gamma, bounds=bounds, **kw)
    exact = brute_smooth_sensitivity(x, query, gamma, bounds, trim_m)
    assert got > 0.0
    # one rounding of the nearest double (the subnormal range has fewer bits: compare absolutely there)
    assert abs(got - float(exact)) <= max(2.0 * math.ulp(float(exact)), abs(float(exact)) * 2.0**-50)


def test_below_the_smallest_double_is_an_upper_bound_not_zero():
    got = sdp.smooth_sensitivity(np.full(3001, 1.0), "median", 5.0, bounds=(0.0, 2.0))  # e^-7500
    assert got == math.ulp(0.0) and brute_smooth_sensitivity([1.0] * 11, "median", 5.0, (0.0, 2.0)) > 0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=25),
    st.floats(20.0, 200.0),
    st.sampled_from([1.0, 1e-100, 1e300]),
)
def test_large_gamma_matches_brute_force(frac, gamma, scale):
    x = [f * scale for f in frac]
    got = sdp.smooth_sensitivity(x, "median", gamma, bounds=(0.0, scale))
    exact = brute_smooth_sensitivity(x, "median", gamma, (0.0, scale))
    if exact > 2.0**-1074:
        assert abs(got - float(exact)) <= max(2.0 * math.ulp(float(exact)), float(exact) * 2.0**-50)
    else:
        assert got <= 2.0**-1074 and (got > 0) == (exact > 0)
