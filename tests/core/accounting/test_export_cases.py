"""The export to dp_accounting places exact losses exactly.

The cases are those of dp_accounting's own tests of ``from_randomized_response`` and
``from_two_probability_mass_functions`` (its randomized-response and grid-pmf tests),
written here as two output laws each; the expected pmfs are the ones those tests state
(``ceil`` / ``floor`` of the losses on the grid, by hand).
"""

from __future__ import annotations

import math

import pytest
from dp_accounting.pld import common, pld_pmf, privacy_loss_distribution as dpl

import smoothdp_nb as sdp


def _mech(upper: dict[int, float], lower: dict[int, float]) -> sdp.FiniteMechanism:
    """x = [1, 0] has the law ``upper`` (dp_accounting's ``log_pmf_upper``), x' = [0, 1]
    the law ``lower``."""
    return sdp.FiniteMechanism(lambda h: upper if h[0] == 1 else lower, categories=2)


def _rr(p: float, buckets: int) -> dict[int, float]:
    """dp_accounting's randomized response: the true bucket with 1 - p + p/k, each other p/k."""
    return {b: (1 - p + p / buckets) if b == 0 else p / buckets for b in range(buckets)}


def _rr_other(p: float, buckets: int) -> dict[int, float]:
    return {b: (1 - p + p / buckets) if b == 1 else p / buckets for b in range(buckets)}


def _uniform(buckets: int) -> dict[int, float]:
    return {b: 1.0 / buckets for b in range(buckets)}


def _probs(pmf: pld_pmf.PLDPmf) -> dict[int, float]:
    if isinstance(pmf, pld_pmf.SparsePLDPmf):
        return {int(k): float(v) for k, v in pmf._loss_probs.items() if v > 0}
    return {int(k): float(v) for k, v in common.list_to_dictionary(pmf._probs, pmf._lower_loss).items() if v > 0}


def _check(got: dpl.PrivacyLossDistribution, remove: dict[int, float], add: dict[int, float], inf_r=0.0, inf_a=0.0):
    for pmf, want, inf in ((got._pmf_remove, remove, inf_r), (got._pmf_add, add, inf_a)):
        have = _probs(pmf)
        assert set(have) == set(want), (have, want)
        for k, v in want.items():
            assert math.isclose(have[k], v, rel_tol=1e-12)
        assert math.isclose(pmf._infinity_mass, inf, rel_tol=1e-12, abs_tol=1e-300)


