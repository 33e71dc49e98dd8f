"""Arb's working precision, set under one process-wide lock.

python-flint keeps Arb's precision in a process-wide context (``flint.ctx``).
A ball computed at any precision is a proven enclosure, so a thread that
changes the precision concurrently cannot make a result wrong, only wider or
narrower; the lock keeps the sampler's precision schedule (and so its work)
the one it states.  Code that sets ``flint.ctx.prec`` should do it through
:func:`working_precision`.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

from flint import arb, ctx

__all__ = ["ARB_LOCK", "arb_from_fraction", "decimal_up", "float_down", "float_up", "working_precision"]

ARB_LOCK = threading.RLock()


@contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """Hold the lock and run the block at ``bits`` of Arb precision (restored afterwards)."""
    with ARB_LOCK:
        old = ctx.prec
        ctx.prec = bits
        try:
            yield
        finally:
            ctx.prec = old


def arb_from_fraction(x: Fraction) -> arb:
    """A ball holding the rational ``x`` (exact when the denominator is a power of two)."""
    return arb(x.numerator) / arb(x.denominator)


def float_up(x: Fraction | arb) -> float:
    """The smallest double >= x (for a ball: >= every point of it); ``inf`` if there is none."""
    if isinstance(x, arb):
        if not x.is_finite():
            return math.inf
        man, ex = x.upper().mid().man_exp()
        m, e = int(man), int(ex)
        # outside the double range the answer is known without building 2^e (a hostile
        # shape makes e astronomically large: the exact power would exhaust memory)
        if e + m.bit_length() > 1100:
            return math.inf if m > 0 else -sys.float_info.max
        if e + m.bit_length() < -1100:
            return math.ulp(0.0) if m > 0 else 0.0
        x = Fraction(m) * Fraction(2) ** e
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def float_down(x: Fraction) -> float:
    """The largest double <= x (x > 0 and below the largest double)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def decimal_up(x: Fraction) -> str:
    """``x`` in 6 significant digits, rounded up (a stated bound must not be below the truth);
    ``"inf"`` beyond the floats."""
    if math.isinf(float_up(x)):
        return "inf"
    text = f"{float(x):.6g}"
    while Fraction(text) < x:
        mant, _, exp = f"{float(Fraction(text)):.5e}".partition("e")
        text = f"{float(Fraction(mant) + Fraction(1, 10**5)) * 10 ** int(exp):.6g}"
    return text
