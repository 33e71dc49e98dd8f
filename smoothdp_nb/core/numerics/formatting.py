"""The one text form of every number a person reads: privacy bounds, parameters, released values.

Every repr, table, chart label, the magic and the command line write numbers with these functions,
in one style:

* **privacy numbers** are proven upper bounds, written with their mantissa rounded *up* (the text is
  itself an upper bound) in powers of ten with Unicode superscripts: ``"δ ≤ 7.97·10⁻¹"``
  (:func:`format_bound`, :func:`format_sci`), also far below the float64 range (from the logarithm);
* **parameters** as the user wrote them: ``10`` for ``9.999999999999998``, ``0.998``, ``10⁻⁶``
  (:func:`format_param`);
* **released values** to the precision their lattice carries (:func:`format_value`);
* ranges of counts once when both ends agree: ``"16"``, else ``"16–400"`` (:func:`format_range`).

:func:`parse_number` reads any of these texts back (for tests and for users who copy a figure).
"""

from __future__ import annotations

import decimal
import math
import re

__all__ = [
    "format_bound",
    "format_upper",
    "format_param",
    "format_range",
    "format_sci",
    "format_value",
    "parse_number",
    "superscript",
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
    """Format ``exp(value)`` (a natural log) to nearest, as :func:`format_sci` writes it:
    ``"1.65·10⁻¹"``, also far below the float64 range."""
    return format_sci(value / math.log(10.0))


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


def format_delta_upper(value: float, digits: int = 3) -> str:
    """``"δ ≤ 1.20·10⁻³²"``: a proven upper bound ``exp(value)`` (a natural
    log) printed with its mantissa rounded **up** (:func:`format_sci`), so
    the printed number is itself an upper bound (``"δ = 0"`` for an exact zero).
    """
    return format_bound(value / math.log(10.0), "δ", digits)


def jsonable_float(v: float) -> float | None:
    """JSON has no NaN or infinity: map them to None."""
    v = float(v)
    return v if math.isfinite(v) else None


def upper_bound_text(log10_value: float, digits: int = 3) -> str:
    """A proven upper bound (its base-10 log) as text: ``"≤ 1.67·10⁻¹"``, ``"0"`` for an exact zero."""
    return "0" if log10_value == -math.inf else f"≤ {format_sci(log10_value, digits, up=True)}"


def lattice_text(step: float | None) -> str:
    """A lattice step as text, the one form every table, chart and repr uses: ``2⁻²⁰`` for a
    power of two (never ``0.0`` after rounding), else 3 significant digits; ``""`` for none.

    >>> lattice_text(2.0**-20), lattice_text(0.3), lattice_text(None)
    ('2⁻²⁰', '0.3', '')
    """
    if step is None or not math.isfinite(step) or step <= 0:
        return ""
    m, e = math.frexp(float(step))
    return f"2{superscript(e - 1)}" if m == 0.5 else f"{step:.3g}"


_SUPERSCRIPTS = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_PLAIN = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺−", "0123456789-+-")


def superscript(k: int) -> str:
    """The integer ``k`` in Unicode superscript digits: ``superscript(-32) == "⁻³²"``."""
    return str(int(k)).translate(_SUPERSCRIPTS)


def _mantissa_exponent(log10_value: float, digits: int, up: bool) -> tuple[float, int]:
    """``10 ** log10_value`` as ``(mantissa, exponent)`` with ``digits`` significant digits.

    ``up``: the mantissa is rounded up after widening the logarithm by 1e-15 relative
    (which covers the rounding of the logarithm and of the power), so that
    ``mantissa·10^exponent`` is an upper bound of the number.  Otherwise to nearest.
    """
    scale = 10.0 ** (digits - 1)
    if up:
        v10 = log10_value + 1e-15 * max(1.0, abs(log10_value))
        ex = math.floor(v10)
        mant = math.ceil(10.0 ** (v10 - ex) * (1.0 + 1e-15) * scale) / scale
        if mant >= 10.0:  # rounding carried into the exponent
            mant, ex = math.ceil(mant / 10.0 * scale) / scale, ex + 1
        return mant, ex
    ex = math.floor(log10_value)
    mant = round(10.0 ** (log10_value - ex) * scale) / scale
    if mant >= 10.0:
        mant, ex = mant / 10.0, ex + 1
    return mant, ex


def format_sci(log10_value: float, digits: int = 3, *, up: bool = False) -> str:
    """``10 ** log10_value`` as a person writes it: ``"7.97·10⁻¹"``, ``"1.20·10⁻³²"``.

    Parameters
    ----------
    log10_value : float
        The base-10 logarithm of the number (so numbers far below 1e-308 are written exactly).
    digits : int
        Significant digits of the mantissa (3: what a projector and a reader need).
    up : bool
        Round the mantissa up (the form of a proven upper bound), else to nearest.

    Returns
    -------
    str
        ``"0"`` for ``-inf``, ``"∞"`` for ``+inf``; no ``·10⁰`` factor for numbers in ``[1, 10)``.

    Examples
    --------
    >>> format_sci(math.log10(0.796378719), up=True), format_sci(-31.9), format_sci(0.0)
    ('7.97·10⁻¹', '1.26·10⁻³²', '1.00')
    """
    if math.isnan(log10_value):
        return "nan"
    if not math.isfinite(log10_value):
        return "0" if log10_value < 0 else "∞"
    if not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    mant, ex = _mantissa_exponent(float(log10_value), digits, up)
    text = f"{mant:.{digits - 1}f}"
    return text if ex == 0 else f"{text}·10{superscript(ex)}"


def format_bound(log10_value: float, symbol: str = "δ", digits: int = 3, *, probability: bool = True) -> str:
    """A proven upper bound with its symbol: ``"δ ≤ 7.97·10⁻¹"``; ``"δ = 0"`` for an exact zero.

    The mantissa is rounded up (:func:`format_sci` with ``up=True``): the printed number is
    itself an upper bound of the proven one.  A ``probability`` (every δ) is at most 1, so a
    bound that rounds up past 1 is written ``"δ ≤ 1"``, still a true statement.
    """
    if log10_value == -math.inf:
        return f"{symbol} = 0"
    if probability and log10_value >= -1e-12:
        return f"{symbol} ≤ 1"
    return f"{symbol} ≤ {format_sci(log10_value, digits, up=True)}"


def format_upper(value: float, symbol: str = "δ", digits: int = 3, *, probability: bool = True) -> str:
    """:func:`format_bound` of a bound held as a float (not its logarithm), rounded up exactly.

    The float's exact decimal expansion is rounded towards +inf (:mod:`decimal`): no widening,
    so ``0.5`` is written ``5.00·10⁻¹`` and the text is still an upper bound of ``value``.
    """
    v = float(value)
    if math.isnan(v):
        raise ValueError("value must be a number, got nan")
    if v <= 0:
        return f"{symbol} = 0" if v == 0 else f"{symbol} ≤ {format_param(v)}"
    if not math.isfinite(v):
        return f"{symbol} ≤ ∞"
    if probability and v >= 1:
        return f"{symbol} ≤ 1"
    d = decimal.Decimal(v)
    ex = d.adjusted()
    mant = decimal.Context(prec=digits, rounding=decimal.ROUND_CEILING).plus(d.scaleb(-ex))
    if mant >= 10:
        mant, ex = mant / 10, ex + 1
    text = f"{mant:.{digits - 1}f}"
    return f"{symbol} ≤ {text if ex == 0 else f'{text}·10{superscript(ex)}'}"


def format_param(value: float | int | None) -> str:
    """A parameter as the user wrote it: the shortest decimal that agrees to 12 significant digits.

    Float noise of a computation (``9.999999999999998``, ``0.30000000000000004``) disappears;
    powers of ten from ``10⁻⁵`` down are written with a superscript.

    >>> format_param(9.999999999999998), format_param(0.998), format_param(1e-6), format_param(3)
    ('10', '0.998', '10⁻⁶', '3')
    """
    if value is None:
        return "None"
    if isinstance(value, bool) or (not isinstance(value, (int, float)) and not hasattr(value, "__float__")):
        raise TypeError(f"value must be a number, got {type(value).__name__}")
    if isinstance(value, int):
        return str(value)
    v = float(value)
    if not math.isfinite(v):
        return "∞" if v > 0 else ("-∞" if v < 0 else "nan")
    v = float(f"{v:.12g}")
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    text = repr(v)
    if "e" in text:
        mant, ex = text.split("e")
        sign = "-" if mant.startswith("-") else ""
        mant = mant.lstrip("-")
        head = "" if mant == "1" else f"{mant}·"
        return f"{sign}{head}10{superscript(int(ex))}"
    return text


def format_value(value: float, step: float | None = None) -> str:
    """A released value to the precision its lattice carries: as many decimals as the step needs.

    A value on the lattice ``2⁻²⁰·ℤ`` (step about ``9.5·10⁻⁷``) is written with 7 decimals:
    ``0.5069742`` (never ``0.5069742202758789``).  Without a step, 6 significant digits.

    >>> format_value(0.5069742202758789, 2.0**-20), format_value(3.0, 1.0), format_value(2.5)
    ('0.5069742', '3', '2.5')
    """
    v = float(value)
    if not math.isfinite(v):
        return format_param(v)
    if step is None or not math.isfinite(step) or step <= 0:
        return format_param(float(f"{v:.6g}"))
    decimals = max(0, math.ceil(-math.log10(float(step)) - 1e-12))
    text = f"{v:.{decimals}f}"
    return "0" if float(text) == 0 else text


def format_range(low: float | int, high: float | int) -> str:
    """``"16"`` when both ends agree, else ``"16–400"`` (an en dash), each end by :func:`format_param`."""
    a, b = format_param(low), format_param(high)
    return a if a == b else f"{a}–{b}"


_NUMBER = re.compile(r"^\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)(?:\s*·\s*10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?\s*$")
_POWER = re.compile(r"^\s*([-+]?)10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)\s*$")


def parse_number(text: str) -> float:
    """Read back a number written by this module (``"7.97·10⁻¹"``, ``"10⁻⁶"``, ``"0.5"``, ``"1e-3"``).

    Raises
    ------
    ValueError
        When ``text`` is not such a number.
    """
    m = _POWER.match(text)
    if m:
        return float(f"{m.group(1)}1e{m.group(2).translate(_PLAIN)}")
    m = _NUMBER.match(text)
    if not m:
        raise ValueError(f"text must be a number such as '7.97·10⁻¹', got {text!r}")
    mant, ex = m.group(1), m.group(2)
    return float(mant if ex is None else f"{mant}e{ex.translate(_PLAIN)}")
