"""The two-vertex engines' proven error bound (``engine_error``) against
rigorous ball arithmetic (python-flint's Arb at 200 bits), where many advances
would accumulate a running float log scale: small K (a vertex near 0 or 1)
and a steep log delta, at moderate n."""

import numpy as np
import pytest
from flint import arb, arb_poly, ctx
from hypothesis import HealthCheck, given, settings, strategies as st

from smoothdp_nb.core.numerics.enclosures import log_rel
from smoothdp_nb.core.smoothed.engines import binary as S
from smoothdp_nb.core.smoothed.engines.error_bound import engine_error


def reference(logdelta: np.ndarray, p1: float, p2: float, rs: list[int]) -> dict[int, arb]:
    """E_r = sum_y P(Bin(n - r, p1) + Bin(r, p2) = y) delta(y) (first column), as Arb
    balls: the law from the product of the two probability generating functions."""
    n = logdelta.shape[0] - 1
    old = ctx.prec
    ctx.prec = 200
    try:
        a1, a2 = arb(p1), arb(p2)
        g1, g2 = arb_poly([1 - a1, a1]), arb_poly([1 - a2, a2])
        delta = [arb(float(v)).exp() if np.isfinite(v) else arb(0) for v in logdelta[:, 0]]
        out = {}
        for r in rs:
            law = g1 ** (n - r) * g2**r
            out[r] = sum((law[y] * delta[y] for y in range(n + 1)), arb(0))
        return out
    finally:
        ctx.prec = old


def profile(n: int, slope: float, curve: float, floor: float) -> np.ndarray:
    """A log delta that is steep (slope per record), curved, and far below 1."""
    x = np.arange(n + 1, dtype=float)
    return (floor - slope * x - curve * (x - n / 2) ** 2 / n)[:, None]


def check(logdelta, p1, p2, out, stats, K, rs):
    n = logdelta.shape[0] - 1
    fin = logdelta[np.isfinite(logdelta)]
    lmax = stats.get("log_weight_max", 0.0)
    ldmax = float(np.max(np.abs(fin), initial=0.0))
    bound = S.window_log_bound(logdelta)
    rel = engine_error(n, K, lmax, stats.get("fallback", 0.0) > 0, p1, ldmax, stats["log_scale_max"], bound)
    assert 0 < rel < 1e-8  # a useful bound (the profiles here span up to e^-6000)
    tol = float(log_rel(rel))
    ref = reference(logdelta, p1, p2, rs)
    for r in rs:
        v = ref[r]
        assert v > 0
        log_ref = v.log()
        lo, hi = float(log_ref.lower()), float(log_ref.upper())
        # the engine's value within its bound of the exact one (the reference's ball is ~1e-50 wide)
        assert out[r, 0] + tol >= hi, (r, out[r, 0], hi, tol)
        assert out[r, 0] - tol <= lo, (r, out[r, 0], lo, tol)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(800, 2500),
    p1=st.sampled_from([0.002, 0.01, 0.3, 0.6]),
    p2=st.sampled_from([0.995, 0.98, 0.004]),
    slope=st.floats(0.0, 1.5),
    curve=st.floats(0.0, 40.0),
    floor=st.floats(-900.0, -1.0),
)
def test_blocked_engine_within_its_bound_over_many_advances(n, p1, p2, slope, curve, floor):
    ld = profile(n, slope, curve, floor)
    K = S.binary_plan(ld, p1, p2).K
    stats: dict[str, float] = {}
    out = S.exact_binary(ld, p1, p2, None, stats=stats)
    assert n // K >= 18 or "fallback" in stats  # many advances (K <= 44 here)
    rs = sorted({0, 1, K - 1, K, K + 1, n // 3, n // 2, n - K, n - 1, n, int(np.argmax(out[:, 0]))})
    check(ld, p1, p2, out, stats, K, rs)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(300, 900),
    p1=st.sampled_from([0.01, 0.4]),
    p2=st.sampled_from([0.99, 0.7]),
    slope=st.floats(0.0, 6.0),
    floor=st.floats(-3000.0, -1.0),
)
def test_one_step_fallback_within_its_bound(n, p1, p2, slope, floor):
    ld = profile(n, slope, 0.0, floor)
    stats: dict[str, float] = {"fallback": 1.0}
    out = S.exact_binary_blocks(ld, p1, p2, block=64, stats=stats)
    K = S.binary_plan(ld, p1, p2).K
    rs = sorted({0, 1, 63, 64, 65, n // 2, n - 1, n})
    # the fallback's weights (log-factorial differences) are bounded through the log_weight_max it records
    assert stats["log_weight_max"] > 0
    check(ld, p1, p2, out, stats, K, rs)


def test_fallback_keeps_mass_that_enters_an_all_zero_block():
    """delta = 0 below x = 128 and e^-800 above: an averaging step moves mass into
    the zero blocks.  At a scale of e^0, e^-800 would underflow, the mass would be
    lost and the expectation would come out below the truth."""
    n = 400
    ld = np.where(np.arange(n + 1) >= 128, -800.0, -np.inf)[:, None]
    out = S.exact_binary_blocks(ld, 0.1, 0.9, block=64)
    ref = reference(ld, 0.1, 0.9, [100, 200, 300])
    for r, v in ref.items():
        assert out[r, 0] == pytest.approx(float(v.log().mid()), abs=1e-12)


def test_fallback_keeps_mass_that_enters_a_block_far_below():
    """delta = e^-3000 below x = 160 and e^-5 above: the block under the step is
    2^4000 below its neighbour.  A boundary factor cut at e^700 would lose the mass
    arriving from above (-28.38 for the exact -26.66 at r = 100)."""
    n = 400
    ld = np.where(np.arange(n + 1) >= 160, -5.0, -3000.0)[:, None]
    out = S.exact_binary_blocks(ld, 0.1, 0.9, block=64)
    ref = reference(ld, 0.1, 0.9, [100, 200, 300])
    for r, v in ref.items():
        assert out[r, 0] == pytest.approx(float(v.log().mid()), abs=1e-12)
