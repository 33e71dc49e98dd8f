"""What every panel shares: controls that deliver exact decimals, the update cycle, the display.

A panel has three public attributes:

``controls``
    The ipywidgets (sliders, dropdowns, checkboxes, buttons) in a ``VBox``;
    tests and users may set their ``value`` programmatically.
``chart``
    The :class:`altair.JupyterChart` showing the result.
``widget``
    The ``VBox`` to display (title, controls, status line, chart); the panel
    itself displays as this widget.

On every change a panel calls the public core API, turns the result into a
:class:`~smoothdp_nb.display.figure.Figure` with the builders of
:mod:`smoothdp_nb.display` (the layers' rows, and how to draw them) and hands
it to its :class:`~smoothdp_nb.panels.live.LiveChart`, which sends only the
new rows when the figure's shape is the one on screen (no Altair chart is
built then) and updates the chart in place.

Sliders snap to their step *in the kernel*: a browser slider at 0.993
delivers 0.9930000000000001 (binary floating point), which would make
``T = ceil(eta n)`` one too high; here the value is replaced by the decimal
``min + k * step`` before any observer sees it.

The same rounding makes the ipywidgets front end write values the user never
chose: when a slider view is drawn (or redrawn) its noUiSlider recomputes the
value as ``min + k * step`` in binary (1.0 becomes 1.0000000000000002 for
``min=step=0.05``) and, since that differs from the model's value, sends it to
the kernel.  If code set a new value meanwhile (``panel.epsilon.value = 2.0``
in the cell after the one showing the panel), that stale echo arrives after it
and would put the slider back to 1.0.  The sliders here drop such an echo
(:class:`EchoGuard`) and send their value to the front end again.
"""

from __future__ import annotations

import abc
import html
import math
import time
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import altair as alt
import ipywidgets as W
import pandas as pd
import traitlets

from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.display.figure import Figure
from smoothdp_nb.panels.live import LiveChart

__all__ = [
    "CONTROL_WIDTH",
    "ECHO_WINDOW",
    "DecimalLogSlider",
    "DecimalRangeSlider",
    "DecimalSlider",
    "EchoGuard",
    "LABEL_WIDTH",
    "LogCountSlider",
    "Panel",
    "snap",
    "snap_log",
]

CONTROL_WIDTH = "460px"
#: every control's description takes this width, so that all tracks, boxes and menus start at one x
LABEL_WIDTH = "140px"
_STYLE = {"description_width": LABEL_WIDTH}


def snap(value: float, step: float, origin: float = 0.0) -> float:
    """``origin + k * step`` for the nearest integer k, computed in decimal.

    >>> snap(0.9930000000000001, 0.001, 0.5)
    0.993
    >>> snap(0.49999999999999994, 0.05)
    0.5
    """
    d_step, d_origin = Decimal(repr(float(step))), Decimal(repr(float(origin)))
    k = round((Decimal(repr(float(value))) - d_origin) / d_step)
    return float(d_origin + k * d_step)


def snap_log(value: float, base: float, step: float, digits: int = 3) -> float:
    """``base ** (k * step)`` for the nearest k, rounded to ``digits`` significant digits.

    The slider's readout shows the same digits, so the value used is the value read.

    >>> snap_log(0.0630957344480193, 10, 0.02)
    0.0631
    """
    if value <= 0:
        return value
    k = round(math.log(value, base) / step)
    return float(f"{base ** (k * step):.{digits}g}")


#: seconds after a value set by code during which the front end's rounding echo of the
#: previous value is dropped (a redraw echoes within tens of milliseconds)
ECHO_WINDOW = 1.0


class EchoGuard(W.ValueWidget):
    """Drops the front end's rounding echo of a value that code has replaced since.

    An incoming value is such an echo when it arrives within
    :data:`ECHO_WINDOW` seconds of a value set by code, is *not* itself on the
    slider's grid (the front end only echoes a value it failed to reproduce
    exactly), and snaps to the value the slider held before that set.  A user
    who moves the slider back to the old value within a second sends a value
    on the grid or after the window; either is taken.
    """

    _code_set: tuple[float, Any] | None = None  # (time, value before) of the latest set by code
    _from_front = False

    def _snapped(self, raw: Any) -> Any:
        """The value the slider would take for ``raw`` (its own validation)."""
        return self._validate_value(traitlets.Bunch(value=raw, owner=self, trait=self.traits()["value"]))

    def _stale_echo(self, raw: Any) -> bool:
        if self._code_set is None or time.monotonic() - self._code_set[0] > ECHO_WINDOW:
            return False
        try:
            snapped = self._snapped(raw)
        except traitlets.TraitError:
            return False
        exact = snapped == (tuple(raw) if isinstance(raw, list) else raw)
        return not exact and snapped == self._code_set[1] and snapped != self.value

    def set_state(self, sync_data: dict[str, Any]) -> None:
        """Apply a state from the front end, except a stale rounding echo of ``value``."""
        if "value" in sync_data and self._stale_echo(sync_data["value"]):
            rest = {k: v for k, v in sync_data.items() if k != "value"}
            if rest:
                super().set_state(rest)
            self.send_state("value")  # the front end shows the kernel's value again
            return
        self._from_front = True
        try:
            super().set_state(sync_data)
        finally:
            self._from_front = False

    @traitlets.observe("value")
    def _remember_code_set(self, change: Mapping[str, Any]) -> None:
        if not self._from_front:
            self._code_set = (time.monotonic(), change["old"])


