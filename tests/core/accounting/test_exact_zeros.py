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
