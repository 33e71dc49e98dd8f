"""What a noise family is: an abstract class with one subclass per distribution (scipy.stats' model).

A family owns everything the package knows about one noise distribution for
smooth-sensitivity releases: its name, chart label and aliases, its scipy
distribution, its shape parameter, its admissible gamma range, the calibration
of its theorem (with the scale rounded up so that the stated guarantee is
proven), the standard deviation per unit of smooth sensitivity, its default
gamma, whether it needs delta, and the exact Arb tail the lattice sampler
(:mod:`smoothdp_nb.core.release.lattice`) compares uniforms with.

The public methods of :class:`NoiseFamily` validate their arguments once and
call private hooks on validated floats; a subclass overrides the hooks only:

* required: :meth:`NoiseFamily._gamma_sup`, :meth:`NoiseFamily._calibrate`,
  :meth:`NoiseFamily._std`, :meth:`NoiseFamily.distribution`,
  :meth:`NoiseFamily.tail_enclosure`;
* when the family has a free shape (``free_shape = True``):
  :meth:`NoiseFamily._optimal_shape`;
* optional: :meth:`NoiseFamily._default_gamma`, :meth:`NoiseFamily._range_note`,
  :meth:`NoiseFamily.cdf_enclosure`, :meth:`NoiseFamily.fixed_shape`.

A family becomes visible to :func:`~smoothdp_nb.core.release.noise.calibrate`,
:func:`~smoothdp_nb.release`, the spec, the panels and the charts once it is
registered (:func:`~smoothdp_nb.core.release.noise.registry.register_family`).
"""

from __future__ import annotations

import abc
import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, Protocol

import numpy as np
import numpy.typing as npt
from flint import arb

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.validation import as_positive, as_real

__all__ = [
    "Calibration",
    "FrozenNoise",
    "NoiseFamily",
    "cached_calibration",
    "calibration_value",
    "stated_decimal",
]


class FrozenNoise(Protocol):
    """A frozen distribution of the standardised noise Z (a frozen scipy distribution is one).

    Floats for simulation and plots: a release samples the lattice exactly
    (:mod:`smoothdp_nb.core.release.lattice`), never ``rvs``.
    """

    def pdf(self, x: npt.ArrayLike) -> FloatArray | np.float64: ...
    def logpdf(self, x: npt.ArrayLike) -> FloatArray | np.float64: ...
    def cdf(self, x: npt.ArrayLike) -> FloatArray | np.float64: ...
    def sf(self, x: npt.ArrayLike) -> FloatArray | np.float64: ...
    def ppf(self, q: npt.ArrayLike) -> FloatArray | np.float64: ...
    def isf(self, q: npt.ArrayLike) -> FloatArray | np.float64: ...
    def rvs(
        self, size: int | tuple[int, ...] | None = None, random_state: object = None
    ) -> FloatArray | np.float64: ...
    def mean(self) -> float: ...
    def var(self) -> float: ...
    def std(self) -> float: ...


@dataclass(frozen=True)
class Calibration:
    """How to add noise for one release: ``noise = SS * scale * distribution.rvs()``.

    Attributes
    ----------
    family, epsilon, gamma, delta : as requested
    shape : float or None
        c (cauchy), d (student_t), sigma (laplace_log_normal), alpha = eps/gamma
        rounded **down** to a double (polyplace).
    scale : float
        Multiplier per unit of smooth sensitivity: the exact constant of the
        family's theorem rounded **up** to a double (see :func:`cached_calibration`).
    distribution : frozen scipy distribution of the standardised noise Z.
    std : float
        Standard deviation of ``scale * Z`` (``inf`` if infinite).
    guarantee : str
        The privacy statement, e.g. ``"1-DP"`` or ``"rho-zCDP with rho=0.5"``.
    rho : float or None
        zCDP parameter (laplace_log_normal only): ``epsilon**2 / 2``.
    """

    family: str
    epsilon: float
    gamma: float
    delta: float | None
    shape: float | None
    scale: float
    distribution: FrozenNoise
    std: float
    guarantee: str
    rho: float | None = None


