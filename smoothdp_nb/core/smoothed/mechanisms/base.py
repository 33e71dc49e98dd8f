"""The mechanism protocol: :class:`Mechanism` (see its docstring), the generic
code every mechanism inherits, and the enumeration of histograms it uses."""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Hashable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, ClassVar, Literal, overload

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LogEnclosure
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution
from smoothdp_nb.core.numerics.validation import as_histograms, as_int, as_rng
from smoothdp_nb.core.runtime.budget import (
    DEFAULT_BUDGET_SECONDS,
    ComputationTooLarge,
    Estimate,
    check_budget,
    current_budget,
)
from smoothdp_nb.core.runtime.parallel import engine_threads
from smoothdp_nb.core.smoothed.mechanisms.enumeration import (
    PAIR_CHUNK_CELLS,
    cell_seconds,
    compositions,
    count_histograms,
)
from smoothdp_nb.core.smoothed.mechanisms.generic import (
    LawBatch,
    active_memo,
    law_scope,
    law_table,
    neighbour_profile_enclosure,
)
from smoothdp_nb.core.smoothed.mechanisms.output_maps import PostProcessing
from smoothdp_nb.core.smoothed.mechanisms.outputs import factorize_outputs, output_key
from smoothdp_nb.core.smoothed.mechanisms.rounding import finish_dp, log_up

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MAX_CELLS",
    "Mechanism",
    "RunLosses",
    "compositions",
    "count_histograms",
    "factorize_outputs",
    "log_up",
    "output_key",
]


#: one run's loss distributions on a pair: (forward upper, backward upper, forward lower, backward lower),
#: each a list of (law, multiplicity)
RunLosses = tuple[
    list[tuple[LossDistribution, int]],
    list[tuple[LossDistribution, int]],
    list[tuple[LossDistribution, int]],
    list[tuple[LossDistribution, int]],
]

# Refuse explicit enumerations above this many (output x component) cells.
MAX_CELLS = 5 * 10**7
# a lower bound on the time of one output law (a Python call and a few arrays)
_MIN_LAW_SECONDS = 1e-5


