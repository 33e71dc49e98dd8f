"""The privacy-loss distribution of one neighbouring pair, as a result object, and its
export to Google's dp_accounting (the optional extra ``smoothdp_nb[accounting]``).

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2).
Mironov. *Renyi differential privacy*, CSF 2017 (the Renyi divergence).
Doroshenko, Ghazi, Kamath, Kumar, Manurangsi. *Connect the dots: tighter
discrete approximations of privacy loss distributions*, PETS 2022 (dp_accounting's PLDs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd

from smoothdp_nb.core.numerics.array_types import FloatArray, FloatOrArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LogEnclosure, exp_up
from smoothdp_nb.core.numerics.privacy_loss.pld import ComposedLoss, LossDistribution
from smoothdp_nb.core.numerics.validation import as_epsilon, as_histograms, as_real
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, ComputationTooLarge, budget_scope
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.composed import check_pair_evaluation, pair_loss
from smoothdp_nb.core.smoothed.mechanisms.relations import as_neighbours
from smoothdp_nb.core.smoothed.profiles import check_mechanism

if TYPE_CHECKING:
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution as DPAccountingPLD

__all__ = ["PrivacyLossDistribution", "RenyiEnclosure", "privacy_loss_distribution", "renyi_of"]

# smallest positive float64: a mass below it cannot be represented in dp_accounting's pmf
_TINY = 5e-324
# losses this close (absolute, times 1 + |loss|) to a grid point are placed on it by the export
_SNAP_REL = 1e-12


@dataclass(frozen=True)
class RenyiEnclosure:
    """Proven bounds ``lower <= D <= upper`` on Renyi divergences (nats; floats or arrays).

    Attributes
    ----------
    lower, upper : float or ndarray
        Both non-decreasing in the order alpha, as the divergence is; ``inf`` where the
        divergence is infinite.
    """

    lower: FloatOrArray
    upper: FloatOrArray

    @property
    def width(self) -> FloatOrArray:
        """``upper - lower`` (0 where both are infinite)."""
        lo, hi = np.asarray(self.lower, dtype=float), np.asarray(self.upper, dtype=float)
        with np.errstate(invalid="ignore"):
            out = np.where(np.isinf(hi) & (hi == lo), 0.0, hi - lo)
        return float(out) if out.ndim == 0 else out


def check_neighbours(x: IntArray, x2: IntArray, relation: str = "replace") -> None:
    """ValueError unless x' is x with one record moved to another category (``"replace"``),
    or with one record added or removed (``"add-remove"``)."""
    if x.shape != x2.shape:
        raise ValueError(f"neighbour must have {x.size} counts like hist, got {x2.size}")
    diff = x2 - x
    if relation == "add-remove":
        if np.sum(np.abs(diff)) != 1 or min(int(x.sum()), int(x2.sum())) < 1:
            raise ValueError(
                "hist and neighbour must be add-remove neighbours: one has one record more than the "
                f"other, both at least one (got hist={x.tolist()}, neighbour={x2.tolist()})"
            )
        return
    if not (np.sum(np.abs(diff)) == 2 and diff.min() == -1 and diff.max() == 1):
        raise ValueError(
            "hist and neighbour must be neighbours: the same number of records, one record of one "
            f"category replaced by one of another (got hist={x.tolist()}, neighbour={x2.tolist()})"
        )


def renyi_of(loss: ComposedLoss, alpha: float) -> tuple[float, float]:
    """(lower, upper) proven bounds on ``D_alpha(P || Q)`` of a composed pair loss (nats), any
    alpha >= 0: ``:meth:`ComposedLoss.renyi``` (the runs' divergences add, nothing is
    composed; the KL divergence at alpha = 1 is its own limit, never a quotient of small
    numbers; ``inf`` where an infinite loss has positive mass and alpha >= 1)."""
    return loss.renyi(alpha)


@dataclass(frozen=True)
class PrivacyLossDistribution:
    """The privacy loss of a mechanism on one neighbouring pair (x, x'), both directions.

    ``forward`` is the law of ``L = log P(o)/Q(o)`` under ``P = M(x)`` (Q =
    M(x')), ``backward`` the same with the roles exchanged.  For a composed
    mechanism (:func:`~smoothdp_nb.repeat`, :func:`~smoothdp_nb.joint`) they
    are the compositions of the runs' losses.

    Attributes
    ----------
    mechanism : Mechanism
    hist, neighbour : ndarray of int
    forward, backward : ComposedLoss
    """

    mechanism: Mechanism
    hist: IntArray
    neighbour: IntArray
    forward: ComposedLoss
    backward: ComposedLoss

    def _exact(self, direction: str) -> LossDistribution:
        if direction not in ("forward", "backward"):
            raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
        loss = self.forward if direction == "forward" else self.backward
        ex = loss.exact(upper=True)
        if ex is None:
            raise ComputationTooLarge(
                f"the composed privacy loss of {self.mechanism!r} has more support points than an exact "
                "table holds; delta() and renyi() still work (delta by the pessimistic grid), and "
                "to_dp_accounting() exports the runs and composes them there"
            )
        return ex

    def support(self, direction: str = "forward") -> tuple[FloatArray, FloatArray, float]:
        """(losses, probabilities, probability of an infinite loss) of one direction.

        For a composition the losses are upper-rounded where float sums of equal
        losses differed (see :mod:`smoothdp_nb.core.numerics.privacy_loss.pld`)."""
        ex = self._exact(direction)
        return ex.losses, np.exp(ex.log_mass), math.exp(ex.log_inf)

    def to_frame(self) -> pd.DataFrame:
        """One row per direction and loss: ``direction, loss, probability, log_probability``
        (an infinite loss is a row with ``loss = inf``)."""
        rows = []
        for direction in ("forward", "backward"):
            ex = self._exact(direction)
            L = np.concatenate([ex.losses, [np.inf]]) if ex.log_inf > -math.inf else ex.losses
            lm = np.concatenate([ex.log_mass, [ex.log_inf]]) if ex.log_inf > -math.inf else ex.log_mass
            rows.append(
                pd.DataFrame({"direction": direction, "loss": L, "probability": np.exp(lm), "log_probability": lm})
            )
        return pd.concat(rows, ignore_index=True)

    def _log_delta(self, epsilon: npt.ArrayLike, upper: bool) -> tuple[FloatArray, bool]:
        e, scalar = as_epsilon(epsilon)
        return np.maximum(self.forward.log_delta(e, upper=upper), self.backward.log_delta(e, upper=upper)), scalar

    def delta(self, epsilon: npt.ArrayLike, *, log: bool = False) -> FloatOrArray:
        """The pair's hockey-stick divergence ``max(d_eps(P, Q), d_eps(Q, P))``, a proven
        upper bound (natural logs with ``log=True``); both bounds: :meth:`delta_enclosure`."""
        val, scalar = self._log_delta(epsilon, True)
        # linear values rounded outward: a positive upper bound never underflows to 0
        res = val if log else np.minimum(exp_up(val), 1.0)
        return float(res[0]) if scalar else res

    def delta_enclosure(self, epsilon: npt.ArrayLike) -> LogEnclosure:
        """Proven bounds ``lower <= log max(d_eps(P, Q), d_eps(Q, P)) <= upper``: ``.upper``
        is :meth:`delta` with ``log=True``; ``.width`` says how tight (exact and lattice
        compositions: float error only; the grid: see docs/accounting.md)."""
        lo, scalar = self._log_delta(epsilon, False)
        hi, _ = self._log_delta(epsilon, True)
        enc = LogEnclosure(np.minimum(lo, hi), hi)
        return LogEnclosure(lo[0], hi[0]).squeeze() if scalar else enc

    def _renyi(self, alpha: float, direction: str) -> tuple[float, float]:
        a = as_real(alpha, "alpha", lo=0.0, finite=False)
        if direction not in ("forward", "backward", "max"):
            raise ValueError(f"direction must be 'forward', 'backward' or 'max', got {direction!r}")
        f = renyi_of(self.forward, a) if direction != "backward" else (-math.inf, -math.inf)
        b = renyi_of(self.backward, a) if direction != "forward" else (-math.inf, -math.inf)
        return max(f[0], b[0]), max(f[1], b[1])

    def renyi(self, alpha: float, direction: str = "max") -> float:
        """Renyi divergence of order ``alpha >= 0`` (natural-log units; ``inf`` allowed):
        ``"forward"`` ``D_alpha(M(x) || M(x'))``, ``"backward"`` the reverse, ``"max"``
        (default) the larger.  alpha = 1 is the KL divergence (computed as its own limit).

        A proven upper bound (the argument is in
        :mod:`smoothdp_nb.core.numerics.privacy_loss.renyi`); both bounds:
        :meth:`renyi_enclosure`."""
        return self._renyi(alpha, direction)[1]

    def renyi_enclosure(self, alpha: float, direction: str = "max") -> RenyiEnclosure:
        """Proven bounds ``(lower, upper)`` on :meth:`renyi` (nats), as a ``RenyiEnclosure``."""
        lo, hi = self._renyi(alpha, direction)
        return RenyiEnclosure(lo, hi)

    def to_dp_accounting(
        self, value_discretization_interval: float = 1e-4, *, pessimistic: bool = True
    ) -> DPAccountingPLD:
        """The pair as a dp_accounting ``PrivacyLossDistribution`` (``pmf_remove`` = forward,
        ``pmf_add`` = backward).

        Each run's loss is put on dp_accounting's grid -- rounded up when
        ``pessimistic`` (dp_accounting's convention: its deltas are then upper
        bounds on ours), down otherwise -- and a composition is composed there
        (``self_compose`` / ``compose``), so it joins the rest of a pipeline's
        accounting.  A loss within ``1e-12 (1 + |loss|)`` of a grid point is placed *on* it: an
        exact loss (0 where P(o) = Q(o), ``j h`` where the ratio is ``e^(j h)``) is
        known only to the float error of the log-pmfs, about 1e-14, and rounding that
        error up would move it by a whole step (so a true loss less than that above a
        grid point is the one case where the pessimistic export is not rounded up).
        Masses below the float64 range join the infinity mass
        when pessimistic.  Needs the optional extra ``smoothdp_nb[accounting]``.
        """
        try:
            # deferred: dp_accounting is optional (the accounting extra)
            from dp_accounting.pld import pld_pmf, privacy_loss_distribution as dpl
        except ImportError:  # pragma: no cover - the extra is installed in the test environment
            raise ImportError("to_dp_accounting needs dp_accounting: pip install 'smoothdp_nb[accounting]'") from None
        h = as_real(value_discretization_interval, "value_discretization_interval", lo=0.0, lo_open=True)

        def pmf(d: LossDistribution) -> pld_pmf.PLDPmf:
            q = d.losses / h
            near = np.rint(q)
            # a loss within float error of a grid point is that point (an exact zero loss,
            # a loss of exactly j h): the measures' outward rounding (about 1e-14) must not
            # move it by a whole step
            snap = np.abs(q - near) <= _SNAP_REL * (1.0 + np.abs(d.losses)) / h
            idx = np.where(snap, near, np.ceil(q) if pessimistic else np.floor(q))
            p = np.exp(d.log_mass)
            lost = float(np.sum(p == 0)) * _TINY if pessimistic else 0.0
            keys, inv = np.unique(idx.astype(np.int64), return_inverse=True)
            mass = np.bincount(inv.ravel(), weights=p, minlength=keys.size)
            inf = min(1.0, math.exp(d.log_inf) + lost)
            return pld_pmf.create_pmf(
                {int(k): float(v) for k, v in zip(keys, mass) if v > 0}, h, inf, pessimistic_estimate=pessimistic
            )

        out = None
        # pessimistic: the runs rounded for the upper bound; else those rounded for the lower
        fparts, bparts = self.forward.parts_for(pessimistic), self.backward.parts_for(pessimistic)
        for (df, k), (db, kb) in zip(fparts, bparts):
            if k != kb:
                raise ValueError("forward and backward runs do not match")  # cannot happen: built together
            one = dpl.PrivacyLossDistribution(pmf(df), pmf(db))
            one = one.self_compose(k) if k > 1 else one
            out = one if out is None else out.compose(one)
        assert out is not None
        return out

    def __repr__(self) -> str:
        return f"PrivacyLossDistribution({self.mechanism!r}, hist={self.hist.tolist()}, neighbour={self.neighbour.tolist()})"


def privacy_loss_distribution(
    mechanism: Mechanism,
    hist: npt.ArrayLike,
    neighbour: npt.ArrayLike,
    *,
    budget: float = DEFAULT_BUDGET_SECONDS,
    neighbours: str = "replace",
) -> PrivacyLossDistribution:
    """The privacy-loss distribution of ``mechanism`` on the neighbouring pair (x, x') = (hist, neighbour).

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism, including :func:`~smoothdp_nb.repeat` /
        :func:`~smoothdp_nb.joint` compositions.
    hist, neighbour : array_like of int, shape (m,)
        Histograms of two neighbouring databases (one record changes category).
    budget : float, default 600 (keyword-only)
        Seconds: a composition whose runs' losses would take longer to build, or whose
        composed law would take longer to evaluate at one epsilon (both bounds, both
        directions), is refused before it is built (:class:`~smoothdp_nb.ComputationTooLarge`,
        with the estimate), as is one that would not fit the memory budget.
    neighbours : {"replace", "add-remove"}, default "replace"
        The relation the pair must satisfy: with ``"add-remove"`` one database
        has one record more than the other.

    Returns
    -------
    PrivacyLossDistribution
        With ``support()``, ``to_frame()``, ``delta(epsilon)`` (a proven upper
        bound; both bounds: ``delta_enclosure(epsilon)``), ``renyi(alpha)`` (and
        ``renyi_enclosure(alpha)``) and ``to_dp_accounting()``.

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> pld = sdp.privacy_loss_distribution(sdp.SamplingHistogram(eta=0.5), [3, 3], [2, 4])
    >>> round(pld.delta(0.0), 12) == round(float(sdp.privacy_profile(sdp.SamplingHistogram(eta=0.5), [3, 3], 0.0)), 12)
    True
    """
    check_mechanism(mechanism)
    relation = as_neighbours(neighbours)
    a, single_a = as_histograms(hist, name="hist")
    b, single_b = as_histograms(neighbour, name="neighbour")
    if not (single_a and single_b):
        raise ValueError("hist and neighbour must each be one histogram of shape (m,)")
    a, b = a[0], b[0]
    check_neighbours(a, b, relation)
    mechanism.check_histograms(a[None, :], "hist")
    mechanism.sample_size(int(a.sum()))
    mechanism.sample_size(int(b.sum()))
    with budget_scope(budget):
        f, bw = pair_loss(mechanism, a, b)
        check_pair_evaluation(mechanism, (f, bw))
    return PrivacyLossDistribution(mechanism, a, b, f, bw)
