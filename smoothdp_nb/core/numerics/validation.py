"""The one vocabulary of input checks: every public function, and the spec layer, call these.

Every check raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right
kind, out of range) with a message that starts with the parameter's name and
states the allowed range, so that callers can name the parameter to the user
(the spec layer maps the leading name back to the TOML key).

Numbers are numbers: strings (even numeric ones) and bools are refused
everywhere.  The one documented exception is an exact sampling rate written as
plain ASCII decimal text, ``eta = "0.998"`` (:func:`as_decimal_text`).
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, TypeGuard, cast

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray, RealNumber

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "is_real",
    "is_data_frame",
    "as_real",
    "as_positive",
    "as_open_unit",
    "as_flag",
    "as_int",
    "as_epsilon",
    "as_float_array",
    "as_decimal_text",
    "as_bounds",
    "as_histograms",
    "as_rng",
    "as_seed_sequence",
    "as_choice",
    "kind_of",
    "position",
]


def is_data_frame(value: object) -> TypeGuard[pd.DataFrame]:
    """Whether ``value`` is a pandas DataFrame, without importing pandas: a frame can only exist
    once pandas is loaded, so a caller that passes arrays never pays for the import."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def is_real(value: object) -> TypeGuard[RealNumber]:
    """A real number that is not a bool (Python or numpy scalar)."""
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_))


def _range_text(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool, name: str) -> str:
    if lo is None and hi is None:
        return "a finite number"
    left = f"{lo:g} {'<' if lo_open else '<='} " if lo is not None else ""
    right = f" {'<' if hi_open else '<='} {hi:g}" if hi is not None else ""
    return f"a number with {left}{name}{right}"


def as_real(
    value: object,
    name: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    finite: bool = True,
) -> float:
    """One real number in a range; strings, bools and NaN refused.

    ``finite=False`` admits +-inf where the range allows it (e.g. epsilon = inf).
    """
    allowed = _range_text(lo, hi, lo_open, hi_open, name)
    if not is_real(value):
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} {value!r}")
    x = float(value)
    bad = (
        math.isnan(x)
        or (finite and not math.isfinite(x))
        or (lo is not None and (x < lo or (lo_open and x == lo)))
        or (hi is not None and (x > hi or (hi_open and x == hi)))
    )
    if bad:
        fin = "" if (not finite or (lo is None) == (hi is None)) else " (finite)"
        raise ValueError(f"{name} must be {allowed}{fin}, got {value!r}")
    return x


def as_positive(value: object, name: str, *, finite: bool = True) -> float:
    """A number > 0 (finite unless ``finite=False``)."""
    return as_real(value, name, lo=0.0, lo_open=True, finite=finite)


def as_open_unit(value: object, name: str) -> float:
    """A number strictly between 0 and 1 (a confidence, a level, a threshold)."""
    return as_real(value, name, lo=0.0, hi=1.0, lo_open=True, hi_open=True)


def as_flag(value: object, name: str) -> bool:
    """``value`` as a bool: True or False (numpy's too); TypeError naming ``name`` for anything else.

    A truthy string or number is refused: ``log="no"`` would otherwise ask for the logarithm.
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {type(value).__name__}")


def as_int(value: object, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer parameter (an integral float such as ``1e3`` is accepted; bools and strings refused)."""
    bounds = (f" >= {minimum}" if minimum is not None else "") + (
        f"{' and' if minimum is not None else ''} <= {maximum}" if maximum is not None else ""
    )
    if not is_real(value):
        raise TypeError(f"{name} must be an integer{bounds}, got {type(value).__name__} {value!r}")
    if isinstance(value, (float, np.floating)) or not isinstance(value, (numbers.Integral, np.integer)):
        x = float(value)
        if not math.isfinite(x) or x != math.floor(x):
            raise ValueError(f"{name} must be an integer{bounds}, got {value!r}")
        if abs(x) > 2.0**53:  # above 2**53 a float no longer names one integer
            raise ValueError(
                f"{name} must be an integer{bounds} given exactly (an int, not a float above 2**53), got {value!r}"
            )
    # an Integral exactly (a Python int may exceed 2**53); anything else was checked integral above
    v = int(value) if isinstance(value, (numbers.Integral, np.integer)) else int(float(value))
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        raise ValueError(f"{name} must be{bounds}, got {v}")
    return v


