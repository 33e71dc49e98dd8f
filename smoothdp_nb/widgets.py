"""Live notebook panels: ipywidgets controls driving an Altair ``JupyterChart``.

Each panel is a small class with three public attributes:

``controls``
    The ipywidgets (sliders, dropdowns, checkboxes) in a ``VBox``; tests and
    users may set their ``value`` programmatically.
``chart``
    The :class:`altair.JupyterChart` showing the result.
``widget``
    The ``VBox`` to display (controls, status line, chart).  The panel itself
    displays as this widget.

On every change a panel calls the public core API, builds a new chart with
the pure builders of :mod:`smoothdp_nb.charts` (or :func:`noise_chart`
below) and hands it to a :class:`LiveChart`, which updates the chart in
place:

* the chart's inline data are turned into *named* datasets with stable names
  (``panel_0``, ``panel_1``, ...), so that two charts of the same kind differ
  only in their dataset values;
* when the structure of the new chart (everything but the data) equals the one
  on screen, only the new rows are sent to the browser, through the data
  channel that ``JupyterChart`` already listens to; Vega re-runs its dataflow
  on the same view -- no re-embedding, no flicker;
* otherwise (a layer appears, the view switches between kinds of chart) the
  chart is replaced as a whole (``JupyterChart.chart = new_chart``).

Long computations: sliders whose change triggers more than a few hundred
milliseconds of work use ``continuous_update=False`` (the panel recomputes
when the slider is released); the smoothed-delta panel caps the exact method
with the core's ``budget=`` and falls back to a coarse Monte Carlo estimate,
so no change freezes the kernel for more than about a second by default.  A
status line says what is being computed and how long it took.

JavaScript: :func:`enable_offline` (called when the first panel is built)
makes ``JupyterChart`` load Vega from the copy bundled with ``vl-convert``,
so panels work without internet access.
"""

from __future__ import annotations

import abc
import copy
import html
import math
import time
from typing import Any, Mapping, Sequence

import altair as alt
import ipywidgets as W
import numpy as np
import pandas as pd

from . import charts
from .core import datasets as _datasets
from .core.mechanisms import ComputationTooLarge, SamplingHistogram
from .core.noise import FAMILIES, calibrate, gamma_range
from .core.profiles import dp_delta, privacy_profile
from .core.sensitivity import evaluate_query, smooth_sensitivity
from .core.smoothed import smoothed_delta


def _release_api():
    """``release``, ``compare_noise`` and ``default_gamma`` of the core (imported on first use)."""
    from .core import release as mod

    return mod

__all__ = [
    "LiveChart",
    "enable_offline",
    "SmoothedDPPanel",
    "ElectionPanel",
    "NoiseComparisonPanel",
    "ReleasePanel",
    "noise_chart",
    "release_chart",
]

_LN10 = math.log(10.0)
_STABLE_PREFIX = "panel_"


# --------------------------------------------------------------------------
# offline JavaScript
# --------------------------------------------------------------------------

_OFFLINE: bool | None = None


def enable_offline() -> bool:
    """Make ``JupyterChart`` load Vega from ``vl-convert`` instead of a CDN.

    Calls :meth:`altair.JupyterChart.enable_offline` once per process (it
    bundles Vega, Vega-Lite and vega-embed into the widget's JavaScript, which
    takes a few seconds the first time).

    Returns
    -------
    bool
        True if the widget now works offline, False when ``vl-convert`` is not
        installed (the widget then loads its JavaScript from a CDN).
    """
    global _OFFLINE
    if _OFFLINE is None:
        try:
            alt.JupyterChart.enable_offline()
            _OFFLINE = True
        except ImportError:
            _OFFLINE = False
    return _OFFLINE


# --------------------------------------------------------------------------
# in-place chart updates
# --------------------------------------------------------------------------


def _rename_datasets(spec: dict) -> tuple[dict, dict[str, list]]:
    """Give the consolidated datasets of a Vega-Lite spec stable names.

    Altair names inline data by a hash of its content; here the datasets are
    renamed ``panel_0``, ``panel_1``, ... in order of first use, so that two
    charts with the same structure produce the same spec apart from the values.

    Returns
    -------
    (skeleton, data)
        The spec without its ``datasets`` (names replaced) and the dataset
        values by stable name.
    """
    datasets = spec.get("datasets", {})
    names: dict[str, str] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "data" and isinstance(value, dict) and value.get("name") in datasets:
                    old = value["name"]
                    new = names.setdefault(old, f"{_STABLE_PREFIX}{len(names)}")
                    out[key] = {**value, "name": new}
                elif key == "datasets":
                    continue
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    skeleton = walk(spec)
    data = {new: datasets[old] for old, new in names.items()}
    return skeleton, data


