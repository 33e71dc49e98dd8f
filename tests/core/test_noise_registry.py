"""The noise-family registry: a sixth family defined only here works end to end,
and every vocabulary of the package (spec, CLI, panels, charts) is the registry's.

The sixth family is Student's t with d = 3 fixed, written from its closed-form cdf
(F(t) = 1/2 + (atan(t / sqrt 3) + sqrt(3) t / (t^2 + 3)) / pi) and Hladik and Tetek's Claim 17
at d = 3 (scale 4 / (2 sqrt(3) (eps - 4 gamma)), std 2 / (eps - 4 gamma)); none of it comes
from the package's Student's t.  The lattice sampler is exact, so with the same random bits it
must give the same cell as the package's ``student_t`` with ``shape=3``.
"""

import json
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
import scipy.stats as sst
from flint import arb
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.cli import main_run
from smoothdp_nb.core.release import lattice
from smoothdp_nb.core.release.noise import (
    Calibration,
    NoiseFamily,
    calibrate,
    canonical_family,
    families,
    family_aliases,
    family_names,
    gamma_range,
    get_family,
    noise_std,
    register_family,
    unregister_family,
)
from smoothdp_nb.core.release.noise.base import calibration_value
from smoothdp_nb.core.release.smooth_sensitivity import DEFAULT_GAMMA, compare_noise, release
from smoothdp_nb.display import noise_chart, noise_figure
from smoothdp_nb.display.noise import FAMILY_LABELS, family_labels
from smoothdp_nb.display.release import release_density
from smoothdp_nb.spec import SpecError, parse_spec, run_spec

NAME, LABEL = "test_t3", "Student's t, d = 3 (test family)"


def _exact_scale(eps: float, gamma: float) -> mp.mpf:
    with mp.workdps(60):
        E, G = calibration_value(eps), Fraction(gamma)
        b = mp.mpf(E.numerator) / E.denominator - 4 * mp.mpf(G.numerator) / G.denominator
        return 4 / (2 * mp.sqrt(3) * b)


def _up(x: mp.mpf) -> float:
    """The smallest double >= x (x known to 60 digits: far from a tie for these inputs)."""
    f = float(x)
    return math.nextafter(f, math.inf) if mp.mpf(f) < x else f


class StudentT3(NoiseFamily):
    """Student's t with 3 degrees of freedom, epsilon-DP for gamma < epsilon / 4 (Claim 17 at d = 3)."""

    name = NAME
    label = LABEL
    aliases = ("t-three",)
    guarantee = "epsilon-DP (Hladik and Tetek, Claim 17 at d = 3)"

    def distribution(self, shape):
        return sst.t(3)

    def tail_enclosure(self, a, shape):
        # P(Z > a) = (atan(sqrt(3) / a) - sqrt(3) a / (a^2 + 3)) / pi for a > 0
        r3 = arb(3).sqrt()
        return ((r3 / a).atan() - r3 * a / (a * a + 3)) / arb.pi()

    def _gamma_sup(self, eps, delta, shape):
        return eps / 4.0

    def _std(self, eps, gamma, delta, shape):
        return 2.0 / (eps - 4.0 * gamma)

    def _calibrate(self, eps, gamma, delta, shape):
        self._check_gamma_in_range(eps, gamma, delta, shape)
        scale = _up(_exact_scale(eps, gamma))
        return Calibration(self.name, eps, gamma, None, None, scale, sst.t(3), math.sqrt(3.0) * scale, f"{eps:g}-DP")


@pytest.fixture
def sixth():
    fam = register_family(StudentT3())
    try:
        yield fam
    finally:
        unregister_family(NAME)


X = np.random.default_rng(11).normal(40.0, 12.0, 257)


