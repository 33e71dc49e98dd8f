"""The data-dependent release methods against brute force, and their privacy checked exactly.

Laws: every method's exact law (``method_law``) equals the brute-force law of
tests/methods_reference.py (breadth-first distances over all multisets, 60-digit mpmath) on every
dataset of small domains.  Privacy: over every pair of neighbouring datasets, the exact ratio of the
pure methods is at most ``e^epsilon`` and the (epsilon, delta) methods' hockey-stick divergence at
epsilon is at most delta, both on the reference laws.
"""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from smoothdp_nb.core.release.methods.inverse_sensitivity import unbiased_bound
from smoothdp_nb.core.release.methods.run import check_inputs, lattice_data, method_law
from tests import methods_reference as ref

EPS = 1.0
DELTA = 0.1
BETA = 1.0
SETTINGS = [(3, 4, None), (4, 4, None), (4, 3, 0.25), (3, 1, None), (5, 1, None)]  # (n, K, quantile)


def _code_law(method, t, K, quantile, **kw):
    query = "median" if quantile is None else "quantile"
    law = method_law(method, list(t), query, EPS, bounds=(0.0, float(K)), lattice=1.0, quantile=quantile, **kw)
    out = {int(k): float(p) for k, p in zip(law.cells, law.probabilities, strict=True)}
    out["refused"] = law.refusal
    return out


def _ref_law(method, t, K, m):
    if method == "exponential":
        return {**ref.exponential_law(t, K, m, EPS), "refused": 0}
    if method == "inverse-sensitivity":
        return {**ref.ism_law(t, K, m, EPS), "refused": 0}
    if method == "propose-test-release":
        return ref.ptr_law(t, K, m, EPS, DELTA, BETA)
    return ref.stability_law(t, K, m, EPS, DELTA)


KW = {
    "exponential": {},
    "inverse-sensitivity": {},
    "propose-test-release": {"delta": DELTA, "proposal": BETA},
    "stability": {"delta": DELTA},
}


@pytest.mark.parametrize("method", list(KW))
@pytest.mark.parametrize("n,K,quantile", SETTINGS)
def test_law_equals_brute_force(method, n, K, quantile):
    m = ref.rank(n, quantile)
    for t in ref.multisets(n, K):
        want = _ref_law(method, t, K, m)
        got = _code_law(method, t, K, quantile, **KW[method])
        for y, p in want.items():
            assert got[y] == pytest.approx(float(p), rel=1e-12, abs=1e-300), (method, t, y)


@pytest.mark.parametrize("method", list(KW))
@pytest.mark.parametrize("n,K,quantile", SETTINGS)
def test_privacy_over_all_neighbouring_pairs(method, n, K, quantile):
    m = ref.rank(n, quantile)
    laws = {t: _ref_law(method, t, K, m) for t in ref.multisets(n, K)}
    worst_ratio, worst_delta = ref.mpmath.mpf(0), ref.mpmath.mpf(0)
    for t, P in laws.items():
        for u in ref.neighbours(t, K):
            Q = laws[u]
            if method in ("exponential", "inverse-sensitivity"):
                worst_ratio = max(worst_ratio, ref.max_ratio(P, Q))
            else:
                worst_delta = max(worst_delta, ref.hockey(P, Q, EPS))
    if method in ("exponential", "inverse-sensitivity"):
        assert worst_ratio <= ref.mpmath.exp(EPS) * (1 + ref.mpmath.mpf(10) ** -50), (method, worst_ratio)
        assert worst_ratio > 1  # the data moves the law
    else:
        assert worst_delta <= DELTA * (1 + 1e-50), (method, worst_delta)
        if not (method == "propose-test-release" and K <= BETA):  # there no database is unsafe: plain Laplace
            assert worst_delta > 0  # the delta is used somewhere


def test_ism_on_two_cells_is_the_notes_binary_median():
    """Binary data, n = 2k + 1 = 5, s ones: the notes' ISM gives P(1) = 1 / (1 + e^{-(s - k) eps}) for s > k."""
    k = 2
    for s in range(k + 1, 6):
        t = (0,) * (5 - s) + (1,) * s
        got = _code_law("inverse-sensitivity", t, 1, None)
        assert got[1] == pytest.approx(1 / (1 + math.exp(-(s - k) * EPS)), rel=1e-14)


@pytest.mark.parametrize("n,K,quantile", SETTINGS)
def test_unbiased_bound_against_brute_force(n, K, quantile):
    m = ref.rank(n, quantile)
    query = "median" if quantile is None else "quantile"
    inp = check_inputs("inverse-sensitivity", query, EPS, bounds=(0.0, float(K)), lattice=1.0, quantile=quantile)
    for t in ref.multisets(n, K):
        got = unbiased_bound(lattice_data(list(t), inp, False), EPS)
        want = ref.unbiased_bound(t, K, m, EPS)
        assert want <= got <= want * (1 + 1e-15), t
        # the ISM returns f(x) at least as often as every unbiased eps/4-DP mechanism (1/4-optimality)
        assert ref.ism_law(t, K, m, EPS)[ref.f(t, m)] >= ref.unbiased_bound(t, K, m, EPS / 4) * (1 - 1e-50)


