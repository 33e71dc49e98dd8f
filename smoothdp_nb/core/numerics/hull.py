"""Distribution reduction (Proposition 7): keep only the convex-hull vertices of Pi.

Points of Pi are probability vectors, so they live in an affine subspace of
dimension at most m - 1 (the simplex).  ``scipy.spatial.ConvexHull`` needs
full-dimensional input, so we first project the points onto the affine span
they actually occupy (an SVD of the centred points gives its dimension r and
an orthonormal basis), then:

* r = 0: every point is the same distribution -- one vertex;
* r = 1: the points lie on a segment -- its two end points;
* r >= 2: Qhull on the r-dimensional coordinates.

For m = 2 the points are (p, 1 - p), so the hull is simply the smallest and
the largest p.

Duplicates are removed first (the first occurrence is kept).

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 7 (distribution reduction).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.validation import as_float_array, is_data_frame

__all__ = ["HullReduction", "reduce_to_vertices", "as_distributions"]

#: rows of Pi must sum to 1 within this tolerance
SUM_TOL = 1e-9


@dataclass(frozen=True)
class HullReduction:
    """Which rows of Pi are convex-hull vertices, and which were dropped.

    Attributes
    ----------
    vertices : ndarray (l*, m)
        The vertex distributions, in their input order.
    vertex_labels : list
        Labels (DataFrame index, or row numbers) of the vertices.
    dropped_labels : list
        Labels of the rows that are not vertices (interior, on an edge, or
        duplicates) -- they do not change the smoothed delta.
    """

    vertices: FloatArray
    vertex_labels: list[Hashable]
    dropped_labels: list[Hashable] = field(default_factory=list)

    @property
    def message(self) -> str:
        kept = ", ".join(map(str, self.vertex_labels))
        if not self.dropped_labels:
            return f"all {len(self.vertex_labels)} distributions are hull vertices ({kept})"
        return (
            f"kept {len(self.vertex_labels)} convex-hull vertices ({kept}); dropped "
            f"{len(self.dropped_labels)} distributions inside the hull (Proposition 7)"
        )


def as_distributions(pi: object, name: str = "pi") -> tuple[FloatArray, list[Hashable]]:
    """Validate Pi: a (l, m) array (or DataFrame) of probability vectors."""
    if isinstance(pi, (list, tuple)) and pi and all(hasattr(q, "pmf") and hasattr(q, "values") for q in pi):
        # quantized laws (e.g. quantized_gaussian(...)): their pmfs over a common grid
        pi = np.stack([np.asarray(q.pmf, dtype=float) for q in pi])
    if is_data_frame(pi):
        labels = list(pi.index)
        arr = pi.to_numpy(dtype=float)
    else:
        arr = as_float_array(pi, name)  # numbers only: no numeric strings, no bools
        if arr.ndim == 1:
            arr = arr[None, :]
        labels = list(range(arr.shape[0])) if arr.ndim == 2 else []
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (l, m) with l >= 1 rows and m >= 2 categories, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain finite probabilities")
    if np.any(arr < -SUM_TOL):
        raise ValueError(f"{name} rows must be probability vectors: found a negative entry")
    sums = arr.sum(axis=1)
    bad = np.nonzero(np.abs(sums - 1) > SUM_TOL)[0]
    if bad.size:
        raise ValueError(
            f"{name} rows must be probability vectors summing to 1 (tolerance {SUM_TOL:g}); "
            f"row {labels[bad[0]]!r} sums to {sums[bad[0]]!r}"
        )
    arr = np.clip(arr, 0.0, None)
    return arr / arr.sum(axis=1, keepdims=True), labels


def reduce_to_vertices(pi: object) -> HullReduction:
    """The vertices of the convex hull of Pi (Proposition 7; see the module docstring).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 7 (distribution reduction).
    """
    arr, labels = as_distributions(pi)
    if arr.shape[1] == 2:  # rows are (p, 1 - p): one coordinate says it all
        _, first = np.unique(np.round(arr[:, 0], 15), return_index=True)
    else:
        _, first = np.unique(np.round(arr, 15), axis=0, return_index=True)
    first = np.sort(first)
    pts = arr[first]
    if len(pts) == 1:
        keep = [0]
    elif arr.shape[1] == 2:  # a segment: its two ends
        keep = sorted({int(np.argmin(pts[:, 0])), int(np.argmax(pts[:, 0]))})
    else:
        centred = pts - pts.mean(axis=0)
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        r = int(np.sum(s > 1e-12 * max(1.0, s[0])))
        if r == 0:
            keep = [0]
        else:
            coords = centred @ vt[:r].T
            if r == 1:
                keep = sorted({int(np.argmin(coords[:, 0])), int(np.argmax(coords[:, 0]))})
            else:
                from scipy.spatial import (  # deferred: Qhull is slow to load; a segment needs none
                    ConvexHull,
                    QhullError,
                )

                try:
                    keep = sorted(int(i) for i in ConvexHull(coords).vertices)
                except QhullError as exc:  # pragma: no cover - projected input is full-dimensional
                    raise ValueError(f"could not compute the convex hull of pi: {exc}") from None
    kept_rows = first[keep]
    kept_set = set(int(i) for i in kept_rows)
    return HullReduction(
        vertices=arr[kept_rows],
        vertex_labels=[labels[i] for i in kept_rows],
        dropped_labels=[labels[i] for i in range(len(arr)) if i not in kept_set],
    )
