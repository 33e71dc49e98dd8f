"""The mechanism protocol: :class:`Mechanism` (see its docstring), the generic
code every mechanism inherits, and the enumeration of histograms it uses."""

from __future__ import annotations

import itertools
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import pandas as pd

from ..array_types import FloatArray, IntArray
from ..budget import DEFAULT_BUDGET_SECONDS, ComputationTooLarge, Estimate, check_budget
from ..divergence import log_hockey_stick_enclosure
from ..enclosures import LIBM_REL, LogEnclosure, U, next_up
from ..validation import as_histograms, as_int, as_rng

if TYPE_CHECKING:  # the output maps sit above this module (postprocess imports it)
    from .postprocess import PostProcessing

__all__ = ["MAX_CELLS", "Mechanism", "compositions", "count_histograms", "factorize_outputs", "output_key"]

# Refuse explicit enumerations above this many (output x component) cells.
MAX_CELLS = 5 * 10**7
# a lower bound on the time of one output law (a Python call and a few arrays)
_MIN_LAW_SECONDS = 1e-5
# cells (pairs x outputs x epsilon) per chunk of the generic divergence kernel
_PAIR_CHUNK_CELLS = 2**22
# pairs of the block the kernel is timed on, to price one (pair, outputs, epsilon) cell
_TIMED_PAIRS = 64


