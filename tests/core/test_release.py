"""Tests for smoothdp_nb.core.release.smooth_sensitivity."""

import dataclasses
import math

import mpmath
import numpy as np
import pandas as pd
import pytest

from smoothdp_nb.core.numerics.formatting import format_value
from smoothdp_nb.core.release.smooth_sensitivity import Release, compare_noise, default_gamma, release


@pytest.fixture
def data():
    return np.random.default_rng(0).uniform(0, 100, 501)


PUBLIC_KEYS = [
    "value",
    "lattice",
    "query",
    "n",
    "bounds_low",
    "bounds_high",
    "epsilon",
    "delta",
    "rho",
    "gamma",
    "gamma_source",
    "noise",
    "shape",
    "guarantee",
]


def _texts(r):
    return [repr(r), str(r), r.to_frame().to_string(), repr(r.to_dict()), r.to_frame().to_json()]


def test_release_never_shows_true_value(data):
    true = float(np.sort(data)[250])
    r = release(data, "median", epsilon=1.0, bounds=(0, 100), rng=3)
    assert isinstance(r, Release)
    assert r.true_value is None
    for text in _texts(r):
        for fmt in ("{:.6g}", "{:.4f}", "{!r}", "{:.3f}"):
            assert fmt.format(true) not in text
    assert "true_value" not in r.to_dict() and "true_value" not in r.to_frame().columns
    assert f"value={format_value(r.value, r.lattice)}," in repr(r) and "epsilon=1" in repr(r) and "polyplace" in repr(r)
    r2 = release(data, "median", epsilon=1.0, bounds=(0, 100), rng=3, reveal_true=True)
    assert r2.true_value == true
    assert "true_value" not in r2.to_dict() and all(repr(true) not in t for t in _texts(r2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 0.0  # type: ignore[misc]


def test_default_exports_hold_public_numbers_only():
    # the median of one record: the smooth sensitivity would give the record (100 - 3.14159)
    r = release([3.14159], "median", 1.0, bounds=(0, 100), rng=1)
    assert r.diagnostics is None
    assert list(r.to_dict()) == PUBLIC_KEYS and list(r.to_frame().columns) == PUBLIC_KEYS
    rd = release([3.14159], "median", 1.0, bounds=(0, 100), rng=1, diagnostics=True)
    ss = rd.diagnostics.smooth_sensitivity
    assert ss > 90  # the leak the default hides
    for text in _texts(r):
        for v in (ss, rd.diagnostics.noise_scale, rd.diagnostics.noise_std, rd.diagnostics.sensitivity_bound):
            assert f"{v:.4g}" not in text and f"{v:.6g}" not in text and repr(v) not in text
        assert "3.14159" not in text and "96.85" not in text
    # opted in: present and labelled in every representation
    assert rd.value == r.value  # the diagnostics do not change the draw
    for text in _texts(rd):
        assert "NOT covered by the privacy guarantee" in text
    assert rd.to_dict()["diagnostics"]["sensitivity_bound"] >= ss
    assert "diagnostics.noise_scale" in rd.to_frame().columns


def test_value_on_the_lattice_inside_the_bounds(data):
    r = release(data, bounds=(0, 100), rng=2)
    assert r.lattice == 2.0**-14  # 2^(floor(log2 100) - 20)
    k = r.value / r.lattice
    assert k == int(k) and 0 <= r.value <= 100
    r = release(data, bounds=(0, 100), rng=2, lattice=0.5)
    assert r.lattice == 0.5 and (r.value * 2) == int(r.value * 2)
    assert "lattice=2⁻¹" in repr(r)
    # heavy noise: clamped on the lattice, never outside the bounds, never non-finite
    vals = [
        release([1.0, 2.0], "mean", 0.1, noise="cauchy", shape=1.0000001, gamma=0.001, bounds=(-3, 7), rng=s).value
        for s in range(40)
    ]
    assert all(math.isfinite(v) and -3 <= v <= 7 and v / 2.0**-18 == int(v / 2.0**-18) for v in vals)
    assert {-3.0, 7.0} <= set(vals) or len(set(vals)) > 1


def test_sensitivity_bound_on_the_grid_and_gamma_accounting(data):
    from smoothdp_nb.core.release.sensitivity import smooth_sensitivity

    r = release(data, "median", epsilon=0.5, gamma=0.05, bounds=(0, 100), rng=7, diagnostics=True)
    d = r.diagnostics
    gamma_s = 0.05 - math.log(2) / 64 - 2.0**-30  # the smoothness left for SS after the grid's ln 2^(1/64)
    assert d.smooth_sensitivity == smooth_sensitivity(data, "median", gamma_s, bounds=(0, 100))
    j = round(64 * math.log2(d.sensitivity_bound))
    exact = mpmath.mpf(2) ** (mpmath.mpf(j) / 64)
    with mpmath.workdps(50):
        assert exact <= d.sensitivity_bound <= exact * (1 + mpmath.mpf(2) ** -49)
        assert mpmath.mpf(2) ** (mpmath.mpf(j - 1) / 64) < d.smooth_sensitivity  # smallest grid point above
    assert d.noise_scale >= d.sensitivity_bound / 0.05  # Theorem 8: scale SS / gamma
    assert d.noise_scale <= d.sensitivity_bound / 0.05 * (1 + 2.0**-50)
    # small gamma: a finer grid keeps ln r <= gamma / 2
    r = release(data, "median", epsilon=0.02, gamma=0.002, bounds=(0, 100), rng=7, diagnostics=True)
    assert r.diagnostics.smooth_sensitivity == smooth_sensitivity(
        data, "median", 0.002 - math.log(2) / 1024 - 2.0**-30, bounds=(0, 100)
    )


@pytest.mark.parametrize(
    "fam,step,draws", [("polyplace", 4.0, 1500), ("student_t", 4.0, 1500), ("laplace_log_normal", 16.0, 800)]
)
@pytest.mark.usefixtures("unpadded_clock")
def test_lattice_law_matches_exact_cell_probabilities(fam, step, draws):
    # coarse lattice so that many cells are hit: chi-square of seeded draws vs the exact law
    from scipy import stats

    from smoothdp_nb.core.release.lattice import cell_probability

    x = [40.0, 45.0, 50.0, 55.0, 60.0]
    d = release(x, "median", 2.0, noise=fam, bounds=(0, 100), lattice=step, rng=0, diagnostics=True)
    g = np.random.default_rng(123)
    ks = (
        np.array(
            [release(x, "median", 2.0, noise=fam, bounds=(0, 100), lattice=step, rng=g).value for _ in range(draws)]
        )
        / step
    )
    top = int(100 // step)
    cells = np.arange(0, top + 1)
    counts = np.array([(ks == c).sum() for c in cells])
    assert counts.sum() == draws
    p = np.array(
        [
            float(cell_probability(fam, d.shape, 50.0, d.diagnostics.noise_scale, step, int(c), 0, top, prec=60))
            for c in cells
        ]
    )
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    keep = p * draws >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(p[keep], p[~keep].sum()) * draws
    chi2 = float(((obs - exp) ** 2 / np.maximum(exp, 1e-300)).sum())
    assert stats.chi2.sf(chi2, len(obs) - 1) > 1e-4, (fam, chi2)


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
    assert default_gamma("laplace", 1.0, delta=1e-5) == pytest.approx(1 / (2 * math.log(2e5)))
    r = release(data, noise="laplace", delta=1e-5, bounds=(0, 100), rng=1)
    assert r.delta == 1e-5 and "(1, 1e-05)-DP" == r.guarantee


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
        (dict(lattice=0.3), "lattice must be a power of two"),
        (dict(lattice=-0.5), "lattice must be a power of two"),
        (dict(lattice=16.0), "lattice <= 8"),
        (dict(bounds=(1e15, 1e15 + 64), lattice=2.0**-4), "lattice must be a power of two with 0.125 <="),
        (dict(bounds=(-1.7e308, 1.7e308)), "high - low < 1.798e"),
        (dict(rng=-1), "rng must be None, an int seed >= 0"),
    ],
)
def test_release_bad_input(kwargs, match):
    args = dict(x=[1.0, 2.0, 3.0], query="median", epsilon=1.0, bounds=(0, 10), rng=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        release(**args)


def test_release_bad_types():
    with pytest.raises(TypeError, match="rng"):
        release([1.0], bounds=(0, 2), rng="seed")
    with pytest.raises(TypeError, match="lattice"):
        release([1.0], bounds=(0, 2), lattice="1")
    with pytest.raises(TypeError, match="diagnostics"):
        release([1.0], bounds=(0, 2), diagnostics="yes")


def test_clipping_is_silent_in_a_release_and_counted_in_diagnostics():
    """How many records lie outside the bounds is a function of the data: a release must not print it
    (a warning shown beside the value is an output too).  The analysis function still warns."""
    import warnings

    from smoothdp_nb.core.release.sensitivity import ClippingWarning, smooth_sensitivity

    x = [1.5, 2.5, 150.0, -3.0, 50.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        plain = release(x, "median", 1.0, bounds=(0, 100), rng=1)
        diag = release(x, "median", 1.0, bounds=(0, 100), rng=1, diagnostics=True)
    assert plain.value == diag.value
    assert diag.diagnostics is not None and diag.diagnostics.clipped == 2
    assert diag.diagnostics.to_dict()["clipped"] == 2
    assert "clipped" not in repr(plain) and "clipped" not in str(plain.to_dict())
    with pytest.warns(ClippingWarning, match="2 value"):
        smooth_sensitivity(x, "median", 0.1, bounds=(0, 100))
