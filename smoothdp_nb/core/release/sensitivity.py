"""Local and smooth sensitivity (Nissim-Raskhodnikova-Smith; Bun-Steinke).

Definitions (lecture notes 002, Definition 2.2; Hladik-Tetek Definition 2):
``LS_q(x) = max{|q(x) - q(x')| : x' ~ x}`` (x' differs from x in one record,
same n) and ``SS_q^gamma(x) = max_k e^{-k gamma} A(k)`` with
``A(k) = max{LS_q(y) : d(x, y) <= k}``.

Order-statistic queries
-----------------------
Sort the (clipped) data ``low <= x_1 <= ... <= x_n <= high`` and pad
``x_i = low`` for ``i <= 0`` and ``x_i = high`` for ``i >= n + 1``.

* ``"median"``: the m-th order statistic with ``m = (n + 1) // 2``.  For odd
  n this is the median; **for even n it is the lower median** ``x_(n/2)``
  (the documented convention: an order statistic, so the NRS formulas below
  hold verbatim; ``np.median`` would average two order statistics instead).
  NRS (lecture notes): ``LS = max(x_m - x_{m-1}, x_{m+1} - x_m)`` and
  ``A(k) = max_{0 <= t <= k+1} (x_{m+t} - x_{m+t-k-1})``.
* ``"trimmed_mean"`` (Bun-Steinke): ``(x_(m+1) + ... + x_(n-m)) / (n - 2m)``;
  removing the lowest record and adding one at ``high`` shifts the kept window
  up by one rank, hence ``A(k) = max_{0 <= t <= k+1}
  (x_{n-m+1+k-t} - x_{m+1-t}) / (n - 2m)``.
* ``"mean"``: the bounded mean, the trimmed mean with m = 0
  (``A(0) = max(high - x_1, x_n - low)/n``, ``A(k >= 1) = (high - low)/n``).

All three are instances of one formula: with ``a <= b`` ranks and
``w = b - a + 1`` (median: ``a = b = m``; trimmed: ``a = m + 1, b = n - m``),
``SS = max{(x_j - x_i) e^{-gamma (j - i - w)} : i <= a, j >= b, j - i >= w}
/ denominator``.  For fixed j, the largest maximising i is non-decreasing in
j (if ``i2 > i1`` is preferred at ``x_j`` it stays preferred for larger
``x_j``, because ``(x_j - x_i) e^{gamma i}`` has slope ``e^{gamma i}`` in
``x_j``), so the matrix maximum is found by divide and conquer on rows with
narrowing column ranges: O(n log n), vectorised level by level (about 20
numpy passes for n = 10^6).  Values are handled in the log domain so that
``e^{-gamma k}`` never underflows.

References
----------
Nissim, Raskhodnikova, Smith. *Smooth sensitivity and sampling in private data analysis*, STOC 2007.
Hladik, Tetek. *Smooth Sensitivity Revisited: Towards Optimality*.
Wang. *Lecture 14: Data-dependent DP algorithm design* (lecture notes).
Bun, Steinke. *Average-case averages: private algorithms for smooth sensitivity and mean estimation*, NeurIPS 2019.
"""

from __future__ import annotations

import contextlib
import math
import sys
import warnings
from collections.abc import Callable, Iterator, Sized
from numbers import Integral, Real
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.validation import as_bounds, as_float_array, as_positive, position

__all__ = [
    "QUERIES",
    "local_sensitivity",
    "smooth_sensitivity",
    "sensitivity_at_distance",
    "evaluate_query",
    "SENSITIVITY_GRID",
    "sensitivity_grid",
    "grid_value",
    "round_up_to_grid",
]

QUERIES = ("median", "trimmed_mean", "mean")


class ClippingWarning(UserWarning):
    """Records outside ``bounds`` were clipped.  The count is data-dependent, so
    :func:`~smoothdp_nb.core.release.smooth_sensitivity.release` silences this warning (its diagnostics carry the count)."""


