"""Panel: noise std per unit of smooth sensitivity against gamma (Hladik & Tetek, Figure 1)."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as W
import numpy as np
import pandas as pd

from smoothdp_nb.core.release.noise import calibrate, family_names, gamma_range, get_family
from smoothdp_nb.core.release.smooth_sensitivity import compare_noise
from smoothdp_nb.display import Figure, noise_figure
from smoothdp_nb.display.style import DELTA_FORMAT
from smoothdp_nb.panels.base import Panel, decimal_log_slider, decimal_slider

__all__ = ["NoiseComparisonPanel"]


class NoiseComparisonPanel(Panel):
    """Noise std per unit of smooth sensitivity for each noise family, against gamma.

    Parameters
    ----------
    epsilon : float
        Snapped to the slider's step 0.05.
    delta : float
        For the Laplace family ((epsilon, delta)-DP).
    gamma : float
        Marked on the chart (must be below epsilon to be drawn).
    families : sequence of str
    points : int
        Number of gamma values (log-spaced between 1e-3 epsilon and epsilon).
    """

    title = "Noise for smooth sensitivity: std per unit of SS against γ (Hladik & Tetek, Figure 1)"

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        gamma: float = 0.1,
        families: Sequence[str] = ("polyplace", "student_t", "cauchy", "laplace"),
        points: int = 80,
    ) -> None:
        self.points = int(points)
        self.epsilon = decimal_slider("ε", epsilon, 0.05, 5.0, 0.05, fmt=".2f")
        self.delta = decimal_log_slider("δ (Laplace)", delta, -12, -2, 0.5, fmt=DELTA_FORMAT)
        self.gamma = decimal_log_slider("γ (marker)", gamma, -3, 0.7, 0.02)
        registered = family_names()  # the registry at construction: a family registered later needs a new panel
        self.families = W.SelectMultiple(
            options=[(get_family(f).label, f) for f in registered],
            value=tuple(families),
            description="noise",
            rows=len(registered),
        )
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
            raise ValueError("families: choose at least one noise family (or the global-sensitivity reference)")
        frame = compare_noise(
            epsilon,
            gammas,
            delta=float(self.delta.value),
            families=fams or ("polyplace",),
            reference=bool(self.reference.value),
        )
        if not fams:
            frame = frame[frame["family"] == "laplace_global"]
        return frame.reset_index(drop=True)

    def _build_figure(self) -> Figure:
        self.frame = self.compute()
        g = float(self.gamma.value)
        return noise_figure(self.frame, gamma=g if g < self.epsilon.value else None, title="Noise std against γ")

    def _status_text(self) -> str:
        g, epsilon, delta = float(self.gamma.value), float(self.epsilon.value), float(self.delta.value)
        parts = []
        for fam in self.families.value:
            label = get_family(fam).label
            try:
                parts.append(f"{label}: {calibrate(fam, epsilon, g, delta=delta).std:.4g}")
            except ValueError:
                parts.append(f"{label}: γ out of range (< {gamma_range(fam, epsilon, delta=delta):.3g})")
        return f"std / SS at γ = {g:g}: " + "; ".join(parts) if parts else ""
