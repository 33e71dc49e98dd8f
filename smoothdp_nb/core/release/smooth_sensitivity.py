"""Private release of a statistic with noise scaled to its smooth sensitivity.

``release(x, query, epsilon, gamma, noise, bounds)`` releases ``q(x) + s Z``
with ``Z`` and the scale per unit of sensitivity from :func:`.noise.calibrate`
(Hladik-Tetek Theorem 8 for PolyPlace, Claims 16-18 for generalized Cauchy /
Student's t / Laplace, Wang's Lecture 14 Proposition 3, after Bun and Steinke
2019, for Laplace-log-normal) --
but only through its lattice cell, sampled exactly.

Security of the released bits
-----------------------------
* **Lattice.**  The output is ``k * lattice`` with ``lattice`` a power of two
  fixed by public inputs (:func:`.lattice.default_lattice`:
  ``2^(floor(log2(high - low)) - 20)``, or the ``lattice=`` argument), and ``k``
  drawn exactly from the law of ``round((q(x) + s Z) / lattice)`` clamped to
  the lattice points in ``bounds`` (:func:`.lattice.sample_cell`).  A float
  ``q(x) + s Z`` would leak through its low-order bits (Mironov 2012); the
  rounded, clamped value is post-processing of the continuous release, so
  the family's guarantee holds for every bit of ``value``.
* **Sensitivity on a grid.**  The smooth sensitivity is computed at
  ``gamma_s = gamma - ln 2 / D - 2^-30`` (D = 64, finer for small gamma:
  :func:`.sensitivity.sensitivity_grid`), inflated by ``1 + 2^-32`` (covers
  its float rounding), plus, for means, 4 ulps of ``max(|low|, |high|)``
  (covers the rounding of the mean itself), and rounded up to the grid
  ``2^(j/D)``.  A beta-smooth bound rounded up by at most a factor r is
  ``(beta + ln r)``-smooth, so the bound used is gamma-smooth and the
  calibration uses the user's ``gamma`` (Theorem 8 / Claims 16-18 as stated).
  The noise scale then takes only the values of a fixed geometric grid, so
  its last bits carry nothing about the data.
* **Public exports only.**  ``repr``/``str``/:meth:`Release.to_dict`/
  :meth:`Release.to_frame` contain only public numbers: value, lattice,
  query, n, bounds, epsilon, delta, rho, gamma, family, shape, guarantee.
  ``diagnostics=True`` adds the data-dependent smooth sensitivity, bound,
  noise scale and std, labelled as not covered by the guarantee.
  ``true_value`` (only with ``reveal_true=True``) is never exported.
* ``rng=None`` draws the random bits from OS entropy (use it for real
  releases); an int or ``numpy.random.Generator`` only for reproducible
  experiments.  ``gamma`` is never chosen from the data.

References
----------
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Theorem 8 and Claims 16-18.
Wang, Lecture 14 ("Data-dependent DP algorithm design"), Proposition 3.  Bun and
Steinke, "Average-case averages: private algorithms for smooth sensitivity and mean
estimation", NeurIPS 2019.  Mironov, "On significance of the least significant bits
for differential privacy", CCS 2012.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.numerics.formatting import format_param, format_value, lattice_text
from smoothdp_nb.core.numerics.validation import as_bounds, as_float_array, as_positive, as_rng, position
from smoothdp_nb.core.release import lattice as _lattice, timing as _timing
from smoothdp_nb.core.release.methods.base import MethodOutcome
from smoothdp_nb.core.release.methods.registry import DEFAULT_METHOD, canonical_method
from smoothdp_nb.core.release.methods.run import run_method
from smoothdp_nb.core.release.noise import Calibration, get_family
from smoothdp_nb.core.release.noise.registry import families as registered_families
from smoothdp_nb.core.release.sensitivity import (
    clipping_silenced,
    evaluate_query,
    query_name as _query_name,
    round_up_to_grid,
    sensitivity_grid,
    smooth_sensitivity,
)

__all__ = [
    "DEFAULT_GAMMA",
    "MethodRelease",
    "Release",
    "ReleaseDiagnostics",
    "compare_noise",
    "default_gamma",
    "release",
]


class _DefaultGammaTexts(Mapping[str, str]):
    """Family name -> how its default gamma is chosen, read from the registry at each look-up."""

    def __getitem__(self, family: str) -> str:
        return get_family(family).default_gamma_text

    def __iter__(self) -> Iterator[str]:
        return iter([f.name for f in registered_families()])

    def __len__(self) -> int:
        return len(registered_families())

    def __repr__(self) -> str:
        return repr(dict(self))


#: data-independent default smoothness of each registered family: a fraction of epsilon (laplace:
#: NRS's beta = epsilon / (2 ln(2/delta)), half its admissible range)
DEFAULT_GAMMA: Mapping[str, str] = _DefaultGammaTexts()

#: the label every display of the diagnostics carries
#: Smallest gamma a release accepts.  The sensitivity is computed at gamma_s = gamma - ln 2 / D - 2^-30
#: with ln 2 / D <= gamma / 2 (:func:`.sensitivity.sensitivity_grid`), so gamma_s >= gamma / 2 - 2^-30,
#: which is > 0 for every gamma >= 2^-29 (equality would need ln 2 / D = gamma / 2 at gamma = 2^-29,
#: and the D of 2^-29 is 2^30).
MIN_GAMMA = 2.0**-29

DIAGNOSTICS_LABEL = "data-dependent: NOT covered by the privacy guarantee (curator only, do not publish)"


def default_gamma(noise: str, epsilon: float, *, delta: float | None = None) -> float:
    """The data-independent default gamma for a noise family (see :data:`DEFAULT_GAMMA`)."""
    return get_family(noise).default_gamma(epsilon, delta)


def _generator(rng: Any) -> np.random.Generator | None:
    """None (OS entropy for every bit) or a Generator for reproducible experiments (:func:`as_rng`)."""
    return None if rng is None else as_rng(rng, "rng")


def _count_outside(x: Any, low: float, high: float) -> int:
    """Records of ``x`` outside ``[low, high]`` (for the diagnostics only: data-dependent)."""
    arr = as_float_array(x, "x")
    return int(np.count_nonzero((arr < low) | (arr > high)))


@dataclass(frozen=True)
class ReleaseDiagnostics:
    """Data-dependent numbers of one release, for the curator only.

    None of them is covered by the privacy guarantee: for the mean, the smooth
    sensitivity reveals the extreme records; for the median of one record, the
    record.  ``label`` says so wherever they are shown.

    Attributes
    ----------
    smooth_sensitivity : float
        The gamma_s-smooth sensitivity as computed (see :mod:`.release`).
    sensitivity_bound : float
        The grid value ``G_j >= smooth_sensitivity`` actually used.
    noise_scale : float
        ``s``: the multiplier of the standard noise variable Z.
    noise_std : float
        Standard deviation of ``s * Z`` (``inf`` if infinite).
    clipped : int
        How many records lay outside ``bounds`` and were clipped to them.  The release itself
        never says so (no warning): the count is a function of the data.
    label : str
    """

    smooth_sensitivity: float
    sensitivity_bound: float
    noise_scale: float
    noise_std: float
    clipped: int = 0
    label: str = DIAGNOSTICS_LABEL

    def to_dict(self) -> dict[str, Any]:
        return {
            "smooth_sensitivity": self.smooth_sensitivity,
            "sensitivity_bound": self.sensitivity_bound,
            "noise_scale": self.noise_scale,
            "noise_std": self.noise_std,
            "clipped": self.clipped,
            "label": self.label,
        }

    def __repr__(self) -> str:
        return (
            f"ReleaseDiagnostics({self.label}: smooth_sensitivity={self.smooth_sensitivity:.6g}, "
            f"sensitivity_bound={self.sensitivity_bound:.6g}, noise_scale={self.noise_scale:.6g}, "
            f"noise_std={self.noise_std:.6g}, clipped={self.clipped})"
        )


@dataclass(frozen=True)
class Release:
    """Result of :func:`release`: public numbers only (plus opted-in diagnostics).

    Attributes
    ----------
    value : float
        The private release, an exact integer multiple of ``lattice`` inside ``bounds``.
    lattice : float
        The lattice step, a power of two fixed by public inputs.
    query, n, bounds : description of the query (n and bounds are public).
    epsilon, delta : float
        Privacy parameters (delta is None for pure DP and zCDP families).
    rho : float or None
        zCDP parameter for ``laplace_log_normal`` (``epsilon**2 / 2``).
    gamma : float
        Smoothness of the calibration; ``gamma_source`` is ``"user"`` or a
        description of the default.
    noise : str
        Noise family; ``shape`` its shape parameter (alpha for PolyPlace).
    guarantee : str
        Human-readable privacy statement.
    diagnostics : ReleaseDiagnostics or None
        Only with ``diagnostics=True``; data-dependent, not private.
    true_value : float or None
        The un-noised statistic, only with ``reveal_true=True``; never
        printed or exported.
    """

    value: float
    lattice: float
    query: str
    n: int
    bounds: tuple[float, float]
    epsilon: float
    delta: float | None
    rho: float | None
    gamma: float
    gamma_source: str
    noise: str
    shape: float | None
    guarantee: str
    diagnostics: ReleaseDiagnostics | None = None
    true_value: float | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        # every number as a person writes it (smoothdp_nb.core.numerics.formatting): the value to the
        # precision of its lattice, the parameters as given (shape 10, not 9.999999999999998)
        d = f", delta={format_param(self.delta)}" if self.delta is not None else ""
        r = f", rho={format_param(self.rho)}" if self.rho is not None else ""
        shape = f", shape={format_param(self.shape)}" if self.shape is not None else ""
        diag = f", diagnostics={self.diagnostics!r}" if self.diagnostics is not None else ""
        low, high = (format_param(float(b)) for b in self.bounds)
        return (
            f"Release(value={format_value(self.value, self.lattice)}, lattice={lattice_text(self.lattice)}, "
            f"query={self.query!r}, n={self.n}, bounds=({low}, {high}), epsilon={format_param(self.epsilon)}{d}{r}, "
            f"gamma={format_param(self.gamma)} ({self.gamma_source}), noise={self.noise!r}{shape}, "
            f"guarantee={self.guarantee!r}{diag})"
        )

    __str__ = __repr__

    def to_dict(self) -> dict[str, object]:
        """The public fields; ``diagnostics`` (labelled) only if opted in; never ``true_value``."""
        out: dict[str, object] = {
            "value": self.value,
            "lattice": self.lattice,
            "query": self.query,
            "n": self.n,
            "bounds_low": self.bounds[0],
            "bounds_high": self.bounds[1],
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "gamma": self.gamma,
            "gamma_source": self.gamma_source,
            "noise": self.noise,
            "shape": self.shape,
            "guarantee": self.guarantee,
        }
        if self.diagnostics is not None:
            out["diagnostics"] = self.diagnostics.to_dict()
        return out

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame of :meth:`to_dict` (diagnostics as ``diagnostics.*`` columns)."""
        d = self.to_dict()
        d.pop("diagnostics", None)
        if self.diagnostics is not None:  # the same dict to_dict put under "diagnostics"
            d.update({f"diagnostics.{k}": v for k, v in self.diagnostics.to_dict().items()})
        return pd.DataFrame([d])


