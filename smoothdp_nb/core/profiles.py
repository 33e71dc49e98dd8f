"""Database-dependent privacy profiles and the quantities built on them.

* :func:`privacy_profile` -- delta_{epsilon,M}(x) of Definition 2;
* :func:`dp_delta` -- its worst case over all databases (Theorem 1; for the
  sampling histogram ``T/n``, Theorem 3 (iii));
* :func:`remark8_bound` -- the non-asymptotic smoothed-DP bound of Remark 8;
* :func:`adjusted_utility` -- the adversary's adjusted utility, eq. (3);
* :func:`compose` -- Proposition 5 (epsilons and deltas add).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import expit, logsumexp

from ._validate import as_epsilon, as_histograms, as_int, as_open_unit, as_real
from .divergence import log_hockey_stick, log_monotone_tail_sum
from .mechanisms import MAX_CELLS, ComputationTooLarge, NoisySamplingHistogram, SamplingHistogram, _compositions

__all__ = [
    "privacy_profile",
    "dp_delta",
    "remark8_bound",
    "adjusted_utility",
    "compose",
    "Composition",
]


def _check_mechanism(mech) -> None:
    if not (isinstance(mech, SamplingHistogram) or hasattr(mech, "_log_profile_batch")):
        raise TypeError(
            "mechanism must be a SamplingHistogram, NoisySamplingHistogram or another mechanism "
            f"of this package, got {type(mech).__name__}"
        )


def _shape_result(values: np.ndarray, single: bool, eps_scalar: bool, log: bool):
    """(k, E) log-values -> float / (k,) / (E,) / (k, E), in the requested scale."""
    res = values if log else np.exp(values)
    if single:
        res = res[0]
    if eps_scalar:
        res = res[..., 0]
    return float(res) if np.ndim(res) == 0 else res


def privacy_profile(mechanism, hist, epsilon, log: bool = False):
    """Database-dependent privacy profile delta_{epsilon,M}(x) (Definition 2).

    ``delta(x) = max(0, max_{x' ~ x} d(x, x'), max_{x' ~ x} d(x', x))`` with
    ``d(x, x') = max_S P[M(x) in S] - e^epsilon P[M(x') in S]``; neighbours replace
    one record by a record of another category.

    Parameters
    ----------
    mechanism : SamplingHistogram or NoisySamplingHistogram
    hist : array_like of int, shape (m,) or (k, m)
        Category counts of the database(s); rows may have different sizes n.
    epsilon : float or 1-D array of floats >= 0
    log : bool, default False
        Return natural logarithms (``-inf`` for an exact zero), which stay
        finite far below the float64 range (e.g. 1e-5000).

    Returns
    -------
    float or ndarray of shape (k,), (len(epsilon),) or (k, len(epsilon)).

    Notes
    -----
    For two categories the profile is a sum of at most four tails of
    hypergeometric (binomial, with replacement) laws, evaluated from the
    closed-form threshold outward with a proven truncation bound, so the cost
    does not grow with n.  For ``m > 2`` the joint law of the two categories
    involved is summed on its full grid (exact; cost ~ m^2 T^2).
    """
    _check_mechanism(mechanism)
    h, single = as_histograms(hist)
    e, eps_scalar = as_epsilon(epsilon)
    out = np.empty((h.shape[0], e.size))
    sizes = h.sum(axis=1)
    for n in np.unique(sizes):
        rows = np.nonzero(sizes == n)[0]
        mechanism.sample_size(int(n))  # validates T <= n early, with a clear message
        if hasattr(mechanism, "_log_profile_batch"):
            # protocol for other anonymous mechanisms: (k, m) histograms of size n -> (k, E) logs
            out[rows] = mechanism._log_profile_batch(h[rows], int(n), e)
        elif isinstance(mechanism, NoisySamplingHistogram):
            out[rows] = _log_profile_noisy(mechanism, h[rows], e)
        else:
            out[rows] = _log_profile_sampling(mechanism, h[rows], int(n), e)
    return _shape_result(out, single, eps_scalar, log)


def _log_profile_sampling(mech: SamplingHistogram, h: np.ndarray, n: int, epsilon: np.ndarray) -> np.ndarray:
    """log delta for histograms of a common size n (rows of h)."""
    T = mech.sample_size(n)
    k, m = h.shape
    if m == 2:
        return _log_profile_binary(mech, h, n, T, epsilon)
    # For every ordered pair (a, b) with h_a >= 1: the neighbour moves one
    # a-record to b; d(x, x') = F(h_a - 1, h_b) and d(x', x) = F(h_b, h_a - 1).
    us, vs, owner = [], [], []
    for a in range(m):
        for b in range(m):
            if a == b:
                continue
            rows = np.nonzero(h[:, a] >= 1)[0]
            u = h[rows, a] - 1
            v = h[rows, b]
            us += [u, v]
            vs += [v, u]
            owner += [rows, rows]
    u_all = np.concatenate(us)
    v_all = np.concatenate(vs)
    own = np.concatenate(owner)
    # One scalar key per pair (u, v <= n): a 1-D unique is far cheaper than np.unique(axis=0).
    if n < 2**31:
        keys, inverse = np.unique(u_all * (n + 1) + v_all, return_inverse=True)
        pu, pv = keys // (n + 1), keys % (n + 1)
    else:  # the key would overflow int64
        pairs, inverse = np.unique(np.stack([u_all, v_all], axis=1), axis=0, return_inverse=True)
        pu, pv = pairs[:, 0], pairs[:, 1]
    logF = mech._log_pair_divergence(pu, pv, n, T, epsilon)
    vals = logF[inverse.ravel()]
    out = np.full((k, epsilon.size), -np.inf)
    np.maximum.at(out, own, vals)
    return out


def _log_profile_binary(mech: SamplingHistogram, h: np.ndarray, n: int, T: int, epsilon: np.ndarray) -> np.ndarray:
    """m = 2: the same four divergences per histogram as the general case,
    indexed by u alone (every pair has u + v = n - 1)."""
    h0, h1 = h[:, 0], h[:, 1]
    # the four (u) per row: x -> x' moves an a-record (a = 0 or 1); d(x, x') and d(x', x)
    cand = np.stack([h0 - 1, h1, h1 - 1, h0])  # (4, k)
    valid = np.stack([h0 >= 1, h0 >= 1, h1 >= 1, h1 >= 1])
    U = cand[valid]
    if n <= 16 * U.size:  # dense index: cheaper than sorting
        needed = np.zeros(n, dtype=bool)
        needed[U] = True
        us = np.nonzero(needed)[0]
        where = np.cumsum(needed) - 1
        idx = where[np.where(valid, cand, 0)]
    else:
        us, inv = np.unique(U, return_inverse=True)
        idx = np.zeros(cand.shape, dtype=np.int64)
        idx[valid] = inv.ravel()
    logF = mech._log_pair_divergence(us, n - 1 - us, n, T, epsilon)  # (len(us), E)
    vals = np.where(valid[:, :, None], logF[idx], -np.inf)  # (4, k, E)
    return vals.max(axis=0)


def _neighbours(h: np.ndarray) -> list[np.ndarray]:
    m = len(h)
    res = []
    for a in range(m):
        if h[a] == 0:
            continue
        for b in range(m):
            if b != a:
                x = h.copy()
                x[a] -= 1
                x[b] += 1
                res.append(x)
    return res


def _log_profile_noisy(mech: NoisySamplingHistogram, h: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    out = np.full((h.shape[0], epsilon.size), -np.inf)
    cache: dict[tuple, np.ndarray] = {}

    def logpmf(x):
        key = tuple(int(c) for c in x)
        if key not in cache:
            cache[key] = mech._log_output_pmf(np.asarray(key, dtype=np.int64))[1]
        return cache[key]

    for i, x in enumerate(h):
        lp = logpmf(x)
        for xn in _neighbours(x):
            lq = logpmf(xn)
            out[i] = np.maximum(out[i], log_hockey_stick(lp, lq, epsilon))
            out[i] = np.maximum(out[i], log_hockey_stick(lq, lp, epsilon))
    return out


def dp_delta(mechanism, n: int, epsilon=None, *, categories: int = 2, log: bool = False):
    """The worst case of delta_{epsilon,M}(x) over all databases of n records (Theorem 1).

    * Sampling histogram without replacement: ``T/n`` for every epsilon >= 0
      (Theorem 3 (iii)): the database with a single record of one category
      attains it, and no database exceeds it because the two outputs differ
      only when the changed record is sampled.
    * With replacement: ``1 - (1 - 1/n)^T``, by the same argument.
    * Noisy sampling histogram: maximised numerically over every histogram of
      n records on ``categories`` categories (small n only); needs ``epsilon``.

    ``epsilon`` may be a scalar or an array (the result broadcasts to its shape).
    """
    _check_mechanism(mechanism)
    n = as_int(n, "n", minimum=1)
    T = mechanism.sample_size(n)
    if isinstance(mechanism, NoisySamplingHistogram):
        if epsilon is None:
            raise ValueError("epsilon is required for the DP delta of the noisy sampling histogram")
        categories = as_int(categories, "categories", minimum=2)
        count = math.comb(n + categories - 1, categories - 1)  # checked before enumerating them
        if count * (T + 1) ** categories > MAX_CELLS:
            raise ComputationTooLarge(
                f"dp_delta of the noisy mechanism enumerates {count} histograms with "
                f"(T+1)^m = {(T + 1) ** categories} output cells each; too large"
            )
        hists = _compositions(n, categories)
        vals = privacy_profile(mechanism, hists, epsilon, log=True)
        res = np.max(vals, axis=0)
        return res if log else np.exp(res)
    if hasattr(mechanism, "grid"):
        # Sampling average (Algorithm 3): the changed record is sampled with
        # probability T/n, and with all other records at one grid value g0 and
        # the changed one g0 vs another value the outputs are disjoint, so the
        # worst case of the sum is exactly T/n (Theorem 4).  After rounding
        # the mean, T/n remains an upper bound.
        logd = math.log(T) - math.log(n)
    elif mechanism.replace:
        logd = math.log(-math.expm1(T * math.log1p(-1.0 / n))) if n > 1 else 0.0
    else:
        logd = math.log(T) - math.log(n)
    if epsilon is None:
        return logd if log else math.exp(logd)
    e, scalar = as_epsilon(epsilon)
    res = np.full(e.shape, logd)
    res = res if log else np.exp(res)
    return float(res[0]) if scalar else res


def remark8_bound(n, m: int, eta, epsilon, f, log: bool = False):
    """Remark 8: the sampling histogram is (epsilon, delta, Pi)-smoothed DP with

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
        raise ValueError(
            f"Remark 8 holds only for epsilon > ln(1/(1 - eta)) = {lower:.6g}; got epsilon = {epsilon!r}"
        )
    g = (-np.expm1(-e) / eta_f - 1.0) ** 2
    nn_b = nn[..., None]
    first = -g * f * nn_b / 6.0
    second = math.log(m) - f * nn_b / 8.0
    res = np.logaddexp(first, second)
    res = res if log else np.exp(res)
    if scalar:
        res = res[..., 0]
    return float(res) if np.ndim(res) == 0 else res


