"""Text forms of probabilities that may lie far below the float64 range."""

from __future__ import annotations

import math

__all__ = [
    "format_delta_upper",
    "format_log10",
    "format_log10_up",
    "format_log",
    "jsonable_float",
    "upper_bound_text",
    "lattice_text",
]


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


def format_log10_up(value: float, digits: int = 4) -> str:
    """``10 ** value`` (a base-10 logarithm) in e-notation with the mantissa
    rounded **up**, so that the text is itself an upper bound of the number
    (``"0"`` for ``-inf``): the form in which displays write a proven upper bound.

    The logarithm and the power are widened by 1e-15 relative before rounding
    up, which covers their own rounding errors (a few ulps).
    """
    if not math.isfinite(value):
        return "0" if value < 0 else "inf"
    v10 = value + 1e-15 * max(1.0, abs(value))
    ex = math.floor(v10)
    scale = 10.0 ** (digits - 1)
    mant = math.ceil(10.0 ** (v10 - ex) * (1.0 + 1e-15) * scale) / scale
    if mant >= 10.0:  # rounding carried into the exponent
        mant, ex = math.ceil(mant / 10.0 * scale) / scale, ex + 1
    return f"{mant:.{digits - 1}f}e{ex:+03d}"


def format_delta_upper(value: float, digits: int = 9) -> str:
    """``"δ ≤ 1.19720415e-32"``: a proven upper bound ``exp(value)`` (a natural
    log) printed with its mantissa rounded **up** (:func:`format_log10_up`), so
    the printed number is itself an upper bound (``"δ = 0"`` for an exact zero).
    """
    if not math.isfinite(value):
        return "δ = 0" if value < 0 else "δ ≤ inf"
    return f"δ ≤ {format_log10_up(value / math.log(10.0), digits)}"


def jsonable_float(v: float) -> float | None:
    """JSON has no NaN or infinity: map them to None."""
    v = float(v)
    return v if math.isfinite(v) else None


def upper_bound_text(log10_value: float) -> str:
    """A proven upper bound (its base-10 log) as text: ``"≤ 1.667e-01"``, ``"0"`` for an exact zero."""
    return "0" if log10_value == -math.inf else f"≤ {format_log10_up(log10_value)}"


def lattice_text(step: float | None) -> str:
    """A lattice step as text, the one form every table, chart and repr uses: ``2^-20`` for a
    power of two (never ``0.0`` after rounding), else 3 significant digits; ``""`` for none.

    >>> lattice_text(2.0**-20), lattice_text(0.3), lattice_text(None)
    ('2^-20', '0.3', '')
    """
    if step is None or not math.isfinite(step) or step <= 0:
        return ""
    m, e = math.frexp(float(step))
    return f"2^{e - 1}" if m == 0.5 else f"{step:.3g}"
