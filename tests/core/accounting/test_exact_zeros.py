"""Exact zeros stay exact: a privacy loss of exactly 0 composes to exactly 0, so delta at
epsilon = 0 is exactly 0 where the two output laws are equal, and the inverse returns 0.

The case: the sampling histogram (T = 4) post-processed to "A" (more than 2 samples of the
first category), "B" (fewer) or None (exactly 2).  At x = (0, 10) and its neighbour (1, 9)
the first category has at most one record, so the output is "B" with probability 1 under
both: every delta is exactly 0 (by hand).
"""

from __future__ import annotations

import numpy as np
import pytest

import smoothdp_nb as sdp


def _threshold(o: object) -> str | None:
    c = o[0] if hasattr(o, "__len__") else o
    return "A" if c > 2 else ("B" if c < 2 else None)


@pytest.fixture(scope="module")
def mech() -> sdp.Mechanism:
    return sdp.postprocess(sdp.SamplingHistogram(T=4), _threshold)


def test_equal_laws_have_zero_delta_and_zero_loss(mech):
    pld = sdp.privacy_loss_distribution(mech, [0, 10], [1, 9])
    assert pld.delta([0.0, 1e-15]).tolist() == [0.0, 0.0]
    assert pld.to_frame()["loss"].tolist() == [0.0, 0.0]
    assert pld.to_dp_accounting(1e-4).get_delta_for_epsilon(0.0) == 0.0
    assert pld.renyi(2.0) <= 1e-15


@pytest.mark.parametrize("k", [1, 3, 50])
def test_composition_of_equal_laws_is_exactly_zero(mech, k):
    run = mech if k == 1 else sdp.repeat(mech, k)
    pld = sdp.privacy_loss_distribution(sdp.repeat(run, 1) if k == 1 else run, [0, 10], [1, 9])
    assert pld.delta([0.0, 0.5]).tolist() == [0.0, 0.0]
    if k > 1:
        assert np.all(sdp.privacy_profile(run, [0, 10], [0.0, 1e-15]) == 0.0)
        assert sdp.profile_epsilon(run, [0, 10], 1e-300) == 0.0


def test_the_plain_profile_of_equal_laws_is_exactly_zero(mech):
    """The mechanism itself (no composition: the generic enumeration of its output laws):
    both laws are a single output, so each mass is exactly 1 whatever the error of its log."""
    assert sdp.privacy_profile(mech, [0, 10], [0.0, 1e-15]).tolist() == [0.0, 0.0]
    assert sdp.privacy_profile(mech, [0, 10], 0.0, log=True) == -np.inf
    assert sdp.profile_epsilon(mech, [0, 10], 1e-300) == 0.0
    assert sdp.dp_epsilon(sdp.FiniteMechanism(lambda h: {"same": 1.0}, categories=2), 5, 1e-300) == 0.0


def test_a_profile_that_is_not_zero_keeps_a_tight_bracket(mech):
    """At x = (2, 8), against its neighbours (1, 9) and (3, 7), delta_0 is the largest
    total variation distance of the output laws, counted exactly with Fractions (the
    number of samples of the first category is hypergeometric)."""
    from fractions import Fraction
    from math import comb

    def law(a: int) -> dict[str | None, Fraction]:
        pk = {c: Fraction(comb(a, c) * comb(10 - a, 4 - c), comb(10, 4)) for c in range(5)}
        return {"A": pk[3] + pk[4], "B": pk[0] + pk[1], None: pk[2]}

    def tv(p: dict[str | None, Fraction], q: dict[str | None, Fraction]) -> Fraction:
        return sum((max(Fraction(0), p[o] - q[o]) for o in p), Fraction(0))

    exact = max(tv(law(2), law(a)) for a in (1, 3))
    enc = sdp.privacy_profile_enclosure(mech, [2, 8], 0.0)
    assert enc.delta_lower <= exact <= enc.delta_upper
    assert enc.delta_upper - enc.delta_lower <= 1e-12 * float(exact)
