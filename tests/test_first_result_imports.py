"""A first result in a fresh interpreter loads only what it uses: one profile of an election and
one exact smoothed delta do not import the FFT, statistics, optimisation, integration or
interpolation packages of scipy (composition with privacy-loss grids imports its FFT itself)."""

from __future__ import annotations

import json
import subprocess
import sys

UNUSED = ("scipy.signal", "scipy.stats", "scipy.optimize", "scipy.integrate", "scipy.interpolate", "scipy.fft")

SCRIPT = """
import json, sys
import smoothdp_nb as sdp
m = sdp.SamplingHistogram(eta=0.998)
sdp.privacy_profile(m, [600, 400], [0.5, 1.0])
after_profile = sorted(sys.modules)
res = sdp.smoothed_delta(m, 2000, [[0.3, 0.7], [0.6, 0.4]], [0.5, 1.0], progress=False)
assert res.delta.shape == (2,)
print(json.dumps([after_profile, sorted(sys.modules)]))
"""


def test_profile_and_smoothed_delta_leave_unused_scipy_packages_unimported():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    after_profile, after_smoothed = json.loads(out.strip().splitlines()[-1])
    for mods in (after_profile, after_smoothed):
        loaded = [m for m in mods if m in UNUSED]
        assert loaded == []
