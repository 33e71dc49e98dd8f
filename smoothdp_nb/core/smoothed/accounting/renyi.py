"""The Renyi view of a mechanism, per database and averaged over Pi.

* :func:`renyi_profile` -- ``R_alpha(x) = max over x' ~ x`` of the Renyi divergences
  ``D_alpha(M(x) || M(x'))`` and ``D_alpha(M(x') || M(x))``: the database-dependent
  analogue of Renyi DP, as :func:`~smoothdp_nb.privacy_profile` is of (epsilon, delta)-DP;
  :func:`renyi_profile_enclosure` its proven lower and upper bounds together
  (:class:`RenyiEnclosure`).
* :func:`smoothed_renyi` -- ``max over the hull compositions of E_{x ~ (pi_1..pi_n)} R_alpha(x)``,
  by the same Algorithm 1 engines that average the privacy profile.

What the smoothed number means, precisely: the largest *expected
database-dependent Renyi divergence* when the n records are drawn
independently from distributions of Pi.  It is an average of a per-database
worst case over neighbours, the Renyi analogue of Definition 3 -- not a Renyi-DP
guarantee of the mechanism (Renyi DP is a worst case over all databases, and
unlike delta an averaged Renyi divergence does not convert to an (epsilon, delta)
guarantee of the average database).

For compositions (:func:`~smoothdp_nb.repeat`, :func:`~smoothdp_nb.joint`) the
Renyi divergence of a pair is the sum over the runs -- exact, nothing is composed.

References
----------
Mironov. *Renyi differential privacy*, CSF 2017.
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3, Algorithm 1, Proposition 7).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from smoothdp_nb.core.numerics.array_types import FloatArray, FloatOrArray
from smoothdp_nb.core.numerics.enclosures import exp_down, exp_up, log_rel
from smoothdp_nb.core.numerics.hull import reduce_to_vertices
from smoothdp_nb.core.numerics.privacy_loss.renyi import renyi_monotone
from smoothdp_nb.core.numerics.validation import as_histograms, as_int, as_real
from smoothdp_nb.core.runtime.budget import (
    DEFAULT_BUDGET_SECONDS,
    Estimate,
    budget_scope,
    check_budget,
    current_budget,
)
from smoothdp_nb.core.smoothed.accounting.export import RenyiEnclosure, renyi_of
from smoothdp_nb.core.smoothed.engines.exact import general_error
from smoothdp_nb.core.smoothed.engines.general import exact_general
from smoothdp_nb.core.smoothed.mechanisms import Mechanism, compositions, count_histograms
from smoothdp_nb.core.smoothed.mechanisms.composed import check_composition_work, neighbours, pair_loss
from smoothdp_nb.core.smoothed.profiles import check_mechanism

__all__ = ["renyi_profile", "renyi_profile_enclosure", "RenyiEnclosure", "smoothed_renyi", "SmoothedRenyi"]

#: no neighbour pair's losses are built in less than this (a Python call and a few arrays)
_MIN_PAIR_SECONDS = 1e-5


def _as_alphas(alpha: object) -> tuple[FloatArray, bool]:
    arr = np.atleast_1d(np.asarray(alpha, dtype=object))
    vals = np.array([as_real(a, "alpha", lo=0.0, finite=False) for a in arr.ravel()], dtype=float)
    if vals.size == 0:
        raise ValueError("alpha must be a number >= 0 (inf allowed) or a non-empty 1-D list of them")
    return vals, np.ndim(np.asarray(alpha, dtype=object)) == 0


def _renyi_rows(mechanism: Mechanism, h: np.ndarray, alphas: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Proven (lower, upper) bounds on R_alpha(x) for every row of h and every alpha, each
    (k, A) and non-decreasing in alpha (:func:`renyi_monotone`); a maximum over
    neighbours and directions preserves both bounds.

    Refused (:class:`~smoothdp_nb.ComputationTooLarge`) against
    :func:`~smoothdp_nb.core.runtime.budget.current_budget`: first by
    arithmetic (:func:`~smoothdp_nb.core.smoothed.mechanisms.composed.check_composition_work`),
    then every mechanism after its first pair, whose time is extrapolated to the
    ``k m (m - 1)`` pairs."""
    k, m = h.shape
    pairs = k * m * (m - 1)
    check_composition_work(mechanism, h[0], pairs)
    lo = np.zeros((k, alphas.size))
    hi = np.zeros((k, alphas.size))
    cache: dict[tuple[bytes, bytes], tuple[FloatArray, FloatArray]] = {}
    t0 = time.perf_counter()
    for r in range(k):
        x = h[r]
        for x2 in neighbours(x):
            key = (x.tobytes(), x2.tobytes())
            if key not in cache:
                f, bw = pair_loss(mechanism, x, x2)
                fv = np.array([renyi_of(f, float(al)) for al in alphas])  # (A, 2)
                bv = np.array([renyi_of(bw, float(al)) for al in alphas])
                both = np.maximum(fv, bv)
                cache[key] = (both[:, 0], both[:, 1])
                if len(cache) == 1 and pairs > 1:  # the first pair prices the others
                    check_budget(
                        Estimate((time.perf_counter() - t0) * pairs, 0.0),
                        current_budget(),
                        f"the Renyi profiles of {mechanism!r} on {k:.3g} histogram(s) ({pairs:.3g} neighbour pairs)",
                        "use fewer histograms or categories",
                        parameter="hist",
                    )
            lo[r] = np.maximum(lo[r], cache[key][0])
            hi[r] = np.maximum(hi[r], cache[key][1])
    return renyi_monotone(lo, hi, alphas)


