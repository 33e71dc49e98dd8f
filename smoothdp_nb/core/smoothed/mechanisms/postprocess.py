"""Post-processing (Proposition 4): a mechanism followed by a map of its outputs.

* :func:`postprocess` -- ``M`` followed by a function ``f`` of the output
  (deterministic, or randomized when ``f`` returns a law per output);
* :data:`winner` -- the category with the most sampled votes, ties split evenly.

By Proposition 4 (and the data-processing inequality behind it) the result
never has a larger privacy profile, DP delta or smoothed delta than ``M``.
The sampling histogram followed by the winner (without replacement) has a
fast path from hypergeometric tails, which lives beside the sampling
histogram (:mod:`.sampling_histogram.winner`): a mechanism offers such a form through its
:meth:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism._postprocessed` hook.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 4.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.output_maps import PostProcessing, as_output_map, winner

__all__ = ["PostProcessed", "PostProcessing", "postprocess", "winner"]


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

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """The inner mechanism's bound (Proposition 4)."""
        return self.inner._delta_upper_bound(n, epsilon)

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        return self.f.apply(*self.inner.log_output_pmf(hist))


def postprocess(
    mechanism: Mechanism, f: Callable[..., object] | PostProcessing, *, vectorized: bool = False
) -> Mechanism:
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

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Proposition 4.
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a smoothdp_nb Mechanism, got {type(mechanism).__name__}")
    g = as_output_map(f, vectorized)
    special = mechanism._postprocessed(g)  # the mechanism's faster form of this map, if it has one
    return PostProcessed(mechanism, g) if special is None else special
