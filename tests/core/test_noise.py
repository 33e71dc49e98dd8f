"""Tests for smoothdp_nb.core.release.noise: densities, moments, samplers and calibrations.

Reference values come from mpmath quadrature / root finding on densities and
formulas written out here from the papers, never from the module's output.
"""

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
import scipy.stats as sst
from hypothesis import given, settings, strategies as st

from smoothdp_nb.core.release.noise import (
    GeneralizedCauchy,
    Laplace,
    LaplaceLogNormal,
    PolyPlace,
    StudentT,
    calibrate,
    noise_std,
    optimal_shape,
)

mp.mp.dps = 30


# --------------------------------------------------------------------------- #
# PolyPlace, Definition 6, written independently with mpmath
# --------------------------------------------------------------------------- #
def pp_density(x, s, al):
    x, s, al = mp.mpf(x), mp.mpf(s), mp.mpf(al)
    N = al / (2 * (2 * ((al - 1) / al) ** al + al - 1) * s)
    if abs(x) / s < 1 / al:
        return N * (al - 1) * (1 - abs(x) / s) ** (al - 1)
    return N * (al + 1) * (1 - 1 / al**2) ** al * (1 + abs(x) / s) ** (-al - 1)


def pp_integral(f, s, al, lo, hi):
    """Integral of f(x) * density over [lo, hi], split at the kinks; infinite tails
    beyond |x| = s/alpha are mapped to (0, alpha/(alpha+1)] by x = s(1/u - 1), which
    turns the algebraic tail into an integrable endpoint singularity."""
    s, al = mp.mpf(s), mp.mpf(al)
    k = s / al
    total = mp.mpf(0)
    a, b = mp.mpf(lo), mp.mpf(hi)
    # u = v^m removes the u^(alpha-3) endpoint singularity of the second moment
    m = 1 / (al - 2) if al > 2 else 1 / al

    def tail(v, sign):
        if v == 0:
            return mp.mpf(0)
        u = v**m
        x = sign * s * (1 / u - 1)
        return f(x) * pp_density(x, s, al) * s / u**2 * m * v ** (m - 1)

    if b == mp.inf:
        start = max(a, k)
        ustart = 1 / (1 + start / s)
        total += mp.quad(lambda v: tail(v, 1), [0, ustart ** (1 / m)])
        b = start
    if a == -mp.inf:
        end = min(b, -k)
        uend = 1 / (1 - end / s)
        total += mp.quad(lambda v: tail(v, -1), [0, uend ** (1 / m)])
        a = end
    if a < b:
        pts = sorted({a, b, *[p for p in (-k, mp.mpf(0), k) if a < p < b]})
        total += mp.quad(lambda t: f(t) * pp_density(t, s, al), pts)
    return total


def lemma13_variance(s, al):
    """Lemma 13 as printed (with the signs restored)."""
    s, al = mp.mpf(s), mp.mpf(al)
    num = (1 / al + 1) ** (-al) * (
        (19 * al**2 + 5) * (1 - 1 / al**2) ** al + (al - 2) * (al - 1) ** 2 * (1 / al + 1) ** al
    )
    den = (2 * ((al - 1) / al) ** al + al - 1) * (al**4 - 5 * al**2 + 4)
    return 2 * s**2 * num / den


