"""Shared parts of the data-dependent release methods: the lattice data, the exact samplers, the result types.

The data on the lattice
-----------------------
Every method of this folder releases an order statistic (the median or another quantile) of the
data **rounded to the output lattice**: each record is clipped to the public ``bounds``, rounded to
the nearest lattice point ``c h`` (half-way cases upwards, like the cells of :mod:`..lattice`) and
clamped to the lattice points inside the bounds, ``k_lo <= c <= k_hi``.  Rounding is applied to each
record on its own, so neighbouring databases (one record replaced) stay neighbours, and the query
``f(x) = c_(m) h`` is the ``m``-th order statistic of the rounded records, which is the rounded
``m``-th order statistic (rounding is monotone).  The outputs are the lattice cells ``k_lo .. k_hi``
(and, for the tests that may refuse, ``None`` for the refusal ⊥).

Exact sampling, work a function of the output
---------------------------------------------
The exponential and inverse-sensitivity mechanisms draw a cell from a law that is constant on
blocks of cells, with weight ``r^u`` for the integer utility loss ``u`` of the block and
``r = e^{-theta}``.  :func:`sample_blocked` bisects over the **public** index range
``[k_lo, k_hi]`` comparing a lazily refined uniform ``U`` with the cdf at the bisection point.
The cdf's numerator is the polynomial ``sum_u N_u r^u`` (``N_u`` the number of cells of loss ``u``
before the point, exact integers), evaluated at the ball ``r`` in Arb: a proven enclosure, so a
decided comparison is the exact truth, as in :mod:`..lattice`.  The boundaries visited are a
function of the released cell, so is the number of evaluations; each round is padded to a
deadline measured on a public worst case (a polynomial of degree ``n + 1``).
:func:`sample_bernoulli` draws the pass/refuse coin of the tests the same way.

References
----------
Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
Johansson, "Arb: efficient arbitrary-precision midpoint-radius interval arithmetic", IEEE Trans.
Computers 66 (2017).
"""

from __future__ import annotations

import abc
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pandas as pd
from flint import arb, arb_poly

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.ball_arithmetic import ARB_LOCK, working_precision
from smoothdp_nb.core.numerics.validation import as_float_array, position
from smoothdp_nb.core.release import timing as _timing
from smoothdp_nb.core.release.lattice import bit_source

__all__ = [
    "CellLaw",
    "LatticeData",
    "MethodOutcome",
    "ReleaseMethod",
    "laplace_cell_probabilities",
    "arb_evaluations",
    "as_blocks",
    "lattice_cells",
    "order_rank",
    "sample_bernoulli",
    "sample_blocked",
    "pass_probability",
    "pass_split",
]

_U_BITS0 = 192  # bits of U in the first round (as the lattice sampler)
_GUARD = 32  # working precision = bits of U + this + the bit length of n (the polynomial's terms)

_EVALS = [0]


def arb_evaluations() -> int:
    """Arb cdf / probability enclosures the methods' samplers have made in this process (for tests)."""
    return _EVALS[0]


def order_rank(n: int, query: str, quantile: float | None) -> int:
    """The rank ``m`` (1-based) of the order statistic: ``(n + 1) // 2`` for the median, ``ceil(p n)`` for quantile p.

    The median is the lower median for even n (the convention of :mod:`..sensitivity`); a quantile
    ``p`` is the smallest record with at least ``p n`` records at or below it (``ceil(p n)``,
    computed exactly, at least 1).
    """
    if query == "median":
        return (n + 1) // 2
    if quantile is None:
        raise ValueError("quantile is required for query='quantile': a number with 0 < quantile < 1")
    return min(n, max(1, math.ceil(Fraction(quantile) * n)))