def test_sixth_family_calibrates(sixth):
    assert family_names()[-1] == NAME and get_family("T-Three") is sixth and canonical_family("test t3") == NAME
    for eps, g in [(1.0, 0.1), (0.3, 0.01), (2.0, 0.49)]:
        cal = calibrate("t-three", eps, g)
        exact = _exact_scale(eps, g)
        assert mp.mpf(cal.scale) >= exact and mp.mpf(math.nextafter(cal.scale, 0.0)) < exact
        assert cal.guarantee == f"{eps:g}-DP" and cal.family == NAME
        assert noise_std(NAME, eps, g) == pytest.approx(2.0 / (eps - 4.0 * g), rel=1e-15)
        # the same mechanism as the package's Student's t at d = 3 (Claim 17): the same rounded scale
        assert calibrate("student_t", eps, g, shape=3.0).scale == cal.scale
    assert gamma_range(NAME, 1.0) == 0.25 and noise_std(NAME, 1.0, 0.3) == math.inf
    with pytest.raises(ValueError, match=r"gamma must satisfy 0 < gamma < 0.25 for test_t3"):
        calibrate(NAME, 1.0, 0.25)
    with pytest.raises(ValueError, match="shape must be None for family 'test_t3'"):
        calibrate(NAME, 1.0, 0.1, shape=3.0)


def test_sixth_family_releases_exactly(sixth):
    """Exact lattice sampling: the same bits give the same cell as student_t with d = 3."""
    for seed in range(5):
        mine = release(X, "median", 1.0, gamma=0.1, noise=NAME, bounds=(0, 100), rng=seed, diagnostics=True)
        ref = release(X, "median", 1.0, gamma=0.1, noise="student_t", shape=3.0, bounds=(0, 100), rng=seed)
        assert mine.value == ref.value and mine.noise == NAME and mine.shape is None
        assert mine.guarantee == "1-DP" and mine.diagnostics.noise_std == pytest.approx(
            mine.diagnostics.sensitivity_bound * 2.0 / (1.0 - 0.4), rel=1e-14
        )
    r = release(X, "mean", 1.0, noise=NAME, bounds=(0, 100), rng=1)
    assert r.gamma == 0.1 and r.gamma_source == "default: epsilon / 10" and DEFAULT_GAMMA[NAME] == "epsilon / 10"


def test_sixth_family_cell_probability_matches_its_cdf(sixth):
    def F(t):
        t = mp.mpf(t)
        return mp.mpf(1) / 2 + (mp.atan(t / mp.sqrt(3)) + mp.sqrt(3) * t / (t * t + 3)) / mp.pi

    with mp.workdps(50):
        for k in (-3, 0, 2, 5):
            ball = lattice.cell_probability(NAME, None, 0.3, 1.7, 0.25, k, -40, 40)
            ref = F(((k + 0.5) * 0.25 - 0.3) / 1.7) - F(((k - 0.5) * 0.25 - 0.3) / 1.7)
            assert abs(float(ball.mid()) - float(ref)) <= 1e-15 * float(ref)


def test_sixth_family_in_specs_and_the_cli(sixth, tmp_path):
    values = [float(v) for v in X]
    text = f'compute = "release"\nvalues = {values}\nbounds = [0, 100]\nepsilon = 1\ngamma = 0.1\nrng = 3\n'
    for spelling in (NAME, "T-Three"):
        rep = run_spec(text + f'noise = "{spelling}"\n')
        direct = release(X, "median", 1.0, gamma=0.1, noise=NAME, bounds=(0, 100), rng=3)
        assert rep.release.value == direct.value and rep.release.noise == NAME
    table = run_spec(f'compute = "noise"\nepsilon = 1\ngamma = [0.01, 0.1, 0.2]\nfamilies = ["{NAME}", "polyplace"]')
    frame = table.table
    mine = frame[frame["family"] == NAME]
    assert np.allclose(mine["std"], [2.0 / (1.0 - 4.0 * g) for g in (0.01, 0.1, 0.2)], rtol=1e-15, atol=0)
    path = tmp_path / "t3.toml"
    path.write_text(text + 'noise = "t-three"\n', encoding="utf-8")
    out = tmp_path / "t3.json"
    assert main_run([str(path), "--json", str(out), "--quiet"]) == 0
    assert NAME in json.dumps(json.loads(out.read_text(encoding="utf-8")))


