"""Result objects for computations the other core modules return as plain arrays.

* :class:`ProfileResult` -- a privacy profile ``delta_eps(x)`` over several
  databases and several epsilon, built by :func:`profile` from
  :func:`~smoothdp_nb.core.profiles.privacy_profile`.
* :class:`NoiseComparison` -- the table of :func:`~smoothdp_nb.core.release.compare_noise`
  (noise std per unit of smooth sensitivity, per family and gamma).
* :class:`ReleaseReport` -- a :class:`~smoothdp_nb.core.release.Release` together with
  the name of what was released, so that it displays like the other results.

Like every result of the package they offer ``.to_frame()`` (tidy pandas
frame), ``.to_dict()`` (JSON-ready), a readable ``str()``, ``.chart()`` (an
Altair chart) and ``_repr_mimebundle_`` (notebook display).  Both go through
the renderer registry :mod:`smoothdp_nb.core.rendering` (filled by the display
package): importing this module costs numpy and pandas only.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from . import rendering
from .array_types import FloatArray, IntArray
from .enclosures import exp_down, exp_up, log10_up
from .formatting import format_log10_up
from .mechanisms import Mechanism
from .profiles import dp_delta as _dp_delta
from .profiles import privacy_profile

if TYPE_CHECKING:
    from .release import Release

__all__ = ["ProfileResult", "profile", "NoiseComparison", "ReleaseReport"]

_LN10 = math.log(10.0)


def _jsonable_float(v: float) -> float | None:
    """JSON has no NaN or infinity: map them to None."""
    v = float(v)
    return v if math.isfinite(v) else None


# --------------------------------------------------------------------------
# privacy profiles
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileResult:
    """The privacy profile ``delta_eps(x)`` of a mechanism on several databases.

    Attributes
    ----------
    labels : tuple
        One label per database (e.g. election years).
    epsilon : numpy.ndarray, shape (E,)
    log_delta : numpy.ndarray, shape (k, E)
        Natural logarithm of ``delta_eps(x)`` per database and epsilon (``-inf``
        for an exact zero; finite far below the float64 range): a proven
        **upper bound** (:func:`~smoothdp_nb.core.profiles.privacy_profile`).
    log_delta_lower : numpy.ndarray, shape (k, E), or None
        The proven lower bounds of the same enclosures.
    dp_delta : numpy.ndarray, shape (k,)
        The worst case over all databases of the same size (Theorem 1), for
        comparison; NaN where it could not be computed.
    mechanism : object
        The mechanism, e.g. ``SamplingHistogram(eta=0.998)``.
    sizes : numpy.ndarray, shape (k,)
        Number of records n of each database.
    source : str
        Where the databases came from (``"inline"`` or a dataset name).

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2: the privacy profile; Theorem 1: DP delta).
    """

    labels: tuple[Hashable, ...]
    epsilon: FloatArray
    log_delta: FloatArray
    dp_delta: FloatArray
    mechanism: Mechanism
    sizes: IntArray
    source: str = "inline"
    log_delta_lower: FloatArray | None = None

    @property
    def delta(self) -> FloatArray:
        """``delta_eps(x)`` as floats, rounded up (a positive delta below the float
        range is the smallest subnormal, never 0)."""
        out: FloatArray = np.minimum(exp_up(self.log_delta), 1.0)
        return out

    def epsilon_for(self, delta: npt.ArrayLike) -> float | FloatArray:
        """The smallest epsilon *of this result's grid* with ``delta_eps(x) <= delta``, per
        database (and target): certified (the computed, upper-bound delta meets the
        target there), as fine as the grid; ``inf`` where no grid point does.  For the
        exact infimum use :func:`~smoothdp_nb.profile_epsilon` on the databases."""
        from .accounting.inverse import epsilon_on_grid

        return epsilon_on_grid(self.epsilon, self.log_delta, delta)

    @property
    def delta_lower(self) -> FloatArray | None:
        """The proven lower bounds as floats (rounded down), or None."""
        return None if self.log_delta_lower is None else exp_down(self.log_delta_lower)

    def to_frame(self) -> pd.DataFrame:
        """Tidy frame: one row per database and epsilon.

        Returns
        -------
        pandas.DataFrame
            Columns ``label, n, epsilon, delta, log10_delta, dp_delta``.
        """
        k, e = self.log_delta.shape
        return pd.DataFrame(
            {
                "label": np.repeat(np.asarray(self.labels, dtype=object), e),
                "n": np.repeat(self.sizes, e),
                "epsilon": np.tile(self.epsilon, k),
                "delta": self.delta.ravel(),
                "log10_delta": log10_up(self.log_delta).ravel(),  # rounded up, like delta
                "dp_delta": np.repeat(self.dp_delta, e),
            }
        )

    def to_dict(self) -> dict[str, object]:
        """JSON-ready description (logs as ``log10_delta``; ``None`` for -inf/NaN)."""
        return {
            "kind": "profile",
            "mechanism": repr(self.mechanism),
            "source": self.source,
            "labels": [x.item() if isinstance(x, np.generic) else x for x in self.labels],
            "n": [int(v) for v in self.sizes],
            "epsilon": [float(v) for v in self.epsilon],
            "log10_delta": [[_jsonable_float(v) for v in row] for row in log10_up(self.log_delta)],
            "dp_delta": [_jsonable_float(v) for v in self.dp_delta],
        }

    def __str__(self) -> str:
        k, e = self.log_delta.shape
        head = (
            f"Privacy profile of {self.mechanism!r} on {k} database(s) ({self.source}), {e} epsilon value(s); "
            "δ ≤: proven upper bounds, rounded up"
        )
        lines = [head]
        width = max(5, max(len(str(x)) for x in self.labels))
        shown_eps = self.epsilon[:6]
        lines.append(
            f"{'label':>{width}}  {'n':>12}  "
            + "  ".join(f"{'epsilon=' + format(v, 'g'):>13}" for v in shown_eps)
            + f"  {'DP delta':>10}"
        )
        rows = range(k) if k <= 30 else list(range(15)) + [-1] + list(range(k - 15, k))
        for i in rows:
            if i == -1:
                lines.append(f"{'...':>{width}}")
                continue
            vals = "  ".join(f"{_upper_text(v / _LN10):>13}" for v in self.log_delta[i, : len(shown_eps)])
            d = float(self.dp_delta[i])
            dp = _upper_text(math.log10(d) if d > 0 else -math.inf) if np.isfinite(d) else "n/a"
            lines.append(f"{self.labels[i]!s:>{width}}  {int(self.sizes[i]):>12,}  {vals}  {dp:>10}")
        if e > len(shown_eps):
            lines.append(f"({e - len(shown_eps)} more epsilon values: see .to_frame())")
        return "\n".join(lines)

    def __repr__(self) -> str:
        k, e = self.log_delta.shape
        return f"<ProfileResult {self.mechanism!r}: {k} database(s) x {e} epsilon>"

    def chart(self) -> Any:
        """Altair chart: log10 delta per database (one colour per epsilon), DP delta as a rule."""
        return rendering.chart(self, "profile")

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, Any]:
        return rendering.mimebundle(self, "profile")


def profile(
    mechanism: Mechanism,
    hists: npt.ArrayLike,
    epsilon: npt.ArrayLike,
    labels: Sequence[Hashable] | None = None,
    *,
    source: str = "inline",
) -> ProfileResult:
    """Privacy profile of ``mechanism`` on each database in ``hists``.

    Parameters
    ----------
    mechanism : SamplingHistogram or NoisySamplingHistogram
    hists : array_like of int, shape (m,) or (k, m)
        Category counts of one or several databases.
    epsilon : float or 1-D array of floats >= 0
    labels : sequence, optional
        One label per database; default ``0, 1, ..., k-1``.
    source : str
        Free text saying where the databases came from (shown in the summary).

    Returns
    -------
    ProfileResult

    Examples
    --------
    >>> from smoothdp_nb import SamplingHistogram
    >>> r = profile(SamplingHistogram(eta=0.5), [[6, 4], [9, 1]], [0.5, 1.0], labels=["a", "b"])
    >>> r.to_frame().shape
    (4, 6)
    """
    h = np.asarray(hists)
    if h.ndim == 1:
        h = h[None, :]
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"epsilon must be a number or a non-empty 1-D list of numbers, got {epsilon!r}")
    enc = privacy_profile(mechanism, h, e, enclosure=True)
    logd = np.asarray(enc.upper, dtype=float).reshape(h.shape[0], e.size)
    logd_lo = np.asarray(enc.lower, dtype=float).reshape(h.shape[0], e.size)
    names: tuple[Hashable, ...] = tuple(range(h.shape[0])) if labels is None else tuple(labels)
    if len(names) != h.shape[0]:
        raise ValueError(f"labels: {len(names)} labels for {h.shape[0]} databases")
    sizes = h.sum(axis=1).astype(np.int64)
    dps = np.full(h.shape[0], np.nan)
    cache: dict[int, float] = {}
    for i, n in enumerate(sizes):
        n = int(n)
        if n not in cache:
            try:
                val = _dp_delta(mechanism, n, e, categories=h.shape[1])
                cache[n] = float(np.max(val))
            except (ValueError, TypeError):  # e.g. ComputationTooLarge for the noisy mechanism
                cache[n] = math.nan
        dps[i] = cache[n]
    return ProfileResult(
        labels=names,
        epsilon=e,
        log_delta=logd,
        dp_delta=dps,
        mechanism=mechanism,
        sizes=sizes,
        source=source,
        log_delta_lower=logd_lo,
    )


# --------------------------------------------------------------------------
# noise comparison
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseComparison:
    """Noise standard deviation per unit of smooth sensitivity, per family and gamma.

    Wraps the frame of :func:`~smoothdp_nb.core.release.compare_noise`
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
            recs.append({k: (_jsonable_float(v) if isinstance(v, float) else v) for k, v in r.items()})
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