@dataclass(frozen=True)
class LatticeData:
    """The data rounded to the lattice (private) with the public inputs of a release.

    Attributes
    ----------
    cells : numpy.ndarray of int64
        Sorted lattice indices of the records (private).
    rank : int
        ``m``: the released order statistic is ``cells[m - 1]``.
    step : float
        The lattice step ``h``.
    k_lo, k_hi : int
        The lattice points inside the bounds.
    """

    cells: IntArray
    rank: int
    step: float
    k_lo: int
    k_hi: int

    @property
    def n(self) -> int:
        return int(self.cells.size)

    @property
    def true_cell(self) -> int:
        return int(self.cells[self.rank - 1])


def lattice_cells(
    x: npt.ArrayLike, bounds: tuple[float, float], step: float, *, clip_infinite: bool = False
) -> tuple[IntArray, int, int]:
    """Records clipped to ``bounds``, rounded to the lattice (half-way up) and clamped: sorted int64 indices.

    Errors name a record's position, never its value (nor the side of the bounds it is on).
    """
    arr = as_float_array(x, "x").reshape(-1)
    if arr.size == 0:
        raise ValueError("x must be non-empty (n >= 1 records)")
    nan = np.flatnonzero(np.isnan(arr))
    if nan.size:
        raise ValueError(
            f"{position(int(nan[0]), 'x')} must be a number, got NaN (drop or impute missing values first)"
        )
    inf = np.flatnonzero(np.isinf(arr))
    if inf.size and not clip_infinite:
        raise ValueError(
            f"{position(int(inf[0]), 'x')} must be finite, got an infinite value (pass clip_infinite=True "
            "to clip infinite records to the bounds)"
        )
    low, high = bounds
    k_lo, k_hi = math.ceil(low / step), math.floor(high / step)
    t = np.clip(arr, low, high) / step  # exact: step is a power of two and no quotient underflows
    base = np.floor(t)
    up = (t - base) >= 0.5  # the fractional part of a double is exact
    cells = np.clip(base.astype(np.int64) + up.astype(np.int64), k_lo, k_hi)
    return np.sort(cells), k_lo, k_hi


# --------------------------------------------------------------------------- #
# laws
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class CellLaw:
    """The exact output law of a method on one dataset: probabilities of the lattice cells and of ⊥.

    Attributes
    ----------
    cells : numpy.ndarray of int64
        The lattice indices ``k_lo .. k_hi`` (all of them).
    probabilities : numpy.ndarray of float
        ``P(M(x) = k h)`` for each cell; for the exponential and inverse-sensitivity mechanisms each the
        double nearest an Arb enclosure whose radius is checked below a few ulps.
    refusal : float
        ``P(M(x) = ⊥)`` (0 for the methods that always release).
    step : float
        The lattice step.
    true_value : float
        ``f(x)`` on the lattice (data-dependent: for comparisons, never for a release).
    """

    cells: IntArray
    probabilities: FloatArray
    refusal: float
    step: float
    true_value: float

    @property
    def values(self) -> FloatArray:
        return np.asarray(self.cells, dtype=float) * self.step

    def to_series(self, name: str = "probability") -> pd.Series:
        """Probabilities indexed by the released value; the refusal as the entry ``"refused"`` when possible."""
        index: list[object] = list(self.values)
        probs = list(self.probabilities)
        if self.refusal > 0.0:
            index.append("refused")
            probs.append(self.refusal)
        s = pd.Series(probs, index=pd.Index(index, name="value"), name=name)
        return s


def blocks_law(
    starts: IntArray, losses: IntArray, theta: float, k_lo: int, k_hi: int, *, prec: int = 128
) -> FloatArray:
    """Probability of each block's cells for weights ``e^{-theta u}`` (Arb, per distinct loss), per block."""
    lens = np.diff(np.append(starts, k_hi + 1))
    u_max = int(losses.max())
    counts = np.zeros(u_max + 1, dtype=object)
    np.add.at(counts, losses, [int(v) for v in lens])
    with ARB_LOCK, working_precision(prec + int(u_max).bit_length()):
        r = (-arb(theta)).exp()
        z = arb_poly([int(c) for c in counts])(r)
        powers: dict[int, float] = {}
        for u in np.unique(losses).tolist():  # one enclosure per distinct loss
            p = r ** int(u) / z
            powers[int(u)] = float(p.mid())
    return np.array([powers[int(u)] for u in losses.tolist()])


