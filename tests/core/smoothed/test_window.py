"""The windowed certificate of the exact engine (profiles of only the databases that matter),
and the range bound of the sampling histogram's profile it rests on, against independent
exact computations (Fraction enumeration, mpmath at 60 digits) and the full engine."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.engines import window
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.tail_bound import (
    log_hypergeom_lower_tail_upper,
    log_pair_range_upper,
    log_profile_range_upper,
)
from tests import exact


def _exact_log_profile(k: int, n: int, T: int, eps: float) -> float:
    d = exact.profile((k, n - k), T, eps)  # mpmath at 60 digits
    return -math.inf if d == 0 else float(mp.log(d))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 24),
    T_gap=st.integers(0, 5),
    eps=st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0]),
    a=st.integers(0, 24),
    w=st.integers(0, 24),
)
def test_range_bound_is_above_every_exact_profile_in_the_range(n, T_gap, eps, a, w):
    T = max(1, n - T_gap)
    lo, hi = min(a, n), min(a + w, n)
    bound = float(log_profile_range_upper(np.array([lo]), np.array([hi]), n, T, np.array([eps]))[0, 0])
    worst = max(_exact_log_profile(k, n, T, eps) for k in range(lo, hi + 1))
    assert bound >= worst


@pytest.mark.parametrize(
    ("n", "frac", "eps"),
    [(10**6, 0.055, 0.5), (10**7, 0.3, 1.0), (158_000_000, 0.055, 2.0), (158_000_000, 0.7, 7.0)],
)
def test_pair_bound_is_above_the_divergence_at_sixty_digits(n, frac, eps):
    T = math.ceil(Fraction("0.998") * n)
    u = int(frac * n)
    v = n - 1 - u
    ref = float(exact.forward_divergence_binary_mp(u, v, T, eps))
    bound = float(log_pair_range_upper(np.array([u]), np.array([u]), n, T, np.array([eps]))[0, 0])
    assert bound >= ref
    # and close enough to prune: within a few hundred nats of a value in the thousands
    assert bound - ref < 0.1 * abs(ref) + 50


@pytest.mark.parametrize(
    ("n", "eta", "frac", "eps"),
    [(10**7, "0.9", 0.3, 1.0), (10**7, "0.9", 0.6, 1.0), (158_000_000, "0.9", 0.3, 1.0), (10**6, "0.5", 0.2, 0.5)],
)
def test_pair_bound_keeps_the_finite_population_exponent(n, eta, frac, eps):
    """With a tenth or half of the records left out, the bound stays within a few nats of the
    60-digit divergence (the with-replacement exponent alone is thousands of nats off)."""
    T = math.ceil(Fraction(eta) * n)
    u = int(frac * n)
    ref = float(exact.forward_divergence_binary_mp(u, n - 1 - u, T, eps))
    bound = float(log_pair_range_upper(np.array([u]), np.array([u]), n, T, np.array([eps]))[0, 0])
    assert ref <= bound <= ref + 1e-3 * abs(ref)


def _log_hypergeom_tail_mp(M: int, good: int, n: int, draws: int) -> float:
    mp.mp.dps = 60
    lo = max(0, draws - (n - good))
    terms = [mp.e ** exact.log_hypergeom_mp(k, good, n - good, draws) for k in range(lo, M + 1)]
    total = mp.fsum(terms)
    return -math.inf if total == 0 else float(mp.log(total))


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 80), g=st.floats(0, 1), d=st.floats(0, 1), m=st.floats(0, 1))
def test_hypergeometric_tail_bound_is_above_the_exact_tail(n, g, d, m):
    good, draws = round(g * n), round(d * n)
    M = round(m * min(good, draws))
    bound = float(log_hypergeom_lower_tail_upper(np.array([float(M)]), np.array([float(good)]), n, draws)[0])
    # (a whole support sums to 1 up to the 60-digit rounding of its terms)
    assert bound >= _log_hypergeom_tail_mp(M, good, n, draws) - 1e-50


@pytest.mark.parametrize(
    ("n", "good", "draws", "M"), [(10**7, 3_000_001, 10**6, 136_190), (158_000_000, 40_000_000, 15_800_000, 2_000_000)]
)
def test_hypergeometric_tail_bound_is_tight_at_the_size_of_an_electorate(n, good, draws, M):
    """Above the exact tail (its terms summed down from M until they are below 1e-40 of the
    sum, a lower bound) and within log 2 of it."""
    mp.mp.dps = 60
    total, k = mp.mpf(0), M
    while k >= 0:
        t = mp.e ** exact.log_hypergeom_mp(k, good, n - good, draws)
        total += t
        if t < total * mp.mpf("1e-40"):
            break
        k -= 1
    ref = float(mp.log(total))
    bound = float(log_hypergeom_lower_tail_upper(np.array([float(M)]), np.array([float(good)]), n, draws)[0])
    assert ref <= bound <= ref + math.log(2.0)


def test_range_bound_is_refused_where_it_does_not_hold():
    mech = sdp.SamplingHistogram(eta=0.9, replace=True)
    assert mech._log_profile_range_upper(np.array([0]), np.array([5]), 10, np.array([1.0])) is None


def test_chernoff_range_probability_bounds_the_exact_law():
    n, j, pa, pb = 400, 37, 0.3, 0.8
    lo = np.array([0, 50, 120, 150, 200, 260])
    hi = np.array([49, 119, 149, 199, 259, 400])
    got = window._log_range_prob(n, np.array([j]), pa, pb, lo, hi)[0]
    # the exact law of Bin(n - j, pa) + Bin(j, pb) at 60 digits
    mp.mp.dps = 60
    a = [mp.binomial(n - j, x) * mp.mpf(pa) ** x * (1 - mp.mpf(pa)) ** (n - j - x) for x in range(n - j + 1)]
    b = [mp.binomial(j, x) * mp.mpf(pb) ** x * (1 - mp.mpf(pb)) ** (j - x) for x in range(j + 1)]
    law = [mp.fsum(a[x - t] * b[t] for t in range(max(0, x - (n - j)), min(j, x) + 1)) for x in range(n + 1)]
    for i in range(lo.size):
        p = mp.fsum(law[lo[i] : hi[i] + 1])
        assert got[i] >= float(mp.log(p))


def test_windowed_certificate_agrees_with_the_full_engine(monkeypatch):
    """Where both run, the certificate's enclosure lies inside the full engine's, widened by their
    widths, and contains its lower bound (the same largest expectation)."""
    mech = sdp.SamplingHistogram(eta=0.9)
    pi = [[0.05, 0.95], [0.4, 0.6]]
    n, e = 300_000, np.array([1.0, 4.0])
    monkeypatch.setattr(window, "WINDOW_MIN_N", 1000)
    cert = window.windowed_smoothed(mech, n, np.asarray(pi), e)
    assert cert is not None
    monkeypatch.setattr(window, "WINDOW_MIN_N", 10**18)
    full = sdp.smoothed_delta(mech, n, pi, e, budget=math.inf, progress=False)
    hi = np.asarray(full.log_delta_values)
    lo = np.asarray(full.log_delta_lower_values)
    assert np.all(cert.lower <= hi) and np.all(lo <= cert.upper)
    assert np.all(cert.upper - cert.lower <= 1e-8 * np.abs(cert.upper) + 1e-12)
    assert np.all(cert.end == 0)  # the lopsided vertex (5 % of category 0) holds the maximum


def test_certificate_closes_with_a_tenth_of_the_records_left_out(monkeypatch):
    """eta = 0.9, vertices (0.3, 0.6), eps = 1: the range bound carries the finite-population
    exponent, so the window closes; its enclosure meets the full engine's."""
    mech = sdp.SamplingHistogram(eta=0.9)
    pi = [[0.3, 0.7], [0.6, 0.4]]
    n, e = 300_000, np.array([1.0])
    monkeypatch.setattr(window, "WINDOW_MIN_N", 1000)
    cert = window.windowed_smoothed(mech, n, np.asarray(pi), e)
    assert cert is not None
    monkeypatch.setattr(window, "WINDOW_MIN_N", 10**18)
    full = sdp.smoothed_delta(mech, n, pi, e, budget=math.inf, progress=False)
    assert np.all(cert.lower <= np.asarray(full.log_delta_values))
    assert np.all(np.asarray(full.log_delta_lower_values) <= cert.upper)
    assert cert.end.tolist() == [0]


