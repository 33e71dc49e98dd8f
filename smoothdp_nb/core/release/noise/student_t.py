"""Student's t noise: distribution, calibration and exact tail.

With ``Z ~ t(d)``, ``SS (d + 1) / (2 sqrt(d) (epsilon - gamma (d + 1))) * Z``
is epsilon-DP for ``gamma < epsilon / (d + 1)`` (Bun and Steinke 2019, as
cited in Hladik and Tetek's Claim 17, which gives the calibration and std;
Wang, Lecture 14 lists it among the admissible noises).

References
----------
Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth
Sensitivity and Mean Estimation", NeurIPS 2019, as cited in Hladik and Tetek,
"Smooth Sensitivity Revisited: Towards Optimality", Claim 17.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx
from scipy import special
from scipy.stats import rv_continuous

from smoothdp_nb.core.numerics.array_types import BoolArray, FloatArray
from smoothdp_nb.core.numerics.ball_arithmetic import arb_from_fraction, float_up, working_precision
from smoothdp_nb.core.numerics.validation import as_positive, as_real, as_rng
from smoothdp_nb.core.release.noise.base import Calibration, FrozenNoise, NoiseFamily, calibration_value
from smoothdp_nb.core.release.noise.registry import register_family

__all__ = ["StudentT", "StudentTFamily", "student_std", "studentt_gen"]


class studentt_gen(rv_continuous):  # type: ignore[misc]  # scipy ships no type information
    """Student's t with ``df`` degrees of freedom (Bun and Steinke; Hladik and Tetek, Claim 17).

    References
    ----------
    Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth Sensitivity and Mean
    Estimation", NeurIPS 2019, as cited in Hladik and Tetek, "Smooth Sensitivity Revisited: Towards
    Optimality", Claim 17.
    """

    def _argcheck(self, df: FloatArray) -> BoolArray:
        return np.isfinite(df) & (df > 0)

    def _logpdf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = (
            special.gammaln((df + 1.0) / 2.0)
            - special.gammaln(df / 2.0)
            - 0.5 * np.log(df * np.pi)
            - (df + 1.0) / 2.0 * np.log1p(x * x / df)
        )  # scipy.special is untyped
        return out

    def _pdf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        return np.exp(self._logpdf(x, df))

    def _cdf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = special.stdtr(df, x)  # scipy.special is untyped
        return out

    def _sf(self, x: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = special.stdtr(df, -x)  # scipy.special is untyped
        return out

    def _ppf(self, q: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = special.stdtrit(df, q)  # scipy.special is untyped
        return out

    def _isf(self, q: FloatArray, df: FloatArray) -> FloatArray:
        out: FloatArray = -special.stdtrit(df, q)  # scipy.special is untyped
        return out

    def _stats(self, df: FloatArray) -> tuple[Any, Any, Any, Any]:
        mean = np.where(df > 1.0, 0.0, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = np.where(df > 2.0, df / (df - 2.0), np.inf)
        var = np.where(df > 1.0, var, np.nan)
        return mean, var, np.where(df > 3.0, 0.0, np.nan), np.nan

    def _rvs(
        self, df: FloatArray, size: int | tuple[int, ...] | None = None, random_state: object = None
    ) -> FloatArray | float:
        return as_rng(random_state, "random_state").standard_t(df, size)


_studentt = studentt_gen(name="student_t")


def StudentT(df: float = 3.0, scale: float = 1.0, loc: float = 0.0) -> FrozenNoise:
    """Frozen Student's t distribution with ``df > 0`` degrees of freedom.

    ``rvs`` draws floats, for simulation only; to publish a noisy value use
    :func:`smoothdp_nb.release` (exact lattice sampling, Mironov 2012).

    Variance ``df/(df-2)`` for ``df > 2``, infinite for ``1 < df <= 2``.

    References
    ----------
    Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
    """
    df = as_real(df, "df", finite=False)
    if not (0.0 < df < math.inf):
        raise ValueError(f"df must satisfy 0 < df < inf for StudentT, got {df!r}")
    frozen: FrozenNoise = _studentt(
        df, loc=as_real(loc, "loc", finite=False), scale=as_positive(scale, "scale")
    )  # scipy is untyped
    return frozen


def student_std(eps: float, gamma: float, d: float) -> float:
    """Claim 17 of Hladik and Tetek: sqrt(d/(d-2)) (d+1) / (2 sqrt(d) (eps - gamma (d+1))).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 17.
    """
    budget = eps - gamma * (d + 1.0)
    if d <= 2.0 or budget <= 0.0:
        return math.inf
    return (d + 1.0) / (2.0 * math.sqrt(d - 2.0) * budget)


# --------------------------------------------------------------------------- #
# the exact tail for the lattice sampler
# --------------------------------------------------------------------------- #
@functools.lru_cache(maxsize=64)
def _student_constants(d: float, prec: int) -> tuple[arb, arb, arb, arb]:
    """d, d/2, log d + log B(d/2, 1/2), and -(prec + 8) log 2, at ``prec`` bits."""
    dd, half = arb(d), arb(0.5)
    log_beta = (dd / 2).lgamma() + half.lgamma() - (dd / 2 + half).lgamma()
    return dd, dd / 2, dd.log() + log_beta, -(prec + 8) * arb(2).log()


def _tail(a: arb, d: float) -> arb:
    """Student's t tail; far out, the ball ``[0, bound]`` when the bound is below the working precision.

    For ``q = 1/2 < 1``, ``(1 - t)^(q - 1)`` increases on ``[0, w]``, so
    ``B(w; p, q) <= (1 - w)^(q - 1) w^p / p`` and ``T(a) <= w^(d/2) / (d B(d/2, 1/2)
    sqrt(1 - w))``.  Where this is below ``2^-(prec + 8)`` the enclosure
    ``[0, bound]`` is as sharp, in absolute terms, as an evaluation at the
    working precision (the comparisons with ``U`` are absolute), and it avoids
    Arb's slow incomplete-beta series deep in the tail at large d.
    """
    dd, d2, log_norm, log_tiny = _student_constants(d, ctx.prec)
    half = arb(0.5)
    a2 = a * a
    den = dd + a2
    if a.mid() < 1:  # v <= 1/(d + 1): I_v(1/2, d/2) < 0.7, the complement does not cancel
        return (1 - (a2 / den).beta_lower(half, d2, regularized=True)) / 2
    log_bound = d2 * (dd / den).log() - (a2 / den).log() / 2 - log_norm
    if log_bound < log_tiny:
        return arb(0).union(log_bound.exp())
    return (dd / den).beta_lower(d2, half, regularized=True) / 2


class StudentTFamily(NoiseFamily):
    """Student's t noise with ``d`` degrees of freedom, epsilon-DP for ``gamma < epsilon / (d + 1)``.

    Scale ``(d + 1) / (2 sqrt(d) (epsilon - gamma (d + 1)))`` (an Arb ball,
    rounded up); ``shape=None`` picks ``d = 12 eps / (eps + sqrt(eps^2 + 24
    gamma eps)) - 1``, the root of the std's log-derivative (finite std needs
    d > 2, so gamma < epsilon / 3).

    References
    ----------
    Bun and Steinke, "Average-Case Averages: Private Algorithms for Smooth
    Sensitivity and Mean Estimation", NeurIPS 2019, as cited in Hladik and
    Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Claim 17.
    """

    name = "student_t"
    label = "Student's t"
    aliases = ("t", "studentt")
    shape_name = "d"
    free_shape = True
    shape_lower = 0.0
    guarantee = "epsilon-DP (Bun and Steinke 2019; Hladik and Tetek, Claim 17)"

    def distribution(self, shape: float | None) -> FrozenNoise:
        return StudentT(self._given_shape(shape))

    def tail_enclosure(self, a: arb, shape: float) -> arb:
        return _tail(a, shape)

    def _gamma_sup(self, eps: float, delta: float | None, shape: float | None) -> float:
        return eps / (shape + 1.0) if shape is not None else eps / 3.0

    def _range_note(self, delta: float | None, shape: float | None) -> str:
        return f" (d={shape:g})" if shape is not None else " (d > 2)"

    def _std(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        return student_std(eps, gamma, self._given_shape(shape))

    def _optimal_shape(self, eps: float, gamma: float) -> float:
        """d minimising (d+1)/(sqrt(d-2)(eps - gamma(d+1))): gamma u^2 + eps u - 6 eps = 0 for u = d + 1."""
        if gamma >= eps / 3.0:
            return math.nan
        return 12.0 * eps / (eps + math.sqrt(eps * eps + 24.0 * gamma * eps)) - 1.0

    def _calibrate(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> Calibration:
        E, G = calibration_value(eps), Fraction(gamma)
        with working_precision(160):
            d = self._resolved_shape(eps, gamma, delta, shape)
            C = Fraction(d)
            budget = E - G * (C + 1)  # pure DP, heavy tails of degree d + 1
            self._require_positive_budget(budget, eps, gamma, delta, d)
            scale = float_up(arb_from_fraction(C + 1) / (2 * arb_from_fraction(C).sqrt() * arb_from_fraction(budget)))
            return Calibration(
                self.name, eps, gamma, None, d, scale, StudentT(d), student_std(eps, gamma, d), f"{eps:g}-DP"
            )


# the family joins the registry when its module is imported: its one home declares it
register_family(StudentTFamily())
