"""The TOML spec translator: validation errors and the computations it runs."""

import numpy as np
import pandas as pd
import pytest

from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
from smoothdp_nb.core.smoothed.delta import SmoothedCurve, SmoothedResult
from smoothdp_nb.core.smoothed.reports import ProfileResult
from smoothdp_nb.spec import SpecError, parse_spec, run_spec

MECH = "[mechanism]\neta = 0.5\n"


def _err(text, namespace=None):
    with pytest.raises(SpecError) as info:
        run_spec(text, namespace)
    return info.value


def test_profile_inline_histograms_with_labels():
    r = run_spec(
        'compute = "profile"\nhistogram = [[60, 40], [90, 10]]\nlabels = ["a", "b"]\nepsilon = [0.5, 1]\n' + MECH
    )
    assert isinstance(r, ProfileResult)
    df = r.to_frame()
    assert list(df.columns) == ["label", "n", "epsilon", "delta", "log10_delta", "dp_delta"]
    assert len(df) == 4 and set(df["label"]) == {"a", "b"}
    assert np.allclose(df["dp_delta"], 0.5)  # T/n for sampling without replacement
    assert (df["delta"] <= df["dp_delta"] + 1e-12).all()


def test_profile_elections_dataset_matches_core():
    import smoothdp_nb as sdp

    r = run_spec(
        'compute = "profile"\ndataset = "us-elections"\nyears = [2020]\nepsilon = 0.04\nmechanism = {eta = "0.998"}'
    )
    direct = sdp.privacy_profile(
        sdp.SamplingHistogram(eta="0.998"), sdp.datasets.election_histogram(2020), 0.04, log=True
    )
    assert r.labels == (2020,)
    assert r.log_delta[0, 0] == pytest.approx(direct)
    assert "2020" in str(r)


def test_compute_is_inferred_when_unambiguous():
    r = run_spec({"histogram": [5, 5], "epsilon": 0.5, "mechanism": {"T": 2}})
    assert isinstance(r, ProfileResult)


def test_smoothed_exact_and_named_pi():
    r = run_spec('compute = "smoothed"\nn = 60\npi = "us-2020-districts"\nepsilon = [0.5, 1.0]\n' + MECH)
    assert isinstance(r, SmoothedResult)
    assert set(map(str, r.vertex_labels)) == {"DC", "NE-3"}
    hist = run_spec('compute = "smoothed"\nn = 60\npi = "us-elections-history"\nepsilon = 0.5\n' + MECH)
    assert len(hist.vertex_labels) == 2


def test_smoothed_monte_carlo_is_reproducible_with_seed():
    text = (
        'compute = "smoothed"\nmethod = "monte-carlo"\ntrials = 200\nrng = 3\nn = 50\n'
        "pi = [[0.4, 0.6], [0.6, 0.4]]\nepsilon = 0.5\n" + MECH
    )
    a, b = run_spec(text), run_spec(text)
    assert a.method == "monte-carlo" and a.ci_high is not None
    assert a.delta == b.delta


def test_pi_from_namespace():
    pi = np.array([[0.3, 0.7], [0.7, 0.3]])
    r = run_spec('compute = "smoothed"\nn = 40\npi = "my_pi"\nepsilon = 1\n' + MECH, {"my_pi": pi})
    assert r.n == 40


def test_sweep_range_is_integer_unique_and_sorted():
    spec = parse_spec(
        'compute = "sweep"\nn = {start = 10, stop = 12, num = 7}\npi = [[0.4, 0.6]]\nepsilon = 1\n' + MECH
    )
    assert spec.params["ns"] == [10, 11, 12]
    spec = parse_spec(
        'compute = "sweep"\nn = {start = 100, stop = 100000, num = 25, log = true}\n'
        "pi = [[0.4, 0.6]]\nepsilon = 1\n" + MECH
    )
    ns = spec.params["ns"]
    assert ns[0] == 100 and ns[-1] == 100000 and len(ns) == 25 and ns == sorted(set(ns))


def test_sweep_runs_and_uses_an_executor():
    from concurrent.futures import ThreadPoolExecutor

    text = 'compute = "sweep"\nn = [30, 60, 90]\npi = [[0.4, 0.6], [0.6, 0.4]]\nepsilon = [0.5, 1]\n' + MECH
    plain = run_spec(text)
    with ThreadPoolExecutor(2) as ex:
        pooled = run_spec(text, executor=ex)
    assert isinstance(plain, SmoothedCurve)
    pd.testing.assert_frame_equal(plain.table, pooled.table)
    assert (plain.fits["slope"] < 0).all()


def test_release_from_namespace_dataframe():
    df = pd.DataFrame({"income": np.linspace(0, 100, 201)})
    text = 'compute = "release"\ndata = "df"\ncolumn = "income"\nbounds = [0, 100]\nepsilon = 1\nrng = 5\n'
    r = run_spec(text, {"df": df})
    assert isinstance(r, ReleaseReport)
    assert r.release.n == 201 and r.name == "df['income']"
    assert run_spec(text, {"df": df}).value == r.value  # seeded
    assert "true_value" not in r.to_dict()