def test_smoothed_delta_takes_the_window_from_its_threshold(monkeypatch):
    mech = sdp.SamplingHistogram(eta=0.9)
    pi = [[0.05, 0.95], [0.4, 0.6]]
    monkeypatch.setattr(window, "WINDOW_MIN_N", 1000)
    res = sdp.smoothed_delta(mech, 300_000, pi, [1.0, 4.0], progress=False)
    assert any("windowed certificate" in note for note in res.notes)
    # one row per end composition and epsilon: no table of n + 1 compositions
    assert len(res.table) == 4
    assert res.worst_composition_values[0].tolist() == [300_000, 0]


def test_the_certificate_stops_at_its_budget(monkeypatch):
    """How long the certificate takes is known only as it runs: past the budget it stops with a
    refusal naming the budget, instead of running on."""
    monkeypatch.setattr(window, "WINDOW_MIN_N", 1000)
    with pytest.raises(sdp.ComputationTooLarge, match="budget"):
        sdp.smoothed_delta(
            sdp.SamplingHistogram(eta=0.9), 300_000, [[0.05, 0.95], [0.4, 0.6]], 1.0, budget=1e-9, progress=False
        )


def test_where_the_certificate_applies_the_arithmetic_floor_does_not_refuse():
    """The full engine's floor (every histogram visited) is no bound for the certificate, which
    visits only those that carry the expectation; beyond its largest size the floor refuses at once."""
    mech, pi = sdp.SamplingHistogram(eta=0.998), [[0.3, 0.7], [0.6, 0.4]]
    e = np.array([1.0])
    assert window.window_may_apply(mech, 158_000_000, np.asarray(pi), e)
    assert not window.window_may_apply(mech, window.WINDOW_MAX_N + 1, np.asarray(pi), e)
    assert not window.window_may_apply(sdp.SamplingHistogram(eta=0.998, replace=True), 158_000_000, np.asarray(pi), e)
    with pytest.raises(sdp.ComputationTooLarge, match="estimated"):
        sdp.smoothed_delta(mech, 10**9, pi, 1.0, progress=False)


