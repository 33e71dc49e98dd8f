"""Laplace noise: distribution, calibration (only (epsilon, delta)-DP with smooth sensitivity) and exact tail.

With ``Z`` standard Laplace, ``SS / (epsilon - gamma ln(2/delta)) * Z`` is
(epsilon, delta)-DP for ``gamma < epsilon / ln(2/delta)`` (Nissim,
Raskhodnikova and Smith 2007, as Lemma 2.9 of Wang, Lecture 14; calibration
and std as Hladik and Tetek's Claim 18).

References
----------
Nissim, Raskhodnikova and Smith, "Smooth Sensitivity and Sampling in Private
Data Analysis", STOC 2007 (Wang, Lecture 14, Lemma 2.9).
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 18.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb
from scipy.stats import rv_continuous

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.ball_arithmetic import arb_from_fraction, float_up, working_precision
from smoothdp_nb.core.numerics.validation import as_positive, as_real, as_rng
from smoothdp_nb.core.release.noise.base import Calibration, FrozenNoise, NoiseFamily, calibration_value
from smoothdp_nb.core.release.noise.registry import register_family

__all__ = ["Laplace", "LaplaceFamily", "laplace_gen", "laplace_tail", "log_two_over_delta"]


class laplace_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Standard Laplace density ``exp(-|x|)/2`` (scale via scipy's ``scale``)."""

    def _logpdf(self, x: FloatArray) -> FloatArray:
        return -np.abs(x) - math.log(2.0)

    def _pdf(self, x: FloatArray) -> FloatArray:
        return 0.5 * np.exp(-np.abs(x))

    def _cdf(self, x: FloatArray) -> FloatArray:
        return np.where(x < 0, 0.5 * np.exp(-np.abs(x)), 1.0 - 0.5 * np.exp(-np.abs(x)))

    def _sf(self, x: FloatArray) -> FloatArray:
        return self._cdf(-x)

    def _ppf(self, q: FloatArray) -> FloatArray:
        return np.where(q < 0.5, np.log(2.0 * q), -np.log(2.0 * (1.0 - q)))

    def _isf(self, q: FloatArray) -> FloatArray:
        return -self._ppf(q)

    def _stats(self) -> tuple[Any, Any, Any, Any]:
        return 0.0, 2.0, 0.0, 3.0

    def _rvs(self, size: int | tuple[int, ...] | None = None, random_state: object = None) -> FloatArray | float:
        return as_rng(random_state, "random_state").laplace(size=size)


_laplace = laplace_gen(name="laplace")


def Laplace(scale: float = 1.0, loc: float = 0.0) -> FrozenNoise:
    """Frozen Laplace distribution with density ``exp(-|x-loc|/scale) / (2 scale)``.

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).

    References
    ----------
    Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
    """
    frozen: FrozenNoise = _laplace(
        loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale")
    )  # scipy is untyped
    return frozen


def log_two_over_delta(delta: float | None) -> float:
    """``ln(2/delta)`` of Claim 18 (Hladik and Tetek; the family ``laplace``, whose delta is required).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 18.
    """
    if delta is None:
        raise ValueError("delta is required for family 'laplace': 0 < delta < 1")
    return math.log(2.0 / delta)


def laplace_tail(a: arb, shape: float = 0.0) -> arb:
    """Ball of ``P(X > a) = e^{-a} / 2``, X standard Laplace, for a ball ``a > 0`` (``shape`` unused)."""
    return (-a).exp() / 2


class LaplaceFamily(NoiseFamily):
    """Laplace noise, (epsilon, delta)-DP for ``gamma < epsilon / ln(2/delta)``.

    Scale ``1 / (epsilon - gamma ln(2/delta))`` (an Arb ball, rounded up);
    std ``sqrt(2)`` times the scale.  The default gamma is
    ``epsilon / (2 ln(2/delta))``, half the admissible range.

    References
    ----------
    Nissim, Raskhodnikova and Smith, "Smooth Sensitivity and Sampling in
    Private Data Analysis", STOC 2007 (Wang, Lecture 14, Lemma 2.9).
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Claim 18.
    """

    name = "laplace"
    label = "Laplace, (ε, δ)-DP"
    privacy_kind = "approximate"
    needs_delta = True
    default_gamma_text = "epsilon / (2 ln(2/delta))"
    guarantee = "(epsilon, delta)-DP (Nissim, Raskhodnikova and Smith 2007; Hladik and Tetek, Claim 18)"

    def distribution(self, shape: float | None) -> FrozenNoise:
        return Laplace()

    def tail_enclosure(self, a: arb, shape: float) -> arb:
        return laplace_tail(a)

    def _gamma_sup(self, eps: float, delta: float | None, shape: float | None) -> float:
        return eps / log_two_over_delta(delta)

    def _range_note(self, delta: float | None, shape: float | None) -> str:
        return f" (ln(2/delta)={log_two_over_delta(delta):.6g})"

    def _std(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        return math.sqrt(2.0) / (eps - gamma * log_two_over_delta(delta))

    def _default_gamma(self, eps: float, delta: float | None) -> float:
        return eps / (2.0 * log_two_over_delta(delta))

    def _calibrate(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> Calibration:
        E, G = calibration_value(eps), Fraction(gamma)
        with working_precision(160):
            self._check_gamma_in_range(eps, gamma, delta, shape)
            if delta is None:  # unreachable after the check above; keeps the cached path safe on its own
                raise ValueError("delta is required for family 'laplace': 0 < delta < 1")
            D = calibration_value(delta)
            den = arb_from_fraction(E) - arb_from_fraction(G) * (2 / arb_from_fraction(D)).log()
            self._require_positive_budget(den, eps, gamma, delta, shape)
            scale = float_up(1 / den)
            return Calibration(
                self.name,
                eps,
                gamma,
                delta,
                None,
                scale,
                Laplace(),
                math.sqrt(2.0) * scale,
                f"({eps:g}, {delta:g})-DP",
            )


# the family joins the registry when its module is imported: its one home declares it
register_family(LaplaceFamily())