def adjusted_utility(mechanism, hist_minus_i, t, *, log: bool = False):
    """The adversary's adjusted utility u(t, x_{-i}) of eq. (3), uniform prior.

    ``u = 1/(1-t) max_{X_i} E_{a ~ M(x_{-i} + X_i)} [max(0, 1 - t - l(a))]``
    where ``l(a) = 1 - max_j Pr[X_j | a, x_{-i}]`` is the 0-1 loss of the
    Bayes predictor and ``Pr[X_j | a, x_{-i}]`` is proportional to
    ``Pr[M(x_{-i} + e_j) = a]``.

    Parameters
    ----------
    mechanism : SamplingHistogram or NoisySamplingHistogram
    hist_minus_i : counts of the n-1 known records, shape (m,) or (k, m)
    t : float in (0, 1), the accuracy threshold
    log : bool
        Natural log of the utility instead.
    """
    _check_mechanism(mechanism)
    t = as_open_unit(t, "t")
    hm = np.atleast_2d(np.asarray(hist_minus_i))
    if hm.ndim != 2 or hm.shape[1] < 2 or hm.shape[0] == 0:
        raise ValueError("hist_minus_i must have shape (m,) or (k, m) with m >= 2")
    single = np.ndim(hist_minus_i) == 1
    # x_{-i} may be empty (n = 1): validate with a dummy record added.
    h1, _ = as_histograms(hm + np.eye(1, hm.shape[1], dtype=np.int64), name="hist_minus_i")
    h = h1 - np.eye(1, hm.shape[1], dtype=np.int64)
    out = np.empty(h.shape[0])
    for i, c in enumerate(h):
        n = int(c.sum()) + 1
        T = mechanism.sample_size(n)
        if h.shape[1] == 2 and not isinstance(mechanism, NoisySamplingHistogram):
            both = _log_utility_binary(mechanism, np.array([c[0], c[1]]), np.array([c[1], c[0]]), n, T, t)
            out[i] = np.max(both)
        else:
            out[i] = _log_utility_bruteforce(mechanism, c, t)
        out[i] -= math.log1p(-t)
    res = out if log else np.exp(out)
    return float(res[0]) if single else res