def test_sixth_family_in_charts_and_panels(sixth):
    frame = compare_noise(1.0, np.geomspace(1e-3, 0.24, 12), families=["polyplace", NAME])
    assert frame[frame["family"] == NAME]["shape"].isna().all()
    chart = json.dumps(noise_chart(frame, gamma=0.1).to_dict())
    assert LABEL in chart  # its legend entry, and its line's rows carry the label
    lines = noise_figure(frame).frames["lines"]
    assert len(lines[lines["noise"] == LABEL]) == 12 and family_labels()[NAME] == LABEL == FAMILY_LABELS[NAME]
    # its density (drawn for a curator's diagnostics) is its own distribution's shape
    dens = release_density(NAME, 1.0, 0.1, 2.0, 50.0)
    z = (dens["x"].to_numpy() - 50.0) / 2.0
    # the t(3) density, Gamma(2) / (sqrt(3 pi) Gamma(3/2)) (1 + z^2/3)^-2, written out
    t3 = 6.0 * np.sqrt(3.0) / (np.pi * (3.0 + z * z) ** 2)
    assert np.allclose(dens["density"].to_numpy(), t3 / 2.0, rtol=1e-12, atol=0)
    r = release(X, "median", 1.0, gamma=0.1, noise=NAME, bounds=(0, 100), rng=2, diagnostics=True)
    report = sdp.core.release.reports.ReleaseReport(r, name="x")
    assert "area" in json.dumps(report.chart().to_dict())

    from smoothdp_nb.panels.noise import NoiseComparisonPanel
    from smoothdp_nb.panels.release import ReleasePanel

    panel = NoiseComparisonPanel(points=5)
    assert (LABEL, NAME) in list(panel.families.options)
    rel = ReleasePanel(pd.Series(X, name="x"), bounds=(0, 100))
    assert (LABEL, NAME) in list(rel.noise.options)


def test_unregistered_family_is_gone_everywhere():
    register_family(StudentT3())
    unregister_family("t-three")
    assert NAME not in family_names() and "t_three" not in family_aliases()
    with pytest.raises(ValueError, match="family must be one of"):
        calibrate(NAME, 1.0, 0.1)
    with pytest.raises(SpecError, match="noise"):
        parse_spec(f'compute = "release"\nvalues = [1.0, 2.0]\nbounds = [0, 10]\nepsilon = 1\nnoise = "{NAME}"')


# --------------------------------------------------------------------------- #
# the registry's invariants
# --------------------------------------------------------------------------- #
_SHAPES = {"polyplace": 10.0, "cauchy": 4.0, "student_t": 5.0, "laplace": None, "laplace_log_normal": 0.5}


@pytest.mark.parametrize("fam", families(), ids=lambda f: f.name)
def test_every_family_has_every_member(fam):
    assert isinstance(fam.name, str) and canonical_family(fam.name) == fam.name
    assert isinstance(fam.label, str) and fam.label and fam.guarantee and fam.default_gamma_text
    assert isinstance(fam.aliases, tuple) and all(canonical_family(a) == fam.name for a in fam.aliases)
    assert isinstance(fam.free_shape, bool) and isinstance(fam.needs_delta, bool)
    assert fam.shape_name is None or isinstance(fam.shape_name, str)
    delta = 1e-6 if fam.needs_delta else None
    g = fam.default_gamma(1.0, delta)
    assert 0 < g < fam.gamma_range(1.0, delta)
    cal = fam.calibrate(1.0, g, delta)
    assert cal.family == fam.name and cal.scale > 0 and cal.guarantee
    assert cal.std == pytest.approx(fam.noise_std(1.0, g, delta), rel=1e-6)
    if fam.free_shape:
        assert cal.shape == fam.optimal_shape(1.0, g)
    else:
        with pytest.raises(ValueError, match="no free shape parameter"):
            fam.optimal_shape(1.0, g)
    # the exact tail the sampler uses agrees with the float distribution (the mixture's is of its Laplace factor)
    shape = _SHAPES.get(fam.name)
    dist = sst.laplace() if fam.log_normal_mixture else fam.distribution(shape)
    for a in (0.01, 0.7, 3.0, 40.0):
        tail = fam.tail_enclosure(arb(a), 0.0 if shape is None else shape)
        assert float(tail.mid()) == pytest.approx(float(dist.sf(a)), rel=1e-9)
        cdf = fam.cdf_enclosure(arb(-a), -1, 0.0 if shape is None else shape)
        assert float(cdf.mid()) == pytest.approx(float(fam.distribution(shape).cdf(-a)), rel=1e-9)


