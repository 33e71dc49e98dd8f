"""Text forms of probabilities that may lie far below the float64 range."""

from __future__ import annotations

import math

__all__ = ["format_log10", "format_log"]


def format_log10(value: float, digits: int = 4) -> str:
    """Format ``10 ** value`` in e-notation, also when it underflows float64.

    Parameters
    ----------
    value : float
        A base-10 logarithm.
    digits : int
        Significant digits of the mantissa.

    Returns
    -------
    str
        ``"0"`` for ``-inf``, otherwise e.g. ``"3.162e-321"``.
    """
    if not math.isfinite(value):
        return "0" if value < 0 else "inf"
    ex = math.floor(value)
    mant = 10.0 ** (value - ex)
    if round(mant, digits - 1) >= 10.0:  # rounding carried into the exponent
        mant, ex = mant / 10.0, ex + 1
    return f"{mant:.{digits - 1}f}e{ex:+03d}"  # like Python: e-05, e+01


def format_log(value: float) -> str:
    """Format ``exp(value)`` (a natural log): ordinary notation while float64
    can hold it, e-notation from the logarithm below 1e-300."""
    if value > math.log(1e-300):
        return f"{math.exp(value):.4g}"
    return format_log10(value / math.log(10.0))