class DecimalSlider(EchoGuard, W.FloatSlider):
    """A ``FloatSlider`` whose value is always ``min + k * step`` exactly (in decimal)."""

    @traitlets.validate("value")
    def _validate_value(self, proposal: Mapping[str, Any]) -> float:
        value = super()._validate_value(proposal)
        return min(max(snap(value, self.step, self.min), self.min), self.max)


class DecimalRangeSlider(EchoGuard, W.FloatRangeSlider):
    """A ``FloatRangeSlider`` whose two ends are always ``min + k * step`` exactly."""

    @traitlets.validate("value")
    def _validate_value(self, proposal: Mapping[str, Any]) -> tuple[float, float]:
        lo, hi = super()._validate_value(proposal)
        return (
            min(max(snap(lo, self.step, self.min), self.min), self.max),
            min(max(snap(hi, self.step, self.min), self.min), self.max),
        )


class DecimalLogSlider(EchoGuard, W.FloatLogSlider):
    """A ``FloatLogSlider`` whose value is ``base ** (k * step)`` rounded to its readout's 3 digits."""

    @traitlets.validate("value")
    def _validate_value(self, proposal: Mapping[str, Any]) -> float:
        value = super()._validate_value(proposal)
        return snap_log(value, self.base, self.step)


def nice_counts(lo: int, hi: int) -> list[int]:
    """The counts 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten in ``[lo, hi]``, and ``hi``.

    Equal steps on a log scale, within a factor 1.34 of each other.

    >>> nice_counts(10, 100)
    [10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100]
    """
    if not 1 <= lo <= hi:
        raise ValueError(f"nice_counts: need 1 <= lo <= hi, got lo={lo}, hi={hi}")
    out: list[int] = []
    for k in range(len(str(hi)) + 1):
        for m in (10, 12, 15, 20, 25, 30, 40, 50, 60, 80):
            v = m * 10**k // 10
            if lo <= v <= hi and (not out or v > out[-1]):
                out.append(v)
    if not out or out[-1] != hi:
        out.append(hi)
    return out


class LogCountSlider(W.SelectionSlider):
    """A slider over counts on a log scale (:func:`nice_counts`); ``value`` is an ``int``.

    Any integer in range may be assigned: it becomes the nearest count of the
    scale (nearest in ratio), as a linear slider snaps to its step.  The
    readout prints the count with thousands separators.
    """

    def __init__(self, description: str, value: int, lo: int, hi: int, **kwargs: Any) -> None:
        counts = nice_counts(int(lo), int(hi))
        super().__init__(
            options=[(f"{c:,}", c) for c in counts],
            value=self._nearest(counts, value),
            description=description,
            **kwargs,
        )

    @staticmethod
    def _nearest(counts: list[int], value: Any) -> int:
        v = float(value)
        if not math.isfinite(v) or v <= 0:
            raise traitlets.TraitError(f"n must be a positive count, got {value!r}")
        return min(counts, key=lambda c: abs(math.log(c / v)))

    @traitlets.validate("value")
    def _validate_value(self, proposal: Mapping[str, Any]) -> Any:
        counts = list(self._options_values)
        if counts and proposal["value"] is not None and proposal["value"] not in counts:
            proposal = traitlets.Bunch(proposal, value=self._nearest(counts, proposal["value"]))
        return super()._validate_value(proposal)

    @property
    def min(self) -> int:
        """The smallest count."""
        return int(self._options_values[0])

    @property
    def max(self) -> int:
        """The largest count."""
        return int(self._options_values[-1])


def _align(control: W.Widget) -> None:
    """Give a control the panels' label width and row width (tracks start at one x position)."""
    if isinstance(control, W.Button):
        control.layout.margin = f"4px 0 4px calc({LABEL_WIDTH} + 4px)"
        return
    if hasattr(control, "style") and hasattr(control.style, "description_width"):
        control.style.description_width = LABEL_WIDTH
    if isinstance(control, W.Checkbox):
        control.indent = True
    if isinstance(control, W.ToggleButtons):  # label and buttons on one row; each button as wide as its label
        control.style.button_width = "auto"
    control.layout.width = CONTROL_WIDTH


def _slider_options(description: str, lo: float, hi: float, step: float, fmt: str, continuous: bool) -> dict:
    """The keyword arguments every snapping slider of the panels shares (range, readout, layout)."""
    return {
        "min": lo,
        "max": hi,
        "step": step,
        "description": description,
        "readout_format": fmt,
        "continuous_update": continuous,
        "style": _STYLE,
        "layout": W.Layout(width=CONTROL_WIDTH),
    }


