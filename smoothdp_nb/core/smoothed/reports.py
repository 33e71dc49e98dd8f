"""The result object of a privacy profile: :class:`ProfileResult`, built by :func:`profile`.

:class:`ProfileResult` holds the privacy profile ``delta_eps(x)`` of a mechanism over several
databases and several epsilon, computed by
:func:`~smoothdp_nb.core.smoothed.profiles.privacy_profile`. Like every result of the package it
offers ``.to_frame()`` (tidy pandas frame), ``.to_dict()`` (JSON-ready), a readable ``str()``,
``.chart()`` (an Altair chart) and ``_repr_mimebundle_`` (notebook display), the last two through
the renderer registry :mod:`smoothdp_nb.core.runtime.rendering` (filled by the display package):
importing this module costs numpy and pandas only.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import exp_down, exp_up, log10_up
from smoothdp_nb.core.numerics.formatting import jsonable_float, upper_bound_text
from smoothdp_nb.core.runtime import rendering
from smoothdp_nb.core.smoothed.accounting.inverse import epsilon_on_grid
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.core.smoothed.profiles import dp_delta as _dp_delta, privacy_profile_enclosure

__all__ = ["ProfileResult", "profile"]

_LN10 = math.log(10.0)


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
        **upper bound** (:func:`~smoothdp_nb.core.smoothed.profiles.privacy_profile`).
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
            "log10_delta": [[jsonable_float(v) for v in row] for row in log10_up(self.log_delta)],
            "dp_delta": [jsonable_float(v) for v in self.dp_delta],
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
            vals = "  ".join(f"{upper_bound_text(v / _LN10):>13}" for v in self.log_delta[i, : len(shown_eps)])
            d = float(self.dp_delta[i])
            dp = upper_bound_text(math.log10(d) if d > 0 else -math.inf) if np.isfinite(d) else "n/a"
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
    enc = privacy_profile_enclosure(mechanism, h, e)
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