def as_blocks(prepared: object) -> tuple[IntArray, IntArray]:
    """The (starts, losses) pair a block method's :meth:`ReleaseMethod.prepare` returned."""
    if not (isinstance(prepared, tuple) and len(prepared) == 2):
        raise TypeError("expected the (starts, losses) blocks of an exponential-type method")
    return np.asarray(prepared[0], dtype=np.int64), np.asarray(prepared[1], dtype=np.int64)


def expand_blocks(block_probs: FloatArray, starts: IntArray, k_hi: int) -> FloatArray:
    """Per-cell probabilities from per-block ones (each cell of a block has the block's probability)."""
    lens = np.diff(np.append(starts, k_hi + 1))
    return np.repeat(block_probs, lens)


# --------------------------------------------------------------------------- #
# exact samplers
# --------------------------------------------------------------------------- #
class _Uniform:
    """U in [m 2^-bits, (m + 1) 2^-bits), refined 64 bits at a time on demand."""

    def __init__(self, draw: Callable[[], int], bits: int) -> None:
        self._draw = draw
        self.m = 0
        self.bits = 0
        self.refine_to(bits)

    def refine_to(self, bits: int) -> None:
        while self.bits < bits:
            self.m = (self.m << 64) | self._draw()
            self.bits += 64

    def compare(self, f: arb) -> int:
        """+1 if certainly U >= f, -1 if certainly U < f, 0 if undecided."""
        if arb((self.m, -self.bits)) >= f:
            return 1
        if arb((self.m + 1, -self.bits)) <= f:
            return -1
        return 0


def _prefix_counts(starts: IntArray, ends: IntArray, losses: IntArray, k: int, size: int) -> list[int]:
    """``N_u``: the number of cells ``< k`` of loss ``u`` in the blocks ``[starts, ends)``, u = 0 .. size - 1 (exact)."""
    lens = np.clip(np.minimum(ends, k) - starts, 0, None)
    # bincount sums in doubles: split each length (< 2^55) into 28-bit halves so every sum is exact
    low = np.bincount(losses, weights=lens & (2**28 - 1), minlength=size)[:size]
    high = np.bincount(losses, weights=lens >> 28, minlength=size)[:size]
    return [int(h) * 2**28 + int(lo) for h, lo in zip(high.tolist(), low.tolist(), strict=True)]


def _weight_below(blocks: tuple[IntArray, IntArray, IntArray, int], k: int, r: arb, rest: arb) -> arb:
    """Ball of the total weight of the cells ``< k``: the polynomial of the kept blocks at ``r``, plus ``rest``."""
    starts, ends, losses, cut = blocks
    return arb_poly(_prefix_counts(starts, ends, losses, k, cut))(r) + rest


def _cut(theta: float, prec: int, size: int) -> int:
    """Losses from this one on are left out of the polynomial (at most ``size``).

    ``u >= U`` weighs ``e^{-theta u} <= 2^-(prec + 64)`` per cell, so the cells left out weigh less than
    ``2^55 2^-(prec + 64)`` in all, while the total weight is at least 1 (the cell of the true value has
    loss 0): the remainder is added to the sums as a ball of that radius, a proven enclosure still.
    """
    return min(size, math.ceil((prec + 64) * math.log(2.0) / theta) + 1)


@functools.lru_cache(maxsize=128)
def _eval_cost(n: int, prec: int, degree: int) -> float:
    """Time (s) of one cdf evaluation of the worst public case: a polynomial of the given degree over the most
    blocks of loss below it the data can have (each loss labels at most four blocks; at most 2n + 3 blocks)."""
    blocks = min(2 * n + 3, 4 * degree + 4)
    starts = np.arange(blocks, dtype=np.int64)
    losses = starts % degree if degree > 0 else np.zeros(blocks, dtype=np.int64)
    best = math.inf
    with ARB_LOCK, working_precision(prec):
        r = (-arb(0.5)).exp()
        for _ in range(3):
            t0 = time.perf_counter()
            poly = arb_poly(_prefix_counts(starts, starts + 1, losses, blocks - 1, max(degree, 1)))
            (poly(r) + arb(0, 1) * r**degree) / poly(r)
            best = min(best, time.perf_counter() - t0)
    return best