@pytest.mark.parametrize("s,al", [(1.0, 3.0), (2.5, 1.5), (0.3, 2.2), (10.0, 20.0), (1.0, 1.05)])
def test_polyplace_pdf_continuity_normalisation_cdf(s, al):
    d = PolyPlace(s=s, alpha=al)
    k = s / al
    # continuity at |x| = s/alpha, from both sides
    for sign in (-1, 1):
        left, right = d.pdf(sign * k * (1 - 1e-12)), d.pdf(sign * k * (1 + 1e-12))
        assert left == pytest.approx(right, rel=1e-9)
        assert d.pdf(sign * k) == pytest.approx(float(pp_density(sign * k, s, al)), rel=1e-13)
    assert float(pp_integral(lambda t: 1, s, al, -mp.inf, mp.inf)) == pytest.approx(1.0, abs=1e-14)
    xs = [-50 * s, -3 * s, -k, -0.5 * k, 0.0, 0.2 * k, k, 1.7 * s, 1e4 * s]
    for x in xs:
        assert d.pdf(x) == pytest.approx(float(pp_density(x, s, al)), rel=1e-12, abs=0)
        ref = pp_integral(lambda t: 1, s, al, -mp.inf, x)
        assert d.cdf(x) == pytest.approx(float(ref), rel=1e-12, abs=0)
        assert d.sf(x) == pytest.approx(float(pp_integral(lambda t: 1, s, al, x, mp.inf)), rel=1e-11, abs=0)
        assert d.logpdf(x) == pytest.approx(float(mp.log(pp_density(x, s, al))), rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("s,al", [(1.0, 3.0), (2.5, 1.5), (0.7, 8.0)])
def test_polyplace_ppf_inverts_cdf(s, al):
    d = PolyPlace(s=s, alpha=al)
    for q in [1e-12, 1e-4, 0.01, 0.3, 0.5, 0.55, 0.9, 1 - 1e-6]:
        x = float(d.ppf(q))
        # independent cdf at the returned point, turned into an error in x
        err = (pp_integral(lambda u: 1, s, al, -mp.inf, x) - q) / pp_density(x, s, al)
        assert abs(float(err)) <= 1e-10 * max(abs(x), 1e-4 * s)
    assert d.isf(1e-15) == pytest.approx(-d.ppf(1e-15), rel=1e-12)


@pytest.mark.parametrize("s,al", [(1.0, 3.0), (1.0, 2.5), (3.0, 7.0), (1.0, 50.0), (0.5, 2.3), (1.0, 2.05)])
def test_polyplace_mean_and_variance_lemma13(s, al):
    d = PolyPlace(s=s, alpha=al)
    ref = pp_integral(lambda t: t * t, s, al, -mp.inf, mp.inf)
    assert float(lemma13_variance(s, al)) == pytest.approx(float(ref), rel=1e-12)
    assert d.var() == pytest.approx(float(ref), rel=1e-12)
    assert d.std() == pytest.approx(float(mp.sqrt(ref)), rel=1e-12)
    assert d.mean() == 0.0
    assert float(pp_integral(lambda t: t, s, al, -mp.inf, mp.inf)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("al", [1.01, 1.5, 2.0])
def test_polyplace_infinite_variance_reported_as_inf(al):
    d = PolyPlace(s=1.0, alpha=al)
    assert d.var() == math.inf and d.std() == math.inf
    assert noise_std("polyplace", 1.0, 1.0 / al) == math.inf


def test_polyplace_ks_1e5_samples():
    for s, al, seed in [(1.0, 3.0, 1), (2.0, 1.3, 2), (0.5, 25.0, 3)]:
        d = PolyPlace(s=s, alpha=al)
        x = d.rvs(size=100_000, random_state=seed)
        assert x.shape == (100_000,)
        assert sst.kstest(x, d.cdf).pvalue > 1e-3
        # and against the quadrature cdf at a few quantiles of the sample
        for q in (0.1, 0.5, 0.97):
            v = float(np.quantile(x, q))
            assert float(pp_integral(lambda t: 1, s, al, -mp.inf, v)) == pytest.approx(q, abs=0.01)


def test_rvs_reproducible_and_random_state_types():
    d = PolyPlace(s=1.0, alpha=3.0)
    assert np.array_equal(d.rvs(size=10, random_state=5), d.rvs(size=10, random_state=5))
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert np.array_equal(d.rvs(size=(3, 4), random_state=g1), d.rvs(size=(3, 4), random_state=g2))
    assert np.isscalar(d.rvs(random_state=1)) or np.ndim(d.rvs(random_state=1)) == 0
    for dist in (GeneralizedCauchy(4), StudentT(3), LaplaceLogNormal(0.5), Laplace(2.0)):
        assert np.array_equal(dist.rvs(size=7, random_state=3), dist.rvs(size=7, random_state=3))


def _log_ratio_max(eps, gamma, SS, SS2, dq, grid):
    a = PolyPlace(s=SS / gamma, alpha=eps / gamma).logpdf(grid)
    b = PolyPlace(s=SS2 / gamma, alpha=eps / gamma).logpdf(grid - dq)
    return float(np.max(np.abs(a - b)))


@pytest.mark.parametrize("eps,gamma", [(1.0, 0.1), (1.0, 0.5), (1.0, 0.9), (0.3, 0.05), (2.0, 1.7)])
def test_theorem8_privacy_density_ratio(eps, gamma):
    """Theorem 8: releases q + PolyPlace(SS/gamma, eps/gamma) with |q - q'| <= min(SS, SS')
    and SS' in [e^-gamma SS, e^gamma SS] have density ratio <= e^eps everywhere."""
    SS = 1.0
    grid = np.concatenate([np.linspace(-60, 60, 24001), np.geomspace(60, 1e8, 2000), -np.geomspace(60, 1e8, 2000)])
    worst = 0.0
    for u in np.linspace(-1, 1, 9):
        SS2 = SS * math.exp(u * gamma)
        m = min(SS, SS2)
        for v in np.linspace(-1, 1, 9):
            worst = max(worst, _log_ratio_max(eps, gamma, SS, SS2, v * m, grid))
    assert worst <= eps + 1e-9
    assert worst >= 0.9 * eps  # the bound is (nearly) attained: the check has teeth
    # negative control: less noise (alpha too large) breaks the guarantee
    a = PolyPlace(s=SS / gamma, alpha=1.3 * eps / gamma).logpdf(grid)
    b = PolyPlace(s=SS * math.exp(-gamma) / gamma, alpha=1.3 * eps / gamma).logpdf(grid - math.exp(-gamma))
    assert float(np.max(np.abs(a - b))) > eps


def test_corollary14_and_lemma15_limits():
    eps = 1.0
    # Var = 2/eps^2 + 2 (17 - 3e) gamma / (e eps^3) + O(gamma^2)  (proof of Corollary 14)
    slope = 2 * (17 - 3 * math.e) / (math.e * eps**3)
    for gamma in (1e-3, 1e-4):
        v = noise_std("polyplace", eps, gamma) ** 2
        assert (v - 2 / eps**2) / gamma == pytest.approx(slope, rel=20 * gamma)
    # Lemma 15: PolyPlace(a/gamma, eps/gamma) -> Lap(a/eps) pointwise
    a = 2.0
    xs = np.array([0.0, 0.5, 3.0, 10.0])
    lap = sst.laplace(scale=a / eps).pdf(xs)
    d = PolyPlace(s=a / 1e-6, alpha=eps / 1e-6)
    np.testing.assert_allclose(d.pdf(xs), lap, rtol=1e-4)


# --------------------------------------------------------------------------- #
# other families
# --------------------------------------------------------------------------- #
def gc_density(x, c):
    c = mp.mpf(c)
    return c * mp.sin(mp.pi / c) / (2 * mp.pi) / (1 + abs(mp.mpf(x)) ** c)


@pytest.mark.parametrize("c", [1.5, 3.5, 4.0, 7.3])
def test_generalized_cauchy(c):
    d = GeneralizedCauchy(c)
    # the normalising constant of Claim 16's proof: c/(2 pi) sin(pi/c)
    assert float(mp.quad(lambda t: gc_density(t, c), [-mp.inf, 0, mp.inf])) == pytest.approx(1, abs=1e-14)
    for x in (-100.0, -2.0, -0.3, 0.0, 1.0, 5.0, 1e5):
        assert d.pdf(x) == pytest.approx(float(gc_density(x, c)), rel=1e-12, abs=0)
        ref = mp.quad(lambda t: gc_density(t, c), [-mp.inf, min(x, 0), x] if x > 0 else [-mp.inf, x])
        assert d.cdf(x) == pytest.approx(float(ref), rel=1e-10)
        if x <= 0:
            assert d.ppf(float(ref)) == pytest.approx(x, rel=1e-9, abs=1e-12)
        else:  # upper tail: invert the survival function, 1 - cdf would round away
            if x >= 5:  # convergent series of int_x^inf dt/(1+t^c) = sum (-1)^k x^(1-(k+1)c)/((k+1)c-1)
                cc = mp.mpf(c)
                up = (
                    cc
                    * mp.sin(mp.pi / cc)
                    / (2 * mp.pi)
                    * mp.nsum(lambda k: (-1) ** k * mp.mpf(x) ** (1 - (k + 1) * cc) / ((k + 1) * cc - 1), [0, mp.inf])
                )
            else:
                up = mp.quad(lambda t: gc_density(t, c), [x, 2 * x, 4 * x, 8 * x, 16 * x, mp.inf])
            assert up > 0
            assert d.sf(x) == pytest.approx(float(up), rel=1e-10, abs=0)
            assert d.isf(float(up)) == pytest.approx(x, rel=1e-9)
    if c > 3:
        ref = mp.quad(lambda t: t * t * gc_density(t, c), [-mp.inf, 0, mp.inf])
        assert d.var() == pytest.approx(float(ref), rel=1e-12)
    else:
        assert d.var() == math.inf or math.isnan(d.var())
    x = d.rvs(size=100_000, random_state=11)
    assert sst.kstest(x, d.cdf).pvalue > 1e-3


@pytest.mark.parametrize("df", [0.7, 2.0, 3.0, 5.5])
def test_student_t_against_scipy(df):
    d = StudentT(df)
    ref = sst.t(df)
    xs = np.array([-30.0, -1.0, 0.0, 0.4, 7.0])
    np.testing.assert_allclose(d.pdf(xs), ref.pdf(xs), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(xs), ref.cdf(xs), rtol=1e-12)
    np.testing.assert_allclose(d.ppf([0.01, 0.5, 0.8]), ref.ppf([0.01, 0.5, 0.8]), rtol=1e-12, atol=1e-15)
    if df > 2:
        assert d.var() == pytest.approx(df / (df - 2), rel=1e-14)
    elif df > 1:
        assert d.var() == math.inf
    x = d.rvs(size=100_000, random_state=12)
    assert sst.kstest(x, ref.cdf).pvalue > 1e-3


@pytest.mark.parametrize("sigma", [0.3, 1.0])
def test_laplace_log_normal(sigma):
    d = LaplaceLogNormal(sigma)
    S = mp.mpf(sigma)

    def dens(z):  # E_Y[ e^{-sigma Y} exp(-|z| e^{-sigma Y}) / 2 ]
        z = abs(mp.mpf(z))
        return mp.quad(lambda y: mp.npdf(y) * mp.exp(-S * y - z * mp.exp(-S * y)) / 2, mp.linspace(-40, 60, 101))

    for z in (0.0, 0.7, -3.0, 25.0):
        assert d.pdf(z) == pytest.approx(float(dens(z)), rel=1e-10, abs=0)
        tail = mp.quad(lambda y: mp.npdf(y) * mp.exp(-abs(z) * mp.exp(-S * y)) / 2, mp.linspace(-40, 60, 101))
        assert d.cdf(-abs(z)) == pytest.approx(float(tail), rel=1e-10, abs=0)
    q = d.cdf(1.3)
    assert d.ppf(q) == pytest.approx(1.3, rel=1e-9)
    assert d.var() == pytest.approx(2 * math.exp(2 * sigma**2), rel=1e-14)
    x = d.rvs(size=20_000, random_state=13)  # quadrature cdf: keep it quick
    assert sst.kstest(x, d.cdf).pvalue > 1e-3


def test_laplace():
    d = Laplace(2.0)
    np.testing.assert_allclose(d.pdf([-1.0, 3.0]), sst.laplace(scale=2).pdf([-1.0, 3.0]), rtol=1e-14)
    np.testing.assert_allclose(d.cdf([-1.0, 3.0]), sst.laplace(scale=2).cdf([-1.0, 3.0]), rtol=1e-14)
    np.testing.assert_allclose(d.ppf([0.1, 0.7]), sst.laplace(scale=2).ppf([0.1, 0.7]), rtol=1e-14)
    assert d.var() == 8.0
    assert sst.kstest(d.rvs(size=100_000, random_state=14), d.cdf).pvalue > 1e-3


# --------------------------------------------------------------------------- #
# calibrations: Theorem 8, Claims 16-18, Figure 1
# --------------------------------------------------------------------------- #
def claim16(eps, g, c):
    return (c + 1) / (eps - g * (c + 1)) * mp.sqrt(1 / (2 * mp.cos(2 * mp.pi / c) + 1))


def claim17(eps, g, d):
    return mp.sqrt(d / (d - 2)) * (d + 1) / (2 * mp.sqrt(d) * (eps - g * (d + 1)))


def claim18(eps, g, delta):
    return mp.sqrt(2) / (eps - g * mp.log(2 / delta))


def lln_std(eps, g, sig):
    return mp.sqrt(2) * mp.exp(sig**2) * mp.exp(3 * sig**2 / 2) / (eps - g / sig)


def direct_min(f, lo, hi):
    """Direct numerical minimisation: coarse grid, then a root of f' in high precision."""
    grid = [lo + (hi - lo) * (i + 0.5) / 400 for i in range(400)]
    x0 = min(grid, key=f)
    xm = mp.findroot(lambda t: mp.diff(f, t), mp.mpf(x0))
    return xm, f(xm)


def test_claim16_shape_fixed_matches_quadrature():
    eps, g, c = 1.0, 0.05, 4.0
    var = mp.quad(lambda t: t * t * gc_density(t, c), [-mp.inf, 0, mp.inf])
    expect = (c + 1) / (eps - g * (c + 1)) * mp.sqrt(var)
    assert noise_std("cauchy", eps, g, shape=c) == pytest.approx(float(expect), rel=1e-12)
    assert noise_std("cauchy", eps, g, shape=c) == pytest.approx(float(claim16(eps, g, c)), rel=1e-13)
    cal = calibrate("cauchy", eps, g, shape=c)
    assert cal.scale * cal.distribution.std() == pytest.approx(float(expect), rel=1e-12)


def test_claim17_and_18_fixed_shape():
    assert noise_std("student_t", 1.0, 0.05, shape=5.0) == pytest.approx(float(claim17(1, 0.05, 5)), rel=1e-13)
    cal = calibrate("student_t", 1.0, 0.05, shape=5.0)
    assert cal.scale * cal.distribution.std() == pytest.approx(float(claim17(1, 0.05, 5)), rel=1e-12)
    assert noise_std("laplace", 1.0, 0.01, delta=1e-5) == pytest.approx(float(claim18(1, 0.01, 1e-5)), rel=1e-13)
    cal = calibrate("laplace", 1.0, 0.01, delta=1e-5)
    assert cal.scale * cal.distribution.std() == pytest.approx(float(claim18(1, 0.01, 1e-5)), rel=1e-13)
    # PolyPlace: Theorem 8 scale SS/gamma, shape eps/gamma
    cal = calibrate("polyplace", 1.0, 0.2)
    # 0.2 as a double is above 1/5: eps/gamma = 4.99999999999999972..., rounded down
    assert cal.scale == 5.0 and cal.shape == 4.999999999999999
    assert cal.scale * cal.distribution.std() == pytest.approx(float(mp.sqrt(lemma13_variance(5, 5))), rel=1e-12)


FIG1_GAMMAS = [1e-3, 0.01, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3]


@pytest.mark.parametrize("gamma", FIG1_GAMMAS)
def test_figure1_optimal_shapes_against_direct_minimisation(gamma):
    eps, delta = 1.0, 1e-5
    # Student's t (Claim 17), d in (2, eps/gamma - 1); generalized Cauchy
    # (Claim 16), c in (3, eps/gamma - 1): defined while gamma < eps/3 (eps/4)
    for family, claim, lower, limit in (("student_t", claim17, 2.0, eps / 3), ("cauchy", claim16, 3.0, eps / 4)):
        if gamma < limit:
            shape, std = direct_min(lambda d: claim(eps, gamma, d), lower, eps / gamma - 1)
            assert optimal_shape(family, eps, gamma) == pytest.approx(float(shape), rel=1e-9)
            assert noise_std(family, eps, gamma) == pytest.approx(float(std), rel=1e-9)
        else:
            assert noise_std(family, eps, gamma) == math.inf
    # Laplace (Claim 18)
    if gamma < eps / math.log(2 / delta):
        assert noise_std("laplace", eps, gamma, delta=delta) == pytest.approx(
            float(claim18(eps, gamma, delta)), rel=1e-13
        )
    else:
        assert noise_std("laplace", eps, gamma, delta=delta) == math.inf
    # PolyPlace (Theorem 8 + Lemma 13): quadrature of the density itself
    if gamma < eps / 2:
        ref = mp.sqrt(pp_integral(lambda t: t * t, 1 / gamma, eps / gamma, -mp.inf, mp.inf))
        assert noise_std("polyplace", eps, gamma) == pytest.approx(float(ref), rel=1e-11)
    # Laplace-log-normal (Proposition 3), sigma > gamma/eps
    sg, sm = direct_min(lambda s: lln_std(eps, gamma, s), gamma / eps, gamma / eps + 3)
    assert optimal_shape("laplace_log_normal", eps, gamma) == pytest.approx(float(sg), rel=1e-9)
    assert noise_std("laplace_log_normal", eps, gamma) == pytest.approx(float(sm), rel=1e-9)


def test_figure1_shape_of_curves():
    """What Figure 1 / the introduction state about the curves at eps = 1, delta = 1e-5."""
    eps, delta = 1.0, 1e-5
    gs = np.linspace(0.001, 0.333, 200)
    pp = np.array([noise_std("polyplace", eps, g) for g in gs])
    st_ = np.array([noise_std("student_t", eps, g) for g in gs])
    ca = np.array([noise_std("cauchy", eps, g) for g in gs])
    la = np.array([noise_std("laplace", eps, g, delta=delta) for g in gs])
    assert np.all(pp < st_) and np.all(pp < ca)
    assert np.all(pp[np.isfinite(la)] <= la[np.isfinite(la)])
    assert np.all(np.diff(pp) > 0)  # more smoothing, more noise
    # PolyPlace is usable beyond eps/3 (t) and eps/4 (Cauchy) and has finite std up to eps/2
    assert math.isfinite(noise_std("polyplace", eps, 0.49)) and noise_std("polyplace", eps, 0.5) == math.inf
    assert noise_std("polyplace", eps, 0.99) == math.inf  # defined (eps-DP) but infinite variance
    assert noise_std("polyplace", eps, 1.0) == math.inf  # outside the range
    # gamma -> 0: the dashed line sqrt(2)/eps
    assert noise_std("polyplace", eps, 1e-7) == pytest.approx(math.sqrt(2) / eps, rel=1e-6)
    # Student's t ratio grows without bound as gamma -> eps/3 ("arbitrarily large factors")
    assert noise_std("student_t", eps, 0.3333) / noise_std("polyplace", eps, 0.3333) > 50


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: PolyPlace(s=1.0, alpha=1.0), "1 < alpha"),
        (lambda: PolyPlace(s=0.0, alpha=3.0), "0 < s"),
        (lambda: GeneralizedCauchy(c=1.0), "1 < c"),
        (lambda: StudentT(df=0), "0 < df"),
        (lambda: LaplaceLogNormal(sigma=-1), "0 < sigma"),
        (lambda: calibrate("polyplace", 1.0, 1.0), "0 < gamma < 1 for polyplace"),
        (lambda: calibrate("polyplace", 1.0, 1.5), "gamma must satisfy"),
        (lambda: calibrate("student_t", 1.0, 0.4), "gamma must satisfy"),
        (lambda: calibrate("cauchy", 1.0, 0.2, shape=4.0), "gamma must satisfy"),
        (lambda: calibrate("laplace", 1.0, 0.01), "delta is required"),
        (lambda: calibrate("laplace", 1.0, 0.1, delta=1e-5), "gamma must satisfy"),
        (lambda: noise_std("polyplace", 0.0, 0.1), "0 < epsilon"),
        (lambda: noise_std("polyplace", 1.0, -0.1), "0 < gamma"),
        (lambda: noise_std("gauss", 1.0, 0.1), "family must be one of"),
        (lambda: noise_std("laplace", 1.0, 0.01, delta=1.5), "0 < delta < 1"),
        (lambda: noise_std("polyplace", 1.0, 0.1, shape=3.0), "shape must be None"),
        (lambda: noise_std("cauchy", 1.0, 0.1, shape=0.5), "1 < shape"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_out_of_range_gamma_gives_inf_std():
    assert noise_std("cauchy", 1.0, 0.3) == math.inf
    assert noise_std("student_t", 1.0, 0.34) == math.inf
    assert noise_std("laplace", 1.0, 0.2, delta=1e-5) == math.inf
    with pytest.raises(TypeError):
        PolyPlace(s="1", alpha=3)


# --------------------------------------------------------------------------- #
# accuracy on the whole parameter range, against mpmath
# --------------------------------------------------------------------------- #
_MP = mp.MPContext()
_MP.prec = 200


def _mp_tail(family, shape, a):
    """P(Z > a) for a >= 0 at 200 bits, from the definitions' closed forms (Lemma 7's
    antiderivatives; incomplete beta integrals), each in its cancellation-free form."""
    ctx = _MP
    a = ctx.mpf(a)
    if family == "laplace":
        return ctx.exp(-a) / 2
    if family == "student_t":
        d = ctx.mpf(shape)
        return ctx.betainc(d / 2, ctx.mpf(1) / 2, 0, d / (d + a * a), regularized=True) / 2
    if family == "cauchy":
        c = ctx.mpf(shape)
        if a < 1:  # 1/(1 + a^c) rounds to 1 even at 200 bits: use the complement
            v = a**c / (1 + a**c)
            return (1 - ctx.betainc(1 / c, 1 - 1 / c, 0, v, regularized=True)) / 2
        return ctx.betainc(1 - 1 / c, 1 / c, 0, 1 / (1 + a**c), regularized=True) / 2
    al = ctx.mpf(shape)
    K = 2 * ((al - 1) / al) ** al + al - 1
    if a * al < 1:
        return ctx.mpf(1) / 2 - (al - 1) * (1 - (1 - a) ** al) / (2 * K)
    return (al + 1) * (1 - 1 / al**2) ** al * (1 + a) ** (-al) / (2 * K)


def _mp_pdf(family, shape, a):
    ctx = _MP
    a = abs(ctx.mpf(a))
    if family == "laplace":
        return ctx.exp(-a) / 2
    if family == "student_t":
        d = ctx.mpf(shape)
        return ctx.gamma((d + 1) / 2) / (ctx.sqrt(d * ctx.pi) * ctx.gamma(d / 2)) * (1 + a * a / d) ** (-(d + 1) / 2)
    if family == "cauchy":
        c = ctx.mpf(shape)
        return c * ctx.sin(ctx.pi / c) / (2 * ctx.pi) / (1 + a**c)
    al = ctx.mpf(shape)
    N = al / (2 * (2 * ((al - 1) / al) ** al + al - 1))
    return (
        N * (al - 1) * (1 - a) ** (al - 1)
        if a * al < 1
        else N * (al + 1) * (1 - 1 / al**2) ** al * (1 + a) ** (-al - 1)
    )


_ACCURACY_CASES = [
    ("laplace", None),
    ("student_t", 0.5),
    ("student_t", 3.0),
    ("student_t", 1e4),
    ("cauchy", 1.01),
    ("cauchy", 4.0),
    ("cauchy", 20.0),
    ("cauchy", 200.0),
    ("polyplace", 1.001),
    ("polyplace", 10.0),
    ("polyplace", 1e4),
]


@pytest.mark.parametrize("family,shape", _ACCURACY_CASES)
def test_family_accurate_against_mpmath(family, shape):
    """pdf, cdf, sf and ppf at 200 points (|x| from 1e-6 to 1e6, both signs): relative error
    <= 1e-10 wherever the value is a normal double, and 0 only where it underflows."""
    dist = {
        "laplace": lambda s: Laplace(),
        "student_t": StudentT,
        "cauchy": GeneralizedCauchy,
        "polyplace": lambda s: PolyPlace(1.0, s),
    }[family](shape)
    mags = np.geomspace(1e-6, 1e6, 100)
    xs = np.concatenate([-mags, mags])
    with np.errstate(all="ignore"):
        pdf, cdf, sf = dist.pdf(xs), dist.cdf(xs), dist.sf(xs)
    tiny = np.finfo(float).tiny
    for x, p, c, s in zip(xs, pdf, cdf, sf):
        t = _mp_tail(family, shape, abs(x))
        lower, upper = (t, 1 - t) if x < 0 else (1 - t, t)
        for got, ref in ((p, _mp_pdf(family, shape, x)), (c, lower), (s, upper)):
            if ref > 2 * tiny:
                assert abs(got - ref) <= 1e-10 * ref, (family, shape, x, got, float(ref))
            else:
                assert 0 <= got <= 4 * tiny
        # ppf: backward error of the returned quantile, in probability
        q = float(lower)
        if 2 * tiny < q < 1 and q != 0.5:
            z = float(dist.ppf(q))
            assert np.isfinite(z)
            tz = _mp_tail(family, shape, abs(z))
            fz = tz if z < 0 else 1 - tz
            assert abs(fz - q) <= 1e-10 * min(q, 1 - q) + 1e-15 * q, (family, shape, q, z)


def test_known_edge_failures_fixed():
    assert GeneralizedCauchy(20).cdf(-0.1) == pytest.approx(0.4502053632378, rel=1e-12)
    assert np.isfinite(LaplaceLogNormal(30.0).pdf(0.0))
    assert LaplaceLogNormal(30.0).pdf(0.0) == pytest.approx(math.exp(450.0) / 2, rel=1e-12)  # E e^{-sY} / 2
    assert LaplaceLogNormal(1.0).pdf(0.0) == pytest.approx(math.exp(0.5) / 2, rel=1e-12)


# --------------------------------------------------------------------------- #
# every calibration rounded so that its stated guarantee holds
# --------------------------------------------------------------------------- #


def _exact_scale(family, E, g, D, c):
    """The calibration constant of Theorem 8 / Claims 16-18 / Proposition 3 at 300 bits, from the
    exact rationals E (epsilon as calibrated), g, D (delta), c (shape), written out again."""
    ctx = mp.MPContext()
    ctx.prec = 300
    q = lambda f: ctx.mpf(f.numerator) / f.denominator  # noqa: E731
    E, g = q(E), q(Fraction(g))
    if family == "polyplace":
        return 1 / g
    if family == "laplace":
        return 1 / (E - g * ctx.log(2 / q(D)))
    c = q(Fraction(c))
    if family == "cauchy":
        return (c + 1) / (E - g * (c + 1))
    if family == "student_t":
        return (c + 1) / (2 * ctx.sqrt(c) * (E - g * (c + 1)))
    return ctx.exp(3 * c * c / 2) / (E - g / c)


_fam = st.sampled_from(["polyplace", "laplace", "cauchy", "student_t", "laplace_log_normal"])
_eps = st.one_of(st.floats(0.01, 10.0), st.sampled_from([0.1, 0.3, 1.0, 0.1234564, 2.0 / 3.0]))


@given(family=_fam, eps=_eps, frac=st.floats(0.001, 0.999), delta=st.floats(1e-12, 0.5), shape=st.floats(0.2, 30))
@settings(max_examples=300, deadline=None)
def test_calibration_scale_rounded_so_the_guarantee_holds(family, eps, frac, delta, shape):
    """The scale is at least the exact constant (a larger scale is the same mechanism with a larger
    gamma-smooth bound) and at most 2 ulps above it; PolyPlace's alpha times gamma is at most the
    stated epsilon; the text's decimals are what the calibration used (or more), rho is rounded up.
    Rounded to nearest, about half of the scales would fall below the exact constant."""
    kw = {"delta": delta} if family == "laplace" else {}
    if family in ("cauchy", "student_t"):
        shape = shape + 1.0 if family == "cauchy" else shape
        kw["shape"] = shape
    elif family == "laplace_log_normal":
        kw["shape"] = shape
    gamma = frac * _gamma_sup(family, eps, delta, kw.get("shape"))
    try:
        cal = calibrate(family, eps, gamma, **kw)
    except ValueError:
        return  # gamma at the edge of the range after rounding: refused, which is safe
    E = min(Fraction(eps), Fraction(f"{eps:g}"))
    assert Fraction(f"{eps:g}") >= E and Fraction(eps) >= E
    D = min(Fraction(delta), Fraction(f"{delta:g}")) if family == "laplace" else None
    exact = _exact_scale(family, E, gamma, D, cal.shape)
    assert mp.mpf(cal.scale) >= exact, (family, cal.scale, exact)
    assert cal.scale <= math.nextafter(math.nextafter(float(exact), math.inf), math.inf)
    if family == "polyplace":
        assert Fraction(cal.shape) * Fraction(gamma) <= E  # Theorem 8 with eps' = alpha gamma <= eps
        assert cal.guarantee == f"{eps:g}-DP"
    if family == "laplace":
        assert cal.guarantee == f"({eps:g}, {delta:g})-DP"
    if family == "laplace_log_normal":
        stated = Fraction(cal.guarantee.rpartition("=")[2])
        assert stated >= E * E / 2 and Fraction(cal.rho) >= E * E / 2
        assert stated <= E * E / 2 * (1 + Fraction(1, 10**5))


def _gamma_sup(family, eps, delta, shape):
    if family == "polyplace":
        return eps
    if family == "laplace":
        return eps / math.log(2 / delta)
    if family in ("cauchy", "student_t"):
        return eps / (shape + 1)
    return eps * shape


def test_calibration_rounding_examples():
    """Hand-checked cases: gamma = 0.1 as a double is above 1/10, so alpha = 1/0.1 < 10 rounds down
    to 9.999999999999998; eps = 0.1234564 is stated as 0.123456 and calibrated at 0.123456."""
    cal = calibrate("polyplace", 1.0, 0.1)
    assert cal.shape == 9.999999999999998 and Fraction(cal.shape) * Fraction(0.1) <= 1
    assert cal.scale >= 10.0  # 1/0.1 = 9.99999999999999944..., rounded up to 10
    st_ = calibrate("student_t", 0.1234564, 0.01, shape=3.0)
    want = (4) / (2 * mp.sqrt(3) * (mp.mpf("0.123456") - mp.mpf(0.01) * 4))
    assert st_.guarantee == "0.123456-DP" and st_.scale >= want and st_.scale < want * (1 + 1e-15)
    assert calibrate("laplace_log_normal", 0.1, 0.01).guarantee == "rho-zCDP with rho=0.005"


def test_hostile_shape_is_refused_at_once_not_computed():
    """A huge Laplace-log-normal shape made the exact scale e^(3 shape^2 / 2) a Fraction with a
    power of two of astronomical size (a fuzz run grew past 8 GB); it is refused at once."""
    import time

    t0 = time.perf_counter()
    for shape in (40.0, 1e10, 1e150):
        with pytest.raises(ValueError, match="shape"):
            calibrate("laplace_log_normal", 1.0, 0.1, shape=shape)
    assert time.perf_counter() - t0 < 5.0
