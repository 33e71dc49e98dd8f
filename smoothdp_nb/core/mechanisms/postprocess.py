"""Post-processing (Proposition 4): a mechanism followed by a map of its outputs.

* :func:`postprocess` -- ``M`` followed by a function ``f`` of the output
  (deterministic, or randomized when ``f`` returns a law per output);
* :data:`winner` -- the category with the most sampled votes, ties split evenly.

By Proposition 4 (and the data-processing inequality behind it) the result
never has a larger privacy profile, DP delta or smoothed delta than ``M``.
The sampling histogram followed by the winner (without replacement) has a
fast path from hypergeometric tails, :class:`SampledWinner`.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import lpmf
from ..array_types import FloatArray, IntArray
from ..divergence import log1mexp, log_monotone_tail_sum_enclosure
from ..enclosures import LIBM_REL, LogEnclosure, U, lpmf_abs_error, next_down, next_up
from .base import Mechanism, factorize_outputs

if TYPE_CHECKING:
    from .sampling import SamplingHistogram

__all__ = ["PostProcessed", "PostProcessing", "SampledWinner", "postprocess", "winner"]


class PostProcessing(ABC):
    """A map of outputs, possibly randomized: what :func:`postprocess` applies."""

    @abstractmethod
    def apply(self, outputs: np.ndarray, logp: FloatArray) -> tuple[np.ndarray, FloatArray]:
        """The law of f(o) for o ~ (outputs, logp): (new outputs, their log-probabilities)."""

    @property
    def name(self) -> str:
        return type(self).__name__


class _FunctionMap(PostProcessing):
    """A user function of one output, called once per output; with
    ``vectorized=True`` (declared by the caller, never guessed) once on the
    whole array of outputs."""

    def __init__(self, f: Callable[[Any], Any], vectorized: bool = False) -> None:
        self.f = f
        self.vectorized = vectorized

    @property
    def name(self) -> str:
        return getattr(self.f, "__name__", repr(self.f))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FunctionMap) and other.f == self.f and other.vectorized == self.vectorized

    def __hash__(self) -> int:
        return hash((self.f, self.vectorized))

    def _apply_vectorized(self, outputs: np.ndarray, logp: FloatArray) -> tuple[np.ndarray, FloatArray]:
        y = self.f(outputs)
        if isinstance(y, Mapping):
            raise TypeError("a vectorized f must return one new output per output (an array), not a law")
        try:
            arr = np.asarray(y)
        except ValueError:  # ragged rows
            arr = np.empty(len(y), dtype=object)
            for i, v in enumerate(y):
                arr[i] = v
        if arr.ndim == 0 or arr.shape[0] != len(outputs):
            raise ValueError(
                f"a vectorized f must return one new output per output: {len(outputs)} outputs, got shape {arr.shape}"
            )
        return _group(arr, logp)

    def apply(self, outputs: np.ndarray, logp: FloatArray) -> tuple[np.ndarray, FloatArray]:
        if self.vectorized:
            return self._apply_vectorized(outputs, logp)
        ys = [self.f(o) for o in outputs]  # a plain Python function: one call per output
        if not any(isinstance(v, Mapping) for v in ys):
            return _group(_object_array(ys), logp)
        src: list[int] = []
        lab: list[Any] = []
        lw: list[FloatArray] = []
        for k, v in enumerate(ys):
            law = v if isinstance(v, Mapping) else {v: 1.0}
            try:
                p = np.fromiter(law.values(), dtype=float, count=len(law))
            except (TypeError, ValueError):
                raise TypeError(f"f must return an output or a law {{output: probability}}, got {v!r}") from None
            if len(law) == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
                raise ValueError(
                    f"f must return an output or a law {{output: probability}} of finite probabilities >= 0 "
                    f"summing to 1, got {v!r}"
                )
            src += [k] * len(law)
            lab += list(law.keys())
            with np.errstate(divide="ignore"):
                lw.append(np.log(p))
        return _group(_object_array(lab), logp[np.asarray(src, dtype=np.int64)] + np.concatenate(lw))


def _object_array(values: list[Any]) -> np.ndarray:
    """A 1-D object array holding the values as they are (arrays and tuples stay single entries)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _group(labels: np.ndarray, logp: FloatArray) -> tuple[np.ndarray, FloatArray]:
    """Merge equal labels: (distinct labels, log of their summed probabilities)."""
    (codes,), K = factorize_outputs([labels])
    out = np.full(K, -np.inf)
    np.logaddexp.at(out, codes, logp)
    first = np.unique(codes, return_index=True)[1]
    return labels[first], out