def test_noise_comparison():
    r = run_spec(
        'compute = "noise"\nepsilon = 1\ngamma = {start = 0.01, stop = 0.3, num = 5}\ndelta = 1e-5\nreference = true'
    )
    assert isinstance(r, NoiseComparison)
    assert set(r.to_frame()["family"]) == {"polyplace", "student_t", "cauchy", "laplace", "laplace_global"}


# ---------------------------------------------------------------- errors


def test_unknown_key_names_key_closest_and_line():
    e = _err('compute = "profile"\ndatset = "us-elections"\nepsilon = 1\n' + MECH)
    assert e.key == "datset" and e.line == 2
    assert "did you mean 'dataset'" in str(e) and "allowed:" in str(e)


def test_unknown_key_in_mechanism_table():
    e = _err('compute = "profile"\nhistogram = [5, 5]\nepsilon = 1\n[mechanism]\neta = 0.5\nreplac = true\n')
    assert e.key == "mechanism.replac" and e.line == 6 and "'replace'" in str(e)


def test_bad_choice_lists_allowed_values():
    e = _err('compute = "smoothed"\nn = 10\npi = [[0.5, 0.5]]\nepsilon = 1\nmethod = "montecarl"\n' + MECH)
    assert e.key == "method" and "'exact', 'monte-carlo'" in str(e) and e.line == 5
    e = _err('compute = "profil"')
    assert "did you mean 'profile'" in str(e)


def test_values_out_of_range():
    assert _err('compute = "profile"\nhistogram = [5, 5]\nepsilon = -1\n' + MECH).key == "epsilon"
    e = _err('compute = "profile"\nhistogram = [5, 5]\nepsilon = 1\nmechanism = {eta = 1.5}')
    assert e.key == "mechanism.eta" and "<= 1" in str(e)
    e = _err('compute = "smoothed"\nn = 10\npi = [[0.5, 0.6]]\nepsilon = 1\n' + MECH)
    assert e.key == "pi[0]" and "sum to 1" in str(e)
    e = _err('compute = "smoothed"\nn = [10, 20]\npi = [[0.5, 0.5]]\nepsilon = 1\n' + MECH)
    assert e.key == "n" and "sweep" in str(e)
    e = _err('compute = "noise"\nepsilon = 1\ngamma = 0.1\n')
    assert e.key == "delta"  # laplace is among the default families


def test_missing_and_unknown_names():
    e = _err(
        'compute = "release"\ndata = "dff"\ncolumn = "x"\nbounds = [0, 1]\nepsilon = 1',
        {"df": pd.DataFrame({"x": [0.5]})},
    )
    assert e.key == "data" and "did you mean 'df'" in str(e) and e.line == 2
    e = _err(
        'compute = "release"\ndata = "df"\ncolumn = "incme"\nbounds = [0, 1]\nepsilon = 1',
        {"df": pd.DataFrame({"income": [0.5]})},
    )
    assert e.key == "column" and "'income'" in str(e)
    e = _err('compute = "smoothed"\nn = 10\npi = "us-2020-district"\nepsilon = 1\n' + MECH)
    assert e.key == "pi" and "us-2020-districts" in str(e)


def test_toml_syntax_error_has_line():
    e = _err('compute = "noise"\nepsilon = \n')
    assert e.line == 2 and "invalid TOML" in str(e)


def test_mc_only_keys_rejected_for_exact():
    e = _err('compute = "smoothed"\nn = 10\npi = [[0.5, 0.5]]\nepsilon = 1\ntrials = 10\n' + MECH)
    assert e.key == "trials" and "monte-carlo" in str(e)


def test_core_constraints_are_spec_errors_at_the_key():
    # T = 50 > n = 10: the core's own check, called by the validator, names the key and its line
    e = _err('compute = "profile"\nhistogram = [5, 5]\nepsilon = 1\nmechanism = {T = 50}')
    assert e.key == "histogram" and e.line == 2 and "T must be <= n" in str(e)


# ---------------------------------------------------------------- result objects (repr, charts)