def _exact_log_expectations(n: int, pa: float, pb: float, b: list[Fraction], js: list[int]) -> list[float]:
    """log E[b(X_j)], X_j = Bin(n - j, pa) + Bin(j, pb), for the compositions ``js``, in exact
    rationals (the probabilities as the floats' exact values)."""
    fa, fb = Fraction(pa), Fraction(pb)

    def law(c: int, p: Fraction) -> list[Fraction]:
        return [math.comb(c, x) * p**x * (1 - p) ** (c - x) for x in range(c + 1)]

    out = []
    for j in js:
        a_law, b_law = law(n - j, fa), law(j, fb)
        total = sum(
            (pa_x * pb_y * b[x + y] for x, pa_x in enumerate(a_law) for y, pb_y in enumerate(b_law)), Fraction(0)
        )
        out.append(-math.inf if total == 0 else math.log(total))
    return out


def _mp_log_expectations(n: int, pa: float, pb: float, logb: list[float], js: list[int]) -> np.ndarray:
    """The same at 60 digits (mpmath), for sizes where exact rationals grow too long."""
    mp.mp.dps = 60
    a, c = mp.mpf(pa), mp.mpf(pb)
    b = [mp.exp(mp.mpf(v)) for v in logb]
    out = []
    for j in js:
        a_law = [mp.binomial(n - j, x) * a**x * (1 - a) ** (n - j - x) for x in range(n - j + 1)]
        b_law = [mp.binomial(j, y) * c**y * (1 - c) ** (j - y) for y in range(j + 1)]
        conv = [
            mp.fsum(a_law[x - y] * b_law[y] for y in range(max(0, x - (n - j)), min(j, x) + 1)) for x in range(n + 1)
        ]
        out.append(float(mp.log(mp.fsum(conv[x] * b[x] for x in range(n + 1)))))
    return np.array(out)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(4, 28),
    pa=st.sampled_from([0.3, 0.5009, 0.55]),
    pb=st.sampled_from([0.6, 0.652, 0.9]),
    cuts=st.lists(st.integers(1, 27), min_size=1, max_size=6, unique=True),
    logs=st.lists(st.floats(-40.0, 0.0), min_size=7, max_size=7),
    j0=st.integers(0, 28),
    span=st.integers(0, 28),
)
def test_interval_bounds_hold_for_every_composition_of_the_interval(n, pa, pb, cuts, logs, j0, span):
    """Both bounds of step 2 (by pieces, and by rises about the best pivot) are above the exact
    expectation of every composition of an interval, for any piece bounds b: the worst case of a
    profile equal to its piece bound on the whole piece."""
    edges = sorted({c for c in cuts if c <= n})
    plo = np.array([0, *edges], dtype=np.int64)
    phi = np.array([*(c - 1 for c in edges), n], dtype=np.int64)
    lb = np.array(logs[: plo.size])[:, None]
    # the profile at its piece's bound, less the rounding of exp (a profile never exceeds its bound)
    shave = 1 - Fraction(1, 2**50)
    b = [Fraction(math.exp(lb[np.searchsorted(plo, x, "right") - 1, 0])) * shave for x in range(n + 1)]
    ja, jb = min(j0, n), min(n, min(j0, n) + span)
    exact_logs = dict(zip(range(ja, jb + 1), _exact_log_expectations(n, pa, pb, b, list(range(ja, jb + 1)))))
    got = window._interval_bounds(n, pa, pb, plo, phi, lb, np.array([ja]), np.array([jb]))[0, 0]
    assert got >= max(exact_logs.values())
    # the bound by rises alone (asked for by a target below everything) holds too
    got_rise = window._interval_bounds(n, pa, pb, plo, phi, lb, np.array([ja]), np.array([jb]), np.array([-1e9]))
    assert got_rise[0, 0] >= max(exact_logs.values())