def sample_blocked(
    starts: IntArray,
    losses: IntArray,
    theta: float,
    k_lo: int,
    k_hi: int,
    n: int,
    gen: np.random.Generator | None,
) -> int:
    """Draw a cell exactly from ``P(k) ∝ e^{-theta u(k)}``, ``u`` constant on the blocks ``[starts[j], starts[j+1])``.

    Parameters
    ----------
    starts : int64 array
        First cell of each block, increasing, ``starts[0] = k_lo``.
    losses : int64 array
        The integer loss ``u >= 0`` of each block, at most ``n + 1``.
    theta : float
        ``> 0``: the weight of a cell is ``e^{-theta u}``.
    k_lo, k_hi : int
        The public index range.
    n : int
        The number of records (public): the deadline is that of 2n + 3 blocks and a loss polynomial of
        degree ``min(n + 1, U)``.
    gen : numpy.random.Generator or None
        Source of random bits; None draws them from OS entropy.

    Returns
    -------
    int

    Notes
    -----
    Bisection over ``[k_lo, k_hi]``: at ``mid`` the exact ``U >= P(K < mid)`` is decided when the Arb
    ball of ``S(mid) / S(k_hi + 1)`` (``S`` the loss polynomial at ``r = e^{-theta}``, its terms of loss
    ``>= U`` enclosed by a radius: :func:`_cut`, so the work does not grow with n) lies on one side
    of U's dyadic interval; otherwise the round is discarded and U gets twice the bits and the
    precision doubles (as :func:`..lattice.sample_cell`; a round fails with probability below
    ``2^56 (2^-192 + radius)``).  The bisection path, hence the number of evaluations, is a function of
    the result; each round is padded to a public deadline.
    """
    size = int(losses.max()) + 1
    ends = np.append(starts[1:], k_hi + 1)
    draw = bit_source(gen)
    u = _Uniform(draw, _U_BITS0)
    depth = (k_hi - k_lo).bit_length()
    cells = k_hi - k_lo + 1
    while True:
        prec = u.bits + _GUARD + n.bit_length() + 8
        cut = _cut(theta, prec, n + 2)  # public: n, epsilon and the round
        deadline = _timing.MARGIN * (depth + 1) * _eval_cost(n, prec, cut) + _timing.FLOOR
        start = time.perf_counter()
        got: int | None = None
        keep = losses < cut  # the blocks that enter the polynomial (each loss labels at most four)
        k_starts, k_ends, k_losses = starts[keep], ends[keep], losses[keep]
        with ARB_LOCK, working_precision(prec):
            r = (-arb(theta)).exp()
            rest = arb(0, 1) * cells * r**cut if cut < size else arb(0)  # the losses >= cut, bounded
            blocks = (k_starts, k_ends, k_losses, cut)
            z = _weight_below(blocks, k_hi + 1, r, rest)
            lo, hi = k_lo, k_hi
            decided = True
            while lo < hi:
                mid = (lo + hi + 1) // 2
                _EVALS[0] += 1
                c = u.compare(_weight_below(blocks, mid, r, rest) / z)
                if c > 0:
                    lo = mid
                elif c < 0:
                    hi = mid - 1
                else:
                    decided = False
                    break
            if decided:
                got = lo
        _timing.wait_until(start, deadline)
        if got is not None:
            return got
        u.refine_to(2 * u.bits)


