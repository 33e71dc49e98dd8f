"""Panel: private release of a statistic of one column with smooth-sensitivity noise or another data-dependent method."""

from __future__ import annotations

import html
import inspect
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.numerics.validation import as_bounds, as_float_array, as_real, position
from smoothdp_nb.core.release.methods.registry import DEFAULT_METHOD, METHODS, get_method, method_label
from smoothdp_nb.core.release.noise import calibrate, family_names, get_family
from smoothdp_nb.core.release.odometer import BudgetExceeded, PrivacyOdometer
from smoothdp_nb.core.release.sensitivity import clipping_silenced, evaluate_query, smooth_sensitivity
from smoothdp_nb.core.release.smooth_sensitivity import Release, default_gamma, release
from smoothdp_nb.display import Figure, release_density, release_figure
from smoothdp_nb.display.release import DIAGNOSTIC_LABEL
from smoothdp_nb.display.results import public_note
from smoothdp_nb.display.style import DELTA_FORMAT
from smoothdp_nb.panels.base import CONTROL_WIDTH, Panel, decimal_log_slider, decimal_slider

__all__ = ["ReleasePanel"]


def _as_odometer(budget: object) -> PrivacyOdometer:
    """The panel's odometer: given, or made from an epsilon or an (epsilon, delta) pair."""
    if isinstance(budget, PrivacyOdometer):
        return budget
    if isinstance(budget, tuple) and len(budget) == 2:
        return PrivacyOdometer(as_real(budget[0], "budget epsilon"), as_real(budget[1], "budget delta"))
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        return PrivacyOdometer(float(budget))
    raise TypeError(
        f"budget must be a PrivacyOdometer, an epsilon or an (epsilon, delta) pair, got {type(budget).__name__}"
    )


_QUERIES = ["median", "trimmed_mean", "mean"]


