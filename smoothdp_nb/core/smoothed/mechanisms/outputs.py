"""Which outputs of a mechanism are the same output: integer codes of the
outputs of several laws on their union, never merging values a reader of the
release can tell apart (used by the generic path of
:class:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism` and by post-processing)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable
from decimal import Decimal
from typing import Any

import numpy as np

from smoothdp_nb.core.numerics.array_types import IntArray

__all__ = ["factorize_outputs", "output_key"]


def factorize_outputs(outputs: list[Any]) -> tuple[list[IntArray], int]:
    """Integer codes of the outputs of several laws on their union: (codes per law, K).

    Two outputs are the same output exactly when a reader of the release
    cannot tell them apart, so the codes never merge distinguishable values:

    * every NaN is one output (whatever its type or bit pattern), distinct
      from every other value (``None``, 0, ...);
    * ``None``, strings, tuples and values of different types (``1``,
      ``1.0``, ``True``, ``"1"``) are outputs of their own, and so are
      ``0.0`` and ``-0.0`` (the sign of a complex or Decimal zero too); a
      numpy scalar is the Python value it prints as (``np.int64(3)`` is
      ``3``), and a numpy array is the tuple of its entries;
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
        ints = None
        if kinds == {int}:  # Python ints (not bools) in the int64 range: factorized as int64
            try:
                ints = np.array(flat, dtype=np.int64)
            except OverflowError:
                ints = None
        import pandas as pd  # deferred: one hash pass for mixed outputs; arrays of numbers need no pandas

        if ints is not None:
            codes, uniques = pd.factorize(ints)
            K = len(uniques)
        elif kinds <= {int, str} or kinds <= {bytes}:  # no two distinct values of these compare equal
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
    (see :func:`factorize_outputs`): the type is part of the key, zeros keep
    their sign (float, complex and Decimal zeros alike), every NaN has one key,
    tuples and frozensets are keyed entry by entry."""
    if isinstance(o, np.ndarray):
        return ("ndarray", o.shape, tuple(output_key(v) for v in o.ravel().tolist()))
    if isinstance(o, np.generic):
        o = o.item()
    t = type(o)
    if isinstance(o, Decimal):  # before any comparison: a signalling NaN refuses to compare
        return _NAN_KEY if o.is_nan() else (t, o, o.is_signed())
    if isinstance(o, (float, complex)):
        if o != o:  # NaN (complex: either part)
            return _NAN_KEY
        if isinstance(o, float):
            return (t, o, math.copysign(1.0, o))
        return (t, o, math.copysign(1.0, o.real), math.copysign(1.0, o.imag))
    if t is tuple:
        return (tuple, tuple(output_key(v) for v in o))  # type: ignore[attr-defined]
    if t is frozenset:
        return (frozenset, frozenset(output_key(v) for v in o))  # type: ignore[attr-defined]
    if not isinstance(o, Hashable):
        raise TypeError(f"{type(o).__name__} is not hashable")
    return (t, o)
