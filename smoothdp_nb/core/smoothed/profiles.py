"""Database-dependent privacy profiles and the quantities built on them.

* :func:`privacy_profile` -- delta_{epsilon,M}(x) of Definition 2 (proven
  bounds on both sides: :func:`privacy_profile_enclosure`);
* :func:`dp_delta` -- its worst case over all databases (Theorem 1; for the
  sampling histogram ``T/n``, Theorem 3 (iii); :func:`dp_delta_enclosure`);
* :func:`remark8_bound` -- the non-asymptotic smoothed-DP bound of Remark 8;
* :func:`adjusted_utility` -- the adversary's adjusted utility, eq. (3);
* :func:`compose` -- Proposition 5 (epsilons and deltas add).

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 2, Theorem 1, Theorem 3, Remark 8, eq. (3), Proposition 5.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray, FloatOrArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, U, exp_up, fraction_up, next_up
from smoothdp_nb.core.numerics.validation import as_epsilon, as_flag, as_histograms, as_int, as_open_unit, as_real
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, budget_scope
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.relations import with_neighbours
from smoothdp_nb.core.smoothed.mechanisms.rounding import shape_result

__all__ = [
    "Composition",
    "adjusted_utility",
    "compose",
    "dp_delta",
    "dp_delta_enclosure",
    "privacy_profile",
    "privacy_profile_enclosure",
    "remark8_bound",
]


def check_mechanism(mechanism: object) -> Mechanism:
    """TypeError unless ``mechanism`` implements the :class:`Mechanism` protocol."""
    if not isinstance(mechanism, Mechanism):
        raise TypeError(
            "mechanism must be a smoothdp_nb Mechanism (SamplingHistogram, NoisySamplingHistogram, "
            f"SamplingAverage, FiniteMechanism, a postprocess(...) or a subclass), got {type(mechanism).__name__}"
        )
    return mechanism


def privacy_profile(
    mechanism: Mechanism,
    hist: npt.ArrayLike,
    epsilon: npt.ArrayLike,
    *,
    log: bool = False,
    budget: float = DEFAULT_BUDGET_SECONDS,
    neighbours: str = "replace",
) -> FloatOrArray:
    """Database-dependent privacy profile delta_{epsilon,M}(x) (Definition 2),
    as a proven upper bound.

    ``delta(x) = max(0, max_{x' ~ x} d(x, x'), max_{x' ~ x} d(x', x))`` with
    ``d(x, x') = max_S P[M(x) in S] - e^epsilon P[M(x') in S]``; neighbours replace
    one record by a record of another category.

    Parameters
    ----------
    mechanism : Mechanism
        Any implementation of the protocol (its fast path
        :meth:`Mechanism._log_profile_enclosure` is used).
    hist : array_like of int, shape (m,) or (k, m)
        Category counts of the database(s); rows may have different sizes n.
    epsilon : float or 1-D array of floats >= 0
    log : bool, default False (keyword-only)
        The same bounds as natural logarithms (``-inf`` for an exact zero),
        which stay finite far below the float64 range (e.g. 1e-5000).  The
        type and shape of the result do not change.
    budget : float, default 600 (keyword-only)
        Seconds the computation may take: refused before the work
        (:class:`~smoothdp_nb.ComputationTooLarge`, with the estimate) when its
        estimated time exceeds it or its memory the memory budget
        (:func:`~smoothdp_nb.core.runtime.budget.memory_budget`); ``math.inf`` for no
        time limit.
    neighbours : {"replace", "add-remove"}, default "replace" (keyword-only)
        The neighbouring relation: one record replaced by a record of another
        category (the paper's), or one record added or removed (the
        neighbours then have n - 1 or n + 1 records; docs/neighbours.md).

    Returns
    -------
    float or ndarray of shape (k,), (len(epsilon),) or (k, len(epsilon)).
        A proven **upper bound** on every value (the error model and the
        argument are in :mod:`smoothdp_nb.core.numerics.enclosures` and the engines'
        docstrings); each lies in [0, 1] and at most the mechanism's
        :meth:`~Mechanism._delta_upper_bound` (e.g. T/n rounded up).  The
        proven lower bound beside it: :func:`privacy_profile_enclosure`
        (upper and lower agree to about 1e-12 relative on the published
        cases, docs/accuracy.md).

    Notes
    -----
    For the sampling histogram with two categories the profile is a sum of at
    most four tails of hypergeometric (binomial, with replacement) laws,
    evaluated from the closed-form threshold outward with a proven truncation
    bound, so the cost does not grow with n.  For ``m > 2`` the joint law of
    the two categories involved is summed on its full grid (exact; cost ~ m^2
    T^2).  Other mechanisms compare their exact output laws.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 2.
    """
    log = as_flag(log, "log")
    mech, h, single, e, eps_scalar = _profile_input(mechanism, hist, epsilon, neighbours)
    with budget_scope(budget):
        enc = mech._profile(h, e)
    if log:
        return shape_result(enc.upper, single, eps_scalar)
    return shape_result(np.minimum(exp_up(enc.upper), _row_caps(mech, h.sum(axis=1), e)), single, eps_scalar)


def privacy_profile_enclosure(
    mechanism: Mechanism,
    hist: npt.ArrayLike,
    epsilon: npt.ArrayLike,
    *,
    budget: float = DEFAULT_BUDGET_SECONDS,
    neighbours: str = "replace",
) -> LogEnclosure:
    """Proven bounds ``lower <= log delta_{epsilon,M}(x) <= upper`` (Definition 2).

    The same computation as :func:`privacy_profile` (its ``log=True`` values
    are ``.upper``), with the proven lower bound kept.

    Parameters
    ----------
    mechanism : Mechanism
    hist : array_like of int, shape (m,) or (k, m)
    epsilon : float or 1-D array of floats >= 0
    budget : float, default 600 (keyword-only)
        Seconds the computation may take: refused before the work
        (:class:`~smoothdp_nb.ComputationTooLarge`, with the estimate) when its
        estimated time exceeds it or its memory the memory budget
        (:func:`~smoothdp_nb.core.runtime.budget.memory_budget`); ``math.inf`` for no
        time limit.
    neighbours : {"replace", "add-remove"}, default "replace" (keyword-only)
        The neighbouring relation: one record replaced by a record of another
        category (the paper's), or one record added or removed (the
        neighbours then have n - 1 or n + 1 records; docs/neighbours.md).

    Returns
    -------
    LogEnclosure
        ``.lower`` and ``.upper``: natural logs, floats or arrays of the shape
        :func:`privacy_profile` returns; ``.delta_lower``/``.delta_upper`` the
        linear bounds, ``.width`` their ratio minus 1.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 2.
    """
    mech, h, single, e, eps_scalar = _profile_input(mechanism, hist, epsilon, neighbours)
    with budget_scope(budget):
        enc = mech._profile(h, e)
    return LogEnclosure(
        np.asarray(shape_result(enc.lower, single, eps_scalar)),
        np.asarray(shape_result(enc.upper, single, eps_scalar)),
    ).squeeze()


def _profile_input(
    mechanism: object, hist: npt.ArrayLike, epsilon: npt.ArrayLike, neighbours: str = "replace"
) -> tuple[Mechanism, IntArray, bool, FloatArray, bool]:
    """The validated (mechanism under the relation, histograms (k, m), one histogram given,
    epsilons (E,), one epsilon given)."""
    mech = with_neighbours(check_mechanism(mechanism), neighbours)
    h, single = as_histograms(hist)
    mech.check_histograms(h)
    e, eps_scalar = as_epsilon(epsilon)
    for n in np.unique(h.sum(axis=1)):
        mech.sample_size(int(n))  # validates T <= n early, with a clear message
    return mech, h, single, e, eps_scalar


def _row_caps(mech: Mechanism, sizes: IntArray, epsilon: FloatArray) -> FloatArray:
    """The proven bound of each row's size (:meth:`Mechanism._delta_upper_bound`): (k, E)."""
    cap = np.empty((sizes.size, epsilon.size))
    for n in np.unique(sizes):
        cap[sizes == n] = mech._delta_upper_bound(int(n), epsilon)
    return cap


