"""Live panels: the live chart, decimal controls, and each panel driven from Python.

The browser side (the same panels rendered in Voila and driven by mouse and
keyboard) is tests/browser/test_browser_voila.py.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import smoothdp_nb as sdp

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")
alt = pytest.importorskip("altair")
vlc = pytest.importorskip("vl_convert")

from smoothdp_nb import display, panels
from smoothdp_nb.core.smoothed.engines.cost import estimate_exact_seconds
from smoothdp_nb.display.results import monte_carlo_note, public_note
from smoothdp_nb.panels import base
from smoothdp_nb.panels.base import snap, snap_log
from smoothdp_nb.panels.live import LiveChart, PanelChart, enable_offline, rename_datasets


def _timed(label, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"[bench] {label}: {1000 * (time.perf_counter() - t0):.0f} ms")
    return out


def _pushed(panel, mark: str = "line") -> pd.DataFrame:
    """The rows of the ``mark`` layer last sent through the chart's data channel."""
    sent = panel.chart._live_rows
    assert panel.layer_name(mark) in sent["changed"]
    return pd.DataFrame(sent["data"][panel.layer_name(mark)])


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
    ska, da = rename_datasets(a)
    skb, db = rename_datasets(b)
    assert ska == skb and "datasets" not in ska
    assert list(da) == ["panel_0"] and da["panel_0"] != db["panel_0"]


def test_live_chart_pushes_data_in_place_and_reembeds_on_structure_change():
    live = LiveChart(_line(pd.DataFrame({"a": [1, 2], "b": [3, 4]})))
    jc = live.jupyter_chart
    spec_before = jc.spec
    assert live.update(_line(pd.DataFrame({"a": [1, 2], "b": [3, 9]}))) == "data"
    assert jc.spec == spec_before  # the widget's spec untouched: no re-embedding
    assert jc._live_rows == {
        "seq": 1,
        "changed": ["panel_0"],
        "data": {"panel_0": [{"a": 1, "b": 3}, {"a": 2, "b": 9}]},
    }
    assert live.current_spec()["datasets"]["panel_0"][1]["b"] == 9
    assert live.update(_line(pd.DataFrame({"a": [1, 2], "b": [3, 9]}))) == "same"
    bar = alt.Chart(pd.DataFrame({"a": [1], "b": [2]})).mark_bar().encode(x="a:Q", y="b:Q")
    assert live.update(bar) == "chart"
    # a new structure: a new widget in the same box, the old one closed (no stale view listening)
    assert live.jupyter_chart is not jc and live.box.children == (live.jupyter_chart,) and jc.comm is None
    assert live.jupyter_chart.spec["mark"]["type"] == "bar" and (live.pushes, live.embeds) == (1, 2)
    # after pushes the widget keeps its spec; the rows travel in its state, which every view applies
    jc = live.jupyter_chart
    live.update(alt.Chart(pd.DataFrame({"a": [1], "b": [7]})).mark_bar().encode(x="a:Q", y="b:Q"))
    assert live.jupyter_chart is jc and jc._live_rows["data"]["panel_0"] == [{"a": 1, "b": 7}]
    assert jc.current_chart().to_dict()["datasets"]["panel_0"] == [{"a": 1, "b": 7}]


def test_offline_javascript_bundled():
    assert enable_offline() is True
    assert "esm.sh" not in PanelChart._esm  # no CDN import left
    assert "_live_rows" in PanelChart._esm  # our front end, bundled
    # the colours the front end swaps for the notebook theme's are the builders' ink colours
    source = (Path(panels.live.__file__).with_name("live.js")).read_text()
    assert f'const INK = "{display.style.INK}"' in source and f'const SOFT = "{display.style.SOFT}"' in source


# --------------------------------------------------------------------------
# smoothed DP panel
# --------------------------------------------------------------------------


def test_smoothed_panel_structure(smoothed):
    assert isinstance(smoothed.chart, alt.JupyterChart)
    assert smoothed.controls in smoothed.widget.children and smoothed.chart in smoothed.live.box.children
    assert smoothed.live.box in smoothed.widget.children
    bundle = smoothed._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert smoothed.widget.model_id in json.dumps(bundle["application/vnd.jupyter.widget-view+json"])
    line = smoothed.chart_frame("line")
    assert (
        len(line) == 8 and line["epsilon"].min() == pytest.approx(0.05) and line["epsilon"].max() == pytest.approx(2.0)
    )


