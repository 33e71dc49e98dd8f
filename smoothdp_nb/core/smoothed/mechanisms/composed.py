"""Composition as mechanisms: :func:`repeat` (k independent runs of one mechanism on
the same database) and :func:`joint` (several mechanisms on the same database).

Both return :class:`Mechanism` objects, so every generic feature works on them.
Their divergences are never computed on the product output space: for every
neighbouring pair ``(x, x')`` the privacy-loss distribution of each run is
built once (both directions), and the composition's hockey-stick divergence is
that of the convolution of the runs' loss distributions
(:mod:`smoothdp_nb.core.numerics.privacy_loss.pld`): exact while the composed support is
small, and a proven pessimistic discretisation beyond.  The reported delta is
a proven upper bound in both cases, with a proven lower bound
(:meth:`_Composed._log_profile_enclosure`): each run's output law enters with
its proven float error (:func:`run_losses`), widened outward before composing
-- P masses up and Q masses down for the upper bound, the reverse for the
lower -- and every step of the composition rounds in the bound's direction.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2 and
Proposition 5: the sum of the (epsilon, delta) of the runs, which this
computation never exceeds).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, U, lpmf_abs_error, next_down, next_up
from smoothdp_nb.core.numerics.privacy_loss.pld import GRID_CELLS, ComposedLoss, LossDistribution, log_total, outward
from smoothdp_nb.core.numerics.validation import as_int, as_rng
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, ComputationTooLarge, Estimate, check_budget
from smoothdp_nb.core.smoothed.mechanisms.base import MAX_CELLS, Mechanism, RunLosses
from smoothdp_nb.core.smoothed.mechanisms.generic import neighbour_moves
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism import SamplingHistogram

__all__ = ["Repeat", "Joint", "repeat", "joint", "pair_loss", "run_losses"]

# widest exact single-run loss support built from the sampling histogram's count law
_MAX_RUN_SUPPORT = 2**23
#: most runs a composition lists one by one (sampling, output laws); the profile composes repeats as one part
_MAX_LISTED_RUNS = 10**6
# neighbour pairs whose losses a composed mechanism remembers
_PAIR_CACHE = 16
_CACHE_LOCK = threading.Lock()


def run_losses(mech: Mechanism, x: IntArray, x2: IntArray) -> RunLosses:
    """(forward, backward) parts rounded for an upper bound, then (forward, backward)
    rounded for a lower bound: the loss distributions of the runs of ``mech`` on the
    pair, forward ``log P/Q`` under ``P = M(x)``, backward under ``Q = M(x')``, each
    with its multiplicity.

    Each run's distribution comes from its output law *with its proven error*:
    :meth:`Mechanism._aligned_log_pmfs` (``with_error=True``: ``LIBM_REL`` of each
    value, the renormalisation and :meth:`Mechanism.log_output_pmf_error`), or for
    the two-category sampling histogram the count law's Loader log-pmf error
    (:func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`) and the error of the
    closed-form log-ratio (:func:`_log_ratio_error`); and it is rounded outward by
    :meth:`LossDistribution.from_log_pmfs` (upper: P masses up, Q masses down)."""
    if isinstance(mech, Repeat):
        parts = run_losses(mech.mechanism, x, x2)
        fu, bu, fl, bl = ([(d, k * mech.k) for d, k in p] for p in parts)
        return fu, bu, fl, bl
    if isinstance(mech, Joint):
        out: RunLosses = ([], [], [], [])
        for m in mech.mechanisms:
            for acc, p in zip(out, run_losses(m, x, x2)):
                acc += p
        return out
    own = mech._pair_losses(x, x2)
    if own is not None:
        return own
    if isinstance(mech, SamplingHistogram) and x.size == 2 and x.sum() == x2.sum():
        return (
            [(_sampling_binary_loss(mech, x, x2, True), 1)],
            [(_sampling_binary_loss(mech, x2, x, True), 1)],
            [(_sampling_binary_loss(mech, x, x2, False), 1)],
            [(_sampling_binary_loss(mech, x2, x, False), 1)],
        )
    L, err = mech._aligned_log_pmfs(np.stack([x, x2]), with_error=True)

    def one(i: int, j: int, upper: bool) -> list[tuple[LossDistribution, int]]:
        return [(LossDistribution.from_log_pmfs(L[i], L[j], err[i], err[j], upper), 1)]

    return one(0, 1, True), one(1, 0, True), one(0, 1, False), one(1, 0, False)


def _log_ratio_error(
    mech: SamplingHistogram, u: int, v: int, oa: FloatArray, ob: FloatArray, loss: FloatArray
) -> FloatArray:
    """A proven bound on the absolute error of :meth:`SamplingHistogram.log_ratio` at
    finite values.

    Without replacement ``L = -log1p(-a) + log1p(-b)``, ``a = o_a/(u+1)``,
    ``b = o_b/(v+1)``: each quotient is correctly rounded (u of it), and
    ``d log1p(-a)/da = -1/(1-a)``, so the argument's rounding moves the log by at
    most ``u a/(1-a) = u o_a/(u+1-o_a)``; log1p adds :data:`LIBM_REL` of its value,
    the final addition ``u |L|``.  With replacement ``L = o_a A - o_b B``,
    ``A = log1p(1/u)``: the quotient's u moves A by at most ``u (1/u)/(1+1/u) <= u A``
    (as ``x/(1+x) <= log1p(x)``), log1p adds ``LIBM_REL A``, the product ``u``, the
    difference ``u |L|``: at most ``(2u + LIBM_REL)(o_a A + o_b B) + u |L|``.
    Everything is padded by 1%."""
    uf, vf = float(u), float(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mech.replace:
            A = math.log1p(1.0 / uf) if u > 0 else 0.0
            B = math.log1p(1.0 / vf) if v > 0 else 0.0
            e = (2.0 * U + LIBM_REL) * (oa * A + ob * B)
        else:
            la = np.abs(np.log1p(-oa / (uf + 1.0)))
            lb = np.abs(np.log1p(-ob / (vf + 1.0)))
            e = U * (oa / np.maximum(uf + 1.0 - oa, 1.0) + ob / np.maximum(vf + 1.0 - ob, 1.0)) + LIBM_REL * (la + lb)
    out: FloatArray = next_up(1.01 * (e + U * np.abs(loss)) + 2.0**-1070)
    return out


def _sampling_binary_loss(mech: SamplingHistogram, x: IntArray, x2: IntArray, upper: bool) -> LossDistribution:
    """The loss of the two-category sampling histogram from its count law: with a the
    category x has one more record of, the output's count K of a has the law
    :meth:`SamplingHistogram.binary_dist` and the loss is
    :meth:`SamplingHistogram.log_ratio` of K (see :mod:`.sampling`), so the
    support is the range of K, not the output space.

    Rounded outward (``upper``: a measure pair ``P~ >= P``, ``Q~ <= Q`` at every K):
    with ``e_P`` the proven error of ``log P(K)`` (the running Loader bound, else
    :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`) and ``e_L`` that of the loss
    (:func:`_log_ratio_error`), ``log Q(K) = log P(K) - L(K)`` is within
    ``e_P + e_L``; so ``P~ = P e^(e_P)`` and ``Q~ = P e^(-e_P - L - e_L)`` give
    the mass ``log P + e_P`` and the loss ``L + e_L + 2 e_P`` (rounded up; the
    reverse for the lower bound).  ``K = u + 1`` (every a-record sampled) is
    impossible under Q exactly, an infinite loss."""
    a = int(np.argmax(x - x2))
    b = 1 - a
    n = int(x.sum())
    T = mech.sample_size(n)
    u = np.array([x[a] - 1], dtype=np.int64)
    v = np.array([x[b]], dtype=np.int64)
    dist = mech.binary_dist(u, v, n, T)
    lo, hi = int(dist.lo[0]), int(dist.hi[0])
    if hi - lo + 1 > _MAX_RUN_SUPPORT:
        raise ComputationTooLarge(
            f"the privacy loss of {mech!r} at n={n} has {hi - lo + 1:.3g} support points "
            f"(more than {_MAX_RUN_SUPPORT}); use a larger sampling rate or a smaller n"
        )
    K = np.arange(lo, hi + 1, dtype=float)[None, :]
    rows = np.zeros((1, 1), dtype=np.int64)
    lp = dist.logpmf(rows, K)[0]
    ep = lpmf_abs_error(lp, dist.size, dist.pmf_factors)
    if dist.logpmf_error is not None:  # the running bound, as in the tail sums of .divergence
        run = dist.logpmf_error(rows, K)[0] + dist.pmf_factors * 2.01 * U * (
            np.abs(lp) + 2.0 * math.log(dist.size + 2.0) + 2.0
        )
        ep = np.minimum(ep, run)
    loss = mech.log_ratio(u[0], v[0], K[0], T - K[0])
    fin = np.isfinite(loss) & np.isfinite(lp)
    inf = np.isposinf(loss) & np.isfinite(lp)
    el = _log_ratio_error(mech, int(u[0]), int(v[0]), K[0][fin], T - K[0][fin], loss[fin])
    mass = outward(lp, ep, upper)
    widened = loss[fin] + el + 2.0 * ep[fin] if upper else loss[fin] - el - 2.0 * ep[fin]
    widened = next_up(widened) if upper else next_down(widened)
    log_inf = log_total(mass[inf], upper)
    return LossDistribution.from_atoms(widened, mass[fin], log_inf, upper)


def _as_cells(cells: int | None) -> int | None:
    """None, or a number of grid cells in [2^10, 2^24]."""
    if cells is None:
        return None
    return as_int(cells, "grid_cells", minimum=2**10, maximum=2**24)


def pair_loss(mech: Mechanism, x: IntArray, x2: IntArray) -> tuple[ComposedLoss, ComposedLoss]:
    """(forward, backward) composed privacy losses of ``mech`` on the pair (x, x'),
    each carrying its runs rounded for the upper and for the lower bound."""
    fu, bu, fl, bl = run_losses(mech, np.asarray(x, dtype=np.int64), np.asarray(x2, dtype=np.int64))
    cells = getattr(mech, "grid_cells", None) or GRID_CELLS
    return (
        ComposedLoss(_gather(fu), cells=cells, lower_parts=_gather(fl)),
        ComposedLoss(_gather(bu), cells=cells, lower_parts=_gather(bl)),
    )


def _gather(parts: list[tuple[LossDistribution, int]]) -> list[tuple[LossDistribution, int]]:
    """Equal run distributions (the same object) are one part with the summed multiplicity."""
    seen: dict[int, int] = {}
    out: list[tuple[LossDistribution, int]] = []
    for d, k in parts:
        if id(d) in seen:
            i = seen[id(d)]
            out[i] = (d, out[i][1] + k)
        else:
            seen[id(d)] = len(out)
            out.append((d, k))
    return out


def _output_keys(outs: np.ndarray) -> list[Hashable]:
    """One hashable per output (rows of a 2-D output become tuples)."""
    if isinstance(outs, np.ndarray) and outs.ndim == 2:
        return [tuple(r) for r in outs.tolist()]
    return list(outs.tolist()) if isinstance(outs, np.ndarray) and outs.dtype != object else list(outs)


def neighbours(x: IntArray, relation: str = "replace") -> Iterator[IntArray]:
    """The neighbours of histogram x.

    ``"replace"``: one record of category a moved to b != a, for every a with
    x_a >= 1 (the neighbouring relation of Definitions 2-3); ``"add-remove"``:
    one record of a removed (x_a >= 1, and a database of one record keeps it) or
    one record of a added, for every a.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definitions 2 and 3.
    """
    for move in neighbour_moves(x.shape[0], relation):
        x2 = x + move
        if x2.min() >= 0 and x2.sum() >= 1:
            yield x2


#: seconds per cell and level of an FFT convolution (measured: 2.7 s for 6 * 10^6 cells on the project machine)
_FFT_SECONDS_PER_CELL_LEVEL = 2e-8
#: bytes per cell of the composed grid: the two factors, the product and the FFT's complex buffers
_BYTES_PER_CELL = 64.0


def _check_composed_size(losses: tuple[ComposedLoss, ComposedLoss]) -> None:
    """Refuse, before any composition, runs whose composed law would not fit the budget.

    Composing ``k`` runs of a law of ``s`` atoms gives up to ``k (s - 1) + 1``
    distinct losses, and the privacy-loss grid keeps about as many cells (its
    trim at ``2^-900`` of the largest cell drops almost none of a tilted law:
    6 * 10^6 cells for 10^6 runs of 7 atoms); the squarings then cost about
    ``N log2 N`` per level.
    """
    for loss in losses:
        parts = [(d, k) for d, k in loss.parts if k > 0]
        cells = 1.0 + sum(float(k) * max(d.size - 1, 0) for d, k in parts)
        runs = sum(k for _, k in parts)
        levels = max(1.0, math.log2(max(runs, 2)))
        seconds = _FFT_SECONDS_PER_CELL_LEVEL * cells * max(1.0, math.log2(cells)) * levels
        check_budget(
            Estimate(seconds, _BYTES_PER_CELL * cells),
            DEFAULT_BUDGET_SECONDS,
            f"composing {runs:.3g} runs into one privacy-loss distribution (~{cells:.3g} losses)",
            "use fewer runs (a smaller k in repeat, fewer mechanisms in joint)",
            parameter="k",
        )


class _Composed(Mechanism):
    """What :class:`Repeat` and :class:`Joint` share: the profile by composed losses."""

    @abstractmethod
    def _runs(self) -> list[Mechanism]:
        """The mechanisms run, one entry per run."""

    def _run_counts(self) -> list[tuple[Mechanism, int]]:
        """The mechanisms run, each with its number of runs (no per-run loop)."""
        return [(m, 1) for m in self._runs()]

    @property
    def categories(self) -> int | None:
        ms = {m.categories for m, _ in self._run_counts()} - {None}
        return ms.pop() if ms else None

    def sample_size(self, n: int) -> int:
        return max(m.sample_size(n) for m, _ in self._run_counts())

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        for m, _ in self._run_counts():
            m.check_histograms(hists, name)

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """``1 - prod (1 - b_i)`` with b_i each run's bound at epsilon = 0: a bound on the
        total variation of every run, and total variation composes so (coupling);
        rounded up."""
        log_keep = 0.0
        for m, c in self._run_counts():
            b = float(np.max(m._delta_upper_bound(n, np.zeros(1))))
            log_keep += c * math.log1p(-b) if b < 1 else -math.inf
        bound = min(1.0, -math.expm1(log_keep) * (1 + 1e-12))
        return np.full(np.shape(epsilon), bound)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The product law, enumerated (small cases only: the profile never uses it).
        Outputs are tuples of the runs' outputs."""
        once = [(m.log_output_pmf(hist), c) for m, c in self._run_counts()]
        cells = math.prod(len(lp) ** c for (_, lp), c in once)
        if cells > MAX_CELLS // 10:
            raise ComputationTooLarge(
                f"the output space of {self!r} has {cells:.3g} outputs; output_pmf enumerates them "
                "and is meant for small cases (the privacy profile does not need it)"
            )
        laws = [law for law, c in once for _ in range(c)]
        keys = [_output_keys(o) for o, _ in laws]
        outs = np.empty(cells, dtype=object)
        outs[:] = list(itertools.product(*keys))
        logp = np.zeros(1)
        for _, lp in laws:
            logp = (logp[:, None] + np.asarray(lp, dtype=float)[None, :]).ravel()
        return outs, logp

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> Any:
        """One output: a tuple of the runs' outputs; ``size`` outputs: an object array of them."""
        gen = as_rng(rng)
        if size is None:
            return tuple(m.sample_histogram(hist, gen) for m in self._runs())
        size = as_int(size, "size", minimum=1)
        draws = [np.asarray(m.sample_histogram(hist, gen, size)) for m in self._runs()]
        out = np.empty(size, dtype=object)
        out[:] = [tuple(_output_keys(d[i : i + 1])[0] for d in draws) for i in range(size)]
        return out

    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x) (Definition 2), shape (k, E): for every
        neighbour x' the runs' loss distributions of the pair are composed in both
        directions and the larger divergence kept; each ordered pair once per call.

        The argument.  For one ordered pair (P, Q) of a composition,
        ``d_eps(P, Q) = sum_o max(0, P(o) - e^eps Q(o))`` over the product outputs o,
        with ``P(o)`` and ``Q(o)`` the products of the runs' probabilities: a sum of
        terms each non-decreasing in every run's P-masses and non-increasing in its
        Q-masses.  The upper bound composes measures ``P~ >= P`` and ``Q~ <= Q`` of
        every run (:func:`run_losses`: the runs' log-pmfs widened by their proven
        errors), so its exact value is at least the truth, and every step of the
        composition rounds outward (:mod:`smoothdp_nb.core.numerics.privacy_loss.pld`: merged
        losses move up, masses are summed with a proven error, the grid rounds
        losses up and adds its truncations).  The lower bound is the same with every
        rounding reversed.  A profile is the maximum over neighbours and directions,
        which preserves both bounds."""
        return self._composed_profile(hists, epsilon, "replace")

    def _log_profile_add_remove(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """:meth:`_log_profile_enclosure` over the add-remove neighbours (the same argument:
        every pair of databases, of whatever sizes, composes its runs' losses)."""
        return self._composed_profile(hists, epsilon, "add-remove")

    def _composed_profile(self, hists: IntArray, epsilon: FloatArray, relation: str) -> LogEnclosure:
        """The profile of :meth:`_log_profile_enclosure` over the neighbours of ``relation``."""
        h = np.asarray(hists, dtype=np.int64)
        k = h.shape[0]
        cache: dict[tuple[bytes, bytes], tuple[FloatArray, FloatArray]] = {}

        def direction(p: IntArray, q: IntArray) -> tuple[FloatArray, FloatArray]:
            key = (p.tobytes(), q.tobytes())
            if key not in cache:
                f, b = self._pair(p, q)
                cache[key] = (f.log_delta(epsilon, upper=False), f.log_delta(epsilon, upper=True))
                cache[(q.tobytes(), p.tobytes())] = (
                    b.log_delta(epsilon, upper=False),
                    b.log_delta(epsilon, upper=True),
                )
            return cache[key]

        lo = np.full((k, epsilon.size), -np.inf)
        hi = np.full((k, epsilon.size), -np.inf)
        for r in range(k):
            x = h[r]
            for x2 in neighbours(x, relation):
                for dl, dh in (direction(x, x2), direction(x2, x)):
                    lo[r] = np.maximum(lo[r], dl)
                    hi[r] = np.maximum(hi[r], dh)
        return LogEnclosure(np.minimum(lo, 0.0), np.minimum(hi, 0.0))

    def _pair(self, x: IntArray, x2: IntArray) -> tuple[ComposedLoss, ComposedLoss]:
        """:func:`pair_loss`, remembered for the last few pairs (an inverse curve evaluates
        the same pairs at many epsilons; a large single-run loss costs a second to build)."""
        cache: OrderedDict[tuple[bytes, bytes], tuple[ComposedLoss, ComposedLoss]]
        cache = self.__dict__.setdefault("_pair_cache", OrderedDict())
        key = (x.tobytes(), x2.tobytes())
        with _CACHE_LOCK:  # executors may run profiles of one mechanism in threads
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        val = pair_loss(self, x, x2)
        _check_composed_size(val)
        with _CACHE_LOCK:
            cache[key] = val
            if len(cache) > _PAIR_CACHE:
                cache.popitem(last=False)
        return val

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the remembered pair losses (large, and rebuilt on demand)."""
        state = dict(self.__dict__)
        state.pop("_pair_cache", None)
        return state

    def _profile_cost(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> Estimate:
        """One neighbour pair is timed at n (both directions and bounds, ``n_epsilon`` epsilons),
        times the ``m (m - 1)`` pairs of each of the ``count`` histograms; bytes: the
        pairs' two bounds in both directions, and the neighbour histograms."""
        x = np.zeros(m, dtype=np.int64)
        x[0] = n - n // 2
        x[1] = n // 2
        x2 = x.copy()
        x2[0] -= 1
        x2[1] += 1
        t0 = time.perf_counter()
        f, b = pair_loss(self, x, x2)
        e = np.linspace(0.0, 1.0, max(1, min(n_epsilon, 4)))
        for upper in (True, False):  # the enclosure computes both bounds
            f.log_delta(e, upper)
            b.log_delta(e, upper)
        per = (time.perf_counter() - t0) * max(1.0, n_epsilon / e.size)
        pairs = count * m * (m - 1)
        return Estimate(pairs * per, pairs * (32.0 * max(1, n_epsilon) + 8.0 * m))


class Repeat(_Composed):
    """k independent runs of one mechanism on the same database; the output is the k outputs.

    Parameters
    ----------
    mechanism : Mechanism
    k : int >= 1
    grid_cells : int, optional
        The accuracy of the grid evaluation (losses on no single lattice and too many
        to compose exactly): cells of the composed grid, default ``2^18``.  Four times
        the cells give a grid step four times finer -- a bracket about four times
        narrower (``privacy_loss_distribution(...).delta(eps, bound="lower")`` reports
        it) -- for about four times the time.  Exact and lattice compositions ignore it.
    """

    def __init__(self, mechanism: Mechanism, k: int, *, grid_cells: int | None = None) -> None:
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a smoothdp_nb Mechanism, got {type(mechanism).__name__}")
        self.mechanism = mechanism
        self.k = as_int(k, "k", minimum=1)
        self.grid_cells = _as_cells(grid_cells)

    def _runs(self) -> list[Mechanism]:
        if self.k > _MAX_LISTED_RUNS:  # k references would take 8 k bytes (8 GB at k = 10^9)
            raise ComputationTooLarge(
                f"{self!r} lists its {self.k:.3g} runs one by one here (~{8.0 * self.k:.3g} bytes); "
                f"at most {_MAX_LISTED_RUNS} runs are listed: use the privacy profile (it composes "
                "the k runs as one part), or a smaller k",
                "k",
            )
        return [self.mechanism] * self.k

    # what the runs share, read from the one mechanism (never from a list of k copies)
    @property
    def categories(self) -> int | None:
        return self.mechanism.categories

    def sample_size(self, n: int) -> int:
        return self.mechanism.sample_size(n)

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        self.mechanism.check_histograms(hists, name)

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """``1 - (1 - b)^k`` for the run's bound b at epsilon = 0 (see the base class), rounded up."""
        b = float(np.max(self.mechanism._delta_upper_bound(n, np.zeros(1))))
        log_keep = self.k * math.log1p(-b) if b < 1 else -math.inf
        bound = min(1.0, -math.expm1(log_keep) * (1 + 1e-12))
        return np.full(np.shape(epsilon), bound)

    def _run_counts(self) -> list[tuple[Mechanism, int]]:
        return [(self.mechanism, self.k)]

    def __repr__(self) -> str:
        extra = f", grid_cells={self.grid_cells}" if self.grid_cells is not None else ""
        return f"repeat({self.mechanism!r}, {self.k}{extra})"

    def _key(self) -> tuple[Mechanism, int, int | None]:
        return (self.mechanism, self.k, self.grid_cells)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The product law of the k runs (small cases only)."""
        return super().log_output_pmf(hist)


class Joint(_Composed):
    """Several mechanisms run independently on the same database; the output is their outputs.

    Parameters
    ----------
    *mechanisms : Mechanism
        At least one; all must accept the same number of categories.
    """

    def __init__(self, *mechanisms: Mechanism) -> None:
        if not mechanisms:
            raise ValueError("joint needs at least one mechanism")
        for i, m in enumerate(mechanisms):
            if not isinstance(m, Mechanism):
                raise TypeError(f"mechanisms[{i}] must be a smoothdp_nb Mechanism, got {type(m).__name__}")
        cats = {c for c in (m.categories for m in mechanisms) if c is not None}
        if len(cats) > 1:
            raise ValueError(f"mechanisms must accept the same number of categories, got {sorted(cats)}")
        self.mechanisms: tuple[Mechanism, ...] = tuple(mechanisms)

    def _runs(self) -> list[Mechanism]:
        return list(self.mechanisms)

    def __repr__(self) -> str:
        return "joint(" + ", ".join(repr(m) for m in self.mechanisms) + ")"

    def _key(self) -> tuple[Mechanism, ...]:
        return self.mechanisms


def repeat(mechanism: Mechanism, k: int, *, grid_cells: int | None = None) -> Repeat:
    """k independent runs of ``mechanism`` on the same database, as one mechanism.

    Its privacy profile is computed by composing the privacy-loss distributions
    of the runs on every neighbouring pair: exactly while the composed support is
    small, by counting when every loss is a multiple of one step (a lattice), else
    with a proven pessimistic discretisation of ``grid_cells`` cells (see
    :class:`Repeat`): never larger than Proposition 5's ``k delta_eps/k``-style
    sums, and usually far smaller.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 5 (composition).

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> m = sdp.repeat(sdp.SamplingHistogram(eta=0.5), 3)
    >>> round(sdp.privacy_profile(m, [3, 2], 1.0), 6) <= 1
    True
    """
    return Repeat(mechanism, k, grid_cells=grid_cells)


def joint(*mechanisms: Mechanism) -> Joint:
    """The mechanisms run independently on the same database, as one mechanism
    (see :func:`repeat` for how its profile is computed)."""
    return Joint(*mechanisms)