def dp_delta(
    mechanism: Mechanism,
    n: int,
    epsilon: npt.ArrayLike | None = None,
    *,
    categories: int = 2,
    log: bool = False,
    budget: float = DEFAULT_BUDGET_SECONDS,
    neighbours: str = "replace",
) -> FloatOrArray:
    """The worst case of delta_{epsilon,M}(x) over all databases of n records (Theorem 1),
    as a proven upper bound (its natural log with ``log=True``; proven bounds on
    both sides: :func:`dp_delta_enclosure`).

    * Sampling histogram without replacement: ``T/n`` for every epsilon >= 0
      (Theorem 3 (iii)), correctly rounded from the exact fraction.
    * With replacement: ``1 - (1 - 1/n)^T``, by the same argument.
    * Sampling average: ``T/n`` (Theorem 4).
    * Any other mechanism (noisy sampling histogram, finite and
      post-processed mechanisms): the largest profile over every histogram of
      n records on ``categories`` categories (the mechanism's own number when
      it has one), refused with an estimate when there are too many; needs
      ``epsilon``.

    ``epsilon`` may be a scalar or an array (the result has its shape).
    ``budget`` (seconds, keyword-only): the enumeration is refused before it starts
    (:class:`~smoothdp_nb.ComputationTooLarge`, with the estimate) when its estimated
    time exceeds it or its memory the memory budget; ``math.inf`` for no time limit.
    ``neighbours="add-remove"``: the worst add-remove profile over databases
    of n records (no closed form above applies; the mechanism's
    :meth:`~Mechanism._dp_delta_add_remove_enclosure`, by default every
    histogram's profile).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Theorem 1, Theorem 3, Theorem 4.
    """
    log = as_flag(log, "log")
    mech, n, e, scalar, cats = _dp_input(mechanism, n, epsilon, categories, neighbours)
    with budget_scope(budget) as seconds:
        res = mech._dp_delta(n, e, categories=cats, log=log, budget=seconds)
    return float(res[0]) if scalar else res


