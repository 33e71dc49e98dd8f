"""The floating-point attack (Mironov 2012) as a test.

Two neighbouring databases, [10, 20, 30, 40, 50] and [10, 20, 31, 40, 50]
(bounds (0, 100), epsilon = 1).  For every family, releases of the first are
replayed and each observed output's exact probability under both databases is
computed at 120 bits from the family's tail (the mixture integral for
Laplace-log-normal); the outputs must be possible under the neighbour and the probability
ratio must obey the guarantee.  The old float path ``true + s * ppf(u)`` is
kept here, privately, to show that the same check fails on it.
"""

import math

import numpy as np
import pytest

from smoothdp_nb import release
from smoothdp_nb.core.release import lattice as _lattice
from smoothdp_nb.core.release.sensitivity import evaluate_query
from tests.lattice_reference import cdf as _ref_cdf, context

X1 = [10.0, 20.0, 30.0, 40.0, 50.0]
X2 = [10.0, 20.0, 31.0, 40.0, 50.0]
B = (0.0, 100.0)
EPS = 1.0
FINEST = _lattice.lattice_range(B)[0]  # 2^-46: ulp(100)
FAMILIES = [
    ("polyplace", {}),
    ("cauchy", {}),
    ("student_t", {}),
    ("laplace", {"delta": 1e-5}),
    ("laplace_log_normal", {}),
]

ctx = context(120)


def _cdf(family, shape):
    """F(a) = P(Z <= a) from the independent mpmath references of tests/lattice_reference.py
    (checked against quadrature of the densities in tests/core/test_lattice.py); 60 bits for the
    Laplace-log-normal quadrature (one per boundary: keep it cheap), 120 otherwise."""
    ctx.prec = 60 if family == "laplace_log_normal" else 120
    return _ref_cdf(ctx, family, shape)


def _cell_prob(F, true, scale, step, k, k_lo, k_hi):
    lo = F((ctx.mpf(k) - ctx.mpf(0.5)) * step / scale - ctx.mpf(true) / scale) if k > k_lo else ctx.mpf(0)
    hi = F((ctx.mpf(k) + ctx.mpf(0.5)) * step / scale - ctx.mpf(true) / scale) if k < k_hi else ctx.mpf(1)
    return hi - lo


def _releases(family, kw, rng, n, lattice=None):
    return [release(X1, "median", EPS, noise=family, bounds=B, rng=rng, lattice=lattice, **kw) for _ in range(n)]


@pytest.mark.parametrize("family,kw", FAMILIES)
@pytest.mark.parametrize("source", ["seeded", "os_entropy"])
@pytest.mark.parametrize("lattice", [None, FINEST], ids=["default_lattice", "finest_lattice"])
def test_every_output_possible_and_ratio_bounded(family, kw, source, lattice):
    rng = np.random.default_rng(2024) if source == "seeded" else None
    rels = _releases(family, kw, rng, 30, lattice)
    d1 = release(X1, "median", EPS, noise=family, bounds=B, rng=0, diagnostics=True, lattice=lattice, **kw)
    d2 = release(X2, "median", EPS, noise=family, bounds=B, rng=0, diagnostics=True, lattice=lattice, **kw)
    s1, s2 = d1.diagnostics.noise_scale, d2.diagnostics.noise_scale
    t1, t2 = evaluate_query(X1, "median", bounds=B), evaluate_query(X2, "median", bounds=B)
    step = d1.lattice
    assert step == (FINEST if lattice else _lattice.default_lattice(B))
    k_lo, k_hi = math.ceil(B[0] / step), math.floor(B[1] / step)
    shape = None if family == "laplace" else d1.shape
    F = _cdf(family, shape)
    ks = sorted({int(r.value / step) for r in rels})
    assert all(r.value == int(r.value / step) * step and B[0] <= r.value <= B[1] for r in rels)
    if family == "laplace_log_normal":
        ks = ks[:2] + ks[-2:]  # a quadrature per boundary: the extremes and a few inner outputs
    for k in ks:
        if family == "laplace_log_normal" and lattice:
            # a 2^-46 cell is below the 60-bit quadrature's resolution: Arb's proven enclosure
            # (acb.integral of the mixture, a route independent of the sampler's quantile bisection)
            p1 = _lattice.cell_probability(family, shape, t1, s1, step, k, k_lo, k_hi, prec=160)
            p2 = _lattice.cell_probability(family, shape, t2, s2, step, k, k_lo, k_hi, prec=160)
            assert p1 > 0 and p2 > 0, (family, k)
            continue
        p1 = _cell_prob(F, t1, s1, step, k, k_lo, k_hi)
        p2 = _cell_prob(F, t2, s2, step, k, k_lo, k_hi)
        assert p1 > 0 and p2 > 0, (family, k)
        if family in ("polyplace", "cauchy", "student_t"):
            # pure epsilon-DP: rounding is post-processing, so no allowance beyond the 120-bit error
            assert p1 <= math.exp(EPS) * p2 * (1 + 1e-15), (family, k, p1 / p2)
            assert p2 <= math.exp(EPS) * p1 * (1 + 1e-15), (family, k, p2 / p1)


def _path_length(k, k_lo, k_hi):
    """Comparisons of a bisection over [k_lo, k_hi] ending at k (written independently of the module)."""
    n, lo, hi = 0, k_lo, k_hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if k >= mid else (lo, mid - 1)
        n += 1
    return n


