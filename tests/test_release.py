"""Tests for smoothdp_nb.core.release."""

import math

import numpy as np
import pandas as pd
import pytest

from smoothdp_nb.core.release import Release, compare_noise, default_gamma, release


@pytest.fixture
def data():
    return np.random.default_rng(0).uniform(0, 100, 501)


def test_release_never_shows_true_value(data):
    true = float(np.sort(data)[250])
    r = release(data, "median", epsilon=1.0, bounds=(0, 100), rng=3)
    assert isinstance(r, Release)
    assert r.true_value is None
    text = repr(r) + str(r) + r.to_frame().to_string() + repr(r.to_dict())
    for fmt in ("{:.6g}", "{:.4f}", "{!r}", "{:.3f}"):
        assert fmt.format(true) not in text
    assert "true_value" not in r.to_dict() and "true_value" not in r.to_frame().columns
    assert f"{r.value:.6g}" in repr(r) and "epsilon=1" in repr(r) and "polyplace" in repr(r)
    r2 = release(data, "median", epsilon=1.0, bounds=(0, 100), rng=3, reveal_true=True)
    assert r2.true_value == true
    assert "true_value" not in r2.to_dict()
    with pytest.raises(Exception):
        r.value = 0.0  # frozen


def test_release_value_is_true_plus_calibrated_noise(data):
    # reconstruct the draw independently: Theorem 8 noise is SS/gamma * PolyPlace(1, eps/gamma)
    from smoothdp_nb.core.noise import PolyPlace
    from smoothdp_nb.core.sensitivity import smooth_sensitivity
    r = release(data, "median", epsilon=0.5, gamma=0.05, bounds=(0, 100), rng=7, reveal_true=True)
    ss = smooth_sensitivity(data, "median", 0.05, bounds=(0, 100))
    z = PolyPlace(1.0, 0.5 / 0.05).rvs(random_state=np.random.default_rng(7))
    assert r.value == pytest.approx(r.true_value + ss / 0.05 * z, rel=1e-14)
    assert r.noise_scale == pytest.approx(ss / 0.05, rel=1e-14)
    assert r.smooth_sensitivity == ss and r.gamma_source == "user"


def test_release_reproducible_and_fresh_entropy(data):
    a = release(data, bounds=(0, 100), rng=11).value
    b = release(data, bounds=(0, 100), rng=np.random.default_rng(11)).value
    assert a == b
    vals = {release(data, bounds=(0, 100)).value for _ in range(5)}  # rng=None: OS entropy
    assert len(vals) == 5


def test_default_gamma_is_data_independent_and_reported(data):
    r1 = release(data, bounds=(0, 100), rng=1)
    r2 = release(data[:50] * 0.1, bounds=(0, 100), rng=1)
    assert r1.gamma == r2.gamma == 0.1 and "default" in r1.gamma_source
    assert default_gamma("laplace", 1.0, 1e-5) == pytest.approx(1 / (2 * math.log(2e5)))
    r = release(data, noise="laplace", delta=1e-5, bounds=(0, 100), rng=1)
    assert r.delta == 1e-5 and "(1, 1e-05)-DP" == r.guarantee


@pytest.mark.parametrize("fam", ["polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal"])
def test_release_noise_distribution_matches_noise_std(fam):
    # empirical spread of many releases on fixed data vs SS * noise_std (robust: IQR ratio)
    from smoothdp_nb.core.noise import calibrate
    x = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    rng = np.random.default_rng(5)
    vals = np.array([release(x, "median", 1.0, gamma=0.05, noise=fam, bounds=(0, 100), rng=rng,
                             delta=1e-5 if fam == "laplace" else None).value for _ in range(1500)])
    r = release(x, "median", 1.0, gamma=0.05, noise=fam, bounds=(0, 100), rng=0,
                delta=1e-5 if fam == "laplace" else None)
    cal = calibrate(fam, 1.0, 0.05, delta=1e-5 if fam == "laplace" else None)
    iqr = np.subtract(*np.quantile(vals - 30.0, [0.75, 0.25]))
    expect = r.noise_scale * np.subtract(*cal.distribution.ppf([0.75, 0.25]))
    assert iqr == pytest.approx(expect, rel=0.12)
    if fam == "laplace_log_normal":
        assert r.rho == 0.5 and "zCDP" in r.guarantee


def test_compare_noise_tidy_frame():
    df = compare_noise(1.0, [0.01, 0.1, 0.3], delta=1e-5, reference=True)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["family", "epsilon", "delta", "gamma", "shape", "std"]
    assert set(df.family) == {"polyplace", "student_t", "cauchy", "laplace", "laplace_global"}
    assert len(df) == 15
    pp = df[(df.family == "polyplace") & (df.gamma == 0.1)]["std"].item()
    t = df[(df.family == "student_t") & (df.gamma == 0.1)]["std"].item()
    assert pp < t
    assert df[(df.family == "laplace") & (df.gamma == 0.3)]["std"].item() == math.inf
    # Claim 18 at gamma = 0.01
    la = df[(df.family == "laplace") & (df.gamma == 0.01)]["std"].item()
    assert la == pytest.approx(math.sqrt(2) / (1 - 0.01 * math.log(2 / 1e-5)), rel=1e-14)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(gamma=1.0), "0 < gamma < 1 for polyplace"),
        (dict(gamma=1.5), "gamma must satisfy"),
        (dict(gamma=0.4, noise="student_t"), "gamma must satisfy"),
        (dict(epsilon=0.0), "0 < epsilon"),
        (dict(epsilon=-1.0), "0 < epsilon"),
        (dict(x=[]), "non-empty"),
        (dict(x=[1.0, float("nan")]), "NaN"),
        (dict(bounds=(5, 5)), "low < high"),
        (dict(bounds=None), "bounds"),
        (dict(query="mode"), "query must be one of"),
        (dict(noise="gauss"), "family must be one of"),
        (dict(noise="laplace"), "delta is required"),
    ],
)
def test_release_bad_input(kwargs, match):
    args = dict(x=[1.0, 2.0, 3.0], query="median", epsilon=1.0, bounds=(0, 10), rng=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        release(**args)


def test_release_bad_rng():
    with pytest.raises(TypeError, match="rng"):
        release([1.0], bounds=(0, 2), rng="seed")