@dataclass(frozen=True, repr=False)
class MethodRelease(Release):
    """A :class:`Release` made by a data-dependent method other than smooth sensitivity (:mod:`.methods`).

    The smooth-sensitivity fields do not apply: ``gamma`` is NaN, ``noise`` ``"none"``.  Extra
    public fields: ``method``, ``refused`` (the test of propose-test-release or of the stability
    release said ⊥; ``value`` is then NaN), ``quantile`` and ``proposal``.
    """

    method: str = "exponential"
    refused: bool = False
    quantile: float | None = None
    proposal: float | None = None

    @classmethod
    def of(cls, outcome: MethodOutcome) -> MethodRelease:
        """Wrap a method's outcome (public numbers; the true value only if it was asked for)."""
        return cls(
            value=math.nan if outcome.value is None else outcome.value,
            lattice=outcome.lattice,
            query=outcome.query,
            n=outcome.n,
            bounds=outcome.bounds,
            epsilon=outcome.epsilon,
            delta=outcome.delta,
            rho=None,
            gamma=math.nan,
            gamma_source="not used by this method",
            noise="none",
            shape=None,
            guarantee=outcome.guarantee,
            true_value=outcome.true_value,
            method=outcome.method,
            refused=outcome.value is None,
            quantile=outcome.quantile,
            proposal=outcome.proposal,
        )

    def __repr__(self) -> str:
        value = "refused (⊥)" if self.refused else repr(self.value)
        q = f", quantile={self.quantile!r}" if self.quantile is not None else ""
        d = f", delta={self.delta!r}" if self.delta is not None else ""
        p = f", proposal={self.proposal!r}" if self.proposal is not None else ""
        return (
            f"Release(value={value}, method={self.method!r}, lattice={lattice_text(self.lattice)}, "
            f"query={self.query!r}{q}, n={self.n}, bounds={self.bounds!r}, epsilon={self.epsilon!r}{d}{p}, "
            f"guarantee={self.guarantee!r})"
        )

    __str__ = __repr__

    def to_dict(self) -> dict[str, object]:
        """The public fields of a method release (never ``true_value``; ``value`` None when refused)."""
        return {
            "value": None if self.refused else self.value,
            "refused": self.refused,
            "method": self.method,
            "lattice": self.lattice,
            "query": self.query,
            "quantile": self.quantile,
            "n": self.n,
            "bounds_low": self.bounds[0],
            "bounds_high": self.bounds[1],
            "epsilon": self.epsilon,
            "delta": self.delta,
            "proposal": self.proposal,
            "guarantee": self.guarantee,
        }


