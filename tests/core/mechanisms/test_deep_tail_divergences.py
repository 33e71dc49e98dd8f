"""The sampling histogram's divergences in the deep tails of 10^7 to 1.58e8 records: their
enclosures hold the 80-digit sum and are one or two ulps wide, and the linear form of the
divergence factor keeps its relative error bound (mpmath, exact rationals)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from smoothdp_nb import SamplingHistogram
from smoothdp_nb.core.numerics.lpmf import DD_FROM
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism import LINEAR_FACTOR_REL


def _divergence_80(u: int, v: int, T: int, eps: float) -> mpmath.mpf:
    """log d(x, x') to 80 digits: the tail of the hypergeometric law of o_a (u + 1 a-records,
    v b-records, T draws) beyond the threshold, each term P(k) (1 - e^eps Q(k)/P(k)) with the
    exact ratio Q/P = (v + 1)(u + 1 - k) / ((k + v + 1 - T)(u + 1)); summed until the terms
    fall below 1e-40 of the sum (they fall geometrically past the threshold in these tails)."""
    g, s = u + 1, v + 1 - T
    with mpmath.workdps(80):
        c = mpmath.exp(mpmath.mpf(eps))
        lo = max(0, T - v)

        def f(k: int) -> mpmath.mpf:
            return 1 - c * (v + 1) * (g - k) / ((k + s) * mpmath.mpf(g))

        # the first count with a positive factor (f is increasing in k)
        kstar = g * (c * (v + 1) - s) / (g + c * (v + 1))
        k = max(lo, int(mpmath.floor(kstar)) - 1)
        while f(k) <= 0:
            k += 1

        def lc(a: int, b: int) -> mpmath.mpf:
            return mpmath.loggamma(a + 1) - mpmath.loggamma(b + 1) - mpmath.loggamma(a - b + 1)

        logp = lc(g, k) + lc(v, T - k) - lc(g + v, T)
        p = mpmath.mpf(1)
        total = mpmath.mpf(0)
        hi = min(g, T)
        while True:
            term = p * f(k)
            total += term
            if k >= hi or (term < total * mpmath.mpf("1e-40") and p < mpmath.mpf("1e-40")):
                break
            p *= mpmath.mpf((g - k) * (T - k)) / ((k + 1) * (k + s))
            k += 1
        return logp + mpmath.log(total)


CASES = [
    # (n, eta, fraction of a-records, eps): deep tails of the electorate's profiles
    (10_000_000, 0.9, 0.3, 1.0),
    (158_000_000, 0.9, 0.3, 1.0),
    (158_000_000, 0.9, 0.6, 1.0),
    (158_000_000, 0.998, 0.3, 0.5),
    (158_000_000, 0.998, 0.6, 7.0),
    (100_000_000, 0.998, 0.3, 2.0),
]


@pytest.mark.parametrize(("n", "eta", "frac", "eps"), CASES)
def test_deep_tail_divergence_holds_the_80_digit_value_within_two_ulps(
    n: int, eta: float, frac: float, eps: float
) -> None:
    m = SamplingHistogram(eta=eta)
    T = m.sample_size(n)
    u0 = int(frac * n)
    us = np.array([u0, u0 + 1, u0 + 977], dtype=np.int64)
    vs = n - 1 - us
    enc = m.log_pair_divergence_enclosure(us, vs, n, T, np.array([eps]))
    lo, hi = np.asarray(enc.lower)[:, 0], np.asarray(enc.upper)[:, 0]
    for i in range(us.size):
        exact = _divergence_80(int(us[i]), int(vs[i]), T, eps)
        assert mpmath.mpf(lo[i]) <= exact <= mpmath.mpf(hi[i])
        if abs(hi[i]) > DD_FROM:  # the anchor in double word: one or two ulps
            assert hi[i] - lo[i] <= 2.0 * np.spacing(abs(hi[i])) + 1e-12
            # what it was before the double-word anchors and the linear factor: ~3e-14 relative
            assert hi[i] - lo[i] < 1e-15 * abs(hi[i])
        else:  # float64 anchor (its running bound), the linear factor: ~2e-14 relative at most
            assert hi[i] - lo[i] < 3e-14 * abs(hi[i])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=10, max_value=200_000_000),
    st.floats(min_value=0.01, max_value=0.99),
    st.floats(min_value=0.05, max_value=1.0),
    st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0, 7.0, 30.0]),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_linear_factor_within_its_bounds(n: int, frac: float, eta: float, eps: float, z: float) -> None:
    m = SamplingHistogram(eta=eta)
    T = m.sample_size(n)
    u = min(n - 1, max(0, int(frac * n)))
    v = n - 1 - u
    g, s = u + 1, v + 1 - T
    lo_k, hi_k = max(0, T - v), min(g, T)
    first = m.binary_threshold(np.array([u]), np.array([v]), T, np.array([eps]))
    first = np.maximum(first, lo_k)
    got = m._linear_factor(np.array([u]), np.array([v]), T, np.array([eps]), first)
    assert got is not None
    factor, f_err = got
    if first[0] > hi_k:
        return
    ks = np.unique(np.clip(np.array([first[0], first[0] + 1, first[0] + int(z * (hi_k - first[0])), hi_k]), lo_k, hi_k))
    vals = factor(np.zeros((1, 1), dtype=np.int64), ks[None, :].astype(float))[0]
    with mpmath.workdps(60):
        c = mpmath.exp(mpmath.mpf(eps))
        for k, val in zip(ks, vals):
            exact = 1 - c * (v + 1) * (g - int(k)) / (mpmath.mpf(int(k) + s) * g)
            assert abs(mpmath.mpf(val) - exact) <= LINEAR_FACTOR_REL * abs(exact) + mpmath.mpf(f_err[0])
    if eps <= 7.0:  # (at eps = 30 the slope A of the factor is e^30)
        assert f_err[0] <= 1e-12


def test_linear_factor_is_exact_in_rationals_at_eps_zero() -> None:
    """eps = 0: k* is rational (T g / (g + v + 1)); the factor's zero is where the exact one is."""
    m = SamplingHistogram(T=6)
    u, v = 3, 8  # g = 4, k* = 6 * 4 / 13
    got = m._linear_factor(np.array([u]), np.array([v]), 6, np.array([0.0]), np.array([0]))
    assert got is not None
    factor, f_err = got
    ks = np.arange(0, 5, dtype=float)
    vals = factor(np.zeros((1, 1), dtype=np.int64), ks[None, :])[0]
    for k, val in zip(ks, vals):
        exact = 1 - Fraction(v + 1) * (u + 1 - int(k)) / ((int(k) + v + 1 - 6) * (u + 1))
        assert abs(Fraction(float(val)) - exact) <= Fraction(LINEAR_FACTOR_REL) * abs(exact) + Fraction(float(f_err[0]))
    assert math.isfinite(float(f_err[0]))