@pytest.mark.parametrize("family,kw", FAMILIES)
def test_work_depends_only_on_the_output(family, kw):
    """At the finest lattice, neighbours [50] and [0] (n = 1) with the same seeds.
    The number of cdf evaluations of every release is a fixed function of the released value
    (the bisection path of its lattice index, plus the fixed depth of the normal quantile for
    Laplace-log-normal), so neighbours that release the same value do the same work.  The old
    sampler walked from a float candidate: its work grew with |value - true|."""
    step = FINEST
    k_lo, k_hi = 0, math.floor(B[1] / step)
    counts, seen = {}, {50.0: set(), 0.0: set()}
    for x in ([50.0], [0.0]):
        for seed in range(25):
            n0 = _lattice.cdf_evaluations()
            r = release(x, "median", EPS, noise=family, bounds=B, rng=seed, lattice=step, **kw)
            work = _lattice.cdf_evaluations() - n0
            k = int(r.value / step)
            fixed = _lattice._y_depth(r.shape, 0, 192) if family == "laplace_log_normal" else 0
            assert work == fixed + _path_length(k, k_lo, k_hi), (family, x, seed, r.value, work)
            counts.setdefault(r.value, set()).add(work)
            seen[x[0]].add(r.value)
    assert all(len(w) == 1 for w in counts.values())
    # n = 1 and bounds (0, 100): the noise is wide, both databases release the clamp values 0 and 100,
    # so the same-value comparison above is not vacuous
    assert seen[50.0] & seen[0.0]


@pytest.mark.parametrize("lattice", [2.0**-46, 2.0**-42, 2.0**-36])
def test_laplace_log_normal_never_overflows_at_fine_lattices(lattice):
    """No release overflows at the finest lattice: every one of these releases is an exact draw at 2^-46
    (enclosing the normal quantile around a float ndtri estimate made 29 of 200 raise OverflowError)."""
    for s in range(60):
        r = release(
            [10.0, 20.0, 30.0, 40.0, 50.0], "median", 1.0, noise="laplace_log_normal", bounds=B, lattice=lattice, rng=s
        )
        assert r.value == int(r.value / lattice) * lattice and B[0] <= r.value <= B[1]


def _coarse_laws(family, kw, step):
    """Exact output laws of both databases on a coarse lattice (every cell of [0, 100])."""
    d1 = release(X1, "median", EPS, noise=family, bounds=B, rng=0, diagnostics=True, lattice=step, **kw)
    d2 = release(X2, "median", EPS, noise=family, bounds=B, rng=0, diagnostics=True, lattice=step, **kw)
    F = _cdf(family, None if family == "laplace" else d1.shape)
    cells = int(100 // step) + 1
    edges = [(ctx.mpf(k) - ctx.mpf(0.5)) * step for k in range(1, cells)]

    def law(true, scale):
        c = [ctx.mpf(0)] + [F((e - ctx.mpf(true)) / scale) for e in edges] + [ctx.mpf(1)]
        return [c[i + 1] - c[i] for i in range(cells)]

    return (
        law(evaluate_query(X1, "median", bounds=B), d1.diagnostics.noise_scale),
        law(evaluate_query(X2, "median", bounds=B), d2.diagnostics.noise_scale),
        d1,
    )


def test_laplace_hockey_stick_within_delta():
    """Claim 18 gives (epsilon, delta)-DP: sum_k max(0, P1 - e^eps P2) <= delta, both ways."""
    p1, p2, r = _coarse_laws("laplace", {"delta": 1e-5}, 1.0)
    for a, b in ((p1, p2), (p2, p1)):
        excess = sum(max(ctx.mpf(0), x - ctx.e**EPS * y) for x, y in zip(a, b))
        assert excess <= r.delta
        assert all(y > 0 for y in b)


def test_laplace_log_normal_renyi_within_zcdp():
    """rho-zCDP: D_alpha(P1 || P2) <= alpha rho for every alpha > 1 (checked at 1.5, 2, 4)."""
    p1, p2, r = _coarse_laws("laplace_log_normal", {}, 16.0)
    for alpha in (1.5, 2.0, 4.0):
        for a, b in ((p1, p2), (p2, p1)):
            s = sum(x**alpha * y ** (1 - alpha) for x, y in zip(a, b) if x > 0)
            d = ctx.log(s) / (alpha - 1)
            assert d <= alpha * r.rho, (alpha, d)


# --------------------------------------------------------------------------- #
# a float path (true + noise), kept only as a reference that the check can fail
# --------------------------------------------------------------------------- #
def _float_release(true, scale, j):
    """The pre-lattice release: true + s * F^{-1}(u), u = j 2^-53 (Laplace)."""
    u = j * 2.0**-53
    z = math.log(2.0 * u) if u < 0.5 else -math.log(2.0 * (1.0 - u))
    return true + scale * z


def _possible_under(v, true, scale):
    """Is v in the image of j -> _float_release(true, scale, j), 1 <= j < 2^53?  (Monotone: bisection.)"""
    lo, hi = 1, 2**53 - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _float_release(true, scale, mid) <= v:
            lo = mid
        else:
            hi = mid - 1
    return _float_release(true, scale, lo) == v


def test_old_float_path_fails_the_check():
    d1 = release(X1, "median", EPS, noise="laplace", delta=1e-5, bounds=B, rng=0, diagnostics=True)
    d2 = release(X2, "median", EPS, noise="laplace", delta=1e-5, bounds=B, rng=0, diagnostics=True)
    s1, s2 = d1.diagnostics.noise_scale, d2.diagnostics.noise_scale
    g = np.random.default_rng(7)
    outs = [_float_release(30.0, s1, int(j)) for j in g.integers(1, 2**53, size=100)]
    assert all(_possible_under(v, 30.0, s1) for v in outs)  # the replay itself is sound
    impossible = sum(not _possible_under(v, 31.0, s2) for v in outs)
    assert impossible > 50  # most float outputs rule the neighbour out: infinite privacy loss
