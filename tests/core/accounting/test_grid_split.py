"""The grid path of composition: losses on no lattice.

The upper bound splits every loss between its two neighbouring grid points (a law that
dominates the run's); the FFT convolutions carry a normwise error bound.  References are
independent of the package: the split in 400-digit mpmath, the multinomial hockey stick of a
composition summed term by term in 40-digit mpmath, and dp_accounting's pessimistic PLD.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.privacy_loss.grid import _convolve, _Grid, log_delta_grid, split_onto_grid

MP = mpmath.mp.clone()
MP.dps = 400  # L - a exact for every float L and grid point a (the tiniest float is 5e-324)


@settings(max_examples=300, deadline=None)
@given(
    loss=st.floats(-60.0, 60.0, allow_nan=False),
    h=st.floats(1e-7, 2.0),
    log_mass=st.floats(-700.0, 0.0),
)
def test_the_split_keeps_both_masses_and_rounds_up(loss, h, log_mass):
    """The two grid atoms carry at least the exact split ``p w_a``, ``p w_b`` of the atom
    (``w_a + w_b = 1``, ``w_a e^-a + w_b e^-b = e^-L``), and at most a few ulps more."""
    out = split_onto_grid(np.array([loss]), np.array([log_mass]), h)
    assert out is not None
    idx, lm = out
    L, H = MP.mpf(loss), MP.mpf(h)
    i, j = int(idx.min()), int(idx.max())
    if idx.size == 1:  # one weight underflowed: the other end is the next point or the one after
        j = i + 1 if MP.mpf(i) * H <= L <= (i + 1) * H else i
        i = j - 1 if j == i else i
    assert 1 <= j - i <= 2  # one cell, or two around a loss too close to a point to tell
    a, b = i * H, j * H
    assert a <= L <= b
    den = 1 - MP.exp(-(b - a))
    w = {j: -MP.expm1(-(L - a)) / den}
    w[i] = 1 - w[j]
    # the exact split keeps the Q-mass (a check of the formula, not of the code)
    assert abs(w[i] * MP.exp(-a) + w[j] * MP.exp(-b) - MP.exp(-L)) <= MP.mpf(10) ** -60 * MP.exp(-L)
    got = dict(zip(idx.tolist(), lm.tolist()))
    for point, wp in w.items():
        if wp <= MP.mpf(10) ** -300:
            continue  # a weight that underflows may be dropped or kept at its bound
        assert point in got
        exact = MP.mpf(log_mass) + MP.log(wp)
        assert got[point] >= exact  # rounded up: the split law dominates
        if wp > 1e-6:  # tight, up to the rounding of d = L - a relative to h and of the log-sum
            slack = 1e-13 + 1e-15 * abs(log_mass) + 4e-16 * (abs(loss) + abs(i * h)) / (h * float(wp))
            assert got[point] - exact <= slack


def test_a_step_below_the_rounding_of_the_losses_is_refused():
    """Where ``i h`` and ``(i + 1) h`` cannot be told apart from the loss in float64, no
    split is claimed (the caller rounds up instead)."""
    assert split_onto_grid(np.array([1000.0]), np.array([0.0]), 1e-15) is None


def _law(n: int, centre: float, width: float) -> np.ndarray:
    x = np.arange(n) - centre
    v = np.exp(-0.5 * (x / width) ** 2)
    return v / v.sum()


@pytest.mark.parametrize("upper", [True, False])
def test_fft_convolution_bounds_every_cell_and_the_trimmed_tails(upper):
    """Against the direct sums (non-negative terms, relative error at most n u per cell):
    the upper grid's cells are at least the convolution and the mass it drops is in its
    slack; the lower grid's cells are at most it."""
    a = _Grid(0, _law(6000, 3000.0, 300.0))
    b = _Grid(0, _law(7000, 3500.0, 200.0))
    ref = np.convolve(a.cells, b.cells)
    n_u = 7000 * 2.0**-52
    out = _convolve(a, b, upper)
    kept = ref[out.offset : out.offset + out.cells.size]
    if upper:
        assert np.all(out.cells >= kept * (1 + n_u))
        dropped = ref[: out.offset].sum() + ref[out.offset + out.cells.size :].sum()
        assert out.slack >= dropped * (1 + n_u)
        assert out.cells.size < ref.size  # the noise tails were trimmed
    else:
        assert np.all(out.cells <= kept * (1 + n_u))


# -- a composition on no lattice against its exact multinomial sum --------------------