class ReleasePanel(Panel):
    """Private release of a statistic of one column with smooth-sensitivity noise.

    By default the chart shows public numbers only: the values released so
    far on the bounds' axis (latest in blue), with the guarantee and the
    lattice.  A new noisy value is drawn only when "Release" is clicked, so
    dragging a slider never produces a stream of independent releases that
    could be averaged.  Every release goes through a curator's budget
    (:class:`~smoothdp_nb.core.release.odometer.PrivacyOdometer`): the status
    line shows what the releases so far spend together and what remains, and
    says what the next release would bring the total to; a release that would
    exceed the budget is refused before the data is read (the button is
    disabled and the status says why).  Two boxes, both off by default,
    are for teaching: "curator diagnostics" draws the noise density of the
    current settings (it depends on the data through the smooth sensitivity,
    and is labelled so), "reveal true value" draws the un-noised statistic.

    Parameters
    ----------
    series : array_like or pandas.Series
        The data (one value per individual).
    bounds : (float, float)
        Data-independent domain, required.  Bounds read off the data (its
        minimum and maximum) would be published beside the release and make
        it not DP, so the panel refuses to guess them.
    query : {"median", "trimmed_mean", "mean"}
    epsilon : float
        Snapped to the slider's step 0.05.
    noise : str
        Noise family.
    delta : float
        For the Laplace family, propose-test-release and the stability release.
    missing : float, optional
        What a missing record (NaN, None) stands for: a fixed public value in
        ``bounds``, e.g. ``low``.  Every missing record is replaced by it, so
        ``n`` counts every record and stays public (the releases' neighbours
        replace one record, and a per-record rule maps neighbours to
        neighbours).  Without it, missing records are refused: dropping them
        would make ``n`` the count of the others, a number computed from the
        data, and neighbours of different sizes are not covered by the
        guarantee.
    budget : PrivacyOdometer, float or (float, float)
        The curator's budget: an odometer (shared with other panels or code, so
        that all their releases count together), or its ``epsilon`` or
        ``(epsilon, delta)`` for a new one.  Default ``(10, 1e-5)``.
    method : str
        ``"smooth-sensitivity"`` (default) or another method of :func:`smoothdp_nb.release`
        (exponential, inverse-sensitivity, propose-test-release, stability: the median only; the
        noise and gamma controls then do not apply, and a refused release shows as ⊥).
    """

    title = "Smooth-sensitivity release"

    def __init__(
        self,
        series: ArrayLike,
        bounds: tuple[float, float] | None = None,
        query: str = "median",
        epsilon: float = 1.0,
        noise: str = "polyplace",
        delta: float = 1e-6,
        missing: float | None = None,
        budget: PrivacyOdometer | float | tuple[float, float] = (10.0, 1e-5),
        method: str = DEFAULT_METHOD,
    ) -> None:
        if bounds is None:
            raise TypeError(
                "bounds is required: the public, data-independent (low, high) of the column, e.g. "
                "bounds=(0, 1e6) for incomes; the data's own minimum and maximum would be published "
                "with the release and make it not DP"
            )
        self.bounds = as_bounds(bounds, "bounds")
        self.odometer = _as_odometer(budget)
        self.missing = None if missing is None else as_real(missing, "missing", lo=self.bounds[0], hi=self.bounds[1])
        column = pd.Series(series)
        if column.size == 0:
            raise ValueError("series: no values to release (empty)")
        gaps = column.isna().to_numpy()
        if gaps.any():
            if self.missing is None:  # where, not how many: the count is a number computed from the data
                raise ValueError(
                    f"{position(int(np.flatnonzero(gaps)[0]), 'series')} is missing: pass missing=<a public value "
                    "in bounds> (each missing record then counts as that value and n stays the number of "
                    "records), or fill or drop missing records yourself before the panel"
                )
            column = column.fillna(self.missing)
        self._x = as_float_array(column.to_numpy(), "series")
        self.name = getattr(series, "name", None) or "value"
        self.method = W.Dropdown(
            options=[(method_label(m), m) for m in METHODS],
            value=method,
            description="method",
            layout=W.Layout(width=CONTROL_WIDTH),
        )
        self.query = W.Dropdown(options=_QUERIES, value=query, description="statistic")
        self.epsilon = decimal_slider("ε", epsilon, 0.05, 5.0, 0.05, fmt=".2f", continuous=False)
        self.auto_gamma = W.Checkbox(value=True, description="default γ (data-independent)")
        self.gamma = decimal_log_slider("γ", 0.1 * epsilon, -3, 0.7, 0.02, continuous=False)
        self.gamma.disabled = True
        self.noise = W.Dropdown(
            options=[(get_family(f).label, f) for f in family_names()],
            value=noise,
            description="noise",
            layout=W.Layout(width=CONTROL_WIDTH),
        )
        self.delta = decimal_log_slider("δ (Laplace)", delta, -12, -2, 0.5, continuous=False, fmt=DELTA_FORMAT)
        self.diagnostics = W.Checkbox(value=False, description="curator diagnostics (data-dependent)")
        self.reveal = W.Checkbox(value=False, description="reveal true value")
        self.button = W.Button(description="Release", button_style="primary", icon="random")
        self.button.on_click(lambda _: self._click())
        self.releases: list = []
        self.current: Any = None  # the latest Release
        self._true: float | None = None
        self._noise_std: float | None = None
        super().__init__()

    def _control_list(self) -> list[W.Widget]:
        # the Release button right after what most releases set (the statistic and ε): the keyboard
        # reaches it in a few Tab stops, before the finer options (γ, noise family, δ, diagnostics)
        return [
            self.method,
            self.query,
            self.epsilon,
            self.button,
            self.auto_gamma,
            self.gamma,
            self.noise,
            self.delta,
            self.diagnostics,
            self.reveal,
        ]

    # -- parameters -------------------------------------------------------------
    def params(self) -> dict:
        """Keyword arguments for :func:`smoothdp_nb.release` from the current controls."""
        method = self.method.value
        smooth = method == DEFAULT_METHOD
        for control in (self.auto_gamma, self.noise, self.diagnostics, self.query):
            control.disabled = not smooth  # smooth-sensitivity settings; the other methods release the median
        self.gamma.disabled = bool(self.auto_gamma.value) or not smooth
        noise = self.noise.value
        # δ: a parameter of the Laplace family, of propose-test-release and of the stability release
        needs_delta = get_family(noise).needs_delta if smooth else get_method(method).needs_delta
        self.delta.disabled = not needs_delta
        delta = float(self.delta.value) if needs_delta else None
        if not smooth:
            return {
                "query": "median",
                "epsilon": float(self.epsilon.value),
                "bounds": self.bounds,
                "delta": delta,
                "method": method,
            }
        gamma = None if self.auto_gamma.value else float(self.gamma.value)
        return {
            "query": self.query.value,
            "epsilon": float(self.epsilon.value),
            "gamma": gamma,
            "noise": noise,
            "bounds": self.bounds,
            "delta": delta,
        }

    def draw(self, rng: SeedLike = None) -> Release:
        """Draw one private release with the current settings (spends epsilon).

        Parameters
        ----------
        rng : None, int or numpy.random.Generator
            ``None`` (fresh OS entropy) for real use; a seed only in tests.

        Returns
        -------
        Release
        """
        kwargs = self.params()
        if "method" not in kwargs and "diagnostics" in inspect.signature(release).parameters:
            kwargs["diagnostics"] = bool(self.diagnostics.value)
        rel = self.odometer.release(self._x, rng=rng, reveal_true=False, **kwargs)
        self.current = rel
        self.releases.append(rel)
        self.refresh()
        return rel

    def _click(self) -> None:
        """The Release button: a refusal is shown in the status line, not raised into the front end."""
        try:
            self.draw()
        except BudgetExceeded as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.status.value = f'<span style="color:#b00">{html.escape(self.last_error)}</span>'

    def _budget_text(self, p: dict) -> str:
        """Spent and remaining budget, and what the current settings would bring the total to."""
        odo = self.odometer
        spent, left = odo.spent, odo.remaining
        delta = f", δ={spent.delta:.3g}" if odo.delta > 0 else ""
        delta_left = f", δ={left.delta:.3g}" if odo.delta > 0 else ""
        budget = f"ε={odo.epsilon:g}" + (f", δ={odo.delta:g}" if odo.delta > 0 else "")
        text = f"budget {budget}: spent ε={spent.epsilon:.4g}{delta}, remaining ε={left.epsilon:.4g}{delta_left}"
        after = odo.would_spend(
            p["epsilon"],
            noise=p.get("noise", "polyplace"),
            gamma=p.get("gamma"),
            delta=p["delta"],
            method=p.get("method", DEFAULT_METHOD),
        )  # public parameters only
        self.button.disabled = after is None
        if after is None:
            return text + "; <b>the next release at these settings would exceed the budget</b>"
        return text + f"; the next release would bring the total to ε={after.epsilon:.4g}"

    # -- chart --------------------------------------------------------------------
    def _calibrate(self, p: dict) -> tuple[float, Any]:
        """Gamma and the calibration of the current settings (data-independent; raises on bad settings)."""
        gamma = p["gamma"] if p["gamma"] is not None else default_gamma(p["noise"], p["epsilon"], delta=p["delta"])
        return gamma, calibrate(p["noise"], p["epsilon"], gamma, delta=p["delta"])

    def _density(self, p: dict) -> pd.DataFrame:
        """Noise density of the current settings around the latest release (curator-only)."""
        gamma, cal = self._calibrate(p)
        with clipping_silenced():  # the panel shows releases: no data-dependent warning beside them
            ss = smooth_sensitivity(self._x, p["query"], gamma, bounds=self.bounds)
        scale = float(ss * cal.scale)
        self._noise_std = float(ss * cal.std)
        centre = float(self.current.value) if self.current is not None else 0.5 * (self.bounds[0] + self.bounds[1])
        return release_density(p["noise"], p["epsilon"], gamma, scale, centre, delta=p["delta"])

    def _build_figure(self) -> Figure:
        p = self.params()
        smooth = "method" not in p
        if smooth:
            self._calibrate(p)  # say now, not at the next Release, when the settings cannot be calibrated
        density = self._density(p) if self.diagnostics.value and smooth else None
        if density is None:
            self._noise_std = None  # forget it when hidden
        if self.reveal.value:
            if self._true is None:  # computed only on request
                with clipping_silenced():
                    self._true = float(evaluate_query(self._x, p["query"], bounds=self.bounds))
        else:
            self._true = None
        note = public_note(self.current) if self.current is not None else "nothing released yet: press Release"
        return release_figure(
            [r for r in self.releases if not getattr(r, "refused", False)],  # ⊥ has no place on the axis
            self.bounds,
            name=str(self.name),
            query=p["query"],
            note=note,
            true_value=self._true,
            density=density,
        )

    def _status_text(self) -> str:
        parts = []
        if self.missing is not None:
            parts.append(f"missing records count as {self.missing:g} (public rule, given as missing=)")
        if self.current is not None:
            refused = getattr(self.current, "refused", False)
            shown = "⊥ (refused)" if refused else f"{self.current.value:.10g}"
            parts.append(
                f"released {html.escape(self.current.query)} = <b>{shown}</b> "
                f"({html.escape(self.current.guarantee)}); {len(self.releases)} release(s)"
            )
        else:
            parts.append("nothing released yet: press Release")
        try:
            parts.append(self._budget_text(self.params()))
        except (TypeError, ValueError):  # settings the calibration refuses: their message is shown instead
            pass
        if self._noise_std is not None:
            parts.append(f"noise std {self._noise_std:.4g} ({html.escape(DIAGNOSTIC_LABEL)})")
        return "<br>".join(parts)