def test_smoothed_panel_eps_range_updates_in_place(smoothed):
    embeds = smoothed.live.embeds
    how = _timed("smoothed: epsilon range", lambda: setattr(smoothed.epsilon, "value", (0.5, 1.5)))
    assert how is None
    sent = _pushed(smoothed)
    assert sent["epsilon"].min() == pytest.approx(0.5) and sent["epsilon"].max() == pytest.approx(1.5)
    assert smoothed.live.embeds == embeds  # data only
    assert smoothed.last_error is None


def test_smoothed_panel_n_and_eta_change_delta(smoothed):
    before = smoothed.chart_frame("line")["log10_delta"].to_numpy()
    _timed("smoothed: n 500 -> 1000", lambda: setattr(smoothed.n, "value", 1000))
    after_n = smoothed.chart_frame("line")["log10_delta"].to_numpy()
    assert smoothed.result.n == 1000
    assert np.all(after_n < before)  # more records, smaller smoothed delta
    _timed("smoothed: eta 0.998 -> 0.9", lambda: setattr(smoothed.eta, "value", 0.9))
    assert smoothed.result.mechanism.eta == pytest.approx(0.9)
    # the DP reference rule follows eta (T/n)
    rule = smoothed.chart_frame("rule")
    assert rule["log10_delta"].iloc[0] == pytest.approx(np.log10(0.9))


def test_smoothed_panel_pi_controls(smoothed):
    smoothed.pi.value = (0.3, 0.7)
    wide = smoothed.chart_frame("line")["log10_delta"].to_numpy()
    smoothed.pi.value = (0.49, 0.51)
    narrow = smoothed.chart_frame("line")["log10_delta"].to_numpy()
    assert np.all(narrow <= wide + 1e-9)  # Pi a subset: the maximum over it cannot be larger
    assert not np.allclose(narrow, wide)
    smoothed.pi_kind.value = "us-2020-districts"
    assert smoothed.pi.disabled and smoothed.result.vertices.shape == (2, 2)
    smoothed.pi_kind.value = "interval"
    assert not smoothed.pi.disabled


def test_smoothed_panel_falls_back_to_monte_carlo_within_budget():
    panel = panels.smoothed_dp(n=500, epsilon_points=4, trials=50, budget=0.02)  # exact: 20 x budget = 0.4 s
    t0 = time.perf_counter()
    panel.n.value = 60_000
    seconds = time.perf_counter() - t0
    print(f"[bench] smoothed: n = 60000 (auto -> Monte Carlo): {1000 * seconds:.0f} ms")
    assert panel.result.method == "monte-carlo"
    assert "Monte Carlo" in panel.status.value
    notes = panel.chart_frame("text")  # the DP label, then the note
    assert any("Monte Carlo" in str(v) for v in notes.to_numpy().ravel()) or "Monte Carlo" in json.dumps(
        panel.chart_spec(), ensure_ascii=False
    )
    panel.method.value = "exact"  # refused up front by the budget: message, previous chart kept
    assert panel.last_error and "ComputationTooLarge" in panel.last_error
    assert panel.result.method == "monte-carlo"


def test_smoothed_panel_takes_a_user_mechanism():
    # randomized response on the count of category 0, as a FiniteMechanism (panels work for any mechanism)
    keep = 0.75

    def rr(hist):
        a, b = hist
        return {
            "yes": keep * a / (a + b) + (1 - keep) * b / (a + b),
            "no": keep * b / (a + b) + (1 - keep) * a / (a + b),
        }

    mech = sdp.FiniteMechanism(rr, categories=2, name="randomized response")
    panel = panels.smoothed_dp(n=20, epsilon_points=3, mechanism=mech)
    assert panel.eta.disabled and panel.result.mechanism is mech
    want = sdp.smoothed_delta(mech, 20, panel.pi_matrix(), panel.epsilon_grid())
    assert np.allclose(panel.result.log_delta, want.log_delta, rtol=1e-12)
    assert "randomized response" in panel.status.value
    panel.n.value = 30
    assert panel.result.n == 30 and panel.last_error is None
    with pytest.raises(ValueError, match="two categories"):
        panels.smoothed_dp(mechanism=sdp.FiniteMechanism(lambda h: {0: 1.0}, categories=3))
    with pytest.raises(TypeError, match="Mechanism"):
        panels.smoothed_dp(mechanism="rr")


