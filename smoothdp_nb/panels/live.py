"""Live charts for the panels: an Altair ``JupyterChart`` whose data are replaced in place.

* the chart's inline data are turned into *named* datasets with stable names
  (``panel_0``, ``panel_1``, ...), so that two charts of the same kind differ
  only in their dataset values;
* when the structure of the new chart (everything but the data) equals the one
  on screen, only the changed datasets are sent to the browser, through the
  data channel that ``JupyterChart`` already listens to; Vega re-runs its
  dataflow on the same view -- no re-embedding, no flicker.  The builders of
  :mod:`smoothdp_nb.display` keep every layer (possibly empty) whatever the
  data, so a slider move is a data update;
* a panel hands over a :class:`~smoothdp_nb.display.figure.Figure` (the
  layers' rows apart from the drawing): when its shape is the one on screen,
  its rows are sent without building the Altair chart at all -- most of an
  update's time in the kernel (:meth:`LiveChart.show`);
* otherwise (a layer appears, the view switches between kinds of chart) the
  chart is replaced as a whole (``JupyterChart.chart = new_chart``).

JavaScript: the chart widget is :class:`PanelChart`, a ``JupyterChart`` with
our own front end (``live.js``).  Its data channel is *state*, not a message:
the trait ``_live_rows`` holds every dataset replaced since the spec was set,
and a view applies all of them once its Vega view exists -- an update sent
while the view is still embedding (Run All: the cell after the one showing the
panel) is applied when the view is ready, never dropped.  The front end also
draws on a transparent background with JupyterLab's theme colours.
:func:`enable_offline` (called when the first live chart is built) bundles
Vega from ``vl-convert`` into that JavaScript, so panels work without internet
access.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import altair as alt
import ipywidgets as W
import traitlets

from smoothdp_nb.display.figure import Figure

__all__ = ["STABLE_PREFIX", "LiveChart", "PanelChart", "enable_offline", "rename_datasets"]

#: stable dataset names: panel_0, panel_1, ... in order of first use
STABLE_PREFIX = "panel_"

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
            import vl_convert as vlc  # deferred: optional; the native Vega renderer, loaded once
        except ImportError:
            _OFFLINE = False
        else:
            # the CDN import line goes; vl-convert's bundle provides ``vegaEmbed``
            body = "\n".join(line for line in _JS_SOURCE.splitlines() if not line.startswith("import "))
            # vl-convert names Vega-Lite versions "v6_4": the major and minor of Altair's schema
            vl_version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])
            PanelChart._esm = vlc.javascript_bundle(body, vl_version=vl_version)
            _OFFLINE = True
    return _OFFLINE


#: the front end of :class:`PanelChart` (loads Vega from a CDN until :func:`enable_offline`)
_JS_SOURCE = (Path(__file__).with_name("live.js")).read_text(encoding="utf-8")


class PanelChart(alt.JupyterChart):
    """``JupyterChart`` with the panels' front end: data as state, theme-aware colours.

    ``_live_rows`` is ``{"seq": n, "changed": [names], "data": {name: rows}}``:
    ``data`` holds every dataset replaced since the spec was set (so a view
    created or made ready later shows the latest rows), ``changed`` those of
    the latest update (applied alone by views already drawn).
    """

    _esm = _JS_SOURCE
    _css = """
    .sdp-live-chart, .sdp-live-chart .vega-embed { background: transparent; overflow: visible; }
    /* responsive: the chart and the controls shrink to the output area (a projector at 200 % zoom
       leaves 400-560 px); the chart keeps its proportions, so its legend stays in view */
    .sdp-panel, .sdp-panel .sdp-live-chart { max-width: 100%; box-sizing: border-box; }
    .sdp-live-chart svg.marks, .sdp-live-chart canvas.marks { max-width: 100%; height: auto !important; }
    .sdp-panel .widget-inline-hbox, .sdp-panel .widget-toggle-buttons, .sdp-panel .widget-button {
        max-width: 100%;
    }
    .sdp-panel .widget-toggle-buttons .widget-toggle-button { padding: 0 10px; min-width: 0; }
    .sdp-panel .widget-dropdown { flex-wrap: wrap; }
    .sdp-panel .widget-dropdown > select { min-width: 14em; }
    /* a narrow page (a phone, a projector at 200 % zoom): shorter labels, which may take two lines */
    @media (max-width: 600px) {
        .sdp-panel .widget-inline-hbox > .widget-label {
            width: 88px !important; min-width: 0 !important; white-space: normal; line-height: 1.2;
        }
        .sdp-panel .widget-button { margin-left: 92px !important; }
        .sdp-panel .widget-inline-hbox .slider-container { min-width: 0 !important; }
        .sdp-panel .widget-inline-hbox .widget-readout { flex: none; margin-left: 4px; }
    }
    /* toggle buttons: their label on the controls' row, right-aligned like the other labels */
    .sdp-panel .widget-toggle-buttons { display: flex; align-items: center; }
    .sdp-panel .widget-toggle-buttons > .widget-label { flex: none; text-align: right; margin-right: 8px; }
    """
    _live_rows = traitlets.Dict().tag(sync=True)
    _source: LiveChart | None = None  # the live chart whose data this widget shows

    def current_chart(self) -> Any:
        """The chart as currently shown, data sent in place included.

        ``chart`` is the chart the widget was created with; a snapshot (a
        handout, a report) wants this one.
        """
        return self._source.current_chart() if self._source is not None else self.chart


# --------------------------------------------------------------------------
# in-place chart updates
# --------------------------------------------------------------------------


def rename_datasets(spec: dict) -> tuple[dict, dict[str, list]]:
    """Give every dataset reference of a Vega-Lite spec a stable name.

    Altair names inline data by a hash of its content, so two layers whose
    data happen to be equal (typically two empty layers) share one dataset,
    and the spec's structure would change the moment one of them fills.
    Here every *reference* gets its own name, ``panel_0``, ``panel_1``, ...
    in order of appearance: two charts with the same layers produce the same
    skeleton whatever their data.

    Returns
    -------
    (skeleton, data)
        The spec without its ``datasets`` (names replaced) and the dataset
        values by stable name.
    """
    datasets = spec.get("datasets", {})
    data: dict[str, list] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "data" and isinstance(value, dict) and value.get("name") in datasets:
                    new = f"{STABLE_PREFIX}{len(data)}"
                    data[new] = datasets[value["name"]]
                    out[key] = {**value, "name": new}
                elif key == "data" and isinstance(value, dict) and isinstance(value.get("values"), list):
                    # Altair leaves empty inline data in place: name it like the others
                    new = f"{STABLE_PREFIX}{len(data)}"
                    data[new] = value["values"]
                    out[key] = {k: v for k, v in value.items() if k != "values"} | {"name": new}
                elif key == "datasets":
                    continue
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    skeleton = walk(spec)
    return skeleton, data


def _chart_from_spec(skeleton: dict, data: Mapping[str, list]) -> Any:
    """Rebuild an Altair chart object from a skeleton and its named datasets."""
    spec = dict(skeleton)
    spec["datasets"] = {k: v for k, v in data.items()}
    for key, cls in (("layer", alt.LayerChart), ("vconcat", alt.VConcatChart), ("hconcat", alt.HConcatChart)):
        if key in spec:
            return cls.from_dict(spec, validate=False)
    return alt.Chart.from_dict(spec, validate=False)


class LiveChart:
    """A :class:`altair.JupyterChart` whose data can be replaced in place.

    A chart whose structure changes is shown in a *new* ``JupyterChart``
    swapped into :attr:`box` (the old widget is closed): re-embedding a new
    spec into the same widget would leave the old view's data listener
    attached in the browser (Altair 6 registers one per embedding), and the
    next data update would raise in the stale view.

    Parameters
    ----------
    chart : altair chart or Figure
        The first chart to show.
    in_place : bool, default True
        Send only new data to the browser when the structure is unchanged.
        With False every update replaces the chart.

    Attributes
    ----------
    jupyter_chart : PanelChart
        The widget currently shown.
    box : ipywidgets.Box
        The container to display; holds :attr:`jupyter_chart`.
    data : dict
        The current dataset values (list of records) by stable name.
    pushes, embeds : int
        How many updates went through the data channel, and how many
        replaced the whole chart (the first display counts as one embed).
    builds : int
        How many times an Altair chart was built and serialised (the first
        display included); a figure of the shape on screen needs none.
    """

    def __init__(self, chart: alt.TopLevelMixin | Figure, *, in_place: bool = True) -> None:
        enable_offline()
        figure = chart if isinstance(chart, Figure) else None
        self.builds = 1
        skeleton, data = rename_datasets(self._to_dict(chart.chart() if isinstance(chart, Figure) else chart))
        self._skeleton = skeleton
        self.data: dict[str, list] = data
        self._shape: Any = None  # the shape of the figure on screen, when its rows are the spec's data
        # the data channel is JupyterChart's own VegaFusion update path; without it, re-embed
        self.in_place = bool(in_place)
        self.jupyter_chart = PanelChart(_chart_from_spec(skeleton, data))
        self.jupyter_chart._source = self
        self.box = W.Box([self.jupyter_chart])
        self.pushes = 0
        self.embeds = 1
        if figure is not None:
            self._remember(figure)

    @staticmethod
    def _to_dict(chart: alt.TopLevelMixin) -> dict:
        # schema validation costs ~100 ms per update; the builders' output is validated in their tests
        spec: dict = chart.to_dict(validate=False)
        return spec

    @property
    def skeleton(self) -> dict:
        """The Vega-Lite spec on screen, without its dataset values."""
        return copy.deepcopy(self._skeleton)

    def current_chart(self) -> Any:
        """The chart as currently shown, with the latest data."""
        return _chart_from_spec(self._skeleton, self.data)

    def current_spec(self) -> dict:
        """The Vega-Lite spec as currently shown (with ``datasets``)."""
        spec = self.skeleton
        spec["datasets"] = copy.deepcopy(self.data)
        return spec

    def show(self, figure: Figure) -> str:
        """Show ``figure``: only its rows when its shape is the one on screen (no Altair at all).

        Two figures of the same shape have the same spec up to the dataset
        values (:class:`~smoothdp_nb.display.figure.Figure`), so the rows are
        sent through the data channel as :meth:`update` would send them after
        building the chart.  A new shape is built with Altair once.

        Returns
        -------
        str
            As :meth:`update`.
        """
        if self.in_place and self._shape is not None and figure.shape() == self._shape:
            return self._push(dict(zip(self.data, figure.rows(), strict=True)))
        how = self.update(figure.chart())
        self._remember(figure)
        return how

    def _remember(self, figure: Figure) -> None:
        # the rows stand for the spec's datasets, name by name (checked once per new shape)
        rows = figure.rows()
        self._shape = figure.shape() if rows == list(self.data.values()) else None

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
        self.builds += 1
        self._shape = None
        skeleton, data = rename_datasets(self._to_dict(chart))
        if skeleton == self._skeleton and self.in_place:
            return self._push(data)
        self._skeleton, self.data = skeleton, data
        self._replace()
        return "chart"

    def _push(self, data: dict[str, list]) -> str:
        """Send the datasets that changed through the data channel (the structure is unchanged)."""
        changed = [name for name in data if data[name] != self.data.get(name)]
        if not changed:
            return "same"
        self.data = data
        self.pushes += 1
        sent = self.jupyter_chart._live_rows.get("data", {})
        # all datasets replaced since the spec: a view that is not ready yet applies them when it is
        self.jupyter_chart._live_rows = {
            "seq": self.pushes,
            "changed": changed,
            "data": {**sent, **{name: data[name] for name in changed}},
        }
        return "data"

    def _replace(self) -> None:
        """Show the current skeleton and data in a new widget (see the class docstring)."""
        old = self.jupyter_chart
        self.jupyter_chart = PanelChart(self.current_chart())
        self.jupyter_chart._source = self
        self.box.children = (self.jupyter_chart,)
        old.close()
        self.embeds += 1
