"""repeat / joint: composition as mechanisms, checked against independent brute force.

References are computed without the package's privacy-loss code: binomial hockey
sticks in mpmath at 50 digits, and explicit enumeration of the product output
space of the runs (their single-run output laws are the mechanisms' own,
tested elsewhere).
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.privacy_loss import pld as pldmod
from smoothdp_nb.core.smoothed.mechanisms.composed import pair_loss

mpmath.mp.dps = 50


def rr_mechanism(p: float = 0.75) -> sdp.FiniteMechanism:
    """Randomized response on a one-record database: the bit is reported with probability p."""

    def law(h: tuple[int, ...]) -> dict[int, float]:
        return {0: p, 1: 1 - p} if h[0] == 1 else {0: 1 - p, 1: p}

    return sdp.FiniteMechanism(law, categories=2, name="rr")


def binomial_hockey_stick(k: int, p: mpmath.mpf, eps: float) -> mpmath.mpf:
    """d_eps(Bin(k, p), Bin(k, 1-p)) in mpmath: the k-fold randomized response."""
    q = 1 - p
    e = mpmath.e ** mpmath.mpf(eps)
    total = mpmath.mpf(0)
    for j in range(k + 1):
        c = mpmath.binomial(k, j)
        P = c * p**j * q ** (k - j)
        Q = c * q**j * p ** (k - j)
        total += max(mpmath.mpf(0), P - e * Q)
    return total


@pytest.mark.parametrize("k", [1, 2, 5, 17, 200])
def test_repeat_randomized_response_is_binomial_hockey_stick(k):
    eps = np.array([0.0, 0.1, 0.7, 1.9, 5.0])
    got = sdp.privacy_profile(sdp.repeat(rr_mechanism(), k), [1, 0], eps)
    ref = np.array([float(binomial_hockey_stick(k, mpmath.mpf(3) / 4, float(e))) for e in eps])
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-300)
    assert np.all(got >= ref * (1 - 1e-13))  # an upper bound, up to the reference's last digit


@pytest.mark.parametrize("k", [1, 3, 40, 1000])
def test_repeat_enclosure_holds_the_mpmath_truth(k):
    """Both ends are proven: the 50-digit hockey stick of k-fold randomized response lies
    between them (no slack), at epsilons where it is large, tiny and exactly 0."""
    eps = np.array([0.0, 0.5, 0.3 * k, 1.05 * k * math.log(3)])  # the last: above every loss
    enc = sdp.privacy_profile_enclosure(sdp.repeat(rr_mechanism(), k), [1, 0], eps)
    for i, e in enumerate(eps):
        truth = binomial_hockey_stick(k, mpmath.mpf(3) / 4, float(e))
        if truth == 0:
            assert enc.upper[i] == -np.inf  # a proven exact zero
            continue
        lt = mpmath.log(truth)
        assert mpmath.mpf(float(enc.lower[i])) <= lt <= mpmath.mpf(float(enc.upper[i]))
        assert enc.width[i] < 1e-9


def _brute_profile(mechs, x, eps):
    """max over neighbours and directions of the hockey stick between explicit product laws."""
    x = np.asarray(x, dtype=np.int64)
    m = x.size
    eye = np.eye(m, dtype=np.int64)
    best = np.zeros(eps.size)
    for a, b in itertools.permutations(range(m), 2):
        if x[a] < 1:
            continue
        x2 = x - eye[a] + eye[b]
        P = {(): 1.0}
        Q = {(): 1.0}
        for mech in mechs:
            op, lp = mech.log_output_pmf(x)
            oq, lq = mech.log_output_pmf(x2)
            pk = {tuple(np.atleast_1d(o).tolist()): math.exp(v) for o, v in zip(op, lp)}
            qk = {tuple(np.atleast_1d(o).tolist()): math.exp(v) for o, v in zip(oq, lq)}
            P = {s + (o,): w * v for s, w in P.items() for o, v in pk.items()}
            Q = {s + (o,): w * v for s, w in Q.items() for o, v in qk.items()}
        keys = set(P) | set(Q)
        for i, e in enumerate(eps):
            f = sum(max(0.0, P.get(o, 0.0) - math.exp(e) * Q.get(o, 0.0)) for o in keys)
            g = sum(max(0.0, Q.get(o, 0.0) - math.exp(e) * P.get(o, 0.0)) for o in keys)
            best[i] = max(best[i], f, g)
    return best


EPS = np.array([0.0, 0.2, 0.7, 1.5])


@pytest.mark.parametrize(
    "x,k", [([10, 10], 2), ([10, 10], 3), ([14, 6], 3), ([19, 1], 2), ([4, 3, 2], 2), ([1, 0, 0], 3)]
)
def test_repeat_sampling_histogram_matches_product_enumeration(x, k):
    mech = sdp.SamplingHistogram(eta=0.25) if sum(x) > 5 else sdp.SamplingHistogram(eta=0.5)
    got = sdp.privacy_profile(sdp.repeat(mech, k), x, EPS)
    ref = _brute_profile([mech] * k, x, EPS)
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-15)


def test_joint_of_different_mechanisms_matches_product_enumeration():
    x = [9, 8]
    mechs = [sdp.SamplingHistogram(eta=0.25), sdp.SamplingHistogram(eta=0.25, replace=True), sdp.SamplingHistogram(T=3)]
    enc = sdp.privacy_profile_enclosure(sdp.joint(*mechs), x, EPS)
    ref = _brute_profile(mechs, x, EPS)
    # the certified enclosure holds the float64 brute force (slack: its own roundings), and is tight
    assert np.all(np.exp(enc.lower) <= ref * (1 + 1e-13)) and np.all(ref <= np.exp(enc.upper) * (1 + 1e-13))
    assert np.all(enc.width < 1e-10)
    np.testing.assert_allclose(np.exp(enc.upper), ref, rtol=1e-10, atol=1e-15)


def test_repeat_sampling_average_matches_product_enumeration():
    mech = sdp.SamplingAverage(T=2, grid=[0.0, 0.5, 1.0])
    for x in ([2, 1, 1], [3, 0, 1]):
        got = sdp.privacy_profile(sdp.repeat(mech, 3), x, EPS)
        np.testing.assert_allclose(got, _brute_profile([mech] * 3, x, EPS), rtol=1e-11, atol=1e-15)


def test_repeat_once_is_the_mechanism():
    """Two certified computations of the same delta: as enclosures they must overlap, both
    tight.  At [20, 30] and epsilon 1.5 every privacy loss is at most log 4 < 1.5, so the
    exact delta is 0: the composition proves it (-inf: its widened losses stay below 1.5),
    the mechanism's tail sum gives a tiny positive upper bound; both are valid."""
    mech = sdp.SamplingHistogram(eta=0.3)
    h = [[20, 30], [45, 5], [1, 49]]
    rep = sdp.privacy_profile_enclosure(sdp.repeat(mech, 1), h, EPS)
    one = sdp.privacy_profile_enclosure(mech, h, EPS)
    assert np.all(rep.lower <= one.upper) and np.all(one.lower <= rep.upper)  # they overlap
    fin = np.isfinite(one.lower)
    assert np.all(rep.width[fin] < 1e-10) and np.all(one.width[fin] < 1e-10)
    np.testing.assert_allclose(rep.upper[fin], one.upper[fin], rtol=1e-10)
    # the proven zero: every loss of [20, 30] and its neighbours is at most log 4 (an output
    # with all 15 sampled records from the 20 of the category losing one)
    assert math.log(20 / 5) < 1.5
    assert rep.upper[0, 3] == -np.inf and one.upper[0, 3] < -700