def _log_utility_binary(mech, u, v, n, T, t):
    """log sum_K P(K) max(0, sigma(|log r(K)|) - t) for rows (u, v): the
    expectation under the database with u+1 records of 'a' and v of 'b'."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    dist = mech._binary_dist(u, v, n, T)

    def factor(rows, k):
        lr = np.abs(mech._log_ratio(u[rows], v[rows], k, T - k))
        f = expit(lr) - t  # sigma(|lr|) = max posterior, >= 1/2
        return np.where(f > 0, f, 0.0)

    if t < 0.5:
        return log_monotone_tail_sum(dist, dist.lo, dist.hi, factor)
    L = math.log(t) - math.log1p(-t)  # logit(t) >= 0
    Ls = np.full(u.size, L)
    upper_start = mech._binary_threshold(u, v, T, Ls)
    # log r(u, v; K, T-K) < -L  <=>  log r(v, u; T-K, K) > L
    lower_end = T - mech._binary_threshold(v, u, T, Ls)
    upper = log_monotone_tail_sum(dist, upper_start, dist.hi, factor)
    lower_end = np.minimum(lower_end, upper_start - 1)  # keep the two tails disjoint
    lower = log_monotone_tail_sum(dist, dist.lo, lower_end, factor)
    return np.logaddexp(upper, lower)


def _log_utility_bruteforce(mech, c: np.ndarray, t: float) -> float:
    m = len(c)
    outs_list, logp = [], []
    for j in range(m):
        x = c.copy()
        x[j] += 1
        o, lp = mech._log_output_pmf(x)
        outs_list.append(o)
        logp.append(lp)
    # Align all pmfs on the union of outputs.
    allouts = np.unique(np.concatenate(outs_list), axis=0)
    L = np.full((m, len(allouts)), -np.inf)
    for j in range(m):
        idx = _row_index(allouts, outs_list[j])
        L[j, idx] = logp[j]
    post = np.exp(L - logsumexp(L, axis=0, keepdims=True))
    gain = np.maximum(0.0, post.max(axis=0) - t)
    with np.errstate(divide="ignore"):
        lg = np.log(gain)
    return float(np.max(logsumexp(L + lg[None, :], axis=1)))


def _row_index(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    keys = {tuple(r): i for i, r in enumerate(table.tolist())}
    return np.array([keys[tuple(r)] for r in rows.tolist()], dtype=np.int64)


@dataclass(frozen=True)
class Composition:
    """The (epsilon, delta) guarantee of a composed mechanism (Proposition 5)."""

    epsilon: float
    delta: float

    def __iter__(self):
        return iter((self.epsilon, self.delta))


def compose(guarantees: Sequence[tuple[float, float]]) -> Composition:
    """Proposition 5: running k (eps_i, delta_i, Pi)-smoothed DP mechanisms on the
    same database is (sum eps_i, sum delta_i, Pi)-smoothed DP.

    Parameters
    ----------
    guarantees : sequence of (eps_i, delta_i) pairs, eps_i >= 0, delta_i in [0, 1]
    """
    items = list(guarantees)
    if not items:
        raise ValueError("guarantees must contain at least one (epsilon, delta) pair")
    eps_total = 0.0
    delta_total = 0.0
    for i, pair in enumerate(items):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise TypeError(f"guarantees[{i}] must be an (epsilon, delta) pair of numbers, got {pair!r}")
        e = as_real(pair[0], f"guarantees[{i}] epsilon", lo=0.0, finite=False)
        d = as_real(pair[1], f"guarantees[{i}] delta", lo=0.0, hi=1.0)
        eps_total += e
        delta_total += d
    return Composition(eps_total, min(1.0, math.fsum([float(p[1]) for p in items])))