def _all_results():
    df = pd.DataFrame({"x": np.linspace(0, 10, 51)})
    return [
        run_spec('compute = "profile"\nhistogram = [[60, 40], [90, 10]]\nepsilon = [0.5, 1]\n' + MECH),
        run_spec('compute = "noise"\nepsilon = 1\ngamma = [0.05, 0.1, 0.3]\ndelta = 1e-5\nreference = true'),
        # the noise-density chart of a release is a data-dependent diagnostic: opted in here
        run_spec(
            'compute = "release"\ndata = "df"\ncolumn = "x"\nbounds = [0, 10]\nepsilon = 1\nrng = 1\n'
            "diagnostics = true",
            {"df": df},
        ),
    ]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_result_repr_methods(index):
    import json

    r = _all_results()[index]
    bundle = r._repr_mimebundle_()
    assert bundle["text/plain"] == str(r)
    html = bundle["text/html"]
    assert "<svg" in html and "chart not rendered" not in html and "<script" not in html
    assert "<table" in html
    json.dumps(r.to_dict(), allow_nan=False)
    assert len(r.to_frame()) >= 1
    spec = r.chart().to_dict()
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_profile_chart_has_dp_rule_and_exponent_labels():
    r = _all_results()[0]
    text = str(r.chart().to_dict())
    assert "DP δ" in text and "labelExpr" in text


def test_release_text_never_shows_true_value():
    r = _all_results()[2]
    assert r.release.true_value is None
    assert "NOT covered by the privacy guarantee" in str(r)  # diagnostics opted in: labelled
    df = pd.DataFrame({"x": np.linspace(0, 10, 51)})
    plain = run_spec(
        'compute = "release"\ndata = "df"\ncolumn = "x"\nbounds = [0, 10]\nepsilon = 1\nrng = 1', {"df": df}
    )
    assert plain.release.diagnostics is None and "diagnostic" not in str(plain)
    html = plain._repr_mimebundle_()["text/html"]
    assert "smooth sensitivity" not in html and "noise std" not in html  # no data-dependent numbers by default


def test_core_results_import_is_light():
    import subprocess
    import sys

    code = (
        "import sys, smoothdp_nb.core.smoothed.reports, smoothdp_nb.core.release.reports, smoothdp_nb.spec; "
        "bad = [m for m in ('altair', 'IPython', 'ipywidgets') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_executor_keys_run_and_give_identical_results():
    from smoothdp_nb.spec import run_spec

    base = {
        "compute": "smoothed",
        "mechanism": {"eta": 0.8},
        "n": 60,
        "pi": [[0.2, 0.8], [0.6, 0.4]],
        "epsilon": [0.5, 1.0],
        "method": "monte-carlo",
        "trials": 400,
        "rng": 3,
        "candidates": 4,
    }
    ref = run_spec(base)
    for kind in ("threads", "processes"):
        other = run_spec({**base, "executor": kind, "workers": 2})
        np.testing.assert_array_equal(ref.delta, other.delta)


def test_executor_dask_local_cluster():
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    from smoothdp_nb.spec import run_spec

    base = {
        "compute": "smoothed",
        "mechanism": {"eta": 0.8},
        "n": 40,
        "pi": [[0.2, 0.8], [0.6, 0.4]],
        "epsilon": 1.0,
        "method": "monte-carlo",
        "trials": 200,
        "rng": 5,
        "candidates": 3,
    }
    np.testing.assert_array_equal(run_spec(base).delta, run_spec({**base, "executor": "dask"}).delta)


@pytest.mark.parametrize(
    "extra,key",
    [
        ({"executor": "spark"}, "executor"),
        ({"scheduler": "tcp://x:1"}, "scheduler"),
        ({"executor": "threads", "scheduler": "tcp://x:1"}, "scheduler"),
        ({"executor": "threads", "workers": 0}, "workers"),
    ],
)
def test_executor_key_errors(extra, key):
    from smoothdp_nb.spec import SpecError, parse_spec

    base = {"compute": "smoothed", "mechanism": {"eta": 0.8}, "n": 40, "pi": [[0.2, 0.8], [0.6, 0.4]], "epsilon": 1.0}
    with pytest.raises(SpecError) as err:
        parse_spec({**base, **extra})
    assert err.value.key == key


@pytest.mark.parametrize("as_text", [True, False])
def test_inline_release_data_is_echoed_as_its_count_only(as_text):
    """Reports echo ``Spec.raw`` / ``Spec.text``: neither may carry the values nor any function of
    them beyond the (public) count.  Two neighbouring datasets must give identical echoes, or a
    reader could tell which one was used (a hash prefix did exactly that)."""
    echoes = []
    for values in ([10.0, 20.0, 30.0, 40.0, 50.0], [10.0, 20.0, 31.0, 40.0, 50.0]):
        doc = {"compute": "release", "values": values, "epsilon": 1.0, "bounds": [0, 100], "rng": 1}
        if as_text:
            doc = f'compute = "release"\nvalues = {values}\nepsilon = 1.0\nbounds = [0, 100]\nrng = 1'
        spec = parse_spec(doc)
        assert spec.raw["values"] == "<5 private values, not shown>"
        echo = repr(spec.raw) + (spec.text or "")
        assert "31" not in echo and "20.0" not in echo
        echoes.append(echo)
    assert echoes[0] == echoes[1]
    if as_text:
        assert spec.lines["values"] == 2 and spec.lines["rng"] == 5  # line numbers kept for errors