def dp_delta_enclosure(
    mechanism: Mechanism,
    n: int,
    epsilon: npt.ArrayLike | None = None,
    *,
    categories: int = 2,
    budget: float = DEFAULT_BUDGET_SECONDS,
    neighbours: str = "replace",
) -> LogEnclosure:
    """Proven bounds ``lower <= log(DP delta) <= upper`` (Theorem 1): the
    enclosure behind :func:`dp_delta` (whose ``log=True`` values are ``.upper``), refused
    above ``budget`` seconds as it is.

    Returns
    -------
    LogEnclosure
        Floats for a scalar ``epsilon``, arrays (E,) otherwise.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Theorem 1.
    """
    mech, n, e, scalar, cats = _dp_input(mechanism, n, epsilon, categories, neighbours)
    with budget_scope(budget) as seconds:
        enc = mech._dp_delta_enclosure(n, e, categories=cats, budget=seconds)
    if scalar:
        return LogEnclosure(float(np.asarray(enc.lower)[0]), float(np.asarray(enc.upper)[0]))  # type: ignore[arg-type]
    return enc


def _dp_input(
    mechanism: object, n: int, epsilon: npt.ArrayLike | None, categories: int, neighbours: str = "replace"
) -> tuple[Mechanism, int, FloatArray, bool, int]:
    """The validated (mechanism under the relation, n, epsilons (E,), one epsilon given, categories)."""
    mech = with_neighbours(check_mechanism(mechanism), neighbours)
    n = as_int(n, "n", minimum=1)
    mech.sample_size(n)
    if epsilon is None:
        if mech.dp_delta_depends_on_epsilon:
            raise ValueError(f"epsilon is required for the DP delta of {mech!r}")
        e, scalar = np.zeros(1), True
    else:
        e, scalar = as_epsilon(epsilon)
    return mech, n, e, scalar, as_int(categories, "categories", minimum=2)


