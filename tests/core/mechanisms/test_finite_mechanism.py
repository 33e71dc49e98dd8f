"""User mechanisms: FiniteMechanism and subclasses of sdp.Mechanism, against closed
forms and brute-force enumeration of every database in Fractions (tests/exact.py)."""

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom

import smoothdp_nb as sdp
from tests import exact

KEEP = 0.75  # randomized response: a record's bit is reported truthfully with probability 3/4
EPS0 = math.log(3)  # ... so the mechanism is ln(3)-DP


def rr_binary(hist):
    """Histogram of the reports of randomized response on one bit per record."""
    h0, h1 = hist
    n = h0 + h1
    # reports of category 0: Bin(h0, keep) + Bin(h1, 1 - keep), by convolution
    law = np.convolve(binom.pmf(np.arange(h0 + 1), h0, KEEP), binom.pmf(np.arange(h1 + 1), h1, 1 - KEEP))
    return {(k, n - k): float(p) for k, p in enumerate(law)}


RR = sdp.FiniteMechanism(rr_binary, categories=2, name="randomized response")


def rr_closed_form(epsilon):
    """delta of one randomized-response bit: (e^eps0 - e^eps)_+ / (1 + e^eps0)."""
    return max(0.0, (math.exp(EPS0) - math.exp(epsilon)) / (1 + math.exp(EPS0)))


@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0, EPS0 - 1e-3])
def test_randomized_response_one_record_closed_form(epsilon):
    for h in ([1, 0], [0, 1]):
        assert sdp.privacy_profile(RR, h, epsilon) == pytest.approx(rr_closed_form(epsilon), rel=1e-12)
    assert sdp.dp_delta(RR, 1, epsilon) == pytest.approx(rr_closed_form(epsilon), rel=1e-12)


def test_randomized_response_is_eps0_dp_exactly():
    """At epsilon >= ln 3 every profile is 0 (pure DP), not a rounding residue."""
    for n in range(1, 8):
        hists = np.array(exact.all_hists(n, 2))
        assert np.all(sdp.privacy_profile(RR, hists, [EPS0 * (1 + 1e-12), 2.0, 5.0]) == 0.0)
        # and the DP delta never exceeds the one-record value (post-processing of the reports)
        for e in (0.0, 0.5):
            assert sdp.dp_delta(RR, n, e) <= rr_closed_form(e) * (1 + 1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_randomized_response_total_variation_closed_form(n):
    """x = (n, 0): its only neighbour changes one report law from Ber(3/4) to Ber(1/4)
    beside S ~ Bin(n - 1, 3/4), so delta_0 = (2 keep - 1) max_k P(S = k)."""
    keep = Fraction(3, 4)
    top = max(math.comb(n - 1, k) * keep**k * (1 - keep) ** (n - 1 - k) for k in range(n))
    want = float((2 * keep - 1) * top)
    assert sdp.privacy_profile(RR, [n, 0], 0.0) == pytest.approx(want, rel=1e-12)


# ---------------------------------------------------------------------------
# three categories against brute force over X^n
# ---------------------------------------------------------------------------
def rr3(hist):
    """3-ary randomized response: kept with probability 1/2, else one of the two
    others (1/4 each); the histogram of the reports, by repeated convolution."""
    law = {(0, 0, 0): 1.0}
    rows = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    eye = np.eye(3, dtype=int)
    for j, c in enumerate(hist):
        for _ in range(c):
            new = {}
            for o, p in law.items():
                for y in range(3):
                    key = tuple(np.add(o, eye[y]))
                    new[key] = new.get(key, 0.0) + p * rows[j, y]
            law = new
    return law


RR3 = sdp.FiniteMechanism(rr3, categories=3, name="rr3")


def rr3_exact(h):
    return exact.randomized_response_law(h, Fraction(1, 2))


def test_three_categories_profile_matches_enumeration():
    epsilon = [0.0, 0.4, 1.2]
    hists = exact.all_hists(3, 3)
    got = sdp.privacy_profile(RR3, np.array(hists), epsilon)
    for h, row in zip(hists, got):
        for e, g in zip(epsilon, row):
            want = exact.profile_of_law(rr3_exact, h, e)
            assert g == pytest.approx(float(want), rel=1e-9, abs=1e-300)
    dp = sdp.dp_delta(RR3, 3, epsilon)
    for e, d in zip(epsilon, dp):
        want = max(exact.profile_of_law(rr3_exact, h, e) for h in hists)
        assert d == pytest.approx(float(want), rel=1e-9)


def test_three_categories_smoothed_delta_matches_enumeration():
    pi = [[Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)], [Fraction(1, 10), Fraction(3, 10), Fraction(3, 5)]]
    epsilon = [0.2, 0.9]
    res = sdp.smoothed_delta(RR3, 3, [[float(p) for p in row] for row in pi], epsilon)
    for e, d in zip(epsilon, res.delta):
        want = exact.smoothed_of_law(rr3_exact, pi, 3, e)
        assert d == pytest.approx(float(want), rel=1e-9)
    assert np.all(res.delta <= res.dp_delta)


# ---------------------------------------------------------------------------
# a subclass of sdp.Mechanism
# ---------------------------------------------------------------------------
class HalfTruthfulCount(sdp.Mechanism):
    """Publishes the count of category 0 with probability 1/2, else a uniform count in 0..n."""

    @property
    def categories(self):
        return 2

    def log_output_pmf(self, hist):
        n = int(sum(hist))
        p = np.full(n + 1, 0.5 / (n + 1))
        p[hist[0]] += 0.5
        return np.arange(n + 1), np.log(p)