def _chart_from_spec(skeleton: dict, data: Mapping[str, list]) -> alt.TopLevelMixin:
    """Rebuild an Altair chart object from a skeleton and its named datasets."""
    spec = dict(skeleton)
    spec["datasets"] = {k: v for k, v in data.items()}
    if "layer" in spec:
        return alt.LayerChart.from_dict(spec, validate=False)
    if any(k in spec for k in ("hconcat", "vconcat", "concat", "facet", "repeat")):
        return alt.TopLevelMixin.from_dict(spec, validate=False)  # pragma: no cover
    return alt.Chart.from_dict(spec, validate=False)


class LiveChart:
    """A :class:`altair.JupyterChart` whose data can be replaced in place.

    Parameters
    ----------
    chart : altair chart
        The first chart to show.
    in_place : bool, default True
        Send only new data to the browser when the structure is unchanged.
        With False every update replaces the chart (re-embedding it).

    Attributes
    ----------
    jupyter_chart : altair.JupyterChart
        The widget.
    data : dict
        The current dataset values (list of records) by stable name.
    pushes, embeds : int
        How many updates went through the data channel, and how many
        replaced the whole chart (the first display counts as one embed).
    """

    def __init__(self, chart: alt.TopLevelMixin, *, in_place: bool = True) -> None:
        enable_offline()
        skeleton, data = _rename_datasets(chart.to_dict())
        self._skeleton = skeleton
        self.data: dict[str, list] = data
        # the data channel is JupyterChart's own VegaFusion update path; without it, re-embed
        self.in_place = bool(in_place) and alt.JupyterChart.class_traits().get("_py_to_js_updates") is not None
        self.jupyter_chart = alt.JupyterChart(_chart_from_spec(skeleton, data))
        self._stale = False  # data pushed since the chart object was last assigned
        self.pushes = 0
        self.embeds = 1

    @property
    def skeleton(self) -> dict:
        """The Vega-Lite spec on screen, without its dataset values."""
        return copy.deepcopy(self._skeleton)

    def current_chart(self) -> alt.TopLevelMixin:
        """The chart as currently shown, with the latest data."""
        return _chart_from_spec(self._skeleton, self.data)

    def current_spec(self) -> dict:
        """The Vega-Lite spec as currently shown (with ``datasets``)."""
        spec = self.skeleton
        spec["datasets"] = copy.deepcopy(self.data)
        return spec

    def update(self, chart: alt.TopLevelMixin) -> str:
        """Show ``chart``: in place when only its data changed.

        Parameters
        ----------
        chart : altair chart

        Returns
        -------
        str
            ``"data"`` (rows sent through the data channel), ``"same"``
            (nothing changed) or ``"chart"`` (chart replaced).
        """
        # schema validation costs ~100 ms per update; the builders' output is validated in their tests
        skeleton, data = _rename_datasets(chart.to_dict(validate=False))
        if skeleton == self._skeleton and self.in_place:
            changed = [name for name in data if data[name] != self.data.get(name)]
            if not changed:
                return "same"
            self.data = data
            self._stale = True
            self.pushes += 1
            self.jupyter_chart._py_to_js_updates = [
                {"namespace": "data", "name": name, "scope": [], "value": data[name]} for name in changed
            ]
            return "data"
        self._skeleton, self.data = skeleton, data
        self.jupyter_chart.chart = _chart_from_spec(skeleton, data)
        self._stale = False
        self.embeds += 1
        return "chart"

    def sync(self) -> None:
        """Make the widget's own spec carry the latest data (before a new display).

        Data sent in place reach the views already on screen; a view created
        later (displaying the panel again) is built from the widget's spec,
        so it is brought up to date here.
        """
        if self._stale:
            self.jupyter_chart.chart = self.current_chart()
            self._stale = False
            self.embeds += 1


# --------------------------------------------------------------------------
# extra pure chart builders (noise comparison, release)
# --------------------------------------------------------------------------

_FAMILY_LABELS = {
    "polyplace": "PolyPlace",
    "cauchy": "generalized Cauchy",
    "student_t": "Student's t",
    "laplace": "Laplace (ε, δ)",
    "laplace_log_normal": "Laplace log-normal (zCDP)",
    "laplace_global": "Laplace, global sensitivity",
}


