"""Tests for smoothdp_nb.core.lattice: exact lattice sampling of releases."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from smoothdp_nb.core import lattice as L

CASES = [
    ("laplace", None),
    ("polyplace", 1.5),
    ("polyplace", 10.0),
    ("student_t", 0.7),
    ("student_t", 5.0),
    ("cauchy", 1.2),
    ("cauchy", 4.0),
    ("cauchy", 40.0),
]


def _density(ctx, family, shape):
    """The standard densities as defined (Hladik-Tetek Def. 6, Claims 16-18), written out again."""
    if family == "laplace":
        return lambda z: ctx.exp(-z) / 2
    if family == "student_t":
        d = ctx.mpf(shape)
        c = ctx.gamma((d + 1) / 2) / (ctx.sqrt(d * ctx.pi) * ctx.gamma(d / 2))
        return lambda z: c * (1 + z * z / d) ** (-(d + 1) / 2)
    if family == "cauchy":
        c = ctx.mpf(shape)
        return lambda z: c * ctx.sin(ctx.pi / c) / (2 * ctx.pi) / (1 + z**c)
    a = ctx.mpf(shape)
    N = a / (2 * (2 * ((a - 1) / a) ** a + a - 1))
    return lambda z: (
        N * (a - 1) * (1 - z) ** (a - 1) if z * a < 1 else N * (a + 1) * (1 - 1 / a**2) ** a * (1 + z) ** (-a - 1)
    )


@pytest.mark.parametrize("family,shape", CASES)
def test_tails_match_quadrature_of_the_density(family, shape):
    """T(a) = 1/2 - int_0^a f below a = 1/2, int_a^inf f beyond (no cancellation; quadrature at
    200 bits, split at the density's seams) to 2^-36 relative: the closed forms are right.  (The
    quadrature is the weaker side: |z|^c with c = 1.2 has a singular derivative at 0, and at 100
    bits the c = 40 tail is off by 1e-5; the closed forms agree with mpmath's betainc to 60 digits.)"""
    ctx = mpmath.MPContext()
    ctx.prec = 200
    f = _density(ctx, family, shape)
    for a in (0.0, 1e-9, 0.05, 0.3, 0.66, 1.0, 2.5, 9.0):
        a = ctx.mpf(a)
        seams = [ctx.mpf(1)] + ([1 / ctx.mpf(shape)] if family == "polyplace" else [])
        if a < 0.5:
            ref = ctx.mpf(1) / 2 - ctx.quad(f, [0] + sorted(x for x in seams if x < a) + [a])
        else:
            ref = ctx.quad(f, [a] + sorted(x for x in seams if x > a) + [a + 1, 4 * a + 4, ctx.inf])
        got = L._TAILS[family](ctx, a, shape)
        assert abs(got - ref) <= ref * ctx.mpf(2) ** -36, (family, shape, float(a), float(got), float(ref))


def test_dyadic_comparison_is_exact():
    ctx = mpmath.MPContext()
    ctx.prec = 300
    rng = np.random.default_rng(0)
    for _ in range(300):
        bits = int(rng.integers(1, 5)) * 64
        m = int(rng.integers(0, 2**63)) << (bits - 63)
        m += int(rng.integers(0, 2))
        f = ctx.mpf(m) / ctx.mpf(2) ** bits + ctx.mpf(int(rng.integers(-2, 3))) * ctx.mpf(2) ** (-bits - 1)
        want = Fraction(m, 2**bits) - Fraction(*f.as_integer_ratio())
        assert L._cmp_dyadic(m, bits, f) == (want > 0) - (want < 0)


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


@pytest.mark.parametrize("family,shape", [("polyplace", 10.0), ("cauchy", 4.0), ("laplace_log_normal", 0.5)])
def test_bisection_fallback_and_low_precision_give_the_same_cell(family, shape, monkeypatch):
    """The cell is a function of U alone: a wrong float candidate (bisection path) or a start at
    8 bits of precision (many undecided comparisons, more bits drawn) must give the same k."""
    args = (family, shape, 30.0, 6.0, 2.0**-14, 0, 100 * 2**14)
    ref = [L.sample_cell(*args, np.random.default_rng(s)) for s in range(15)]
    monkeypatch.setattr(L._Problem, "candidate", lambda self, z: self.k_lo)
    assert [L.sample_cell(*args, np.random.default_rng(s)) for s in range(15)] == ref
    monkeypatch.undo()
    monkeypatch.setattr(L, "_P0", 8)
    assert [L.sample_cell(*args, np.random.default_rng(s)) for s in range(15)] == ref


def test_cell_probabilities_sum_to_one_and_clamp():
    for family, shape in (("polyplace", 3.0), ("student_t", 2.0)):
        ps = [L.cell_probability(family, shape, 0.3, 0.7, 0.25, k, -4, 4, prec=80) for k in range(-4, 5)]
        assert abs(sum(ps) - 1) < mpmath.mpf(2) ** -70 and min(ps) > 0
    # scale far below the lattice: the cell of the true value, almost surely, still sampled exactly
    ks = {L.sample_cell("laplace", None, 0.3, 1e-12, 0.25, -4, 4, np.random.default_rng(s)) for s in range(20)}
    assert ks == {1}