def release(
    x: npt.ArrayLike,
    query: str = "median",
    epsilon: float = 1.0,
    *,
    gamma: float | None = None,
    noise: str = "polyplace",
    bounds: tuple[float, float] | None = None,
    rng: SeedLike = None,
    delta: float | None = None,
    shape: float | None = None,
    trim: float | None = None,
    lattice: float | None = None,
    diagnostics: bool = False,
    reveal_true: bool = False,
    clip_infinite: bool = False,
    method: str = DEFAULT_METHOD,
    quantile: float | None = None,
    proposal: float | None = None,
) -> Release:
    """Release ``query(x)`` privately with smooth-sensitivity noise (or another method), exactly on a lattice.

    Parameters
    ----------
    x : array_like, 1-D
        The data; values outside ``bounds`` are clipped to them, silently (a warning would say how
        many records lie outside: data-dependent; ``diagnostics=True`` gives the count).
    query : {"median", "trimmed_mean", "mean", "quantile"}
        ``median`` is the lower median for even n (see :mod:`.sensitivity`).  ``"quantile"`` (with
        ``quantile=``) is for the methods other than smooth sensitivity.
    epsilon : float
        ``epsilon > 0``.  For ``laplace_log_normal`` the release is
        ``rho``-zCDP with ``rho = epsilon**2/2`` (Proposition 3).
    gamma : float, optional
        Smoothness; must be in the family's range (PolyPlace:
        ``0 < gamma < epsilon``, Theorem 8).  ``None`` uses a data-independent
        default (:data:`DEFAULT_GAMMA`), reported in ``gamma_source``.
    noise : {"polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal"}
    bounds : (low, high)
        Data-independent domain, required; ``high - low`` must be a finite double.
    rng : None, int or numpy.random.Generator
        ``None``: every random bit from OS entropy (use this for real releases).
    delta : float, optional
        Required for ``laplace`` (``0 < delta < 1``).
    shape : float, optional
        The family's shape (c / d / sigma); ``None`` minimises the noise std.
    trim : int or float, optional
        For ``trimmed_mean``.
    lattice : float, optional
        Output step, a power of two between ``ulp(max(|low|, |high|))`` and
        the largest power of two ``<= high - low``
        (:func:`.lattice.lattice_range`); default
        ``2^(floor(log2(high - low)) - 20)``.
    diagnostics : bool
        Attach the data-dependent :class:`ReleaseDiagnostics` (not private).
    reveal_true : bool
        Store the un-noised value in ``true_value`` (for teaching and
        testing; it is still never printed or exported).
    clip_infinite : bool
        An infinite record is an error naming its position (a ``ValueError``,
        raised at the same public deadline as a release) unless this is True;
        then it is clipped to the bound on its side, like any record outside
        the bounds.

    method : {"smooth-sensitivity", "exponential", "inverse-sensitivity", "propose-test-release", "stability"}
        ``"smooth-sensitivity"`` (the default) adds noise of the family ``noise`` scaled to the smooth
        sensitivity.  The others release the median or a quantile of the data rounded to the lattice
        (:mod:`.methods`): the exponential mechanism with the rank utility and the inverse sensitivity
        mechanism (epsilon-DP), propose-test-release and the stability-based release
        ((epsilon, delta)-DP, ``0 < delta < 0.5``; they may refuse, ``value=None``).  ``gamma``,
        ``shape``, ``trim`` and ``diagnostics`` belong to smooth sensitivity only.
    quantile : float, optional
        ``0 < quantile < 1`` with ``query="quantile"``: the ``ceil(quantile n)``-th smallest record.
    proposal : float, optional
        Propose-test-release's public bound on the local sensitivity (default: 1/64 of
        ``high - low``).

    Returns
    -------
    Release
        For the methods other than smooth sensitivity a :class:`MethodRelease` (a ``Release`` with
        ``method``, ``refused``, ``quantile`` and ``proposal``; ``value`` is NaN when it refused).

    Notes
    -----
    See the module docstring: the sensitivity bound is rounded up to a
    geometric grid and accounted for in gamma (a beta-smooth bound rounded up
    by a factor r is (beta + ln r)-smooth; Theorem 8 / Claims 16-18 are then
    applied with the user's gamma), and ``k`` is sampled exactly
    (:func:`.lattice.sample_cell`, proven Arb enclosures; its work depends
    only on the released value).  The calibration's scale is rounded up and
    PolyPlace's alpha down, so the stated guarantee holds exactly
    (:func:`.noise.calibrate`).

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Theorem 8 and Claims 16-18.
    Wang, Lecture 14 ("Data-dependent DP algorithm design"), Proposition 3.  Mironov, "On significance
    of the least significant bits for differential privacy", CCS 2012.
    """
    chosen = canonical_method(method)
    if chosen != DEFAULT_METHOD:
        for value, name in ((gamma, "gamma"), (shape, "shape"), (trim, "trim")):
            if value is not None:
                raise ValueError(f"{name} is a parameter of method='smooth-sensitivity' only, got method={chosen!r}")
        if noise != "polyplace":
            raise ValueError(f"noise is a parameter of method='smooth-sensitivity' only, got method={chosen!r}")
        if diagnostics is not False:
            raise ValueError(f"diagnostics is a parameter of method='smooth-sensitivity' only, got method={chosen!r}")
        return MethodRelease.of(
            run_method(
                chosen,
                x,
                query,
                epsilon,
                bounds=bounds,
                lattice=lattice,
                rng=rng,
                delta=delta,
                quantile=quantile,
                proposal=proposal,
                reveal_true=reveal_true,
                clip_infinite=clip_infinite,
            )
        )
    if quantile is not None or proposal is not None:
        name = "quantile" if quantile is not None else "proposal"
        raise ValueError(
            f"{name} is not a parameter of method='smooth-sensitivity' (queries: median, trimmed_mean, mean); "
            "pass method='exponential', 'inverse-sensitivity', 'propose-test-release' or 'stability'"
        )
    q = _query_name(query)
    fam = get_family(noise)
    family = fam.name
    eps = as_positive(epsilon, "epsilon")
    if gamma is None:
        g = fam.default_gamma(eps, delta)
        gamma_source = f"default: {fam.default_gamma_text}"
    else:
        g = as_positive(gamma, "gamma")
        gamma_source = "user"
    cal = fam.calibrate(eps, g, delta=delta, shape=shape)  # validates gamma's range
    for flag, name in ((diagnostics, "diagnostics"), (reveal_true, "reveal_true"), (clip_infinite, "clip_infinite")):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {type(flag).__name__}")
    low, high = as_bounds(bounds)  # also: high - low a finite double
    step = _lattice.default_lattice((low, high)) if lattice is None else _lattice.check_lattice(lattice, (low, high))
    if g < MIN_GAMMA:  # the user's gamma and its range, not the internal gamma_s it would make negative
        origin = "" if gamma is not None else f" (the default for epsilon = {eps:g}; pass a larger gamma)"
        raise ValueError(
            f"gamma must be >= 2**-29 (about {MIN_GAMMA:.3g}) for a release, got {g!r}{origin}: the smooth "
            "sensitivity is computed at gamma - ln 2 / D - 2**-30, which must stay > 0"
        )
    denom = sensitivity_grid(g)
    gamma_s = g - math.log(2.0) / denom - 2.0**-30
    # rounding allowance of the float query value (means only; the median is a record)
    slack = 0.0 if q == "median" else 4.0 * math.ulp(max(abs(low), abs(high)))
    floor = max(step * 2.0**-64, 2.0**-1000)
    # data-independent check that the largest possible noise scale is a double
    _, g_max = round_up_to_grid(max((high - low) * (1.0 + 2.0**-32) + slack, floor), denom)
    if not math.isfinite(g_max * cal.scale * (1.0 + 2.0**-40)):
        raise ValueError(
            f"bounds too wide for epsilon={eps:g}, gamma={g:g}: the noise scale would overflow a double; "
            f"need (high - low) * {cal.scale:.4g} < {np.finfo(float).max:.4g}"
        )
    gen = _generator(rng)

    # the time of the data-dependent computation is padded to a deadline measured on a public
    # synthetic database of the same size (see .timing): a function of n and the public inputs
    n = int(np.size(x))
    deadline = _timing.SENSITIVITY_MARGIN * _timing.sensitivity_cost(q, n, trim, low, high, gamma_s) + _timing.FLOOR
    start = time.perf_counter()
    # clipping is part of the mechanism; a warning with the number of clipped records would be
    # a data-dependent output printed beside the release (the diagnostics carry it on request)
    try:
        if not clip_infinite:
            _refuse_infinite(x)
        with clipping_silenced():
            ss = smooth_sensitivity(x, q, gamma_s, bounds=(low, high), trim=trim)
            true = evaluate_query(x, q, bounds=(low, high), trim=trim)
    finally:  # an error about the data (a NaN, an infinite record) is raised at the same deadline
        _timing.wait_until(start, deadline)
    _, bound_used = round_up_to_grid(max(ss * (1.0 + 2.0**-32) + slack, floor), denom)
    s = math.nextafter(bound_used * cal.scale, math.inf)
    k_lo, k_hi = math.ceil(low / step), math.floor(high / step)
    k = _lattice.sample_cell(family, _noise_shape(cal), true, s, step, k_lo, k_hi, gen)
    diag = None
    if diagnostics:
        diag = ReleaseDiagnostics(
            smooth_sensitivity=float(ss),
            sensitivity_bound=bound_used,
            noise_scale=s,
            noise_std=float(bound_used * cal.std),
            clipped=_count_outside(x, low, high),
        )
    return Release(
        value=float(k * step),
        lattice=step,
        query=q,
        n=n,
        bounds=(low, high),
        epsilon=eps,
        delta=cal.delta,
        rho=cal.rho,
        gamma=g,
        gamma_source=gamma_source,
        noise=family,
        shape=cal.shape,
        guarantee=cal.guarantee,
        diagnostics=diag,
        true_value=float(true) if reveal_true else None,
    )


