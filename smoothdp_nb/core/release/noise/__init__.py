"""Noise distributions for smooth-sensitivity releases, and their calibration, as registered families.

Each family is a :class:`~.base.NoiseFamily` subclass in its own module
(:mod:`.polyplace`, :mod:`.cauchy`, :mod:`.student_t`, :mod:`.laplace`,
:mod:`.laplace_log_normal`) owning its scipy distribution, calibration, gamma
range, optimal shape, std, guarantee, exact tail for the lattice sampler,
default gamma, label and aliases.  The registry (:mod:`.registry`) is the one
table of names and aliases; everything that names a family asks it at call
time, so a family registered with :func:`register_family` works everywhere
(calibration, :func:`smoothdp_nb.release`, specs, panels, charts).

The distribution constructors return *frozen* scipy distributions (``pdf``,
``logpdf``, ``cdf``, ``sf``, ``ppf``, ``rvs(size, random_state)``, ``mean``,
``var``, ``std``).  ``rvs`` draws **floats**: for simulation and plots, not
releases.  A float ``true + s * Z`` leaks through its low-order bits (Mironov
2012); to publish a value use :func:`smoothdp_nb.release`, which samples the
lattice cell exactly (:mod:`smoothdp_nb.core.release.lattice`).

* :func:`PolyPlace` -- Hladik and Tetek, Definition 6, Lemmas 7 and 13.
* :func:`GeneralizedCauchy` -- density proportional to ``1/(1+|x|^c)``
  (Nissim, Raskhodnikova and Smith 2007, Wang Lecture 14 Lemma 2.7;
  Hladik and Tetek Claim 16).
* :func:`StudentT` -- Bun and Steinke 2019; Hladik and Tetek Claim 17.
* :func:`LaplaceLogNormal` -- ``X * exp(sigma * Y)`` (Bun and Steinke 2019;
  Wang Lecture 14 Proposition 3, concentrated DP).
* :func:`Laplace` -- Nissim, Raskhodnikova and Smith 2007 (Wang Lecture 14
  Lemma 2.9); Hladik and Tetek Claim 18; only (epsilon, delta)-DP.

:func:`calibrate`, :func:`noise_std`, :func:`gamma_range` and
:func:`optimal_shape` take a family name (table in :mod:`.calibration`).

May import: the numerics and the runtime, like the rest of the release half.

References
----------
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality".
Nissim, Raskhodnikova and Smith, "Smooth Sensitivity and Sampling in Private
Data Analysis", STOC 2007.  Bun and Steinke, "Average-Case Averages", NeurIPS
2019.  Wang, Lecture 14 ("Data-dependent DP algorithm design").
"""

from __future__ import annotations

from smoothdp_nb.core.release.noise.base import Calibration, NoiseFamily
from smoothdp_nb.core.release.noise.calibration import calibrate, gamma_range, noise_std, optimal_shape

# isort: off
# Each family registers itself when its module is imported; these imports run in the display
# order of the built-in families (tables, charts, panels), which the registry keeps.
from smoothdp_nb.core.release.noise.polyplace import PolyPlace, PolyPlaceFamily, polyplace_variance
from smoothdp_nb.core.release.noise.cauchy import CauchyFamily, GeneralizedCauchy
from smoothdp_nb.core.release.noise.student_t import StudentT, StudentTFamily
from smoothdp_nb.core.release.noise.laplace import Laplace, LaplaceFamily
from smoothdp_nb.core.release.noise.laplace_log_normal import LaplaceLogNormal, LaplaceLogNormalFamily

# isort: on
from smoothdp_nb.core.release.noise.registry import (
    canonical_family,
    families,
    family_aliases,
    family_names,
    get_family,
    register_family,
    unregister_family,
)

__all__ = [
    "PolyPlace",
    "GeneralizedCauchy",
    "StudentT",
    "LaplaceLogNormal",
    "Laplace",
    "polyplace_variance",
    "family_names",
    "canonical_family",
    "Calibration",
    "calibrate",
    "noise_std",
    "optimal_shape",
    "gamma_range",
    "NoiseFamily",
    "PolyPlaceFamily",
    "CauchyFamily",
    "StudentTFamily",
    "LaplaceFamily",
    "LaplaceLogNormalFamily",
    "families",
    "family_aliases",
    "get_family",
    "register_family",
    "unregister_family",
]
