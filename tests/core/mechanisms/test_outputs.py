"""Outputs are outputs: any hashable value is an output of its
own in FiniteMechanism, postprocess and winner; every NaN is one output.

Every expected value is computed here by enumeration with Fractions / mpmath
(tests/exact.py), with outputs keyed by the test's own canonical labels.
"""

import math
from decimal import Decimal
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms.base import factorize_outputs
from tests import exact

NAN = float("nan")


def dp_delta_of_law(law, n, m, epsilon):
    """max over every histogram of n records of the profile (Theorem 1), by enumeration."""
    return max(exact.profile_of_law(law, h, epsilon) for h in exact.all_hists(n, m))


def test_none_is_an_output_of_its_own():
    """A reported case, verbatim: None is an output of its own and never takes the mass of "vote" (which gave delta 0)."""
    M = sdp.FiniteMechanism(lambda h: {None: 0.9 if h[0] else 0.1, "vote": 0.1 if h[0] else 0.9}, categories=2)
    got = sdp.dp_delta(M, 1, [0.0, 1.0])
    want = [mp.mpf("0.8"), mp.mpf("0.9") - mp.mpf("0.1") * mp.e]  # 0.9 - 0.1 e^eps
    assert got == pytest.approx([float(w) for w in want], rel=1e-12)


@pytest.mark.parametrize("other", [None, 0, 0.0, "nan", False])
def test_nan_is_one_output_never_merged_with_another(other):
    """A NaN output (a fresh NaN object in every law) against None / 0 / "nan" / False."""

    def pmf(h):
        return {float("nan"): 0.75 if h[0] else 0.25, other: 0.25 if h[0] else 0.75}

    def law(h):
        return {"NaN": Fraction(3, 4) if h[0] else Fraction(1, 4), "other": Fraction(1, 4) if h[0] else Fraction(3, 4)}

    M = sdp.FiniteMechanism(pmf, categories=2)
    for e in (0.0, 0.5):
        assert sdp.dp_delta(M, 2, e) == pytest.approx(float(dp_delta_of_law(law, 2, 2, e)), rel=1e-12)


def test_several_nan_keys_of_one_law_are_one_output():
    """A dict can hold two distinct NaN objects as two keys: still one output, masses added."""
    M = sdp.FiniteMechanism(
        lambda h: {float("nan"): 0.3, np.float64("nan"): 0.3, "x": 0.4} if h[0] else {float("nan"): 0.6, "x": 0.4},
        categories=2,
    )
    # the same law everywhere: delta is 0, and the reported value is a proven upper bound of it
    # (a proven upper bound), which carries the rounding of the merged 0.3 + 0.3
    assert 0.0 <= sdp.dp_delta(M, 3, 0.0) <= 1e-14
    table = M.output_pmf((1, 1))
    assert len(table) == 2 and table["probability"].sum() == pytest.approx(1.0)


def _poisson_share_law(h, q=Fraction(1, 2), as_float=False):
    """Each record is sampled independently with probability q; the share of
    category 0 among the sampled records is published (NaN when none is)."""
    law = {}
    for k0 in range(h[0] + 1):
        for k1 in range(h[1] + 1):
            p = math.comb(h[0], k0) * math.comb(h[1], k1) * q ** (k0 + k1) * (1 - q) ** (h[0] + h[1] - k0 - k1)
            if as_float:
                key = float("nan") if k0 + k1 == 0 else k0 / (k0 + k1)
                law[key] = law.get(key, 0.0) + float(p)
            else:
                key = "empty" if k0 + k1 == 0 else Fraction(k0, k0 + k1)
                law[key] = law.get(key, Fraction(0)) + p
    return law


