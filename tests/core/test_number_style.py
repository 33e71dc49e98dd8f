"""Every number a person reads is written in one style: privacy numbers as proven upper bounds
("δ ≤ 7.97·10⁻¹", the mantissa rounded up), parameters as the user wrote them (shape 10, never
9.999999999999998), released values to the precision of their lattice."""

import math
import re
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.formatting import (
    format_bound,
    format_param,
    format_range,
    format_sci,
    format_upper,
    format_value,
    lattice_text,
    parse_number,
    superscript,
)

#: a float printed with 16-17 significant digits: what no person writes
LONG_FLOAT = re.compile(r"\d\.\d{12,}|\d{13,}\.\d")


def test_superscripts_and_powers():
    assert superscript(-32) == "⁻³²" and superscript(7) == "⁷"
    assert format_sci(-31.9) == "1.26·10⁻³²"
    assert format_sci(math.log10(0.796378719), up=True) == "7.97·10⁻¹"
    assert format_sci(-math.inf) == "0"
    assert lattice_text(2.0**-20) == "2⁻²⁰"


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1.0, exclude_min=True))
def test_upper_bounds_are_upper_bounds(v):
    """The text of a bound read back exactly is >= the bound: checked in exact decimal arithmetic."""
    from_value = format_upper(v)
    from_log = format_bound(math.log10(v))
    for text in (from_value, from_log):
        number = text.split("≤ ")[1]
        mant, _, power = number.partition("·10")
        exponent = int(power.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))) if power else 0
        assert Decimal(mant).scaleb(exponent) >= Decimal(v), (text, v)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-5000.0, max_value=-0.01))
def test_upper_bounds_far_below_float64(log10_value):
    """From the logarithm: the printed mantissa and exponent bound 10**log10_value (mpmath, 60 digits)."""
    text = format_sci(log10_value, up=True)
    mant, _, power = text.partition("·10")
    exponent = int(power.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))) if power else 0
    with mpmath.workdps(60):
        assert mpmath.mpf(mant) * mpmath.mpf(10) ** exponent >= mpmath.mpf(10) ** mpmath.mpf(log10_value)


def test_a_probability_bound_never_reads_above_one():
    assert format_upper(1.0) == "δ ≤ 1" and format_bound(0.0) == "δ ≤ 1"
    assert format_upper(0.5) == "δ ≤ 5.00·10⁻¹"  # an exact float: no widening
    assert format_upper(0.0) == "δ = 0" and format_bound(-math.inf) == "δ = 0"


@pytest.mark.parametrize(
    ("value", "text"),
    [(9.999999999999998, "10"), (0.998, "0.998"), (0.1 + 0.2, "0.3"), (1e-6, "10⁻⁶"), (2.5e-7, "2.5·10⁻⁷"), (3, "3")],
)
def test_parameters_as_written(value, text):
    assert format_param(value) == text
    assert parse_number(text) == pytest.approx(value, rel=1e-12)


@given(st.integers(-60, 10), st.integers(-(2**40), 2**40))
def test_released_values_carry_their_lattice(e, k):
    """Rounded to the lattice's decimals, two neighbouring lattice points never print alike, and the
    text is within half a step of the value (Fraction arithmetic)."""
    step = 2.0**e
    value = k * step
    a, b = format_value(value, step), format_value(value + step, step)
    assert a != b
    assert abs(Fraction(a) - Fraction(value)) <= Fraction(step) / 2


def test_ranges_are_written_once_when_equal():
    assert format_range(16, 16) == "16" and format_range(16, 400) == "16–400"


def test_release_repr_has_no_sixteen_digit_floats():
    x = np.linspace(0.0, 1.0, 101)
    rel = sdp.release(x, "median", 1.0, bounds=(0, 1), rng=2, noise="student_t", shape=10 - 2e-15, gamma=0.05)
    assert rel.shape != 10  # the parameter as computed, with float noise
    text = repr(rel)
    assert not LONG_FLOAT.search(text), text
    assert "shape=10," in text and f"value={format_value(rel.value, rel.lattice)}," in text
    assert abs(float(format_value(rel.value, rel.lattice)) - rel.value) <= rel.lattice / 2


def test_smoothed_text_writes_bounds_as_a_person_does():
    res = sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.998), 6, [[0.5, 0.5], [0.2, 0.8]], [0.5, 1.0])
    text = str(res)
    assert not re.search(r"\d[eE][-+]\d", text), text  # no e-notation
    assert "ε = 0.5: δ ≤ " in text and "DP δ (worst case) ≤ " in text
    for bound, exact in zip(re.findall(r"(?<!DP )δ ≤ ([0-9.]+(?:·10[⁻⁰-⁹¹²³]+)?)", text), res.delta):
        assert parse_number(bound) >= exact