def _renyi_profile_bounds(
    mechanism: Mechanism, hist: npt.ArrayLike, alpha: npt.ArrayLike, budget: float
) -> tuple[FloatOrArray, FloatOrArray]:
    """(lower, upper) of :func:`renyi_profile_enclosure`, shaped as :func:`renyi_profile` returns."""
    check_mechanism(mechanism)
    h, single = as_histograms(hist)
    mechanism.check_histograms(h)
    for n in np.unique(h.sum(axis=1)):
        mechanism.sample_size(int(n))
    alphas, scalar = _as_alphas(alpha)
    with budget_scope(budget):
        rows = _renyi_rows(mechanism, h, alphas)
    out = []
    for res in rows:
        r = res[0] if single else res
        if scalar:
            r = r[..., 0]
        out.append(float(r) if np.ndim(r) == 0 else r)
    return out[0], out[1]


def renyi_profile(
    mechanism: Mechanism,
    hist: npt.ArrayLike,
    alpha: npt.ArrayLike,
    *,
    budget: float = DEFAULT_BUDGET_SECONDS,
) -> FloatOrArray:
    """Database-dependent Renyi divergence ``R_alpha(x)`` (natural-log units), a proven
    upper bound.

    ``R_alpha(x) = max over neighbours x' of max(D_alpha(M(x)||M(x')), D_alpha(M(x')||M(x)))``;
    alpha = 1 gives the KL divergence (computed as its own limit, never as a quotient of
    vanishing numbers), alpha = 0 ``-log Q(supp P)``, alpha = inf the largest privacy loss;
    ``inf`` where a neighbour's output is impossible at x (or the reverse) and alpha >= 1.

    Parameters
    ----------
    mechanism : Mechanism
    hist : array_like of int, shape (m,) or (k, m)
    alpha : float >= 0 (inf allowed) or 1-D array
    budget : float, default 600
        Seconds the computation may take: refused (:class:`~smoothdp_nb.ComputationTooLarge`,
        with the estimate) by arithmetic on a composition before its runs are built, and
        after the first neighbour pair when the pairs would take longer.

    Returns
    -------
    float or ndarray of shape (k,), (A,) or (k, A).
        A proven upper bound (the argument is in
        :mod:`smoothdp_nb.core.numerics.privacy_loss.renyi`), non-decreasing in alpha over
        the orders asked for, as the divergence is.  The proven lower bound beside it:
        :func:`renyi_profile_enclosure`.

    References
    ----------
    Mironov. *Renyi differential privacy*, CSF 2017.
    """
    return _renyi_profile_bounds(mechanism, hist, alpha, budget)[1]


def renyi_profile_enclosure(
    mechanism: Mechanism,
    hist: npt.ArrayLike,
    alpha: npt.ArrayLike,
    *,
    budget: float = DEFAULT_BUDGET_SECONDS,
) -> RenyiEnclosure:
    """Proven bounds ``lower <= R_alpha(x) <= upper`` (nats): the same computation as
    :func:`renyi_profile` (its values are ``.upper``), with the proven lower bound kept.

    Parameters
    ----------
    mechanism : Mechanism
    hist : array_like of int, shape (m,) or (k, m)
    alpha : float >= 0 (inf allowed) or 1-D array
    budget : float, default 600
        Seconds the computation may take, as for :func:`renyi_profile`.

    Returns
    -------
    RenyiEnclosure
        ``.lower`` and ``.upper`` of the shape :func:`renyi_profile` returns, both
        non-decreasing in alpha; ``.width`` their difference.

    References
    ----------
    Mironov. *Renyi differential privacy*, CSF 2017.
    """
    lo, hi = _renyi_profile_bounds(mechanism, hist, alpha, budget)
    return RenyiEnclosure(lo, hi)


