"""compare_releases: every method's exact law and its utility numbers against independent references."""

import math

import numpy as np
import pytest

from smoothdp_nb import compare_releases
from smoothdp_nb.core.release import lattice as _lattice
from tests import methods_reference as ref

T = (0, 1, 1, 3, 4)  # cells on the lattice 1 over bounds (0, 5)
K = 5


def test_laws_and_numbers_against_brute_force():
    c = compare_releases(
        [float(v) for v in T],
        "median",
        1.0,
        bounds=(0.0, float(K)),
        lattice=1.0,
        methods=["exponential", "ism", "ptr", "stability"],
        delta=0.1,
        proposal=1.0,
        tolerance=1.0,
    )
    m = ref.rank(len(T))
    truth = ref.f(T, m)
    assert c.true_value == truth
    assert ref.unbiased_bound(T, K, m, 1.0) <= c.unbiased_bound <= ref.unbiased_bound(T, K, m, 1.0) * (1 + 1e-15)
    refs = {
        "exponential": {**ref.exponential_law(T, K, m, 1.0), "refused": 0},
        "inverse-sensitivity": {**ref.ism_law(T, K, m, 1.0), "refused": 0},
        "propose-test-release": ref.ptr_law(T, K, m, 1.0, 0.1, 1.0),
        "stability": ref.stability_law(T, K, m, 1.0, 0.1),
    }
    table = c.to_frame().set_index("method")
    for name, law in refs.items():
        series = c.law(name)
        for y, p in law.items():
            key = "refused" if y == "refused" else float(y)
            got = float(series.get(key, 0.0))
            assert got == pytest.approx(float(p), rel=1e-12, abs=1e-300), (name, y)
        released = sum(p for y, p in law.items() if y != "refused")
        mse = sum(p * (y - truth) ** 2 for y, p in law.items() if y != "refused") / released
        assert table.loc[name, "mse"] == pytest.approx(float(mse), rel=1e-12)
        within = sum(p for y, p in law.items() if y != "refused" and abs(y - truth) <= 1)
        assert table.loc[name, "p_within_t"] == pytest.approx(float(within), rel=1e-12)
        assert table.loc[name, "p_true_value"] == pytest.approx(float(law[truth]), rel=1e-12)
        assert table.loc[name, "p_refused"] == pytest.approx(float(law["refused"]), rel=1e-12, abs=1e-300)
    # the ISM is exact at least as often as any unbiased eps/4-DP mechanism could be
    assert table.loc["inverse-sensitivity", "p_true_value"] >= float(ref.unbiased_bound(T, K, m, 0.25))


def test_smooth_sensitivity_law_against_arb_cells():
    x = [10.0, 20.0, 30.0, 40.0, 50.0]
    c = compare_releases(x, "median", 1.0, bounds=(0.0, 100.0), lattice=0.5, methods=["smooth-sensitivity"])
    law = c.law("smooth-sensitivity")
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    from smoothdp_nb import release

    r = release(x, "median", 1.0, bounds=(0.0, 100.0), lattice=0.5, diagnostics=True, rng=0)
    for k in (0, 40, 55, 60, 61, 65, 100, 200):  # clamp cell, tails, the true value's cell
        arb_p = _lattice.cell_probability("polyplace", r.shape, 30.0, r.diagnostics.noise_scale, 0.5, k, 0, 200)
        assert law[k * 0.5] == pytest.approx(float(arb_p.mid()), rel=1e-9), k


def test_smooth_sensitivity_is_only_for_the_median_and_lattice_is_bounded():
    with pytest.raises(ValueError, match="median only"):
        compare_releases(
            [1.0, 2.0], "quantile", 1.0, bounds=(0.0, 4.0), lattice=1.0, quantile=0.3, methods=["smooth-sensitivity"]
        )
    from smoothdp_nb import ComputationTooLarge

    with pytest.raises(ComputationTooLarge, match="lattice"):
        compare_releases([1.0, 2.0], "median", 1.0, bounds=(0.0, 100.0), lattice=2.0**-40)


def test_chart_shows_every_method_and_the_refusals():
    import smoothdp_nb.display  # noqa: F401  (registers the chart)

    x = np.random.default_rng(3).uniform(0.3, 0.7, 41)
    c = compare_releases(x, "median", 1.0, bounds=(0.0, 1.0), lattice=2.0**-8, delta=1e-3, proposal=0.05)
    spec = c.chart().to_dict()
    labels = spec["encoding"]["color"]["scale"]["domain"]
    assert len(labels) == 5
    assert any("⊥" in lab for lab in labels)
    assert math.isclose(c.to_frame()["p_refused"].max(), c.law("stability")["refused"])