def test_poisson_sample_share_nan_when_empty():
    """An empty Poisson sample's NaN share is an output like any other (merging it gave 0.428571 where the truth is 0.5)."""
    M = sdp.FiniteMechanism(lambda h: _poisson_share_law(h, as_float=True), categories=2)
    for n in (1, 2, 3):
        for e in (0.0, 0.3):
            want = dp_delta_of_law(_poisson_share_law, n, 2, e)
            assert sdp.dp_delta(M, n, e) == pytest.approx(float(want), rel=1e-12, abs=1e-15)
    assert sdp.dp_delta(M, 1, 0.0) == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize(
    ("a", "b"),
    [(1, True), (1, 1.0), (1, "1"), (0.0, -0.0), ((1, 2), (1, 2.0)), (None, "None"), (0, False), ((NAN,), (0.0,))],
)
def test_values_of_different_types_are_different_outputs(a, b):
    """A reader tells 1 from True, 0.0 from -0.0, (1, 2) from (1, 2.0): they are not one output."""
    M = sdp.FiniteMechanism(lambda h: {a: 1.0} if h[0] else {b: 1.0}, categories=2)
    assert sdp.dp_delta(M, 1, 0.5) == 1.0  # two point masses apart: delta 1 at every epsilon


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (complex(0.0, 0.0), complex(-0.0, 0.0)),  # prints 0j and (-0+0j)
        (complex(1.0, 0.0), complex(1.0, -0.0)),
        (Decimal("0"), Decimal("-0")),  # prints 0 and -0
        (np.float32(-0.0), 0.0),
    ],
)
def test_signed_zeros_of_every_numeric_type_are_different_outputs(a, b):
    """Signed zeros are different outputs, 0.0 / -0.0 and a complex or Decimal zero's sign alike
    (merging them would give delta 0 where the two point masses are apart, delta 1)."""
    M = sdp.FiniteMechanism(lambda h: {a: 1.0} if h[0] else {b: 1.0}, categories=2)
    assert sdp.dp_delta(M, 1, 0.5) == 1.0
    f = sdp.postprocess(sdp.SamplingHistogram(T=1), lambda k: a if k[0] else b)
    assert sdp.dp_delta(f, 1, 0.5) == 1.0


def test_nan_inside_a_frozenset_is_one_output():
    """Every NaN is one output, also inside a frozenset (two NaN objects made two outputs:
    delta 1 for a mechanism that always publishes {nan})."""
    M = sdp.FiniteMechanism(lambda h: {frozenset([float("nan")]): 1.0}, categories=2)
    assert sdp.dp_delta(M, 2, 0.0) == 0.0
    M = sdp.FiniteMechanism(
        lambda h: {frozenset([float("nan"), 1]): 1.0} if h[0] else {frozenset([1.0, float("nan")]): 1.0}, categories=2
    )
    assert sdp.dp_delta(M, 1, 0.5) == 1.0  # 1 and 1.0 stay apart inside a set too


def test_equal_values_are_one_output():
    """np.int64(3) prints as 3, tuples holding NaN are equal entry by entry."""
    M = sdp.FiniteMechanism(lambda h: {np.int64(3): 1.0} if h[0] else {3: 1.0}, categories=2)
    assert sdp.dp_delta(M, 2, 0.0) == 0.0
    M = sdp.FiniteMechanism(lambda h: {(float("nan"), 1): 1.0}, categories=2)
    assert sdp.dp_delta(M, 2, 0.0) == 0.0
    codes, K = factorize_outputs([np.array([NAN, 0.0, -0.0, NAN]), np.array([np.float64("nan")])])
    assert K == 3 and codes[0][0] == codes[0][3] == codes[1][0] and codes[0][1] != codes[0][2]


LABELS = st.sampled_from([None, NAN, 0, 1, True, 0.0, -0.0, 1.0, "a", "1", (1,), (1, 2), (NAN, 1), b"a"])


def _canon(v):
    """The test's own key: repr, after making every NaN one (repr of a tuple of NaN too)."""
    return repr(v)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(LABELS, st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)), min_size=1, max_size=5),
    st.sampled_from([0.0, 0.4]),
)
def test_finite_mechanism_with_mixed_outputs_matches_enumeration(entries, epsilon):
    """Random laws over mixed outputs (one weight per histogram of 2 records):
    dp_delta equals the enumeration keyed by repr (NaN -> 'nan', 1 vs True vs 1.0 distinct)."""
    labels = [lab for lab, *_ in entries]
    # one Python dict cannot hold two keys that compare equal (1 and 1.0): such a law is not expressible
    assume(len({_canon(v) for v in labels}) == len(set(labels)))
    hists = exact.all_hists(2, 2)

    def law(h):
        out = {}
        for lab, *w in entries:
            key = _canon(lab)
            out[key] = out.get(key, Fraction(0)) + w[hists.index(tuple(h))]
        total = sum(out.values())
        return {k: v / total for k, v in out.items()}

    reps = {}
    for lab, *_ in entries:
        reps.setdefault(_canon(lab), lab)

    def fresh(v):  # a new NaN object on every call, as computed outputs are
        if isinstance(v, float) and v != v:
            return float("nan")
        return tuple(fresh(x) for x in v) if isinstance(v, tuple) else v

    def pmf(h):
        return {fresh(reps[k]): float(p) for k, p in law(h).items()}

    M = sdp.FiniteMechanism(pmf, categories=2)
    want = dp_delta_of_law(law, 2, 2, epsilon)
    assert sdp.dp_delta(M, 2, epsilon) == pytest.approx(float(want), rel=1e-9, abs=1e-12)


# -- postprocess ----------------------------------------------------------------------------


