"""Maps of a mechanism's outputs, for post-processing (Proposition 4): the data types of
:mod:`.postprocess`, kept below the mechanism protocol so that
:meth:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism._postprocessed` can name them.

* :class:`PostProcessing` -- what a map of outputs is: ``apply`` to a batch of outputs and their
  log-probabilities, and a ``name``;
* :data:`winner` -- the category with the most sampled votes, ties split evenly;
* :func:`as_output_map` -- a user function (per output, or vectorized) as a map.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 4.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.smoothed.mechanisms.outputs import factorize_outputs

__all__ = ["PostProcessing", "Winner", "winner", "as_output_map", "as_count_rows"]


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


def as_output_map(f: object, vectorized: bool = False) -> PostProcessing:
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
