"""The generic path of a user mechanism (smoothdp_nb.core.smoothed.mechanisms.generic): each
output law computed once per histogram, shared by neighbour pairs, chunks,
the cost estimate and a bisection; pairs evaluated once per distinct pair of
laws, with enclosures that still contain the exact profile (mpmath from
Fractions, tests/exact.py)."""

from collections import Counter
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.engines.chunks import profile_chunk_rows
from smoothdp_nb.core.smoothed.mechanisms import compositions
from smoothdp_nb.core.smoothed.mechanisms.generic import LawMemo
from tests import exact


def counted(law):
    """``law`` and a Counter of the histograms it was called on."""
    calls = Counter()

    def pmf(h):
        calls[h] += 1
        return law(h)

    return pmf, calls


def coin(h):
    """Reads only the first count: many histograms share one law."""
    p = (1 + h[0]) / (sum(h) + 2)
    return {0: p, 1: 1 - p}


def coin_exact(h):
    p = Fraction(1 + h[0], sum(h) + 2)
    return {0: p, 1: 1 - p}


def spread(h):
    """Reads every count: no two histograms share a law (three outputs)."""
    w = np.array([1 + h[0], 2 + 2 * h[1], 3 + h[2] * h[0]], dtype=float)
    return dict(enumerate((w / w.sum()).tolist()))


def spread_exact(h):
    w = [Fraction(1 + h[0]), Fraction(2 + 2 * h[1]), Fraction(3 + h[2] * h[0])]
    return {o: v / sum(w) for o, v in enumerate(w)}


def test_profile_calls_each_law_once():
    pmf, calls = counted(spread)
    mech = sdp.FiniteMechanism(pmf, categories=3)
    hists = compositions(9, 3)
    sdp.privacy_profile(mech, hists, [0.1, 0.5])
    assert set(calls) == {tuple(h) for h in hists.tolist()}
    assert set(calls.values()) == {1}


def test_smoothed_delta_calls_each_law_once_across_chunks_and_the_estimate():
    # 128 epsilon: 512 histograms per chunk of profiles, so the 528 histograms of
    # n = 31 come in two chunks whose neighbours overlap; the estimate probes a few first
    epsilon = np.linspace(0.01, 1.5, 128)
    n = 31
    assert len(compositions(n, 3)) > profile_chunk_rows(epsilon.size)
    pmf, calls = counted(coin)
    mech = sdp.FiniteMechanism(pmf, categories=3)
    sdp.smoothed_delta(mech, n, [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]], epsilon, progress=False)
    full = {h: c for h, c in calls.items() if sum(h) == n}
    assert set(full) == {tuple(h) for h in compositions(n, 3).tolist()}
    assert set(full.values()) == {1}


def test_smoothed_epsilon_calls_each_law_once_over_the_bisection():
    pmf, calls = counted(spread)
    mech = sdp.FiniteMechanism(pmf, categories=3)
    eps = sdp.smoothed_epsilon(mech, 6, [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]], 1e-3)
    assert eps > 0
    assert max(calls.values()) == 1


def test_laws_are_not_kept_after_the_call():
    """A changed function is seen by the next call: no law outlives its operation."""
    state = {"keep": 0.75}

    def rr(h):
        k = state["keep"]
        p = (h[0] * k + (sum(h) - h[0]) * (1 - k)) / sum(h)
        return {0: p, 1: 1 - p}

    mech = sdp.FiniteMechanism(rr, categories=3)
    pi = [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6]]
    before = sdp.smoothed_delta(mech, 5, pi, 0.2, progress=False).delta
    state["keep"] = 0.95
    after = sdp.smoothed_delta(mech, 5, pi, 0.2, progress=False).delta
    assert after > before
    assert not any(isinstance(v, LawMemo) for v in vars(mech).values())


@pytest.mark.parametrize(("law", "law_exact"), [(coin, coin_exact), (spread, spread_exact)])
def test_enclosures_of_shared_pairs_contain_the_exact_profile(law, law_exact):
    """Pairs evaluated once (symmetric, or bit-identical laws) give each row an
    enclosure of its own exact profile (Definition 2 in mpmath from Fractions)."""
    mp.mp.dps = 50
    epsilon = [0.0, 0.05, 0.4]
    mech = sdp.FiniteMechanism(law, categories=3)
    hists = exact.all_hists(5, 3)
    enc = sdp.privacy_profile_enclosure(mech, np.array(hists), epsilon)
    for h, lo, hi in zip(hists, enc.lower, enc.upper):
        for e, a, b in zip(epsilon, lo, hi):
            want = exact.profile_of_law(law_exact, h, mp.mpf(e))
            if want == 0:
                assert a == -np.inf
            else:
                assert mp.mpf(a) <= mp.log(want) <= mp.mpf(b)


def test_a_bad_law_among_many_is_named():
    def law(h):
        return {0: 0.5, 1: 0.4} if h == (1, 2, 0) else {0: 1.0}

    mech = sdp.FiniteMechanism(law, categories=3)
    with pytest.raises(ValueError, match=r"pmf\(1, 2, 0\) must sum to 1"):
        sdp.privacy_profile(mech, compositions(3, 3), 0.5)
    neg = sdp.FiniteMechanism(lambda h: {0: 1.5, 1: -0.5} if h[0] == 2 else {0: 1.0}, categories=3)
    with pytest.raises(ValueError, match=r"pmf\(2, .*>= 0"):
        sdp.privacy_profile(neg, compositions(3, 3), 0.5)
    nan_log = sdp.FiniteMechanism(lambda h: {0: float("nan")} if h[2] == 3 else {0: 0.0}, categories=3, log=True)
    with pytest.raises(ValueError, match=r"pmf\(0, 0, 3\) must return log-probabilities"):
        sdp.privacy_profile(nan_log, compositions(3, 3), 0.5)
    words = sdp.FiniteMechanism(lambda h: {0: "half"}, categories=3)
    with pytest.raises(TypeError, match="must map outputs to numbers"):
        sdp.privacy_profile(words, compositions(2, 3), 0.5)


def test_two_nan_keys_of_one_law_are_one_output():
    """Several NaN keys of one law add up (every NaN is one output), as one key with their sum."""
    one = sdp.FiniteMechanism(lambda h: {float("nan"): 0.5, 0: 0.5} if h[0] else {0: 1.0}, categories=2)
    two = sdp.FiniteMechanism(
        lambda h: {float("nan"): 0.25, np.float64("nan"): 0.25, 0: 0.5} if h[0] else {0: 1.0}, categories=2
    )
    hists = compositions(3, 2)
    a = sdp.privacy_profile_enclosure(one, hists, [0.0, 0.3])
    b = sdp.privacy_profile_enclosure(two, hists, [0.0, 0.3])
    # exact: 1/2 at every epsilon between a law with h0 >= 1 and the point mass (h0 = 0):
    # the NaN output alone gives P(S) - e^eps Q(S) = 1/2; identical laws give 0
    for lo, hi, h in zip(b.lower, b.upper, hists.tolist()):
        if h[0] <= 1:
            assert np.all(lo <= np.log(0.5)) and np.all(np.log(0.5) <= hi)
        else:
            assert np.all(hi < -20)
    near = hists[:, 0] <= 1
    np.testing.assert_allclose(a.upper[near], b.upper[near], rtol=1e-12)