@dataclass(frozen=True)
class SmoothedRenyi:
    """The result of :func:`smoothed_renyi`.

    Attributes
    ----------
    mechanism : Mechanism
    n : int
    alpha : ndarray (A,)
    value : ndarray (A,)
        A proven upper bound on the largest expectation of ``R_alpha(x)`` over the
        compositions (nats).
    worst_composition : ndarray (A, l*)
        Records per hull vertex at the maximum.
    vertices : ndarray (l*, m)
    all_values : ndarray (C, A)
        The expectation at every composition (rows of ``compositions``).
    compositions : ndarray (C, l*)
    lower : ndarray (A,)
        A proven lower bound on the same largest expectation.
    """

    mechanism: Mechanism
    n: int
    alpha: FloatArray
    value: FloatArray
    worst_composition: np.ndarray
    vertices: np.ndarray
    all_values: FloatArray
    compositions: np.ndarray
    lower: FloatArray | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per alpha: ``alpha``, ``value`` and the worst composition (``c0, c1, ...``)."""
        df = pd.DataFrame({"alpha": self.alpha, "value": self.value})
        if self.lower is not None:
            df["lower"] = self.lower
        for j in range(self.worst_composition.shape[1]):
            df[f"c{j}"] = self.worst_composition[:, j]
        return df

    def __str__(self) -> str:
        lines = [f"Smoothed Renyi view of {self.mechanism!r}, n = {self.n} ({len(self.vertices)} hull vertices)"]
        for a, v, c in zip(self.alpha, self.value, self.worst_composition):
            lines.append(f"  alpha = {a:g}: max E[R_alpha(x)] = {v:.6g} nats at composition {tuple(int(x) for x in c)}")
        return "\n".join(lines)


def smoothed_renyi(
    mechanism: Mechanism,
    n: int,
    pi: npt.ArrayLike,
    alpha: npt.ArrayLike,
    *,
    budget: float = DEFAULT_BUDGET_SECONDS,
) -> SmoothedRenyi:
    """``max over compositions of E_{x ~ (pi_1..pi_n)}[R_alpha(x)]`` (see the module
    docstring for what it means), by Algorithm 1 over the hull vertices of Pi
    (Proposition 7): ``R_alpha`` of every histogram of n records, then the
    expectation of every composition by the engine of the smoothed delta.

    ``value`` is a proven upper bound and ``lower`` a proven lower bound: the engine runs
    on the profiles' upper (lower) bounds, and its relative float error
    (:func:`~smoothdp_nb.core.smoothed.engines.exact.general_error`) is added (subtracted).

    Refused (:class:`~smoothdp_nb.ComputationTooLarge`) before any work, by arithmetic, when
    the ``C(n + m - 1, m - 1)`` histograms' pairs would take more than ``budget`` seconds
    even at :data:`_MIN_PAIR_SECONDS` each or their tables (the histograms, two bounds per
    order) would not fit the memory budget; then as :func:`renyi_profile`.

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Algorithm 1; Proposition 7).
    Mironov. *Renyi differential privacy*, CSF 2017.
    """
    check_mechanism(mechanism)
    n = as_int(n, "n", minimum=1)
    mechanism.sample_size(n)
    red = reduce_to_vertices(pi)
    V = red.vertices
    m = V.shape[1]
    if mechanism.categories is not None and m != mechanism.categories:
        raise ValueError(f"pi must have {mechanism.categories} columns (one per category of {mechanism!r}), got {m}")
    alphas, _ = _as_alphas(alpha)
    H = count_histograms(n, m)
    with budget_scope(budget) as seconds:
        check_budget(
            Estimate(float(H) * m * (m - 1) * _MIN_PAIR_SECONDS, float(H) * (8.0 * m + 32.0 * alphas.size)),
            seconds,
            f"the smoothed Renyi divergence for n={n}, m={m} ({float(H):.3g} histograms, each with "
            f"m (m - 1) neighbour pairs of at least {_MIN_PAIR_SECONDS:g} s)",
            "use a smaller n",
            parameter="n",
        )
        hists = compositions(n, m)
        R_lo, R_hi = _renyi_rows(mechanism, hists, alphas)  # (H, A) each

    def expectations(R: FloatArray) -> tuple[np.ndarray, FloatArray]:
        infinite = np.isinf(R)
        with np.errstate(divide="ignore"):
            logR = np.log(np.where(infinite, 0.0, R))
        comps, vals = exact_general(logR, n, m, V, None)
        rel = general_error(n, m, V.shape[0], logR, V)
        if infinite.any():  # the expectation is infinite wherever those histograms have positive probability
            with np.errstate(divide="ignore"):
                _, hit = exact_general(np.log(infinite.astype(float)), n, m, V, None)
            vals = np.where(np.isfinite(hit), np.inf, vals)
        return comps, np.asarray(vals + log_rel(rel) if R is R_hi else vals - log_rel(rel), dtype=float)

    comps, vals = expectations(R_hi)
    _, vals_lo = expectations(R_lo)
    best = np.argmax(vals, axis=0)
    value = exp_up(vals[best, np.arange(alphas.size)])
    lower = exp_down(np.max(vals_lo, axis=0))
    return SmoothedRenyi(
        mechanism=mechanism,
        n=n,
        alpha=alphas,
        value=value,
        worst_composition=comps[best],
        vertices=V,
        all_values=np.exp(vals),
        compositions=comps,
        lower=lower,
    )