def noise_chart(frame: pd.DataFrame, gamma: float | None = None, title: str | None = None) -> alt.LayerChart:
    """Noise standard deviation per unit of smooth sensitivity against gamma.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy, as returned by ``compare_noise``: ``family``, ``gamma``, ``std``
        (infinite or missing values, outside a family's range, are dropped).
    gamma : float, optional
        Draw a vertical rule at this gamma, with the std of each family there.
    title : str, optional

    Returns
    -------
    altair.LayerChart
        Log-log axes, one colour per family.
    """
    df = frame[["family", "gamma", "std"]].copy()
    df = df[np.isfinite(df["std"].astype(float)) & (df["std"] > 0)].reset_index(drop=True)
    df["label"] = df["family"].map(lambda f: _FAMILY_LABELS.get(f, f))
    df = df.iloc[: charts.MAX_ROWS]
    x = alt.X("gamma:Q", title="γ (smoothness)", scale=alt.Scale(type="log"))
    y = alt.Y("std:Q", title="noise std / smooth sensitivity", scale=alt.Scale(type="log"))
    color = alt.Color("label:N", title="noise")
    tips = [
        alt.Tooltip("label:N", title="noise"),
        alt.Tooltip("gamma:Q", title="γ", format=".4g"),
        alt.Tooltip("std:Q", title="std", format=".4g"),
    ]
    layers: list[alt.Chart] = [alt.Chart(df).mark_line().encode(x=x, y=y, color=color, tooltip=tips)]
    if gamma is not None and np.isfinite(gamma) and gamma > 0:
        at = _values_at(df, gamma)
        layers.append(
            alt.Chart(pd.DataFrame({"gamma": [float(gamma)]}))
            .mark_rule(color="#888", strokeDash=[4, 3])
            .encode(x=x)
        )
        layers.append(alt.Chart(at).mark_point(filled=True, size=60).encode(x=x, y=y, color=color, tooltip=tips))
    chart = alt.layer(*layers).properties(width=420, height=260)
    return chart.properties(title=title) if title else chart


def _values_at(df: pd.DataFrame, gamma: float) -> pd.DataFrame:
    """Each family's std interpolated (in log-log) at ``gamma``; families out of range are left out."""
    rows = []
    for (fam, label), g in df.groupby(["family", "label"], sort=True):
        g = g.sort_values("gamma")
        gs, ss = g["gamma"].to_numpy(float), g["std"].to_numpy(float)
        if len(gs) == 0 or not (gs[0] <= gamma <= gs[-1]):
            continue
        val = float(np.exp(np.interp(np.log(gamma), np.log(gs), np.log(ss))))
        rows.append({"family": fam, "label": label, "gamma": float(gamma), "std": val})
    return pd.DataFrame(rows, columns=["family", "label", "gamma", "std"])


def release_chart(density: pd.DataFrame, marks: pd.DataFrame, title: str | None = None) -> alt.LayerChart:
    """Density of a release around its value, with vertical marks.

    Parameters
    ----------
    density : pandas.DataFrame
        ``x`` and ``density``: the noise density (centred on the released
        value, or on 0 before any release).
    marks : pandas.DataFrame
        ``x`` and ``label`` (e.g. "released value"); one rule per row.
    title : str, optional

    Returns
    -------
    altair.LayerChart
    """
    x = alt.X("x:Q", title="value")
    area = (
        alt.Chart(density)
        .mark_area(opacity=0.3, color="#4c78a8", line=True)
        .encode(x=x, y=alt.Y("density:Q", title="noise density"), tooltip=[alt.Tooltip("x:Q", format=".4g")])
    )
    rules = (
        alt.Chart(marks)
        .mark_rule(strokeWidth=2)
        .encode(
            x=x,
            color=alt.Color("label:N", title=""),
            tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("x:Q", title="value", format=".6g")],
        )
    )
    chart = alt.layer(area, rules).properties(width=420, height=220)
    return chart.properties(title=title) if title else chart


# --------------------------------------------------------------------------
# panel base class
# --------------------------------------------------------------------------


