"""Conversions to (epsilon, delta) on a mechanism's curve: the certified theorems, and a mechanism's Renyi epsilon.

The theorems themselves (zCDP, Renyi DP and Gaussian DP to (epsilon, delta), each evaluated in
Arb and rounded up) live in :mod:`smoothdp_nb.core.numerics.conversions` so that the release half
can use them too; they are re-exported here.  :func:`renyi_epsilon` applies the Renyi conversion
to a mechanism per database: it reads the certified database-dependent Renyi divergences of
:func:`~smoothdp_nb.core.smoothed.accounting.renyi.renyi_profile` (upper bounds) at a grid of
orders and converts them (Canonne, Kamath and Steinke 2020, Proposition 12).

What the number means: for the database x, every neighbour x' and both directions, the pair
``(M(x), M(x'))`` is ``(epsilon, delta)``-indistinguishable with the returned epsilon -- the
Renyi route to the database-dependent epsilon of
:func:`~smoothdp_nb.profile_epsilon`.  The direct profile is exact for finite mechanisms and so
never larger; the Renyi route is what an RDP accountant would report, and composes by adding
divergences.

References
----------
I. Mironov, "Renyi differential privacy", CSF 2017, Proposition 3.
C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS
2020, Proposition 12.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatOrArray
from smoothdp_nb.core.numerics.conversions import gdp_epsilon, gdp_to_dp, renyi_to_dp, zcdp_to_dp
from smoothdp_nb.core.smoothed.accounting.renyi import renyi_profile
from smoothdp_nb.core.smoothed.mechanisms import Mechanism

__all__ = ["DEFAULT_ORDERS", "gdp_epsilon", "gdp_to_dp", "renyi_epsilon", "renyi_to_dp", "zcdp_to_dp"]

#: the Renyi orders :func:`renyi_epsilon` converts from by default (inf: the largest privacy loss)
DEFAULT_ORDERS: tuple[float, ...] = (
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0, 64.0,
    128.0, 256.0, 512.0, math.inf,
)  # fmt: skip


def renyi_epsilon(
    mechanism: Mechanism, hist: npt.ArrayLike, delta: float, *, orders: npt.ArrayLike = DEFAULT_ORDERS
) -> FloatOrArray:
    """Database-dependent epsilon at ``delta`` by the Renyi route: certified Renyi divergences, converted.

    Parameters
    ----------
    mechanism : Mechanism
    hist : array_like of int, shape (m,) or (k, m)
        One database or k of them (histograms, as for :func:`~smoothdp_nb.renyi_profile`).
    delta : float
        ``0 < delta < 1``.
    orders : array_like of float
        Renyi orders ``alpha > 1`` (``inf`` allowed); default :data:`DEFAULT_ORDERS`.

    Returns
    -------
    float or ndarray of shape (k,)
        For each database, ``min over the orders`` of Canonne-Kamath-Steinke's conversion of the
        proven upper bound on ``R_alpha(x)``; rounded up (:func:`renyi_to_dp`).

    References
    ----------
    Mironov, "Renyi differential privacy", CSF 2017.  Canonne, Kamath and Steinke, "The discrete
    Gaussian for differential privacy", NeurIPS 2020, Proposition 12.
    """
    alphas = np.atleast_1d(np.asarray(orders, dtype=float)).ravel()
    if alphas.size == 0 or np.isnan(alphas).any() or not (alphas > 1.0).all():
        raise ValueError("orders must be a non-empty list of Renyi orders 1 < alpha <= inf")
    renyi_to_dp([2.0], [0.0], delta)  # validates delta before any divergence is computed
    rows = np.atleast_2d(np.asarray(renyi_profile(mechanism, hist, alphas), dtype=float))
    single = np.ndim(np.asarray(hist)) == 1
    out = np.array([renyi_to_dp(alphas, row, delta) for row in rows], dtype=float)
    return float(out[0]) if single else out