_P = (0.5, 0.3, 0.2)
_Q = (0.3, 0.2, 0.5)  # likelihood ratios 5/3, 3/2, 2/5: no common step


def _three() -> sdp.FiniteMechanism:
    return sdp.FiniteMechanism(lambda h: dict(enumerate(_P if h[0] == 1 else _Q)), categories=2)


def _exact_log_delta(k: int, eps: float, p: tuple[float, ...], q: tuple[float, ...]) -> mpmath.mpf:
    """log of sum over (n1, n2, n3) of the multinomial P-mass times max(0, 1 - e^(eps - S))."""
    mp = mpmath.mp.clone()
    mp.dps = 40
    lp = [mp.log(mp.mpf(v)) for v in p]
    ll = [mp.log(mp.mpf(a) / mp.mpf(b)) for a, b in zip(p, q)]
    e = mp.mpf(eps)
    lf = [mp.loggamma(j + 1) for j in range(k + 1)]
    total = mp.mpf(0)
    for n1 in range(k + 1):
        for n2 in range(k + 1 - n1):
            n3 = k - n1 - n2
            s = n1 * ll[0] + n2 * ll[1] + n3 * ll[2]
            if s <= e:
                continue
            w = lf[k] - lf[n1] - lf[n2] - lf[n3] + n1 * lp[0] + n2 * lp[1] + n3 * lp[2]
            total += mp.exp(w) * -mp.expm1(e - s)
    return mp.log(total)


def _dp_accounting(k: int, eps: float) -> float:
    from dp_accounting.pld import privacy_loss_distribution as dpl

    p = {i: math.log(v) for i, v in enumerate(_P)}
    q = {i: math.log(v) for i, v in enumerate(_Q)}
    out = []
    for lower, upper in ((q, p), (p, q)):
        pld = dpl.from_two_probability_mass_functions(
            lower, upper, pessimistic_estimate=True, value_discretization_interval=1e-4
        )
        out.append(pld.self_compose(k).get_delta_for_epsilon(eps))
    return math.log(max(out))


@pytest.mark.parametrize("k,sds", [(300, 3.0), (300, 5.0)])
def test_composition_on_no_lattice_is_bracketed_tight_and_below_dp_accounting(k, sds):
    losses = [math.log(a / b) for a, b in zip(_P, _Q)]
    mean = sum(a * v for a, v in zip(_P, losses))
    sd = math.sqrt(sum(a * (v - mean) ** 2 for a, v in zip(_P, losses)))
    eps = k * mean + sds * sd * math.sqrt(k)
    run = sdp.repeat(_three(), k)
    pld = sdp.privacy_loss_distribution(run, [1, 0], [0, 1])
    assert pld.forward.method() == "grid"  # 45,451 distinct losses: neither exact nor lattice
    exact = max(_exact_log_delta(k, eps, _P, _Q), _exact_log_delta(k, eps, _Q, _P))
    up = math.log(float(pld.delta(eps)))
    lo = pld.delta_enclosure(eps).lower
    assert lo <= exact <= up
    # the lower bound keeps the residuals' mean shift: its error is their spread only
    # (rounding every loss down, with nothing more, would be 0.03 to 0.05 below here)
    assert up - lo <= 0.02
    # the split's error is second order: well inside what rounding every loss up to
    # dp_accounting's 1e-4 grid costs, on a grid four times coarser
    dpa = _dp_accounting(k, eps)
    assert up - float(exact) <= 0.25 * (dpa - float(exact))


@settings(max_examples=8, deadline=None)
@given(k=st.integers(40, 120), sds=st.floats(0.0, 4.0))
def test_coarse_grids_on_no_lattice_bracket_the_multinomial_sum(k, sds):
    losses = [math.log(a / b) for a, b in zip(_P, _Q)]
    mean = sum(a * v for a, v in zip(_P, losses))
    sd = math.sqrt(sum(a * (v - mean) ** 2 for a, v in zip(_P, losses)))
    eps = k * mean + sds * sd * math.sqrt(k)
    fwd = sdp.privacy_loss_distribution(sdp.repeat(_three(), k), [1, 0], [0, 1]).forward
    exact = _exact_log_delta(k, eps, _P, _Q)
    assume(exact > -600)
    # the grid path itself (the exact path would take these small compositions), coarse
    up = log_delta_grid(fwd.parts_for(True), eps, True, cells=2**12)[0]
    lo = log_delta_grid(fwd.parts_for(False), eps, False, cells=2**12)[0]
    assert lo <= exact <= up