# --------------------------------------------------------------------------
# releases
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseReport:
    """A smooth-sensitivity :class:`~smoothdp_nb.core.release.Release` with its context.

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
    """

    release: Release
    name: str = "x"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def value(self) -> float:
        """The private value."""
        return self.release.value

    def to_dict(self) -> dict[str, object]:
        """``kind``, ``name`` and the release's :meth:`~smoothdp_nb.core.release.Release.to_dict`."""
        d: dict[str, Any] = {"kind": "release", "name": self.name}
        d.update(self.release.to_dict())
        return {k: (_jsonable_float(v) if isinstance(v, float) else v) for k, v in d.items()}

    def to_frame(self) -> pd.DataFrame:
        """One-row frame (diagnostics, if any, as ``diagnostics.*`` columns)."""
        frame = self.release.to_frame()
        frame.insert(0, "name", self.name)
        frame.insert(0, "kind", "release")
        return frame

    def __str__(self) -> str:
        r = self.release
        lines = [
            # 10 significant digits, as the summary table (the exact lattice point is in to_dict())
            f"Private {r.query} of {self.name} (n = {r.n}, bounds = [{r.bounds[0]:g}, {r.bounds[1]:g}]): "
            f"{r.value:.10g}",
            f"  on the lattice {_lattice_text(r.lattice)}; guarantee: {r.guarantee}; noise {r.noise}"
            + (f" (shape {r.shape:.6g})" if r.shape is not None else "")
            + f", gamma = {r.gamma:.6g} ({r.gamma_source})",
        ]
        if r.diagnostics is not None:
            d = r.diagnostics
            lines.append(
                f"  diagnostics ({d.label}): smooth sensitivity = {d.smooth_sensitivity:.6g}, "
                f"bound used = {d.sensitivity_bound:.6g}, noise scale = {d.noise_scale:.6g}, "
                f"noise std = {d.noise_std:.6g}"
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


def _lattice_text(step: float) -> str:
    return f"2**{math.frexp(step)[1] - 1} = {step:.6g}"


def _upper_text(log10_value: float) -> str:
    """A proven upper bound (its base-10 log) as text: ``"≤ 1.667e-01"``, ``"0"`` for an exact zero."""
    return "0" if log10_value == -math.inf else f"≤ {format_log10_up(log10_value)}"
