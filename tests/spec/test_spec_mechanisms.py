"""Mechanism objects of the namespace by name in a spec (``mechanism = "my_mech"``).

Each result is checked against the direct API call on the same object, and the finite mechanism also
against randomized response's closed form (an independent computation).
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import smoothdp_nb as sdp
from smoothdp_nb.spec import SpecError, parse_spec, run_spec

KEEP = 0.75  # randomized response: a bit is reported truthfully with probability 3/4 (ln 3-DP)


def rr_binary(hist):
    h0, h1 = hist
    n = h0 + h1
    law = np.convolve(binom.pmf(np.arange(h0 + 1), h0, KEEP), binom.pmf(np.arange(h1 + 1), h1, 1 - KEEP))
    return {(k, n - k): float(p) for k, p in enumerate(law)}


RR = sdp.FiniteMechanism(rr_binary, categories=2, name="rr")
WINNER = sdp.postprocess(sdp.SamplingHistogram(eta=0.5), sdp.winner)
NS = {"rr": RR, "win": WINNER, "three": 3}


def test_finite_mechanism_profile_matches_api_and_closed_form():
    eps = [0.0, 0.5, 1.0]
    r = run_spec({"compute": "profile", "histogram": [[1, 0], [3, 2]], "epsilon": eps, "mechanism": "rr"}, NS)
    direct = sdp.privacy_profile(RR, np.array([[1, 0], [3, 2]]), eps, log=True)
    np.testing.assert_array_equal(r.log_delta, np.asarray(direct).reshape(r.log_delta.shape))
    # one record: delta = (e^eps0 - e^eps)_+ / (1 + e^eps0) with e^eps0 = 3
    closed = [max(0.0, (3 - math.exp(e)) / 4) for e in eps]
    np.testing.assert_allclose(np.exp(r.log_delta[0]), closed, rtol=1e-12)
    assert "rr" in parse_spec({"histogram": [1, 0], "epsilon": 0.5, "mechanism": "rr"}).title


def test_postprocessed_mechanism_smoothed_and_sweep_match_api():
    pi = np.array([[0.4, 0.6], [0.6, 0.4]])
    text = 'compute = "smoothed"\nmechanism = "win"\nn = 20\npi = [[0.4, 0.6], [0.6, 0.4]]\nepsilon = [0.5, 1.0]\n'
    r = run_spec(text, NS)
    direct = sdp.smoothed_delta(WINNER, 20, pi, [0.5, 1.0], progress=False)
    np.testing.assert_array_equal(r.delta, direct.delta)
    curve = run_spec({"compute": "sweep", "mechanism": "win", "n": [10, 20], "pi": pi.tolist(), "epsilon": 0.5}, NS)
    direct_curve = sdp.smoothed_delta_curve(WINNER, [10, 20], pi, 0.5, progress=False)
    pd.testing.assert_frame_equal(curve.table, direct_curve.table)


def test_magic_runs_a_namespace_mechanism(ipython_shell):
    ip = ipython_shell
    ip.run_line_magic("load_ext", "smoothdp_nb.magics")
    ip.user_ns["my_rr"] = RR
    ip.run_cell_magic("smoothdp", "-o out --no-chart", 'histogram = [3, 2]\nepsilon = 0.5\nmechanism = "my_rr"\n')
    direct = sdp.privacy_profile(RR, [3, 2], 0.5, log=True)
    assert ip.user_ns["out"].log_delta[0, 0] == direct


@pytest.mark.parametrize(
    ("name", "namespace", "words"),
    [
        ("rx", NS, ["no variable 'rx'", "did you mean 'rr'"]),
        ("three", NS, ["'three' is a int, not a Mechanism", "FiniteMechanism"]),
        ("rr", {}, ["no namespace", "command line", "mechanism = {eta"]),
        ("rr", None, ["no namespace"]),
    ],
)
def test_bad_mechanism_names_are_spec_errors_at_the_key(name, namespace, words):
    text = f'compute = "profile"\nhistogram = [3, 2]\nepsilon = 0.5\nmechanism = "{name}"\n'
    with pytest.raises(SpecError) as info:
        run_spec(text, namespace)
    err = info.value
    assert err.key == "mechanism" and err.line == 4
    for w in words:
        assert w in str(err)


def test_named_mechanism_sizes_are_checked_when_resolved():
    ns = {"big": sdp.SamplingHistogram(T=50)}
    with pytest.raises(SpecError) as info:
        run_spec({"compute": "smoothed", "mechanism": "big", "n": 10, "pi": [[0.5, 0.5]], "epsilon": 1.0}, ns)
    assert info.value.key == "n"


def test_mechanism_must_be_a_table_or_a_name():
    for bad in (3, [1, 2], True, "  "):
        with pytest.raises(SpecError) as info:
            parse_spec({"histogram": [3, 2], "epsilon": 0.5, "mechanism": bad})
        assert info.value.key == "mechanism"
