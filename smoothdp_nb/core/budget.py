"""Refusing work that is too large, before it starts.

Every computation that can grow large estimates its cost first and raises
:class:`ComputationTooLarge` -- with the estimate, the limit and a
suggestion -- instead of running for hours or exhausting memory.
"""

from __future__ import annotations

__all__ = ["ComputationTooLarge", "DEFAULT_BUDGET_SECONDS"]

#: default limit on the estimated run time of an exact computation (seconds)
DEFAULT_BUDGET_SECONDS = 600.0


class ComputationTooLarge(ValueError):
    """Raised (before any work) when a computation would be too big."""