# --------------------------------------------------------------------------
# elections
# --------------------------------------------------------------------------


def test_election_panel():
    panel = _timed("election() build", panels.election)
    data = panel.chart_frame("line")
    assert set(data["year"]) == set(range(1920, 2021, 4))
    assert sorted(data["epsilon"].unique()) == pytest.approx([0.5, 1.25, 2.0])
    _timed("election: epsilon range", lambda: setattr(panel.epsilon, "value", (1.0, 3.0)))
    sent = _pushed(panel)
    assert sorted(sent["epsilon"].unique()) == pytest.approx([1.0, 2.0, 3.0])
    before = panel.chart_frame("line").set_index(["year", "epsilon"])["log10_delta"]
    _timed("election: eta 0.998 -> 0.99", lambda: setattr(panel.eta, "value", 0.99))
    after = panel.chart_frame("line").set_index(["year", "epsilon"])["log10_delta"]
    assert (after < before).all()  # less sampling, more privacy
    embeds = panel.live.embeds
    panel.view.value = "epsilon"
    assert panel.live.embeds == embeds + 1  # a different chart: replaced as a whole
    assert panel.chart.chart.to_dict()["layer"][1]["encoding"]["x"]["field"] == "epsilon"
    panel.replace.value = True
    assert panel.last_error is None


def test_election_panel_caches_exact_columns():
    panel = panels.election()
    calls = panel.core_calls
    full = panel.chart_frame("line").set_index(["year", "epsilon"])["log10_delta"]
    _timed("election: eta 0.998 -> 0.99 (uncached)", lambda: setattr(panel.eta, "value", 0.99))
    _timed("election: eta 0.99 -> 0.998 (cached)", lambda: setattr(panel.eta, "value", 0.998))
    assert panel.core_calls == calls + 1  # the way back costs no core call
    again = panel.chart_frame("line").set_index(["year", "epsilon"])["log10_delta"]
    pd.testing.assert_series_equal(again, full)
    _timed("election: view per epsilon (cached)", lambda: setattr(panel.view, "value", "epsilon"))
    assert panel.core_calls == calls + 1
    # an epsilon range change computes only the new epsilon values; cached and fresh columns agree exactly
    panel.epsilon.value = (0.5, 3.5)  # grid 0.5, 2.0, 3.5: 0.5 and 2.0 cached
    assert panel.core_calls == calls + 2
    fresh = panels.election(epsilon=(0.5, 3.5)).chart_frame("line").set_index(["year", "epsilon"])["log10_delta"]
    pd.testing.assert_series_equal(panel.chart_frame("line").set_index(["year", "epsilon"])["log10_delta"], fresh)


def test_election_panel_coarse_grid_then_full_in_event_loop():
    import asyncio

    panel = panels.election(refine_delay=0.05)

    async def drag():
        t0 = time.perf_counter()
        panel.eta.value = 0.95  # as a kernel handles a widget message: inside the running loop
        first = time.perf_counter() - t0
        coarse = (panel.coarse, sorted(panel.chart_frame("line")["epsilon"].unique()), panel.status.value)
        panel.eta.value = 0.951  # dragging on: the refinement is postponed
        assert panel.coarse
        await asyncio.sleep(0.5)
        return first, coarse

    first, (was_coarse, coarse_eps, status) = asyncio.run(drag())
    print(
        f"[bench] election: first (coarse) response {1000 * first:.0f} ms; "
        f"full grid last took {1000 * panel.last_seconds:.0f} ms"
    )
    assert was_coarse and coarse_eps == pytest.approx([0.5]) and "coarse grid (1 of 3" in status
    assert not panel.coarse and "refining" not in panel.status.value
    assert sorted(panel.chart_frame("line")["epsilon"].unique()) == pytest.approx([0.5, 1.25, 2.0])
    assert panel.eta.value == pytest.approx(0.951)
    exact = panels.election(eta=0.951).chart_frame("line").set_index(["year", "epsilon"])["log10_delta"]
    pd.testing.assert_series_equal(panel.chart_frame("line").set_index(["year", "epsilon"])["log10_delta"], exact)


# --------------------------------------------------------------------------
# noise comparison
# --------------------------------------------------------------------------