class Mechanism(ABC):
    """An anonymous mechanism on finite databases: the protocol of smoothdp_nb.

    A database of n records over m categories (or m grid values) is given by
    its histogram ``x`` (m non-negative counts summing to n); neighbours
    ``x ~ x'`` replace one record by a record of another category (the paper's
    relation, ``neighbours="replace"``, the default of every function), or with
    ``neighbours="add-remove"`` have one record more or one fewer (docs/neighbours.md).  As with
    scipy's ``rv_continuous`` (``_pdf`` is enough), a subclass states the law
    of its output and inherits everything else: the privacy profile, the DP
    delta, Algorithm 1 (exact and Monte Carlo), composition and accounting
    are functions of the package (:func:`smoothdp_nb.privacy_profile`,
    :func:`smoothdp_nb.dp_delta`, :func:`smoothdp_nb.smoothed_delta`, ...)
    that take the mechanism as their first argument.

    Notes
    -----
    **Implement these** (two members):

    ``categories : int or None`` (a property or a class attribute)
        Number of categories m the mechanism accepts (for a value grid: the
        number of grid values), or None when any m >= 2 works.
    ``log_output_pmf(hist) -> (outputs, log_p)``
        The exact output law on the database ``hist`` (int array (m,)), in log
        space: ``outputs`` is an array with one entry (1-D) or one row (2-D)
        per possible output, comparable across databases (equal outputs are
        equal entries/rows), and ``log_p`` the natural logs of their
        probabilities (``-inf`` allowed), shape ``(len(outputs),)``.  Each
        value must be within ``LIBM_REL`` (4 ulps) of the log of the true
        probability, plus :meth:`log_output_pmf_error`.

    **Optional hooks**, each with what it must promise:

    ``log_output_pmf_error(hist, log_p) -> float or array``
        A **proven** bound on the absolute error of ``log_p`` beyond
        ``LIBM_REL`` (default 0: the values are correctly rounded logs).
    ``sample_size(n) -> int``
        The records read from a database of n records (default n); raises
        ValueError when n is impossible (e.g. fewer records than a sample).
    ``_log_profile_enclosure(hists, n, epsilon) -> LogEnclosure``
        **Proven** bounds ``lower <= log delta_eps(x) <= upper`` (Definition
        2) for k histograms of n records (int64, (k, m), validated) at E
        epsilons: (k, E) arrays -- a closed form replacing the default, which
        compares every neighbour's output law (:func:`~.generic.neighbour_profile_enclosure`).
    ``_delta_upper_bound(n, epsilon) -> (E,) array``
        A **proven** bound on delta_eps(x) for every database of n records
        (default 1); every delta the package reports is clipped to it.  With
        ``dp_delta_depends_on_epsilon = False`` and a closed
        ``_dp_delta_enclosure`` it must be attained: it is then the DP delta.
    ``_dp_delta_enclosure(n, epsilon, categories, budget) -> LogEnclosure``
        **Proven** bounds on the log of the DP delta (Theorem 1), shape (E,):
        a closed form replacing the default, the largest profile over every
        histogram of n records (refused with ComputationTooLarge above
        ``budget`` seconds).  A mechanism with a closed form whose value does
        not depend on epsilon also sets ``dp_delta_depends_on_epsilon = False``.
    ``_profile_cost(n, m, count, n_epsilon, budget) -> Estimate``
        Seconds and peak bytes of the profiles of ``count`` histograms of n
        records at ``n_epsilon`` epsilons, before any work.  It decides every
        refusal, so it must **err high**: an estimate that is too low lets a
        computation run for hours (default: the generic path timed on the
        running machine, :meth:`_law_cost`).
    ``_postprocessed(f) -> Mechanism or None``
        A mechanism with exactly the output law of this one followed by the
        output map f (Proposition 4), computed faster; None (default) for the
        generic enumeration.

    A subclass may also replace a default by a faster form that returns the
    same values: ``_log_output_pmfs`` (many laws at once), ``_log_profile_sizes``
    (histograms of mixed sizes), ``_log_utility`` (eq. (3)),
    ``sample_histogram`` and ``output_pmf``; and describe itself with
    ``__repr__``, ``label`` and ``_key`` (equality and hashing; default identity).

    **Other relations and laws without a finite form.**  The hooks above speak of the
    replace relation.  Under ``neighbours="add-remove"`` the profile comes from
    ``_log_profile_add_remove(hists, n, epsilon)`` (**proven** bounds on log delta_eps(x)
    against the neighbours of n - 1 and n + 1 records, (k, E); default: the output laws of
    the 2m neighbours compared) and the DP delta from
    ``_dp_delta_add_remove_enclosure(n, epsilon, categories, budget)`` (default: every
    histogram of n records).  A mechanism without a finite output law (a noisy count)
    states one run's privacy-loss distributions on a pair with ``_pair_losses(x, x2)``
    (as :func:`~.composed.run_losses` returns them: forward and backward, rounded for the
    upper and for the lower bound; default None: from :meth:`log_output_pmf`), so that
    compositions can use it.

    **Declarations** (class attributes): ``label_symmetric`` -- True when
    relabelling the categories leaves every profile unchanged (Algorithm 1 then
    profiles one histogram of each mirror pair); False by default.  A class
    that defines a profile hook (``_log_profile_enclosure`` or
    ``_log_profile_sizes``) below a label-symmetric class must state it again:
    otherwise class creation raises TypeError, as a new profile is not known
    to be symmetric.  ``dp_delta_depends_on_epsilon`` (see above).

    **Not overridable**: ``_profile`` (the engines' entry: validated
    histograms of any sizes, clipped to :meth:`_delta_upper_bound`),
    ``_dp_delta`` (the DP delta from :meth:`_dp_delta_enclosure`, clipped and
    rounded) and ``profile_cost`` (the validated :meth:`_profile_cost`):
    defining one raises TypeError at class creation.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definitions 2 and 3,
    Theorem 1, Proposition 4 and eq. (3).
    """

    #: the members a subclass may not define (it overrides the hooks they call)
    _TEMPLATES: ClassVar[frozenset[str]] = frozenset({"_profile", "_dp_delta", "profile_cost"})
    #: the hooks a profile comes from: a class defining one states ``label_symmetric`` itself
    _PROFILE_HOOKS: ClassVar[tuple[str, ...]] = ("_log_profile_enclosure", "_log_profile_sizes")
    #: the private members other modules may call: the engines' entries and the hooks, nothing else
    HOOKS: ClassVar[frozenset[str]] = frozenset(
        {
            *_TEMPLATES,
            "_log_profile_enclosure",
            "_delta_upper_bound",
            "_dp_delta_enclosure",
            "_profile_cost",
            "_postprocessed",
            "_log_output_pmfs",
            "_log_utility",
            "_law_scope",
            "_log_profile_range_upper",
            "_log_profile_add_remove",
            "_dp_delta_add_remove_enclosure",
            "_pair_losses",
        }
    )

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls.__dict__:
            if name in Mechanism._TEMPLATES:
                raise TypeError(
                    f"{cls.__name__}.{name}: {name} is a template method of Mechanism; "
                    f"override its hook instead (e.g. _dp_delta_enclosure, _log_profile_enclosure, _profile_cost)"
                )
        own_profile = [h for h in Mechanism._PROFILE_HOOKS if h in cls.__dict__]
        if own_profile and "label_symmetric" not in cls.__dict__ and cls.label_symmetric:
            raise TypeError(
                f"{cls.__name__} defines {own_profile[0]} and inherits label_symmetric = True: "
                "set label_symmetric in the class (True only if relabelling the categories "
                "leaves every privacy profile unchanged)"
            )

    #: whether the DP delta varies with epsilon (False for the closed forms T/n)
    dp_delta_depends_on_epsilon: ClassVar[bool] = True
    #: whether relabelling the categories leaves every profile unchanged (delta(x o sigma) = delta(x)):
    #: Algorithm 1 then computes one histogram of each mirror pair (m = 2)
    label_symmetric: ClassVar[bool] = False

    # -- description ---------------------------------------------------------------
    def _key(self) -> Hashable:
        """What makes two mechanisms of the same type equal (default: identity)."""
        return id(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mechanism) and type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def __repr__(self) -> str:
        """The class name (a subclass with parameters shows them)."""
        return f"{type(self).__name__}()"

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

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """A bound on delta_eps(x) for every database of n records (default: 1)."""
        return np.ones(np.shape(epsilon))

    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Hook: proven bounds on log delta_eps(x) for histograms of size n: (k, E) arrays.

        Default (the generic path): the output law of every row and of every
        neighbour is computed once (:meth:`_log_output_pmfs`), all are placed on
        their common output space, and both directions of the hockey-stick
        divergence are enclosed once for every distinct unordered pair of (row,
        neighbour) laws, vectorised over pairs
        (:func:`~smoothdp_nb.core.numerics.divergence.log_hockey_stick_enclosure`, with
        the error bounds of :meth:`_aligned_log_pmfs`).
        """
        h = np.asarray(hists, dtype=np.int64)
        self._check_generic_size(h.shape[0], n, h.shape[1])
        return neighbour_profile_enclosure(self, h, epsilon, self._states_pmf_error(), active_memo(self))

    def _log_profile_add_remove(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Hook: proven bounds on log delta_eps(x) under the add-remove relation, for k
        histograms of n records (n >= 2; every neighbour has n - 1 or n + 1 records): (k, E).

        Default: the generic path of :meth:`_log_profile_enclosure` with the 2m
        neighbours ``x - e_a`` (``x_a >= 1``) and ``x + e_a`` in place of the m (m - 1)
        replacements -- the same proven enclosure of every hockey-stick divergence."""
        h = np.asarray(hists, dtype=np.int64)
        self._check_generic_size(h.shape[0], n + 1, h.shape[1])
        return neighbour_profile_enclosure(
            self, h, epsilon, self._states_pmf_error(), active_memo(self), neighbours="add-remove"
        )

    def _dp_delta_add_remove_enclosure(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        budget: float = DEFAULT_BUDGET_SECONDS,
    ) -> LogEnclosure:
        """Hook: proven bounds on the log of the add-remove DP delta over databases of n
        records, (E,): the largest :meth:`_log_profile_add_remove` over every histogram of n
        records (refused above ``budget`` seconds, the replace estimate times three: 2m
        neighbours of two sizes instead of m (m - 1))."""
        m = self.categories if self.categories is not None else as_int(categories, "categories", minimum=2)
        count = count_histograms(n, m)
        est = 3.0 * self._profile_cost(n, m, count, epsilon.size, budget).seconds
        if est > budget:
            raise ComputationTooLarge(
                f"the add-remove DP delta of {self!r} enumerates all {count:.3g} databases of n={n} records "
                f"on {m} categories, estimated ~{est:.3g} s (budget {budget:g} s); use a smaller n"
            )
        enc = self._log_profile_add_remove(compositions(n, m), n, epsilon)
        return LogEnclosure(np.max(enc.lower, axis=0), np.max(enc.upper, axis=0))

    def _pair_losses(self, x: IntArray, x2: IntArray) -> RunLosses | None:
        """Hook: one run's privacy-loss distributions on the pair (x, x') -- (forward
        upper, backward upper, forward lower, backward lower), each a list of (law,
        multiplicity) -- or None (the default) to build them from the output laws."""
        return None

    def _log_profile_range_upper(self, lo: IntArray, hi: IntArray, n: int, epsilon: FloatArray) -> FloatArray | None:
        """Hook for the engines: proven upper bounds on log delta_eps(k, n - k) over every k in
        ``[lo_i, hi_i]`` (two categories), O(1) per range, shape (ranges, E); None (the default)
        when the mechanism has none -- the exact engine then computes every profile."""
        return None

    def _law_scope(self) -> AbstractContextManager[None]:
        """Hook for the engines: within it (nested scopes are one), the generic path
        computes each histogram's output law at most once -- across the chunks of
        profiles, the cost estimate's probes and repeated calls (a bisection) --
        in a bounded memo dropped when the outermost scope ends (:func:`~.generic.law_scope`)."""
        return law_scope(self)

    def _states_pmf_error(self) -> bool:
        """Whether this mechanism bounds its laws' errors itself (:meth:`log_output_pmf_error`)."""
        return type(self).log_output_pmf_error is not Mechanism.log_output_pmf_error

    def _log_output_pmfs(self, hists: IntArray) -> LawBatch:
        """Hook: the output laws of several histograms, flat: (outputs in one or more
        arrays, in order; their log-probabilities; the number of outputs of each
        law).  Default: :meth:`log_output_pmf` of each histogram.  A mechanism whose
        laws come from one call each (a user's function) may gather them with less
        per-law work; the laws must be those of :meth:`log_output_pmf`, except that
        an output may be listed several times in one law (its masses add)."""
        laws = [self.log_output_pmf(x) for x in hists]
        sizes = np.array([len(lp) for _, lp in laws], dtype=np.int64)
        logp = np.concatenate([np.asarray(lp, dtype=float) for _, lp in laws]) if laws else np.zeros(0)
        return [o for o, _ in laws], logp, sizes

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
            current_budget(),
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
        L, err = law_table(self, hists, with_error, self._states_pmf_error(), active_memo(self))
        return L if err is None else (L, err)

    def _profile_cost(
        self, n: int, m: int, count: int, n_epsilon: int, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> Estimate:
        """Hook: estimated seconds and peak bytes of :meth:`_log_profile_enclosure` on
        ``count`` histograms of n records.

        The generic path does two kinds of work, priced separately on the
        running machine (never extrapolated from other database sizes):

        * one output law per *distinct* histogram among the rows and their
          neighbours -- at most ``count (1 + m (m - 1))`` and at most the
          ``C(n + m - 1, m - 1)`` histograms of n records, as the laws are
          computed once per call -- each priced by timing
          :meth:`_aligned_log_pmfs` (the law, the factorization of its
          outputs and its row of the aligned table) on a few histograms of
          exactly n records spread over the simplex (:meth:`_law_cost`);
        * a hockey-stick divergence in both directions for each of the
          ``count m (m - 1) n / (n + m - 1)`` (row, neighbour) pairs (moves
          out of an empty category do not exist; exact on average over all
          histograms) over the K outputs and E epsilon, priced by timing the
          kernel on a block of that shape; a pair of two rows is computed
          once, so at most half of them when the rows are every histogram
          (``count / C(n + m - 1, m - 1)`` of the neighbours are rows).  Pairs
          of bit-identical laws share one evaluation too, which the estimate
          does not count (an upper estimate for mechanisms that read only
          some counts).

        When even 10 microseconds per law would exceed ``budget`` that lower
        bound is returned without timing anything (one law may itself be slow
        at large n).

        Bytes: the neighbour histograms (three int64 copies of ``count m (m -
        1)`` rows of m counts), the aligned table of the laws and its error
        bounds (two floats per law and output), and one chunk of the
        divergence kernel (about eight float arrays of its cells).
        """
        total = count_histograms(n, m)
        laws = min(count * (1 + m * (m - 1)), total)
        neighbours = 8.0 * count * m * (m - 1) * m * 3
        floor = laws * _MIN_LAW_SECONDS
        if floor > budget:  # hopeless whatever one law costs: do not even time one
            return Estimate(float(floor), neighbours + 16.0 * laws)
        per_law, K = self._law_cost(n, m, budget / laws)
        pairs = count * m * (m - 1) * n / (n + m - 1)
        # each unordered pair once: a pair whose two ends are both rows is reached twice
        # (all of them when the rows are every histogram of n records)
        pairs *= 1.0 - 0.5 * min(1.0, count / total)
        seconds = float(laws * per_law + pairs * cell_seconds(round(K), n_epsilon))
        kernel = 8 * 8.0 * min(pairs * K * max(1, n_epsilon), PAIR_CHUNK_CELLS)
        return Estimate(seconds, neighbours + 16.0 * laws * K + kernel)

    def _law_cost(self, n: int, m: int, limit: float = math.inf) -> tuple[float, float]:
        """(seconds, outputs) of one output law at n records on m categories, as
        the generic path computes it (law, output factorization, aligned row).

        Timed on up to 15 distinct histograms of exactly n records -- two
        corners, the balanced one and random ones (fixed seed) -- after one
        untimed call on another histogram (a first call may import modules or
        fill caches), in three groups: the median group's mean, as the
        computation visits every histogram and one group may lose its time
        slice on a shared CPU.  Within an engine's :meth:`_law_scope` the laws
        timed are kept for the computation.  Cached per (n, m) on the instance.

        One law at n may itself take long, so laws at 16, 64, 256, ... records
        are timed first: as soon as one takes more than ``limit`` seconds, that
        time is returned (a law of more records is assumed to cost no less),
        and the caller refuses without ever computing a law at n.
        """
        store = getattr(self, "__dict__", None)  # a subclass with __slots__ is timed every time
        cache: dict[tuple[int, int], tuple[float, float]] = (
            {} if store is None else store.setdefault("_law_cost_cache", {})
        )
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
            except ComputationTooLarge:  # one law alone is over the budget: refused, not skipped
                raise
            except ValueError:  # not a valid database size for this mechanism (e.g. a fixed sample > k)
                seconds = 0.0
            if seconds > limit:
                return seconds, 1.0
            k *= 4
        gen = np.random.default_rng(0)
        corners = np.eye(m, dtype=np.int64)[[0, m - 1]] * n
        balanced = np.full((1, m), n // m, dtype=np.int64)
        balanced[0, : n - int(balanced.sum())] += 1
        random = gen.multinomial(n, np.full(m, 1.0 / m), size=12).astype(np.int64)
        probes = np.unique(np.concatenate([corners, balanced, random]), axis=0)
        warm = np.zeros((1, m), dtype=np.int64)
        warm[0, 0], warm[0, 1] = n - n // 3, n // 3
        self._aligned_log_pmfs(warm)
        # three groups of distinct probes, the median group's time per law: one group
        # can lose its time slice on a shared CPU (x5 seen at load 7 with one group)
        per: list[float] = []
        sizes: list[float] = []
        for group in np.array_split(probes, min(3, len(probes))):
            t0 = time.perf_counter()
            L = self._aligned_log_pmfs(group)
            per.append((time.perf_counter() - t0) / len(group))
            sizes.append(float(np.isfinite(L).sum(axis=1).mean()))  # outputs per law (their union is larger)
            if per[-1] > limit:
                return per[-1], max(sizes[-1], 1.0)
        seconds, outputs = float(np.median(per)), float(np.mean(sizes))
        cache[(n, m)] = (max(seconds, _MIN_LAW_SECONDS), max(outputs, 1.0))
        return cache[(n, m)]

    def _dp_delta(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        log: bool = False,
        budget: float = DEFAULT_BUDGET_SECONDS,
        all_profiles: FloatArray | None = None,
    ) -> FloatArray:
        """The engines' DP delta: max over all databases of n records of delta_eps(x)
        (Theorem 1), a proven upper bound, shape (E,): the upper end of
        :meth:`_dp_delta_enclosure` clipped to :meth:`_delta_upper_bound`, as a log
        or rounded up to a linear value.

        ``all_profiles``: the log profiles of every histogram (in the order of
        :func:`compositions`), when the caller has computed them already; used
        only by the default enumeration (a closed form is exact without them).
        """
        m = self.categories if self.categories is not None else as_int(categories, "categories", minimum=2)
        closed = type(self)._dp_delta_enclosure is not Mechanism._dp_delta_enclosure
        cap = self._delta_upper_bound(n, epsilon)
        if closed and not log and not self.dp_delta_depends_on_epsilon:
            return cap  # a closed form attained by a database: the bound is the DP delta, rounded up once
        if all_profiles is not None and not closed:
            upper = all_profiles.max(axis=0)
        else:
            upper = self._dp_delta_enclosure(n, epsilon, m, budget=budget).upper
        return finish_dp(upper, cap, log)

    def _dp_delta_enclosure(
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
        est = self._profile_cost(n, m, count, epsilon.size, budget).seconds
        if est > budget:
            raise ComputationTooLarge(
                f"the DP delta of {self!r} enumerates all {count:.3g} databases of n={n} records on "
                f"{m} categories, estimated ~{est:.3g} s (budget {budget:g} s); use a smaller n "
                "(the smoothed delta does not need it)"
            )
        enc = self._log_profile_enclosure(compositions(n, m), n, epsilon)
        return LogEnclosure(np.max(enc.lower, axis=0), np.max(enc.upper, axis=0)).cap(
            log_up(self._delta_upper_bound(n, epsilon))
        )

    def _log_utility(self, hist_minus_i: IntArray, t: float) -> float:
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
        :func:`~smoothdp_nb.core.smoothed.mechanisms.postprocess.postprocess` builds."""
        return None

    # -- the engines' entries (templates: validated input, then the hooks) ------------------
    def _profile(self, hists: IntArray, epsilon: FloatArray) -> LogEnclosure:
        """The engines' entry: proven bounds on log delta_eps(x) for validated histograms
        (int64, (k, m), any sizes; every size n already checked by :meth:`sample_size`)
        at validated epsilons (E,), each row clipped to :meth:`_delta_upper_bound`: (k, E)."""
        sizes = hists.sum(axis=1)
        with engine_threads():  # one BLAS thread inside (smoothdp_nb.core.runtime.parallel); the caller's after
            enc = self._log_profile_sizes(hists, sizes, epsilon)
        lcap = np.minimum(log_up(self._row_caps(sizes, epsilon)), 0.0)
        return LogEnclosure(np.minimum(enc.lower, lcap), np.minimum(enc.upper, lcap))

    def _log_profile_sizes(self, hists: IntArray, sizes: IntArray, epsilon: FloatArray) -> LogEnclosure:
        """:meth:`_log_profile_enclosure` for histograms of any sizes (``sizes``: their row sums), one call per size."""
        lo, hi = np.empty((2, hists.shape[0], epsilon.size))
        for n in np.unique(sizes):
            rows = np.nonzero(sizes == n)[0]
            enc = self._log_profile_enclosure(hists[rows], int(n), epsilon)
            lo[rows], hi[rows] = enc.lower, enc.upper
        return LogEnclosure(lo, hi)

    def _row_caps(self, sizes: IntArray, epsilon: FloatArray) -> FloatArray:
        """:meth:`_delta_upper_bound` of each row's size: (k, E), one call per distinct size."""
        cap = np.empty((sizes.size, epsilon.size))
        for n in np.unique(sizes):
            cap[sizes == n] = self._delta_upper_bound(int(n), epsilon)
        return cap

    def profile_cost(
        self, n: int, m: int, count: int = 1, n_epsilon: int = 1, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> Estimate:
        """Estimated seconds and peak bytes of the privacy profiles of ``count``
        histograms of n records on m categories at ``n_epsilon`` epsilons
        (:meth:`_profile_cost`); ``budget`` seconds stop the timing of a
        generic mechanism's laws once the work is sure to exceed it."""
        n = as_int(n, "n", minimum=1)
        self.sample_size(n)
        return self._profile_cost(
            n,
            as_int(m, "m", minimum=2),
            as_int(count, "count", minimum=1),
            as_int(n_epsilon, "n_epsilon", minimum=1),
            float(budget),
        )

    # -- running the mechanism ---------------------------------------------------------
    def _one_histogram(self, hist: object) -> IntArray:
        h, single = as_histograms(hist)
        if not single:
            raise ValueError("hist must be a single histogram of shape (m,) here")
        self.check_histograms(h)
        first: IntArray = h[0]
        return first

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> object:
        """Draw the mechanism's output on the database ``hist`` (``size`` draws: an array; one output
        is whatever the law's outputs hold, hence ``object``)."""
        outs, logp = self.log_output_pmf(self._one_histogram(hist))
        p = np.exp(logp - np.logaddexp.reduce(logp))
        gen = as_rng(rng)
        idx = gen.choice(len(p), size=None if size is None else as_int(size, "size", minimum=1), p=p / p.sum())
        return outs[idx]

    def output_pmf(self, hist: object) -> pd.DataFrame:
        """The exact output law on one database: one row per output (columns
        ``output`` or ``o0, o1, ...``), ``probability`` and ``log_probability``."""
        import pandas as pd  # deferred: a profile or a smoothed delta needs no data frame

        outs, logp = self.log_output_pmf(self._one_histogram(hist))
        if np.ndim(outs) == 2:
            df = pd.DataFrame(np.asarray(outs), columns=[f"o{j}" for j in range(np.shape(outs)[1])])
        else:
            df = pd.DataFrame({"output": list(outs)})
        df["probability"] = np.exp(logp)
        df["log_probability"] = logp
        return df
