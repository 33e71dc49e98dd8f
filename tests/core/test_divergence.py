"""The windowed tail sums (divergence.log_monotone_tail_sum) and the blocked
Algorithm 1 recursion, against independent references (mpmath, plain log-space
recursions)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics import divergence as D
from smoothdp_nb.core.smoothed.engines import binary as S
from tests import exact

mp.mp.dps = 50


def _binomial_counts(T: int, p: np.ndarray, sd: np.ndarray | None = None) -> D.LogConcaveCounts:
    from smoothdp_nb.core.numerics import lpmf

    q = 1.0 - p
    return D.LogConcaveCounts(
        logpmf=lambda rows, k: lpmf.log_binom_pmf(k, float(T), p[rows], q[rows]),
        ratio=lambda rows, k: (T - k) / (k + 1.0) * (p[rows] / q[rows]),
        lo=np.zeros(p.size, dtype=np.int64),
        hi=np.full(p.size, T, dtype=np.int64),
        mode=np.floor((T + 1) * p).astype(np.int64),
        sd=np.sqrt(T * p * q) if sd is None else sd,
    )


def _mp_binomial_tail(T, p, start, stop, f):
    p = mp.mpf(p)
    total = mp.mpf(0)
    for k in range(start, stop + 1):
        total += mp.binomial(T, k) * p**k * (1 - p) ** (T - k) * f(k)
    return mp.log(total) if total > 0 else -mp.inf


@pytest.mark.parametrize("wrong_sd", [False, True])
def test_tail_sums_against_mpmath_including_window_growth(wrong_sd):
    """Ranges left of, across and right of the mode, far tails (1e-200 and
    below) and a factor that vanishes near the start.  With ``wrong_sd`` the
    first windows are far too short, so the proven bound must send every row
    through the widening path -- and the results must not change."""
    T = 400
    p = np.array([0.3, 0.3, 0.3, 0.5, 0.05, 0.9, 0.3])
    start = np.array([0, 150, 330, 190, 0, 0, 121])
    stop = np.array([400, 400, 400, 210, 3, 300, 121])
    # f(k) = 1 - 0.9^(k - start + 1): 0.1 at the start, -> 1 further out
    lam = 0.9

    def factor(rows, k):
        return 1.0 - lam ** (k - start[rows] + 1.0)

    sd = np.zeros(p.size) if wrong_sd else None
    got = D.log_monotone_tail_sum(_binomial_counts(T, p, sd), start, stop, factor)
    for i in range(p.size):
        want = _mp_binomial_tail(
            T, p[i], int(start[i]), int(stop[i]), lambda k: 1 - mp.mpf(lam) ** (k - int(start[i]) + 1)
        )
        assert got[i] == pytest.approx(float(want), rel=1e-12, abs=1e-12), i
    assert got[2] < math.log(1e-40)  # a far tail: exact in log space


def test_empty_and_zero_tail_sums():
    T = 50
    p = np.array([0.4, 0.4])
    got = D.log_monotone_tail_sum(
        _binomial_counts(T, p), np.array([30, 10]), np.array([20, 40]), lambda r, k: np.zeros(k.shape)
    )
    assert np.all(got == -np.inf)


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 200])
@pytest.mark.parametrize("block", [1, 7, 64])
@pytest.mark.parametrize("p1,p2", [(0.3, 0.6), (0.0, 0.7), (0.2, 1.0), (1.0, 0.0)])
def test_blocked_recursion_against_plain_log_space(n, block, p1, p2):
    """Every composition's expectation from the blocked float path equals a
    plain log-space recursion (one averaging step per record): full and
    partial blocks, degenerate vertices, several epsilon columns (two identical)."""
    m = sdp.SamplingHistogram(eta=0.75)
    h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    ld = sdp.privacy_profile(m, h, [0.2, 1.0, 1.0, 4.0], log=True)
    want = exact.composition_expectations_log(ld, p1, p2)
    got = S.exact_binary(ld, p1, p2, None, block=block)
    fin = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), fin)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12, atol=1e-10)


def test_binary_profile_table_matches_pairwise_evaluation():
    """The m = 2 fast path (pairs indexed by u alone, dense or sorted) gives the
    same values as the general pair evaluation, with and without replacement."""
    for replace in (False, True):
        m = sdp.SamplingHistogram(eta=0.8, replace=replace)
        n = 40
        h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
        got = sdp.privacy_profile(m, h, [0.5, 2.0], log=True)
        T = m.sample_size(n)
        for k in (0, 1, 17, 39, 40):
            hist = (k, n - k)
            for j, e in enumerate([0.5, 2.0]):
                want = exact.profile(hist, T, e, replace=replace)
                if want == 0:
                    # a proven upper bound: where some log-likelihood ratio lies within the
                    # float error of epsilon (with replacement, k = 17 at epsilon = 2), an exact
                    # 0 cannot be told from a tiny positive value, so the bound is tiny, not -inf
                    assert got[k, j] == -np.inf or got[k, j] < math.log(1e-300)
                else:
                    assert got[k, j] == pytest.approx(float(mp.log(want)), abs=1e-11)
        # a few histograms of a large n take the sorted-key route instead of
        # the dense index; same numbers as the full table
        n = 400
        h = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
        full = sdp.privacy_profile(m, h, [0.5, 2.0], log=True)
        rows = [0, 1, 123, 399]
        np.testing.assert_array_equal(sdp.privacy_profile(m, h[rows], [0.5, 2.0], log=True), full[rows])
