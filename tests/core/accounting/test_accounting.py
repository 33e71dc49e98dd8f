"""Inverse curves, the privacy-loss distribution export and the Renyi view.

References are independent: closed forms, mpmath at 50 digits, explicit
enumeration, and dp_accounting's own composition of the exported PLD.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.reports import profile

mpmath.mp.dps = 50


def rr_mechanism(p: float = 0.75) -> sdp.FiniteMechanism:
    def law(h: tuple[int, ...]) -> dict[int, float]:
        return {0: p, 1: 1 - p} if h[0] == 1 else {0: 1 - p, 1: p}

    return sdp.FiniteMechanism(law, categories=2, name="rr")


def count_rr(p: float = 0.75) -> sdp.FiniteMechanism:
    """Randomized response on every record, publishing the number of 0-reports."""
    from scipy.stats import binom

    def law(h: tuple[int, ...]) -> dict[int, float]:
        h0, h1 = h
        pmf = np.convolve(binom.pmf(range(h0 + 1), h0, p), binom.pmf(range(h1 + 1), h1, 1 - p))
        return dict(enumerate(pmf))

    return sdp.FiniteMechanism(law, categories=2, name="count rr")


# -- inverse curves ------------------------------------------------------------------


def test_dp_epsilon_of_randomized_response_has_a_closed_form():
    """One record: delta_eps = max(0, p - e^eps (1 - p)), so eps* = log((p - delta) / (1 - p))."""
    targets = np.array([1e-3, 0.1, 0.3, 0.49])
    got = sdp.dp_epsilon(rr_mechanism(), 1, targets)
    ref = np.log((0.75 - targets) / 0.25)
    # certified: the (rounded-up) forward log delta meets every target at the answer ...
    assert np.all(sdp.dp_delta(rr_mechanism(), 1, got, categories=2, log=True) <= np.log(targets))
    # ... and tight: within 1e-6 relative of the closed form (never below it, as delta is
    # an upper bound of the exact value, which is strictly decreasing here)
    assert np.all(got >= ref * (1 - 1e-12))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    # delta_0 = 1/2 exactly: its rounded-up bound may miss 1/2 by an ulp, so the certified
    # answer is 0 or a hair above it
    at_half = sdp.dp_epsilon(rr_mechanism(), 1, 0.5)
    assert 0.0 <= at_half <= 1e-12
    assert sdp.dp_delta(rr_mechanism(), 1, at_half, categories=2, log=True) <= math.log(0.5)


@given(h0=st.integers(1, 59), target=st.floats(1e-12, 0.3))
def test_profile_epsilon_is_certified_and_tight(h0, target):
    mech = sdp.SamplingHistogram(eta=0.5)
    x = [h0, 60 - h0]
    eps = sdp.profile_epsilon(mech, x, target)
    if math.isinf(eps):
        assert sdp.privacy_profile(mech, x, 512.0) > target
        return
    assert sdp.privacy_profile(mech, x, eps) <= target
    if eps > 0:  # just below, the target is missed (tight within 1e-6 relative)
        assert sdp.privacy_profile(mech, x, eps * (1 - 1e-6) - 1e-15) > target


def test_profile_epsilon_shapes_and_log_targets():
    mech = sdp.SamplingHistogram(eta=0.5)
    h = [[60, 40], [90, 10]]
    out = sdp.profile_epsilon(mech, h, [1e-2, 1e-3, 1e-6])
    assert out.shape == (2, 3) and np.all(np.diff(out, axis=1) >= 0)
    assert np.ndim(sdp.profile_epsilon(mech, h[0], 1e-3)) == 0
    np.testing.assert_allclose(
        sdp.profile_epsilon(mech, h[0], math.log(1e-3), log=True), sdp.profile_epsilon(mech, h[0], 1e-3), rtol=1e-12
    )


def test_election_profile_epsilon_at_1e_minus_40():
    mech = sdp.SamplingHistogram(eta=0.998)
    h = sdp.datasets.election_histogram(2020)
    eps = sdp.profile_epsilon(mech, h, 1e-40)
    assert 0 < eps < 1
    assert sdp.privacy_profile(mech, h, eps, log=True) <= math.log(1e-40)
    assert sdp.privacy_profile(mech, h, eps * (1 - 1e-6), log=True) > math.log(1e-40)


def test_smoothed_epsilon_is_certified_and_tight():
    mech = sdp.SamplingHistogram(eta=0.5)
    pi = [[0.5, 0.5], [0.4, 0.6]]
    eps = sdp.smoothed_epsilon(mech, 30, pi, 0.05)
    assert 0 < eps < 10
    assert sdp.smoothed_delta(mech, 30, pi, eps).delta <= 0.05
    assert sdp.smoothed_delta(mech, 30, pi, eps * (1 - 1e-6)).delta > 0.05
    res = sdp.smoothed_delta(mech, 30, pi, [0.5, 1.0])
    assert res.epsilon_for(0.05) == eps


def test_profile_result_epsilon_for_uses_its_grid():
    mech = sdp.SamplingHistogram(eta=0.5)
    grid = np.linspace(0.0, 3.0, 31)
    r = profile(mech, [[60, 40], [90, 10]], grid)
    got = r.epsilon_for([1e-2, 1e-3])
    for i, x in enumerate([[60, 40], [90, 10]]):
        for j, t in enumerate([1e-2, 1e-3]):
            d = sdp.privacy_profile(mech, x, grid)
            assert got[i, j] == grid[np.argmax(d <= t)]
            assert got[i, j] >= sdp.profile_epsilon(mech, x, t)


def test_inverse_bad_input():
    mech = sdp.SamplingHistogram(eta=0.5)
    for bad in (0.0, 1.5, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            sdp.profile_epsilon(mech, [3, 3], bad)
    with pytest.raises(TypeError, match="delta"):
        sdp.profile_epsilon(mech, [3, 3], "0.1")
    with pytest.raises(ValueError, match="delta"):
        sdp.profile_epsilon(mech, [3, 3], 0.5, log=True)
    with pytest.raises(ValueError, match="method"):
        sdp.smoothed_epsilon(mech, 5, [[0.5, 0.5]], 0.1, method="monte-carlo")


# -- privacy-loss distributions --------------------------------------------------------


def test_pld_support_matches_the_output_laws():
    mech = sdp.SamplingHistogram(eta=0.5)
    x, x2 = np.array([3, 3]), np.array([2, 4])
    pld = sdp.privacy_loss_distribution(mech, x, x2)
    op, lp = mech.log_output_pmf(x)
    oq, lq = mech.log_output_pmf(x2)
    P = {tuple(o): math.exp(v) for o, v in zip(op.tolist(), lp)}
    Q = {tuple(o): math.exp(v) for o, v in zip(oq.tolist(), lq)}
    for direction, (A, B) in (("forward", (P, Q)), ("backward", (Q, P))):
        losses, probs, inf = pld.support(direction)  # rounded up: P masses up, Q masses down
        lower = (pld.forward if direction == "forward" else pld.backward).exact(upper=False)
        assert lower is not None
        ref: dict[float, float] = {}
        ref_inf = 0.0
        for o, a in A.items():
            if B.get(o, 0.0) == 0.0:
                ref_inf += a
            else:
                key = round(math.log(a / B[o]), 9)
                ref[key] = ref.get(key, 0.0) + a
        # the certified masses enclose the reference (float64 of the exact laws: 1e-14 slack)
        ref_p = np.array([ref[k] for k in sorted(ref)])
        assert math.exp(lower.log_inf) * (1 - 1e-14) <= ref_inf <= inf * (1 + 1e-14)
        assert math.isclose(inf, ref_inf, rel_tol=1e-10)
        assert sorted(ref) == pytest.approx(list(losses), abs=1e-9)
        assert np.all(ref_p <= probs * (1 + 1e-14))
        assert np.all(np.exp(lower.log_mass) * (1 - 1e-14) <= ref_p)
        assert np.all(losses >= np.array(sorted(ref)) - 1e-9)  # losses rounded up
        np.testing.assert_allclose(probs, ref_p, rtol=1e-10)
    frame = pld.to_frame()
    assert set(frame["direction"]) == {"forward", "backward"}
    eps = np.array([0.0, 0.5, 1.5])
    want = np.array([max(_hs(P, Q, e), _hs(Q, P, e)) for e in eps])
    assert np.all(pld.delta_enclosure(eps).delta_lower <= want * (1 + 1e-14))
    assert np.all(want <= pld.delta(eps) * (1 + 1e-14))
    np.testing.assert_allclose(pld.delta(eps), want, rtol=1e-10)


def _hs(P, Q, e):
    return sum(max(0.0, a - math.exp(e) * Q.get(o, 0.0)) for o, a in P.items())


def test_pld_renyi_matches_mpmath():
    mech = count_rr(0.7)
    x, x2 = np.array([3, 2]), np.array([2, 3])
    pld = sdp.privacy_loss_distribution(mech, x, x2)
    op, lp = mech.log_output_pmf(x)
    oq, lq = mech.log_output_pmf(x2)
    P = dict(zip(op.tolist(), (mpmath.e ** mpmath.mpf(v) for v in lp)))
    Q = dict(zip(oq.tolist(), (mpmath.e ** mpmath.mpf(v) for v in lq)))
    for alpha in (0.5, 2.0, 7.0):
        f = mpmath.log(sum(P[o] ** alpha * Q[o] ** (1 - alpha) for o in P)) / (alpha - 1)
        b = mpmath.log(sum(Q[o] ** alpha * P[o] ** (1 - alpha) for o in P)) / (alpha - 1)
        assert math.isclose(pld.renyi(alpha, "forward"), float(f), rel_tol=1e-10)
        assert math.isclose(pld.renyi(alpha), float(max(f, b)), rel_tol=1e-10)
    kl = sum(P[o] * mpmath.log(P[o] / Q[o]) for o in P)
    assert math.isclose(pld.renyi(1.0, "forward"), float(kl), rel_tol=1e-10)
    # composition: Renyi divergences add
    pld5 = sdp.privacy_loss_distribution(sdp.repeat(mech, 5), x, x2)
    assert math.isclose(pld5.renyi(2.0), 5 * pld.renyi(2.0), rel_tol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_dp_accounting_composition_agrees_with_repeat(k):
    """Composing the export in dp_accounting brackets our exact composition within its
    grid: every loss moves by at most h per run, so its pessimistic delta at eps lies
    between ours at eps and ours at eps - k h (the hockey stick of losses shifted by c
    at eps is the original at eps - c), and its optimistic one symmetrically below."""
    mech = sdp.SamplingHistogram(eta=0.5)
    x, x2 = np.array([12, 8]), np.array([11, 9])
    eps = np.array([0.1, 0.5, 1.0, 2.0])  # eps - k h stays >= 0
    h = 1e-4
    composed = sdp.privacy_loss_distribution(sdp.repeat(mech, k), x, x2)
    ours = composed.delta(eps)
    single = sdp.privacy_loss_distribution(mech, x, x2)
    hi = np.array(single.to_dp_accounting(h).self_compose(k).get_delta_for_epsilon(list(eps)))
    lo = np.array(single.to_dp_accounting(h, pessimistic=False).self_compose(k).get_delta_for_epsilon(list(eps)))
    assert np.all(hi >= ours * (1 - 1e-9))
    assert np.all(hi <= composed.delta(eps - k * h) * (1 + 1e-9))
    assert np.all(lo <= ours * (1 + 1e-9))
    assert np.all(lo >= composed.delta(eps + k * h) * (1 - 1e-9))
    exported = composed.to_dp_accounting(h)  # the composition's own export: composed in dp_accounting
    np.testing.assert_allclose(exported.get_delta_for_epsilon(list(eps)), hi, rtol=1e-9)


def test_pld_bad_input():
    mech = sdp.SamplingHistogram(eta=0.5)
    with pytest.raises(ValueError, match="neighbours"):
        sdp.privacy_loss_distribution(mech, [3, 3], [1, 5])
    with pytest.raises(ValueError, match="neighbours"):
        sdp.privacy_loss_distribution(mech, [3, 3], [3, 3])
    pld = sdp.privacy_loss_distribution(mech, [3, 3], [2, 4])
    with pytest.raises(ValueError, match="alpha"):
        pld.renyi(-1.0)
    with pytest.raises(ValueError, match="direction"):
        pld.renyi(2.0, "sideways")
    with pytest.raises(ValueError, match="epsilon"):
        pld.delta_enclosure(-1.0)


# -- Renyi profile and its smoothed average ----------------------------------------------


def _renyi_brute(mech, x, alpha):
    x = np.asarray(x)
    best = 0.0
    for a, b in itertools.permutations(range(x.size), 2):
        if x[a] < 1:
            continue
        x2 = x.copy()
        x2[a] -= 1
        x2[b] += 1
        op, lp = mech.log_output_pmf(x)
        oq, lq = mech.log_output_pmf(x2)
        P = dict(zip(op.tolist(), (mpmath.e ** mpmath.mpf(v) for v in lp)))
        Q = dict(zip(oq.tolist(), (mpmath.e ** mpmath.mpf(v) for v in lq)))
        for A, B in ((P, Q), (Q, P)):
            d = mpmath.log(sum(A[o] ** alpha * B[o] ** (1 - alpha) for o in A)) / (alpha - 1)
            best = max(best, float(d))
    return best


def test_renyi_profile_matches_brute_force():
    mech = count_rr(0.8)
    for x in ([3, 1], [0, 4], [2, 2]):
        got = sdp.renyi_profile(mech, x, [0.5, 3.0])
        np.testing.assert_allclose(got, [_renyi_brute(mech, x, a) for a in (0.5, 3.0)], rtol=1e-10)
    assert np.all(np.isinf(sdp.renyi_profile(sdp.SamplingHistogram(eta=0.5), [3, 3], [1.0, 2.0])))


def test_smoothed_renyi_matches_enumeration_of_records():
    """E over databases whose records are drawn from the vertices, by listing every record
    sequence, maximised over the compositions."""
    mech = count_rr(0.8)
    n = 4
    V = np.array([[0.5, 0.5], [0.9, 0.1]])
    alpha = 2.0
    res = sdp.smoothed_renyi(mech, n, V, alpha)
    R = {k: float(sdp.renyi_profile(mech, [k, n - k], alpha)) for k in range(n + 1)}
    best = 0.0
    for c in range(n + 1):  # c records from vertex 0, n - c from vertex 1
        probs = [V[0]] * c + [V[1]] * (n - c)
        total = 0.0
        for cats in itertools.product((0, 1), repeat=n):
            w = math.prod(p[j] for p, j in zip(probs, cats))
            total += w * R[n - sum(cats)]
        best = max(best, total)
    assert math.isclose(float(res.value[0]), best, rel_tol=1e-10)
    assert res.to_frame().shape == (1, 5) and "alpha = 2" in str(res)


# -- %%smoothdp keys ---------------------------------------------------------------------


def test_spec_repeat_and_target_delta():
    from smoothdp_nb.spec import SpecError, parse_spec, run_spec

    text = "\n".join(
        [
            'compute = "profile"',
            "mechanism = {eta = 0.5, repeat = 3}",
            "histogram = [[60, 40], [90, 10]]",
            "target_delta = [1e-2, 1e-6]",
        ]
    )
    res = run_spec(parse_spec(text))
    mech = sdp.repeat(sdp.SamplingHistogram(eta=0.5), 3)
    assert res.mechanism == mech
    ref = sdp.profile_epsilon(mech, [[60, 40], [90, 10]], [1e-2, 1e-6])
    np.testing.assert_array_equal(res.epsilon_for([1e-2, 1e-6]), ref)
    with pytest.raises(SpecError, match=r"mechanism\.repeat"):
        parse_spec("mechanism = {eta = 0.5, repeat = 0}\nhistogram = [3, 3]\nepsilon = 1")
    with pytest.raises(SpecError, match="target_delta"):
        parse_spec("mechanism = {eta = 0.5}\nhistogram = [3, 3]\ntarget_delta = 2")
