"""Private release of a statistic with noise scaled to its smooth sensitivity.

``release(x, query, epsilon, gamma, noise, bounds)`` computes the
gamma-smooth sensitivity ``SS`` of the query (:mod:`.sensitivity`) and returns
``q(x) + SS * scale * Z`` with ``Z`` and ``scale`` from
:func:`.noise.calibrate` (Hladik-Tetek Theorem 8 for PolyPlace, Claims 16-18
for generalized Cauchy / Student's t / Laplace, Bun-Steinke Proposition 3 for
Laplace-log-normal).

Privacy hygiene
---------------
* ``rng=None`` draws from a fresh generator seeded by OS entropy; pass an int
  or a ``numpy.random.Generator`` only for reproducible experiments.
* The true statistic is never stored unless ``reveal_true=True``; it never
  appears in ``repr``, ``str``, :meth:`Release.to_dict` or
  :meth:`Release.to_frame`.
* ``gamma`` is never chosen from the data (that would leak); ``gamma=None``
  uses the data-independent default of :data:`DEFAULT_GAMMA` and the result
  says so (``gamma_source``).
* ``noise_scale`` and ``smooth_sensitivity`` are functions of the data that
  are **not** covered by the privacy guarantee: they are for the curator's
  own diagnostics and must not be published alongside the value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import noise as _noise
from .sensitivity import _query_name, evaluate_query, smooth_sensitivity

__all__ = ["Release", "release", "compare_noise", "default_gamma", "DEFAULT_GAMMA"]

#: data-independent default smoothness: a fraction of epsilon (laplace: NRS's
#: beta = epsilon / (2 ln(2/delta)), half its admissible range)
DEFAULT_GAMMA = {
    "polyplace": "epsilon / 10",
    "cauchy": "epsilon / 10",
    "student_t": "epsilon / 10",
    "laplace_log_normal": "epsilon / 10",
    "laplace": "epsilon / (2 ln(2/delta))",
}


def default_gamma(noise: str, epsilon: float, delta: Optional[float] = None) -> float:
    """The data-independent default gamma for a noise family (see :data:`DEFAULT_GAMMA`)."""
    family = _noise._check_family(noise)
    eps = _noise._positive(epsilon, "epsilon")
    if family == "laplace":
        d = _noise._check_delta(family, delta)
        return eps / (2.0 * math.log(2.0 / d))
    return eps / 10.0


def _rng(rng: Any) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng()  # fresh OS entropy
    if isinstance(rng, bool):
        raise TypeError("rng must be None, an int seed or a numpy.random.Generator, got bool")
    if isinstance(rng, (Integral, np.integer)):
        if rng < 0:
            raise ValueError(f"rng seed must be a non-negative int, got {rng!r}")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")


@dataclass(frozen=True)
class Release:
    """Result of :func:`release`.

    Attributes
    ----------
    value : float
        The noisy (private) release.
    epsilon, delta : float
        Privacy parameters (delta is None for pure DP and zCDP families).
    rho : float or None
        zCDP parameter for ``laplace_log_normal`` (``epsilon**2 / 2``).
    guarantee : str
        Human-readable privacy statement.
    gamma : float
        Smoothness used; ``gamma_source`` is ``"user"`` or a description of
        the default.
    noise : str
        Noise family; ``shape`` its shape parameter (alpha for PolyPlace).
    noise_scale : float
        ``SS * scale``, the multiplier of the standard noise variable
        (data-dependent: do not publish).
    noise_std : float
        Standard deviation of the added noise (data-dependent: do not publish).
    smooth_sensitivity : float
        The gamma-smooth sensitivity (data-dependent: do not publish).
    query, n, bounds : description of the query.
    true_value : float or None
        The un-noised statistic, only when ``reveal_true=True`` was passed.
    """

    value: float
    epsilon: float
    delta: Optional[float]
    gamma: float
    noise: str
    noise_scale: float
    noise_std: float
    smooth_sensitivity: float
    query: str
    n: int
    bounds: Tuple[float, float]
    shape: Optional[float] = None
    rho: Optional[float] = None
    guarantee: str = ""
    gamma_source: str = "user"
    true_value: Optional[float] = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        d = f", delta={self.delta:g}" if self.delta is not None else ""
        r = f", rho={self.rho:g}" if self.rho is not None else ""
        shape = f", shape={self.shape:.6g}" if self.shape is not None else ""
        return (
            f"Release(value={self.value:.6g}, query={self.query!r}, epsilon={self.epsilon:g}{d}{r}, "
            f"gamma={self.gamma:.6g} ({self.gamma_source}), noise={self.noise!r}{shape}, "
            f"noise_scale={self.noise_scale:.6g}, guarantee={self.guarantee!r})"
        )

    __str__ = __repr__

    def to_dict(self) -> Dict[str, Any]:
        """All public fields except ``true_value`` (never exported)."""
        return {
            "value": self.value, "query": self.query, "n": self.n,
            "bounds_low": self.bounds[0], "bounds_high": self.bounds[1],
            "epsilon": self.epsilon, "delta": self.delta, "rho": self.rho,
            "guarantee": self.guarantee, "gamma": self.gamma, "gamma_source": self.gamma_source,
            "noise": self.noise, "shape": self.shape, "noise_scale": self.noise_scale,
            "noise_std": self.noise_std, "smooth_sensitivity": self.smooth_sensitivity,
        }

    def to_frame(self) -> pd.DataFrame:
        """One-row pandas DataFrame of :meth:`to_dict` (no ``true_value``)."""
        return pd.DataFrame([self.to_dict()])


def release(
    x: Any,
    query: str = "median",
    epsilon: float = 1.0,
    gamma: Optional[float] = None,
    noise: str = "polyplace",
    bounds: Optional[Tuple[float, float]] = None,
    rng: Any = None,
    delta: Optional[float] = None,
    shape: Optional[float] = None,
    trim: Any = None,
    reveal_true: bool = False,
) -> Release:
    """Release ``query(x)`` privately with smooth-sensitivity noise.

    Parameters
    ----------
    x : array_like, 1-D
        The data; values outside ``bounds`` are clipped with a warning.
    query : {"median", "trimmed_mean", "mean"}
        ``median`` is the lower median for even n (see :mod:`.sensitivity`).
    epsilon : float
        ``epsilon > 0``.  For ``laplace_log_normal`` the release is
        ``rho``-zCDP with ``rho = epsilon**2/2`` (Proposition 3).
    gamma : float, optional
        Smoothness; must be in the family's range (PolyPlace:
        ``0 < gamma < epsilon``, Theorem 8).  ``None`` uses a data-independent
        default (:data:`DEFAULT_GAMMA`), reported in ``gamma_source``.
    noise : {"polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal"}
    bounds : (low, high)
        Data-independent domain, required.
    rng : None, int or numpy.random.Generator
        ``None``: fresh OS entropy (use this for real releases).
    delta : float, optional
        Required for ``laplace`` (``0 < delta < 1``).
    shape : float, optional
        c / d / sigma of the family; ``None`` minimises the noise std.
    trim : int or float, optional
        For ``trimmed_mean``.
    reveal_true : bool
        Store the un-noised value in ``true_value`` (for teaching and
        testing; it is still never printed or exported).

    Returns
    -------
    Release
    """
    q = _query_name(query)
    family = _noise._check_family(noise)
    eps = _noise._positive(epsilon, "epsilon")
    if gamma is None:
        g = default_gamma(family, eps, delta)
        gamma_source = f"default: {DEFAULT_GAMMA[family]}"
    else:
        g = _noise._positive(gamma, "gamma")
        gamma_source = "user"
    cal = _noise.calibrate(family, eps, g, delta=delta, shape=shape)  # validates gamma's range
    gen = _rng(rng)
    ss = smooth_sensitivity(x, q, g, bounds=bounds, trim=trim)
    true = evaluate_query(x, q, bounds=bounds, trim=trim)
    z = float(cal.distribution.rvs(random_state=gen))
    value = true + ss * cal.scale * z
    return Release(
        value=float(value), epsilon=eps, delta=cal.delta, gamma=g, noise=family,
        noise_scale=float(ss * cal.scale), noise_std=float(ss * cal.std),
        smooth_sensitivity=float(ss), query=q, n=int(np.size(x)),
        bounds=(float(bounds[0]), float(bounds[1])), shape=cal.shape, rho=cal.rho,
        guarantee=cal.guarantee, gamma_source=gamma_source,
        true_value=float(true) if reveal_true else None,
    )


def compare_noise(
    epsilon: float,
    gamma: Union[float, Iterable[float]],
    delta: Optional[float] = None,
    families: Sequence[str] = ("polyplace", "student_t", "cauchy", "laplace"),
    reference: bool = False,
) -> pd.DataFrame:
    """Tidy table of noise std per unit of smooth sensitivity (Figure 1 of Hladik-Tetek).

    Parameters
    ----------
    epsilon : float
    gamma : float or iterable of floats
    delta : float, optional
        Needed when ``"laplace"`` is among ``families`` (Figure 1 uses 1e-5).
    families : sequence of str
        Default: the four families of Figure 1.
    reference : bool
        Add rows ``family="laplace_global"`` with ``sqrt(2)/epsilon``, the
        Laplace mechanism per unit of *global* sensitivity (Figure 1's dashed line).

    Returns
    -------
    pandas.DataFrame
        Columns ``family, epsilon, delta, gamma, shape, std`` (``std`` is
        ``inf`` where infinite / out of range, ``shape`` NaN where none).
    """
    eps = _noise._positive(epsilon, "epsilon")
    gammas = np.atleast_1d(np.asarray(gamma, dtype=float)).ravel()
    if gammas.size == 0:
        raise ValueError("gamma must contain at least one value > 0")
    fams = [_noise._check_family(f) for f in families]
    rows = []
    for fam in fams:
        for g in gammas:
            std = _noise.noise_std(fam, eps, float(g), delta=delta if fam == "laplace" else None)
            shp = math.nan
            if fam in ("cauchy", "student_t", "laplace_log_normal") and math.isfinite(std):
                shp = _noise.optimal_shape(fam, eps, float(g))
            elif fam == "polyplace":
                shp = eps / float(g)
            rows.append({"family": fam, "epsilon": eps, "delta": delta if fam == "laplace" else None,
                         "gamma": float(g), "shape": shp, "std": std})
    if reference:
        for g in gammas:
            rows.append({"family": "laplace_global", "epsilon": eps, "delta": None,
                         "gamma": float(g), "shape": math.nan, "std": math.sqrt(2.0) / eps})
    return pd.DataFrame(rows, columns=["family", "epsilon", "delta", "gamma", "shape", "std"])