def stated_decimal(x: float) -> Fraction:
    """The decimal a guarantee text states for ``x`` (``f"{x:g}"``), exactly."""
    return Fraction(f"{x:g}")


def calibration_value(x: float) -> Fraction:
    """``min(x, stated decimal of x)``: calibrating at it makes both the double and the text true."""
    return min(Fraction(x), stated_decimal(x))


class NoiseFamily(abc.ABC):
    """A noise distribution for smooth-sensitivity releases, with its calibration.

    Subclass it, set the class attributes, override the hooks listed in the
    module docstring, and register an instance
    (:func:`~smoothdp_nb.core.release.noise.registry.register_family`).

    Attributes
    ----------
    name : str
        Canonical name: lower case, words joined by ``_``.
    label : str
        Legend name in charts and panels.
    aliases : tuple of str
        Other spellings accepted wherever a family is named (case, ``-`` and
        spaces are ignored).
    shape_name : str or None
        Name of the shape parameter of the standardised noise Z (``alpha``,
        ``c``, ``d``, ``sigma``); None when Z has none (Laplace).
    free_shape : bool
        Whether the user may choose the shape (else the theorem fixes it, as
        PolyPlace's ``alpha = epsilon / gamma``); ``shape=None`` then picks
        the std-minimising shape (:meth:`optimal_shape`).
    shape_lower : float
        A user shape must satisfy ``shape_lower < shape < inf``.
    needs_delta : bool
        The guarantee is (epsilon, delta)-DP and delta is required.
    default_gamma_text : str
        How :meth:`default_gamma` is chosen, for ``Release.gamma_source``.
    guarantee : str
        The kind of guarantee and the theorem that proves it.
    log_normal_mixture : bool
        Z is ``X e^{shape Y}`` with Y standard normal and X the variable whose
        tail :meth:`tail_enclosure` encloses (the sampler draws Y itself).
    privacy_kind : str
        What the calibration at ``(epsilon, delta)`` proves, for accountants
        that compose releases (:class:`~smoothdp_nb.core.release.odometer.PrivacyOdometer`):
        ``"pure"`` (epsilon-DP), ``"approximate"`` ((epsilon, delta)-DP) or
        ``"zcdp"`` (rho-zCDP with ``rho = epsilon^2 / 2``), each at the
        calibrated values of :func:`calibration_value`.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    shape_name: ClassVar[str | None] = None
    free_shape: ClassVar[bool] = False
    shape_lower: ClassVar[float] = 0.0
    needs_delta: ClassVar[bool] = False
    default_gamma_text: ClassVar[str] = "epsilon / 10"
    guarantee: ClassVar[str] = ""
    log_normal_mixture: ClassVar[bool] = False
    privacy_kind: ClassVar[str] = "pure"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # ----------------------------------------------------------------------- #
    # validation
    # ----------------------------------------------------------------------- #
    def check_delta(self, delta: object) -> float | None:
        """Validated delta: required in ``(0, 1)`` if :attr:`needs_delta`, else ignored (None)."""
        if self.needs_delta:
            if delta is None:
                raise ValueError(f"delta is required for family {self.name!r}: 0 < delta < 1")
            d = as_real(delta, "delta", finite=False)
            if not (0.0 < d < 1.0):
                raise ValueError(f"delta must satisfy 0 < delta < 1, got {delta!r}")
            return d
        if delta is not None:
            d = as_real(delta, "delta", finite=False)
            if not (0.0 <= d < 1.0):
                raise ValueError(f"delta must satisfy 0 <= delta < 1, got {delta!r}")
        return None

    def check_shape(self, shape: object) -> float | None:
        """Validated user shape: None, or ``shape_lower < shape < inf`` for a family with a free shape."""
        if shape is None:
            return None
        if not self.free_shape:
            raise ValueError(f"shape must be None for family {self.name!r} (it has no free shape parameter)")
        v = as_real(shape, "shape", finite=False)
        if not (self.shape_lower < v < math.inf):
            raise ValueError(
                f"shape ({self.shape_name}) must satisfy {self.shape_lower:g} < shape < inf for family "
                f"{self.name!r}, got {shape!r}"
            )
        return v

    # ----------------------------------------------------------------------- #
    # public template methods: validate, then call the hooks
    # ----------------------------------------------------------------------- #
    def gamma_range(self, epsilon: float, delta: float | None = None, shape: float | None = None) -> float:
        """Supremum of the admissible gamma (exclusive) at ``epsilon`` (over all shapes if ``shape=None``)."""
        eps = as_positive(epsilon, "epsilon")
        return self._gamma_sup(eps, self.check_delta(delta), self.check_shape(shape))

    def optimal_shape(self, epsilon: float, gamma: float) -> float:
        """The shape minimising the std per unit of smooth sensitivity; ``nan`` where none gives a finite std."""
        eps = as_positive(epsilon, "epsilon")
        g = as_positive(gamma, "gamma")
        if not self.free_shape:
            raise ValueError(f"family {self.name!r} has no free shape parameter")
        return self._optimal_shape(eps, g)

    def calibrate(
        self, epsilon: float, gamma: float, delta: float | None = None, shape: float | None = None
    ) -> Calibration:
        """The proven calibration at ``(epsilon, gamma)`` (see :func:`smoothdp_nb.core.release.noise.calibrate`)."""
        eps = as_positive(epsilon, "epsilon")
        g = as_positive(gamma, "gamma")
        d = self.check_delta(delta)
        s = self.check_shape(shape)
        cal = cached_calibration(self, eps, g, d, s)
        if not math.isfinite(cal.scale):  # e.g. Laplace-log-normal's e^(3 shape^2 / 2) beyond the doubles
            raise ValueError(
                f"the {self.name} noise scale for epsilon={eps:g}, gamma={g:g}, shape={s} is beyond the "
                "largest double: choose a smaller shape (or a larger epsilon)"
            )
        return cal

    def noise_std(self, epsilon: float, gamma: float, delta: float | None = None, shape: float | None = None) -> float:
        """Std per unit of smooth sensitivity; ``inf`` when infinite or gamma is out of range."""
        eps = as_positive(epsilon, "epsilon")
        g = as_positive(gamma, "gamma")
        d = self.check_delta(delta)
        s = self.check_shape(shape)
        if not g < self._gamma_sup(eps, d, s):
            return math.inf
        if self.free_shape and s is None:
            s = self._optimal_shape(eps, g)
            if math.isnan(s):
                return math.inf
        return self._std(eps, g, d, s)

    def default_gamma(self, epsilon: float, delta: float | None = None) -> float:
        """The data-independent default gamma (:attr:`default_gamma_text`); delta is read only if needed."""
        eps = as_positive(epsilon, "epsilon")
        return self._default_gamma(eps, self.check_delta(delta) if self.needs_delta else None)

    def fixed_shape(self, epsilon: float, gamma: float) -> float:
        """The shape the family's theorem fixes at ``(epsilon, gamma)`` (no free choice); ``nan`` if none."""
        return math.nan

    @abc.abstractmethod
    def distribution(self, shape: float | None) -> FrozenNoise:
        """The frozen scipy distribution of the standardised noise Z with this shape (floats: not a release)."""

    # ----------------------------------------------------------------------- #
    # exact enclosures for the lattice sampler (no validation: the sampler's contract)
    # ----------------------------------------------------------------------- #
    @abc.abstractmethod
    def tail_enclosure(self, a: arb, shape: float) -> arb:
        """A ball containing ``P(X > a)`` for every point of the ball ``a > 0`` (X: Z, or the mixture's X).

        Evaluated at Arb's working precision; the sampler needs an absolute
        radius of about ``2^-(prec - 28)`` for its stated failure bound, a
        wider ball only costs a second round.  ``shape`` is 0.0 for a family
        without one.
        """

    def cdf_enclosure(self, a: arb, sign: int, shape: float) -> arb:
        """A ball containing ``F(a) = P(Z <= a)`` for a ball ``a`` of exact sign ``sign`` (Z symmetric)."""
        if sign == 0:
            return arb(0.5)
        return self.tail_enclosure(-a, shape) if sign < 0 else 1 - self.tail_enclosure(a, shape)

    # ----------------------------------------------------------------------- #
    # hooks
    # ----------------------------------------------------------------------- #
    @abc.abstractmethod
    def _gamma_sup(self, eps: float, delta: float | None, shape: float | None) -> float:
        """Supremum of the admissible gamma on validated arguments."""

    @abc.abstractmethod
    def _calibrate(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> Calibration:
        """The calibration on validated arguments; every number rounded in the safe direction."""

    @abc.abstractmethod
    def _std(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        """Std per unit of smooth sensitivity, gamma in range and (free) shape resolved."""

    def _optimal_shape(self, eps: float, gamma: float) -> float:
        """The std-minimising shape (families with a free shape override this)."""
        raise ValueError(f"family {self.name!r} has no free shape parameter")

    def _default_gamma(self, eps: float, delta: float | None) -> float:
        return eps / 10.0

    def _range_note(self, delta: float | None, shape: float | None) -> str:
        """Extra words for the out-of-range message (e.g. ``" (c=4)"``)."""
        return ""

    # ----------------------------------------------------------------------- #
    # helpers for the hooks
    # ----------------------------------------------------------------------- #
    def _check_gamma_in_range(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> None:
        sup = self._gamma_sup(eps, delta, shape)  # arguments validated by the public method
        if not (gamma < sup):
            raise ValueError(
                f"gamma must satisfy 0 < gamma < {sup:.6g} for {self.name} at epsilon={eps:g}"
                f"{self._range_note(delta, shape)}, got {gamma!r}"
            )

    def _given_shape(self, shape: float | None) -> float:
        """A shape that must be there (the hooks of a family whose Z has one)."""
        if shape is None:
            raise ValueError(f"shape is required for family {self.name!r} (its {self.shape_name}), got None")
        return shape

    def _resolved_shape(self, eps: float, gamma: float, delta: float | None, shape: float | None) -> float:
        """The user's shape, or the std-minimising one; gamma checked against the range either way."""
        if shape is None:
            self._check_gamma_in_range(eps, gamma, delta, None)
            return self._optimal_shape(eps, gamma)
        self._check_gamma_in_range(eps, gamma, delta, shape)
        return shape

    def _require_positive_budget(
        self, den: Fraction | arb, eps: float, gamma: float, delta: float | None, shape: float | None
    ) -> None:
        """Refuse a calibration whose budget ``eps - gamma * (...)`` is not proven positive."""
        if not den > 0:
            self._check_gamma_in_range(eps, gamma, delta, shape)  # the usual message, if it applies
            raise ValueError(
                f"gamma must satisfy 0 < gamma < {self._gamma_sup(eps, delta, shape):.6g} for {self.name} "
                f"at epsilon={eps:g} (as stated, {stated_decimal(eps)}), got {gamma!r}: no positive privacy "
                "budget is left"
            )


@functools.lru_cache(maxsize=256)
def cached_calibration(
    family: NoiseFamily, epsilon: float, gamma: float, delta: float | None = None, shape: float | None = None
) -> Calibration:
    """``family``'s calibration (cached: freezing a scipy distribution costs ~1 ms).

    Every number the guarantee rests on is rounded in the safe direction.  The
    mechanisms are ``SS * scale * Z``; each family's theorem holds for
    ``scale`` at the exact value ``c(eps, gamma, ...)``, and a larger scale is
    the same mechanism run with the sensitivity bound ``SS * scale / c`` --
    still a gamma-smooth upper bound on the local sensitivity (multiplying a
    gamma-smooth bound by a constant >= 1 keeps it both) -- so each scale is
    computed exactly (fractions) or as an Arb ball and rounded **up** to a
    double.  A shape the theorem fixes (PolyPlace's ``alpha = eps / gamma``)
    is rounded **down**: the theorem with ``(gamma, eps' = alpha gamma)`` then
    gives ``eps'``-DP with ``eps' <= eps``.  The calibration uses ``eps`` (and
    delta) as ``min(value, stated decimal)``, the decimal being the ``:g``
    text of the guarantee (:func:`calibration_value`), so that both the
    returned double and the printed text are proven.

    The arguments are those :meth:`NoiseFamily.calibrate` validated (once, there).
    """
    return family._calibrate(epsilon, gamma, delta, shape)