def remark8_bound(
    n: npt.ArrayLike, m: int, eta: float, epsilon: npt.ArrayLike, f: float, *, log: bool = False
) -> FloatOrArray:
    """Remark 8, rounded up: a smoothed-DP delta of the sampling histogram.

    The sampling histogram is (epsilon, delta, Pi)-smoothed DP with
    ``delta = exp(-g(eta, epsilon) f n / 6) + m exp(-f n / 8)``,
    ``g(eta, epsilon) = (eta^-1 (1 - e^-epsilon) - 1)^2``,

    for an f-strictly positive Pi (every probability >= f) and any
    ``epsilon > ln(1/(1 - eta))``.  Raises ValueError outside that range.

    Parameters
    ----------
    n : int or array of int >= 1
    m : int >= 2, number of categories |X|
    eta : float in (0, 1), the sampling rate
    epsilon : float or 1-D array
    f : float in (0, 1/m], the strict-positivity constant f(m, n)

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Remark 8.
    """
    m = as_int(m, "m", minimum=2)
    eta_f = float(eta)
    if not (0 < eta_f < 1):
        raise ValueError(f"eta must be in (0, 1) for Remark 8, got {eta!r}")
    f = float(f)
    if not (0 < f <= 1.0 / m):
        raise ValueError(f"f must be in (0, 1/m] = (0, {1 / m:g}] (a probability lower bound), got {f!r}")
    e, scalar = as_epsilon(epsilon)
    nn = np.asarray(n, dtype=float)
    if np.any(nn < 1) or np.any(nn != np.round(nn)):
        raise ValueError(f"n must be a positive integer (or array of them), got {n!r}")
    lower = -math.log1p(-eta_f)
    if np.any(e <= lower):
        raise ValueError(f"Remark 8 holds only for epsilon > ln(1/(1 - eta)) = {lower:.6g}; got epsilon = {epsilon!r}")
    g = (-np.expm1(-e) / eta_f - 1.0) ** 2
    nn_b = nn[..., None]
    first = -g * f * nn_b / 6.0
    second = math.log(m) - f * nn_b / 8.0
    # Rounded up (the value is itself a bound, so only upward matters): g carries
    # expm1's LIBM_REL and three roundings, amplified by at most
    # 2 (1 + 1/|1 - (1-e^-eps)/eta|) ~ 2 |x|/|x - 1| in the square; each product adds u.
    # The terms' absolute errors are at most 64 u |term| + 8 LIBM_REL |g-term| and
    # LIBM_REL log m + 4u |term|; log-add-exp adds 2u |result| + 2 LIBM_REL.
    xg = -np.expm1(-e) / eta_f
    amp = 2.0 * (1.0 + np.abs(xg) / np.maximum(np.abs(xg - 1.0), 1e-300))
    err1 = (amp * (LIBM_REL + 4 * U) + 8 * U) * np.abs(first)
    err2 = LIBM_REL * math.log(m) + 4 * U * np.abs(second)
    v = np.logaddexp(first, second)
    # a delta is a probability: the bound says nothing beyond 1 (it exceeds 1 for small n)
    res = np.minimum(next_up(v + np.maximum(err1, err2) + 2 * U * np.abs(v) + 2 * LIBM_REL), 0.0)
    res = res if log else np.minimum(exp_up(res), 1.0)
    if scalar:
        res = res[..., 0]
    return float(res) if np.ndim(res) == 0 else res


