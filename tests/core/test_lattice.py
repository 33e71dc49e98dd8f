"""Tests for smoothdp_nb.core.release.lattice: exact lattice sampling of releases with proven enclosures."""

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx

from smoothdp_nb.core.release import lattice as L
from smoothdp_nb.core.release.noise import get_family
from tests.lattice_reference import TAILS, cdf, context

CASES = [
    ("laplace", None),
    ("polyplace", 1.5),
    ("polyplace", 10.0),
    ("student_t", 0.7),
    ("student_t", 5.0),
    ("student_t", 100.0),
    ("student_t", 1e6),
    ("cauchy", 1.2),
    ("cauchy", 4.0),
    ("cauchy", 40.0),
]


def _density(mp, family, shape):
    """The standard densities as defined (Hladik-Tetek Def. 6, Claims 16-18), written out again."""
    if family == "laplace":
        return lambda z: mp.exp(-z) / 2
    if family == "student_t":
        d = mp.mpf(shape)
        c = mp.gamma((d + 1) / 2) / (mp.sqrt(d * mp.pi) * mp.gamma(d / 2))
        return lambda z: c * (1 + z * z / d) ** (-(d + 1) / 2)
    if family == "cauchy":
        c = mp.mpf(shape)
        return lambda z: c * mp.sin(mp.pi / c) / (2 * mp.pi) / (1 + z**c)
    a = mp.mpf(shape)
    N = a / (2 * (2 * ((a - 1) / a) ** a + a - 1))
    return lambda z: (
        N * (a - 1) * (1 - z) ** (a - 1) if z * a < 1 else N * (a + 1) * (1 - 1 / a**2) ** a * (1 + z) ** (-a - 1)
    )


def _contains(ball, x_mp):
    """Does the Arb ball contain the mpmath number (to the mpmath number's own precision)?"""
    m, e = x_mp.man_exp
    return ball.contains(arb((int(m), int(e)))) if x_mp != 0 else ball.contains(0)


@pytest.mark.parametrize("family,shape", CASES)
def test_reference_tails_match_quadrature_of_the_density(family, shape):
    """The mpmath references are right: T(a) = 1/2 - int_0^a f below a = 1/2, int_a^inf f beyond
    (quadrature at 200 bits, split at the density's seams) to 2^-36 relative."""
    mp = context(200)
    f = _density(mp, family, shape)
    for a in (1e-9, 0.05, 0.3, 0.66, 1.0, 2.5, 9.0):
        a = mp.mpf(a)
        seams = [mp.mpf(1)] + ([1 / mp.mpf(shape)] if family == "polyplace" else [])
        if a < 0.5:
            ref = mp.mpf(1) / 2 - mp.quad(f, [0] + sorted(x for x in seams if x < a) + [a])
        else:
            ref = mp.quad(f, [a] + sorted(x for x in seams if x > a) + [a + 1, 4 * a + 4, mp.inf])
        got = TAILS[family](mp, a, shape)
        assert abs(got - ref) <= ref * mp.mpf(2) ** -36, (family, shape, float(a), float(got), float(ref))


@pytest.mark.parametrize("family,shape", CASES)
@pytest.mark.parametrize("prec", [64, 224, 600])
def test_arb_tails_enclose_the_reference_and_are_tight(family, shape, prec):
    """Every Arb tail ball contains the 900-bit mpmath value and is tight: radius below 2^-(prec - 28)
    (absolute accuracy is what the comparisons with U need; the sampler's failure bound uses it), and
    relative radius below 2^-(prec - 40) unless the whole ball is below 2^-(prec + 7), including Student's t at d = 100 near a = 9.9 (where
    (1 - I)/2 would cancel) and the PolyPlace seam a = 1/alpha (ball straddling it)."""
    mp = context(900)
    points = [1e-9, 0.05, 0.3, 0.66, 0.999, 1.0, 2.5, 9.9, 1e3, 1e30]
    if family == "polyplace":
        points.append(1.0 / shape)
    with L._precision(prec):
        for a in points:
            ball = arb(a)
            if family == "polyplace" and a == 1.0 / shape:
                ball = arb(a).union(arb(a * (1 + 2.0**-40)))  # straddles 1/alpha
            got = get_family(family).tail_enclosure(ball, 0.0 if shape is None else shape)
            ref = TAILS[family](mp, mp.mpf(a), shape)
            assert _contains(got, ref), (family, shape, a, prec)
            if ball.is_exact():  # absolutely tight: the radius the failure-probability bound uses
                assert got.rad() <= arb(2) ** -(prec - 28), (family, shape, a, prec, got)
                if family != "student_t" or shape < 1e6:  # and relatively tight where T is not negligible
                    assert got.rad() <= abs(got.mid()) * arb(2) ** -(prec - 40) or got.upper() <= arb(2) ** -(
                        prec + 7
                    ), (family, shape, a, prec, got)


