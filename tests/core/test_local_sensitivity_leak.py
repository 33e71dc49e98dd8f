"""local_sensitivity_leak against brute force: every neighbour, laws in 60-digit mpmath."""

import math

import pytest
from hypothesis import given, strategies as st

from smoothdp_nb import local_sensitivity_leak
from tests import methods_reference as ref

mp = ref.mpmath


def _law(t, K, m, eps):
    f, ls = ref.f(t, m), ref.local_sensitivity(t, K, m)
    if ls == 0:
        return {k: mp.mpf(1 if k == f else 0) for k in range(K + 1)}
    return ref.laplace_cells(f, mp.mpf(ls) / eps, K)


def _brute(t, K, m, eps):
    P = _law(t, K, m, eps)
    worst_loss, worst_delta = mp.mpf(0), mp.mpf(0)
    for u in ref.neighbours(t, K):
        Q = _law(u, K, m, eps)
        loss = max(ref.max_ratio(P, Q), ref.max_ratio(Q, P))
        worst_loss = max(worst_loss, mp.log(loss) if loss != mp.inf else mp.inf)
        worst_delta = max(worst_delta, ref.hockey(P, Q, eps), ref.hockey(Q, P, eps))
    return worst_loss, worst_delta


@pytest.mark.parametrize("n,K", [(3, 6), (4, 5)])
def test_worst_neighbour_against_brute_force(n, K):
    m = ref.rank(n)
    for t in ref.multisets(n, K):
        leak = local_sensitivity_leak([float(v) for v in t], "median", 1.0, bounds=(0.0, float(K)), lattice=1.0)
        loss, _ = _brute(t, K, m, 1.0)
        if loss == mp.inf:
            assert math.isinf(leak.epsilon_actual), t
        else:
            assert leak.epsilon_actual == pytest.approx(float(loss), rel=1e-10), t
        # the neighbour it names is one, and has the loss it reports
        u = tuple(int(v) for v in leak.neighbour)
        assert u in ref.neighbours(t, K) or u == t
        P, Q = _law(t, K, m, 1.0), _law(u, K, m, 1.0)
        r = max(ref.max_ratio(P, Q), ref.max_ratio(Q, P))
        assert (math.isinf(leak.epsilon_actual) and r == mp.inf) or leak.epsilon_actual == pytest.approx(
            float(mp.log(r)), rel=1e-10
        )
        want_delta = max(ref.hockey(P, Q, 1.0), ref.hockey(Q, P, 1.0))
        assert leak.delta_at_claimed == pytest.approx(float(want_delta), rel=1e-9, abs=1e-15)
        assert leak.advantage == pytest.approx(float(sum(abs(P[k] - Q[k]) for k in P) / 2), rel=1e-9, abs=1e-15)


def test_ties_make_the_loss_infinite():
    leak = local_sensitivity_leak([3.0, 5.0, 5.0, 5.0, 9.0], "median", 1.0, bounds=(0.0, 16.0), lattice=1.0)
    assert leak.local_sensitivity == 0.0
    assert math.isinf(leak.epsilon_actual)
    assert leak.delta_at_claimed > 0.5  # far beyond any delta one would accept


@given(st.lists(st.integers(0, 12), min_size=3, max_size=7))
def test_candidate_neighbours_find_the_exhaustive_worst(cells):
    """The candidate set (used on fine lattices) finds the worst loss of the exhaustive search."""
    x = [float(c) for c in cells]
    full = local_sensitivity_leak(x, "median", 0.7, bounds=(0.0, 12.0), lattice=1.0, exhaustive=True)
    cand = local_sensitivity_leak(x, "median", 0.7, bounds=(0.0, 12.0), lattice=1.0, exhaustive=False)
    assert cand.epsilon_actual == pytest.approx(full.epsilon_actual, rel=1e-12) or (
        math.isinf(cand.epsilon_actual) and math.isinf(full.epsilon_actual)
    )
