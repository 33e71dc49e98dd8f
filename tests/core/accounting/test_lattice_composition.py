"""Compositions whose losses lie on one lattice are counted exactly.

References are independent of the package: the binomial (randomized response) and
trinomial (a three-output mechanism) hockey sticks summed term by term in 50-digit mpmath.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms.composed import pair_loss

MP = mpmath.mp.clone()
MP.dps = 50


def _rr() -> sdp.FiniteMechanism:
    return sdp.FiniteMechanism(lambda h: {0: 0.75, 1: 0.25} if h[0] == 1 else {0: 0.25, 1: 0.75}, categories=2)


def _three() -> sdp.FiniteMechanism:
    """Ratios 3, 1, 1/3: losses log 3, 0, -log 3 (one lattice)."""
    p = {0: 0.375, 1: 0.5, 2: 0.125}
    q = {0: 0.125, 1: 0.5, 2: 0.375}
    return sdp.FiniteMechanism(lambda h: p if h[0] == 1 else q, categories=2)


def _significant(lw: np.ndarray) -> np.ndarray:
    """Terms within e^-80 of the largest (a float pre-selection by scipy's gammaln: the
    others, at most 1e7 of them, move the sum by below 1e-27 relative)."""
    return lw >= np.max(lw) - 80.0


def _rr_delta(k: int, eps: float) -> mpmath.mpf:
    """Forward hockey stick of k-fold randomized response (p = 3/4): j reports of the true
    answer have loss (2j - k) log 3."""
    from scipy.special import gammaln

    l3 = MP.log(3)
    e = MP.mpf(eps)
    j = np.arange(k + 1)
    j = j[(2 * j - k) * math.log(3) > eps - 1e-6 * abs(eps)]
    lw = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + j * math.log(0.75) + (k - j) * math.log(0.25)
    total = MP.mpf(0)
    for jj in j[_significant(lw)].tolist():
        s = (2 * jj - k) * l3
        if s <= e:
            continue
        w = MP.loggamma(k + 1) - MP.loggamma(jj + 1) - MP.loggamma(k - jj + 1) + jj * MP.log(0.75)
        total += MP.exp(w + (k - jj) * MP.log(0.25)) * (1 - MP.exp(e - s))
    return total


@pytest.mark.parametrize("k,eps", [(10**4, 6063.917), (3000, 1900.0), (10**5, 60639.17)])
def test_randomized_response_counted_exactly(k, eps):
    """k = 1e4 at eps = 6063.917: log delta = -21.24 (the composed support has 10,001
    losses); k = 1e5: a finite lower bound, both within 1e-9 relative of the truth."""
    f, _ = pair_loss(sdp.repeat(_rr(), k), np.array([1, 0]), np.array([0, 1]))
    assert f.method() == "lattice"
    up = float(f.log_delta(np.array([eps]))[0])
    lo = float(f.log_delta(np.array([eps]), upper=False)[0])
    ref = float(MP.log(_rr_delta(k, eps)))
    assert lo <= ref <= up
    assert up - lo <= 1e-9 * max(1.0, abs(ref))
    if k == 10**4:
        assert round(ref, 2) == -21.24


def test_profile_of_randomized_response_at_large_k():
    """The profile (both directions) is the forward stick by symmetry; 1e6 runs."""
    k, eps = 10**6, 606391.7
    mech = sdp.repeat(_rr(), k)
    pld = sdp.privacy_loss_distribution(mech, [1, 0], [0, 1])
    up, lo = pld.delta(eps, log=True), pld.delta_enclosure(eps).lower
    ref = float(MP.log(_rr_delta(k, eps)))
    assert lo <= ref <= up
    # the runs' mass errors compound: 3e-14 (near the bulk) to 1.2e-13 (far tails) per run
    assert up - lo <= 2e-13 * k
    assert sdp.privacy_profile(mech, [1, 0], eps, log=True) == up


def _three_delta(k: int, eps: float) -> mpmath.mpf:
    """a reports of output 0 (loss log 3), c of output 2 (loss -log 3): loss (a - c) log 3."""
    from scipy.special import gammaln

    P = [MP.mpf(3) / 8, MP.mpf(1) / 2, MP.mpf(1) / 8]
    l3 = MP.log(3)
    e = MP.mpf(eps)
    a, c = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    ok = (a + c <= k) & ((a - c) * math.log(3) > eps - 1e-6 * abs(eps))
    a, c = a[ok], c[ok]
    b = k - a - c
    lw = gammaln(k + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(c + 1) + a * math.log(3 / 8) + b * math.log(0.5)
    lw = lw + c * math.log(1 / 8)
    sel = _significant(lw)
    lf = {}

    def lfact(i: int) -> mpmath.mpf:
        if i not in lf:
            lf[i] = MP.loggamma(i + 1)
        return lf[i]

    total = MP.mpf(0)
    for ai, bi, ci in zip(a[sel].tolist(), b[sel].tolist(), c[sel].tolist()):
        s = (ai - ci) * l3
        if s <= e:
            continue
        w = lfact(k) - lfact(ai) - lfact(bi) - lfact(ci) + ai * MP.log(P[0]) + bi * MP.log(P[1]) + ci * MP.log(P[2])
        total += MP.exp(w) * (1 - MP.exp(e - s))
    return total


def test_three_output_mechanism_counted_exactly():
    k = 2500
    f, _ = pair_loss(sdp.repeat(_three(), k), np.array([1, 0]), np.array([0, 1]))
    assert f.method() == "lattice"
    for eps in (900.0, 1300.0):
        up = float(f.log_delta(np.array([eps]))[0])
        lo = float(f.log_delta(np.array([eps]), upper=False)[0])
        ref = float(MP.log(_three_delta(k, eps)))
        assert lo <= ref <= up
        assert up - lo <= 1e-9 * max(1.0, abs(ref))


@settings(max_examples=15, deadline=None)
@given(st.integers(2100, 6000), st.floats(0.05, 0.95))
def test_randomized_response_any_k_and_epsilon(k, frac):
    """Epsilon anywhere between the mean and the largest composed loss."""
    kl = 0.5 * math.log(3)
    eps = k * kl + frac * (k * math.log(3) - k * kl) * 0.2
    f, _ = pair_loss(sdp.repeat(_rr(), k), np.array([1, 0]), np.array([0, 1]))
    up = float(f.log_delta(np.array([eps]))[0])
    lo = float(f.log_delta(np.array([eps]), upper=False)[0])
    ref = float(MP.log(_rr_delta(k, eps)))
    assert lo <= ref <= up
    assert up - lo <= 1e-9 * max(1.0, abs(ref))


def test_grid_cells_trade_time_for_width():
    """Losses on no lattice (the sampling histogram): more grid cells, a narrower bracket,
    and the brackets of both accuracies overlap (each encloses the truth)."""
    shm = sdp.SamplingHistogram(eta=0.5)
    x, x2 = [20, 10], [19, 11]
    brackets = []
    for cells in (2**12, 2**15):
        pld = sdp.privacy_loss_distribution(sdp.repeat(shm, 20, grid_cells=cells), x, x2)
        assert pld.forward.method() == "grid"
        brackets.append((pld.delta_enclosure(8.0).delta_lower, pld.delta(8.0)))
    (lo1, hi1), (lo2, hi2) = brackets
    assert hi2 - lo2 < 0.5 * (hi1 - lo1)
    assert max(lo1, lo2) <= min(hi1, hi2)
    with pytest.raises(ValueError, match="grid_cells"):
        sdp.repeat(shm, 3, grid_cells=10)