def test_normal_cdf_encloses_mpmath():
    mp = context(600)
    with L._precision(300):
        for y in (-37.5, -8.0, -1.25, 0.0, 0.5, 3.0, 20.0):
            assert _contains(L._normal_cdf(arb(y)), mp.ncdf(mp.mpf(y)))
            assert L._normal_cdf(arb(y)).rel_accuracy_bits() > 250


def _frac(x):
    m, e = x.mid().man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def test_uniform_comparison_is_exact():
    """compare() is decided only when the ball is on one side of U's dyadic interval (Fraction check)."""
    rng = np.random.default_rng(0)
    with L._precision(300):
        for _ in range(300):
            bits = int(rng.integers(1, 5)) * 64
            words = iter([int(rng.integers(0, 2**64, dtype=np.uint64)) for _ in range(bits // 64)])
            u = L._LazyUniform(lambda: next(words), bits)
            f = Fraction(u.m, 2**bits) + Fraction(int(rng.integers(-3, 4)), 2 ** (bits + 1))
            rad = Fraction(int(rng.integers(0, 3)), 2 ** (bits + 2))
            ball = arb((f.numerator, -(f.denominator.bit_length() - 1)))
            if rad:  # Arb's union may round outward: widen the Fraction bound to the ball's own
                ball = ball.union(arb(((f + rad).numerator, -((f + rad).denominator.bit_length() - 1))))
                mid, r = _frac(ball.mid()), _frac(ball.rad())  # the ball as stored: [mid - r, mid + r]
                f, rad = mid - r, 2 * r
            lo, hi = Fraction(u.m, 2**bits), Fraction(u.m + 1, 2**bits)
            got = u.compare(ball)
            if got > 0:
                assert lo >= f + rad
            elif got < 0:
                assert hi <= f
            else:
                assert not (lo >= f + rad or hi <= f)


def test_lattice_range_and_default():
    assert L.lattice_range((0.0, 100.0)) == (max(math.ulp(100.0), 2.0 ** (-1022)), 64.0)
    assert L.default_lattice((0.0, 100.0)) == 2.0**-14
    assert L.default_lattice((0.0, 1.0)) == 2.0**-20
    assert L.default_lattice((1e15, 1e15 + 1.0)) == math.ulp(1e15 + 1.0)  # raised to the float spacing
    assert L.default_lattice((-8e307, 8e307)) == 2.0 ** (1023 - 20)
    assert L.check_lattice(0.25, (0.0, 1.0)) == 0.25
    for bad in (0.3, 3.0, -0.5, 0.0, math.inf, math.nan, 2.0):
        with pytest.raises(ValueError, match="lattice must be a power of two"):
            L.check_lattice(bad, (0.0, 1.0))
    with pytest.raises(TypeError, match="lattice"):
        L.check_lattice("0.5", (0.0, 1.0))


@pytest.mark.parametrize(
    "bounds", [(0.0, 100.0), (-8e307, 8e307), (1e15, 1e15 + 1.0), (-1.0, 3e-300), (0.0, 1e-300), (-5.0, -4.0)]
)
def test_every_allowed_lattice_has_at_most_2_55_cells(bounds):
    """The finest allowed step leaves at most 2^54 + 1 lattice points (bisection depth <= 55), so no
    allowed lattice is too fine; a finer one is refused by check_lattice (public bounds only)."""
    step, _ = L.lattice_range(bounds)
    k_lo, k_hi = math.ceil(Fraction(bounds[0]) / Fraction(step)), math.floor(Fraction(bounds[1]) / Fraction(step))
    assert k_hi - k_lo + 1 <= 2**54 + 1
    if step > 2.0**-1022:
        with pytest.raises(ValueError, match="lattice must be a power of two"):
            L.check_lattice(step / 2, bounds)
    with pytest.raises(ValueError, match="lattice too fine"):
        L.sample_cell("laplace", None, 0.0, 1.0, 1.0, 0, 2**56, np.random.default_rng(0))


def _path_length(k, k_lo, k_hi):
    """Comparisons of a bisection over [k_lo, k_hi] that ends at k (written independently)."""
    n, lo, hi = 0, k_lo, k_hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if k >= mid else (lo, mid - 1)
        n += 1
    return n


def _replay_u(seed, bits):
    g = np.random.default_rng(seed)
    m = 0
    for _ in range(bits // 64):
        m = (m << 64) | int(g.integers(0, 2**64, dtype=np.uint64))
    return m, g


@pytest.mark.parametrize("family,shape", [c for c in CASES if c != ("student_t", 100.0)])
@pytest.mark.parametrize("step", [2.0**-14, 2.0**-46])
def test_cell_is_the_cell_of_u_under_independent_cdfs(family, shape, step):
    """Replay: the first 192 bits of the seeded stream are U; the returned k satisfies
    F(a_k) <= U_lo and U_hi <= F(a_{k+1}) under the 300-bit mpmath references, and the
    number of cdf evaluations is the bisection path length of k (work depends on k only)."""
    mp = context(300)
    F = cdf(mp, family, shape)
    true, s, k_lo, k_hi = 30.0, 6.0, 0, int(100 / step)
    for seed in range(6):
        n0 = L.cdf_evaluations()
        k = L.sample_cell(family, shape, true, s, step, k_lo, k_hi, np.random.default_rng(seed))
        assert L.cdf_evaluations() - n0 == _path_length(k, k_lo, k_hi)
        m, _ = _replay_u(seed, 192)
        u_lo, u_hi = mp.mpf(m) / mp.mpf(2) ** 192, mp.mpf(m + 1) / mp.mpf(2) ** 192
        a = [(mp.mpf(2 * j - 1) * mp.mpf(step) / 2 - true) / s for j in (k, k + 1)]
        assert k == k_lo or F(a[0]) <= u_lo
        assert k == k_hi or u_hi <= F(a[1])


@pytest.mark.parametrize("step", [2.0**-14, 2.0**-46])
def test_mixture_cell_is_the_cell_of_u_and_v(step):
    """Laplace-log-normal: V (the next bits of the stream) gives Y = Phi^{-1}(V) by mpmath at 600 bits;
    the returned k is the Laplace cell of U at the boundaries times e^{-sigma Y}, and the work is
    the fixed Y depth plus the path length of k."""
    mp = context(600)
    sigma, true, s, k_lo, k_hi = 0.5, 30.0, 6.0, 0, int(100 / step)
    v_bits = L._v_bits(sigma, 0, 192)
    for seed in range(6):
        n0 = L.cdf_evaluations()
        k = L.sample_cell("laplace_log_normal", sigma, true, s, step, k_lo, k_hi, np.random.default_rng(seed))
        assert L.cdf_evaluations() - n0 == L._y_depth(sigma, 0, 192) + _path_length(k, k_lo, k_hi)
        m, g = _replay_u(seed, 192)
        mv = 0
        for _ in range(v_bits // 64):
            mv = (mv << 64) | int(g.integers(0, 2**64, dtype=np.uint64))
        for vv in (mp.mpf(mv), mp.mpf(mv + 1)):  # both ends of V's interval give the same cell
            y = mp.sqrt(2) * mp.erfinv(2 * vv / mp.mpf(2) ** v_bits - 1)
            lap = cdf(mp, "laplace", None)
            b = [(mp.mpf(2 * j - 1) * mp.mpf(step) / 2 - true) / s * mp.exp(-sigma * y) for j in (k, k + 1)]
            u_lo, u_hi = mp.mpf(m) / mp.mpf(2) ** 192, mp.mpf(m + 1) / mp.mpf(2) ** 192
            assert k == k_lo or lap(b[0]) <= u_lo
            assert k == k_hi or u_hi <= lap(b[1])


@pytest.mark.parametrize("family,shape", [("polyplace", 10.0), ("cauchy", 4.0), ("laplace_log_normal", 0.5)])
def test_low_precision_rounds_give_the_same_cell(family, shape, monkeypatch):
    """The cell is a function of (U, V) alone: with 184 fewer bits of working precision the first
    rounds are undecided and more bits are drawn (appended after the first ones), yet k is the same."""
    args = (family, shape, 30.0, 6.0, 2.0**-14, 0, 100 * 2**14)
    ref = [L.sample_cell(*args, np.random.default_rng(s)) for s in range(8)]
    n0 = L.cdf_evaluations()
    monkeypatch.setattr(L, "_GUARD", -184)  # 8 bits in the first round
    assert [L.sample_cell(*args, np.random.default_rng(s)) for s in range(8)] == ref
    one_round = sum(_path_length(k, 0, 100 * 2**14) for k in ref)
    assert L.cdf_evaluations() - n0 > one_round  # the undecided rounds did happen


def test_cell_probabilities_enclose_the_reference_and_sum_to_one():
    for family, shape in (("polyplace", 3.0), ("student_t", 2.0), ("laplace_log_normal", 0.4)):
        mp = context(100 if family == "laplace_log_normal" else 200)  # quadrature: keep it cheap
        F = cdf(mp, family, shape)
        total = arb(0)
        for k in range(-4, 5):
            p = L.cell_probability(family, shape, 0.3, 0.7, 0.25, k, -4, 4, prec=120)
            lo = F((mp.mpf(k) - 0.5) * 0.25 / 0.7 - mp.mpf(0.3) / 0.7) if k > -4 else 0
            hi = F((mp.mpf(k) + 0.5) * 0.25 / 0.7 - mp.mpf(0.3) / 0.7) if k < 4 else 1
            assert abs(float(p.mid()) - float(hi - lo)) < 1e-25, (family, k)
            with L._precision(120):
                total += p
        assert total.contains(1) and total.rad() < arb(2) ** -60
    # scale far below the lattice: the cell of the true value, almost surely, still sampled exactly
    ks = {L.sample_cell("laplace", None, 0.3, 1e-12, 0.25, -4, 4, np.random.default_rng(s)) for s in range(20)}
    assert ks == {1}


def test_extreme_scales_terminate():
    """Noise far larger or smaller than the bounds, tiny true values: proven cells, one round."""
    for fam, shape in (("laplace", None), ("cauchy", 4.0), ("student_t", 3.0), ("polyplace", 2.5)):
        for s in (2.0**-1000, 1e-300, 1e300):
            n0 = L.cdf_evaluations()
            k = L.sample_cell(fam, shape, 5e-324, s, 2.0**-46, 0, 100 * 2**46, np.random.default_rng(1))
            assert 0 <= k <= 100 * 2**46
            assert L.cdf_evaluations() - n0 == _path_length(k, 0, 100 * 2**46)
    assert ctx.prec == 53  # the sampler restores Arb's precision


@pytest.mark.parametrize("x", [[50.0], [0.0], [10.0, 20.0, 30.0, 40.0, 50.0], [1.0, "not a number"]])
def test_too_fine_lattice_refused_before_the_data_is_read(x):
    """A step below ulp(100) = 2^-46 is refused with the same message whatever the database, even one
    that is itself invalid: the check uses the public bounds only and runs before the data is touched."""
    from smoothdp_nb import release

    with pytest.raises(ValueError) as err:
        release(x, "median", 1.0, noise="laplace_log_normal", bounds=(0.0, 100.0), lattice=2.0**-47, rng=0)
    assert str(err.value) == (
        "lattice must be a power of two with 1.42109e-14 <= lattice <= 64 for bounds (0.0, 100.0), got 7.105427357601002e-15"
    )