def as_count_rows(outputs: object, name: str = "hist") -> FloatArray:
    """Histogram outputs as a 2-D float array (one row per output), validated.

    ``outputs`` is a 2-D numeric array, or a sequence of histograms (tuples,
    lists or arrays of one length, e.g. the object array of a
    :class:`FiniteMechanism` whose outputs are tuples).  Raises TypeError for
    anything that is not numbers (None, strings, ...) and ValueError for
    ragged rows, empty rows, NaN, infinite or negative counts.
    """
    if outputs is None or isinstance(outputs, (str, bytes, Mapping)):
        raise TypeError(f"{name} must be histograms (rows of counts), got {type(outputs).__name__}")
    arr = np.asarray(outputs, dtype=object) if not isinstance(outputs, np.ndarray) else outputs
    if arr.dtype == object:
        rows = list(arr.ravel())
        if all(isinstance(r, (tuple, list, np.ndarray)) for r in rows):  # a sequence of histograms
            lengths = {len(r) for r in rows}
            if len(lengths) > 1:
                raise ValueError(f"{name} must be histograms of one length (ragged rows of lengths {sorted(lengths)})")
            entries = [v for r in rows for v in (r.ravel().tolist() if isinstance(r, np.ndarray) else r)]
        else:
            entries = rows
        # float(None) is NaN to numpy, float("1") is 1.0 to Python: only numbers are counts
        if not all(isinstance(v, (numbers.Real, np.number)) for v in entries):
            raise TypeError(f"{name} must hold numbers only (counts), got a non-numeric entry")
        try:
            arr = np.array(arr.tolist(), dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be histograms of one length (ragged nested sequences)") from None
    elif arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold numbers only (counts), got dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=float)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty histograms, one per row; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite counts, got NaN or infinity")
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold counts >= 0, got a negative entry")
    return arr


class Winner(PostProcessing):
    """The category with the most votes in a histogram output; ties split evenly.

    Its outputs are the category indices 0..m-1.  Histogram outputs must be
    numbers (counts >= 0, finite, rows of one length): anything else raises
    TypeError / ValueError rather than naming a winner.
    """

    @property
    def name(self) -> str:
        return "winner"

    def __repr__(self) -> str:
        return "winner"

    def __call__(self, hist: npt.ArrayLike) -> int | dict[int, float]:
        """The winner(s) of one histogram: a category, or a law over the tied ones."""
        if hist is None or isinstance(hist, (str, bytes, Mapping)):
            raise TypeError(f"hist must be one histogram (a 1-D sequence of counts), got {type(hist).__name__}")
        try:
            ndim = np.ndim(hist)
        except ValueError:  # numpy refuses nested sequences of different lengths
            raise ValueError(
                "hist must be one histogram (a 1-D sequence of counts), got ragged nested sequences"
            ) from None
        if ndim != 1:
            raise TypeError(f"hist must be one histogram (a 1-D sequence of counts), got {ndim} dimensions")
        h = as_count_rows([hist] if not isinstance(hist, np.ndarray) else hist[None, :])[0]
        top = np.flatnonzero(h == h.max())
        return int(top[0]) if top.size == 1 else {int(c): 1.0 / top.size for c in top}

    def apply(self, outputs: np.ndarray, logp: FloatArray) -> tuple[np.ndarray, FloatArray]:
        o = as_count_rows(outputs, "the outputs the winner is taken of")
        top = o == o.max(axis=1, keepdims=True)
        share = np.log(top.sum(axis=1))
        terms = np.where(top, (logp - share)[:, None], -np.inf)
        with np.errstate(invalid="ignore"):
            log_p: FloatArray = np.logaddexp.reduce(terms, axis=0)  # ufunc.reduce is typed Any
        return np.arange(o.shape[1]), log_p


#: The winner of a histogram output (the category with the most votes; ties
#: split evenly), for :func:`postprocess`.
winner = Winner()


def as_output_map(f: Any, vectorized: bool = False) -> PostProcessing:
    """``f`` as a :class:`PostProcessing` (a user function: called per output,
    or on the whole array of outputs when ``vectorized``)."""
    if not isinstance(vectorized, (bool, np.bool_)):
        raise TypeError(f"vectorized must be True or False, got {vectorized!r}")
    if isinstance(f, PostProcessing):
        if vectorized:
            raise ValueError(f"vectorized applies to a user function, not to the built-in {f.name}")
        return f
    if not callable(f):
        raise TypeError(f"f must be a function of one output or a PostProcessing, got {type(f).__name__}")
    return _FunctionMap(f, bool(vectorized))