def _refuse_infinite(x: npt.ArrayLike) -> None:
    """An infinite record is an error naming its position, never its sign (the side of the bounds it is on)."""
    try:
        arr = np.asarray(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):  # not numbers: the data check names the first bad record
        return
    bad = np.flatnonzero(np.isinf(arr))
    if bad.size:
        raise ValueError(
            f"{position(int(bad[0]), 'x')} must be finite, got an infinite value (pass clip_infinite=True "
            "to clip infinite records to the bounds)"
        )


def _noise_shape(cal: Calibration) -> float | None:
    """The shape parameter of the standardised noise Z (alpha for PolyPlace, none for Laplace)."""
    return None if get_family(cal.family).shape_name is None else cal.shape


def compare_noise(
    epsilon: float,
    gamma: float | Iterable[float],
    *,
    delta: float | None = None,
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

    References
    ----------
    Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality", Figure 1 and Appendix B.
    """
    eps = as_positive(epsilon, "epsilon")
    gammas = np.atleast_1d(np.asarray(gamma, dtype=float)).ravel()
    if gammas.size == 0:
        raise ValueError("gamma must contain at least one value > 0")
    fams = [get_family(f) for f in families]
    rows = []
    for fam in fams:
        fam_delta = delta if fam.needs_delta else None
        for g in gammas:
            std = fam.noise_std(eps, float(g), delta=fam_delta)
            shp = math.nan
            if fam.free_shape:
                if math.isfinite(std):
                    shp = fam.optimal_shape(eps, float(g))
            else:
                shp = fam.fixed_shape(eps, float(g))
            rows.append(
                {
                    "family": fam.name,
                    "epsilon": eps,
                    "delta": fam_delta,
                    "gamma": float(g),
                    "shape": shp,
                    "std": std,
                }
            )
    if reference:
        for g in gammas:
            rows.append(
                {
                    "family": "laplace_global",
                    "epsilon": eps,
                    "delta": None,
                    "gamma": float(g),
                    "shape": math.nan,
                    "std": math.sqrt(2.0) / eps,
                }
            )
    return pd.DataFrame(rows, columns=["family", "epsilon", "delta", "gamma", "shape", "std"])
