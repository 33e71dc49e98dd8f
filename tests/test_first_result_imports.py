"""A first result in a fresh interpreter loads only what it uses: one profile of an election and
one exact smoothed delta import neither pandas (no data frame is asked for) nor python-flint (their
certified constants come from the standard library's decimal), nor the FFT, statistics,
optimisation, integration, interpolation or Qhull packages of scipy (composition with
privacy-loss grids imports its FFT itself; a hull of more than two categories imports Qhull)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

UNUSED = (
    "pandas",
    "flint",
    "mpmath",
    "scipy.signal",
    "scipy.stats",
    "scipy.optimize",
    "scipy.integrate",
    "scipy.interpolate",
    "scipy.fft",
    "scipy.spatial",
    "altair",
    "IPython",
)

SCRIPT = """
import json, sys
import smoothdp_nb as sdp
m = sdp.SamplingHistogram(eta=0.998)
votes = sdp.datasets.election_histogram(2020)
sdp.privacy_profile(m, votes, [0.5, 1.0])
after_profile = sorted(sys.modules)
res = sdp.smoothed_delta(m, 2000, [[0.3, 0.7], [0.6, 0.4], [0.5, 0.5]], [0.5, 1.0], progress=False)
assert res.delta.shape == (2,)
print(json.dumps([after_profile, sorted(sys.modules)]))
"""


@pytest.fixture(scope="module")
def loaded() -> tuple[list[str], list[str]]:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    after_profile, after_smoothed = json.loads(out.strip().splitlines()[-1])
    return after_profile, after_smoothed


@pytest.mark.parametrize("stage", ["profile", "smoothed delta"])
def test_first_results_leave_unused_packages_unimported(loaded, stage):
    mods = loaded[0] if stage == "profile" else loaded[1]
    heavy = sorted({m for m in mods for u in UNUSED if m == u or m.startswith(u + ".")})
    assert heavy == []


def test_the_check_sees_what_the_calls_do_import(loaded):
    # the two calls do load numpy and scipy.special (log-gamma): the subprocess ran them
    after_profile, after_smoothed = loaded
    assert {"numpy", "scipy.special"} <= set(after_profile)
    assert "smoothdp_nb.core.smoothed.engines.exact" in after_smoothed
    # and a data frame, asked for, still comes: the same session imports pandas then
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("print(json", "res.to_frame(); print(json")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "pandas" in json.loads(out.strip().splitlines()[-1])[1]
