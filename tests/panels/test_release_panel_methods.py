"""The release panel switches among the data-dependent release methods."""

import math

import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb import panels

X = np.array([0.2, 0.4, 0.5, 0.5, 0.5, 0.6, 0.9])


def test_switching_method_changes_the_release_and_the_controls():
    panel = panels.release(X, bounds=(0, 1))
    assert panel.method.value == "smooth-sensitivity" and "method" not in panel.params()
    panel.method.value = "exponential"
    params = panel.params()
    assert params["method"] == "exponential" and params["delta"] is None
    assert panel.noise.disabled and panel.gamma.disabled and panel.diagnostics.disabled and panel.delta.disabled
    rel = panel.draw(rng=3)
    assert isinstance(rel, sdp.MethodRelease) and rel.method == "exponential"
    # the same release as the function with the panel's parameters and seed
    assert sdp.release(X, **{**params, "rng": 3}).value == rel.value
    panel.method.value = "propose-test-release"
    assert not panel.delta.disabled and panel.params()["delta"] == pytest.approx(1e-6)
    panel.method.value = "smooth-sensitivity"
    assert not panel.noise.disabled and "method" not in panel.params()


def test_a_refused_release_shows_as_bottom_and_stays_off_the_axis():
    panel = panels.release([0.1, 0.3, 0.5, 0.7, 0.9], bounds=(0, 1), method="stability")
    rel = panel.draw(
        rng=1
    )  # distinct records: the distance to instability is 0, refused unless the 1e-6 coin says pass
    assert rel.refused and math.isnan(rel.value)
    assert "⊥ (refused)" in panel.status.value
    assert rel.to_dict()["value"] is None
