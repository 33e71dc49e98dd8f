"""The log of a weighted sum of enclosed terms (a profile's expectation over a window) against
mpmath at 60 digits: the bounds hold, and they are within about one ulp of each side at
log delta = -1.3e6, where a float64 log-sum-exp loses several."""

from __future__ import annotations

import mpmath
import numpy as np
from hypothesis import given, settings, strategies as st

from smoothdp_nb.core.numerics.weighted_log_sum import log_weighted_sum_enclosure, round_sum_outward


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=400),
    st.floats(min_value=-2.0e6, max_value=-1.0),
    st.floats(min_value=0.0, max_value=800.0),
    st.integers(min_value=0, max_value=2**31),
)
def test_weighted_log_sum_holds_the_60_digit_value(K: int, level: float, spread: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lw = rng.uniform(-spread, 0.0, K) - 20.0
    mid = level + rng.uniform(-spread, spread, K)
    up, lo = np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)
    extra = np.array([level - 2.0 * spread - 150.0])  # e^-130 of the sum at most
    U, L = log_weighted_sum_enclosure(lw, 0.0, up[:, None], lo[:, None], extra)
    with mpmath.workdps(60):
        terms_hi = [mpmath.exp(mpmath.mpf(a) + mpmath.mpf(b)) for a, b in zip(lw, up)]
        terms_lo = [mpmath.exp(mpmath.mpf(a) + mpmath.mpf(b)) for a, b in zip(lw, lo)]
        hi = mpmath.log(mpmath.fsum(terms_hi) + mpmath.exp(mpmath.mpf(extra[0])))
        lo_ = mpmath.log(mpmath.fsum(terms_lo))
        assert mpmath.mpf(L[0]) <= lo_ and hi <= mpmath.mpf(U[0])
    # sharp: the terms' own width (2 ulps) plus about one ulp on each side
    assert U[0] - L[0] <= 5.0 * np.spacing(abs(U[0])) + 1e-10


def test_round_sum_outward_is_the_next_float() -> None:
    a, b = np.array([1.0, -1.3e6, 5.0]), np.array([2.0**-60, -1e-12, 0.0])
    up, down = round_sum_outward(a, b, 1.0), round_sum_outward(a, b, -1.0)
    assert up[0] == np.nextafter(1.0, 2.0) and down[0] == 1.0
    assert down[1] == np.nextafter(-1.3e6, -np.inf) and up[1] == -1.3e6
    assert up[2] == down[2] == 5.0


def test_zero_terms_and_empty_columns() -> None:
    lw = np.array([-1.0, -2.0])
    up = np.array([[-5.0, -np.inf], [-np.inf, -np.inf]])
    U, L = log_weighted_sum_enclosure(lw, 1e-15, up, up)
    assert L[0] <= -6.0 <= U[0] and U[0] - L[0] < 1e-12
    assert L[1] == -np.inf
