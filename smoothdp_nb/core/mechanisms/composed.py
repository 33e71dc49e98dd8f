"""Composition as mechanisms: :func:`repeat` (k independent runs of one mechanism on
the same database) and :func:`joint` (several mechanisms on the same database).

Both return :class:`Mechanism` objects, so every generic feature works on them.
Their divergences are never computed on the product output space: for every
neighbouring pair ``(x, x')`` the privacy-loss distribution of each run is
built once (both directions), and the composition's hockey-stick divergence is
that of the convolution of the runs' loss distributions
(:mod:`smoothdp_nb.core.accounting.pld`): exact while the composed support is
small, and a proven pessimistic discretisation beyond.  The reported delta is
a proven upper bound in both cases (to the accuracy of the runs' own
log-pmfs, as everywhere in the package).

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
from collections.abc import Hashable
from typing import Any

import numpy as np

from .._types import FloatArray, IntArray
from .._validate import as_int, as_rng
from ..accounting.pld import ComposedLoss, LossDistribution
from ..budget import ComputationTooLarge
from .base import MAX_CELLS, Mechanism
from .sampling import SamplingHistogram

__all__ = ["Repeat", "Joint", "repeat", "joint", "pair_loss", "run_losses"]

# widest exact single-run loss support built from the sampling histogram's count law
_MAX_RUN_SUPPORT = 2**23
# neighbour pairs whose losses a composed mechanism remembers
_PAIR_CACHE = 16
_CACHE_LOCK = threading.Lock()


def run_losses(mech: Mechanism, x: IntArray, x2: IntArray) -> tuple[list[tuple[LossDistribution, int]], ...]:
    """(forward parts, backward parts): the loss distributions of the runs of ``mech``
    on the pair, forward ``log P/Q`` under ``P = M(x)``, backward under ``Q = M(x')``,
    each with its multiplicity."""
    if isinstance(mech, Repeat):
        f, b = run_losses(mech.mechanism, x, x2)
        return [(d, k * mech.k) for d, k in f], [(d, k * mech.k) for d, k in b]
    if isinstance(mech, Joint):
        fw: list[tuple[LossDistribution, int]] = []
        bw: list[tuple[LossDistribution, int]] = []
        for m in mech.mechanisms:
            f, b = run_losses(m, x, x2)
            fw += f
            bw += b
        return fw, bw
    if isinstance(mech, SamplingHistogram) and x.size == 2:
        return [(_sampling_binary_loss(mech, x, x2), 1)], [(_sampling_binary_loss(mech, x2, x), 1)]
    L = mech._aligned_log_pmfs(np.stack([x, x2]))
    return [(LossDistribution.from_log_pmfs(L[0], L[1]), 1)], [(LossDistribution.from_log_pmfs(L[1], L[0]), 1)]


def _sampling_binary_loss(mech: SamplingHistogram, x: IntArray, x2: IntArray) -> LossDistribution:
    """The loss of the two-category sampling histogram from its count law: with a the
    category x has one more record of, the output's count K of a has the law
    :meth:`SamplingHistogram.binary_dist` and the loss is
    :meth:`SamplingHistogram.log_ratio` of K (see :mod:`.sampling`), so the
    support is the range of K, not the output space."""
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
    lp = dist.logpmf(np.zeros((1, 1), dtype=np.int64), K)[0]
    loss = mech.log_ratio(u[0], v[0], K[0], T - K[0])
    fin = np.isfinite(loss) & np.isfinite(lp)
    inf = np.isposinf(loss) & np.isfinite(lp)
    from scipy.special import logsumexp

    log_inf = float(logsumexp(lp[inf])) if inf.any() else -math.inf
    return LossDistribution.from_atoms(loss[fin], lp[fin], log_inf)


def pair_loss(mech: Mechanism, x: IntArray, x2: IntArray) -> tuple[ComposedLoss, ComposedLoss]:
    """(forward, backward) composed privacy losses of ``mech`` on the pair (x, x')."""
    f, b = run_losses(mech, np.asarray(x, dtype=np.int64), np.asarray(x2, dtype=np.int64))
    return ComposedLoss(_gather(f)), ComposedLoss(_gather(b))


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


class _Composed(Mechanism):
    """What :class:`Repeat` and :class:`Joint` share: the profile by composed losses."""

    @abstractmethod
    def _runs(self) -> list[Mechanism]:
        """The mechanisms run, one entry per run."""

    @property
    def categories(self) -> int | None:
        ms = {m.categories for m in self._runs()} - {None}
        return ms.pop() if ms else None

    def sample_size(self, n: int) -> int:
        return max(m.sample_size(n) for m in self._runs())

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        for m in self._runs():
            m.check_histograms(hists, name)

    def delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """``1 - prod (1 - b_i)`` with b_i each run's bound at epsilon = 0: a bound on the
        total variation of every run, and total variation composes so (coupling);
        rounded up."""
        log_keep = 0.0
        for m in self._runs():
            b = float(np.max(m.delta_upper_bound(n, np.zeros(1))))
            log_keep += math.log1p(-b) if b < 1 else -math.inf
        bound = min(1.0, -math.expm1(log_keep) * (1 + 1e-12))
        return np.full(np.shape(epsilon), bound)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The product law, enumerated (small cases only: the profile never uses it).
        Outputs are tuples of the runs' outputs."""
        laws = [m.log_output_pmf(hist) for m in self._runs()]
        cells = math.prod(len(lp) for _, lp in laws)
        if cells > MAX_CELLS // 10:
            raise ComputationTooLarge(
                f"the output space of {self!r} has {cells:.3g} outputs; output_pmf enumerates them "
                "and is meant for small cases (the privacy profile does not need it)"
            )
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
        draws = [m.sample_histogram(hist, gen, size) for m in self._runs()]
        out = np.empty(size, dtype=object)
        out[:] = [tuple(_output_keys(np.asarray(d[i : i + 1]))[0] for d in draws) for i in range(size)]
        return out

    def log_profile_batch(self, hists: IntArray, n: int, epsilon: FloatArray) -> FloatArray:
        """log delta_eps(x): for every neighbour x' the runs' loss distributions of the
        pair are composed (both directions) and the larger divergence kept; each
        ordered pair is computed once per call."""
        h = np.asarray(hists, dtype=np.int64)
        k, m = h.shape
        cache: dict[tuple[bytes, bytes], FloatArray] = {}

        def direction(p: IntArray, q: IntArray, which: int) -> FloatArray:
            key = (p.tobytes(), q.tobytes())
            if key not in cache:
                f, b = self._pair(p, q)
                cache[key] = f.log_delta(epsilon)
                cache[(q.tobytes(), p.tobytes())] = b.log_delta(epsilon)
            return cache[key]

        out = np.full((k, epsilon.size), -np.inf)
        eye = np.eye(m, dtype=np.int64)
        for r in range(k):
            x = h[r]
            for a in range(m):
                if x[a] < 1:
                    continue
                for b in range(m):
                    if b == a:
                        continue
                    x2 = x - eye[a] + eye[b]
                    out[r] = np.maximum(out[r], np.maximum(direction(x, x2, 0), direction(x2, x, 1)))
        res: FloatArray = np.minimum(out, 0.0)
        return res

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

    def profile_seconds(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> float:
        """One neighbour pair is timed at n (both directions, ``n_epsilon`` epsilons),
        times the ``m (m - 1)`` pairs of each of the ``count`` histograms."""
        x = np.zeros(m, dtype=np.int64)
        x[0] = n - n // 2
        x[1] = n // 2
        x2 = x.copy()
        x2[0] -= 1
        x2[1] += 1
        t0 = time.perf_counter()
        f, b = pair_loss(self, x, x2)
        e = np.linspace(0.0, 1.0, max(1, min(n_epsilon, 4)))
        f.log_delta(e)
        b.log_delta(e)
        per = (time.perf_counter() - t0) * max(1.0, n_epsilon / e.size)
        return count * m * (m - 1) * per


class Repeat(_Composed):
    """k independent runs of one mechanism on the same database; the output is the k outputs.

    Parameters
    ----------
    mechanism : Mechanism
    k : int >= 1
    """

    def __init__(self, mechanism: Mechanism, k: int) -> None:
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a smoothdp_nb Mechanism, got {type(mechanism).__name__}")
        self.mechanism = mechanism
        self.k = as_int(k, "k", minimum=1)

    def _runs(self) -> list[Mechanism]:
        return [self.mechanism] * self.k

    def __repr__(self) -> str:
        return f"repeat({self.mechanism!r}, {self.k})"

    def _key(self) -> tuple[Mechanism, int]:
        return (self.mechanism, self.k)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The product law of the k runs (small cases only)."""
        return super().log_output_pmf(hist)


class Joint(_Composed):
    """Several mechanisms run independently on the same database; the output is their outputs.

    Parameters
    ----------
    mechanisms : Mechanism, ...
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


def repeat(mechanism: Mechanism, k: int) -> Repeat:
    """k independent runs of ``mechanism`` on the same database, as one mechanism.

    Its privacy profile is computed by composing the privacy-loss distributions
    of the runs on every neighbouring pair (exactly, or with a proven
    pessimistic discretisation when the composed support is large): never
    larger than Proposition 5's ``k delta_eps/k``-style sums, and usually far
    smaller.

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> m = sdp.repeat(sdp.SamplingHistogram(eta=0.5), 3)
    >>> round(sdp.privacy_profile(m, [3, 2], 1.0), 6) <= 1
    True
    """
    return Repeat(mechanism, k)


def joint(*mechanisms: Mechanism) -> Joint:
    """The mechanisms run independently on the same database, as one mechanism
    (see :func:`repeat` for how its profile is computed)."""
    return Joint(*mechanisms)