def test_postprocess_of_a_large_fixed_sample():
    """A reported case, verbatim: no bogus "T must be <= n ..., got T=20 > n=16"."""
    f = lambda h: int(h[0] > h[1])  # noqa: E731
    M = sdp.postprocess(sdp.SamplingHistogram(T=20), f)

    def law(h):
        out = {}
        for o, p in exact.pmf_without_replacement(h, 20).items():
            out[f(o)] = out.get(f(o), Fraction(0)) + p
        return out

    want = dp_delta_of_law(law, 40, 2, 0.5)
    assert sdp.dp_delta(M, 40, 0.5) == pytest.approx(float(want), rel=1e-9)
    r = sdp.smoothed_delta(M, 40, [[0.25, 0.75], [0.625, 0.375]], 0.5)
    assert 0.0 <= r.delta <= float(want) * (1 + 1e-9)


def test_winner_after_tuple_outputs():
    """A reported case, verbatim: winner of a FiniteMechanism whose outputs are tuples."""
    M = sdp.FiniteMechanism(lambda h: {tuple(int(v) for v in h): 1.0}, categories=2)
    assert sdp.privacy_profile(sdp.postprocess(M, sdp.winner), [2, 1], 0.5) == 1.0  # winner 0 vs 1 / a tie

    # a randomized tuple-output mechanism: each record reported truthfully w.p. 3/4 (m = 3)
    def rr(h):
        return exact.randomized_response_law(h, Fraction(3, 4))

    M = sdp.FiniteMechanism(lambda h: {k: float(v) for k, v in rr(h).items()}, categories=3)
    W = sdp.postprocess(M, sdp.winner)

    def wlaw(h):
        out = {}
        for o, p in rr(h).items():
            top = [j for j, c in enumerate(o) if c == max(o)]
            for j in top:
                out[j] = out.get(j, Fraction(0)) + p / len(top)
        return out

    for h in [(1, 1, 0), (2, 0, 0), (1, 0, 1)]:
        assert sdp.privacy_profile(W, h, 0.2) == pytest.approx(float(exact.profile_of_law(wlaw, h, 0.2)), rel=1e-9)


@pytest.mark.parametrize(
    ("bad", "err"),
    [
        ([NAN, 1], ValueError),
        (None, TypeError),
        ([1, -1], ValueError),
        ([[1, 2], [3]], ValueError),
        ([1, "a"], TypeError),
        ("ab", TypeError),
        ([1, None], TypeError),
        ([math.inf, 1], ValueError),
        ([], ValueError),
    ],
)
def test_winner_rejects_what_is_not_a_histogram(bad, err):
    with pytest.raises(err, match="hist"):
        sdp.winner(bad)


@pytest.mark.parametrize(
    "outputs",
    [
        {(1, None): 1.0},  # non-numeric
        {(1, float("nan")): 1.0},  # NaN count
        {(1, -2): 1.0},  # negative count
        {(1, 2): 0.5, (1, 2, 3): 0.5},  # ragged
        {"ab": 1.0},  # not a histogram at all
    ],
)
def test_postprocess_winner_rejects_bad_histogram_outputs(outputs):
    M = sdp.postprocess(sdp.FiniteMechanism(lambda h: outputs, categories=2), sdp.winner)
    with pytest.raises((ValueError, TypeError), match="outputs the winner"):
        sdp.privacy_profile(M, [1, 1], 0.5)


def test_postprocess_never_guesses_vectorisation():
    """``h[..., 0] * (h.min() > 0)`` agrees with single calls on the first and last
    outputs yet not on the array: the per-output map is the mechanism."""
    f = lambda h: h[..., 0] * (h.min() > 0)  # noqa: E731
    M = sdp.postprocess(sdp.SamplingHistogram(T=4), f)

    def law(h):
        out = {}
        for o, p in exact.pmf_without_replacement(h, 4).items():
            v = int(f(np.array(o)))
            out[v] = out.get(v, Fraction(0)) + p
        return out

    h = (2, 2, 2)
    want = exact.profile_of_law(law, h, 0.5)
    assert float(want) > 0.25
    assert sdp.privacy_profile(M, h, 0.5) == pytest.approx(float(want), rel=1e-9)


def test_postprocess_vectorized_declared_by_the_caller():
    base = sdp.SamplingHistogram(T=3)
    per = sdp.postprocess(base, lambda h: int(h[0] >= 2))
    vec = sdp.postprocess(base, lambda H: (H[:, 0] >= 2).astype(int), vectorized=True)
    hs = [(3, 1, 1), (2, 2, 1), (1, 1, 3)]
    assert np.array_equal(sdp.privacy_profile(per, hs, [0.0, 0.5]), sdp.privacy_profile(vec, hs, [0.0, 0.5]))
    bad = sdp.postprocess(base, lambda H: H[0], vectorized=True)  # one result, not one per output
    with pytest.raises(ValueError, match="one new output per output"):
        sdp.privacy_profile(bad, (3, 1, 1), 0.5)
    with pytest.raises(TypeError, match="vectorized"):
        sdp.postprocess(base, lambda h: 0, vectorized="yes")


