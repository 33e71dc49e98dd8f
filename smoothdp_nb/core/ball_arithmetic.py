"""Arb's working precision, set under one process-wide lock.

python-flint keeps Arb's precision in a process-wide context (``flint.ctx``).
A ball computed at any precision is a proven enclosure, so a thread that
changes the precision concurrently cannot make a result wrong, only wider or
narrower; the lock keeps the sampler's precision schedule (and so its work)
the one it states.  Code that sets ``flint.ctx.prec`` should do it through
:func:`working_precision`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flint import ctx

__all__ = ["working_precision"]

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
