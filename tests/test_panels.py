"""Widget panels without a browser: drive the controls, check what the chart receives.

Each test sets control values the way a user would (``slider.value = ...``)
and checks both the panel's record of the chart on screen and the update that
was sent to the browser (the ``JupyterChart`` data channel, or a new chart).
Timings are printed as a benchmark (``pytest -s``), never asserted.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")
alt = pytest.importorskip("altair")

from smoothdp_nb import panels  # noqa: E402
from smoothdp_nb.widgets import LiveChart, _rename_datasets  # noqa: E402


def _timed(label, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"[bench] {label}: {1000 * (time.perf_counter() - t0):.0f} ms")
    return out


def _pushed(panel):
    """The dataset updates last sent through the JupyterChart data channel, by name."""
    return {u["name"]: pd.DataFrame(u["value"]) for u in panel.chart._py_to_js_updates or []}


@pytest.fixture(scope="module")
def smoothed():
    return _timed("smoothed_dp() build", lambda: panels.smoothed_dp(n=500, epsilon_points=8))


# --------------------------------------------------------------------------
# LiveChart
# --------------------------------------------------------------------------


def _line(df):
    return alt.Chart(df).mark_line().encode(x="a:Q", y="b:Q")


def test_rename_datasets_gives_stable_names():
    a = _line(pd.DataFrame({"a": [1, 2], "b": [3, 4]})).to_dict()
    b = _line(pd.DataFrame({"a": [1, 2], "b": [5, 6]})).to_dict()
    ska, da = _rename_datasets(a)
    skb, db = _rename_datasets(b)
    assert ska == skb and "datasets" not in ska
    assert list(da) == ["panel_0"] and da["panel_0"] != db["panel_0"]


def test_live_chart_pushes_data_in_place_and_reembeds_on_structure_change():
    live = LiveChart(_line(pd.DataFrame({"a": [1, 2], "b": [3, 4]})))
    jc = live.jupyter_chart
    spec_before = jc.spec
    assert live.update(_line(pd.DataFrame({"a": [1, 2], "b": [3, 9]}))) == "data"
    assert jc.spec == spec_before  # the widget's spec untouched: no re-embedding
    assert jc._py_to_js_updates == [
        {"namespace": "data", "name": "panel_0", "scope": [], "value": [{"a": 1, "b": 3}, {"a": 2, "b": 9}]}
    ]
    assert live.current_spec()["datasets"]["panel_0"][1]["b"] == 9
    assert live.update(_line(pd.DataFrame({"a": [1, 2], "b": [3, 9]}))) == "same"
    bar = alt.Chart(pd.DataFrame({"a": [1], "b": [2]})).mark_bar().encode(x="a:Q", y="b:Q")
    assert live.update(bar) == "chart"
    assert jc.spec["mark"]["type"] == "bar" and (live.pushes, live.embeds) == (1, 2)
    # after pushes, a new display first brings the widget's own spec up to date
    live.update(alt.Chart(pd.DataFrame({"a": [1], "b": [7]})).mark_bar().encode(x="a:Q", y="b:Q"))
    live.sync()
    assert jc.chart.to_dict()["datasets"]["panel_0"] == [{"a": 1, "b": 7}]


def test_offline_javascript_bundled():
    from smoothdp_nb.widgets import enable_offline

    assert enable_offline() is True
    assert "esm.sh" not in alt.JupyterChart._esm  # no CDN import left


# --------------------------------------------------------------------------
# smoothed DP panel
# --------------------------------------------------------------------------


def test_smoothed_panel_structure(smoothed):
    assert isinstance(smoothed.chart, alt.JupyterChart)
    assert smoothed.controls in smoothed.widget.children and smoothed.chart in smoothed.widget.children
    bundle = smoothed._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert smoothed.widget.model_id in json.dumps(bundle["application/vnd.jupyter.widget-view+json"])
    line = smoothed.chart_data(0)
    assert len(line) == 8 and line["epsilon"].min() == pytest.approx(0.05) and line["epsilon"].max() == pytest.approx(2.0)


def test_smoothed_panel_eps_range_updates_in_place(smoothed):
    embeds = smoothed.live.embeds
    how = _timed("smoothed: epsilon range", lambda: setattr(smoothed.epsilon, "value", (0.5, 1.5)))
    assert how is None
    sent = _pushed(smoothed)["panel_0"]
    assert sent["epsilon"].min() == pytest.approx(0.5) and sent["epsilon"].max() == pytest.approx(1.5)
    assert smoothed.live.embeds == embeds  # data only
    assert smoothed.last_error is None


def test_smoothed_panel_n_and_eta_change_delta(smoothed):
    before = smoothed.chart_data(0)["log10_delta"].to_numpy()
    _timed("smoothed: n 500 -> 1000", lambda: setattr(smoothed.n, "value", 1000))
    after_n = smoothed.chart_data(0)["log10_delta"].to_numpy()
    assert smoothed.result.n == 1000
    assert np.all(after_n < before)  # more records, smaller smoothed delta
    _timed("smoothed: eta 0.998 -> 0.9", lambda: setattr(smoothed.eta, "value", 0.9))
    assert smoothed.result.mechanism.eta == pytest.approx(0.9)
    # the DP reference rule follows eta (T/n)
    rule = smoothed.chart_data(1)
    assert rule["log10_delta"].iloc[0] == pytest.approx(np.log10(0.9))


def test_smoothed_panel_pi_controls(smoothed):
    smoothed.pi.value = (0.3, 0.7)
    wide = smoothed.chart_data(0)["log10_delta"].to_numpy()
    smoothed.pi.value = (0.49, 0.51)
    narrow = smoothed.chart_data(0)["log10_delta"].to_numpy()
    assert np.all(narrow <= wide + 1e-9)  # Pi a subset: the maximum over it cannot be larger
    assert not np.allclose(narrow, wide)
    smoothed.pi_kind.value = "us-2020-districts"
    assert smoothed.pi.disabled and smoothed.result.vertices.shape == (2, 2)
    smoothed.pi_kind.value = "interval"
    assert not smoothed.pi.disabled


def test_smoothed_panel_falls_back_to_monte_carlo_within_budget():
    panel = panels.smoothed_dp(n=500, epsilon_points=4, trials=50)
    t0 = time.perf_counter()
    panel.n.value = 60_000
    seconds = time.perf_counter() - t0
    print(f"[bench] smoothed: n = 60000 (auto -> Monte Carlo): {1000 * seconds:.0f} ms")
    assert panel.result.method == "monte-carlo"
    assert "Monte Carlo" in panel.status.value
    spec = panel.chart_spec()
    assert any(layer["mark"]["type"] == "area" for layer in spec["layer"])  # confidence band
    panel.method.value = "exact"  # refused up front by the budget: message, previous chart kept
    assert panel.last_error and "ComputationTooLarge" in panel.last_error
    assert panel.result.method == "monte-carlo"


# --------------------------------------------------------------------------
# elections
# --------------------------------------------------------------------------


def test_election_panel():
    panel = _timed("election() build", panels.election)
    data = panel.chart_data(0)
    assert set(data["year"]) == set(range(1920, 2021, 4))
    assert sorted(data["epsilon"].unique()) == pytest.approx([0.5, 1.25, 2.0])
    _timed("election: epsilon range", lambda: setattr(panel.epsilon, "value", (1.0, 3.0)))
    sent = _pushed(panel)["panel_0"]
    assert sorted(sent["epsilon"].unique()) == pytest.approx([1.0, 2.0, 3.0])
    before = panel.chart_data(0).set_index(["year", "epsilon"])["log10_delta"]
    _timed("election: eta 0.998 -> 0.99", lambda: setattr(panel.eta, "value", 0.99))
    after = panel.chart_data(0).set_index(["year", "epsilon"])["log10_delta"]
    assert (after < before).all()  # less sampling, more privacy
    embeds = panel.live.embeds
    panel.view.value = "epsilon"
    assert panel.live.embeds == embeds + 1  # a different chart: replaced as a whole
    assert panel.chart.chart.to_dict()["layer"][0]["encoding"]["x"]["field"] == "epsilon"
    panel.replace.value = True
    assert panel.last_error is None


def test_election_panel_caches_exact_columns():
    panel = panels.election()
    calls = panel.core_calls
    full = panel.chart_data(0).set_index(["year", "epsilon"])["log10_delta"]
    _timed("election: eta 0.998 -> 0.99 (uncached)", lambda: setattr(panel.eta, "value", 0.99))
    _timed("election: eta 0.99 -> 0.998 (cached)", lambda: setattr(panel.eta, "value", 0.998))
    assert panel.core_calls == calls + 1  # the way back costs no core call
    again = panel.chart_data(0).set_index(["year", "epsilon"])["log10_delta"]
    pd.testing.assert_series_equal(again, full)
    _timed("election: view per epsilon (cached)", lambda: setattr(panel.view, "value", "epsilon"))
    assert panel.core_calls == calls + 1
    # an epsilon range change computes only the new epsilon values; cached and fresh columns agree exactly
    panel.epsilon.value = (0.5, 3.5)  # grid 0.5, 2.0, 3.5: 0.5 and 2.0 cached
    assert panel.core_calls == calls + 2
    fresh = panels.election(epsilon=(0.5, 3.5)).chart_data(0).set_index(["year", "epsilon"])["log10_delta"]
    pd.testing.assert_series_equal(panel.chart_data(0).set_index(["year", "epsilon"])["log10_delta"], fresh)


def test_election_panel_coarse_grid_then_full_in_event_loop():
    import asyncio

    panel = panels.election(refine_delay=0.05)

    async def drag():
        t0 = time.perf_counter()
        panel.eta.value = 0.95  # as a kernel handles a widget message: inside the running loop
        first = time.perf_counter() - t0
        coarse = (panel.coarse, sorted(panel.chart_data(0)["epsilon"].unique()), panel.status.value)
        panel.eta.value = 0.951  # dragging on: the refinement is postponed
        assert panel.coarse
        await asyncio.sleep(0.5)
        return first, coarse

    first, (was_coarse, coarse_eps, status) = asyncio.run(drag())
    print(f"[bench] election: first (coarse) response {1000 * first:.0f} ms; "
          f"full grid last took {1000 * panel.last_seconds:.0f} ms")
    assert was_coarse and coarse_eps == pytest.approx([0.5]) and "coarse grid (1 of 3" in status
    assert not panel.coarse and "refining" not in panel.status.value
    assert sorted(panel.chart_data(0)["epsilon"].unique()) == pytest.approx([0.5, 1.25, 2.0])
    assert panel.eta.value == pytest.approx(0.951)
    exact = panels.election(eta=0.951).chart_data(0).set_index(["year", "epsilon"])["log10_delta"]
    pd.testing.assert_series_equal(panel.chart_data(0).set_index(["year", "epsilon"])["log10_delta"], exact)


# --------------------------------------------------------------------------
# noise comparison
# --------------------------------------------------------------------------


def test_noise_comparison_panel():
    panel = _timed("noise_comparison() build", panels.noise_comparison)
    data = panel.chart_data(0)
    assert {"polyplace", "laplace", "laplace_global"} <= set(data["family"])
    assert data["gamma"].max() < 1.0
    _timed("noise: epsilon 1 -> 2", lambda: setattr(panel.epsilon, "value", 2.0))
    sent = _pushed(panel)["panel_0"]
    assert sent["gamma"].max() > 1.0 and sent["gamma"].max() < 2.0
    glob = sent[sent["family"] == "laplace_global"]["std"]
    assert glob.to_numpy() == pytest.approx(np.sqrt(2) / 2.0)
    panel.families.value = ("cauchy",)
    assert set(panel.chart_data(0)["family"]) == {"cauchy", "laplace_global"}
    panel.gamma.value = 0.2
    marker = panel.chart_data(1)
    assert marker["gamma"].iloc[0] == pytest.approx(0.2)
    assert "generalized Cauchy" in panel.status.value
    panel.families.value = ()
    panel.reference.value = False
    assert panel.last_error and "at least one" in panel.last_error


# --------------------------------------------------------------------------
# release
# --------------------------------------------------------------------------


@pytest.fixture()
def income():
    rng = np.random.default_rng(7)
    return pd.Series(rng.lognormal(10, 0.5, 2000), name="income")


def _all_text(panel) -> str:
    """Everything the panel shows: status, chart spec and data, widget labels."""
    parts = [panel.status.value, json.dumps(panel.chart_spec()), json.dumps(panel.chart.spec)]
    parts += [str(getattr(c, "description", "")) for c in panel.controls.children]
    return " ".join(parts)


def test_release_panel_hides_true_value(income):
    true = float(np.sort(income.to_numpy())[(len(income) + 1) // 2 - 1])  # lower median
    panel = _timed("release() build", lambda: panels.release(income, bounds=(0, 200_000)))
    assert panel.current is None and "nothing released" in panel.status.value
    rel = _timed("release: draw", lambda: panel.draw(rng=1))
    assert rel.true_value is None
    marks = panel.chart_data(1)
    assert list(marks["label"]) == ["released value"]
    assert marks["x"].iloc[0] == pytest.approx(rel.value)
    text = _all_text(panel)
    for shown in (f"{true:.6g}", repr(true), f"{true:.4g}"):
        assert shown not in text
    # changing settings redraws the noise density, never a new noisy value
    panel.epsilon.value = 2.0
    assert len(panel.releases) == 1 and "earlier settings" in panel.chart_data(1)["label"].iloc[0]
    # reveal: the true value appears, in the chart only while ticked
    panel.reveal.value = True
    marks = panel.chart_data(1)
    assert marks.set_index("label")["x"]["true value"] == pytest.approx(true)
    panel.reveal.value = False
    assert "true value" not in set(panel.chart_data(1)["label"])
    assert repr(true) not in json.dumps(panel.chart_spec())
    panel.draw(rng=2)
    assert "2 release(s), ε spent 3" in panel.status.value


def test_release_panel_controls(income):
    panel = panels.release(income, bounds=(0, 200_000))
    density = panel.chart_data(0)
    width = density["x"].max() - density["x"].min()
    panel.epsilon.value = 4.0
    narrower = panel.chart_data(0)
    assert narrower["x"].max() - narrower["x"].min() < width
    panel.noise.value = "laplace"
    assert panel.last_error is None and "δ" in panel.controls.children[5].description
    panel.auto_gamma.value = False
    assert not panel.gamma.disabled
    panel.gamma.value = 3.9  # beyond Laplace's admissible range: the core's message is shown
    assert panel.last_error is not None and "gamma" in panel.last_error
    panel.noise.value = "polyplace"
    assert panel.last_error is None
    panel.query.value = "mean"
    assert "mean of income" in json.dumps(panel.chart.chart.to_dict()["title"])  # new title: new chart


def test_release_panel_warns_about_data_bounds(income):
    panel = panels.release(income)
    assert panel.bounds_from_data and "not private" in panel.status.value
