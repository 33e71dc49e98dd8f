"""Panel: privacy profile of the sampling histogram on the US presidential elections 1920-2020 (Figure 3)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd

from smoothdp_nb.core.data import datasets as _datasets
from smoothdp_nb.core.numerics.formatting import format_log10_up
from smoothdp_nb.core.smoothed.mechanisms import SamplingHistogram
from smoothdp_nb.core.smoothed.profiles import dp_delta, privacy_profile
from smoothdp_nb.display import PROFILE, Figure, profile_figure
from smoothdp_nb.panels.base import Panel, decimal_range, decimal_slider

__all__ = ["ElectionPanel"]

_LN10 = math.log(10.0)


class ElectionPanel(Panel):
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

    def __init__(
        self,
        eta: float = 0.998,
        epsilon: tuple[float, float] = (0.5, 2.0),
        epsilon_points: int = 3,
        replace: bool = False,
        coarse_points: int = 1,
        refine_delay: float = 0.3,
    ) -> None:
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
        self.eta = decimal_slider("η (sampling rate)", eta, 0.9, 1.0, 0.001, continuous=True)
        self.epsilon = decimal_range("ε range", epsilon, 0.05, 4.0, 0.05)
        self.replace = W.Checkbox(value=replace, description="sample with replacement")
        self.view = W.Dropdown(
            options=[("δ per year", "year"), ("δ per ε", "epsilon")], value="year", description="x axis"
        )
        self.frame: Any = None  # the latest profile frame
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
        cached = {float(e) for e in full} - set(missing)
        return np.array(sorted(cached | picks))

    def compute(self, epsilon: Sequence[float] | np.ndarray | None = None) -> pd.DataFrame:
        """Tidy profile frame: ``year``, ``epsilon``, ``log_delta``, ``dp_delta``.

        Parameters
        ----------
        epsilon : sequence of float, optional
            The epsilon values (default: the full grid of the controls).  Only
            those not cached for the current ``(eta, replace)`` are computed,
            in one :func:`privacy_profile` call.
        """
        grid = self.grid() if epsilon is None else np.asarray(epsilon, dtype=float).reshape(-1)
        key = self._key()
        mech = SamplingHistogram(eta=repr(self.eta.value), replace=bool(self.replace.value))
        missing = self._missing(grid)
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
        cols = np.column_stack([self._columns[key + (float(e),)] for e in grid])  # (years, epsilon)
        return pd.DataFrame(
            {
                "year": np.repeat(self._years, len(grid)),
                "epsilon": np.tile(grid, len(self._years)),
                "log_delta": cols.reshape(-1),
                "dp_delta": np.repeat(self._dp[key], len(grid)),
            }
        )

    # -- two-step update --------------------------------------------------------
    def _on_change(self, change: Mapping[str, Any] | None = None) -> None:
        if self._busy:
            self._pending = True
            return
        self._cancel_refine()
        loop = _running_loop()
        coarse = self.coarse_grid() if loop is not None else None
        if loop is None or coarse is None or len(coarse) == len(self.grid()):
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

    def _build_figure(self) -> Figure:
        epsilon = self._grid_override
        self.frame = self.compute(epsilon)
        self.coarse = epsilon is not None
        return profile_figure(
            self.frame, x=self.view.value, title=f"Privacy profile {PROFILE} per election (dashed: DP δ)"
        )

    def _status_text(self) -> str:
        worst = self.frame.loc[self.frame["log_delta"].idxmax()]
        largest = format_log10_up(worst["log_delta"] / _LN10)  # a proven upper bound, rounded up
        text = f"largest δ ≤ {largest} ({int(worst['year'])}, ε = {worst['epsilon']:g})"
        if self.coarse:
            text += f" — coarse grid ({self.frame['epsilon'].nunique()} of {len(self.grid())} ε values), refining…"
        return text


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running this code (a kernel handling a widget message), or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