class PostProcessed(Mechanism):
    """``f(M(x))``: the output law of M mapped through f (generic, by enumeration)."""

    def __init__(self, inner: Mechanism, f: PostProcessing) -> None:
        self.inner = inner
        self.f = f

    def __repr__(self) -> str:
        return f"postprocess({self.inner!r}, {self.f.name})"

    def _key(self) -> tuple[Mechanism, PostProcessing]:
        return (self.inner, self.f)

    @property
    def categories(self) -> int | None:
        return self.inner.categories

    def sample_size(self, n: int) -> int:
        return self.inner.sample_size(n)

    def delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """The inner mechanism's bound (Proposition 4)."""
        return self.inner.delta_upper_bound(n, epsilon)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        return self.f.apply(*self.inner.log_output_pmf(hist))


def postprocess(mechanism: Mechanism, f: Any, *, vectorized: bool = False) -> Mechanism:
    """The mechanism ``f(M(x))``: every output of M mapped through f (Proposition 4).

    Parameters
    ----------
    mechanism : Mechanism
    f : callable or PostProcessing
        A function of one output (a histogram row, a value, a label), called
        once per output.  It returns the new output (any hashable value:
        None, NaN -- every NaN is one output --, strings, tuples, mixed types
        are outputs of their own), or a mapping {new output: probability}
        for a randomized map.  :data:`winner` is built in.
    vectorized : bool, default False
        The caller declares that ``f`` maps the whole array of outputs (a
        2-D array of histogram rows, or a 1-D array of values) to the array
        of its results, output by output; f is then called once per law.
        Never guessed: a function such as ``lambda h: h[..., 0] * (h.min() > 0)``
        gives the same result on single rows yet a different one on the whole
        array, so only the caller can know.

    Returns
    -------
    Mechanism
        Its privacy profile, DP delta and smoothed delta are at most those of
        ``mechanism`` (Proposition 4).
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a smoothdp_nb Mechanism, got {type(mechanism).__name__}")
    return mechanism.postprocessed(as_output_map(f, vectorized))


def _one(rows: IntArray, k: np.ndarray) -> FloatArray:
    return np.ones(np.shape(k))


class SampledWinner(PostProcessed):
    """The winner of a sample drawn without replacement (the announced winner of
    an election with lost votes), two categories in closed form.

    With u other records of category a and v of b, x has u + 1 a's and its
    neighbour x' one a-record turned into b.  Category a wins with probability
    ``W = (P(o_a >= k_lo) + P(o_a >= k_hi)) / 2`` (``k_lo = ceil(T/2)``,
    ``k_hi = floor(T/2) + 1``: a tie at T/2 counts half).  x and x' share the
    other n - 1 records, and the sampled a-counts differ only when the changed
    record is drawn, so exactly

        W_x - W_x' = T/(2n) (g(k_lo - 1) + g(k_hi - 1)),

    g the law of the a's among T - 1 draws from the other records.  As
    ``W_x >= W_x'``, the hockey-stick divergences over the two outcomes are
    ``d(x, x') = [dW - (e^eps - 1) W_x']_+`` and
    ``d(x', x) = [dW - (e^eps - 1)(1 - W_x)]_+``: a few hypergeometric tails
    (:func:`log_monotone_tail_sum`), no cancellation between nearly equal
    probabilities, exact zeros where the winner cannot change.
    """

    inner: SamplingHistogram

    def __init__(self, inner: SamplingHistogram) -> None:
        super().__init__(inner, winner)

    def profile_seconds(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> float:
        if m != 2:
            return super().profile_seconds(n, m, count, n_epsilon, budget)
        return 2e-5 * count + 2e-6 * count * n_epsilon + 1e-4

    def log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on log delta_eps(x) from the closed form of the class docstring.

        The argument.  ``d = [dW - c O]_+`` with ``c = e^eps - 1`` and ``O`` one of
        ``W_x'`` and ``1 - W_x`` is non-decreasing in ``dW`` and non-increasing in
        ``c`` and ``O``, so its upper bound takes dW's upper and c's and O's lower
        bounds, and its lower bound the reverse.  ``O`` is a half-sum of two tail sums,
        each enclosed by :func:`~smoothdp_nb.core.divergence.log_monotone_tail_sum_enclosure`;
        ``dW`` is ``T/(2n)`` times two Loader hypergeometric pmfs, each within
        :func:`~smoothdp_nb.core.lpmf.log_hypergeom_pmf_error` (plus the two additions
        that function leaves to its caller); ``log c`` carries two library calls
        (expm1, log: :data:`~smoothdp_nb.core.enclosures.LIBM_REL` each).  The
        argument ``x = log c + log O - log dW`` of ``log(1 - e^x)`` is rounded in the
        direction that makes the result larger (upper) or smaller (lower), and the
        evaluation of ``log1mexp`` at that float carries at most
        ``2 LIBM_REL (1 + |result|)``.  Both bounds are clipped at the DP delta
        rounded up.  For m > 2 the generic enumeration (certified) is used.
        """
        if hists.shape[1] != 2:
            return self._generic_log_profile_enclosure(hists, n, epsilon)
        T = self.sample_size(n)
        h0, h1 = hists[:, 0], hists[:, 1]
        u = np.concatenate([h0 - 1, h1 - 1])
        v = np.concatenate([h1, h0])
        ok = u >= 0
        lo = np.full((u.size, epsilon.size), -np.inf)
        hi = np.full((u.size, epsilon.size), -np.inf)
        if np.any(ok):
            lo[ok], hi[ok] = self._log_divergence_bounds(u[ok], v[ok], n, T, epsilon)
        k = hists.shape[0]
        enc = LogEnclosure(lo.reshape(2, k, -1).max(axis=0), hi.reshape(2, k, -1).max(axis=0))
        return enc.cap(self.inner._dp_bounds(n)[1])

    def _log_divergence_bounds(
        self, u: IntArray, v: IntArray, n: int, T: int, epsilon: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of log max(d(x, x'), d(x', x)) for rows (u, v): (B, E) each."""
        k_lo, k_hi = (T + 1) // 2, T // 2 + 1
        dist_x = self.inner.binary_dist(u, v, n, T)
        dist_y = self.inner.binary_dist(u - 1, v + 1, n, T)
        B = u.size
        lo_k, hi_k = np.full(B, k_lo), np.full(B, k_hi)
        half = LogEnclosure(np.full(B, next_down(math.log(0.5))), np.full(B, next_up(math.log(0.5))))
        w_y = (
            log_monotone_tail_sum_enclosure(dist_y, lo_k, dist_y.hi, _one)
            .logaddexp(log_monotone_tail_sum_enclosure(dist_y, hi_k, dist_y.hi, _one))
            .shift(half.lower, half.upper)
        )
        not_w_x = (
            log_monotone_tail_sum_enclosure(dist_x, dist_x.lo, lo_k - 1, _one)
            .logaddexp(log_monotone_tail_sum_enclosure(dist_x, dist_x.lo, hi_k - 1, _one))
            .shift(half.lower, half.upper)
        )
        total = (u + v).astype(float)
        gs = []
        for kk in (k_lo - 1, k_hi - 1):
            val = lpmf.log_hypergeom_pmf(kk, u, v, T - 1)
            # the running bound where it is finite, else the a-priori one (3 Loader factors)
            run = lpmf.log_hypergeom_pmf_error(kk, u, v, T - 1)
            run = run + 2.0 * U * (np.abs(val) + 2.0 * (np.log(np.maximum(total, 1.0)) + 1.0))
            err = np.minimum(run, lpmf_abs_error(val, np.maximum(total, T), factors=3))
            gs.append(LogEnclosure.around(val, np.where(np.isneginf(val), 0.0, err)))
        g = gs[0].logaddexp(gs[1])
        scale = math.log(T) - math.log(n) + math.log(0.5)
        s_err = 2.0 * LIBM_REL * (math.log(T) + math.log(n) + 1.0) + 4.0 * U * abs(scale)
        dw = g.shift(next_down(scale - s_err), next_up(scale + s_err))
        with np.errstate(divide="ignore"):
            lc = np.log(np.expm1(epsilon))  # -inf at epsilon = 0: d = dW
        c_err = 2.0 * LIBM_REL * (1.0 + np.abs(np.where(np.isfinite(lc), lc, 0.0)))
        lc_lo, lc_hi = next_down(lc - c_err), next_up(lc + c_err)

        def bound(ldw: FloatArray, lo_other: FloatArray, lc_: FloatArray, upper: bool) -> FloatArray:
            with np.errstate(invalid="ignore"):
                x = lc_[None, :] + lo_other[:, None] - ldw[:, None]
                xe = 2.0 * U * (np.abs(lc_[None, :]) + np.abs(lo_other[:, None]) + np.abs(ldw[:, None]))
                x = next_down(x - xe) if upper else next_up(x + xe)
                r = log1mexp(np.minimum(x, 0.0))
                r = r + (1.0 if upper else -1.0) * 2.0 * LIBM_REL * (1.0 + np.abs(r))
                d = np.where(x < 0, ldw[:, None] + r, -np.inf)
                d = next_up(d + 2.0 * U * np.abs(d)) if upper else next_down(d - 2.0 * U * np.abs(d))
            return np.where(np.isnan(d), -np.inf, d)

        hi = np.full((B, epsilon.size), -np.inf)
        lo = np.full((B, epsilon.size), -np.inf)
        for other in (w_y, not_w_x):
            hi = np.maximum(hi, bound(np.asarray(dw.upper), np.asarray(other.lower), lc_lo, True))
            lo = np.maximum(lo, bound(np.asarray(dw.lower), np.asarray(other.upper), lc_hi, False))
        return lo, hi
