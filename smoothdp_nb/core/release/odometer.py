"""A curator's privacy budget: releases composed under one (epsilon, delta), refused before they would exceed it.

:class:`PrivacyOdometer` holds a budget ``(epsilon_B, delta_B)`` and releases statistics with
:func:`~smoothdp_nb.core.release.smooth_sensitivity.release`.  Before a release reads any data
or draws any noise, the guarantee of its calibration (stated by its noise family:
:attr:`~smoothdp_nb.core.release.noise.base.NoiseFamily.privacy_kind`) is composed with those
already made; if no accounting below keeps the series within the budget,
:class:`BudgetExceeded` is raised and nothing else happens.

What is proven
--------------
The curator may choose each release (its statistic, noise, epsilon) after seeing the earlier
ones, so the odometer is a *privacy filter* (Rogers, Roth, Ullman and Vadhan 2016): the whole
series is ``(epsilon_B, delta_B)``-DP whatever the adaptive choices, because a release is made
only if the series including it passes one of these fixed tests.  Composition theorems that
assume the privacy parameters fixed in advance (the optimal composition of Kairouz, Oh and
Viswanath, or converting the final rho-zCDP total with the order that suits it) are not valid
under adaptive choice of the parameters, so the odometer does not use them; it uses:

* **basic** (no zCDP release in the series): the epsilons add, pure and approximate, and the
  deltas of the approximate releases add (Dwork and Roth, Theorem 3.16; as a filter,
  Rogers et al. 2016).
* **concentrated** (needs a reserved ``delta_Z > 0``): for each order ``lambda`` of a fixed grid
  ``Lambda`` of ``K = 21`` values (``2^-10 .. 2^10``), the test
  ``sum(eps_approx) + sum(c_lambda) + log(K / delta_Z) / lambda <= epsilon_B``, with
  ``c_lambda = (lambda + 1) rho`` for a rho-zCDP release and ``min(eps, (lambda + 1) eps^2 / 2)``
  for a pure eps-DP one.  Why: write the privacy loss of the series as ``L_A + L_C`` (the
  approximate releases, the others).  A rho-zCDP round has ``E[exp(lambda l) | past] <=
  exp(lambda (lambda + 1) rho)`` (its Renyi divergence of order ``lambda + 1``, Bun and Steinke
  2016, Definition 1.1), a pure eps-DP round both ``l <= eps`` and the same with
  ``rho = eps^2 / 2`` (Bun and Steinke 2016, Proposition 1.4).  So
  ``exp(lambda (L_C - sum c_lambda))`` is a non-negative supermartingale starting at 1 (each
  round's parameters are fixed before it runs), and by Ville's inequality it exceeds
  ``K / delta_Z`` at *any* time with probability at most ``delta_Z / K``; a union bound over the
  grid gives ``L_C <= sum c_lambda + log(K / delta_Z) / lambda`` for every lambda at once, except
  with probability ``delta_Z``.  The bound is uniform in time, so it holds at the adaptively
  chosen end of the series, which is what a filter needs (a conversion at one order chosen
  after the fact would not be).  ``L_A <= sum(eps_approx)`` except on events of total
  probability ``sum(delta_approx)``, as in basic composition.
* the approximate releases' deltas may use ``delta_B - delta_Z`` in every case, so the series is
  ``(epsilon_B, delta_B)``-DP: the privacy loss exceeds ``epsilon_B`` with probability at most
  ``sum(delta_approx) + delta_Z <= delta_B``.

Where the concentrated test applies and is smaller, it makes many small releases cost about
``sqrt(2 log(K / delta_Z) sum eps^2)`` instead of ``sum eps`` (advanced composition); a
Laplace-log-normal release adds in rho.  :attr:`PrivacyOdometer.spent` is the smallest total
over the tests (with ``delta_Z`` counted when that total is the concentrated one).  All sums are
exact rationals of the calibrated parameters; the logarithms are Arb balls; the totals are
rounded up (:mod:`smoothdp_nb.core.numerics.ball_arithmetic`).

Adversary's view: the test reads public parameters only, and a refused release touches neither
the data nor the random source.  The log keeps each release's public parameters and released
value, never the data, diagnostics or a true value.

References
----------
R. Rogers, A. Roth, J. Ullman and S. Vadhan, "Privacy odometers and filters: pay-as-you-go
composition", NeurIPS 2016.
J. Whitehouse, A. Ramdas, R. Rogers and Z. S. Wu, "Fully-adaptive composition in differential
privacy", ICML 2023.
M. Bun and T. Steinke, "Concentrated differential privacy: simplifications, extensions, and lower
bounds", TCC 2016, Definition 1.1 and Proposition 1.4.
C. Dwork and A. Roth, "The algorithmic foundations of differential privacy", 2014, Theorem 3.16.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

import numpy.typing as npt
import pandas as pd
from flint import arb

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.numerics.ball_arithmetic import arb_from_fraction, float_down, float_up, working_precision
from smoothdp_nb.core.numerics.validation import as_bounds, as_positive, as_real
from smoothdp_nb.core.release import lattice as _lattice
from smoothdp_nb.core.release.methods.registry import DEFAULT_METHOD, canonical_method, get_method, method_label
from smoothdp_nb.core.release.noise import get_family
from smoothdp_nb.core.release.noise.base import calibration_value
from smoothdp_nb.core.release.sensitivity import query_name
from smoothdp_nb.core.release.smooth_sensitivity import MIN_GAMMA, Release, release

__all__ = ["BudgetExceeded", "Charge", "PrivacyBudget", "PrivacyOdometer", "LAMBDAS"]

#: the orders of the concentrated test (fixed in advance: the union bound is over them)
LAMBDAS: tuple[float, ...] = tuple(2.0**j for j in range(-10, 11))


class PrivacyBudget(NamedTuple):
    """An (epsilon, delta) pair: a budget, what is spent, or what remains."""

    epsilon: float
    delta: float

    def __str__(self) -> str:
        return f"ε={self.epsilon:.6g}, δ={self.delta:.3g}"


class BudgetExceeded(ValueError):
    """Raised before a release that would take the series beyond the odometer's budget.

    Attributes
    ----------
    request : str
        The refused release's public parameters and guarantee.
    remaining : PrivacyBudget
        What the budget had left when the release was refused.
    """

    def __init__(self, message: str, request: str, remaining: PrivacyBudget) -> None:
        super().__init__(message)
        self.request = request
        self.remaining = remaining


@dataclass(frozen=True)
class Charge:
    """The guarantee of one release, as exact rationals of its calibrated parameters.

    ``kind`` is ``"pure"`` (epsilon-DP), ``"approximate"`` ((epsilon, delta)-DP) or ``"zcdp"``
    (rho-zCDP; ``epsilon`` is the calibrated epsilon with ``rho = epsilon^2 / 2``).
    """

    kind: str
    epsilon: Fraction
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)

    def text(self) -> str:
        if self.kind == "zcdp":
            return f"{float_up(self.rho):.6g}-zCDP"
        if self.kind == "approximate":
            return f"({float_up(self.epsilon):.6g}, {float_up(self.delta):.6g})-DP"
        return f"{float_up(self.epsilon):.6g}-DP"


@dataclass(frozen=True)
class _Total:
    epsilon: float  # rounded up
    delta: Fraction  # exact
    test: str


@dataclass(frozen=True)
class _Sums:
    """The exact running sums the tests read, so that testing one more release costs O(K), not O(releases)."""

    pure: Fraction = Fraction(0)  # sum of the pure epsilons
    eps_a: Fraction = Fraction(0)  # sum of the approximate epsilons
    delta_a: Fraction = Fraction(0)  # sum of the approximate deltas
    rho: Fraction = Fraction(0)  # sum of the zCDP rhos
    zcdp: bool = False  # whether a zCDP release is in the series
    c: tuple[Fraction, ...] = tuple(Fraction(0) for _ in LAMBDAS)  # per order: sum of the pure releases' c_lambda

    def plus(self, charge: Charge) -> _Sums:
        if charge.kind == "approximate":
            return replace(self, eps_a=self.eps_a + charge.epsilon, delta_a=self.delta_a + charge.delta)
        if charge.kind == "zcdp":
            return replace(self, rho=self.rho + charge.rho, zcdp=True)
        e = charge.epsilon
        c = tuple(old + min(e, (Fraction(lam) + 1) * e * e / 2) for old, lam in zip(self.c, LAMBDAS, strict=True))
        return replace(self, pure=self.pure + e, c=c)


def _compose(sums: _Sums, delta_z: Fraction) -> _Total | None:
    """The smallest proven epsilon of the series over the tests of the module docstring; None if none applies."""
    totals: list[_Total] = []
    if not sums.zcdp:
        totals.append(_Total(float_up(sums.pure + sums.eps_a), sums.delta_a, "basic composition"))
    if delta_z > 0:
        with working_precision(128):
            log_k = (arb(len(LAMBDAS)) / arb_from_fraction(delta_z)).log()
            for lam, c in zip(LAMBDAS, sums.c, strict=True):
                exact = sums.eps_a + c + (Fraction(lam) + 1) * sums.rho
                bound = arb_from_fraction(exact) + log_k / arb(lam)
                totals.append(_Total(float_up(bound), sums.delta_a + delta_z, f"concentrated (order {1 + lam:g})"))
    if not totals:
        return None
    return min(totals, key=lambda t: (t.epsilon, t.delta))


class PrivacyOdometer:
    """A curator's privacy budget: releases under one (epsilon, delta), each refused if it would exceed it.

    Parameters
    ----------
    epsilon : float
        The budget's epsilon, ``epsilon > 0``.
    delta : float, default 0.0
        The budget's delta, ``0 <= delta < 1``.  With ``delta = 0`` only pure epsilon-DP releases
        are possible, and they add.
    concentrated_delta : float, optional
        The part ``delta_Z`` of delta reserved for the concentrated test (zCDP releases, and many
        small pure ones); ``0 <= delta_Z <= delta``.  Default: ``delta / 2``.  The approximate
        (Laplace) releases share the rest, ``delta - delta_Z``.

    Notes
    -----
    The composition and its proof are in the module docstring: the series is
    ``(epsilon, delta)``-DP for any adaptive choice of releases; a release is refused with
    :class:`BudgetExceeded` before it reads the data or draws noise.  A release that fails after
    the test (an error about the data, say) is charged all the same: it may have read the data.

    References
    ----------
    Rogers, Roth, Ullman and Vadhan, "Privacy odometers and filters: pay-as-you-go composition",
    NeurIPS 2016.  Bun and Steinke, "Concentrated differential privacy: simplifications,
    extensions, and lower bounds", TCC 2016.

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> odo = sdp.PrivacyOdometer(1.0)
    >>> r = odo.release([1, 2, 3, 4, 5], "median", 0.5, bounds=(0, 10), rng=1)
    >>> odo.spent.epsilon, odo.remaining.epsilon
    (0.5, 0.5)
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, concentrated_delta: float | None = None) -> None:
        self.epsilon = as_positive(epsilon, "epsilon")
        self.delta = as_real(delta, "delta", lo=0.0, hi=1.0, hi_open=True)
        if concentrated_delta is None:
            dz = self.delta / 2.0
        else:
            dz = as_real(concentrated_delta, "concentrated_delta", lo=0.0, hi=self.delta)
        self.concentrated_delta = dz
        self._delta_z = Fraction(dz)
        self._charges: list[Charge] = []
        self._sums = _Sums()
        self._log: list[dict[str, object]] = []
        self._lock = threading.Lock()

    # -- what a release costs -------------------------------------------------------
    @staticmethod
    def charge_of(
        epsilon: float,
        *,
        noise: str = "polyplace",
        gamma: float | None = None,
        delta: float | None = None,
        shape: float | None = None,
        method: str = DEFAULT_METHOD,
    ) -> Charge:
        """The guarantee a release with these public parameters has (its calibration's, or the
        method's: pure epsilon-DP, or (epsilon, delta)-DP for propose-test-release and the
        stability release; no data)."""
        if canonical_method(method) != DEFAULT_METHOD:
            obj = get_method(method)
            eps = as_positive(epsilon, "epsilon")
            if not obj.needs_delta:
                if delta is not None:
                    raise ValueError(f"delta is not used by method={obj.name!r} (pure epsilon-DP); pass delta=None")
                return Charge("pure", calibration_value(eps))
            if delta is None:
                raise ValueError(f"delta is required for method={obj.name!r}: a number with 0 < delta < 0.5")
            d = as_real(delta, "delta", lo=0.0, hi=0.5, lo_open=True, hi_open=True)
            return Charge("approximate", calibration_value(eps), calibration_value(d))
        fam = get_family(noise)
        eps = as_positive(epsilon, "epsilon")
        g = fam.default_gamma(eps, delta) if gamma is None else as_positive(gamma, "gamma")
        cal = fam.calibrate(eps, g, delta=delta, shape=shape)  # validates gamma, delta and shape
        E = calibration_value(cal.epsilon)
        if fam.privacy_kind == "approximate":
            if cal.delta is None:  # a family that states (epsilon, delta)-DP needs its delta
                raise ValueError(f"delta is required for family {fam.name!r}: 0 < delta < 1")
            return Charge("approximate", E, calibration_value(cal.delta))
        if fam.privacy_kind == "zcdp":
            return Charge("zcdp", E, rho=E * E / 2)
        if fam.privacy_kind != "pure":
            raise ValueError(
                f"noise family {fam.name!r} states privacy_kind={fam.privacy_kind!r}; the odometer composes "
                "'pure', 'approximate' and 'zcdp'"
            )
        return Charge("pure", E)

    def _total(self, sums: _Sums) -> _Total | None:
        """The proven total of a series with these sums, or None if no test of the module docstring keeps it in the budget."""
        if sums.delta_a > Fraction(self.delta) - self._delta_z:
            return None
        total = _compose(sums, self._delta_z)
        if total is None or total.epsilon > self.epsilon or total.delta > Fraction(self.delta):
            return None
        return total

    def would_spend(
        self,
        epsilon: float,
        *,
        noise: str = "polyplace",
        gamma: float | None = None,
        delta: float | None = None,
        shape: float | None = None,
        method: str = DEFAULT_METHOD,
    ) -> PrivacyBudget | None:
        """What :attr:`spent` would be after a release with these parameters; None if it would be refused."""
        charge = self.charge_of(epsilon, noise=noise, gamma=gamma, delta=delta, shape=shape, method=method)
        with self._lock:
            total = self._total(self._sums.plus(charge))
        return None if total is None else PrivacyBudget(total.epsilon, float_up(total.delta))

    # -- the release ------------------------------------------------------------------
    def release(
        self,
        x: npt.ArrayLike,
        query: str = "median",
        epsilon: float = 1.0,
        *,
        noise: str = "polyplace",
        gamma: float | None = None,
        delta: float | None = None,
        shape: float | None = None,
        bounds: tuple[float, float] | None = None,
        lattice: float | None = None,
        rng: SeedLike = None,
        trim: float | None = None,
        diagnostics: bool = False,
        reveal_true: bool = False,
        clip_infinite: bool = False,
        method: str = DEFAULT_METHOD,
        quantile: float | None = None,
        proposal: float | None = None,
    ) -> Release:
        """Release ``query(x)`` with :func:`~smoothdp_nb.release` if the budget allows it, else refuse.

        Parameters
        ----------
        x, query, epsilon, noise, gamma, delta, shape, bounds, lattice, rng, trim, diagnostics, reveal_true, clip_infinite, method, quantile, proposal
            As for :func:`~smoothdp_nb.release` (``diagnostics`` and ``reveal_true`` reach the
            returned release only, never the log).

        Returns
        -------
        Release

        Raises
        ------
        BudgetExceeded
            Before reading ``x`` or using ``rng``, if the series with this release passes no test of
            the module docstring within the budget.
        ValueError, TypeError
            For bad public parameters, also before reading ``x`` (and then nothing is charged).
        """
        for flag, name in (
            (diagnostics, "diagnostics"),
            (reveal_true, "reveal_true"),
            (clip_infinite, "clip_infinite"),
        ):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {type(flag).__name__}")
        charge = self.charge_of(epsilon, noise=noise, gamma=gamma, delta=delta, shape=shape, method=method)
        chosen = canonical_method(method)
        q = query if chosen != DEFAULT_METHOD and query == "quantile" else query_name(query)
        low, high = as_bounds(bounds)
        if lattice is not None:
            _lattice.check_lattice(lattice, (low, high))
        if chosen == DEFAULT_METHOD:
            fam = get_family(noise)
            g = fam.default_gamma(float(epsilon), delta) if gamma is None else float(gamma)
            if g < MIN_GAMMA:
                raise ValueError(f"gamma must be >= 2**-29 (about {MIN_GAMMA:.3g}) for a release, got {g!r}")
            how = f"{fam.name} noise"
        else:
            how = f"the {method_label(chosen)} method"
        request = f"a {q} with {how} at epsilon={float(epsilon):g} ({charge.text()})"
        with self._lock:
            total = self._total(self._sums.plus(charge))
            if total is None:
                raise self._refusal_locked(charge, request)
            self._charges.append(charge)  # charged before the data is read: a failure below still spent it
            self._sums = self._sums.plus(charge)
            entry: dict[str, object] = {"release": len(self._charges), "query": q}
            # the family for smooth sensitivity; another method's release names its method itself
            entry["noise" if chosen == DEFAULT_METHOD else "method"] = (
                get_family(noise).name if chosen == DEFAULT_METHOD else chosen
            )
            self._log.append(entry)
        try:
            rel = release(
                x,
                q,
                epsilon,
                noise=noise,
                gamma=gamma,
                delta=delta,
                shape=shape,
                bounds=(low, high),
                lattice=lattice,
                rng=rng,
                trim=trim,
                diagnostics=diagnostics,
                reveal_true=reveal_true,
                clip_infinite=clip_infinite,
                method=chosen,
                quantile=quantile,
                proposal=proposal,
            )
        except Exception as exc:
            entry.update({"value": None, "failed": type(exc).__name__, "guarantee": charge.text()})
            entry.update(self._spent_fields())
            raise
        public = {k: v for k, v in rel.to_dict().items() if k != "diagnostics"}
        entry.update(public)
        entry.update(self._spent_fields())
        return rel

    def _refusal_locked(self, charge: Charge, request: str) -> BudgetExceeded:
        rem = self._remaining_locked()
        best = _compose(self._sums.plus(charge), self._delta_z)
        would = "" if best is None else f" (composed: ε={best.epsilon:.6g}, δ={float_up(best.delta):.3g})"
        return BudgetExceeded(
            f"release refused before reading the data: {request} would take the series beyond the "
            f"budget ε={self.epsilon:g}, δ={self.delta:g}{would}; remaining {rem}" + self._refusal_hint(charge),
            request,
            rem,
        )

    def require(
        self,
        epsilon: float,
        *,
        query: str = "median",
        noise: str = "polyplace",
        gamma: float | None = None,
        delta: float | None = None,
        shape: float | None = None,
    ) -> PrivacyBudget:
        """What :attr:`spent` would be after such a release; :class:`BudgetExceeded` (as ``release`` would) if refused.

        Nothing is charged: a caller that loads its data only for a release that will be made
        asks first (the spec does).
        """
        charge = self.charge_of(epsilon, noise=noise, gamma=gamma, delta=delta, shape=shape)
        fam = get_family(noise).name
        request = f"a {query_name(query)} with {fam} noise at epsilon={float(epsilon):g} ({charge.text()})"
        with self._lock:
            total = self._total(self._sums.plus(charge))
            if total is None:
                raise self._refusal_locked(charge, request)
        return PrivacyBudget(total.epsilon, float_up(total.delta))

    def _refusal_hint(self, charge: Charge) -> str:
        if charge.kind == "zcdp" and self._delta_z == 0:
            return (
                "; a rho-zCDP release converts to (ε, δ) only with part of delta reserved: create the odometer "
                "with delta > 0 (concentrated_delta > 0)"
            )
        if charge.kind == "approximate" and self.delta == 0:
            return "; an (ε, δ)-DP release needs an odometer with delta > 0"
        return ""

    def spend(self, epsilon: float = 0.0, delta: float = 0.0, *, rho: float = 0.0) -> PrivacyBudget:
        """Charge a release made elsewhere, of a stated guarantee; :class:`BudgetExceeded` if it does not fit.

        Exactly one kind: ``epsilon`` alone (pure epsilon-DP), ``epsilon`` and ``delta``
        ((epsilon, delta)-DP) or ``rho`` alone (rho-zCDP).  The numbers are taken as the exact
        rationals of their doubles.  The log records the guarantee only (no value).

        Returns
        -------
        PrivacyBudget
            :attr:`spent` after the charge.
        """
        e = as_real(epsilon, "epsilon", lo=0.0)
        d = as_real(delta, "delta", lo=0.0, hi=1.0, hi_open=True)
        r = as_real(rho, "rho", lo=0.0)
        if r > 0 and (e > 0 or d > 0):
            raise ValueError("give epsilon (and delta) or rho, not both: one guarantee per release")
        if r > 0:
            charge = Charge("zcdp", Fraction(0), rho=Fraction(r))
        elif e > 0 and d > 0:
            charge = Charge("approximate", Fraction(e), Fraction(d))
        elif e > 0:
            charge = Charge("pure", Fraction(e))
        else:
            raise ValueError("epsilon > 0 or rho > 0 is required: the guarantee of the release to charge")
        request = f"a release made elsewhere ({charge.text()})"
        with self._lock:
            if self._total(self._sums.plus(charge)) is None:
                raise self._refusal_locked(charge, request)
            self._charges.append(charge)
            self._sums = self._sums.plus(charge)
            self._log.append({"release": len(self._charges), "query": "external", "guarantee": charge.text()})
        fields = self._spent_fields()
        with self._lock:
            self._log[-1].update(fields)
        return PrivacyBudget(fields["spent_epsilon"], fields["spent_delta"])

    # -- what is spent -----------------------------------------------------------------
    def _spent_locked(self) -> PrivacyBudget:
        if not self._charges:
            return PrivacyBudget(0.0, 0.0)
        total = _compose(self._sums, self._delta_z)
        if total is None:  # unreachable: every charge passed a test when it was made
            raise RuntimeError("the odometer's charges pass no composition test")
        return PrivacyBudget(total.epsilon, float_up(total.delta))

    def _remaining_locked(self) -> PrivacyBudget:
        spent = self._spent_locked()
        delta_a = self._sums.delta_a
        eps_left = Fraction(self.epsilon) - Fraction(spent.epsilon)
        delta_left = Fraction(self.delta) - self._delta_z - delta_a
        return PrivacyBudget(
            float_down(eps_left) if eps_left > 0 else 0.0, float_down(delta_left) if delta_left > 0 else 0.0
        )

    def _spent_fields(self) -> dict[str, float]:
        with self._lock:
            s = self._spent_locked()
        return {"spent_epsilon": s.epsilon, "spent_delta": s.delta}

    @property
    def budget(self) -> PrivacyBudget:
        """The budget ``(epsilon, delta)`` the whole series is proven to meet."""
        return PrivacyBudget(self.epsilon, self.delta)

    @property
    def spent(self) -> PrivacyBudget:
        """The proven (epsilon, delta) of the releases so far (smallest over the tests; rounded up)."""
        with self._lock:
            return self._spent_locked()

    @property
    def remaining(self) -> PrivacyBudget:
        """``epsilon_B - spent.epsilon`` and the delta the approximate releases may still use (rounded down).

        Under the concentrated test a further release may cost less than its own epsilon, so a
        release of more than ``remaining.epsilon`` may still pass; :meth:`would_spend` says.
        """
        with self._lock:
            return self._remaining_locked()

    @property
    def test(self) -> str:
        """Which test of the module docstring gives :attr:`spent` (``"none"`` before any release)."""
        with self._lock:
            total = _compose(self._sums, self._delta_z) if self._charges else None
        return "none" if total is None else total.test

    @property
    def log(self) -> list[dict[str, object]]:
        """One dict per release: its public parameters, guarantee, released value and the spent totals after it."""
        with self._lock:
            return [dict(e) for e in self._log]

    def to_frame(self) -> pd.DataFrame:
        """The :attr:`log` as a DataFrame, one row per release."""
        return pd.DataFrame(self.log)

    def __len__(self) -> int:
        return len(self._charges)

    def __repr__(self) -> str:
        return (
            f"PrivacyOdometer(budget {self.budget}; spent {self.spent}; remaining {self.remaining}; "
            f"{len(self)} release(s))"
        )
