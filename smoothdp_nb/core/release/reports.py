"""Result objects of the release half: :class:`NoiseComparison` and :class:`ReleaseReport`.

* :class:`NoiseComparison` -- the table of
  :func:`~smoothdp_nb.core.release.smooth_sensitivity.compare_noise` (noise std per unit of smooth
  sensitivity, per family and gamma).
* :class:`ReleaseReport` -- a :class:`~smoothdp_nb.core.release.smooth_sensitivity.Release`
  together with the name of what was released, so that it displays like the other results.

Both offer ``.to_frame()``, ``.to_dict()``, a readable ``str()``, ``.chart()`` and
``_repr_mimebundle_``, the last two through the renderer registry
:mod:`smoothdp_nb.core.runtime.rendering`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from smoothdp_nb.core.numerics.formatting import format_param, format_value, jsonable_float, lattice_text
from smoothdp_nb.core.release.odometer import PrivacyBudget
from smoothdp_nb.core.release.smooth_sensitivity import Release
from smoothdp_nb.core.runtime import rendering

__all__ = ["NoiseComparison", "ReleaseReport"]


@dataclass(frozen=True)
class NoiseComparison:
    """Noise standard deviation per unit of smooth sensitivity, per family and gamma.

    Wraps the frame of :func:`~smoothdp_nb.core.release.smooth_sensitivity.compare_noise`
    (columns ``family, epsilon, delta, gamma, shape, std``; ``std`` is
    ``inf`` where a family cannot be calibrated at that gamma).
    """

    table: pd.DataFrame
    epsilon: float
    delta: float | None = None

    def to_frame(self) -> pd.DataFrame:
        """The tidy table (a copy)."""
        return self.table.copy()

    def best(self) -> pd.DataFrame:
        """Per family: the gamma with the smallest std and that std."""
        t = self.table[np.isfinite(self.table["std"])]
        if t.empty:
            return pd.DataFrame(columns=["family", "gamma", "shape", "std"])
        idx = t.groupby("family", sort=False)["std"].idxmin()
        return t.loc[idx, ["family", "gamma", "shape", "std"]].sort_values("std").reset_index(drop=True)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: epsilon, delta, and the table as records (inf/NaN -> None)."""
        recs = []
        for r in self.table.to_dict(orient="records"):
            recs.append({k: (jsonable_float(v) if isinstance(v, float) else v) for k, v in r.items()})
        return {"kind": "noise-comparison", "epsilon": self.epsilon, "delta": self.delta, "rows": recs}

    def __str__(self) -> str:
        d = f", delta = {self.delta:g}" if self.delta is not None else ""
        g = self.table["gamma"].unique()
        lines = [
            f"Noise comparison at epsilon = {self.epsilon:g}{d}: std per unit of smooth sensitivity, "
            f"{len(g)} gamma value(s) in [{g.min():g}, {g.max():g}]",
            "best gamma per family:",
        ]
        for r in self.best().itertuples(index=False):
            shp = "" if not np.isfinite(r.shape) else f" (shape {r.shape:.4g})"
            lines.append(f"  {r.family:<20} gamma = {r.gamma:<10.4g} std = {r.std:.4g}{shp}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<NoiseComparison epsilon={self.epsilon:g}: {len(self.table)} rows>"

    def chart(self) -> Any:
        """Altair chart: std against gamma, one line per family (log y axis)."""
        return rendering.chart(self, "noise-comparison")

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, Any]:
        return rendering.mimebundle(self, "noise-comparison")


@dataclass(frozen=True)
class ReleaseReport:
    """A smooth-sensitivity :class:`~smoothdp_nb.core.release.smooth_sensitivity.Release` with its context.

    Every representation (``str``, ``repr``, :meth:`to_dict`, :meth:`to_frame`,
    the rich display) shows the release's public
    numbers only: value, lattice, query, n, bounds, epsilon, delta, rho,
    gamma, family, shape, guarantee.  The data-dependent diagnostics (smooth
    sensitivity, noise scale and std, and the noise-density chart drawn from
    them) appear only if the release was made with ``diagnostics=True``, and
    then always with the label that they are not covered by the guarantee.

    Attributes
    ----------
    release : Release
    name : str
        What was released, e.g. ``"df['income']"``.
    notes : tuple of str
    budget, spent, remaining : PrivacyBudget or None
        For a release charged to a curator's budget
        (:class:`~smoothdp_nb.core.release.odometer.PrivacyOdometer`): the budget, and what the
        releases charged to it spend together and leave, after this one (public numbers).
    """

    release: Release
    name: str = "x"
    notes: tuple[str, ...] = field(default_factory=tuple)
    budget: PrivacyBudget | None = None
    spent: PrivacyBudget | None = None
    remaining: PrivacyBudget | None = None

    @property
    def value(self) -> float:
        """The private value."""
        return self.release.value

    def to_dict(self) -> dict[str, object]:
        """``kind``, ``name`` and the release's :meth:`~smoothdp_nb.core.release.smooth_sensitivity.Release.to_dict`."""
        d: dict[str, Any] = {"kind": "release", "name": self.name}
        d.update(self.release.to_dict())
        for label, pair in (("budget", self.budget), ("spent", self.spent), ("remaining", self.remaining)):
            if pair is not None:
                d[f"{label}_epsilon"], d[f"{label}_delta"] = pair.epsilon, pair.delta
        return {k: (jsonable_float(v) if isinstance(v, float) else v) for k, v in d.items()}

    def to_frame(self) -> pd.DataFrame:
        """One-row frame (diagnostics, if any, as ``diagnostics.*`` columns)."""
        frame = self.release.to_frame()
        frame.insert(0, "name", self.name)
        frame.insert(0, "kind", "release")
        return frame

    def __str__(self) -> str:
        r = self.release
        lines = [
            # to the precision of the lattice, as the summary table (the exact lattice point is in to_dict())
            f"Private {r.query} of {self.name} (n = {r.n}, bounds = [{format_param(float(r.bounds[0]))}, "
            f"{format_param(float(r.bounds[1]))}]): {format_value(r.value, r.lattice)}",
            f"  on the lattice {lattice_text(r.lattice)}·ℤ; guarantee: {r.guarantee}; noise {r.noise}"
            + (f" (shape {format_param(r.shape)})" if r.shape is not None else "")
            + f", γ = {format_param(r.gamma)} ({r.gamma_source})",
        ]
        if r.diagnostics is not None:
            d = r.diagnostics
            lines.append(
                f"  diagnostics ({d.label}): smooth sensitivity = {d.smooth_sensitivity:.6g}, "
                f"bound used = {d.sensitivity_bound:.6g}, noise scale = {d.noise_scale:.6g}, "
                f"noise std = {d.noise_std:.6g}"
            )
        if self.budget is not None and self.spent is not None and self.remaining is not None:
            lines.append(
                f"  budget {self.budget}: spent {self.spent}, remaining {self.remaining} (this release included)"
            )
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<ReleaseReport {self.name}: {self.release!r}>"

    def chart(self) -> Any:
        """Altair chart of the released value on the bounds' axis (the noise density only with diagnostics)."""
        return rendering.chart(self, "release")

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, Any]:
        return rendering.mimebundle(self, "release")
