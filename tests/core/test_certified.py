"""Every reported privacy number is a proven upper bound, and the
enclosures' lower bounds are below the truth.  The exact values come from
tests/exact.py (fractions.Fraction enumeration, mpmath at 60 digits), never
from the package's numerical code."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from tests import exact

mp.mp.dps = 60


def _check(enc, want):
    """enc: a LogEnclosure of one value; want: the exact value (mpmath)."""
    hi, lo = float(enc.upper), float(enc.lower)
    if want == 0:
        assert lo == -math.inf
        return
    lw = mp.log(want)
    assert mp.mpf(hi) >= lw, (hi, float(lw))
    assert mp.mpf(lo) <= lw, (lo, float(lw))


# -- small cases whose exact values are known ---------------------------------------
def test_dp_delta_of_the_sampling_histogram_is_at_least_two_thirds():
    d = sdp.dp_delta(sdp.SamplingHistogram(T=4), 6)
    assert Fraction(d) >= Fraction(2, 3)
    assert Fraction(d) - Fraction(2, 3) < Fraction(1, 2**52)


def test_randomized_response_at_epsilon_zero_is_at_least_one_half():
    rr = sdp.FiniteMechanism(lambda h: {1: 0.75 if h[0] else 0.25, 0: 0.25 if h[0] else 0.75}, categories=2)
    assert Fraction(sdp.dp_delta(rr, 1, 0.0)) >= Fraction(1, 2)
    enc = sdp.privacy_profile_enclosure(rr, [1, 0], 0.0)
    _check(enc, mp.mpf(1) / 2)
    # epsilon exactly the log-likelihood ratio ln 3: the truth is 0, and the lower bound says so
    enc3 = sdp.privacy_profile_enclosure(rr, [1, 0], math.log(3))
    assert float(enc3.lower) == -math.inf and float(enc3.upper) < math.log(1e-13)


# -- sampling histograms ----------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 9),
    st.integers(0, 9),
    st.integers(1, 5),
    st.sampled_from([0.0, 0.25, 1.0, 3.0]),
    st.booleans(),
)
def test_sampling_histogram_binary_enclosure_holds_the_exact_value(a, b, T, e, replace):
    n = a + b
    T = min(T, n)
    m = sdp.SamplingHistogram(T=T, replace=replace)
    enc = sdp.privacy_profile_enclosure(m, [a, b], e)
    _check(enc, exact.profile((a, b), T, e, replace=replace))
    assert mp.mpf(sdp.privacy_profile(m, [a, b], e)) >= exact.profile((a, b), T, e, replace=replace)


@settings(max_examples=15, deadline=None)
@given(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(1, 4)), st.integers(1, 3), st.booleans())
def test_sampling_histogram_ternary_enclosure(h, T, replace):
    T = min(T, sum(h))
    m = sdp.SamplingHistogram(T=T, replace=replace)
    for e in (0.0, 0.5):
        _check(sdp.privacy_profile_enclosure(m, list(h), e), exact.profile(h, T, e, replace=replace))


def test_epsilon_equal_to_a_likelihood_ratio():
    # without replacement, u + 1 = 3 a's and v = 2 b's, T = 2: the output (2, 0) has
    # ratio (u+1)/(u+1-2) * 1 = 3 exactly; epsilon = ln 3 makes that term an exact 0
    m = sdp.SamplingHistogram(T=2)
    for e in (math.log(3), math.log(1.5), math.log(2)):
        _check(sdp.privacy_profile_enclosure(m, [3, 2], e), exact.profile((3, 2), 2, e))


# -- finite, subclassed, post-processed mechanisms ---------------------------------
def _rr_law(h):
    law = exact.randomized_response_law(tuple(int(c) for c in h), Fraction(3, 4))
    return {k: float(v) for k, v in law.items()}  # dyadic rationals: exact in float


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 3), st.integers(0, 3), st.sampled_from([0.0, math.log(3), 0.7]))
def test_finite_mechanism_enclosure(a, b, e):
    if a + b == 0:
        return
    mech = sdp.FiniteMechanism(_rr_law, categories=2)
    want = exact.profile_of_law(lambda x: exact.randomized_response_law(x, Fraction(3, 4)), (a, b), e)
    _check(sdp.privacy_profile_enclosure(mech, [a, b], e), want)


class _Coin(sdp.Mechanism):
    """Publishes 1 with probability (1 + #category 0) / (n + 2)."""

    @property
    def categories(self):
        return 2

    def log_output_pmf(self, hist):
        n = int(sum(hist))
        p = (1 + int(hist[0])) / (n + 2)
        return np.array([0, 1]), np.log(np.array([1 - p, p]))


def test_mechanism_subclass_enclosure():
    def law(x):
        p = Fraction(1 + x[0], sum(x) + 2)
        return {0: 1 - p, 1: p}

    for h in ((1, 2), (3, 0), (2, 2)):
        for e in (0.0, 0.2, math.log(4 / 3)):
            _check(sdp.privacy_profile_enclosure(_Coin(), list(h), e), exact.profile_of_law(law, h, e))


def test_postprocessed_map_enclosure():
    f = lambda o: int(o[0] > o[1])  # noqa: E731
    mech = sdp.postprocess(sdp.SamplingHistogram(T=3), f)

    def law(x):
        out: dict[int, Fraction] = {}
        for o, p in exact.pmf_without_replacement(x, 3).items():
            out[f(o)] = out.get(f(o), Fraction(0)) + p
        return out

    for h in ((2, 3), (4, 1)):
        for e in (0.0, 0.5):
            _check(sdp.privacy_profile_enclosure(mech, list(h), e), exact.profile_of_law(law, h, e))


def _pushforward(law, f):
    out: dict[object, Fraction] = {}
    for o, p in law.items():
        y = f(o)
        for k, q in y.items() if isinstance(y, dict) else ((y, Fraction(1)),):
            out[k] = out.get(k, Fraction(0)) + p * q
    return out


def _exact_winner(o):
    top = [i for i, v in enumerate(o) if v == max(o)]
    return top[0] if len(top) == 1 else {i: Fraction(1, len(top)) for i in top}


def _rr_fraction_law(h):
    return exact.randomized_response_law((h[0], sum(h) - h[0]), Fraction(3, 4))


_RR = sdp.FiniteMechanism(lambda h: {k: float(v) for k, v in _rr_fraction_law(h).items()}, categories=3)


def _composite(kind, T):
    """(mechanism, exact law) of the composite mechanisms."""
    with_rep = lambda h: exact.pmf_with_replacement(h, T)  # noqa: E731
    without = lambda h: exact.pmf_without_replacement(h, T)  # noqa: E731
    if kind == "winner-with-replacement":
        mech = sdp.postprocess(sdp.SamplingHistogram(T=T, replace=True), sdp.winner)
        return mech, lambda h: _pushforward(with_rep(h), _exact_winner)
    if kind == "map":
        return sdp.postprocess(sdp.SamplingHistogram(T=T), lambda o: o[0] - o[-1]), lambda h: _pushforward(
            without(h), lambda o: o[0] - o[-1]
        )
    if kind == "joint":
        mech = sdp.joint(sdp.SamplingHistogram(T=T), _RR)
        return mech, lambda h: {(a, b): p * q for a, p in without(h).items() for b, q in _rr_fraction_law(h).items()}
    # repeat of the winner fast path, twice
    mech = sdp.repeat(sdp.postprocess(sdp.SamplingHistogram(T=T), sdp.winner), 2)

    def law(h):
        w = _pushforward(without(h), _exact_winner)
        return {(a, b): p * q for a, p in w.items() for b, q in w.items()}

    return mech, law


@given(
    st.sampled_from(["winner-with-replacement", "map", "joint", "repeat"]),
    st.lists(st.integers(0, 3), min_size=3, max_size=3).filter(lambda h: sum(h) >= 1),
    st.integers(1, 3),
    st.data(),
)
@settings(max_examples=40, deadline=None)
def test_composite_mechanisms_enclose_the_exact_profile(kind, h, T, data):
    """Every composite class against its exact law, at epsilon 0, a random epsilon and
    epsilon equal to a likelihood ratio of the law (the float nearest log P(o)/Q(o))."""
    T = min(T, sum(h))
    mech, law = _composite(kind, T)
    P = law(tuple(h))
    ratios = sorted(
        {
            float(abs(mp.log(exact.to_mp(P[o]) / exact.to_mp(Q[o]))))
            for x in exact.neighbours(tuple(h))
            for Q in [law(x)]
            for o in P
            if o in Q and P[o] != Q[o] and P[o] > 0 and Q[o] > 0
        }
    )
    eps = [0.0, data.draw(st.floats(0.0, 2.0))] + ([data.draw(st.sampled_from(ratios))] if ratios else [])
    for e in eps:
        _check(sdp.privacy_profile_enclosure(mech, h, e), exact.profile_of_law(law, tuple(h), e))


# -- dp_delta, remark8, compose, smoothed --------------------------------------------
def test_generic_dp_delta_is_an_upper_bound():
    mech = sdp.FiniteMechanism(_rr_law, categories=2)
    law = lambda x: exact.randomized_response_law(x, Fraction(3, 4))  # noqa: E731
    for e in (0.0, 0.5):
        want = max(exact.profile_of_law(law, (k, 3 - k), e) for k in range(4))
        assert mp.mpf(sdp.dp_delta(mech, 3, e)) >= want


def test_remark8_is_rounded_up():
    for n in (50, 1000, 10**5):
        for e in (1.0, 2.5):
            got = sdp.remark8_bound(n, 3, 0.5, e, 0.2, log=True)
            g = (mp.mpf(1 - mp.e ** -mp.mpf(e)) / mp.mpf(0.5) - 1) ** 2
            want = mp.log(mp.e ** (-g * mp.mpf(0.2) * n / 6) + 3 * mp.e ** (-mp.mpf(0.2) * n / 8))
            assert mp.mpf(got) >= min(want, 0)


def test_compose_rounds_outward():
    # deltas whose correctly rounded sum (math.fsum) lies below the exact sum
    d = [0.000651592972722763, 0.0007887233511355132, 9.38595867742349e-05]
    assert Fraction(math.fsum(d)) < sum(Fraction(x) for x in d)
    items = [(0.1, d[0]), (0.2, d[1]), (0.3, d[2])]
    c = sdp.compose(items)
    assert Fraction(c.delta) >= sum(Fraction(d) for _, d in items)
    assert Fraction(c.epsilon) >= sum(Fraction(e) for e, _ in items)


@given(st.lists(st.tuples(st.fractions(0, 3), st.fractions(0, Fraction(1, 4))), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_compose_of_exact_rationals_is_never_below_their_sum(items):
    # a Fraction guarantee (1/3) is a number compose accepts: its sum must not shrink to the
    # nearest float below (0.3333333333333333 < 1/3: rounded to nearest, it would be below the truth)
    c = sdp.compose(items)
    assert Fraction(c.epsilon) >= sum(e for e, _ in items)
    assert Fraction(c.delta) >= min(Fraction(1), sum(d for _, d in items))


def test_compose_of_one_third():
    c = sdp.compose([(Fraction(1, 3), Fraction(1, 3))])
    assert Fraction(c.epsilon) >= Fraction(1, 3) and Fraction(c.delta) >= Fraction(1, 3)


def test_smoothed_delta_exact_encloses_definition_3():
    mech = sdp.SamplingHistogram(T=2)
    pi = [[Fraction(1, 4), Fraction(3, 4)], [Fraction(1, 2), Fraction(1, 2)]]
    law = lambda x: exact.pmf_without_replacement(x, 2)  # noqa: E731
    for e in (0.0, 0.5):
        want = exact.smoothed_of_law(law, pi, 4, e)
        r = sdp.smoothed_delta(mech, 4, [[0.25, 0.75], [0.5, 0.5]], e)
        assert mp.mpf(r.log_delta) >= mp.log(want)
        assert mp.mpf(r.log_delta_lower) <= mp.log(want)
        assert mp.mpf(r.delta) >= want


@pytest.mark.parametrize("n", [2000, 20000])
def test_enclosures_are_tight_on_large_profiles(n):
    m = sdp.SamplingHistogram(eta=0.998)
    h = np.array([[k, n - k] for k in range(0, n + 1, max(1, n // 50))])
    enc = sdp.privacy_profile_enclosure(m, h, [0.5, 1.0])
    w = np.asarray(enc.width)
    assert np.all(w[np.isfinite(enc.lower)] < 1e-9)


def _noisy_law_mp(h, T, noise_epsilon):
    """Algorithm 4 on the lumped output space, from first principles (mpmath)."""
    r = mp.e ** (-mp.mpf(noise_epsilon) / 4)

    def kern(s, c):
        z = (1 + r - r ** (s + 1)) / (1 - r)
        return r ** (T - s) / ((1 - r) * z) if c == T else r ** abs(c - s) / z

    law = {}
    import itertools

    for o in itertools.product(range(T + 1), repeat=len(h)):
        law[o] = sum(
            exact.to_mp(p) * mp.fprod(kern(s, c) for s, c in zip(samp, o))
            for samp, p in exact.pmf_without_replacement(h, T).items()
        )
    return law


def _hockey_mp(P, Q, e):
    E = mp.e ** mp.mpf(e)
    return sum((max(mp.mpf(0), P[o] - E * Q.get(o, 0)) for o in P), mp.mpf(0))


@pytest.mark.parametrize("h", [(2, 1), (0, 3), (2, 2)])
def test_noisy_sampling_histogram_enclosure(h):
    T, ne = 2, 1.0
    mech = sdp.NoisySamplingHistogram(T=T, noise_epsilon=ne)
    P = _noisy_law_mp(h, T, ne)
    for e in (0.0, 0.3):
        want = mp.mpf(0)
        for x in exact.neighbours(h):
            Q = _noisy_law_mp(x, T, ne)
            want = max(want, _hockey_mp(P, Q, e), _hockey_mp(Q, P, e))
        _check(sdp.privacy_profile_enclosure(mech, list(h), e), want)


def test_dp_delta_enclosures():
    _check(sdp.dp_delta_enclosure(sdp.SamplingHistogram(T=4), 6), mp.mpf(2) / 3)
    _check(sdp.dp_delta_enclosure(sdp.SamplingHistogram(T=4, replace=True), 6), 1 - (mp.mpf(5) / 6) ** 4)
    _check(sdp.dp_delta_enclosure(sdp.SamplingAverage(T=4, grid=[0.0, 1.0]), 7), mp.mpf(4) / 7)
    rr = sdp.FiniteMechanism(lambda h: {1: 0.75 if h[0] else 0.25, 0: 0.25 if h[0] else 0.75}, categories=2)
    _check(sdp.dp_delta_enclosure(rr, 1, 0.0), mp.mpf(1) / 2)
    # epsilon = ln 3 is the likelihood ratio of randomized response: the DP delta is exactly 0
    assert float(sdp.dp_delta_enclosure(rr, 1, math.log(3)).lower) == -math.inf


@settings(max_examples=12, deadline=None)
@given(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), st.integers(1, 3))
def test_sampling_average_enclosure(h, T):
    if sum(h) < T:
        return
    values = [Fraction(0), Fraction(1, 4), Fraction(1)]
    mech = sdp.SamplingAverage(T=T, grid=[float(v) for v in values])
    law = lambda x: exact.sampling_average_law(x, values, T)  # noqa: E731
    for e in (0.0, 0.5, math.log(2)):
        _check(sdp.privacy_profile_enclosure(mech, list(h), e), exact.profile_of_law(law, h, e))


def _winner_exact(h: tuple[int, int], T: int, eps: float) -> mp.mpf:
    """Definition 2 for the winner of a sample of T drawn without replacement (ties half),
    from the hypergeometric law in fractions; neighbours move one record."""
    from math import comb

    def w(a: int, b: int) -> Fraction:
        out = Fraction(0)
        for k in range(max(0, T - b), min(a, T) + 1):
            p = Fraction(comb(a, k) * comb(b, T - k), comb(a + b, T))
            out += p if 2 * k > T else p / 2 if 2 * k == T else 0
        return out

    a, b = h
    best = mp.mpf(0)
    for nb in ((a - 1, b + 1), (a + 1, b - 1)):
        if min(nb) < 0:
            continue
        P, Q = w(a, b), w(*nb)
        for p, q in ((P, Q), (Q, P)):
            d = sum(
                max(
                    mp.mpf(0),
                    mp.mpf(x.numerator) / x.denominator - mp.e ** mp.mpf(eps) * mp.mpf(y.numerator) / y.denominator,
                )
                for x, y in ((p, q), (1 - p, 1 - q))
            )
            best = max(best, d)
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 50), st.data())
def test_winner_fast_path_encloses_the_exact_profile(n, data):
    """The closed-form winner path (SampledWinner) brackets the 50-digit truth and its
    upper bound is tight wherever the truth is positive: within 1e-11 of it times the
    cancellation of d = dW - (e^eps - 1) O, i.e. dW / d <= delta_0 / delta_eps (the
    exact profiles; (24, 17, 11) at eps = 1 cancels 195-fold: 1.15e-9), and 1e-9 where
    nothing cancels."""
    T = data.draw(st.integers(1, n))
    a = data.draw(st.integers(0, n))
    eps = np.array([0.0, 0.05, 0.3, 1.0, 3.0])
    M = sdp.postprocess(sdp.SamplingHistogram(T=T), sdp.winner)
    enc = sdp.privacy_profile_enclosure(M, [a, n - a], eps)
    with mp.workdps(50):
        ex0 = _winner_exact((a, n - a), T, 0.0)
        for j, e in enumerate(eps):
            ex = _winner_exact((a, n - a), T, float(e))
            hi = mp.e ** mp.mpf(float(enc.upper[j])) if np.isfinite(enc.upper[j]) else mp.mpf(0)
            lo = mp.e ** mp.mpf(float(enc.lower[j])) if np.isfinite(enc.lower[j]) else mp.mpf(0)
            assert lo <= ex <= hi, (n, T, a, e)
            if ex > 0:
                assert hi / ex - 1 <= max(1e-9, 1e-11 * ex0 / ex), (n, T, a, e, ex0 / ex)


def test_frames_log10_columns_are_upper_bounds():
    """log10_delta of the result frames is log delta / ln 10 rounded up (to nearest it fell an
    ulp below the bound: 1 of these 30 cells), so every column of a frame is an upper bound."""
    from smoothdp_nb.core.smoothed.reports import profile

    mp.mp.dps = 40
    s = sdp.smoothed_delta(sdp.SamplingHistogram(T=4), 20, [[0.7, 0.3], [0.4, 0.6]], np.linspace(0, 2, 30))
    pr = profile(sdp.SamplingHistogram(T=7), [[a, 30 - a] for a in range(31)], np.linspace(0, 2, 9))
    for frame, logs in ((s.to_frame(), s.log_delta_values), (pr.to_frame(), pr.log_delta.ravel())):
        for col, ld in zip(frame["log10_delta"], logs):
            assert ld == -math.inf or mp.mpf(col) >= mp.mpf(ld) / mp.log(10)
    for row, logs in zip(pr.to_dict()["log10_delta"], pr.log_delta):
        for col, ld in zip(row, logs):
            assert ld == -math.inf or mp.mpf(col) >= mp.mpf(ld) / mp.log(10)
    mp.mp.dps = 60


# -- histograms of several sizes in one call (one vectorised pass) ----------------------------------
def _no_per_size_calls(monkeypatch):
    """Make the per-size hook fail: the mixed-size batch must not need it."""

    def refuse(self, hists, n, epsilon):
        raise AssertionError("the two-category batch of several sizes called the per-size hook")

    monkeypatch.setattr(sdp.SamplingHistogram, "_log_profile_enclosure", refuse)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)).filter(lambda h: sum(h) >= 1), min_size=2, max_size=5),
    st.sampled_from(["0.5", "0.75", "1"]),
    st.sampled_from([0.0, 0.25, 1.0]),
    st.booleans(),
)
def test_mixed_sizes_in_one_pass_enclose_the_exact_profiles(hs, eta, e, replace):
    """Rows of different sizes n (so different T = ceil(eta n)) in one call:
    each row's enclosure holds the exact profile (Fraction enumeration), and
    the per-size hook is not called when two sizes or more are present."""
    m = sdp.SamplingHistogram(eta=eta, replace=replace)
    with pytest.MonkeyPatch.context() as mpatch:
        if len({sum(h) for h in hs}) > 1:
            _no_per_size_calls(mpatch)
        enc = sdp.privacy_profile_enclosure(m, np.array(hs), [e])
    lo, hi = np.reshape(enc.lower, (len(hs),)), np.reshape(enc.upper, (len(hs),))
    for h, lo_r, hi_r in zip(hs, lo, hi):
        T = m.sample_size(sum(h))
        want = exact.profile(h, T, e, replace=replace)
        if want == 0:
            assert lo_r == -math.inf
            continue
        assert mp.mpf(lo_r) <= mp.log(want) <= mp.mpf(hi_r)


