"""The mechanism protocol: :class:`Mechanism` (see its docstring), the generic
code every mechanism inherits, and the enumeration of histograms it uses."""

from __future__ import annotations

import itertools
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

from .._types import FloatArray, IntArray
from .._validate import as_histograms, as_int, as_rng
from ..budget import DEFAULT_BUDGET_SECONDS, ComputationTooLarge
from ..divergence import log_hockey_stick_enclosure
from ..enclosures import LIBM_REL, LogEnclosure, U, next_up

__all__ = ["MAX_CELLS", "Mechanism", "compositions", "count_histograms"]

# Refuse explicit enumerations above this many (output x component) cells.
MAX_CELLS = 5 * 10**7
# a lower bound on the time of one output law (a Python call and a few arrays)
_MIN_LAW_SECONDS = 1e-5
# cells (pairs x outputs x epsilon) per chunk of the generic divergence kernel
_PAIR_CHUNK_CELLS = 2**22


def compositions(total: int, parts: int) -> IntArray:
    """All vectors of ``parts`` non-negative ints summing to ``total`` (stars and bars),
    shape ``(C(total + parts - 1, parts - 1), parts)``: every histogram of ``total``
    records on ``parts`` categories, and every composition of Algorithm 1."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    if parts == 2:
        k = np.arange(total + 1, dtype=np.int64)
        return np.stack([k, total - k], axis=1)
    bars = np.array(list(itertools.combinations(range(total + parts - 1), parts - 1)), dtype=np.int64)
    padded = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), total + parts - 1)], axis=1)
    return np.diff(padded, axis=1) - 1


def count_histograms(n: int, m: int) -> int:
    """Number of histograms of n records on m categories, ``C(n + m - 1, m - 1)``."""
    return math.comb(n + m - 1, m - 1)


class Mechanism(ABC):
    """An anonymous mechanism on finite databases: the protocol of smoothdp_nb.

    A database of n records over m categories (or m grid values) is given by
    its histogram ``x`` (m non-negative counts summing to n); neighbours
    ``x ~ x'`` replace one record by a record of another category.  Every
    generic feature of the package -- :func:`~smoothdp_nb.privacy_profile`
    (Definition 2), :func:`~smoothdp_nb.dp_delta`,
    :func:`~smoothdp_nb.smoothed_delta` (Definition 3, Algorithm 1 and Monte
    Carlo), :func:`~smoothdp_nb.postprocess` (Proposition 4), the result
    objects, charts and panels -- talks to a mechanism through the methods
    below only.

    Required (abstract)
    -------------------
    categories : int or None (property)
        Number of categories m the mechanism accepts (for a value grid: the
        number of grid values), or None when any m >= 2 works.
    log_output_pmf(hist) -> (outputs, log_p)
        The exact output law on the database ``hist`` (int array (m,)), in log
        space: ``outputs`` is an array with one entry (1-D) or one row (2-D)
        per possible output, comparable across databases (equal outputs are
        equal entries/rows), and ``log_p`` the natural logs of their
        probabilities (``-inf`` allowed), shape ``(len(outputs),)``.

    Provided, overridable
    ---------------------
    sample_size(n)
        Number of records the mechanism reads from n (default n); raises
        ValueError when n is impossible (e.g. a fixed sample larger than n).
    log_profile_enclosure(hists, n, epsilon)
        Proven bounds on ``log delta_eps(x)`` for k histograms of a common
        size n and E epsilons: a :class:`~smoothdp_nb.core.enclosures.LogEnclosure`
        of (k, E) arrays.  The default enumerates every neighbour and compares
        the output laws with
        :func:`~smoothdp_nb.core.divergence.log_hockey_stick_enclosure`,
        taking the values of :meth:`log_output_pmf` as the logs of the
        mechanism's probabilities to within ``LIBM_REL`` (4 ulps) of their size.
    log_profile_batch(hists, n, epsilon)
        Fast path: proven upper bounds on ``log delta_eps(x)``, shape (k, E)
        (default: the upper end of :meth:`log_profile_enclosure`).  A subclass
        that overrides only this method vouches for its own values: they are
        then taken as exact by :meth:`log_profile_enclosure` (override that
        one too to certify a fast path).
    delta_upper_bound(n, epsilon)
        A cheap bound on ``delta_eps(x)`` valid for every database of n
        records (default 1; the sampling mechanisms: T/n).  Every delta
        computed by the package is clipped to it.
    dp_delta(n, epsilon, categories=None, log=False), dp_delta_enclosure(n, epsilon, categories=None)
        The worst case over all databases of n records (Theorem 1), a proven
        upper bound, and proven bounds on its log.  Default:
        the largest profile over every histogram, refused with an estimate
        when there are too many.  Closed forms override it.
    log_utility(hist_minus_i, t)
        Fast path for the adversary's adjusted utility of eq. (3), before the
        factor 1/(1-t); the default enumerates the output laws.
    profile_seconds(n, m, count, n_epsilon, budget)
        Estimated run time of :meth:`log_profile_batch` on ``count``
        histograms (drives the refusals of the exact computations, with the
        engines' cost model of :mod:`smoothdp_nb.core.smoothed.cost`).
    postprocessed(f)
        The mechanism followed by the output map f (Proposition 4); a
        mechanism with a faster form of a known map (e.g. the winner of a
        sampled election) returns it here.
    sample_histogram(hist, rng, size), output_pmf(hist)
        Running the mechanism and its output law as a table; the defaults
        draw from / tabulate :meth:`log_output_pmf`.

    Equality and hashing use :meth:`_key` (default: identity), and ``label``
    is the ``repr``.
    """

    #: whether :meth:`dp_delta` varies with epsilon (False for the closed forms T/n)
    dp_delta_depends_on_epsilon: bool = True

    # -- description ---------------------------------------------------------------
    def _key(self) -> Hashable:
        """What makes two mechanisms of the same type equal (default: identity)."""
        return id(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mechanism) and type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    @property
    def label(self) -> str:
        """Short human-readable description, e.g. for chart legends."""
        return repr(self)

    # -- the protocol ------------------------------------------------------------------
    @property
    @abstractmethod
    def categories(self) -> int | None:
        """Number of categories (or grid values) m, or None for any m >= 2."""

    @abstractmethod
    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """(outputs, log-probabilities) of the output law on one histogram."""

    def log_output_pmf_error(self, hist: IntArray, log_p: FloatArray) -> FloatArray | float:
        """A proven bound on the absolute error of the values ``log_p`` that
        :meth:`log_output_pmf` returned for ``hist``, beyond ``LIBM_REL`` of
        their size (the default, 0: the values are logs of the mechanism's
        probabilities taken with one correctly rounded log).  A mechanism whose
        law is itself a float computation states its bound here."""
        return 0.0

    def sample_size(self, n: int) -> int:
        """Records read from a database of n records (all of them by default)."""
        return as_int(n, "n", minimum=1)

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        """Raise ValueError unless the histograms have this mechanism's number of categories."""
        m = self.categories
        if m is not None and hists.shape[1] != m:
            raise ValueError(f"{name} must have {m} counts per database for {self!r}, got {hists.shape[1]}")

    def delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """A bound on delta_eps(x) for every database of n records (default: 1)."""
        return np.ones(np.shape(epsilon))

    def log_profile_batch(self, hists: IntArray, n: int, epsilon: FloatArray) -> FloatArray:
        """Proven upper bounds on log delta_eps(x) (Definition 2) for histograms of size n: (k, E).

        The subclass's own :meth:`log_profile_enclosure` when it has one, else
        the generic enumeration (so a subclass's fast path may fall back on
        ``super().log_profile_batch``)."""
        if type(self).log_profile_enclosure is not Mechanism.log_profile_enclosure:
            return self.log_profile_enclosure(hists, n, epsilon).upper
        return self._generic_log_profile_enclosure(hists, n, epsilon).upper

    def log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x) for histograms of size n: (k, E) arrays.

        Generic path: the output law of every row and of every neighbour is
        computed once (:meth:`log_output_pmf`), all are placed on their common
        output space, and both directions of the hockey-stick divergence are
        enclosed for every (row, neighbour) pair, vectorised over pairs
        (:func:`~smoothdp_nb.core.divergence.log_hockey_stick_enclosure`, with
        the error bounds of :meth:`_aligned_log_pmfs`).  A subclass that
        overrides :meth:`log_profile_batch` but not this method gets its fast
        path's values as a zero-width enclosure.
        """
        if type(self).log_profile_batch is not Mechanism.log_profile_batch:
            v = np.asarray(self.log_profile_batch(hists, n, epsilon), dtype=float)
            return LogEnclosure(v, v)
        return self._generic_log_profile_enclosure(hists, n, epsilon)

    def _generic_log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """The enumeration of :meth:`log_profile_enclosure` (every neighbour's output law)."""
        h = np.asarray(hists, dtype=np.int64)
        k, m = h.shape
        # neighbours: one record a -> b, for every a with h_a >= 1 and b != a
        moves = np.array([(a, b) for a in range(m) for b in range(m) if a != b], dtype=np.int64)
        eye = np.eye(m, dtype=np.int64)
        nb = h[:, None, :] - eye[moves[:, 0]][None] + eye[moves[:, 1]][None]  # (k, M, m)
        ok = (nb >= 0).all(axis=2)
        rows, mv = np.nonzero(ok)
        every = np.concatenate([h, nb[rows, mv]])
        distinct, inv = np.unique(every, axis=0, return_inverse=True)
        inv = inv.ravel()
        L, err = self._aligned_log_pmfs(distinct, with_error=True)
        own, other = inv[rows], inv[k + np.arange(rows.size)]
        lo: FloatArray = np.full((k, epsilon.size), -np.inf)
        hi: FloatArray = np.full((k, epsilon.size), -np.inf)
        K = L.shape[1]
        step = max(1, _PAIR_CHUNK_CELLS // max(1, K * epsilon.size))
        for s in range(0, rows.size, step):
            i, j = own[s : s + step], other[s : s + step]
            d = log_hockey_stick_enclosure(L[i], L[j], epsilon, err[i], err[j]).maximum(
                log_hockey_stick_enclosure(L[j], L[i], epsilon, err[j], err[i])
            )
            np.maximum.at(lo, rows[s : s + step], np.reshape(d.lower, (i.size, epsilon.size)))
            np.maximum.at(hi, rows[s : s + step], np.reshape(d.upper, (i.size, epsilon.size)))
        return LogEnclosure(np.minimum(lo, 0.0), np.minimum(hi, 0.0))

    @overload
    def _aligned_log_pmfs(self, hists: IntArray) -> FloatArray: ...

    @overload
    def _aligned_log_pmfs(self, hists: IntArray, with_error: Literal[True]) -> tuple[FloatArray, FloatArray]: ...

    def _aligned_log_pmfs(
        self, hists: IntArray, with_error: bool = False
    ) -> FloatArray | tuple[FloatArray, FloatArray]:
        """(len(hists), K): the output laws of the histograms on their common
        output space (the union of the outputs, found in one vectorised pass).

        ``with_error``: also a proven bound on the absolute error of each value
        against the log of the mechanism's probability, the reported law
        normalised exactly: ``LIBM_REL`` of its size (a log the mechanism may
        have taken of exact probabilities, 4 ulps), the renormalising
        subtraction (``u`` of the result) and the log-add-exp reduction of the
        total (K steps, each ``2u`` of its operands and ``LIBM_REL``).  A law
        whose computed total is exactly 0 is taken as normalised, as reported
        (nothing is subtracted); this is the convention that defines the law
        of a mechanism given by rounded numbers."""
        laws = [self.log_output_pmf(x) for x in hists]
        codes, K = factorize_outputs([o for o, _ in laws])
        L: FloatArray = np.full((len(laws), K), -np.inf)
        own: FloatArray = np.zeros((len(laws), K))
        for r, (c, (_, lp)) in enumerate(zip(codes, laws)):
            L[r, c] = lp
            if with_error:
                own[r, c] = self.log_output_pmf_error(hists[r], np.asarray(lp, dtype=float))
        # each law sums to 1 up to rounding: make it exact to rounding, so equal
        # laws (e.g. a point mass reached by different sums) compare equal
        with np.errstate(invalid="ignore"):
            total: FloatArray = np.logaddexp.reduce(L, axis=1, keepdims=True)  # ufunc.reduce is typed Any
            out: FloatArray = L - total
        if not with_error:
            return out
        fin = np.isfinite(L)
        Lf = np.where(fin, L, 0.0)
        # the reduction: K log-add-exp steps, each off by u of its partial result and
        # LIBM_REL of a log1p term below log 2; none where the total is exactly 0
        top = np.max(np.abs(Lf), axis=1, keepdims=True, initial=0.0)
        red = np.where(total == 0.0, 0.0, K * (2.0 * U * (top + np.abs(total)) + LIBM_REL))
        raw = LIBM_REL * np.abs(Lf) + U * np.abs(np.where(fin, out, 0.0)) + red + own
        err = np.where(raw > 0, next_up(raw), 0.0)  # an exact 0 (log 1, as reported) stays exact
        return out, np.where(fin, err, 0.0)

    def profile_seconds(
        self, n: int, m: int, count: int, n_epsilon: int, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> float:
        """Estimated seconds of :meth:`log_profile_batch` on ``count`` histograms.

        Default: one output law is timed (at small n, extrapolated), and the
        generic path evaluates
        ``1 + m (m - 1)`` laws per histogram (at most) plus a divergence per
        neighbour over the K outputs (~2e-8 s per output and epsilon).  When
        even 10 microseconds per law would exceed ``budget``, that
        lower bound is returned without timing anything (one law may itself be
        slow at large n).
        """
        neigh = m * (m - 1)
        floor = count * (1 + neigh) * _MIN_LAW_SECONDS
        if floor > budget:  # hopeless whatever one law costs: do not even time one
            return floor
        per_law, K = self._law_cost(n, m)
        return count * ((1 + neigh) * per_law + 2 * neigh * K * n_epsilon * 2e-8)

    def _law_cost(self, n: int, m: int) -> tuple[float, float]:
        """(seconds, outputs) of one output law at n records, extrapolated from
        timed laws at 16 and 32 records (one law at large n may be slow itself):
        a power law through the two, exponent clipped to [0, 4]."""

        def timed(k: int) -> tuple[float, float]:
            t0 = time.perf_counter()
            outs, _ = self.log_output_pmf(np.eye(1, m, dtype=np.int64)[0] * k)
            return max(time.perf_counter() - t0, _MIN_LAW_SECONDS), len(outs)

        if n <= 32:
            return timed(n)

        def grow(a: float, b: float) -> float:
            return min(4.0, max(0.0, math.log2(b / a)))

        (t1, k1), (t2, k2) = timed(16), timed(32)
        r = n / 32
        return t2 * r ** grow(t1, t2), k2 * r ** grow(k1, k2)

    def dp_delta(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        log: bool = False,
        budget: float = DEFAULT_BUDGET_SECONDS,
        all_profiles: FloatArray | None = None,
    ) -> FloatArray:
        """max over all databases of n records of delta_eps(x) (Theorem 1), shape (E,).

        Default: every histogram on m categories (the mechanism's own m, else
        ``categories``) is enumerated and its profile computed; refused with
        the estimated run time when that exceeds ``budget`` seconds.
        ``all_profiles``: the log profiles of every histogram (in the order of
        :func:`compositions`), when the caller has computed them already.
        """
        m = self.categories if self.categories is not None else as_int(categories, "categories", minimum=2)
        if all_profiles is not None:
            return _finish_dp(all_profiles.max(axis=0), self.delta_upper_bound(n, epsilon), log)
        return _finish_dp(
            self.dp_delta_enclosure(n, epsilon, m, budget=budget).upper, self.delta_upper_bound(n, epsilon), log
        )

    def dp_delta_enclosure(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        budget: float = DEFAULT_BUDGET_SECONDS,
    ) -> LogEnclosure:
        """Proven bounds on the log of the DP delta, shape (E,): the maximum of the
        profile enclosures over every histogram of n records (refused with the
        estimated run time above ``budget`` seconds).  Closed forms override it."""
        m = self.categories if self.categories is not None else as_int(categories, "categories", minimum=2)
        count = count_histograms(n, m)
        est = self.profile_seconds(n, m, count, epsilon.size, budget)
        if est > budget:
            raise ComputationTooLarge(
                f"the DP delta of {self!r} enumerates all {count:.3g} databases of n={n} records on "
                f"{m} categories, estimated ~{est:.3g} s (budget {budget:g} s); use a smaller n "
                "(the smoothed delta does not need it)"
            )
        enc = self.log_profile_enclosure(compositions(n, m), n, epsilon)
        return LogEnclosure(np.max(enc.lower, axis=0), np.max(enc.upper, axis=0)).cap(
            log_up(self.delta_upper_bound(n, epsilon))
        )

    def log_utility(self, hist_minus_i: IntArray, t: float) -> float:
        """log of ``max_j E_{a ~ M(x_-i + e_j)}[max(0, max posterior(a) - t)]``
        (eq. (3) before the factor 1/(1 - t)), uniform prior over the unknown
        record, by enumerating the m output laws."""
        m = hist_minus_i.size
        L = self._aligned_log_pmfs(hist_minus_i[None, :] + np.eye(m, dtype=np.int64))
        with np.errstate(invalid="ignore"):
            norm = np.logaddexp.reduce(L, axis=0)
            post = np.where(np.isfinite(norm), np.exp(L - norm), 0.0)
        gain = np.maximum(0.0, post.max(axis=0) - t)
        with np.errstate(divide="ignore"):
            lg = np.log(gain)
            terms = np.where(np.isfinite(L) & np.isfinite(lg), L + lg, -np.inf)
        return float(np.max(np.logaddexp.reduce(terms, axis=1)))

    def postprocessed(self, f: Any) -> Mechanism:
        """This mechanism followed by the output map ``f`` (see :func:`postprocess`)."""
        from .postprocess import PostProcessed, as_output_map

        return PostProcessed(self, as_output_map(f))

    # -- running the mechanism ---------------------------------------------------------
    def _one_histogram(self, hist: object) -> IntArray:
        h, single = as_histograms(hist)
        if not single:
            raise ValueError("hist must be a single histogram of shape (m,) here")
        self.check_histograms(h)
        first: IntArray = h[0]
        return first

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> Any:
        """Draw the mechanism's output on the database ``hist`` (``size`` draws: an array; one output
        is whatever the law's outputs hold, hence ``Any``)."""
        outs, logp = self.log_output_pmf(self._one_histogram(hist))
        p = np.exp(logp - np.logaddexp.reduce(logp))
        gen = as_rng(rng)
        idx = gen.choice(len(p), size=None if size is None else as_int(size, "size", minimum=1), p=p / p.sum())
        return outs[idx]

    def output_pmf(self, hist: object) -> pd.DataFrame:
        """The exact output law on one database: one row per output (columns
        ``output`` or ``o0, o1, ...``), ``probability`` and ``log_probability``."""
        outs, logp = self.log_output_pmf(self._one_histogram(hist))
        if np.ndim(outs) == 2:
            df = pd.DataFrame(np.asarray(outs), columns=[f"o{j}" for j in range(np.shape(outs)[1])])
        else:
            df = pd.DataFrame({"output": list(outs)})
        df["probability"] = np.exp(logp)
        df["log_probability"] = logp
        return df


def log_up(x: FloatArray) -> FloatArray:
    """A float >= log(x) for x > 0 (``-inf`` for 0)."""
    with np.errstate(divide="ignore"):
        v = np.log(np.asarray(x, dtype=float))
    out: FloatArray = np.where(np.isfinite(v), next_up(v + LIBM_REL * np.abs(v) + 2.0**-1074), v)
    return out


def _finish_dp(logd: FloatArray, cap: FloatArray, log: bool) -> FloatArray:
    """A DP delta's upper bound (log) clipped at the proven bound ``cap`` (linear),
    as a log or rounded up to a linear value."""
    from ..enclosures import exp_up

    logd = np.minimum(logd, log_up(cap))
    return logd if log else np.minimum(exp_up(logd), cap)


def factorize_outputs(outputs: list[Any]) -> tuple[list[IntArray], int]:
    """Integer codes of the outputs of several laws on their union: (codes per law, K).

    Numeric 2-D outputs are compared row-wise (np.unique), 1-D outputs of any
    hashable type by value (pandas.factorize)."""
    sizes = np.cumsum([0] + [len(o) for o in outputs])
    arrs = [o for o in outputs if isinstance(o, np.ndarray) and o.dtype != object and o.ndim in (1, 2)]
    allo: np.ndarray
    if len(arrs) == len(outputs):
        allo = np.concatenate(arrs)
        _, codes = np.unique(allo.reshape(len(allo), -1), axis=0, return_inverse=True)
        K = int(codes.max()) + 1 if codes.size else 0
    else:
        # hashable labels of any type (tuples stay tuples), gathered at C speed
        allo = np.fromiter(itertools.chain.from_iterable(outputs), dtype=object, count=int(sizes[-1]))
        codes, uniques = pd.factorize(allo)
        K = len(uniques)
    codes = np.asarray(codes).ravel()
    return [codes[sizes[i] : sizes[i + 1]] for i in range(len(outputs))], K