@given(
    h0=st.integers(0, 14),
    k=st.integers(1, 6),
    eps=st.floats(0.0, 3.0),
)
def test_never_worse_than_proposition_5(h0, k, eps):
    """Proposition 5: k runs at epsilon each are (k epsilon, k delta); the exact composition
    is never larger (profile form: per database, the same neighbours)."""
    mech = sdp.SamplingHistogram(eta=0.5)
    x = [h0, 14 - h0]
    single = float(sdp.privacy_profile(mech, x, eps))
    enc = sdp.privacy_profile_enclosure(sdp.repeat(mech, k), x, k * eps)
    summed = sdp.compose([(eps, single)] * k)
    # the exact composed delta is at most the sum: its lower bound is, and its upper bound
    # exceeds the sum by at most the enclosure's own width
    assert math.exp(enc.lower) <= summed.delta * (1 + 1e-14) + 1e-300
    assert math.exp(enc.upper) <= summed.delta * (1 + 1e-14) * (1 + float(enc.width)) + 1e-300
    assert float(enc.width) < 1e-9


def test_generic_features_work_on_compositions():
    mech = sdp.repeat(sdp.SamplingHistogram(eta=0.5), 2)
    # dp_delta: the largest profile over all databases of n records
    dp = sdp.dp_delta(mech, 6, [0.0, 1.0])
    prof = sdp.privacy_profile(mech, [[k, 6 - k] for k in range(7)], [0.0, 1.0])
    np.testing.assert_allclose(dp, prof.max(axis=0), rtol=1e-12)
    # exact smoothed delta: the expectation over Bin(n, p) databases of the profile
    res = sdp.smoothed_delta(mech, 6, [[0.4, 0.6]], [0.0, 1.0])
    w = np.array([math.comb(6, k) * 0.4**k * 0.6 ** (6 - k) for k in range(7)])
    np.testing.assert_allclose(res.delta, w @ prof, rtol=1e-10)
    mc = sdp.smoothed_delta(mech, 6, [[0.4, 0.6]], [0.0, 1.0], method="monte-carlo", trials=200, rng=1)
    assert np.all(mc.ci_low <= res.delta + 1e-12) and np.all(res.delta <= mc.ci_high + 1e-12)
    from smoothdp_nb.core.smoothed.reports import profile

    r = profile(mech, [[3, 3], [5, 1]], [0.0, 1.0])
    assert r.to_frame().shape == (4, 6)
    assert "repeat(SamplingHistogram" in str(r)