def test_rounding_to_the_lattice_is_per_record():
    """Records are rounded half-way up to the lattice and clamped to the cells inside the bounds."""
    inp = check_inputs("exponential", "median", EPS, bounds=(0.3, 9.7), lattice=1.0)
    data = lattice_data([0.0, 2.5, 2.49, 9.9, 5.5], inp, False)
    assert data.cells.tolist() == [1, 2, 3, 6, 9]
    assert (data.k_lo, data.k_hi) == (1, 9)
    inp = check_inputs("exponential", "median", EPS, bounds=(-3.3, 2.2), lattice=1.0)
    data = lattice_data([-3.5, -0.5, 1.49, -1.51, 2.2], inp, False)
    assert data.cells.tolist() == [-3, -2, 0, 1, 2]
    assert (data.k_lo, data.k_hi) == (-3, 2)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"method": "laplace"}, "method must be one of"),
        ({"method": "stability"}, "delta is required"),
        ({"method": "stability", "delta": 0.5}, "delta"),
        ({"method": "exponential", "delta": 1e-6}, "delta is not used"),
        ({"method": "exponential", "query": "mean"}, "trimmed mean and the mean"),
        ({"method": "exponential", "query": "quantile"}, "quantile is required"),
        ({"method": "exponential", "query": "quantile", "quantile": 1.0}, "quantile"),
        ({"method": "exponential", "gamma": 0.1}, "gamma is a parameter of method='smooth-sensitivity'"),
        ({"method": "exponential", "proposal": 1.0}, "proposal is only"),
        ({"method": "ptr", "delta": 1e-6, "proposal": 11.0}, "proposal"),
        ({"method": "ptr", "delta": 1e-6, "proposal": -1.0}, "proposal"),
        ({"quantile": 0.3}, "quantile is not a parameter"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, match):
    from smoothdp_nb import release

    kw = {"query": "median", **kwargs}
    query = kw.pop("query")
    with pytest.raises(ValueError, match=match):
        release([1.0, 2.0, 3.0], query, 1.0, bounds=(0.0, 10.0), **kw)


def test_law_refused_up_front_on_the_finest_lattice():
    from smoothdp_nb import ComputationTooLarge

    with pytest.raises(ComputationTooLarge, match="lattice"):
        method_law("exponential", [1.0, 2.0], "median", 1.0, bounds=(0.0, 100.0), lattice=2.0**-46)


def test_law_sums_to_one_on_election_like_data():
    rng = np.random.default_rng(5)
    x = rng.uniform(0.3, 0.7, size=51)
    for method, kw in KW.items():
        law = method_law(method, x, "median", 0.5, bounds=(0.0, 1.0), lattice=2.0**-10, **kw)
        assert law.probabilities.sum() + law.refusal == pytest.approx(1.0, abs=1e-12)


@given(
    cells=st.lists(st.integers(0, 12), min_size=1, max_size=9),
    data=st.data(),
    method=st.sampled_from(list(KW)),
    eps=st.sampled_from([0.1, 0.7, 2.0]),
    quantile=st.sampled_from([None, 0.1, 0.5, 0.9]),
)
def test_guarantee_holds_for_random_neighbours(cells, data, method, eps, quantile):
    """The code's own laws on a random dataset and a random neighbour obey the stated guarantee."""
    i = data.draw(st.integers(0, len(cells) - 1))
    v = data.draw(st.integers(0, 12))
    other = [*cells[:i], v, *cells[i + 1 :]]
    query = "median" if quantile is None else "quantile"
    kw = {**KW[method], "proposal": 2.0} if method == "propose-test-release" else KW[method]
    laws = []
    for x in (cells, other):
        law = method_law(
            method, [float(c) for c in x], query, eps, bounds=(0.0, 12.0), lattice=1.0, quantile=quantile, **kw
        )
        laws.append(np.append(law.probabilities, law.refusal))
    p, q = laws
    assert p.sum() == pytest.approx(1.0, abs=1e-12) and q.sum() == pytest.approx(1.0, abs=1e-12)
    if method in ("exponential", "inverse-sensitivity"):
        assert np.all(p <= math.exp(eps) * q * (1 + 1e-12)) and np.all(q <= math.exp(eps) * p * (1 + 1e-12))
    else:
        for a, b in ((p, q), (q, p)):
            assert np.maximum(a - math.exp(eps) * b, 0).sum() <= DELTA * (1 + 1e-9)