@pytest.mark.parametrize("replace", [False, True])
def test_mixed_large_sizes_against_mpmath_and_one_call_per_size(replace, monkeypatch):
    """Databases of three sizes (shares and sizes in the range of the election
    rows of Figure 1, scaled down for the 60-digit reference) in one call: the
    enclosures hold the mpmath profile, stay within 1e-9, and agree with one
    call per size (the hook's default)."""
    m = sdp.SamplingHistogram(eta=0.998, replace=replace)
    H = np.array([[1203, 1100], [2520, 2480], [40_100, 39_000], [1000, 1303]])
    eps = [math.log(0.51 / 0.49), 0.5, 1.0]
    per_size = np.stack([np.ravel(sdp.privacy_profile_enclosure(m, h, eps).upper) for h in H])
    with pytest.MonkeyPatch.context() as mpatch:
        _no_per_size_calls(mpatch)
        enc = sdp.privacy_profile_enclosure(m, H, eps)
    np.testing.assert_allclose(enc.upper, per_size, rtol=1e-12)
    if replace:  # (with replacement, width up to 1.4e-9 at n = 79100, as in one call per size;
        return  # and the 60-digit reference below is the hypergeometric one)
    assert np.all(np.asarray(enc.width)[np.isfinite(enc.lower)] < 1e-9)
    for (w, r), lo, hi in zip(H, enc.lower, enc.upper):
        T = m.sample_size(int(w + r))
        for j, e in enumerate(eps):
            want = max(
                exact.forward_divergence_binary_mp(u, v, T, e)
                for u, v in [(w - 1, r), (r, w - 1), (r - 1, w), (w, r - 1)]
            )
            assert mp.mpf(lo[j]) <= want <= mp.mpf(hi[j]) + mp.mpf("1e-38")


def test_sizes_beyond_the_pair_key_take_one_call_per_size():
    """Sizes of 2^31 records or more (the (n, u) key would not fit) fall back to
    one call per size, with the same values as separate calls."""
    m = sdp.SamplingHistogram(eta=0.5)
    H = np.array([[2**31, 2**31 - 7], [1000, 999]])
    enc = sdp.privacy_profile_enclosure(m, H, 0.01)
    for h, hi in zip(H, np.ravel(enc.upper)):
        assert hi == float(sdp.privacy_profile_enclosure(m, h, 0.01).upper)


def test_a_subclass_with_its_own_enclosure_keeps_one_call_per_size():
    """A subclass that overrides ``_log_profile_enclosure`` is still asked once per size."""
    calls = []

    class Mine(sdp.SamplingHistogram):
        label_symmetric = True  # the parent's profile, only counted

        def _log_profile_enclosure(self, hists, n, epsilon):
            calls.append(n)
            return super()._log_profile_enclosure(hists, n, epsilon)

    sdp.privacy_profile(Mine(eta=0.5), [[3, 4], [5, 6], [1, 6]], 0.5)
    assert sorted(calls) == [7, 11]