@contextlib.contextmanager
def clipping_silenced() -> Iterator[None]:
    """Within it, clipping to the bounds warns nothing: for code whose output sits beside a release
    (a warning saying how many records were clipped is a function of the data)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        yield


Query = str | Callable[[int], float]
#: ``trim`` of a trimmed mean: a count of records (int) or a fraction of n in [0, 0.5); None is 0.1
Trim = int | float | None


# --------------------------------------------------------------------------- #
# input handling
# --------------------------------------------------------------------------- #
def _check_data(x: ArrayLike, bounds: tuple[float, float]) -> FloatArray:
    """1-D float array, clipped to ``bounds`` (with a warning), sorted."""
    arr = as_float_array(x, "x")  # numbers only: no numeric strings, no bools
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 0 else arr
        if arr.ndim != 1:
            raise ValueError(f"x must be 1-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("x must be non-empty (n >= 1 records)")
    nan = np.flatnonzero(np.isnan(arr))
    if nan.size:  # where, not what: the record itself is never echoed
        raise ValueError(f"{position(nan[0], 'x')} must be a number, got NaN (drop or impute missing values first)")
    lo, hi = bounds
    outside = (arr < lo) | (arr > hi)
    if outside.any():
        warnings.warn(
            f"{int(outside.sum())} value(s) of x outside bounds=({lo:g}, {hi:g}) were clipped to the bounds",
            ClippingWarning,
            stacklevel=3,
        )
        arr = np.clip(arr, lo, hi)
    return np.sort(arr, kind="stable")


def _trim_count(n: int, trim: object) -> int:
    if trim is None:
        trim = 0.1
    if isinstance(trim, bool):
        raise TypeError("trim must be an int count or a float fraction in [0, 0.5)")
    if isinstance(trim, (Integral, np.integer)):
        m = int(trim)
        if not (0 <= m and n - 2 * m >= 1):
            raise ValueError(f"trim (count) must satisfy 0 <= trim <= (n-1)/2 = {(n - 1) // 2}, got {trim!r}")
        return m
    if isinstance(trim, (Real, np.floating)):
        f = float(trim)
        if not (0.0 <= f < 0.5):
            raise ValueError(f"trim (fraction) must satisfy 0 <= trim < 0.5, got {trim!r}")
        m = math.floor(f * n)
        return min(m, (n - 1) // 2)
    raise TypeError(f"trim must be an int count or a float fraction in [0, 0.5), got {type(trim).__name__}")


def query_name(query: object) -> str:
    """The canonical name of an order-statistic query (``"trimmed"``, ``"Trimmed-Mean"`` -> ``"trimmed_mean"``).

    Raises
    ------
    TypeError
        ``query`` is not a string.
    ValueError
        ``query`` names none of :data:`QUERIES`.
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be one of {QUERIES} or a callable A(k), got {type(query).__name__}")
    q = query.lower().replace("-", "_").replace(" ", "_")
    if q == "trimmed":
        q = "trimmed_mean"
    if q not in QUERIES:
        raise ValueError(f"query must be one of {QUERIES} or a callable A(k), got {query!r}")
    return q


def _window(n: int, query: str, trim: Trim) -> tuple[int, int, int, float]:
    """Ranks (a, b), width w = b - a + 1 and denominator of the order-statistic formula."""
    if query == "median":
        m = (n + 1) // 2
        return m, m, 1, 1.0
    m = 0 if query == "mean" else _trim_count(n, trim)
    return m + 1, n - m, n - 2 * m, float(n - 2 * m)


def _padded(xs: FloatArray, bounds: tuple[float, float]) -> FloatArray:
    """x_0 = low, x_1..x_n = data, x_{n+1} = high (only differences are used)."""
    lo, hi = bounds
    p = np.empty(xs.size + 2)
    p[0] = lo
    p[1:-1] = xs
    p[-1] = hi
    return p