def test_alias_table_has_no_clash():
    table = family_aliases()
    spellings = [f.name for f in families()] + [
        a.lower().replace("-", "_").replace(" ", "_") for f in families() for a in f.aliases
    ]
    assert len(spellings) == len(set(spellings))
    assert all(canonical_family(s) == n for s, n in table.items())
    labels = [f.label for f in families()]
    assert len(labels) == len(set(labels))

    class Clash(StudentT3):
        aliases = ("generalized-cauchy",)

    with pytest.raises(ValueError, match="'generalized_cauchy' is already taken by family 'cauchy'"):
        register_family(Clash())

    class SameName(StudentT3):
        name = "laplace"

    with pytest.raises(ValueError, match="'laplace' is already taken"):
        register_family(SameName())

    class SameLabel(StudentT3):
        label = "PolyPlace"

    with pytest.raises(ValueError, match="label 'PolyPlace' is already used by 'polyplace'"):
        register_family(SameLabel())

    class Reserved(StudentT3):
        aliases = ("laplace-global",)

    with pytest.raises(ValueError, match="reserved"):
        register_family(Reserved())
    with pytest.raises(TypeError, match="NoiseFamily instance"):
        register_family("polyplace")

    class Nameless(StudentT3):
        name = None

    with pytest.raises(TypeError, match="needs a str name"):
        register_family(Nameless())

    class NotCanonical(StudentT3):
        name = "Test-T3"

    with pytest.raises(ValueError, match="lower case with words joined by '_'"):
        register_family(NotCanonical())
    assert NAME not in family_names()  # a refused registration leaves nothing behind


def test_spec_cli_and_panel_vocabulary_is_the_registry(tmp_path):
    from smoothdp_nb.panels.noise import NoiseComparisonPanel
    from smoothdp_nb.panels.release import ReleasePanel

    names = family_names()
    for spelling, name in family_aliases().items():
        doc = f'compute = "release"\nvalues = [1.0, 2.0, 3.0]\nbounds = [0, 10]\nepsilon = 1\nnoise = "{spelling}"'
        if get_family(name).needs_delta:
            doc += "\ndelta = 1e-6"
        assert parse_spec(doc).params["noise"] == name
        fams = parse_spec(f'compute = "noise"\nepsilon = 1\ngamma = 0.1\ndelta = 1e-6\nfamilies = ["{spelling}"]')
        assert fams.params["families"] == [name]
    with pytest.raises(SpecError) as err:
        parse_spec('compute = "release"\nvalues = [1.0]\nbounds = [0, 10]\nepsilon = 1\nnoise = "gauss"')
    assert all(repr(n) in str(err.value) for n in names)
    # the CLI runs specs: every family by name
    path = tmp_path / "all.toml"
    path.write_text(f'compute = "noise"\nepsilon = 1\ngamma = [0.01]\ndelta = 1e-6\nfamilies = {list(names)}\n')
    out = tmp_path / "all.json"
    assert main_run([str(path), "--json", str(out), "--quiet"]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert all(n in json.dumps(got) for n in names)
    assert [v for _, v in NoiseComparisonPanel(points=5).families.options] == list(names)
    rel = ReleasePanel(pd.Series(X, name="x"), bounds=(0, 100))
    assert [v for _, v in rel.noise.options] == list(names)
    assert [lab for lab, _ in rel.noise.options] == [get_family(n).label for n in names]
    assert list(family_labels()) == [*names, "laplace_global"] and dict(FAMILY_LABELS) == family_labels()


@st.composite
def _spellings(draw):
    """A name or alias of a registered family, in random case with random separators between its words."""
    fam = draw(st.sampled_from(families()))
    word = draw(st.sampled_from((fam.name, *fam.aliases)))
    parts = word.replace("-", "_").replace(" ", "_").split("_")
    seps = [draw(st.sampled_from("_- ")) for _ in parts[1:]]
    text = parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:]))
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return fam.name, "".join(c.upper() if f else c for c, f in zip(text, flips))


@settings(max_examples=200, deadline=None)
@given(_spellings())
def test_every_spelling_means_the_same_family_everywhere(case):
    name, spelling = case
    assert canonical_family(spelling) == name and get_family(spelling).name == name
    assert family_aliases()[spelling.lower()] == name
    assert parse_spec(f'compute = "noise"\nepsilon = 1\ngamma = 0.1\ndelta = 1e-6\nfamilies = ["{spelling}"]').params[
        "families"
    ] == [name]