def half_truthful_exact(h):
    n = sum(h)
    law = {o: Fraction(1, 2 * (n + 1)) for o in range(n + 1)}
    law[h[0]] += Fraction(1, 2)
    return law


def test_subclass_profile_dp_and_smoothed_against_enumeration():
    mech = HalfTruthfulCount()
    epsilon = [0.0, 0.7]
    for n in (1, 2, 4):
        for h in exact.all_hists(n, 2):
            got = sdp.privacy_profile(mech, h, epsilon)
            want = [float(exact.profile_of_law(half_truthful_exact, h, e)) for e in epsilon]
            assert got == pytest.approx(want, rel=1e-9, abs=1e-300)
    pi = [[Fraction(1, 5), Fraction(4, 5)], [Fraction(7, 10), Fraction(3, 10)]]
    res = sdp.smoothed_delta(mech, 4, [[0.2, 0.8], [0.7, 0.3]], epsilon)
    for e, d in zip(epsilon, res.delta):
        assert d == pytest.approx(float(exact.smoothed_of_law(half_truthful_exact, pi, 4, e)), rel=1e-9)


def test_monte_carlo_interval_covers_the_exact_value():
    pi = [[0.3, 0.7], [0.8, 0.2]]
    ex = sdp.smoothed_delta(RR, 6, pi, [0.2, 0.6])
    mc = sdp.smoothed_delta(RR, 6, pi, [0.2, 0.6], method="monte-carlo", trials=400, rng=3)
    table = ex.table.merge(mc.table, on=["epsilon", "n_0", "n_1"], suffixes=("_exact", "_mc"))
    assert len(table) == len(mc.table) > 0
    assert np.all(table.ci_low <= table.delta_exact + 1e-15) and np.all(table.delta_exact <= table.ci_high + 1e-15)
    assert np.all(mc.dp_delta == ex.dp_delta)


def test_results_charts_and_text_work_for_any_mechanism():
    res = sdp.smoothed_delta(RR3, 3, [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]], [0.2, 0.9])
    assert "FiniteMechanism(rr3, categories=3)" in str(res)
    assert set(res.to_frame().columns) >= {"epsilon", "delta", "dp_delta"}
    spec = res.chart().to_dict()  # the display layer's builder, through the core's renderer registry
    assert spec["title"]["subtitle"][0].startswith("FiniteMechanism(rr3, categories=3), exact")
    lines = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "line"]
    rows = [r for layer in lines for r in layer.get("data", {}).get("values", []) if "delta_text" in r]
    drawn = sorted(r["log10_delta"] for r in rows if r.get("epsilon") is not None)
    finite = [math.log10(d) for d in res.delta if d > 0]  # a delta of exactly 0 has no point on a log axis
    assert len(finite) >= 1 and drawn == pytest.approx(sorted(finite), rel=1e-12)


def test_bad_input_and_bad_laws():
    with pytest.raises(TypeError, match="pmf must be a callable"):
        sdp.FiniteMechanism(42, categories=2)
    with pytest.raises(ValueError, match="categories must be >= 2"):
        sdp.FiniteMechanism(rr_binary, categories=1)
    with pytest.raises(TypeError, match="log must be True or False"):
        sdp.FiniteMechanism(rr_binary, categories=2, log="yes")
    bad = sdp.FiniteMechanism(lambda h: {0: 0.5, 1: 0.4}, categories=2)
    with pytest.raises(ValueError, match="must sum to 1"):
        sdp.privacy_profile(bad, [1, 1], 0.5)
    neg = sdp.FiniteMechanism(lambda h: {0: 1.5, 1: -0.5}, categories=2)
    with pytest.raises(ValueError, match=">= 0"):
        sdp.privacy_profile(neg, [1, 1], 0.5)
    with pytest.raises(TypeError, match="mapping"):
        sdp.privacy_profile(sdp.FiniteMechanism(lambda h: [1.0], categories=2), [1, 1], 0.5)
    with pytest.raises(ValueError, match="3 counts per database"):
        sdp.privacy_profile(RR3, [1, 1], 0.5)
    with pytest.raises(ValueError, match="3 columns"):
        sdp.smoothed_delta(RR3, 3, [[0.5, 0.5]], 0.5)
    with pytest.raises(ValueError, match="epsilon is required"):
        sdp.dp_delta(RR, 3)


def test_log_laws_far_below_the_float_range():
    """log=True: probabilities of 1e-400 are representable, and the profile stays finite in log space."""
    lp = -400 * math.log(10)

    def tiny(h):
        return {"rare": lp + 5 * h[0], "common": math.log1p(-math.exp(lp + 5 * h[0]))}

    mech = sdp.FiniteMechanism(tiny, categories=2, log=True)
    logd = sdp.privacy_profile(mech, [1, 1], 0.0, log=True)
    want = mp.log(mp.e ** (mp.mpf(lp) + 10) - mp.e ** (mp.mpf(lp) + 5))
    assert logd == pytest.approx(float(want), rel=1e-12)


def test_refuses_too_many_databases_with_an_estimate():
    with pytest.raises(sdp.ComputationTooLarge, match="monte-carlo"):
        sdp.smoothed_delta(RR3, 2000, [[0.5, 0.25, 0.25]], 0.5)
    with pytest.raises(sdp.ComputationTooLarge, match="estimated"):
        sdp.dp_delta(RR3, 2000, np.array([0.5]))
    with pytest.raises(sdp.ComputationTooLarge, match="budget 1 s"):
        sdp.smoothed_delta(RR3, 200, [[0.5, 0.25, 0.25]], 0.5, budget=1.0)