def test_sample_and_output_law():
    mech = sdp.repeat(sdp.SamplingHistogram(T=1), 2)
    out = mech.sample_histogram([1, 1], rng=0)
    assert isinstance(out, tuple) and len(out) == 2
    draws = mech.sample_histogram([1, 1], rng=0, size=5)
    assert draws.shape == (5,) and all(len(d) == 2 for d in draws)
    frame = mech.output_pmf([1, 1])
    assert len(frame) == 4 and math.isclose(frame["probability"].sum(), 1.0)


def test_grid_path_brackets_the_exact_composition():
    """Force the pessimistic grid on a pair whose exact composition is known."""
    mech = sdp.SamplingHistogram(eta=0.4)
    f, _ = pair_loss(sdp.repeat(mech, 3), np.array([40, 35]), np.array([39, 36]))
    exact = f.exact(upper=True)
    assert exact is not None
    for eps in (0.0, 0.3, 1.0, 2.5):
        truth = float(exact.log_delta(np.array([eps]))[0])
        up, _ = pldmod.log_delta_grid(f.parts, eps, True, cells=2**12)
        lo, _ = pldmod.log_delta_grid(f.parts, eps, False, cells=2**12)
        assert lo <= truth + 1e-12 and truth <= up + 1e-12
        assert up - lo < 0.05 * (1 + abs(truth))  # the gap is small at this resolution


def test_large_composition_uses_grid_and_stays_above_truth():
    """A composition too large for exact tables: the reported delta is the grid's upper
    bound; its lower bound sits below it and both straddle a Monte Carlo-free check:
    summing (Proposition 5) is never beaten from below."""
    mech = sdp.SamplingHistogram(eta=0.9)
    x = np.array([1200, 800])
    f, _ = pair_loss(sdp.repeat(mech, 10), x, x - np.array([1, -1]))
    assert f.exact() is None  # really the grid path
    eps = np.array([0.5, 2.0])
    up = f.log_delta(eps, upper=True)
    lo = f.log_delta(eps, upper=False)
    assert np.all(lo <= up)
    single = pair_loss(mech, x, x - np.array([1, -1]))[0].log_delta(eps / 10)
    assert np.all(up <= np.log(10) + single + 1e-9)


