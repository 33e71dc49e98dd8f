"""Loader's log-pmfs against mpmath log-gamma at 60 digits."""

import math

import mpmath as mp
import numpy as np
import pytest

from smoothdp_nb.core import lpmf
from tests.exact import log_hypergeom_mp

CASES = [
    (3, 10, 5, 6),
    (6, 10, 5, 6),
    (0, 3, 9, 4),
    (998000, 1000000, 500, 998300),
    (5000, 10000, 10000, 10000),
    (81_100_000, 81_283_501, 74_223_975, 155_196_524),
    (1, 1, 0, 1),
]


@pytest.mark.parametrize("k,good,bad,draws", CASES)
def test_hypergeom_log_pmf(k, good, bad, draws):
    got = float(lpmf.log_hypergeom_pmf(k, good, bad, draws))
    want = float(log_hypergeom_mp(k, good, bad, draws))
    # absolute error of the log = relative error of the probability
    assert abs(got - want) <= 1e-12 * max(1.0, abs(want)) ** 0.5 + 1e-13


@pytest.mark.parametrize(
    "k,n,p", [(3, 10, 0.3), (0, 100, 0.001), (100, 100, 0.999), (499_999, 1_000_000, 0.5), (7, 10**9, 1e-8)]
)
def test_binom_log_pmf(k, n, p):
    mp.mp.dps = 60
    pm = mp.mpf(p)
    want = mp.log(mp.binomial(n, k)) + k * mp.log(pm) + (n - k) * mp.log(1 - pm)
    got = float(lpmf.log_binom_pmf(k, n, p))
    assert got == pytest.approx(float(want), abs=1e-12)


def test_outside_support_is_minus_inf():
    assert lpmf.log_hypergeom_pmf(5, 3, 10, 6) == -np.inf
    assert lpmf.log_binom_pmf(11, 10, 0.5) == -np.inf


def test_log_comb_matches_math_comb():
    for n, k in [(10, 3), (200, 100), (1000, 1)]:
        assert float(lpmf.log_comb(n, k)) == pytest.approx(math.log(math.comb(n, k)), rel=1e-14)