# --------------------------------------------------------------------------- #
# core: max of (p_j - p_i) e^{-gamma (j - i - w)} over i <= a, j >= b, j - i >= w
# --------------------------------------------------------------------------- #
def _times_exp(v: float, gamma: float, k: int) -> float:
    """``v * e^(-gamma k)`` for ``v >= 0``, also where ``e^(-gamma k)`` underflows.

    In the normal range it is the plain float product (so that SS equals LS exactly when k = 0
    wins).  Below it the value is evaluated with mpmath at 80 bits from the exact inputs and rounded
    to the nearest double, subnormals included (a plain product would return 0 for, e.g.,
    ``5e305 * e^-820 = 3.78e-51``).  A positive value below the smallest positive double is
    returned as that double, ``2^-1074``: an upper bound, where 0 would claim a constant query.
    """
    direct = v * math.exp(-gamma * k)
    if v == 0.0 or direct >= sys.float_info.min:
        return direct
    import mpmath  # deferred: only for a product below the smallest normal double

    with mpmath.workprec(80):
        exact = mpmath.mpf(v) * mpmath.exp(-mpmath.mpf(gamma) * k)
        m, e = mpmath.frexp(exact)  # exact = m 2^e, 1/2 <= m < 1
        if e < -1073:  # below half the smallest subnormal
            return math.ulp(0.0)
        # round m to the bits a double has at this exponent (53, fewer for subnormals), then scale
        bits = min(53, e + 1074)
        q = int(mpmath.nint(mpmath.ldexp(m, bits)))
        return max(math.ldexp(float(q), e - bits), math.ulp(0.0))


