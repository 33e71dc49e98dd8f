"""The conversions to (epsilon, delta) are proven upper bounds, and tight, against 80-digit mpmath.

References computed here, independently of the package: the Canonne-Kamath-Steinke expression
minimised over the order by mpmath at 80 digits; the Gaussian-DP curve of Dong, Roth and Su with
mpmath's normal CDF; and, for soundness, the exact (epsilon, delta) curve of the Gaussian
mechanism (it is exactly (1/sigma)-GDP, and rho-zCDP with rho = 1/(2 sigma^2), and has Renyi
divergence alpha / (2 sigma^2) at order alpha): a conversion whose epsilon the exact curve puts
above delta would be a false guarantee.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

import smoothdp_nb as sdp

MP = mpmath.mp.clone()
MP.dps = 80

rhos = st.floats(min_value=1e-6, max_value=50.0)
deltas = st.floats(min_value=1e-12, max_value=0.5)
mus = st.floats(min_value=0.05, max_value=8.0)


def _cks(tau: mpmath.mpf, alpha: mpmath.mpf, delta: float) -> mpmath.mpf:
    return tau + MP.log(1 / (alpha * MP.mpf(delta))) / (alpha - 1) + MP.log(1 - 1 / alpha)


def _zcdp_ref(rho: float, delta: float) -> mpmath.mpf:
    """inf over alpha > 1 of the CKS bound, by mpmath's minimisation on log(alpha - 1)."""
    R = MP.mpf(rho)

    def f(t: mpmath.mpf) -> mpmath.mpf:
        a = 1 + MP.exp(t)
        return _cks(a * R, a, delta)

    # golden-section search on t = log(alpha - 1) in [-60, 60] (f is unimodal there): 0.618^400 ~ 1e-84
    g = (MP.sqrt(5) - 1) / 2
    a, b = MP.mpf(-60), MP.mpf(60)
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(400):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return max(MP.mpf(0), min(fc, fd))


def _gdp_ref(mu: float, eps: float) -> mpmath.mpf:
    m, e = MP.mpf(mu), MP.mpf(eps)
    return MP.ncdf(-e / m + m / 2) - MP.exp(e) * MP.ncdf(-e / m - m / 2)


@given(rhos, deltas)
def test_zcdp_to_dp_is_the_cks_infimum_rounded_up(rho: float, delta: float) -> None:
    got = sdp.zcdp_to_dp(rho, delta)
    ref = _zcdp_ref(rho, delta)
    assert got >= ref  # an upper bound
    assert got <= ref * (1 + 1e-9) + 1e-15  # and the infimum, to the optimiser's accuracy
    bs = MP.mpf(rho) + 2 * MP.sqrt(MP.mpf(rho) * MP.log(1 / MP.mpf(delta)))
    assert got <= bs * (1 + 1e-15)  # never above Bun and Steinke's Proposition 1.3


@given(st.floats(min_value=0.2, max_value=20.0), deltas)
def test_zcdp_to_dp_is_sound_for_the_gaussian_mechanism(sigma: float, delta: float) -> None:
    # the Gaussian mechanism of sensitivity 1 is 1/(2 sigma^2)-zCDP and exactly (1/sigma)-GDP
    rho = 1.0 / (2.0 * sigma * sigma)
    eps = sdp.zcdp_to_dp(rho, delta)
    assert _gdp_ref(1.0 / sigma, eps) <= delta


@given(mus, st.floats(min_value=0.0, max_value=60.0))
def test_gdp_to_dp_encloses_the_curve(mu: float, eps: float) -> None:
    got = sdp.gdp_to_dp(mu, eps)
    ref = _gdp_ref(mu, eps)
    assert got >= ref
    if ref > MP.mpf(2) ** -1000:  # the subnormal range rounds up to a few ulps of 0
        assert got <= ref * (1 + 1e-12)