def test_repeat_randomized_response_1000_matches_the_binomial_hockey_stick():
    """Its time is a benchmark (benchmarks/bench_composition.py), not a test."""
    mech = sdp.repeat(rr_mechanism(), 1000)
    eps = (100.0, 550.0, 600.0, 700.0)  # the loss's mean is 1000 KL = 549.3
    got = sdp.privacy_profile(mech, [1, 0], eps, log=True)
    ref = [float(mpmath.log(binomial_hockey_stick(1000, mpmath.mpf(3) / 4, e))) for e in eps]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-13)
    assert np.all(np.asarray(got) >= np.asarray(ref) - 1e-13)


@pytest.mark.slow
def test_election_fifty_runs_never_worse_than_proposition_5():
    """The 2020 election, 50 runs (its time: benchmarks/bench_composition.py)."""
    h = sdp.datasets.election_histogram(2020)
    got = sdp.privacy_profile(sdp.repeat(sdp.SamplingHistogram(eta=0.998), 50), h, 5.0, log=True)
    single = sdp.privacy_profile(sdp.SamplingHistogram(eta=0.998), h, 0.1, log=True)
    assert got <= math.log(50) + single  # never worse than Proposition 5


def test_bad_input():
    mech = sdp.SamplingHistogram(eta=0.5)
    with pytest.raises(ValueError, match="k"):
        sdp.repeat(mech, 0)
    with pytest.raises(TypeError, match="mechanism"):
        sdp.repeat("rr", 2)
    with pytest.raises(ValueError, match="at least one"):
        sdp.joint()
    with pytest.raises(TypeError, match=r"mechanisms\[1\]"):
        sdp.joint(mech, 3)
    with pytest.raises(ValueError, match="same number of categories"):
        sdp.joint(rr_mechanism(), sdp.SamplingAverage(T=1, grid=[0.0, 0.5, 1.0]))
    assert sdp.repeat(mech, 2) == sdp.repeat(sdp.SamplingHistogram(eta=0.5), 2)
    assert sdp.repeat(mech, 2) != sdp.repeat(mech, 3)


@given(
    p=st.lists(st.floats(0.01, 1.0), min_size=2, max_size=5),
    q=st.lists(st.floats(0.01, 1.0), min_size=5, max_size=5),
    zero=st.booleans(),
    k=st.integers(1, 7),
    frac=st.floats(0.0, 1.0),
)
def test_grid_bounds_bracket_exact_composition(p, q, zero, k, frac):
    """Random pairs of output laws (optionally with an output Q cannot produce): the tilted
    grid's upper bound is above the exact composition and its lower bound below, at
    epsilons across the whole range of the composed loss, with a coarse grid."""
    P = np.array(p + [0.0] * (5 - len(p)))
    Q = np.array(q)
    if zero:
        Q[0] = 0.0
    P, Q = P / P.sum(), Q / Q.sum()
    with np.errstate(divide="ignore"):
        d = pldmod.LossDistribution.from_log_pmfs(np.log(P), np.log(Q))
    parts = [(d, k)]
    # references: the exact composition, rounded up and down (checked against brute force above)
    ex_up = pldmod.compose_exact(parts, upper=True)
    ex_lo = pldmod.compose_exact(parts, upper=False)
    assert ex_up is not None and ex_lo is not None
    if d.size == 0:
        return
    top = k * float(d.losses[-1])
    bottom = k * float(d.losses[0])
    eps = max(0.0, bottom + frac * (top - bottom))
    ref_up = float(ex_up.log_delta(np.array([eps]))[0])
    ref_lo = float(ex_lo.log_delta(np.array([eps]))[0])
    up, _ = pldmod.log_delta_grid(parts, eps, True, cells=2**10)
    lo, _ = pldmod.log_delta_grid(parts, eps, False, cells=2**10)
    if ref_up > -np.inf:
        assert lo <= ref_up + 1e-9 * (1 + abs(ref_up))
    else:
        assert lo == -np.inf
    if ref_lo > -np.inf:
        assert ref_lo <= up + 1e-9 * (1 + abs(ref_lo))