def _window_max(
    p: FloatArray,
    a: int,
    b: int,
    w: int,
    gamma: float,
    i_min: int = 0,
    j_max: int | None = None,
    den: float = 1.0,
) -> float:
    """The maximum above divided by ``den``, by vectorised divide and conquer in the log domain.

    The winning pair (i, j) is re-evaluated in the linear domain at the end so
    that, e.g., SS equals LS exactly when k = 0 wins; where ``e^(-gamma k)``
    underflows, :func:`_times_exp` keeps the value exact to the last bit.
    """
    n2 = p.size  # n + 2; valid j in [b, n+1], i in [0, a]
    rlo = np.array([b], dtype=np.int64)
    rhi = np.array([n2 - 1 if j_max is None else min(j_max, n2 - 1)], dtype=np.int64)
    clo = np.array([max(i_min, 0)], dtype=np.int64)
    chi = np.array([a], dtype=np.int64)
    best = -math.inf
    best_pair = (0, 0)
    while rlo.size:
        mid = (rlo + rhi) // 2
        lengths = chi - clo + 1
        starts = np.zeros(lengths.size, dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        total = int(lengths.sum())
        seg = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        offs = np.arange(total, dtype=np.int64) - starts[seg]
        col = clo[seg] + offs
        row = mid[seg]
        diff = p[row] - p[col]
        with np.errstate(divide="ignore"):
            vals = np.log(diff) - gamma * (row - col - w).astype(float)
        # the pair (i=a, j=b) has j - i = w - 1 < w: not a pair of A(k)
        vals[(row - col) < w] = -np.inf
        segmax = np.maximum.reduceat(vals, starts)
        top_seg = int(np.argmax(segmax))
        top = float(segmax[top_seg])
        if top > best:
            best = top
            at = starts[top_seg] + int(np.argmax(vals[starts[top_seg] : starts[top_seg] + lengths[top_seg]]))
            best_pair = (int(col[at]), int(row[at]))
        # largest arg-max in each segment (ties -> largest, which is monotone)
        pos = np.where(vals == segmax[seg], offs, -1)
        am = clo + np.maximum.reduceat(pos, starts)
        left = mid - 1 >= rlo
        right = mid + 1 <= rhi
        rlo, rhi, clo, chi = (
            np.concatenate([rlo[left], mid[right] + 1]),
            np.concatenate([mid[left] - 1, rhi[right]]),
            np.concatenate([clo[left], am[right]]),
            np.concatenate([am[left], chi[right]]),
        )
    if best == -math.inf:
        return 0.0
    i, j = best_pair
    return _times_exp(float(p[j] - p[i]) / den, gamma, j - i - w)


def _order_stat_A(p: FloatArray, a: int, b: int, w: int, k: int) -> float:
    """A(k) * denominator = max_{i <= a, j >= b, j - i = w + k} (p_j - p_i), clamped indices."""
    n1 = p.size - 1
    i = np.arange(a - (k + 1), a + 1)
    j = i + w + k
    keep = j >= b
    i, j = np.clip(i[keep], 0, n1), np.clip(j[keep], 0, n1)
    return float(np.max(p[j] - p[i]))


# --------------------------------------------------------------------------- #
# public API
# --------------------------------------------------------------------------- #
def evaluate_query(
    x: ArrayLike, query: str = "median", *, bounds: tuple[float, float] | None = None, trim: Trim = None
) -> float:
    """The (un-noised) query value on the clipped data, with the conventions above.

    Not private.  ``median`` is the lower median for even n.  Means are the
    correctly rounded sum (``math.fsum``) divided by the count, so the float
    value is within one ulp of ``max(|low|, |high|)`` of the exact mean, a
    data-independent allowance that :func:`~smoothdp_nb.core.release.smooth_sensitivity.release`
    adds to the sensitivity bound.
    """
    q = query_name(query)
    b = as_bounds(bounds)
    xs = _check_data(x, b)
    n = xs.size
    if q == "median":
        return float(xs[(n + 1) // 2 - 1])
    m = 0 if q == "mean" else _trim_count(n, trim)
    return math.fsum(xs[m : n - m].tolist()) / (n - 2 * m)


def local_sensitivity(
    x: ArrayLike, query: Query = "median", *, bounds: tuple[float, float] | None = None, trim: Trim = None
) -> float:
    """Local sensitivity LS_q(x) (lecture notes; Hladik-Tetek Definition 2).

    Parameters
    ----------
    x : array_like, 1-D
        The data; values outside ``bounds`` are clipped (with a warning).
    query : {"median", "trimmed_mean", "mean"} or callable
        A callable is taken to be ``A(k)`` and ``A(0)`` is returned.
    bounds : (low, high)
        Data-independent domain, ``low < high``.
    trim : int or float, optional
        For ``trimmed_mean``: records removed at each end (int) or fraction
        of n in [0, 0.5) (default 0.1).

    Returns
    -------
    float

    References
    ----------
    Hladik, Tetek. *Smooth Sensitivity Revisited: Towards Optimality* (Definition 2).
    Wang. *Lecture 14: Data-dependent DP algorithm design* (lecture notes).
    """
    if callable(query):
        return float(query(0))
    return sensitivity_at_distance(x, query, 0, bounds=bounds, trim=trim)


def sensitivity_at_distance(
    x: ArrayLike, query: str, k: int, *, bounds: tuple[float, float] | None = None, trim: Trim = None
) -> float:
    """``A(k) = max{LS_q(y) : d(x, y) <= k}`` for an order-statistic query (NRS formula)."""
    q = query_name(query)
    if isinstance(k, bool) or not isinstance(k, (Integral, np.integer)) or k < 0:
        raise ValueError(f"k must be an integer with k >= 0, got {k!r}")
    bnd = as_bounds(bounds)
    xs = _check_data(x, bnd)
    a, b, w, den = _window(xs.size, q, trim)
    return _order_stat_A(_padded(xs, bnd), a, b, w, int(k)) / den


def smooth_sensitivity(
    x: ArrayLike,
    query: Query = "median",
    gamma: float = 0.1,
    *,
    bounds: tuple[float, float] | None = None,
    trim: Trim = None,
    k_max: int | None = None,
    global_sensitivity: float | None = None,
) -> float:
    """gamma-smooth sensitivity ``SS = max_k e^{-k gamma} A(k)`` (NRS Definition 2.2).

    Parameters
    ----------
    x : array_like, 1-D
        The data (for a callable query only ``len(x)`` is used, as the default
        ``k_max``; ``x`` may then also be an int n).
    query : {"median", "trimmed_mean", "mean"} or callable
        Built-in queries use the exact O(n log n) algorithm of the module
        docstring.  A callable ``A(k)`` (int -> float, the largest local
        sensitivity over databases at distance <= k) is maximised over
        ``k = 0..k_max`` directly.
    gamma : float
        Smoothness, ``gamma > 0``.
    bounds : (low, high)
        Required for the built-in queries.
    trim : int or float, optional
        See :func:`local_sensitivity`.
    k_max : int, optional
        Callable path: largest distance considered (default n).
    global_sensitivity : float, optional
        Callable path: an upper bound on A(k) for all k; lets the search stop
        as soon as ``e^{-k gamma} * global_sensitivity`` cannot beat the best.

    Returns
    -------
    float
        The smooth sensitivity S*_{A,gamma}(x).

    References
    ----------
    Nissim, Raskhodnikova, Smith. *Smooth sensitivity and sampling in private data analysis*, STOC 2007.
    Wang. *Lecture 14: Data-dependent DP algorithm design* (lecture notes; Definition 2.2, quoting Nissim, Raskhodnikova, Smith).
    """
    g = as_positive(gamma, "gamma")
    if callable(query):
        if k_max is None:
            if isinstance(x, (Integral, np.integer)):
                k_max = int(x)
            else:
                k_max = len(cast(Sized, x))  # a sequence of records: n is its length
        if isinstance(k_max, bool) or not isinstance(k_max, (Integral, np.integer)) or k_max < 0:
            raise ValueError(f"k_max must be an integer with k_max >= 0, got {k_max!r}")
        best = 0.0
        for k in range(int(k_max) + 1):
            decay = math.exp(-g * k)
            if global_sensitivity is not None and decay * float(global_sensitivity) <= best:
                break
            ak = float(query(k))
            if math.isnan(ak) or ak < 0:
                raise ValueError(f"A(k) must return a number >= 0, got {ak!r} at k={k}")
            best = max(best, decay * ak)
        return best
    q = query_name(query)
    bnd = as_bounds(bounds)
    xs = _check_data(x, bnd)
    a, b, w, den = _window(xs.size, q, trim)
    p = _padded(xs, bnd)
    # Pruning (exact): every pair has value <= (high-low) e^{-gamma (j-i-w)} and
    # j - i - w = (j - b) + (a - i) - 1, so with a lower bound LB on SS (from a few
    # A(k)) pairs with a - i or j - b > K + 1, K = floor(ln((high-low)/LB)/gamma) + 1,
    # cannot win.
    span = bnd[1] - bnd[0]
    lb = 0.0
    k = 0
    while k <= xs.size:
        lb = max(lb, math.exp(-g * k) * _order_stat_A(p, a, b, w, k))
        k = 2 * k + 1
    if lb > 0.0:
        K = math.floor(math.log(span / lb) / g) + 1
        i_min, j_max = a - K - 1, b + K + 1
    else:
        i_min, j_max = 0, None
    return _window_max(p, a, b, w, g, i_min, j_max, den)


# --------------------------------------------------------------------------- #
# the geometric grid for the sensitivity bound of a release
# --------------------------------------------------------------------------- #
#: default grid: powers of 2^(1/64)
SENSITIVITY_GRID = 64


def sensitivity_grid(gamma: float) -> int:
    """Grid denominator D for smoothness ``gamma``: 64, or the power of two making ``ln 2 / D <= gamma / 2``.

    Rounding a gamma'-smooth bound up to the grid ``2^(j/D)`` costs ``ln 2 / D``
    of smoothness; the finer grid for small gamma keeps that cost at most half
    of gamma.  D depends on the public gamma only.
    """
    g = as_positive(gamma, "gamma")
    d = SENSITIVITY_GRID
    while math.log(2.0) / d > g / 2.0:
        d *= 2
    return d


def grid_value(j: int, denominator: int) -> float:
    """``G_j``: the double two ulps above ``fl(2^(j/D))``, so ``2^(j/D) <= G_j <= 2^(j/D) (1 + 2^-50)``.

    ``2 ** r`` for ``r`` in [0, 1) is within one ulp (libm pow); the scaling by
    ``2^floor(j/D)`` is exact for normal numbers.
    """
    q, r = divmod(int(j), int(denominator))
    frac = 2.0 ** (r / denominator)
    frac = math.nextafter(math.nextafter(frac, math.inf), math.inf)
    return math.ldexp(frac, q)


def round_up_to_grid(value: float, denominator: int) -> tuple[int, float]:
    """Smallest ``j`` with ``G_j >= value`` (``value > 0``), and ``G_j``.

    Since ``G_{j-1} < value``, ``2^(j/D) < 2^(1/D) value``: a beta-smooth upper
    bound rounded up this way is a ``(beta + ln 2 / D)``-smooth upper bound
    (for neighbours x ~ x': ``G(x) < 2^(1/D) S(x) <= 2^(1/D) e^beta S(x')
    <= 2^(1/D) e^beta G(x')``), plus the ``2^-50`` slack of :func:`grid_value`.
    """
    v = float(value)
    if not (0.0 < v < math.inf):
        raise ValueError(f"value must satisfy 0 < value < inf, got {value!r}")
    d = int(denominator)
    j = math.ceil(d * math.log2(v))
    while grid_value(j - 1, d) >= v:
        j -= 1
    while grid_value(j, d) < v:
        j += 1
    return j, grid_value(j, d)
