"""The two enclosures a first profile needs are computed by the standard library's decimal
module (no Arb import): checked against mpmath at 80 digits, an independent code."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
from hypothesis import given, settings, strategies as st

from smoothdp_nb.core.numerics.enclosures import exp_double, log_fraction_enclosure

mp.mp.dps = 80


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-650.0, max_value=650.0, allow_nan=False))
def test_exp_double_is_within_2_to_the_minus_104_of_the_exponential(x):
    hi, lo = exp_double(x)
    want = mp.exp(mp.mpf(x))
    assert abs(mp.mpf(hi) + mp.mpf(lo) - want) <= mp.mpf(2) ** -104 * want
    # the leading float is e^x rounded to nearest: within half an ulp (plus the 1e-39 of the 40 digits)
    assert abs(mp.mpf(hi) - want) <= (mp.mpf(2) ** -53 + mp.mpf("1e-39")) * want


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=10**40), st.integers(min_value=1, max_value=10**40))
def test_log_fraction_enclosure_holds_the_logarithm_within_a_few_ulps(p, r):
    lo, hi = log_fraction_enclosure(Fraction(p, r))
    want = mp.log(mp.mpf(p) / mp.mpf(r))
    assert mp.mpf(lo) <= want <= mp.mpf(hi)
    scale = max(abs(float(want)), 2.0**-1022)
    assert hi - lo <= 4 * math.ulp(scale) + 1e-48


def test_log_fraction_enclosure_of_sampling_rates_near_one():
    # the DP delta T/n of the sampling histogram at the 2020 electorate: log close to -0.002
    q = Fraction(158_211_446, 158_528_503)
    lo, hi = log_fraction_enclosure(q)
    want = mp.log(mp.mpf(q.numerator) / q.denominator)
    assert mp.mpf(lo) <= want <= mp.mpf(hi)
    assert hi - lo <= 4 * math.ulp(abs(float(want)))
    assert log_fraction_enclosure(Fraction(1))[0] <= 0.0 <= log_fraction_enclosure(Fraction(1))[1]


def test_exp_double_beyond_the_floats():
    assert exp_double(math.inf) == (math.inf, 0.0)
    assert exp_double(1000.0) == (math.inf, 0.0)
    assert exp_double(1e9) == (math.inf, 0.0)  # beyond decimal's exponent range too
    assert exp_double(-1e9) == (0.0, 0.0)  # e^1000 overflows the floats: inf, as Arb's midpoint did
    assert exp_double(-math.inf) == (0.0, 0.0)
    hi, _ = exp_double(math.nan)
    assert math.isnan(hi)
