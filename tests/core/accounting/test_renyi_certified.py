"""The Renyi divergence is enclosed, for every order alpha >= 0, by two proven bounds.

The reference is independent of the package: the Renyi divergence of two explicit finite
laws in 80-digit mpmath, ``log(sum p^a q^(1-a)) / (a - 1)`` (or its limits: the KL
divergence at a = 1, ``-log Q(supp P)`` at a = 0, the largest loss at a = inf).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp

MP = mpmath.mp.clone()
MP.dps = 120  # 80 good digits left after dividing by alpha - 1 down to 1e-16 (orders next to 1)


def _renyi_ref(P: list[Fraction], Q: list[Fraction], alpha: float) -> mpmath.mpf:
    """D_alpha(P || Q) of two finite laws at 80 digits (outputs with P = 0 carry nothing)."""
    pairs = [(MP.mpf(p.numerator) / p.denominator, MP.mpf(q.numerator) / q.denominator) for p, q in zip(P, Q) if p > 0]
    if alpha == math.inf:
        return max(MP.inf if q == 0 else MP.log(p / q) for p, q in pairs)
    a = MP.mpf(alpha)
    if alpha == 1.0:
        if any(q == 0 for _, q in pairs):
            return MP.inf
        return MP.fsum(p * MP.log(p / q) for p, q in pairs)
    if alpha > 1 and any(q == 0 for _, q in pairs):
        return MP.inf
    s = MP.fsum(p**a * q ** (1 - a) for p, q in pairs if q > 0)
    if s == 0:
        return MP.inf
    return MP.log(s) / (a - 1)


def _finite(laws: dict[int, list[Fraction]]) -> sdp.FiniteMechanism:
    """A mechanism on one record of two categories: law[c] when the record is in category c."""

    def law(h: tuple[int, ...]) -> dict[int, float]:
        c = 0 if h[0] == 1 else 1
        return {o: float(p) for o, p in enumerate(laws[c]) if p > 0}

    return sdp.FiniteMechanism(law, categories=2, name="fresh")


def _rr() -> tuple[sdp.FiniteMechanism, list[Fraction], list[Fraction]]:
    P = [Fraction(3, 4), Fraction(1, 4)]
    Q = [Fraction(1, 4), Fraction(3, 4)]
    return _finite({0: P, 1: Q}), P, Q


ORDERS_NEAR_ONE = [1 - 1e-9, 1 - 1e-12, 1 - 1e-14, 1.0, 1 + 1e-14, 1 + 1e-12, 1 + 1e-9]


def test_randomized_response_near_one_is_the_kl_divergence():
    """At orders within 1e-9 of 1 the divergence of randomized response (p = 3/4) is
    0.5493061443 to ten digits; the bounds enclose the 80-digit value at every order."""
    mech, P, Q = _rr()
    up = sdp.renyi_profile(mech, [1, 0], ORDERS_NEAR_ONE)
    lo = sdp.renyi_profile_enclosure(mech, [1, 0], ORDERS_NEAR_ONE).lower
    for a, u, l in zip(ORDERS_NEAR_ONE, up, lo):
        ref = _renyi_ref(P, Q, a)
        assert l <= ref <= u
        assert u - l <= 1e-11
        assert abs(u - 0.5493061443) < 1e-9
    assert np.all(np.diff(up) >= 0) and np.all(np.diff(lo) >= 0)


finite_laws = st.lists(st.integers(0, 12), min_size=2, max_size=5)
orders = st.one_of(
    st.floats(0.0, 40.0),
    st.floats(-1e-6, 1e-6).map(lambda t: 1.0 + t),
    st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]),
)


@settings(max_examples=60, deadline=None)
@given(finite_laws, finite_laws, st.lists(orders, min_size=1, max_size=4))
def test_renyi_enclosed_by_80_digit_reference(wp, wq, alphas):
    """Fresh laws (rational masses, zeros allowed: infinite losses and disjoint supports)
    and orders anywhere in [0, 40], near 1 and at inf: lower <= truth <= upper, both
    directions, and the bounds are non-decreasing in the order."""
    size = min(len(wp), len(wq))
    wp, wq = wp[:size], wq[:size]
    if sum(wp) == 0 or sum(wq) == 0:
        wp, wq = [w + 1 for w in wp], [w + 1 for w in wq]
    P = [Fraction(w, sum(wp)) for w in wp]
    Q = [Fraction(w, sum(wq)) for w in wq]
    mech = _finite({0: P, 1: Q})
    pld = sdp.privacy_loss_distribution(mech, [1, 0], [0, 1])
    for a in alphas:
        for direction, (A, B) in (("forward", (P, Q)), ("backward", (Q, P))):
            ref = _renyi_ref(A, B, a)
            u = pld.renyi(a, direction)
            l = pld.renyi_enclosure(a, direction).lower
            # the reference itself is good to ~1e-100 (120 digits, divided by alpha - 1)
            assert l <= ref + 1e-70 and ref - 1e-70 <= u, (a, direction, l, ref, u)
            if MP.isfinite(ref):  # 1e-9 relative, or 1e-11 absolute where D is far below the losses
                assert u - l <= 1e-9 * float(ref) + 1e-11 * (1 + a), (a, direction, l, ref, u)
            if MP.isinf(ref):
                assert u == math.inf
    srt = sorted(alphas)
    up = sdp.renyi_profile(mech, [1, 0], srt)
    lo = sdp.renyi_profile_enclosure(mech, [1, 0], srt).lower
    up, lo = np.atleast_1d(up), np.atleast_1d(lo)
    assert np.all(up[1:] >= up[:-1]) and np.all(lo[1:] >= lo[:-1])
    assert np.all(lo <= up)


def test_composition_adds_and_stays_enclosed():
    """k runs: the divergence is k times the run's, and both bounds enclose it."""
    mech, P, Q = _rr()
    for k in (3, 1000):
        pld = sdp.privacy_loss_distribution(sdp.repeat(mech, k), [1, 0], [0, 1])
        for a in (0.25, 1.0, 1 + 1e-13, 4.0):
            ref = k * _renyi_ref(P, Q, a)
            assert pld.renyi_enclosure(a).lower <= ref <= pld.renyi(a)


def test_smoothed_renyi_is_enclosed():
    """E over databases of two records drawn from one vertex, worked by hand from the
    per-database 80-digit divergences."""
    mech, P, Q = _rr()
    # one record: the database is [1, 0] with probability v, [0, 1] otherwise; both have
    # the same divergence by symmetry
    res = sdp.smoothed_renyi(mech, 1, [[0.3, 0.7]], [0.5, 1.0, 3.0])
    for i, a in enumerate((0.5, 1.0, 3.0)):
        ref = _renyi_ref(P, Q, a)
        assert res.lower[i] <= ref <= res.value[i]
        assert res.value[i] - res.lower[i] <= 1e-9 * float(ref)


def test_renyi_bad_input():
    mech, _, _ = _rr()
    with pytest.raises(ValueError, match="alpha"):
        sdp.renyi_profile(mech, [1, 0], -0.5)
    with pytest.raises(ValueError, match="alpha"):
        sdp.renyi_profile_enclosure(mech, [1, 0], [1.0, -0.5])
    pld = sdp.privacy_loss_distribution(mech, [1, 0], [0, 1])
    with pytest.raises(ValueError, match="direction"):
        pld.renyi_enclosure(2.0, "sideways")
    with pytest.raises(ValueError, match="alpha"):
        pld.renyi_enclosure(math.nan)