def _cell_seconds(K: int, n_epsilon: int) -> float:
    """Seconds of the generic kernel per (row, neighbour) pair with K outputs
    and E epsilon (both directions), timed on the running machine on a block
    of that shape (the kernel is vectorised: its cost per cell is flat)."""
    E = max(1, n_epsilon)
    K_timed = max(1, min(K, _PAIR_CHUNK_CELLS // (_TIMED_PAIRS * E)))
    gen = np.random.default_rng(1)
    a = np.log(gen.dirichlet(np.ones(K_timed), size=_TIMED_PAIRS))
    b = np.log(gen.dirichlet(np.ones(K_timed), size=_TIMED_PAIRS))
    eps = np.linspace(0.1, 1.0, E)
    t0 = time.perf_counter()
    z = np.zeros_like(a)
    log_hockey_stick_enclosure(a, b, eps, z, z).maximum(log_hockey_stick_enclosure(b, a, eps, z, z))
    return (time.perf_counter() - t0) / _TIMED_PAIRS * (K / K_timed)


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
        self._check_generic_size(k, n, m)
        # neighbours: one record a -> b, for every a with h_a >= 1 and b != a
        a_idx, b_idx = np.nonzero(~np.eye(m, dtype=bool))
        moves = np.stack([a_idx, b_idx], axis=1).astype(np.int64)
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

    def _check_generic_size(self, k: int, n: int, m: int) -> None:
        """Refuse (:class:`ComputationTooLarge`, before any work) a generic profile
        whose neighbour histograms would not fit in memory or whose output laws
        would take longer than the default budget even at 10 microseconds each:
        each of the k rows has m (m - 1) neighbours of m counts (m^3 integers:
        8 GB for one row at m = 1000)."""
        neigh = m * (m - 1)
        nbytes = 8.0 * k * neigh * m * 3  # the neighbours, the valid ones and their distinct copy
        laws = min(k * (1 + neigh), count_histograms(n, m))
        check_budget(
            Estimate(laws * _MIN_LAW_SECONDS, nbytes),
            DEFAULT_BUDGET_SECONDS,
            f"the privacy profile of {self!r} on {k} histogram(s) of {m} categories (each with "
            f"m (m - 1) = {neigh:.3g} neighbours, one output law each)",
            "use fewer categories (merge the ones the mechanism treats alike)",
            parameter="categories",
        )

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
            err_r = self.log_output_pmf_error(hists[r], np.asarray(lp, dtype=float)) if with_error else 0.0
            if np.unique(c).size == c.size:
                L[r, c] = lp
                own[r, c] = err_r
            else:  # several entries of one output (e.g. two NaN keys): their masses add
                np.logaddexp.at(L[r], c, lp)
                # a sum of positive terms keeps the largest relative error of its terms, plus
                # one log-add-exp rounding per term (u of its operands, LIBM_REL of its log1p)
                lpf = np.asarray(lp, dtype=float)
                top = float(np.max(np.abs(lpf[np.isfinite(lpf)]), initial=0.0))
                np.maximum.at(own[r], c, np.broadcast_to(np.asarray(err_r, dtype=float), lpf.shape))
                own[r] += np.bincount(c, minlength=K) * (4.0 * U * (top + 1.0) + LIBM_REL)
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
        """Estimated seconds of :meth:`log_profile_batch` on ``count`` histograms of n records.

        The generic path does two kinds of work, priced separately on the
        running machine (never extrapolated from other database sizes):

        * one output law per *distinct* histogram among the rows and their
          neighbours -- at most ``count (1 + m (m - 1))`` and at most the
          ``C(n + m - 1, m - 1)`` histograms of n records, as the laws are
          computed once per call -- each priced by timing
          :meth:`_aligned_log_pmfs` (the law, the factorization of its
          outputs and its row of the aligned table) on a few histograms of
          exactly n records spread over the simplex (:meth:`law_cost`);
        * a hockey-stick divergence in both directions for each of the
          ``count m (m - 1) n / (n + m - 1)`` (row, neighbour) pairs (moves
          out of an empty category do not exist; exact on average over all
          histograms) over the K outputs and E epsilon, priced by timing the
          kernel on a block of that shape.

        When even 10 microseconds per law would exceed ``budget`` that lower
        bound is returned without timing anything (one law may itself be slow
        at large n).
        """
        laws = min(count * (1 + m * (m - 1)), count_histograms(n, m))
        floor = laws * _MIN_LAW_SECONDS
        if floor > budget:  # hopeless whatever one law costs: do not even time one
            return float(floor)
        per_law, K = self.law_cost(n, m, budget / laws)
        pairs = count * m * (m - 1) * n / (n + m - 1)
        return float(laws * per_law + pairs * _cell_seconds(round(K), n_epsilon))

    def law_cost(self, n: int, m: int, limit: float = math.inf) -> tuple[float, float]:
        """(seconds, outputs) of one output law at n records on m categories, as
        the generic path computes it (law, output factorization, aligned row).

        Timed on up to five distinct histograms of exactly n records -- two
        corners, the balanced one and random ones (fixed seed) -- after one
        untimed call on another histogram (a first call may import modules or
        fill caches); the mean over the probes, as the computation visits
        every histogram.  Cached per (n, m) on the instance.

        One law at n may itself take long, so laws at 16, 64, 256, ... records
        are timed first: as soon as one takes more than ``limit`` seconds, that
        time is returned (a law of more records is assumed to cost no less),
        and the caller refuses without ever computing a law at n.
        """
        store = getattr(self, "__dict__", None)  # a subclass with __slots__ is timed every time
        cache: dict[tuple[int, int], tuple[float, float]] = {} if store is None else store.setdefault("_law_cost", {})
        if (n, m) in cache:
            return cache[(n, m)]
        k = 16
        while k < n:
            probe = np.full((1, m), k // m, dtype=np.int64)
            probe[0, : k - int(probe.sum())] += 1
            try:
                t0 = time.perf_counter()
                self._aligned_log_pmfs(probe)
                seconds = time.perf_counter() - t0
            except ValueError:  # not a valid database size for this mechanism (e.g. a fixed sample > k)
                seconds = 0.0
            if seconds > limit:
                return seconds, 1.0
            k *= 4
        gen = np.random.default_rng(0)
        corners = np.eye(m, dtype=np.int64)[[0, m - 1]] * n
        balanced = np.full((1, m), n // m, dtype=np.int64)
        balanced[0, : n - int(balanced.sum())] += 1
        random = gen.multinomial(n, np.full(m, 1.0 / m), size=2).astype(np.int64)
        probes = np.unique(np.concatenate([corners, balanced, random]), axis=0)
        warm = np.zeros((1, m), dtype=np.int64)
        warm[0, 0], warm[0, 1] = n - n // 3, n // 3
        self._aligned_log_pmfs(warm)
        t0 = time.perf_counter()
        L = self._aligned_log_pmfs(probes)
        seconds = (time.perf_counter() - t0) / len(probes)
        outputs = float(np.isfinite(L).sum(axis=1).mean())  # outputs per law (their union is larger)
        cache[(n, m)] = (max(seconds, _MIN_LAW_SECONDS), max(outputs, 1.0))
        return cache[(n, m)]

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

    def _postprocessed(self, f: PostProcessing) -> Mechanism | None:
        """Hook: a faster form of this mechanism followed by the output map ``f``
        (Proposition 4), or None (the default) for the generic enumeration that
        :func:`~smoothdp_nb.core.mechanisms.postprocess.postprocess` builds."""
        return None

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

    Two outputs are the same output exactly when a reader of the release
    cannot tell them apart, so the codes never merge distinguishable values:

    * every NaN is one output (whatever its type or bit pattern), distinct
      from every other value (``None``, 0, ...);
    * ``None``, strings, tuples and values of different types (``1``,
      ``1.0``, ``True``, ``"1"``) are outputs of their own, and so are
      ``0.0`` and ``-0.0``; a numpy scalar is the Python value it prints
      as (``np.int64(3)`` is ``3``), and a numpy array is the tuple of its
      entries;
    * numeric arrays of one dtype (the histograms of the sampling
      mechanisms, 1-D values) are compared by the bits of their entries,
      with NaNs made one (vectorised); anything else is keyed in one pass
      of a dict (:func:`output_key`).

    Raises TypeError for an output that is not hashable (a list, a dict).
    """
    sizes = np.cumsum([0] + [len(o) for o in outputs])
    arrs = [o for o in outputs if isinstance(o, np.ndarray) and o.dtype != object and o.ndim in (1, 2)]
    if len(arrs) == len(outputs) and len({(a.dtype, a.shape[1:]) for a in arrs}) <= 1:
        allo = np.concatenate(arrs) if arrs else np.empty(0)
        rows = allo.reshape(len(allo), -1)
        if rows.dtype.kind in "fc":
            # one NaN, and -0.0 apart from 0.0: compare the bits of a copy with NaNs made canonical
            rows = np.where(np.isnan(rows), np.array(np.nan, dtype=rows.dtype), rows)
            rows = np.ascontiguousarray(rows).view(np.uint8).reshape(len(rows), -1)
        _, codes = np.unique(rows, axis=0, return_inverse=True)
        K = int(codes.max()) + 1 if codes.size else 0
    else:
        flat = list(itertools.chain.from_iterable(outputs))
        kinds = set(map(type, flat))
        if kinds <= {int, str} or kinds <= {bytes}:  # no two distinct values of these compare equal
            codes, uniques = pd.factorize(np.array(flat + [None], dtype=object)[:-1], use_na_sentinel=False)
            K = len(uniques)
        else:
            index: dict[Hashable, int] = {}
            try:
                codes = np.fromiter(
                    (index.setdefault(output_key(o), len(index)) for o in flat), dtype=np.int64, count=len(flat)
                )
            except TypeError as exc:
                raise TypeError(f"every output must be hashable (a number, string, tuple, None, ...): {exc}") from None
            K = len(index)
    codes = np.asarray(codes, dtype=np.int64).ravel()
    return [codes[sizes[i] : sizes[i + 1]] for i in range(len(outputs))], K


class _NaN:
    """The key of every NaN output (all NaNs are one output)."""

    def __repr__(self) -> str:
        return "nan"


_NAN_KEY = _NaN()


def output_key(o: object) -> Hashable:
    """A hashable key equal for two outputs exactly when they are the same output
    (see :func:`factorize_outputs`): the type is part of the key, floats keep
    the sign of zero, every NaN has one key, tuples are keyed entry by entry."""
    if isinstance(o, np.ndarray):
        return ("ndarray", o.shape, tuple(output_key(v) for v in o.ravel().tolist()))
    if isinstance(o, np.generic):
        o = o.item()
    t = type(o)
    if t is float or t is complex:
        if o != o:  # NaN (complex: either part)
            return _NAN_KEY
        if t is float and o == 0.0:
            return ("zero", math.copysign(1.0, o))
        return (t, o)
    if t is tuple:
        return (tuple, tuple(output_key(v) for v in o))  # type: ignore[attr-defined]
    if isinstance(o, float) and o != o:  # a float subclass holding NaN
        return _NAN_KEY
    if not isinstance(o, Hashable):
        raise TypeError(f"{type(o).__name__} is not hashable")
    return (t, o)