def pass_probability(distance: int | None, epsilon_test: float, delta: float) -> Callable[[], arb]:
    """Ball of ``P(d + Lap(1/epsilon_test) > T)``, ``T = ln(1 / (2 delta)) / epsilon_test``, at the current precision.

    With ``t = delta e^{d epsilon_test}`` it is ``t`` for ``t <= 1/2`` and ``1 - 1/(4t)`` beyond (the
    Laplace tail); ``distance=None`` (no unsafe database within reach) passes with probability 1.
    At ``d = 0`` it is ``delta``: the refusal test's failure probability.
    """

    def ball() -> arb:
        if distance is None:
            return arb(1)
        t = arb(delta) * (arb(epsilon_test) * distance).exp()
        if t <= arb(0.5):
            return t
        if t > arb(0.5):
            return 1 - 1 / (4 * t)
        return t.union(1 - 1 / (4 * t))  # straddles 1/2: both branches agree there, the union is proven

    return ball


def pass_split(distance: int | None, epsilon_test: float, delta: float) -> tuple[float, float]:
    """(pass, refusal) probabilities of :func:`pass_probability`'s test as floats (midpoints of
    128-bit balls): the law a test-then-release method reports, never its sampler."""
    with ARB_LOCK, working_precision(128):
        passing = pass_probability(distance, epsilon_test, delta)()
        return float(passing.mid()), float((1 - passing).mid())


def sample_bernoulli(probability: Callable[[], arb], gen: np.random.Generator | None) -> bool:
    """True with exactly the probability whose Arb ball ``probability()`` encloses (U < p, decided with proof).

    One evaluation per round at precision ``bits + 32``; the round is padded to a fixed public deadline.
    """
    u = _Uniform(bit_source(gen), _U_BITS0)
    while True:
        start = time.perf_counter()
        with ARB_LOCK, working_precision(u.bits + _GUARD):
            _EVALS[0] += 1
            c = u.compare(probability())
        _timing.wait_until(start, _timing.FLOOR)
        if c != 0:
            return c < 0
        u.refine_to(2 * u.bits)


# --------------------------------------------------------------------------- #
# the release
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class MethodOutcome:
    """What a method's run produced, before :func:`~..smooth_sensitivity.release` wraps it in its result.

    Attributes
    ----------
    value : float or None
        The released lattice value, None for the refusal ⊥.
    method, guarantee : str
    query : str
    quantile, proposal : float or None
    n : int
    lattice : float
    bounds : (low, high)
    epsilon : float
    delta : float or None
    true_value : float or None
        Only when asked for (``reveal_true``).
    """

    value: float | None
    method: str
    guarantee: str
    query: str
    quantile: float | None
    proposal: float | None
    n: int
    lattice: float
    bounds: tuple[float, float]
    epsilon: float
    delta: float | None
    true_value: float | None = field(default=None, repr=False, compare=False)


# --------------------------------------------------------------------------- #
# the method protocol
# --------------------------------------------------------------------------- #
class ReleaseMethod(abc.ABC):
    """A data-dependent release method: its guarantee, its exact law on a dataset, its exact sampler.

    Subclasses set ``name``, ``label``, ``needs_delta`` (an (epsilon, delta) guarantee),
    and implement :meth:`guarantee`, :meth:`prepare` (the data-dependent part,
    whose time the driver pads), :meth:`law` and :meth:`sample` (the output, ``None`` for ⊥).
    """

    name: str = ""
    label: str = ""
    needs_delta: bool = False
    uses_proposal: bool = False

    @abc.abstractmethod
    def guarantee(self, epsilon: float, delta: float | None) -> str: ...  # abstract: each method gives its own

    @abc.abstractmethod
    def prepare(self, data: LatticeData, epsilon: float, delta: float | None, proposal: float | None) -> object:
        """The data-dependent quantities the law and the sampler need (blocks, a distance)."""
        ...  # abstract: each method gives its own

    @abc.abstractmethod
    def law(
        self, data: LatticeData, prepared: object, epsilon: float, delta: float | None, proposal: float | None
    ) -> CellLaw: ...  # abstract: each method gives its own

    @abc.abstractmethod
    def sample(
        self,
        data: LatticeData,
        prepared: object,
        epsilon: float,
        delta: float | None,
        proposal: float | None,
        gen: np.random.Generator | None,
    ) -> int | None: ...  # abstract: each method gives its own