def test_bound_by_rises_is_within_hundredths_of_a_nat_where_delta_is_flat():
    """Where log delta changes by a fraction of a nat over the compositions' range, the bound by
    pieces is off by about the log of the number of pieces the law spreads over (over a nat
    here); the bound by rises stays within a tenth of a nat of the exact expectation (mpmath,
    60 digits) at every composition."""
    n, pa, pb = 400, 0.5009, 0.652
    plo = np.arange(0, n + 1, 8, dtype=np.int64)
    phi = np.minimum(plo + 7, n)
    # a smooth U-shaped log delta, minimal at n/2, rising by 0.3 nats towards 0.65 n
    mid = (plo + phi) / 2.0
    lb = (-30.0 + 0.3 * ((mid - n / 2) / (0.15 * n)) ** 2)[:, None]
    logb = [float(lb[np.searchsorted(plo, x, "right") - 1, 0]) for x in range(n + 1)]
    js = np.array([0, 40, 120, 200, 300, 400])
    exact_logs = _mp_log_expectations(n, pa, pb, logb, js.tolist())
    by_rise = window._interval_bounds(n, pa, pb, plo, phi, lb, js, js, np.array([-1e9]))[:, 0]
    by_piece = window._interval_bounds(n, pa, pb, plo, phi, lb, js, js, np.array([1e9]))[:, 0]
    # 400 records: the laws spread over ten pieces, and Chernoff's tails are loose at a few
    # standard deviations; at an electorate's size the bound by rises comes within 0.01 nats
    assert np.all(by_rise >= exact_logs) and np.all(by_rise - exact_logs < 0.15)
    assert np.all(by_piece - exact_logs > 1.2)


def test_middle_profiles_reduce_to_the_largest_profile_of_each_piece():
    mech, n = sdp.SamplingHistogram(eta=0.998), 20_000
    e = np.array([0.1, 1.0])
    p = [0.5009, 0.652]
    plo, phi = window._partition(n, [n * q for q in p], math.sqrt(n * 0.25) + 1)
    lb = mech._log_profile_range_upper(plo, phi, n, e)
    got, rows = window._refine_middle(mech, n, p, plo, phi, lb, np.array([0]), e, math.inf)
    i0, i1 = window._middle_span(n, p, plo, phi)
    assert rows == phi[i1] - plo[i0] + 1
    x = np.arange(n + 1)
    up = np.reshape(mech._profile(np.stack([x, n - x], axis=1), e[:1]).upper, -1)
    want = np.array([up[plo[i] : phi[i] + 1].max() for i in range(i0, i1 + 1)])
    # the same profiles, computed in other chunks: equal up to the last bits of their enclosures
    np.testing.assert_allclose(got[i0 : i1 + 1, 0], np.minimum(lb[i0 : i1 + 1, 0], want), rtol=1e-12, atol=0)
    # the other column and the pieces outside the span keep their range bounds
    assert np.array_equal(got[:, 1], lb[:, 1])
    assert np.array_equal(got[:i0], lb[:i0]) and np.array_equal(got[i1 + 1 :], lb[i1 + 1 :])


def test_certificate_closes_where_delta_is_nearly_flat_between_the_vertices(monkeypatch):
    """The authors' election history (vertices 0.5009 and 0.652 of the winner's share): at
    epsilon = 0.1 log delta moves by under 3 nats between the vertices, so the middle is profiled;
    the enclosure meets the full engine's."""
    el = sdp.datasets.us_presidential_elections()
    share = el.winner_share.to_numpy()
    pi = np.stack([share, 1 - share], axis=1)
    mech, n, e = sdp.SamplingHistogram(eta=0.998), 300_000, np.array([0.1, 0.5])
    vertices = np.array([[q, 1 - q] for q in (share.min(), share.max())])
    calls = []
    refine = window._refine_middle
    monkeypatch.setattr(window, "_refine_middle", lambda *a, **k: calls.append(1) or refine(*a, **k))
    monkeypatch.setattr(window, "WINDOW_MIN_N", 1000)
    cert = window.windowed_smoothed(mech, n, vertices, e)
    assert cert is not None and calls == [1]
    monkeypatch.setattr(window, "WINDOW_MIN_N", 10**18)
    full = sdp.smoothed_delta(mech, n, pi, e, budget=math.inf, progress=False)
    assert np.all(cert.lower <= np.asarray(full.log_delta_values))
    assert np.all(np.asarray(full.log_delta_lower_values) <= cert.upper)
    plan = window.planned_profiles(mech, n, vertices, e)
    # the cost model foresees the middle in the flat column
    assert plan is not None and plan.streamed > 0 and 0 in plan.streamed_columns.tolist()