def adjusted_utility(mechanism: Mechanism, hist_minus_i: npt.ArrayLike, t: float, *, log: bool = False) -> FloatOrArray:
    """The adversary's adjusted utility u(t, x_{-i}) of eq. (3), uniform prior.

    ``u = 1/(1-t) max_{X_i} E_{a ~ M(x_{-i} + X_i)} [max(0, 1 - t - l(a))]``
    where ``l(a) = 1 - max_j Pr[X_j | a, x_{-i}]`` is the 0-1 loss of the
    Bayes predictor and ``Pr[X_j | a, x_{-i}]`` is proportional to
    ``Pr[M(x_{-i} + e_j) = a]``.

    Parameters
    ----------
    mechanism : Mechanism
    hist_minus_i : counts of the n-1 known records, shape (m,) or (k, m)
    t : float in (0, 1), the accuracy threshold
    log : bool
        Natural log of the utility instead.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: eq. (3).
    """
    log = as_flag(log, "log")
    mech = check_mechanism(mechanism)
    t = as_open_unit(t, "t")
    hm = np.atleast_2d(np.asarray(hist_minus_i))
    if hm.ndim != 2 or hm.shape[1] < 2 or hm.shape[0] == 0:
        raise ValueError("hist_minus_i must have shape (m,) or (k, m) with m >= 2")
    single = np.ndim(hist_minus_i) == 1
    # x_{-i} may be empty (n = 1): validate with a dummy record added.
    h1, _ = as_histograms(hm + np.eye(1, hm.shape[1], dtype=np.int64), name="hist_minus_i")
    mech.check_histograms(h1, "hist_minus_i")
    h = h1 - np.eye(1, hm.shape[1], dtype=np.int64)
    out = np.empty(h.shape[0])
    for i, c in enumerate(h):
        mech.sample_size(int(c.sum()) + 1)
        out[i] = mech._log_utility(c, t) - math.log1p(-t)
    res = out if log else np.exp(out)
    return float(res[0]) if single else res


@dataclass(frozen=True)
class Composition:
    """The (epsilon, delta) guarantee of a composed mechanism (Proposition 5).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 5.
    """

    epsilon: float
    delta: float

    def __iter__(self) -> Iterator[float]:
        return iter((self.epsilon, self.delta))


def compose(guarantees: Sequence[tuple[float, float]]) -> Composition:
    """Proposition 5: running k (eps_i, delta_i, Pi)-smoothed DP mechanisms on the
    same database is (sum eps_i, sum delta_i, Pi)-smoothed DP.

    Both sums are exact sums of the given numbers (rational arithmetic: a
    float or a Fraction enters with its exact value) rounded up to the next
    float, so the composed guarantee is never understated.

    Parameters
    ----------
    guarantees : sequence of (eps_i, delta_i) pairs, eps_i >= 0, delta_i in [0, 1]

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 5.
    """
    items = list(guarantees)
    if not items:
        raise ValueError("guarantees must contain at least one (epsilon, delta) pair")
    eps_total = 0.0
    for i, pair in enumerate(items):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise TypeError(f"guarantees[{i}] must be an (epsilon, delta) pair of numbers, got {pair!r}")
        e = as_real(pair[0], f"guarantees[{i}] epsilon", lo=0.0, finite=False)
        as_real(pair[1], f"guarantees[{i}] delta", lo=0.0, hi=1.0)
        eps_total += e
    # the exact sums of the given numbers, rounded up (a guarantee must not shrink): an exact
    # rational (Fraction(1, 3)) enters as itself, not as the nearest float (which may lie below it)
    eps_up = fraction_up(sum(map(_exact, (p[0] for p in items)), Fraction(0))) if math.isfinite(eps_total) else math.inf
    return Composition(eps_up, min(1.0, fraction_up(sum(map(_exact, (p[1] for p in items)), Fraction(0)))))


def _exact(value: float | numbers.Rational) -> Fraction:
    """The exact rational value of a validated finite real number (a float, an int, a Fraction)."""
    if isinstance(value, numbers.Rational):
        return Fraction(value)
    return Fraction(float(value))
