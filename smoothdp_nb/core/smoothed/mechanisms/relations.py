"""The neighbouring relations: a mechanism seen under ``"replace"`` (the paper's) or ``"add-remove"``.

Every function that computes a profile, a DP delta, a smoothed delta or a
privacy-loss distribution takes ``neighbours=``.  Under ``"replace"`` it uses the
mechanism as it is; under ``"add-remove"`` it uses :func:`with_neighbours`'s view,
a :class:`Mechanism` with the same output laws whose profile hooks are the
mechanism's add-remove hooks (:meth:`Mechanism._log_profile_add_remove`,
:meth:`Mechanism._dp_delta_add_remove_enclosure`), so Algorithm 1, Monte Carlo,
inverse curves and compositions run unchanged on it.

The add-remove profile of a database x of n records is

    delta_eps(x) = max over x' in {x - e_a : x_a >= 1} u {x + e_a} of max(d_eps(x, x'), d_eps(x', x)),

its neighbours having n - 1 or n + 1 records; the smoothed delta over databases
of n records drawn from Pi^n (Definition 3) is the expectation of this profile:
the adversary knows every record of x but the one added or removed.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Definitions 1-3 (the replace relation).
Dwork, Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Section 2.3
(databases at distance one; the add-remove relation).
"""

from __future__ import annotations

from collections.abc import Hashable
from contextlib import AbstractContextManager

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LogEnclosure
from smoothdp_nb.core.numerics.validation import as_choice, as_int
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism, RunLosses
from smoothdp_nb.core.smoothed.mechanisms.generic import NEIGHBOURS

__all__ = ["NEIGHBOURS", "AddRemoveView", "as_neighbours", "base_mechanism", "with_neighbours"]


def as_neighbours(value: object) -> str:
    """The validated relation: ``"replace"`` or ``"add-remove"`` (ValueError otherwise)."""
    if value == "add_remove":
        value = "add-remove"
    return as_choice(value, "neighbours", NEIGHBOURS)


class AddRemoveView(Mechanism):
    """A mechanism under the add-remove relation: the same output laws, profiles
    against the neighbours with one record more or one fewer.

    Built by :func:`with_neighbours`; its profile is the wrapped mechanism's
    :meth:`~Mechanism._log_profile_add_remove` (proven bounds) and its DP delta
    :meth:`~Mechanism._dp_delta_add_remove_enclosure`.  A database has at least two
    records here, so that its neighbours are databases too.
    """

    #: relabelling maps add-remove neighbours to add-remove neighbours, but the wrapped
    #: mechanism's symmetry is a class declaration: the engines profile every histogram
    label_symmetric = False

    def __init__(self, mechanism: Mechanism) -> None:
        self.mechanism = mechanism

    def _key(self) -> Hashable:
        return self.mechanism

    def __repr__(self) -> str:
        return f"with_neighbours({self.mechanism!r}, 'add-remove')"

    @property
    def label(self) -> str:
        return f"{self.mechanism.label} (add-remove)"

    @property
    def categories(self) -> int | None:
        return self.mechanism.categories

    def sample_size(self, n: int) -> int:
        """The wrapped mechanism's, checked at n - 1 and n + 1 too (ValueError when a
        neighbour's size is impossible for it, e.g. a fixed sample larger than n - 1)."""
        n = as_int(n, "n", minimum=2)
        self.mechanism.sample_size(n - 1)
        self.mechanism.sample_size(n + 1)
        return self.mechanism.sample_size(n)

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        self.mechanism.check_histograms(hists, name)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        return self.mechanism.log_output_pmf(hist)

    def log_output_pmf_error(self, hist: IntArray, log_p: FloatArray) -> FloatArray | float:
        return self.mechanism.log_output_pmf_error(hist, log_p)

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> object:
        return self.mechanism.sample_histogram(hist, rng, size)

    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        return self.mechanism._log_profile_add_remove(hists, n, epsilon)

    def _dp_delta_enclosure(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        budget: float = DEFAULT_BUDGET_SECONDS,
    ) -> LogEnclosure:
        return self.mechanism._dp_delta_add_remove_enclosure(n, epsilon, categories, budget)

    def _pair_losses(self, x: IntArray, x2: IntArray) -> RunLosses | None:
        return self.mechanism._pair_losses(x, x2)

    def _profile_cost(
        self, n: int, m: int, count: int, n_epsilon: int, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> Estimate:
        """The replace estimate times three (it must err high): 2m neighbours, of n - 1 and
        n + 1 records, instead of m (m - 1) of n records -- twice as many at m = 2, and
        laws of two sizes."""
        est = self.mechanism._profile_cost(n, m, count, n_epsilon, budget / 3.0)
        return Estimate(3.0 * est.seconds, 2.0 * est.bytes)

    def _law_scope(self) -> AbstractContextManager[None]:
        return self.mechanism._law_scope()


def with_neighbours(mechanism: Mechanism, neighbours: object = "replace") -> Mechanism:
    """``mechanism`` itself under ``"replace"``; under ``"add-remove"`` the view
    :class:`AddRemoveView` whose profiles compare databases of one record more or fewer.
    A view keeps its relation (a result's mechanism is passed back as it is)."""
    relation = as_neighbours(neighbours)
    if relation == "replace" or isinstance(mechanism, AddRemoveView):
        return mechanism
    return AddRemoveView(mechanism)


def base_mechanism(mechanism: Mechanism) -> Mechanism:
    """The mechanism under a relation's view (itself when it is none)."""
    return mechanism.mechanism if isinstance(mechanism, AddRemoveView) else mechanism