def kind_of(value: object) -> str:
    """What a record is, never what it holds: its type name (``"str"``), or ``"NaN"`` /
    ``"a non-finite float"`` for the float values that say no more than that."""
    if is_real(value) and not math.isfinite(float(value)):
        return "NaN" if math.isnan(float(value)) else "an infinite float"
    return type(value).__name__


def position(index: Sequence[int | np.integer] | int | np.integer, name: str) -> str:
    """``name[i]`` or ``name[i, j]``: where a record sits, for messages that must not show it."""
    idx = (index,) if isinstance(index, (int, np.integer)) else tuple(index)
    return f"{name}[{', '.join(str(int(i)) for i in idx)}]"


def _reject_non_numbers(value: object, name: str) -> None:
    """Refuse strings, bools and other non-numbers anywhere inside a (nested) sequence.

    The messages name the position and the type of the first bad entry, never its value: the
    entries are often records of the private data, and messages end up in logs.
    """
    if isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value, dtype=object)
        except ValueError:  # ragged nesting numpy cannot even hold as objects
            raise ValueError(f"{name} must be rectangular (every row the same length)") from None
        flat = arr.ravel()
        if any(isinstance(v, (list, tuple, np.ndarray)) for v in flat):
            raise ValueError(f"{name} must be rectangular (every row the same length)")
        bad = next((i for i, v in enumerate(flat) if not is_real(v)), None)
        if bad is not None:
            where = position([int(i) for i in np.unravel_index(bad, arr.shape)], name)
            raise TypeError(f"{where} must be a number, got {kind_of(flat[bad])}")
        return
    if isinstance(value, np.ndarray):
        if value.dtype == object and value.ndim >= 1:
            _reject_non_numbers(value.tolist(), name)
        elif value.dtype.kind not in "iuf":
            # the dtype's type, not the dtype: '<U5' would tell the length of the longest string
            raise TypeError(f"{name} must be an array of numbers, got an array of {value.dtype.type.__name__}")
        return
    if not is_real(value):
        raise TypeError(f"{name} must be a number or a 1-D array of numbers, got {type(value).__name__}")


def as_float_array(value: object, name: str) -> FloatArray:
    """An array of numbers as float64 (strings, bools and other objects refused, even numeric strings)."""
    if isinstance(value, (str, bytes)):  # not echoed: it may be a record
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__}")
    if isinstance(value, (list, tuple, np.ndarray)):
        _reject_non_numbers(value, name)
    elif not is_real(value):
        arr0 = np.asarray(value)  # a Series, an Index, anything with __array__
        if arr0.dtype.kind not in "iuf":
            _reject_non_numbers(arr0, name)
    return np.asarray(value, dtype=float)


def as_epsilon(epsilon: object, name: str = "epsilon") -> tuple[FloatArray, bool]:
    """Return ``(epsilon as 1-D float array, was_scalar)``; every value >= 0 (inf allowed), not NaN."""
    if isinstance(epsilon, (str, bytes)):
        raise TypeError(f"{name} must be a number >= 0 or a 1-D array of them, got the string {epsilon!r}")
    if isinstance(epsilon, (list, tuple, np.ndarray)):
        _reject_non_numbers(epsilon, name)
    elif not is_real(epsilon):
        if hasattr(epsilon, "__array__") or hasattr(epsilon, "__iter__"):
            arr0 = np.asarray(epsilon)
            _reject_non_numbers(arr0, name)
        else:
            raise TypeError(
                f"{name} must be a number >= 0 or a 1-D array of them, got {type(epsilon).__name__} {epsilon!r}"
            )
    arr = np.asarray(epsilon, dtype=float)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (and not NaN), got {epsilon!r}")
    return np.atleast_1d(arr), arr.ndim == 0


# plain ASCII decimal: digits, at most one point, an optional exponent; nothing else
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?", re.ASCII)