def test_map_returning_none_or_nan():
    """A map returning None everywhere is a constant (delta 0, not an IndexError);
    None on some outputs and NaN on others are two outputs."""
    base = sdp.SamplingHistogram(T=2)
    assert sdp.dp_delta(sdp.postprocess(base, lambda h: None), 3, 0.5, categories=2) == 0.0
    g = lambda h: None if h[0] > h[1] else NAN  # noqa: E731

    def law(h):
        out = {}
        for o, p in exact.pmf_without_replacement(h, 2).items():
            k = "None" if o[0] > o[1] else "nan"
            out[k] = out.get(k, Fraction(0)) + p
        return out

    want = dp_delta_of_law(law, 3, 2, 0.1)
    assert float(want) > 0
    assert sdp.dp_delta(sdp.postprocess(base, g), 3, 0.1, categories=2) == pytest.approx(float(want), rel=1e-9)


def test_randomized_map_with_bad_law_is_refused():
    base = sdp.SamplingHistogram(T=1)
    for law in ({0: 0.5, 1: NAN}, {0: -0.5, 1: 1.5}, {0: "a"}, {}):
        with pytest.raises((ValueError, TypeError), match="law"):
            sdp.privacy_profile(sdp.postprocess(base, lambda h, law=law: law), (1, 1), 0.5)


# -- the cost of user mechanisms, priced before they run -----------------------------


def _thinning(h):
    """Category-0 records reported with probability 0.7, the others with 0.2: the count reported."""
    from scipy.special import gammaln

    def binom_pmf(k, p):
        j = np.arange(k + 1)
        return np.exp(gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + j * np.log(p) + (k - j) * np.log1p(-p))

    return dict(enumerate(np.convolve(binom_pmf(h[0], 0.7), binom_pmf(sum(h[1:]), 0.2)).tolist()))


@pytest.mark.parametrize(("m", "n"), [(3, 36), (2, 400)])
def test_cost_model_prices_every_profile_a_user_mechanism_needs(m, n, monkeypatch):
    """The estimate of a user mechanism's exact smoothed delta prices each of its profiles at the
    mechanism's own price: raising that price per histogram and epsilon by c raises the
    estimate by c times the histograms of n records (C(n + m - 1, m - 1)) times the epsilon
    count, whatever the engine's share (how close the whole is to a measured run is a
    benchmark's business: benchmarks/bench_cost_model.py)."""
    from smoothdp_nb.core.runtime.budget import Estimate
    from smoothdp_nb.core.smoothed.engines import cost
    from smoothdp_nb.core.smoothed.engines.estimate import estimate_smoothed

    M = sdp.FiniteMechanism(_thinning, categories=m, name=f"thinning{m}")
    pi = np.full((m, m), 0.2 / (m - 1)) + np.eye(m) * (0.8 - 0.2 / (m - 1))
    eps = [0.5, 1.0]
    monkeypatch.setattr(cost, "general_speed", lambda *a: 1.0)  # no timed probe: arithmetic only
    totals = []
    for price in (1e-4, 3e-4):
        monkeypatch.setattr(M, "_profile_cost", lambda *args, c=price: Estimate(c * args[2] * args[3], 0.0))
        totals.append(estimate_smoothed(M, [n], pi, eps).seconds)
    histograms = math.comb(n + m - 1, m - 1)
    assert totals[1] - totals[0] == pytest.approx(2e-4 * histograms * len(eps), rel=1e-9)
    assert totals[0] > 1e-4 * histograms * len(eps)  # and the engine's work on top


def test_cost_model_needs_no_smaller_database():
    """Defect 3's cause: the law was timed at 16 and 32 records, where T = 20 is impossible."""
    M = sdp.postprocess(sdp.SamplingHistogram(T=20), lambda h: int(h[0] > h[1]))
    assert M.profile_cost(40, 2, 41, 1).seconds > 0


@pytest.mark.parametrize("m", [1000, 10**6])
def test_many_categories_refused_up_front(m):
    """m (m - 1) neighbours of m counts each (7.4 GiB at m = 1000; never
    returned at 10^6) are refused with an estimate before anything is allocated."""
    import time

    M = sdp.FiniteMechanism(lambda h: {int(h[0] > 0): 1.0}, categories=m)
    h = np.zeros(m, dtype=np.int64)
    h[:2] = (3, 2)
    t0 = time.perf_counter()
    with pytest.raises(sdp.ComputationTooLarge, match=r"estimated .* of memory"):
        sdp.privacy_profile(M, h, 0.5)
    assert time.perf_counter() - t0 < 5.0