def decimal_slider(
    description: str, value: float, lo: float, hi: float, step: float, *, continuous: bool = True, fmt: str = ".3f"
) -> DecimalSlider:
    """A snapping slider in the panels' layout."""
    return DecimalSlider(value=value, **_slider_options(description, lo, hi, step, fmt, continuous))


def decimal_range(
    description: str, value: tuple[float, float], lo: float, hi: float, step: float, *, fmt: str = ".2f"
) -> DecimalRangeSlider:
    """A snapping range slider (updates when released)."""
    return DecimalRangeSlider(value=value, **_slider_options(description, lo, hi, step, fmt, False))


def decimal_log_slider(
    description: str,
    value: float,
    lo_exp: float,
    hi_exp: float,
    step: float,
    *,
    continuous: bool = True,
    fmt: str = ".3g",
) -> DecimalLogSlider:
    """A snapping base-10 log slider (exponents ``lo_exp`` to ``hi_exp``); δ sliders pass ``DELTA_FORMAT``."""
    return DecimalLogSlider(
        value=value,
        base=10,
        min=lo_exp,
        max=hi_exp,
        step=step,
        description=description,
        readout_format=fmt,
        continuous_update=continuous,
        style=_STYLE,
        layout=W.Layout(width=CONTROL_WIDTH),
    )


class Panel(abc.ABC):
    """Controls, status line, live chart and the update cycle of a panel."""

    title: str = ""

    def __init__(self) -> None:
        self.status = W.HTML(value="")
        self.last_seconds: float = 0.0
        self.last_error: str | None = None
        self._busy = False
        self._pending = False
        t0 = time.perf_counter()
        self.live = LiveChart(self._build_figure())
        self.last_seconds = time.perf_counter() - t0
        self.status.value = self._status_text()
        for control in self._control_list():
            _align(control)
        self.controls = W.VBox(self._control_list())
        self.widget = W.VBox([W.HTML(f"<b>{html.escape(self.title)}</b>"), self.controls, self.status, self.live.box])
        self.widget.add_class("sdp-panel")  # the chart's front end names the panel's sliders for screen readers
        for control in self._control_list():
            if hasattr(control, "value") and not isinstance(control, W.Button):
                control.observe(self._on_change, names="value")

    @property
    def chart(self) -> alt.JupyterChart:
        """The chart widget currently shown."""
        return self.live.jupyter_chart

    @abc.abstractmethod
    def _control_list(self) -> list[W.Widget]:
        """The panel's controls, in display order."""

    @abc.abstractmethod
    def _build_figure(self) -> Figure:
        """The figure for the current control values (calls the core)."""

    def _status_text(self) -> str:
        return ""

    # -- update cycle ---------------------------------------------------------
    def _on_change(self, change: Mapping[str, Any] | None = None) -> None:
        if self._busy:  # a change made while we compute: redo once at the end
            self._pending = True
            return
        self.refresh()

    def refresh(self) -> str:
        """Recompute from the current control values and update the chart.

        Returns
        -------
        str
            How the chart was updated (see :meth:`LiveChart.show`), or
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
                    figure = self._build_figure()
                except (ValueError, TypeError, ComputationTooLarge) as exc:
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    self.status.value = f'<span style="color:#b00">{html.escape(self.last_error)}</span>'
                    how = "error"
                else:
                    self.last_error = None
                    how = self.live.show(figure)
                    self.last_seconds = time.perf_counter() - t0
                    self.status.value = self._status_text() + f" <small>({self.last_seconds * 1000:.0f} ms)</small>"
                if not self._pending:
                    return how
        finally:
            self._busy = False

    # -- display --------------------------------------------------------------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        # every view, also one created by a second display, applies the rows sent in place (live.js)
        return self.widget._repr_mimebundle_(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        from IPython.display import display  # deferred: IPython only when shown in a notebook

        display(self.widget)

    def chart_spec(self) -> dict:
        """The Vega-Lite spec currently on screen, data included."""
        return self.live.current_spec()

    def layer_name(self, mark: str) -> str:
        """The dataset name of the first visible layer drawing ``mark`` (e.g. ``"line"``)."""
        for layer in _layers(self.live.skeleton):
            m = layer.get("mark")
            kind, opacity = (m.get("type"), m.get("opacity")) if isinstance(m, dict) else (m, None)
            name = layer.get("data", {}).get("name")
            if kind == mark and name and opacity != 0:  # opacity 0: the axes' invisible extent layers
                return name
        raise KeyError(f"no {mark!r} layer on screen")

    def chart_frame(self, mark: str) -> pd.DataFrame:
        """The rows of the first visible layer drawing ``mark`` currently on screen."""
        return pd.DataFrame(self.live.data[self.layer_name(mark)])


def _layers(spec: dict) -> list[dict]:
    """Every unit spec of a (layered or concatenated) spec, in order."""
    out: list[dict] = []
    for key in ("layer", "vconcat", "hconcat"):
        for sub in spec.get(key, []):
            out += _layers(sub)
    if "mark" in spec:
        out.append(spec)
    return out