def as_decimal_text(text: object, name: str) -> Fraction:
    """The exact value of a plain ASCII decimal string such as ``"0.998"`` or ``"1e-3"``.

    Only ASCII digits, one decimal point and an optional exponent: no signs,
    spaces, underscores or other scripts' digits (Python's ``float`` accepts all
    of these; a spec must not).
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} must be decimal text such as '0.998', got {type(text).__name__}")
    if not _DECIMAL.fullmatch(text):
        raise ValueError(
            f"{name} must be plain decimal text such as '0.998' (ASCII digits, one '.', "
            f"optional exponent; no spaces, signs or underscores), got {text!r}"
        )
    return Fraction(text)


def as_bounds(bounds: object, name: str = "bounds") -> tuple[float, float]:
    """A pair ``(low, high)`` of finite numbers with ``low < high`` and a finite width ``high - low``."""
    if bounds is None:
        raise ValueError(f"{name}=(low, high) is required (data-independent limits, finite, low < high)")
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise TypeError(f"{name} must be a pair (low, high) of finite numbers, got {bounds!r}")
    pair = cast("Sequence[object]", bounds)  # a sized pair (checked above); its items are checked below
    lo = as_real(pair[0], f"{name} low")
    hi = as_real(pair[1], f"{name} high")
    if not lo < hi:
        raise ValueError(f"{name} must satisfy low < high, got low={lo!r}, high={hi!r}")
    if not math.isfinite(hi - lo):
        raise ValueError(
            f"{name} must satisfy high - low < {np.finfo(float).max:.4g} (a finite double), got low={lo!r}, high={hi!r}"
        )
    return lo, hi


def as_choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    """One of the strings in ``allowed`` (exactly)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def as_histograms(hist: object, name: str = "hist") -> tuple[IntArray, bool]:
    """Validate histogram(s): counts of shape (m,) or (k, m), integers >= 0, m >= 2.

    Returns ``(int64 array of shape (k, m), was_single)``.
    """
    try:
        if isinstance(hist, (list, tuple)):
            _reject_non_numbers(hist, name)  # no bools or numeric strings among the counts
        arr = np.asarray(hist)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of counts (every histogram the same length)") from None
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number) or arr.dtype == bool:
        raise TypeError(f"{name} must contain integer counts, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (m,) or (k, m), got shape {arr.shape}")
    single = arr.ndim == 1
    arr2 = np.atleast_2d(arr)
    if arr2.shape[0] == 0 or arr2.shape[1] == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if arr2.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 categories (m >= 2), got m = {arr2.shape[1]}")
    f = arr2.astype(float)
    if np.any(~np.isfinite(f)) or np.any(f != np.round(f)):
        raise ValueError(f"{name} must contain non-negative integer counts")
    if np.any(f < 0):
        raise ValueError(f"{name} must contain non-negative integer counts, found a negative count")
    if np.any(f.sum(axis=1) > 2.0**53):
        raise ValueError(f"{name}: databases of more than 2**53 records are not supported")
    out = arr2.astype(np.int64)
    if np.any(out.sum(axis=1) == 0):
        raise ValueError(f"{name} must contain at least one record (a histogram with n = 0 is empty)")
    return out, single


def _check_seed_type(rng: object, name: str) -> int | np.random.SeedSequence | np.random.Generator | None:
    """``rng`` itself, an integer seed as ``int``; anything else refused."""
    if isinstance(rng, (np.random.Generator, np.random.SeedSequence)) or rng is None:
        return rng
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(
                f"{name} must be None, an int seed >= 0, a numpy SeedSequence or a numpy Generator, "
                f"got the negative seed {rng}"
            )
        return int(rng)
    raise TypeError(
        f"{name} must be None, an int seed >= 0, a numpy SeedSequence or a numpy Generator, got {type(rng).__name__}"
    )


def as_rng(rng: object, name: str = "rng") -> np.random.Generator:
    """The one RNG normaliser: ``None`` (fresh OS entropy), an int seed >= 0, a SeedSequence
    or a Generator (returned as is) -> Generator.  A legacy ``RandomState`` (scipy hands
    distributions its global one) seeds a new Generator from its stream."""
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(rng.randint(0, 2**63 - 1, dtype=np.int64))
    seed = _check_seed_type(rng, name)
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def as_seed_sequence(rng: object, name: str = "rng", *, allow_none: bool = False) -> np.random.SeedSequence | None:
    """The SeedSequence that independent child streams are spawned from.

    An int gives the same streams on every call; a SeedSequence or a Generator
    (its bit generator's seed sequence) is spawned from, so repeated calls get
    fresh streams; ``None`` gives fresh OS entropy, or None with ``allow_none``.
    """
    seed = _check_seed_type(rng, name)
    if seed is None:
        return None if allow_none else np.random.SeedSequence()
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        seed_seq = seed.bit_generator.seed_seq
        if not isinstance(seed_seq, np.random.SeedSequence):
            raise TypeError(f"{name}: the Generator's bit generator has no SeedSequence to spawn from")
        return seed_seq
    return np.random.SeedSequence(seed)
