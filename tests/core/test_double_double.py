"""Double-word arithmetic and the double-word log-pmfs against exact rationals and mpmath at
60-80 digits: every returned bound holds, and it is far below one ulp of a log-pmf of 10^6."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
from hypothesis import given, settings, strategies as st

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.double_double import DD_REL, dd_add, dd_add_fp, dd_div, dd_log, dd_mul, dd_mul_fp

finite = st.floats(min_value=1e-30, max_value=1e30, allow_nan=False, allow_infinity=False)
signs = st.sampled_from([1.0, -1.0])
low = st.floats(min_value=-1.0, max_value=1.0)


def _dd(x: float, f: float) -> tuple[float, float]:
    """A normalised double-word number near x: x plus a low word of at most half an ulp."""
    h = float(x)
    return h, f * float(np.spacing(h)) / 2.0


def _exact(h: float, l_: float) -> Fraction:
    return Fraction(h) + Fraction(l_)


def _rel(got: tuple[np.ndarray, np.ndarray], want: Fraction) -> float:
    g = _exact(float(got[0][0]), float(got[1][0]))
    return float(abs(g - want) / abs(want)) if want != 0 else float(abs(g))


@settings(max_examples=300, deadline=None)
@given(finite, low, signs, finite, low, signs)
def test_double_word_operations_within_their_bound(
    a: float, fa: float, sa: float, b: float, fb: float, sb: float
) -> None:
    xh, xl = _dd(sa * a, fa)
    yh, yl = _dd(sb * b, fb)
    x, y = _exact(xh, xl), _exact(yh, yl)
    A = [np.array([v]) for v in (xh, xl, yh, yl)]
    if x + y != 0:
        assert _rel(dd_add(*A), x + y) <= DD_REL
    if x + Fraction(yh) != 0:
        assert _rel(dd_add_fp(A[0], A[1], A[2]), x + Fraction(yh)) <= DD_REL
    assert _rel(dd_mul(*A), x * y) <= DD_REL
    assert _rel(dd_mul_fp(A[0], A[1], A[2]), x * Fraction(yh)) <= DD_REL
    assert _rel(dd_div(*A), x / y) <= DD_REL


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-250, max_value=1e250), low)
def test_log_within_its_bound(x: float, f: float) -> None:
    xh, xl = _dd(x, f)
    h, l_, err = (float(v[0]) for v in dd_log(np.array([xh]), np.array([xl])))
    with mpmath.workdps(60):
        exact = mpmath.log(mpmath.mpf(xh) + mpmath.mpf(xl))
        assert abs(mpmath.mpf(h) + mpmath.mpf(l_) - exact) <= err
    assert err <= 2.0**-84 * 600.0


def test_log_near_one_and_at_the_table_points() -> None:
    xs = np.array([1.0, 1.0 + 2.0**-52, 1.0 - 2.0**-53, 0.75, 1.5, 0.74999999, 2.0, 0.5, 1.0 + 1.0 / 256, 97.0 / 128])
    h, l_, err = dd_log(xs, np.zeros_like(xs))
    with mpmath.workdps(60):
        for i, x in enumerate(xs):
            assert abs(mpmath.mpf(h[i]) + mpmath.mpf(l_[i]) - mpmath.log(mpmath.mpf(x))) <= err[i]
    assert h[0] == 0.0 and l_[0] == 0.0


def _log_hypergeom_exact(k: int, good: int, bad: int, draws: int) -> mpmath.mpf:
    def lc(a: int, b: int) -> mpmath.mpf:
        return mpmath.loggamma(a + 1) - mpmath.loggamma(b + 1) - mpmath.loggamma(a - b + 1)

    return lc(good, k) + lc(bad, draws - k) - lc(good + bad, draws)


@st.composite
def urns(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """An urn of up to 2e8 balls and a count anywhere in its support, often in a far tail."""
    n = draw(st.integers(min_value=4, max_value=200_000_000))
    good = draw(st.integers(min_value=2, max_value=n - 2))
    draws = draw(st.integers(min_value=2, max_value=n - 2))
    bad = n - good
    lo, hi = max(1, draws - bad + 1), min(good - 1, draws - 1)
    if lo > hi:
        lo = hi = max(1, min(good - 1, draws - 1))
    z = draw(st.floats(min_value=0.0, max_value=1.0))
    k = lo + round(z ** draw(st.sampled_from([1.0, 8.0, 0.125])) * (hi - lo))
    return k, good, bad, draws


@settings(max_examples=150, deadline=None)
@given(urns())
def test_double_word_hypergeometric_encloses_the_80_digit_value(urn: tuple[int, int, int, int]) -> None:
    k, good, bad, draws = urn
    h, l_, err = (float(v) for v in lpmf.log_hypergeom_pmf_dd(float(k), float(good), float(bad), float(draws)))
    inside = 0 < k < good and 0 < draws - k < bad
    if not inside:
        assert err == np.inf
        return
    with mpmath.workdps(80):
        exact = _log_hypergeom_exact(k, good, bad, draws)
        assert abs(mpmath.mpf(h) + mpmath.mpf(l_) - exact) <= err
    # sharp: far below one ulp of the value, whatever its size
    assert err <= 5e-13


def test_double_word_hypergeometric_in_the_tails_of_the_2020_electorate() -> None:
    """The deep tails the sampling histogram's profiles are anchored in at 1.58e8 records
    (eta = 0.9 and 0.998; log-pmfs down to -2e7), where the float64 bound is 1e-8 to 1e-7."""
    n = 158_000_000
    cases = []
    for eta in (0.9, 0.998):
        T = int(np.ceil(eta * n))
        for frac in (0.3, 0.6):
            good = int(frac * n)
            mean = T * good / n
            for d in (-0.06, -0.01, -1e-4, 1e-4, 0.003, 0.01):
                k = int(mean * (1 + d))
                if 0 < k < good and 0 < T - k < n - good:
                    cases.append((k, good, n - good, T))
    k, g, b, d = (np.array(c, dtype=float) for c in zip(*cases))
    h, l_, err = lpmf.log_hypergeom_pmf_dd(k, g, b, d)
    float_err = lpmf.log_hypergeom_pmf_error(k, g, b, d)
    with mpmath.workdps(80):
        for i, c in enumerate(cases):
            exact = _log_hypergeom_exact(*c)
            assert abs(mpmath.mpf(h[i]) + mpmath.mpf(l_[i]) - exact) <= err[i]
    assert np.all(err <= 5e-13)
    assert np.max(float_err) > 1e-8  # what the float64 evaluation could prove


@settings(max_examples=100, deadline=None)
@given(urns(), st.sampled_from([0.3, 0.5, 0.9, 0.998, 1.0 / 3.0]))
def test_double_word_binomial_encloses_the_80_digit_value(urn: tuple[int, int, int, int], p: float) -> None:
    k, good, _, _ = urn
    n = good + 1
    q = 1.0 - p
    h, l_, err = (float(v) for v in lpmf.log_binom_pmf_dd(float(k), float(n), p, q))
    with mpmath.workdps(80):
        P, Q = mpmath.mpf(p), mpmath.mpf(q)
        exact = (
            mpmath.loggamma(n + 1)
            - mpmath.loggamma(k + 1)
            - mpmath.loggamma(n - k + 1)
            + k * mpmath.log(P)
            + (n - k) * mpmath.log(Q)
            - n * (P + Q - 1)
        )
        assert abs(mpmath.mpf(h) + mpmath.mpf(l_) - exact) <= err
    assert err <= 5e-13


def test_stirlerr_table_is_correctly_rounded() -> None:
    """The stirlerr values of counts up to 15 (a table) are the floats nearest the 50-digit values."""
    with mpmath.workdps(50):
        for v in range(1, 16):
            exact = mpmath.loggamma(v + 1) - (v + mpmath.mpf(0.5)) * mpmath.log(v) + v - mpmath.log(2 * mpmath.pi) / 2
            assert lpmf.stirlerr(np.array([float(v)]))[0] == float(exact)