class BlockedExponential(ReleaseMethod, abc.ABC):
    """An exponential mechanism whose losses are constant on blocks of lattice cells: the law is
    ``P(k) proportional to exp(-theta * loss(k))``, listed by :func:`blocks_law` and drawn exactly by
    :func:`sample_blocked`.  Subclasses give the blocks (:meth:`blocks`, data-dependent) and the
    rate (:meth:`theta`); the exponential mechanism and the inverse sensitivity mechanism differ
    only there.
    """

    @abc.abstractmethod
    def blocks(self, data: LatticeData) -> tuple[IntArray, IntArray]:
        """Block starts and each block's integer loss (the utility's distance from its best)."""
        ...  # abstract: each method gives its own

    @abc.abstractmethod
    def theta(self, data: LatticeData, epsilon: float) -> float:
        """The rate of the exponential weights, from public quantities only."""
        ...  # abstract: each method gives its own

    def prepare(
        self, data: LatticeData, epsilon: float, delta: float | None, proposal: float | None
    ) -> tuple[IntArray, IntArray]:
        return self.blocks(data)

    def law(
        self, data: LatticeData, prepared: object, epsilon: float, delta: float | None, proposal: float | None
    ) -> CellLaw:
        starts, losses = as_blocks(prepared)
        probs = blocks_law(starts, losses, self.theta(data, epsilon), data.k_lo, data.k_hi)
        cells = np.arange(data.k_lo, data.k_hi + 1, dtype=np.int64)
        return CellLaw(cells, expand_blocks(probs, starts, data.k_hi), 0.0, data.step, data.true_cell * data.step)

    def sample(
        self,
        data: LatticeData,
        prepared: object,
        epsilon: float,
        delta: float | None,
        proposal: float | None,
        gen: np.random.Generator | None,
    ) -> int | None:
        starts, losses = as_blocks(prepared)
        return sample_blocked(starts, losses, self.theta(data, epsilon), data.k_lo, data.k_hi, data.n, gen)


def laplace_cell_probabilities(true_value: float, scale: float, step: float, k_lo: int, k_hi: int) -> FloatArray:
    """``P(K = k)`` for ``K = clamp(round((true + scale Z) / step))``, Z standard Laplace, every k (floats).

    Each cell is written without cancellation: a cell above the true value has probability
    ``e^{-a} (1 - e^{-h/s}) / 2`` (``a`` its lower boundary in noise units), one below the mirror
    image, the cell holding the true value ``(-expm1(a) - expm1(-b)) / 2``, the two clamp cells their
    tails; relative error a few ulps (tests compare with mpmath at 50 digits).
    """
    k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
    centre = (k.astype(float) * step - true_value) / scale
    half = 0.5 * step / scale
    a, b = centre - half, centre + half
    width = -math.expm1(-step / scale)
    above = np.exp(-np.maximum(a, 0.0)) * width / 2
    below = np.exp(np.minimum(b, 0.0)) * width / 2
    inside = (-np.expm1(np.minimum(a, 0.0)) - np.expm1(-np.maximum(b, 0.0))) / 2
    p = np.where(a >= 0, above, np.where(b <= 0, below, inside))

    # clamp cells: everything below the first upper boundary, above the last lower boundary
    def cdf(z: float) -> float:
        return math.exp(z) / 2 if z < 0 else 1 - math.exp(-z) / 2

    def sf(z: float) -> float:
        return math.exp(-z) / 2 if z >= 0 else 1 - math.exp(z) / 2

    if k.size == 1:
        p[0] = 1.0
    else:
        p[0] = cdf(float(b[0]))
        p[-1] = sf(float(a[-1]))
    return np.asarray(p, dtype=float)