def test_noise_comparison_panel():
    panel = _timed("noise_comparison() build", panels.noise_comparison)
    data = panel.chart_frame("line")
    assert {"polyplace", "laplace", "laplace_global"} <= set(data["family"])
    assert data["gamma"].max() < 1.0
    _timed("noise: epsilon 1 -> 2", lambda: setattr(panel.epsilon, "value", 2.0))
    sent = _pushed(panel)
    assert sent["gamma"].max() > 1.0 and sent["gamma"].max() < 2.0
    glob = sent[sent["family"] == "laplace_global"]["std"]
    assert glob.to_numpy() == pytest.approx(np.sqrt(2) / 2.0)
    panel.families.value = ("cauchy",)
    assert set(panel.chart_frame("line")["family"]) == {"cauchy", "laplace_global"}
    panel.gamma.value = 0.2
    marker = panel.chart_frame("point")
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


def _svg_size(spec: dict) -> tuple[float, float]:
    svg = vlc.vegalite_to_svg(spec)
    w, h = re.search(r'<svg[^>]*width="([\d.]+)"[^>]*height="([\d.]+)"', svg).groups()
    return float(w), float(h)


def test_release_panel_usable_before_the_first_release(income):
    panel = _timed("release() build", lambda: panels.release(income, bounds=(0, 200_000)))
    assert panel.current is None and "nothing released" in panel.status.value
    w, h = _svg_size(panel.chart_spec())  # not 1.797e308 px (an empty layer without a domain)
    assert 200 < w < 2000 and 100 < h < 2000, (w, h)
    assert panel.button in panel.controls.children and not panel.button.disabled
    assert '"legend": null' in json.dumps(panel.live.skeleton)  # no legend entry for nothing drawn
    panel.draw(rng=1)
    assert panel.chart_frame("point")["value"].tolist() == [panel.current.value]
    panel.draw(rng=2)  # the legend gains "earlier releases"
    assert "earlier releases" in json.dumps(panel.live.skeleton)
    embeds = panel.live.embeds
    panel.draw(rng=3)
    assert panel.live.embeds == embeds  # later releases arrive through the data channel
    assert panel.chart_frame("point")["value"].tolist() == [r.value for r in panel.releases]


