"""Panel: smoothed delta of the sampling histogram against epsilon (Definition 3, Figure 2 right).

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3, Figure 2 right).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import ipywidgets as W
import numpy as np

from smoothdp_nb.core.data import datasets as _datasets
from smoothdp_nb.core.numerics.ball_arithmetic import decimal_up
from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.core.smoothed.delta import SmoothedResult, smoothed_delta
from smoothdp_nb.core.smoothed.mechanisms import Mechanism, SamplingHistogram
from smoothdp_nb.display import Figure, delta_vs_epsilon_figure
from smoothdp_nb.display.results import monte_carlo_note
from smoothdp_nb.panels.base import CONTROL_WIDTH, LogCountSlider, Panel, decimal_range, decimal_slider

__all__ = ["SmoothedDPPanel"]

_PI_PRESETS = {
    # short enough for the menu's width (the label "Π" is beside it): never cut with "…"
    "interval": "{(p, 1 − p)}, p in the range below",
    "us-2020-districts": "2020 top-2 shares, 56 units",
}


class SmoothedDPPanel(Panel):
    """Smoothed delta of the sampling-histogram mechanism (Algorithm 2) against epsilon.

    Controls: sampling rate eta, database size n, the set Pi (an interval of
    two-category distributions or the 2020 district shares), the epsilon range
    and the method.  ``auto`` runs the exact Algorithm 1 whenever the core's
    cost estimate is under ``budget`` seconds, and a Monte Carlo estimate
    otherwise; a Monte Carlo chart says so inside the plot and draws its band
    only where it spans at most one decade.

    Parameters
    ----------
    n : int
        Initial database size.
    eta : float
        Initial sampling rate (snapped to the slider's step 0.001).
    epsilon : (float, float)
        Initial epsilon range (step 0.01).
    pi : (float, float)
        Initial range of the first category's probability (step 0.005).
    epsilon_points : int
        Number of epsilon values on the grid.
    budget : float
        Seconds the exact method may take by the core's estimate (``auto``).
    trials : int
        Monte Carlo samples per candidate composition.
    max_n : int
        Upper end of the n slider (log-scaled: 10, 12, 15, 20, 25, 30, 40, ... up to max_n).
    rng : int or None
        Monte Carlo seed (``None``: fresh randomness every time).
    mechanism : Mechanism or None
        Any two-category mechanism (e.g. a :class:`~smoothdp_nb.FiniteMechanism`
        or a post-processed one) to analyse instead of the sampling histogram;
        the eta slider is then disabled, the other controls work as before.

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Algorithms 1 and 2).
    """

    title = "Smoothed DP of the sampling histogram (Definition 3)"

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
        mechanism: Mechanism | None = None,
    ) -> None:
        if mechanism is not None:
            if not isinstance(mechanism, Mechanism):
                raise TypeError(f"mechanism must be a smoothdp_nb.Mechanism or None, got {type(mechanism).__name__}")
            if mechanism.categories not in (None, 2):
                raise ValueError(
                    f"mechanism must accept two categories (the panel's sets Pi have two), got m = {mechanism.categories}"
                )
        self.mechanism = mechanism
        self.budget, self.trials, self.rng, self.epsilon_points = float(budget), int(trials), rng, int(epsilon_points)
        self.eta = decimal_slider("η (sampling rate)", eta, 0.5, 1.0, 0.001, continuous=False)
        self.eta.disabled = mechanism is not None  # a given mechanism has its own parameters
        self.n = LogCountSlider("n (records)", n, 10, max_n, continuous_update=False)
        self.epsilon = decimal_range("ε range", epsilon, 0.01, 5.0, 0.01)
        self.pi_kind = W.Dropdown(
            options=[(v, k) for k, v in _PI_PRESETS.items()],
            value="interval",
            description="Π",
            layout=W.Layout(width=CONTROL_WIDTH),
        )
        self.pi = decimal_range("p(category 0)", pi, 0.0, 1.0, 0.005, fmt=".3f")
        self.method = W.ToggleButtons(options=["auto", "exact", "monte-carlo"], value="auto", description="method")
        self.result: Any = None  # the latest SmoothedResult
        self.fallback: str | None = None  # why auto chose Monte Carlo
        super().__init__()

    def _control_list(self) -> list[W.Widget]:
        return [self.eta, self.n, self.epsilon, self.pi_kind, self.pi, self.method]

    def pi_matrix(self) -> np.ndarray:
        """The set Pi chosen by the controls, one distribution per row."""
        if self.pi_kind.value == "us-2020-districts":
            return _datasets.us_2020_district_shares().to_numpy()
        lo, hi = self.pi.value
        return np.array([[lo, 1.0 - lo], [hi, 1.0 - hi]])

    def epsilon_grid(self) -> np.ndarray:
        """The epsilon values of the current range (rounded to 6 decimals)."""
        lo, hi = self.epsilon.value
        return np.round(np.linspace(lo, hi, self.epsilon_points), 6) if hi > lo else np.array([lo])

    def compute(self) -> SmoothedResult:
        """Run :func:`smoothdp_nb.smoothed_delta` for the current controls (a SmoothedResult)."""
        self.pi.disabled = self.pi_kind.value != "interval"
        # the decimal on the slider, exactly; or the mechanism the panel was given
        mech = self.mechanism if self.mechanism is not None else SamplingHistogram(eta=repr(self.eta.value))
        method, epsilon = self.method.value, self.epsilon_grid()
        self.fallback = None
        if method in ("auto", "exact"):
            # auto: exact whenever the core's cost estimate is within the budget (the core refuses beyond it)
            budget = self.budget if method == "auto" else 20 * self.budget
            try:
                return smoothed_delta(mech, self.n.value, self.pi_matrix(), epsilon, budget=budget, progress=False)
            except ComputationTooLarge:
                if method == "exact":
                    raise
                self.fallback = f"exact estimated over the {self.budget:g} s budget"
        return smoothed_delta(
            mech,
            self.n.value,
            self.pi_matrix(),
            epsilon,
            method="monte-carlo",
            trials=self.trials,
            rng=self.rng,
            candidates=8,
            progress=False,
        )

    def _build_figure(self) -> Figure:
        self.result = self.compute()
        # one fixed title: the structure stays, so updates go through the data channel
        return delta_vs_epsilon_figure(
            self.result.to_frame(), title="Smoothed δ against ε (dashed: DP δ)", note=monte_carlo_note(self.result)
        )

    def _status_text(self) -> str:
        r = self.result
        what = "exact (Algorithm 1)" if r.method == "exact" else f"Monte Carlo, {r.trials} trials per composition"
        if self.fallback:
            what += f" ({self.fallback})"
        # the DP delta as a true statement: T/n exactly, or a user mechanism's bound rounded up
        if self.mechanism is None:
            T = r.mechanism.sample_size(r.n)
            who, dp = f"η = {self.eta.value:g}, T = {T:,}", f"DP δ = T/n = {T}/{r.n}"
        else:
            top = float(np.max(r.dp_delta))
            who, dp = self.mechanism.label, "DP δ n/a" if np.isnan(top) else f"DP δ ≤ {decimal_up(Fraction(top))}"
        return f"n = {r.n:,}, {who}; {what}; {len(r.vertex_labels)} hull vertices; {dp}"
