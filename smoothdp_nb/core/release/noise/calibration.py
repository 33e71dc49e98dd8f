"""Calibration by family name: thin validating facades that dispatch through the registry.

Each function looks the family up at call time
(:func:`~smoothdp_nb.core.release.noise.registry.get_family`, names and aliases) and
calls the family's public method, which validates and calls its hooks.

======================  ==========================================  =======================  ==========================
family                  Z and scale per unit of smooth sensitivity  allowed gamma            guarantee
======================  ==========================================  =======================  ==========================
``polyplace``           Z ~ PolyPlace(1, eps/gamma), scale 1/gamma  0 < gamma < eps          eps-DP (Theorem 8)
``cauchy`` (shape c)    (c+1) / (eps - gamma (c+1))                 gamma < eps/(c+1), c>1   eps-DP (Claim 16)
``student_t`` (d)       (d+1) / (2 sqrt(d) (eps - gamma (d+1)))     gamma < eps/(d+1), d>0   eps-DP (Claim 17)
``laplace``             1 / (eps - gamma ln(2/delta))               gamma < eps/ln(2/delta)  (eps, delta)-DP (Claim 18)
``laplace_log_normal``  exp(3 sigma^2/2) / (eps - gamma/sigma)      gamma < eps * sigma      rho-zCDP, rho = eps^2/2
======================  ==========================================  =======================  ==========================

(Theorem 8 and Claims 16-18: Hladik and Tetek; the last row: Wang, Lecture
14, Proposition 3.)

References
----------
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
Theorem 8, Claims 16-18, Appendix B.  Wang, Lecture 14 ("Data-dependent DP
algorithm design"), Proposition 3 (Bun and Steinke 2019).
"""

from __future__ import annotations

from smoothdp_nb.core.release.noise.base import Calibration
from smoothdp_nb.core.release.noise.registry import get_family

__all__ = ["Calibration", "calibrate", "gamma_range", "noise_std", "optimal_shape"]


def gamma_range(family: str, epsilon: float, *, delta: float | None = None, shape: float | None = None) -> float:
    """Supremum of the admissible gamma (exclusive) for ``family`` at ``epsilon``.

    polyplace: epsilon (Theorem 8); cauchy: epsilon/(c+1), or epsilon/4 over
    all c > 3 (Claim 16); student_t: epsilon/(d+1), or epsilon/3 over all
    d > 2 (Claim 17); laplace: epsilon/ln(2/delta) (Claim 18);
    laplace_log_normal: epsilon*sigma, or inf over all sigma.

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Theorem 8 and Claims 16-18.
    """
    return get_family(family).gamma_range(epsilon, delta, shape)


def optimal_shape(family: str, epsilon: float, gamma: float) -> float:
    """Shape parameter minimising the std per unit of smooth sensitivity.

    * ``student_t``: d minimises (d+1)/(sqrt(d-2)(eps - gamma(d+1))); setting
      the log-derivative to zero gives gamma u^2 + eps u - 6 eps = 0 for
      u = d + 1, i.e. d = 12 eps/(eps + sqrt(eps^2 + 24 gamma eps)) - 1
      (finite std needs gamma < eps/3).
    * ``cauchy``: the root in (3, eps/gamma - 1) of the log-derivative of
      Claim 16's std, found by Brent's method to full precision
      (needs gamma < eps/4).
    * ``laplace_log_normal``: sigma minimises 5 sigma^2/2 - log(eps - gamma/sigma),
      the positive root of 5 eps sigma^3 - 5 gamma sigma^2 - gamma = 0.

    Returns ``nan`` where no shape gives a finite std.

    Raises
    ------
    ValueError
        For a family without a free shape parameter (polyplace, laplace).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Claims 16-17 and Appendix B.
    """
    return get_family(family).optimal_shape(epsilon, gamma)


def calibrate(
    family: str, epsilon: float, gamma: float, *, delta: float | None = None, shape: float | None = None
) -> Calibration:
    """Calibrate noise of ``family`` for a gamma-smooth upper bound on the local sensitivity.

    Parameters
    ----------
    family : str
        A registered family or alias (:func:`~smoothdp_nb.core.release.noise.family_names`):
        "polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal".
    epsilon : float
        Privacy parameter, ``epsilon > 0`` (for ``laplace_log_normal`` the
        release is ``rho``-zCDP with ``rho = epsilon**2/2``; Proposition 3).
    gamma : float
        Smoothness of the sensitivity bound; must lie in the family's range
        (see :func:`gamma_range`), e.g. ``0 < gamma < epsilon`` for PolyPlace.
    delta : float, optional
        Required for ``laplace`` (``0 < delta < 1``); ignored otherwise.
    shape : float, optional
        The family's shape parameter (c / d / sigma); ``None`` picks the
        std-minimising value (:func:`optimal_shape`).

    Raises
    ------
    ValueError
        If gamma is outside the family's range, or a parameter is invalid.

    Notes
    -----
    The stated guarantee is proven, not approximately met: the scale is
    rounded up, PolyPlace's alpha down, and epsilon / delta enter as the
    smaller of the double and the decimal printed in ``guarantee`` (the
    argument is in :func:`~smoothdp_nb.core.release.noise.base.cached_calibration`'s
    docstring).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Theorem 8 and Claims 16-18.  Wang, Lecture 14 ("Data-dependent DP
    algorithm design"), Proposition 3 (Bun and Steinke 2019).
    """
    return get_family(family).calibrate(epsilon, gamma, delta, shape)


def noise_std(
    family: str, epsilon: float, gamma: float, *, delta: float | None = None, shape: float | None = None
) -> float:
    """Standard deviation of the noise per unit of smooth sensitivity.

    PolyPlace: ``sqrt(Var PolyPlace(1/gamma, eps/gamma))`` (Theorem 8, Lemma 13);
    cauchy, student_t, laplace: Claims 16, 17, 18 of Hladik and Tetek;
    laplace_log_normal: ``sqrt(2) e^{5 sigma^2/2} / (eps - gamma/sigma)``
    (Proposition 3 of Wang, Lecture 14; zCDP with rho = eps^2/2, so not
    comparable one-to-one).  ``shape=None`` uses the minimising shape (Figure 1).

    Returns
    -------
    float
        ``math.inf`` when the std is infinite or gamma is outside the
        family's range (e.g. PolyPlace with ``epsilon/2 <= gamma``).

    Raises
    ------
    ValueError
        For epsilon <= 0, gamma <= 0, unknown family, missing/invalid delta
        for laplace, or an invalid shape.

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality",
    Theorem 8, Lemma 13, Claims 16-18 and Figure 1.  Wang, Lecture 14
    ("Data-dependent DP algorithm design"), Proposition 3.
    """
    return get_family(family).noise_std(epsilon, gamma, delta, shape)