class _Panel(abc.ABC):
    """Common machinery: controls, status line, live chart, observers."""

    title: str = ""

    def __init__(self) -> None:
        self.status = W.HTML(value="")
        self.last_seconds: float = 0.0
        self.last_error: str | None = None
        self._busy = False
        self._pending = False
        t0 = time.perf_counter()
        self.live = LiveChart(self._build_chart())
        self.last_seconds = time.perf_counter() - t0
        self.status.value = self._status_text()
        self.chart: alt.JupyterChart = self.live.jupyter_chart
        self.controls = W.VBox(self._control_list())
        self.widget = W.VBox(
            [W.HTML(f"<b>{html.escape(self.title)}</b>"), self.controls, self.status, self.chart]
        )
        for control in self._control_list():
            if hasattr(control, "value") and not isinstance(control, W.Button):
                control.observe(self._on_change, names="value")

    # every panel says which controls it shows and how it draws its chart
    @abc.abstractmethod
    def _control_list(self) -> list[W.Widget]:
        """The panel's controls, in display order."""

    @abc.abstractmethod
    def _build_chart(self) -> alt.TopLevelMixin:
        """The chart for the current control values (calls the core)."""

    # -- update cycle ---------------------------------------------------------
    def _on_change(self, change: Mapping[str, Any] | None = None) -> None:
        if self._busy:  # a programmatic change made while we compute: redo once at the end
            self._pending = True
            return
        self.refresh()

    def refresh(self) -> str:
        """Recompute from the current control values and update the chart.

        Returns
        -------
        str
            How the chart was updated (see :meth:`LiveChart.update`), or
            ``"error"`` when the core rejected the parameters (the message is
            shown in the status line and the previous chart stays).
        """
        self._busy = True
        try:
            while True:
                self._pending = False
                self.status.value = "<i>computing…</i>"
                t0 = time.perf_counter()
                try:
                    chart = self._build_chart()
                except (ValueError, TypeError, ComputationTooLarge) as exc:
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    self.status.value = f'<span style="color:#b00">{html.escape(self.last_error)}</span>'
                    how = "error"
                else:
                    self.last_error = None
                    how = self.live.update(chart)
                    self.last_seconds = time.perf_counter() - t0
                    self.status.value = self._status_text() + f" <small>({self.last_seconds * 1000:.0f} ms)</small>"
                if not self._pending:
                    return how
        finally:
            self._busy = False

    def _status_text(self) -> str:
        return ""

    # -- display --------------------------------------------------------------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        self.live.sync()
        return self.widget._repr_mimebundle_(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        self.live.sync()
        display(self.widget)

    def chart_spec(self) -> dict:
        """The Vega-Lite spec currently on screen, data included."""
        return self.live.current_spec()

    def chart_data(self, layer: int = 0) -> pd.DataFrame:
        """The rows of the ``layer``-th dataset currently on screen."""
        return pd.DataFrame(self.live.data[f"{_STABLE_PREFIX}{layer}"])


def _float_slider(description: str, value: float, lo: float, hi: float, step: float, *, continuous: bool = True,
                  fmt: str = ".3f") -> W.FloatSlider:
    return W.FloatSlider(
        value=value, min=lo, max=hi, step=step, description=description, readout_format=fmt,
        continuous_update=continuous, style={"description_width": "initial"},
        layout=W.Layout(width="420px"),
    )


# --------------------------------------------------------------------------
# smoothed DP
# --------------------------------------------------------------------------

_PI_PRESETS = {
    "interval": "Pi = {(p, 1-p) : p in the range below}",
    "us-2020-districts": "Pi = top-2 shares of the 56 units of the 2020 election",
}


class SmoothedDPPanel(_Panel):
    """Smoothed delta of the sampling-histogram mechanism against epsilon.

    Controls: sampling rate eta, database size n, the set Pi (an interval of
    two-category distributions or the 2020 district shares), the epsilon range
    and the method (auto/exact/Monte Carlo).

    Parameters
    ----------
    n : int
        Initial database size.
    eta : float
        Initial sampling rate.
    epsilon : (float, float)
        Initial epsilon range.
    pi : (float, float)
        Initial range of the first category's probability.
    epsilon_points : int
        Number of epsilon values on the grid.
    budget : float
        Seconds the exact method may take; beyond that ("auto") a Monte Carlo
        estimate with ``trials`` samples per candidate composition is shown.
    trials : int
    max_n : int
        Upper end of the n slider.
    rng : int or None
        Monte Carlo seed (``None``: fresh randomness every time).
    """

    title = "Smoothed DP of the sampling histogram"

    def __init__(
        self,
        n: int = 1000,
        eta: float = 0.998,
        epsilon: tuple[float, float] = (0.05, 2.0),
        pi: tuple[float, float] = (0.45, 0.55),
        epsilon_points: int = 20,
        budget: float = 0.5,
        trials: int = 200,
        max_n: int = 100_000,
        rng: int | None = 0,
    ) -> None:
        self.budget, self.trials, self.rng, self.epsilon_points = float(budget), int(trials), rng, int(epsilon_points)
        self.eta = _float_slider("η (sampling rate)", eta, 0.5, 1.0, 0.001, continuous=False)
        self.n = W.IntSlider(value=n, min=10, max=max_n, step=10, description="n (records)",
                             continuous_update=False, style={"description_width": "initial"},
                             layout=W.Layout(width="420px"))
        self.epsilon = W.FloatRangeSlider(value=epsilon, min=0.01, max=5.0, step=0.01, description="ε range",
                                      continuous_update=False, style={"description_width": "initial"},
                                      layout=W.Layout(width="420px"))
        self.pi_kind = W.Dropdown(options=[(v, k) for k, v in _PI_PRESETS.items()], value="interval",
                                  description="Π", layout=W.Layout(width="420px"))
        self.pi = W.FloatRangeSlider(value=pi, min=0.0, max=1.0, step=0.005, description="p(category 0)",
                                     continuous_update=False, readout_format=".3f",
                                     style={"description_width": "initial"}, layout=W.Layout(width="420px"))
        self.method = W.ToggleButtons(options=["auto", "exact", "monte-carlo"], value="auto", description="method")
        self.result = None
        super().__init__()

    def _control_list(self) -> list[W.Widget]:
        return [self.eta, self.n, self.epsilon, self.pi_kind, self.pi, self.method]

    def pi_matrix(self) -> np.ndarray:
        """The set Pi chosen by the controls, one distribution per row."""
        if self.pi_kind.value == "us-2020-districts":
            return _datasets.us_2020_district_shares().to_numpy()
        lo, hi = self.pi.value
        return np.array([[lo, 1.0 - lo], [hi, 1.0 - hi]])

    def compute(self):
        """Run :func:`smoothed_delta` for the current controls (SmoothedResult)."""
        self.pi.disabled = self.pi_kind.value != "interval"
        mech = SamplingHistogram(eta=self.eta.value)
        lo, hi = self.epsilon.value
        epsilon = np.round(np.linspace(lo, hi, self.epsilon_points), 6) if hi > lo else np.array([lo])
        method = self.method.value
        if method in ("auto", "exact"):
            try:
                budget = self.budget if method == "auto" else 10 * self.budget
                return smoothed_delta(mech, self.n.value, self.pi_matrix(), epsilon, budget=budget, progress=False)
            except ComputationTooLarge:
                if method == "exact":
                    raise
        return smoothed_delta(mech, self.n.value, self.pi_matrix(), epsilon, method="monte-carlo",
                              trials=self.trials, rng=self.rng, candidates=8, progress=False)

    def _build_chart(self) -> alt.TopLevelMixin:
        self.result = self.compute()
        return charts.delta_vs_eps_chart(self.result.to_frame(), title="smoothed δ vs ε (dashed: DP δ)")

    def _status_text(self) -> str:
        r = self.result
        what = "exact" if r.method == "exact" else f"Monte Carlo, {r.trials} trials per composition"
        return (f"n = {r.n}, {what}; {len(r.vertex_labels)} hull vertices; "
                f"DP δ = {r.dp_delta:.4g}")


# --------------------------------------------------------------------------
# elections
# --------------------------------------------------------------------------


class ElectionPanel(_Panel):
    """Privacy profile of the sampling histogram on each US presidential election.

    Each election 1920-2020 is a database of its top-2 popular votes
    (about 10^8 records); the chart shows ``delta_eps(x)`` per year for a few
    epsilon values, or per epsilon for each year.

    Speed: the profile costs about 0.2 ms per (election, epsilon) without
    replacement (about 0.4 ms with replacement), so the panel

    * caches each exact column ``delta_eps`` over the 26 elections by
      ``(eta, replace, epsilon)``: revisiting a setting or changing only the view
      costs no core call, and an epsilon range change computes only the new epsilon;
    * responds to a change in two steps when it runs inside a kernel's event
      loop: first with a *coarse* grid (the ``coarse_points`` epsilon values of
      the grid that are not cached yet, evenly spread, plus those that are),
      then -- ``refine_delay`` seconds after the last change, so not while a
      slider is being dragged -- with the full grid.  Every value shown is
      exact; only the number of epsilon values drawn differs.  Without an event
      loop (scripts, tests) the full grid is computed at once.

    Parameters
    ----------
    eta : float
        Initial sampling rate.
    epsilon : (float, float)
        Initial epsilon range; ``epsilon_points`` values are drawn.
    epsilon_points : int
    replace : bool
        Sample with replacement.
    coarse_points : int
        Uncached epsilon values computed for the first response (0 or less:
        always compute the full grid at once).
    refine_delay : float
        Seconds of quiet before the full grid replaces the coarse one.
    """

    title = "US presidential elections 1920–2020: privacy profile of the sampling histogram"

    def __init__(self, eta: float = 0.998, epsilon: tuple[float, float] = (0.5, 2.0), epsilon_points: int = 3,
                 replace: bool = False, coarse_points: int = 1, refine_delay: float = 0.3) -> None:
        table = _datasets.us_presidential_elections()
        self._years = table["year"].to_numpy()
        self._hists = table[["winner_votes", "runner_up_votes"]].to_numpy(dtype=np.int64)
        self.epsilon_points = int(epsilon_points)
        self.coarse_points = int(coarse_points)
        self.refine_delay = float(refine_delay)
        self._columns: dict[tuple, np.ndarray] = {}  # (eta, replace, epsilon) -> log delta per election
        self._dp: dict[tuple, np.ndarray] = {}  # (eta, replace) -> DP delta per election
        self._grid_override: np.ndarray | None = None
        self._refine_handle: Any = None
        self.coarse = False  # True while a coarse grid is on screen
        self.core_calls = 0  # privacy_profile calls made (cache misses)
        # a coarse grid answers while dragging, the full one follows when the slider rests
        self.eta = _float_slider("η (sampling rate)", eta, 0.9, 1.0, 0.001, continuous=True)
        self.epsilon = W.FloatRangeSlider(value=epsilon, min=0.05, max=4.0, step=0.05, description="ε range",
                                      continuous_update=False, style={"description_width": "initial"},
                                      layout=W.Layout(width="420px"))
        self.replace = W.Checkbox(value=replace, description="sample with replacement")
        self.view = W.Dropdown(options=[("δ per year", "year"), ("δ per ε", "epsilon")], value="year",
                               description="x axis")
        self.frame: pd.DataFrame | None = None
        super().__init__()

    def _control_list(self) -> list[W.Widget]:
        return [self.eta, self.epsilon, self.replace, self.view]

    # -- grids and cache --------------------------------------------------------
    def grid(self) -> np.ndarray:
        """The full epsilon grid of the current controls."""
        lo, hi = self.epsilon.value
        return np.round(np.linspace(lo, hi, self.epsilon_points), 6) if hi > lo else np.array([float(lo)])

    def _key(self) -> tuple:
        return (round(float(self.eta.value), 9), bool(self.replace.value))

    def _missing(self, epsilon: np.ndarray) -> list[float]:
        key = self._key()
        return [float(e) for e in epsilon if key + (float(e),) not in self._columns]

    def coarse_grid(self) -> np.ndarray:
        """The epsilon values of the first response: the cached ones plus ``coarse_points`` others."""
        full = self.grid()
        missing = self._missing(full)
        if self.coarse_points <= 0 or len(missing) <= self.coarse_points:
            return full
        picks = {missing[int(i)] for i in np.round(np.linspace(0, len(missing) - 1, self.coarse_points))}
        cached = set(float(e) for e in full) - set(missing)
        return np.array(sorted(cached | picks))

    def compute(self, epsilon: Sequence[float] | None = None) -> pd.DataFrame:
        """Tidy profile frame: ``year``, ``epsilon``, ``log_delta``, ``dp_delta``.

        Parameters
        ----------
        epsilon : sequence of float, optional
            The epsilon values (default: the full grid of the controls).  Only
            those not cached for the current ``(eta, replace)`` are computed,
            in one :func:`privacy_profile` call.
        """
        epsilon = self.grid() if epsilon is None else np.asarray(epsilon, dtype=float).reshape(-1)
        key = self._key()
        mech = SamplingHistogram(eta=self.eta.value, replace=bool(self.replace.value))
        missing = self._missing(epsilon)
        if missing:
            logd = np.asarray(privacy_profile(mech, self._hists, np.array(missing), log=True))
            logd = logd.reshape(len(self._hists), len(missing))  # (years, epsilon)
            self.core_calls += 1
            if len(self._columns) > 4096:
                self._columns.clear()
            for j, e in enumerate(missing):
                self._columns[key + (e,)] = logd[:, j].copy()
        if key not in self._dp:
            self._dp[key] = np.array([dp_delta(mech, int(n)) for n in self._hists.sum(axis=1)])
        cols = np.column_stack([self._columns[key + (float(e),)] for e in epsilon])  # (years, epsilon)
        return pd.DataFrame({
            "year": np.repeat(self._years, len(epsilon)),
            "epsilon": np.tile(epsilon, len(self._years)),
            "log_delta": cols.reshape(-1),
            "dp_delta": np.repeat(self._dp[key], len(epsilon)),
        })

    # -- two-step update --------------------------------------------------------
    def _on_change(self, change: Mapping[str, Any] | None = None) -> None:
        if self._busy:
            self._pending = True
            return
        self._cancel_refine()
        loop = _running_loop()
        coarse = self.coarse_grid() if loop is not None else None
        if coarse is None or len(coarse) == len(self.grid()):
            self.refresh()
            return
        self._grid_override = coarse
        try:
            self.refresh()
        finally:
            self._grid_override = None
        self._refine_handle = loop.call_later(self.refine_delay, self.refine)

    def refine(self) -> str:
        """Show the full grid now (the scheduled second step of an update)."""
        self._cancel_refine()
        return self.refresh()

    def _cancel_refine(self) -> None:
        if self._refine_handle is not None:
            self._refine_handle.cancel()
            self._refine_handle = None

    def _build_chart(self) -> alt.TopLevelMixin:
        epsilon = self._grid_override
        self.frame = self.compute(epsilon)
        self.coarse = epsilon is not None
        return charts.profile_chart(self.frame, x=self.view.value, title="δ_ε(x) per election (dashed: DP δ)")

    def _status_text(self) -> str:
        worst = self.frame.loc[self.frame["log_delta"].idxmax()]
        text = (f"largest δ: {charts.format_log10(worst['log_delta'] / _LN10)} "
                f"({int(worst['year'])}, ε = {worst['epsilon']:g})")
        if self.coarse:
            text += f" — coarse grid ({self.frame['epsilon'].nunique()} of {len(self.grid())} ε values), refining…"
        return text


def _running_loop():
    """The asyncio loop running this code (a kernel handling a widget message), or None."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# --------------------------------------------------------------------------
# noise comparison
# --------------------------------------------------------------------------


class NoiseComparisonPanel(_Panel):
    """Noise std per unit of smooth sensitivity for each noise family, against gamma.

    Parameters
    ----------
    epsilon : float
    delta : float
        For the Laplace family ((epsilon, delta)-DP).
    gamma : float
        Marked on the chart (must be below epsilon).
    families : sequence of str
    points : int
        Number of gamma values (log-spaced between 1e-3 epsilon and epsilon).
    """

    title = "Noise for smooth sensitivity: std per unit of SS against γ"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, gamma: float = 0.1,
                 families: Sequence[str] = ("polyplace", "student_t", "cauchy", "laplace"),
                 points: int = 80) -> None:
        self.points = int(points)
        self.epsilon = _float_slider("ε", epsilon, 0.05, 5.0, 0.05, fmt=".2f")
        self.delta = W.FloatLogSlider(value=delta, base=10, min=-12, max=-2, step=0.5, description="δ (Laplace)",
                                      style={"description_width": "initial"}, layout=W.Layout(width="420px"))
        self.gamma = W.FloatLogSlider(value=gamma, base=10, min=-3, max=math.log10(5.0), step=0.02,
                                      description="γ (marker)", style={"description_width": "initial"},
                                      layout=W.Layout(width="420px"))
        self.families = W.SelectMultiple(options=[(_FAMILY_LABELS[f], f) for f in FAMILIES],
                                         value=tuple(families), description="noise", rows=len(FAMILIES))
        self.reference = W.Checkbox(value=True, description="Laplace on global sensitivity")
        self.frame: pd.DataFrame | None = None
        super().__init__()

    def _control_list(self) -> list[W.Widget]:
        return [self.epsilon, self.delta, self.gamma, self.families, self.reference]

    def compute(self) -> pd.DataFrame:
        """The ``compare_noise`` table for the current controls."""
        epsilon = float(self.epsilon.value)
        gammas = np.geomspace(1e-3 * epsilon, epsilon * (1 - 1e-3), self.points)
        fams = tuple(self.families.value)
        if not fams and not self.reference.value:
            raise ValueError("choose at least one noise family")
        frame = _release_api().compare_noise(epsilon, gammas, delta=float(self.delta.value), families=fams or ("polyplace",),
                              reference=bool(self.reference.value))
        if not fams:
            frame = frame[frame["family"] == "laplace_global"]
        return frame.reset_index(drop=True)

    def _build_chart(self) -> alt.TopLevelMixin:
        self.frame = self.compute()
        g = float(self.gamma.value)
        return noise_chart(self.frame, gamma=g if g < self.epsilon.value else None, title="noise std vs γ")

    def _status_text(self) -> str:
        g = float(self.gamma.value)
        epsilon = float(self.epsilon.value)
        parts = []
        for fam in self.families.value:
            try:
                std = calibrate(fam, epsilon, g, delta=float(self.delta.value)).std
                parts.append(f"{_FAMILY_LABELS[fam]}: {std:.4g}")
            except ValueError:
                parts.append(f"{_FAMILY_LABELS[fam]}: γ out of range (< {gamma_range(fam, epsilon, delta=float(self.delta.value)):.3g})")
        return f"at γ = {g:.4g}: " + "; ".join(parts) if parts else ""


# --------------------------------------------------------------------------
# release
# --------------------------------------------------------------------------


class ReleasePanel(_Panel):
    """Private release of a statistic of one column with smooth-sensitivity noise.

    The chart shows the density of the noise the current settings add (the
    curator's diagnostic: it depends on the data through the smooth
    sensitivity), centred on the latest released value.  A new noisy value is
    drawn only when "Release" is clicked, so dragging a slider never produces
    a stream of independent releases that could be averaged; the status line
    counts the releases drawn and the epsilon they spend together (basic
    composition).  The true, un-noised value is computed and shown only while
    "reveal true value" is ticked.

    Parameters
    ----------
    series : array_like or pandas.Series
        The data (one value per individual).
    bounds : (float, float), optional
        Data-independent domain.  When omitted the data's own min and max are
        used and the panel warns that this choice itself is not private.
    query : {"median", "trimmed_mean", "mean"}
    epsilon : float
    noise : str
        Noise family.
    delta : float
        For the Laplace family.
    """

    title = "Smooth-sensitivity release"

    def __init__(self, series: Any, bounds: tuple[float, float] | None = None, query: str = "median",
                 epsilon: float = 1.0, noise: str = "polyplace", delta: float = 1e-6) -> None:
        x = np.asarray(pd.Series(series).dropna(), dtype=float)
        if x.size == 0:
            raise ValueError("release panel: the series has no values")
        self._x = x
        self.name = getattr(series, "name", None) or "value"
        self.bounds_from_data = bounds is None
        self.bounds = (float(np.min(x)), float(np.max(x))) if bounds is None else (float(bounds[0]), float(bounds[1]))
        self.query = W.Dropdown(options=["median", "trimmed_mean", "mean"], value=query, description="statistic")
        self.epsilon = _float_slider("ε", epsilon, 0.05, 5.0, 0.05, fmt=".2f", continuous=False)
        self.auto_gamma = W.Checkbox(value=True, description="default γ (data-independent)")
        self.gamma = W.FloatLogSlider(value=0.1 * epsilon, base=10, min=-3, max=math.log10(5.0), step=0.02,
                                      description="γ", continuous_update=False, disabled=True,
                                      style={"description_width": "initial"}, layout=W.Layout(width="420px"))
        self.noise = W.Dropdown(options=[(_FAMILY_LABELS[f], f) for f in FAMILIES], value=noise, description="noise")
        self.delta = W.FloatLogSlider(value=delta, base=10, min=-12, max=-2, step=0.5, description="δ (Laplace)",
                                      continuous_update=False, style={"description_width": "initial"},
                                      layout=W.Layout(width="420px"))
        self.reveal = W.Checkbox(value=False, description="reveal true value")
        self.button = W.Button(description="Release", button_style="primary", icon="random")
        self.button.on_click(lambda _: self.draw())
        self.releases: list = []
        self.current = None  # the latest Release
        self._true: float | None = None
        super().__init__()

    def _control_list(self) -> list[W.Widget]:
        return [self.query, self.epsilon, self.auto_gamma, self.gamma, self.noise, self.delta,
                self.reveal, self.button]

    # -- parameters -------------------------------------------------------------
    def params(self) -> dict:
        """Keyword arguments for ``release`` from the current controls."""
        self.gamma.disabled = bool(self.auto_gamma.value)
        noise = self.noise.value
        delta = float(self.delta.value) if noise == "laplace" else None
        gamma = None if self.auto_gamma.value else float(self.gamma.value)
        return {"query": self.query.value, "epsilon": float(self.epsilon.value), "gamma": gamma,
                "noise": noise, "bounds": self.bounds, "delta": delta}

    def draw(self, rng: Any = None):
        """Draw one private release with the current settings (spends epsilon).

        Parameters
        ----------
        rng : None, int or numpy.random.Generator
            ``None`` (fresh OS entropy) for real use; a seed only in tests.

        Returns
        -------
        Release
        """
        rel = _release_api().release(self._x, rng=rng, reveal_true=bool(self.reveal.value), **self.params())
        self.current = rel
        self.releases.append(rel)
        self.refresh()
        return rel

    # -- chart --------------------------------------------------------------------
    def _noise(self) -> tuple[Any, float, dict]:
        p = self.params()
        gamma = p["gamma"] if p["gamma"] is not None else _release_api().default_gamma(p["noise"], p["epsilon"], p["delta"])
        cal = calibrate(p["noise"], p["epsilon"], gamma, delta=p["delta"])
        ss = smooth_sensitivity(self._x, p["query"], gamma, bounds=self.bounds)
        return cal, float(ss * cal.scale), {**p, "gamma": gamma}

    def _build_chart(self) -> alt.TopLevelMixin:
        cal, scale, p = self._noise()
        rel = self.current
        same = rel is not None and (rel.query, rel.epsilon, rel.noise, rel.gamma) == (
            p["query"], p["epsilon"], p["noise"], p["gamma"])
        centre = rel.value if rel is not None else 0.0
        dist = cal.distribution
        zs = np.linspace(float(dist.ppf(0.02)), float(dist.ppf(0.98)), 201)
        if scale > 0:
            density = pd.DataFrame({"x": centre + scale * zs, "density": dist.pdf(zs) / scale})
        else:  # no noise needed (zero smooth sensitivity): a spike
            density = pd.DataFrame({"x": [centre, centre], "density": [0.0, 1.0]})
        marks = []
        if rel is not None:
            marks.append({"x": rel.value, "label": "released value" + ("" if same else " (earlier settings)")})
        if self.reveal.value:
            if self._true is None:  # computed only on request
                self._true = evaluate_query(self._x, p["query"], bounds=self.bounds)
            marks.append({"x": self._true, "label": "true value"})
        else:
            self._true = None  # forget it when hidden
        marks_df = pd.DataFrame(marks, columns=["x", "label"])
        self._noise_std = float(scale / cal.scale * cal.std) if cal.scale else 0.0
        # a fixed title (per statistic) keeps the chart's structure, so updates stay in place
        return release_chart(density, marks_df, title=f"{p['query']} of {self.name}: noise density around the release")

    def _status_text(self) -> str:
        parts = []
        if self.bounds_from_data:
            parts.append('<span style="color:#b60">bounds taken from the data (not private: pass bounds=)</span>')
        if self.current is not None:
            spent = sum(r.epsilon for r in self.releases)
            parts.append(f"released {html.escape(self.current.query)} = <b>{self.current.value:.6g}</b> "
                         f"({html.escape(self.current.guarantee)}); {len(self.releases)} release(s), "
                         f"ε spent {spent:g} (basic composition)")
        else:
            parts.append("nothing released yet: press Release")
        parts.append(f"noise std {self._noise_std:.4g} (curator's diagnostic: data-dependent, not private)")
        return "<br>".join(parts)