def test_gdp_to_dp_vectorises_and_refuses_bad_input() -> None:
    out = sdp.gdp_to_dp(1.0, [0.0, 1.0, math.inf])
    assert out.shape == (3,)
    assert out[0] == pytest.approx(float(2 * MP.ncdf(0.5) - 1), rel=1e-14)
    assert out[2] == 0.0
    with pytest.raises(ValueError, match="mu"):
        sdp.gdp_to_dp(0.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        sdp.gdp_to_dp(1.0, -1.0)


@given(mus, deltas)
def test_gdp_epsilon_is_the_smallest_epsilon_meeting_delta(mu: float, delta: float) -> None:
    eps = sdp.gdp_epsilon(mu, delta)
    assert _gdp_ref(mu, eps) <= delta
    if eps > 0:
        assert _gdp_ref(mu, eps * (1 - 1e-9)) > delta


@given(
    st.lists(st.floats(min_value=1.01, max_value=500.0), min_size=1, max_size=8),
    st.floats(min_value=1e-4, max_value=5.0),
    deltas,
)
def test_renyi_to_dp_is_the_smallest_converted_order(alphas: list[float], scale: float, delta: float) -> None:
    taus = [scale * a for a in alphas]  # the Renyi curve of a Gaussian mechanism, rho = scale
    got = sdp.renyi_to_dp(alphas, taus, delta)
    ref = min(max(MP.mpf(0), _cks(MP.mpf(t), MP.mpf(a), delta)) for a, t in zip(alphas, taus, strict=True))
    assert got >= ref
    assert got <= ref * (1 + 1e-15) + 1e-300
    # below Mironov's Proposition 3 at each order, and sound for the Gaussian mechanism
    mironov = min(MP.mpf(t) + MP.log(1 / MP.mpf(delta)) / (MP.mpf(a) - 1) for a, t in zip(alphas, taus, strict=True))
    assert got <= mironov
    assert _gdp_ref(float(MP.sqrt(2 * MP.mpf(scale))), got) <= delta


def test_renyi_to_dp_orders_and_errors() -> None:
    # D_inf <= tau is tau-DP at every delta
    assert sdp.renyi_to_dp([2.0, math.inf], [100.0, 0.75], 1e-9) == 0.75
    assert sdp.renyi_to_dp([2.0, 3.0], [math.inf, math.inf], 1e-3) == math.inf
    with pytest.raises(ValueError, match="alphas"):
        sdp.renyi_to_dp([1.0], [0.1], 1e-5)
    with pytest.raises(ValueError, match="same length"):
        sdp.renyi_to_dp([2.0, 3.0], [0.1], 1e-5)
    with pytest.raises(ValueError, match="delta"):
        sdp.zcdp_to_dp(0.1, 0.0)
    with pytest.raises(ValueError, match="rho"):
        sdp.zcdp_to_dp(-0.1, 1e-5)
    assert sdp.zcdp_to_dp(0.0, 1e-5) == 0.0


def test_renyi_epsilon_of_a_mechanism_is_above_its_exact_epsilon() -> None:
    mech = sdp.NoisySamplingHistogram(T=5, noise_epsilon=1.0)
    hist = np.array([[3, 3], [5, 1], [6, 0]])
    delta = 1e-5
    renyi = sdp.renyi_epsilon(mech, hist, delta)
    exact = sdp.profile_epsilon(mech, hist, delta)  # the database-dependent epsilon, exact for a finite law
    assert renyi.shape == (3,)
    assert np.all(renyi >= exact)
    assert np.all(renyi <= exact + 0.05)  # the Renyi route is close on this law (measured gap below 1e-3)
    one = sdp.renyi_epsilon(mech, [3, 3], delta)
    assert isinstance(one, float) and one == renyi[0]
    # the conversion of the certified upper Renyi curve, order by order
    alphas = np.array([2.0, 8.0, 64.0])
    rdp = sdp.renyi_profile(mech, [5, 1], alphas)
    assert sdp.renyi_epsilon(mech, [5, 1], delta, orders=alphas) == sdp.renyi_to_dp(alphas, rdp, delta)
    with pytest.raises(ValueError, match="orders"):
        sdp.renyi_epsilon(mech, [5, 1], delta, orders=[0.5])