CASES = [
    # randomized response, replace-one (the neighbour's true bucket differs): h = 1, pessimistic
    (_rr(0.5, 2), _rr_other(0.5, 2), 1.0, True, {2: 0.75, -1: 0.25}, {2: 0.75, -1: 0.25}, 0.0, 0.0),
    (_rr(0.2, 4), _rr_other(0.2, 4), 1.0, True, {3: 0.85, -2: 0.05, 0: 0.1}, {3: 0.85, -2: 0.05, 0: 0.1}, 0.0, 0.0),
    # replace-special (the neighbour's output is uniform)
    (_rr(0.5, 2), _uniform(2), 1.0, True, {1: 0.75, 0: 0.25}, {1: 0.5, 0: 0.5}, 0.0, 0.0),
    (_rr(0.2, 4), _uniform(4), 1.0, True, {2: 0.85, -1: 0.15}, {2: 0.75, -1: 0.25}, 0.0, 0.0),
    # other discretization intervals
    (_rr(0.2, 4), _rr_other(0.2, 4), 0.7, True, {5: 0.85, -4: 0.05, 0: 0.1}, {5: 0.85, -4: 0.05, 0: 0.1}, 0.0, 0.0),
    (_rr(0.2, 4), _uniform(4), 0.5, True, {3: 0.85, -3: 0.15}, {4: 0.75, -2: 0.25}, 0.0, 0.0),
    (_rr(0.2, 4), _rr_other(0.2, 4), 2.0, True, {2: 0.85, -1: 0.05, 0: 0.1}, {2: 0.85, -1: 0.05, 0: 0.1}, 0.0, 0.0),
    (_rr(0.2, 4), _uniform(4), 2.0, True, {1: 0.85, 0: 0.15}, {1: 0.75, 0: 0.25}, 0.0, 0.0),
    # optimistic (floor)
    (_rr(0.5, 2), _rr_other(0.5, 2), 1.0, False, {1: 0.75, -2: 0.25}, {1: 0.75, -2: 0.25}, 0.0, 0.0),
    (_rr(0.5, 2), _uniform(2), 1.0, False, {0: 0.75, -1: 0.25}, {0: 0.5, -1: 0.5}, 0.0, 0.0),
    (_rr(0.2, 4), _rr_other(0.2, 4), 1.0, False, {2: 0.85, -3: 0.05, 0: 0.1}, {2: 0.85, -3: 0.05, 0: 0.1}, 0.0, 0.0),
    (_rr(0.2, 4), _uniform(4), 1.0, False, {1: 0.85, -2: 0.15}, {1: 0.75, -2: 0.25}, 0.0, 0.0),
    # two explicit pmfs (upper, lower), h = 1, pessimistic; with infinite losses
    ({0: 0.2, 1: 0.8}, {0: 0.8, 1: 0.2}, 1.0, True, {2: 0.8, -1: 0.2}, {2: 0.8, -1: 0.2}, 0.0, 0.0),
    ({0: 0.1, 1: 0.8, 3: 0.1}, {0: 0.8, 1: 0.1, 2: 0.1}, 1.0, True, {3: 0.8, -2: 0.1}, {3: 0.8, -2: 0.1}, 0.1, 0.1),
    ({0: 0.8, 1: 0.2}, {0: 0.5, 1: 0.5}, 1.0, True, {1: 0.8, 0: 0.2}, {0: 0.5, 1: 0.5}, 0.0, 0.0),
    ({0: 0.7, 1: 0.2, 3: 0.1}, {0: 0.4, 1: 0.4, 2: 0.2}, 1.0, True, {1: 0.7, 0: 0.2}, {0: 0.4, 1: 0.4}, 0.1, 0.2),
]


@pytest.mark.parametrize("upper,lower,h,pessimistic,remove,add,inf_r,inf_a", CASES)
def test_export_gives_dp_accountings_expected_pmf(upper, lower, h, pessimistic, remove, add, inf_r, inf_a):
    pld = sdp.privacy_loss_distribution(_mech(upper, lower), [1, 0], [0, 1])
    _check(pld.to_dp_accounting(h, pessimistic=pessimistic), remove, add, inf_r, inf_a)


def test_delta_at_zero_of_the_export_matches_dp_accounting():
    """Randomized response (p = 0.2, 4 buckets) exported at h = 1: delta at eps = 0 is that
    of dp_accounting's own construction, 0.85 (1 - e^-3) + 0.1 (1 - e^0) = 0.8077, and the
    package's own delta at 0 is the total variation distance 0.8."""
    mech = _mech(_rr(0.2, 4), _rr_other(0.2, 4))
    pld = sdp.privacy_loss_distribution(mech, [1, 0], [0, 1])
    native = dpl.from_randomized_response(0.2, 4, value_discretization_interval=1)
    want = 0.85 * (1 - math.exp(-3))
    assert math.isclose(pld.to_dp_accounting(1.0).get_delta_for_epsilon(0.0), want, rel_tol=1e-12)
    assert math.isclose(native.get_delta_for_epsilon(0.0), want, rel_tol=1e-12)
    assert pld.delta_enclosure(0.0).delta_lower <= 0.8 <= pld.delta(0.0)
    assert pld.delta(0.0) - pld.delta_enclosure(0.0).delta_lower <= 1e-13
    assert _probs(pld.to_dp_accounting(1e-4)._pmf_remove)[0] == pytest.approx(0.1, rel=1e-12)  # 0 stays 0
