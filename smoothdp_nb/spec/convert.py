"""Value checkers generated from the key table: (key, value) -> converted value, or SpecError.

:func:`convert` reads a key's kind, range, choices and aliases from its row
of :data:`~smoothdp_nb.spec.keys.TABLE`; the checkers below are the kinds.
Values are checked with the core's own validators
(:mod:`smoothdp_nb.core.numerics.validation`), so a spec that validates does not fail
in the core on a value it let through.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.validation import as_int, as_real
from smoothdp_nb.spec.errors import SpecError, core_check
from smoothdp_nb.spec.keys import MAX_RANGE, Key, choices_of

__all__ = [
    "GENERIC_KINDS",
    "convert",
    "number",
    "integer",
    "boolean",
    "choice",
    "range_table",
    "values",
    "sizes",
    "text",
    "check_keys",
    "close_hint",
]


def close_hint(name: str, candidates: list[str] | tuple[str, ...], cutoff: float = 0.6) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def number(
    key: str,
    v: object,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """A finite number in a range (no strings, no bools): :func:`~smoothdp_nb.core.numerics.validation.as_real`."""
    return core_check(key, as_real, v, key, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def integer(key: str, v: object, *, lo: int = 1, hi: int | None = None) -> int:
    """An integer >= lo (integral floats such as 1e3 accepted): :func:`~smoothdp_nb.core.numerics.validation.as_int`."""
    return core_check(key, as_int, v, key, minimum=lo, maximum=hi)


def boolean(key: str, v: object) -> bool:
    """true or false, nothing else."""
    if not isinstance(v, bool):
        raise SpecError(f"must be true or false, got {v!r}", key)
    return v


def choice(
    key: str, v: object, allowed: tuple[str, ...], aliases: Mapping[str, str] | Callable[[str], str] | None = None
) -> str:
    """One of ``allowed`` (case and surrounding blanks ignored), given by name or alias."""
    if isinstance(v, str):
        norm = v.strip().lower()
        if callable(aliases):
            try:
                norm = aliases(norm)
            except (TypeError, ValueError):
                pass
        else:
            norm = (aliases or {}).get(norm, norm)
        if norm in allowed:
            return norm
    hint = close_hint(str(v).lower(), allowed, cutoff=0.5)
    raise SpecError(f"must be one of {', '.join(repr(a) for a in allowed)}, got {v!r}{hint}", key)


def range_table(key: str, v: Mapping[str, object]) -> FloatArray:
    """``{start, stop, num, log}`` -> evenly spaced values (geometric when log = true)."""
    allowed = ("start", "stop", "num", "log")
    check_keys(key, v, allowed)
    for req in ("start", "stop", "num"):
        if req not in v:
            raise SpecError(f"a range needs start, stop and num (optional: log); {req!r} is missing", key)
    log = boolean(f"{key}.log", v.get("log", False))
    lo = 0.0 if log else None
    start = number(f"{key}.start", v["start"], lo=lo, lo_open=log)
    stop = number(f"{key}.stop", v["stop"], lo=lo, lo_open=log)
    num = integer(f"{key}.num", v["num"], lo=1, hi=MAX_RANGE)
    return np.geomspace(start, stop, num) if log else np.linspace(start, stop, num)


def values(
    key: str, v: object, *, lo: float = 0.0, lo_open: bool = False, hi: float | None = None, hi_open: bool = False
) -> FloatArray:
    """A number, a list of numbers or a range table -> 1-D array of finite floats in the range."""
    if isinstance(v, Mapping):
        arr = range_table(key, v)
        low, high = float(arr.min()), float(arr.max())
        if low < lo or (lo_open and low == lo):
            raise SpecError(f"every value must be {'>' if lo_open else '>='} {lo:g}, got a range down to {low!r}", key)
        if hi is not None and (high > hi or (hi_open and high == hi)):
            raise SpecError(f"every value must be {'<' if hi_open else '<='} {hi:g}, got a range up to {high!r}", key)
        return arr
    if isinstance(v, (list, tuple)):
        if not v:
            raise SpecError("must not be an empty list", key)
        return np.array(
            [number(f"{key}[{i}]", x, lo=lo, lo_open=lo_open, hi=hi, hi_open=hi_open) for i, x in enumerate(v)],
            dtype=float,
        )
    if isinstance(v, (str, bool)) or not isinstance(v, (int, float)):
        raise SpecError(f"must be a number, a list of numbers or a range {{start, stop, num, log}}, got {v!r}", key)
    return np.array([number(key, v, lo=lo, lo_open=lo_open, hi=hi, hi_open=hi_open)])


def sizes(key: str, v: object) -> list[int]:
    """Database sizes: an integer, a list or a range, rounded to integers, unique, sorted."""
    if isinstance(v, Mapping):
        arr = range_table(key, v)
        out = sorted({round(x) for x in arr})
    elif isinstance(v, (list, tuple)):
        if not v:
            raise SpecError("must not be an empty list", key)
        out = sorted({integer(f"{key}[{i}]", x) for i, x in enumerate(v)})
    else:
        out = [integer(key, v)]
    if out[0] < 1:
        raise SpecError(f"database sizes must be >= 1, got {out[0]}", key)
    return out


def text(key: str, v: object, what: str = "a string") -> str:
    """A non-blank string, stripped (``what`` names it in the message)."""
    if not isinstance(v, str) or not v.strip():
        raise SpecError(f"must be {what}, got {v!r}", key)
    return v.strip()


def check_keys(where: str | None, table: Mapping[str, object], allowed: tuple[str, ...], context: str = "") -> None:
    """Every key of ``table`` is allowed, else a SpecError naming the closest allowed key."""
    for k in table:
        if k not in allowed:
            full = f"{where}.{k}" if where else k
            ctx = f" {context}" if context else ""
            raise SpecError(f"unknown key{ctx}; allowed: {', '.join(allowed)}{close_hint(k, allowed)}", full)


def _lo(key: Key) -> float:
    return 0.0 if key.lo is None else key.lo


def _families(name: str, key: Key, v: object) -> list[str]:
    allowed = choices_of(key)
    if not isinstance(v, list) or not v:
        raise SpecError(f"must be a non-empty list of {', '.join(allowed)}, got {v!r}", name)
    return [choice(name, f, allowed, key.aliases) for f in v]


def _years(name: str, key: Key, v: object) -> list[int]:
    ys = v if isinstance(v, list) else [v]
    lo = int(_lo(key))
    hi = None if key.hi is None else int(key.hi)
    return [integer(f"{name}[{i}]", y, lo=lo, hi=hi) for i, y in enumerate(ys)]


#: kind -> converter (name, row, value); the other kinds need context and live in :mod:`.validate`
_GENERIC: dict[str, Callable[[str, Key, object], Any]] = {
    "number": lambda n, k, v: number(n, v, lo=k.lo, hi=k.hi, lo_open=k.lo_open, hi_open=k.hi_open),
    "integer": lambda n, k, v: integer(n, v, lo=int(_lo(k)), hi=None if k.hi is None else int(k.hi)),
    "boolean": lambda n, k, v: boolean(n, v),
    "choice": lambda n, k, v: choice(n, v, choices_of(k), k.aliases),
    "values": lambda n, k, v: values(n, v, lo=_lo(k), lo_open=k.lo_open, hi=k.hi, hi_open=k.hi_open),
    "sizes": lambda n, k, v: sizes(n, v),
    "text": lambda n, k, v: _title(n, v),
    "families": _families,
    "years": _years,
}
GENERIC_KINDS = tuple(_GENERIC)


def _title(name: str, v: object) -> str:
    if not isinstance(v, str):
        raise SpecError(f"must be a string, got {v!r}", name)
    return v


def convert(key: Key, v: object) -> Any:
    """Check and convert ``v`` as the table's row ``key`` says (generic kinds only).

    The type of the result depends on the row's kind (a float, an int, a str, an array, a list).
    """
    return _GENERIC[key.kind](key.dotted, key, v)