@given(
    p=st.lists(st.integers(0, 9), min_size=4, max_size=4),
    q=st.lists(st.integers(0, 9), min_size=4, max_size=4),
    k=st.integers(1, 4),
    e=st.sampled_from([0.0, 0.25, 1.0, 2.0]),
)
def test_certified_composition_brackets_the_exact_rational_truth(p, q, k, e):
    """Rational output laws (some outputs impossible under Q), their float log-pmfs with a
    stated error, composed exactly and on a coarse grid: both bounds bracket the 50-digit
    hockey stick of the k-fold product law, enumerated."""
    from fractions import Fraction

    if sum(p) == 0 or sum(q) == 0:
        return
    P = [Fraction(a, sum(p)) for a in p]
    Q = [Fraction(b, sum(q)) for b in q]
    with np.errstate(divide="ignore"):
        lp = np.log(np.array([float(a) for a in P]))
        lq = np.log(np.array([float(b) for b in Q]))
    err_p = np.where(np.isfinite(lp), 4e-15 * (1 + np.abs(lp)), 0.0)  # float conversion + log
    err_q = np.where(np.isfinite(lq), 4e-15 * (1 + np.abs(lq)), 0.0)
    up = pldmod.LossDistribution.from_log_pmfs(lp, lq, err_p, err_q, upper=True)
    lo = pldmod.LossDistribution.from_log_pmfs(lp, lq, err_p, err_q, upper=False)
    loss = pldmod.ComposedLoss([(up, k)], lower_parts=[(lo, k)])
    ee = mpmath.e ** mpmath.mpf(e)
    truth = mpmath.mpf(0)
    for o in itertools.product(range(4), repeat=k):
        a = math.prod(P[i] for i in o)
        b = math.prod(Q[i] for i in o)
        truth += max(mpmath.mpf(0), mpmath.mpf(a.numerator) / a.denominator - ee * b.numerator / b.denominator)
    hi = float(loss.log_delta(np.array([e]), upper=True)[0])
    low = float(loss.log_delta(np.array([e]), upper=False)[0])
    g_hi, _ = pldmod.log_delta_grid([(up, k)], e, True, cells=2**10)
    g_lo, _ = pldmod.log_delta_grid([(lo, k)], e, False, cells=2**10)
    if truth == 0:
        assert low == -np.inf and g_lo == -np.inf
        return
    t = mpmath.log(truth)
    assert mpmath.mpf(low) <= t <= mpmath.mpf(hi)
    assert mpmath.mpf(g_lo) <= t <= mpmath.mpf(min(g_hi, 0.0))
    # tight up to the inputs' own error, magnified where delta cancels: an atom whose loss L sits
    # just above e contributes P (1 - e^(e - L)), whose log moves 1 / (1 - e^(e - L)) per unit of L
    finite = np.isfinite(lp) & np.isfinite(lq)
    gaps = (lp - lq)[finite] - e
    cancel = float(np.max(1.0 / -np.expm1(-gaps[gaps > 0]), initial=1.0))
    input_error = float(np.max((err_p + err_q)[finite], initial=0.0))
    assert hi - low < 1e-11 * (1 + abs(hi)) + 8 * k * input_error * cancel


def test_grid_at_the_top_loss_stays_small():
    """epsilon at the largest loss tilts the law onto one atom (tiny variance): the grid
    spacing is floored so a run spans at most 16 cells-widths (this once asked for a
    9 GiB grid), and the bounds still bracket the exact value (0 here)."""
    P = np.array([0.5, 0.5, 0, 0, 0])
    Q = np.array([1.0, 0.5, 1.0, 1.0, 1.0]) / 4.5
    with np.errstate(divide="ignore"):
        d = pldmod.LossDistribution.from_log_pmfs(np.log(P), np.log(Q))
    for k in (1, 3):
        top = k * float(d.losses[-1])
        up, h = pldmod.log_delta_grid([(d, k)], top, True, cells=2**10)
        lo, _ = pldmod.log_delta_grid([(d, k)], top, False, cells=2**10)
        assert h >= float(d.losses[-1] - d.losses[0]) / (16 * 2**10)
        assert lo <= up
        exact = pldmod.compose_exact([(d, k)], upper=True)
        assert exact is not None
        assert float(exact.log_delta(np.array([top]))[0]) <= up