def test_release_panel_shows_public_numbers_only(income):
    true = float(np.sort(income.to_numpy())[(len(income) + 1) // 2 - 1])  # lower median
    panel = panels.release(income, bounds=(0, 200_000))
    rel = _timed("release: draw", lambda: panel.draw(rng=1))
    assert rel.true_value is None
    assert "area" not in json.dumps(panel.live.skeleton)  # no noise density by default
    text = _all_text(panel)
    for shown in (f"{true:.6g}", repr(true), f"{true:.4g}"):
        assert shown not in text
    assert "noise std" not in panel.status.value
    # settings changes never draw a new noisy value
    panel.epsilon.value = 2.0
    assert len(panel.releases) == 1
    # diagnostics: the density appears, labelled as data-dependent, and goes away again
    panel.diagnostics.value = True
    assert "data-dependent: not covered by the privacy guarantee" in json.dumps(panel.chart_spec(), ensure_ascii=False)
    dens = panel.chart_frame("area")
    assert len(dens) > 100 and (dens["density"] > 0).all()
    assert "noise std" in panel.status.value and "data-dependent" in panel.status.value
    panel.diagnostics.value = False
    assert "area" not in json.dumps(panel.live.skeleton) and "noise std" not in panel.status.value
    # reveal: the true value appears only while ticked
    panel.reveal.value = True
    truth = [lay for lay in panel.chart_spec()["layer"] if lay["mark"]["type"] == "rule"]
    values = [r["value"] for lay in truth for r in panel.live.data[lay["data"]["name"]]]
    assert any(v == pytest.approx(true) for v in values)
    panel.reveal.value = False
    assert repr(true) not in json.dumps(panel.chart_spec())
    panel.draw(rng=2)
    assert "2 release(s)" in panel.status.value and "spent ε=3, δ=0, remaining ε=7" in panel.status.value
    pts = panel.chart_frame("point")
    assert list(pts["which"]) == ["earlier releases", "latest release"]


def test_release_panel_spends_a_shared_budget_and_refuses_beyond_it(income):
    odo = sdp.PrivacyOdometer(2.0)
    odo.release(income.to_numpy(), "mean", 0.5, bounds=(0, 200_000), rng=0)  # a release made in code
    panel = panels.release(income, bounds=(0, 200_000), budget=odo)
    assert "spent ε=0.5, remaining ε=1.5" in panel.status.value
    assert "would bring the total to ε=1.5" in panel.status.value and not panel.button.disabled
    panel.draw(rng=1)
    assert odo.spent.epsilon == 1.5 and len(odo) == 2 and odo.log[1]["value"] == panel.current.value
    panel.epsilon.value = 1.0  # 1.5 + 1 > 2: the button is disabled and the status says why
    assert panel.button.disabled and "would exceed the budget" in panel.status.value
    panel._click()  # a click that reaches the panel anyway is refused before the data is read
    assert panel.last_error is not None and "BudgetExceeded" in panel.last_error
    assert len(panel.releases) == 1 and odo.spent.epsilon == 1.5
    with pytest.raises(sdp.BudgetExceeded):
        panel.draw(rng=2)
    panel.epsilon.value = 0.5
    assert not panel.button.disabled
    assert panels.release(income, bounds=(0, 200_000), budget=3.0).odometer.budget == (3.0, 0.0)
    with pytest.raises(TypeError, match="budget"):
        panels.release(income, bounds=(0, 200_000), budget="all")


def test_release_panel_controls(income):
    panel = panels.release(income, bounds=(0, 200_000))
    panel.noise.value = "laplace"
    assert panel.last_error is None and "δ" in panel.delta.description
    panel.delta.value = 3.1622776601683795e-07  # a log slider position: snapped to its readout's digits
    assert panel.delta.value == 3.16e-07
    panel.auto_gamma.value = False
    assert not panel.gamma.disabled
    panel.gamma.value = 3.9  # beyond Laplace's admissible range: the core's message is shown
    assert panel.last_error is not None and "gamma" in panel.last_error
    panel.noise.value = "polyplace"
    assert "polyplace" in panel.last_error  # still out of range for PolyPlace (gamma < epsilon)
    panel.gamma.value = 0.1
    assert panel.last_error is None and panel.gamma.value == 0.1
    panel.query.value = "mean"
    assert "mean of income" in json.dumps(panel.chart.chart.to_dict()["title"])  # new title: new chart
    panel.draw(rng=3)
    assert panel.current.query == "mean" and panel.current.epsilon == 1.0


def test_release_panel_requires_public_bounds(income):
    """Bounds read off the data would be published beside an unqualified "ε-DP"."""
    with pytest.raises(TypeError, match="bounds is required"):
        panels.release(income)
    with pytest.raises(ValueError, match="bounds"):
        panels.release(income, bounds=(5, 5))


def test_release_panel_missing_records_are_refused_or_counted_as_a_public_value():
    """Dropping missing records silently made n the count of the others (data-dependent) and published
    it; now they are refused, naming the first one's position only, or replaced by a public value."""
    x = pd.Series([0.2, np.nan, 0.4, None, 0.9], name="share")
    with pytest.raises(ValueError) as err:
        panels.release(x, bounds=(0, 1))
    assert str(err.value).startswith("series[1] is missing: pass missing=")
    assert "2" not in str(err.value).split("missing:", 1)[0]  # not the number of missing records
    panel = panels.release(x, bounds=(0, 1), missing=0.0)
    rel = panel.draw(rng=1)
    assert rel.n == 5 and rel.to_dict()["n"] == 5  # every record, a public number
    assert "missing records count as 0" in panel.status.value
    # the release equals one on the data with the public value put in by hand
    same = sdp.release([0.2, 0.0, 0.4, 0.0, 0.9], **{**panel.params(), "rng": 1})
    assert same.value == rel.value
    with pytest.raises(ValueError, match="missing"):
        panels.release(x, bounds=(0, 1), missing=2.0)  # outside the bounds
    with pytest.raises(ValueError, match="series"):
        panels.release(pd.Series([], dtype=float), bounds=(0, 1))


# --------------------------------------------------------------------------
# rows only: the figure path shows what the builder draws
# --------------------------------------------------------------------------


def _assert_shows_builder(panel, chart) -> None:
    """The spec on screen (skeleton built once + rows sent since) is the builder's spec for this state."""
    skeleton, data = rename_datasets(chart.to_dict(validate=False))
    assert panel.live.skeleton == skeleton
    assert panel.live.data == data


def _smoothed_builder(p):
    return display.delta_vs_epsilon_chart(
        p.result.to_frame(), title="Smoothed δ against ε (dashed: DP δ)", note=monte_carlo_note(p.result)
    )


def _election_builder(p):
    return display.profile_chart(
        p.frame, x=p.view.value, title=f"Privacy profile {display.PROFILE} per election (dashed: DP δ)"
    )


def _noise_builder(p):
    g = float(p.gamma.value)
    return display.noise_chart(p.frame, gamma=g if g < p.epsilon.value else None, title="Noise std against γ")


def _release_builder(p):
    params = p.params()
    return display.release_chart(
        p.releases,
        p.bounds,
        name=str(p.name),
        query=params["query"],
        note=public_note(p.current) if p.current is not None else "nothing released yet: press Release",
        true_value=p._true,
        density=p._density(params) if p.diagnostics.value else None,
    )


# (control, new value, True when the move keeps the chart's shape: rows only, no Altair chart built)
_MOVES = {
    "smoothed": [
        ("eta", 0.95, True),
        ("n", 700, True),
        ("epsilon", (0.3, 1.7), True),
        ("pi", (0.4, 0.52), True),
        ("method", "monte-carlo", True),  # the Monte Carlo note and band are rows too
        ("pi_kind", "us-2020-districts", False),  # the tooltips name the hull vertices (n_7, n_55)
        ("method", "exact", True),
    ],
    "election": [
        ("eta", 0.95, True),
        ("epsilon", (1.0, 3.0), True),
        ("replace", True, True),
        ("view", "epsilon", False),
        ("eta", 0.99, True),
    ],
    "noise": [
        ("epsilon", 2.0, True),
        ("gamma", 0.3, True),
        ("delta", 1e-8, True),
        ("gamma", 3.0, True),  # beyond epsilon: the marker's rows go away, the layer stays
        ("families", ("cauchy", "polyplace"), False),  # a new colour domain: a new chart
        ("reference", False, False),
        ("epsilon", 0.5, True),
    ],
    "release": [
        ("draw", 1, False),  # the legend gains "latest release": a new chart
        ("epsilon", 2.0, True),
        ("reveal", True, False),  # ... and "true value"
        ("draw", 2, False),  # ... and "earlier releases"
        ("diagnostics", True, False),  # the density on top: a new chart
        ("noise", "student_t", True),
        ("draw", 3, True),
        ("query", "mean", True),  # the axis names the releases' statistic (median) until a mean is released
        ("draw", 4, False),  # now "mean / median"
    ],
}


@pytest.mark.parametrize("kind", sorted(_MOVES))
def test_rows_path_renders_the_builders_spec(kind, income):
    make = {
        "smoothed": (lambda: panels.smoothed_dp(n=300, epsilon_points=6), _smoothed_builder),
        "election": (panels.election, _election_builder),
        "noise": (panels.noise_comparison, _noise_builder),
        "release": (lambda: panels.release(income, bounds=(0, 200_000)), _release_builder),
    }
    build, builder = make[kind]
    panel = build()
    _assert_shows_builder(panel, builder(panel))
    for control, value, same_shape in _MOVES[kind]:
        builds = panel.live.builds
        if control == "draw":
            panel.draw(rng=value)
        else:
            getattr(panel, control).value = value
        assert panel.last_error is None, (control, panel.last_error)
        _assert_shows_builder(panel, builder(panel))
        # same shape: the rows went out without building an Altair chart
        assert (panel.live.builds == builds) == same_shape, (control, value)
    assert panel.live.pushes > 0


# --------------------------------------------------------------------------
# exact decimal controls
# --------------------------------------------------------------------------


def test_snap_is_decimal_exact():
    assert snap(0.9930000000000001, 0.001, 0.5) == 0.993
    assert snap(0.49999999999999994, 0.05, 0.05) == 0.5
    assert snap(2.0999999999999996, 0.05, 0.05) == 2.1
    assert snap(0.3, 0.1) == 0.3  # not 0.30000000000000004
    assert snap_log(0.0630957344480193, 10, 0.02) == 0.0631
    # every position of a 0.001-step slider on [0.5, 1] is the decimal it reads
    for k in range(0, 501, 7):
        raw = 0.5 + k * 0.001
        assert repr(snap(raw, 0.001, 0.5)) == f"{(500 + k) / 1000}"


def test_sliders_deliver_exact_decimals_to_the_core():
    panel = panels.smoothed_dp(n=200, epsilon_points=4)
    panel.eta.value = 0.9930000000000001  # what the browser slider sends
    assert panel.eta.value == 0.993
    mech = panel.result.mechanism
    assert mech.sample_size(20_000) == 19_860  # ceil(0.993 * 20000), not 19861
    # the DP delta is stated exactly (T/n as a fraction), never rounded to nearest below the truth
    assert "η = 0.993" in panel.status.value and f"DP δ = T/n = {mech.sample_size(200)}/200" in panel.status.value
    panel.epsilon.value = (0.49999999999999994, 2.0999999999999996)
    assert panel.epsilon.value == (0.5, 2.1)
    assert panel.result.epsilon.tolist() == pytest.approx([0.5, 1.03333, 1.56667, 2.1], abs=1e-5)
    election = panels.election()
    election.epsilon.value = (0.49999999999999994, 2.0999999999999996)
    assert election.epsilon.value == (0.5, 2.1)
    noise = panels.noise_comparison()
    noise.epsilon.value = 1.1500000000000001
    assert noise.epsilon.value == 1.15


def test_auto_is_exact_whenever_the_cost_estimate_is_within_budget():
    budget = 0.3
    panel = panels.smoothed_dp(n=100, epsilon_points=4, budget=budget, trials=50)
    seen = set()
    for n in (100, 2_000, 100_000):  # estimates about 3e-4, 6e-3 and 3 s: far from the budget either way
        panel.n.value = n
        within = estimate_exact_seconds(n, 2, 2, 4) <= budget
        assert (panel.result.method == "exact") == within, (n, panel.result.method)
        seen.add(within)
        if not within:
            assert "budget" in panel.status.value and "Monte Carlo" in panel.status.value
    assert seen == {True, False}  # both branches exercised


def test_release_panel_prints_no_clipping_count():
    """Records outside the bounds are clipped silently in the panel too (releases, diagnostics and the
    teaching-only true value): a warning would print a data-dependent count beside the releases."""
    import warnings

    x = pd.Series([5.0, 15.0, 250.0, -3.0, 40.0, 60.0], name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        panel = panels.release(x, bounds=(0, 100))
        panel.draw(rng=1)
        panel.diagnostics.value = True
        panel.reveal.value = True
        panel.draw(rng=2)
    assert panel.last_error is None and len(panel.releases) == 2


#: what the ipywidgets 8.1 front end (noUiSlider) sends for a FloatSlider(min=0.05, step=0.05) drawn at
#: 1.0: its binary ``min + k * step`` (measured in Chromium through Voila: readouts showed such values)
ECHO_OF_ONE = 1.0000000000000002


@pytest.mark.parametrize("which", ["noise", "release"])
def test_value_set_from_code_survives_the_front_ends_rounding_echo(which, monkeypatch, income):
    """``panel.epsilon.value = 2.0`` right after display: the redraw's echo of 1.0 must not undo it."""
    panel = panels.noise_comparison(points=10) if which == "noise" else panels.release(income, bounds=(0, 2e5))
    eps = panel.epsilon
    assert eps.value == 1.0
    eps.value = 2.0  # from code
    # the front end, drawing the slider from the old state, sends its binary rendition of 1.0
    eps.set_state({"value": ECHO_OF_ONE})
    assert eps.value == 2.0
    # a user's move is taken, also within the window
    eps.set_state({"value": 3.0000000000000004})
    assert eps.value == 3.0
    # and after the window even a value that snaps to the old one is the user's
    eps.value = 2.0
    clock = time.monotonic() + base.ECHO_WINDOW + 0.5
    monkeypatch.setattr(base.time, "monotonic", lambda: clock)
    eps.set_state({"value": 3.0000000000000004})
    assert eps.value == 3.0


def test_log_and_range_sliders_drop_the_echo_too(smoothed):
    """A rounding echo is the old value one binary ulp off: dropped by every kind of snapping slider."""

    def up(x):
        return math.nextafter(x, math.inf)

    noise = panels.noise_comparison(points=10)
    old = noise.delta.value
    noise.delta.value = 1e-3  # a log slider
    noise.delta.set_state({"value": up(old)})
    assert noise.delta.value == 1e-3
    lo, hi = smoothed.epsilon.value  # a range slider
    smoothed.epsilon.value = (lo + 0.5, hi)
    smoothed.epsilon.set_state({"value": [up(lo), hi]})
    assert smoothed.epsilon.value == (lo + 0.5, hi)
    smoothed.epsilon.value = (lo, hi)


def test_delta_readouts_share_one_format(income):
    """Every δ slider uses one format (not 0.00000100 on one and 1.00e-7 on another)."""
    noise = panels.noise_comparison(points=5)
    rel = panels.release(income, bounds=(0, 2e5))
    for slider in (noise.delta, rel.delta):
        assert slider.readout_format == display.style.DELTA_FORMAT == ".2e"
    # the Python helper writes what the d3 format writes: 3 significant digits, exponent without padding
    assert [display.format_delta(v) for v in (1e-6, 1e-7, 3.1623e-7, 0.0)] == ["1.00e-6", "1.00e-7", "3.16e-7", "0"]


def test_controls_share_one_label_width_and_n_is_log_scaled():
    """The controls' tracks start at one x position; n moves by ratios."""
    panel = panels.smoothed_dp(n=300, epsilon_points=4)
    widths = {c.style.description_width for c in panel.controls.children if hasattr(c.style, "description_width")}
    assert widths == {base.LABEL_WIDTH}
    counts = list(panel.n._options_values)
    ratios = [b / a for a, b in itertools.pairwise(counts)]
    assert counts[0] == 10 and counts[-1] == 100_000 and max(ratios) <= 1.34 and min(ratios) >= 1.2
    panel.n.value = 5000  # the documented call
    assert panel.n.value == 5000 and panel.result.n == 5000
    panel.n.value = 1234  # any count: the nearest of the scale
    assert panel.n.value == 1200


def test_snapshot_shows_the_data_sent_in_place(income):
    """A handout's snapshot of a panel draws its current rows, never the empty chart."""
    from smoothdp_nb.reports.snapshot import widget_snapshot

    panel = panels.release(income, bounds=(0, 2e5))
    for seed in (1, 2, 3):  # the third release goes through the data channel (the legend is complete)
        panel.draw(rng=seed)
    assert panel.live.pushes >= 1
    spec = panel.chart.current_chart().to_dict()
    shown = {r["value"] for rows in spec["datasets"].values() for r in rows if "which" in r}
    assert shown == {r.value for r in panel.releases}
    svg = widget_snapshot(panel.widget.model_id).payload["svg"]
    assert svg == display.render_svg(panel.live.current_chart())
    assert svg != display.render_svg(panel.chart.chart)  # the widget's own chart lacks the third release


def test_smoothed_panel_takes_a_composed_mechanism():
    """repeat(M, k) is a Mechanism like any other: the smoothed-DP panel draws it, and
    its numbers are the exact smoothed delta of the composition."""
    mech = sdp.repeat(sdp.SamplingHistogram(T=3), 2)
    panel = panels.smoothed_dp(n=12, epsilon_points=3, mechanism=mech)
    assert panel.last_error is None and panel.result.mechanism is mech
    want = sdp.smoothed_delta(mech, 12, panel.pi_matrix(), panel.epsilon_grid())
    assert np.allclose(panel.result.log_delta, want.log_delta, rtol=1e-12)
    # composing two runs can only leak more than one run (post-processing drops the second)
    one = sdp.smoothed_delta(sdp.SamplingHistogram(T=3), 12, panel.pi_matrix(), panel.epsilon_grid())
    assert np.all(np.asarray(want.log_delta) >= np.asarray(one.log_delta) - 1e-9)
    panel.n.value = 15
    assert panel.result.n == 15 and panel.last_error is None


def test_status_states_the_dp_delta_as_a_bound():
    """T/n = 1/3 must not be shown as 0.333333, below the truth; a user
    mechanism's DP delta is shown as "DP δ ≤ x" with x rounded up."""
    from fractions import Fraction

    panel = panels.smoothed_dp(n=300, epsilon_points=2)
    panel.eta.value = 1 / 3
    mech = panel.result.mechanism
    T = mech.sample_size(300)
    assert f"DP δ = T/n = {T}/300" in panel.status.value
    rr = sdp.FiniteMechanism(lambda h: {0: 2 / 3 if h[0] else 1 / 3, 1: 1 / 3 if h[0] else 2 / 3}, categories=2)
    p2 = panels.smoothed_dp(mechanism=rr, n=3, epsilon_points=2)
    text = p2.status.value
    stated = Fraction(text.split("DP δ ≤ ")[1].split()[0].rstrip(";,"))
    assert stated >= Fraction(float(np.max(p2.result.dp_delta)))
