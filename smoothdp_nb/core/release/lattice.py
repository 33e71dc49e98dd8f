"""Exact sampling of a noisy release on a power-of-two lattice, with proven enclosures.

Why a lattice
-------------
Mironov (2012, "On significance of the least significant bits for
differential privacy") showed that ``true + s * Z`` computed in floating point
is not private: the set of doubles one database can produce differs from its
neighbour's, so a single output can rule a database out.  Here the output is
``k * lattice`` where the integer ``k`` has **exactly** the law of
``round((true + s * Z) / lattice)`` for the continuous noise ``Z``, clamped to
the lattice points inside the bounds.  Rounding and clamping are
post-processing of the continuous release, so the family's guarantee carries
over to every bit of the output.

How ``k`` is drawn exactly
--------------------------
``k`` is the cell of a uniform ``U`` among the values of the noise cdf ``F`` at
the cell boundaries ``a_j = ((j - 1/2) lattice - true) / s``: ``k`` is chosen
iff ``F(a_k) <= U < F(a_{k+1})`` (``F(a_{k_lo}) = 0`` and ``F(a_{k_hi+1}) = 1``
for the clamp cells).  ``U`` is never rounded: its bits are drawn lazily (from
the numpy Generator, or from OS entropy), so only the dyadic interval
``[m 2^-b, (m + 1) 2^-b)`` holding ``U`` is known.

Every ``F(a_j)`` is a **ball** computed with Arb (python-flint): interval
arithmetic with outward rounding, whose result provably contains the exact
value whatever the working precision (Johansson, "Arb: efficient
arbitrary-precision midpoint-radius interval arithmetic", IEEE Trans.
Computers 66, 2017).  The boundary ``a_j`` enters as an exact dyadic numerator
(integer arithmetic on the doubles ``true`` and ``lattice``) divided by the
double ``s`` in ball arithmetic.  A comparison ``U >= F(a_j)`` is *decided*
only when the ball lies entirely on one side of ``U``'s dyadic interval
(``m 2^-b >= sup F`` or ``(m + 1) 2^-b <= inf F``), so a decided comparison
is the exact truth: no accuracy model is assumed anywhere.

Termination.  A round uses ``b`` bits of ``U`` and working precision
``b + 32``.  If any comparison of the round is undecided, the round is
discarded, ``U`` gets ``b`` more bits (``b`` doubles, from 192) and the
precision doubles.  A comparison with a real number ``F`` is undecided only if
``U`` lies within ``2^-b`` plus the ball's radius of ``F``; both shrink to 0
as the rounds go on, and ``U != F`` with probability 1 (``U`` is uniform and
independent of ``F``), so the loop ends with probability 1.  An exact tie in
the arithmetic sense (``F`` a dyadic rational with few bits, e.g. ``F = 1/2``
at ``a_j = 0``) is handled explicitly: ``a_j = 0`` is detected on the exact
numerator and gives the exact ball ``1/2``, which a dyadic ``U`` interval
never straddles.  Whatever path the search takes, an undecided comparison
needs ``U`` within ``2^-b + radius`` of one of the at most ``2^55 + 1``
boundary values ``F(a_j)``, so a round fails with probability below
``2^56 (2^-192 + 2^-196) < 2^-135`` (and below ``2^-130`` for the normal
quantile of Laplace-log-normal, see :func:`_mixture_factor`): the expected
number of rounds is ``1 + 2^-129``.  The radius ``2^-196 = 2^-(b + 4)`` is
what Arb delivers at precision ``b + 32`` (tests/core/test_lattice.py checks it
for every family at points across its parameter range); a wider ball could only make a
second round likelier, never a decided comparison wrong.

Lattices.  :func:`lattice_range` allows steps down to ``ulp(max(|low|,
|high|))``, so the clamp range has at most ``2^54 + 1`` cells and the search below
takes at most 55 comparisons: every allowed lattice is sampled in bounded
expected time, and a finer step is refused up front by :func:`check_lattice`
(the same ValueError for every database).

Work depends only on the output
-------------------------------
The cell is located by **bisection over the public index range**
``[k_lo, k_hi]`` (``mid = (lo + hi + 1) // 2``), so the sequence of
boundaries compared is a function of the output ``k`` alone, and so is the
number of cdf evaluations; the precision schedule (``b = 192 * 2^r`` bits,
precision ``b + 32`` in round ``r``) is fixed in advance.  A search started from
a float candidate cell would walk a distance that grows with
``|value - true|`` and be a timing side channel.  What remains, and why it is
safe to state:

* A second round happens with probability below ``2^-129`` per release, for
  every database alike; a stopwatch sees at most this event.
* The *arguments* of the evaluations depend on the data (through ``true``
  and ``s``), and Arb's time per evaluation varies with its argument
  (series lengths): the number of evaluations is fixed by the output, their
  duration is not.  Measured at 224 bits over arguments ``1e-6 .. 1e8``
  (2026-11-25, loaded machine): Laplace 1-2 us, PolyPlace(10) 3-10 us,
  Cauchy (c = 4, 12) and Student's t (d = 3, 11; the default shapes are
  d < 11) 9 us median, up to about 0.1 ms; Student's t with a user-chosen
  d = 1000 up to 16 ms for arguments 13-18 (Arb's incomplete beta deep in a
  moderately far tail).  A curator who publishes timings should pad each
  release to a fixed duration.
* The smooth sensitivity itself is computed before sampling, in time that
  depends on ``n`` and, for degenerate data, on the data (see
  :mod:`.sensitivity`).

:func:`cdf_evaluations` exposes the running count (for tests).

The cdfs, as tails ``T(a) = P(Z > a)`` for ``a > 0`` (all five families are
symmetric, ``F(-a) = T(a)``), each written so that nothing cancels; each is
the family's :meth:`~.noise.base.NoiseFamily.tail_enclosure`, in the family's
module of :mod:`.noise` (a registered family brings its own):

* Laplace: ``T(a) = e^{-a} / 2``.
* PolyPlace(1, alpha) (Hladik-Tetek Definition 6; antiderivatives of the
  proof of Lemma 7): ``1/2 + (alpha - 1) expm1(alpha log1p(-a)) / (2K)`` for
  ``a < 1/alpha`` and ``(alpha + 1)(1 - 1/alpha^2)^alpha (1 + a)^-alpha / (2K)``
  beyond, ``K = 2((alpha - 1)/alpha)^alpha + alpha - 1``; a ball straddling
  ``1/alpha`` is enclosed by the two branches at its exact endpoints (T is
  decreasing).
* Student's t(d): ``T(a) = I_w(d/2, 1/2) / 2``, ``w = d / (d + a^2)``, for
  ``a >= 1``; for ``a < 1`` the complement ``1/2 - I_v(1/2, d/2) / 2`` with
  ``v = a^2 / (d + a^2)``, where ``I_v <= P(t^2 < 1) < 0.7`` so nothing
  cancels at any d (``v`` and ``w`` are formed separately, never as ``1 - w``).
* Generalised Cauchy(c), density proportional to ``1/(1 + |x|^c)``:
  ``T(a) = I_w(1 - 1/c, 1/c) / 2``, ``w = e^{-L} / (1 + e^{-L})``,
  ``L = c log a``, for ``a >= 1`` (substituting ``u = 1/(1 + x^c)`` turns the
  tail integral into a beta integral); for ``a < 1`` the complement
  ``1/2 - I_v(1/c, 1 - 1/c) / 2``, ``v = e^L / (1 + e^L)``.
* ``I`` is Arb's regularised incomplete beta (``arb.beta_lower``), the normal
  cdf ``Phi(y) = erfc(-y / sqrt 2) / 2`` (``arb.erfc``).
* Laplace-log-normal(sigma) has no closed-form cdf; it is sampled through its
  mixture representation ``Z = X e^{sigma Y}`` (X standard Laplace, Y standard
  normal): a second lazily drawn uniform ``V`` gives ``Y = Phi^{-1}(V)``,
  enclosed by a bisection of **fixed depth** ``D`` over a dyadic grid of
  ``[-16 * 2^r, 16 * 2^r]`` (each step one proven comparison of ``V`` with
  ``Phi`` at a grid point; the depth depends on the round and sigma only, so
  this part of the work is the same for every draw).  Given ``Y`` in a grid
  cell ``[y_j, y_{j+1}]``, the cell condition is a Laplace-cdf comparison of
  ``U`` at the boundaries times ``e^{-sigma Y}``, enclosed over the whole
  cell by ball arithmetic (``|d/dY F(a e^{-sigma Y})| <= sigma / (2e)``, and
  the grid step is chosen so that this spread is below ``2^-(b + 4)``).  If
  ``V`` falls in one of the two unbounded end cells (probability below
  ``2^-180``) the round is undecided.  The pair (U, V) then falls in the
  chosen cell exactly with the probability ``P(k)``: the quantile is never
  estimated in floating point, so nothing can overflow.

Thread safety: Arb's working precision is a process-wide setting; the sampler
holds the lock of :func:`.ball_arithmetic.working_precision` for the whole draw.  Another
thread changing it concurrently could only widen or narrow balls, never make
one wrong.

References
----------
Hladik and Tetek, "Smooth Sensitivity Revisited: Towards Optimality": Definition 6 and Lemma 7 (PolyPlace).
Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012.  Johansson, "Arb: efficient arbitrary-precision
midpoint-radius interval arithmetic", IEEE Trans. Computers 66 (2017).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from fractions import Fraction
from typing import TypeAlias

import numpy as np
from flint import arb, ctx

from smoothdp_nb.core.numerics.ball_arithmetic import ARB_LOCK, working_precision
from smoothdp_nb.core.release.noise.registry import get_family

__all__ = [
    "cdf_evaluations",
    "cell_probability",
    "check_lattice",
    "default_lattice",
    "lattice_range",
    "sample_cell",
]

#: default lattice step: this many halvings below the largest power of two <= high - low
DEFAULT_LATTICE_BITS = 20

#: most cells an allowed lattice can give (lattice >= ulp(max(|low|, |high|))): bisection depth <= 55
MAX_CELLS_LOG2 = 55

_U_BITS0 = 192  # bits of U in the first round
_GUARD = 32  # working precision = bits of the uniform compared + this
_MARGIN = 136  # V has this many bits more than the depth of the Y grid
_Y_EXP0 = 4  # Laplace-log-normal: Y grid spans [-2^(4 + r), 2^(4 + r)] in round r

_Tail: TypeAlias = Callable[[arb, float], arb]  # P(Z > a) for a ball a > 0

_EVALS = [0]  # cdf enclosures computed so far (see cdf_evaluations)


def cdf_evaluations() -> int:
    """Number of cdf enclosures the sampler has computed in this process (for timing tests).

    One per comparison of ``U`` (or ``V``) with a cdf value; the difference
    before and after a release is its work.
    """
    return _EVALS[0]


_precision = working_precision


# --------------------------------------------------------------------------- #
# the lattice
# --------------------------------------------------------------------------- #
def _width_exponent(low: float, high: float) -> int:
    """floor(log2(high - low)), exactly (rational arithmetic: no rounding, no overflow)."""
    width = Fraction(high) - Fraction(low)
    e = width.numerator.bit_length() - width.denominator.bit_length()
    while Fraction(2) ** e > width:
        e -= 1
    while Fraction(2) ** (e + 1) <= width:
        e += 1
    return e


def lattice_range(bounds: tuple[float, float]) -> tuple[float, float]:
    """Smallest and largest admissible lattice step for ``bounds``.

    Smallest: ``ulp(max(|low|, |high|))`` (at least ``2^-1022``), so that every
    lattice point in the bounds is a double and ``k * lattice`` is exact, and
    the bounds hold at most ``2^54 + 1`` lattice points (``high - low <=
    2 max(|low|, |high|) < 2^54 ulp``): the sampler's bisection then takes at
    most 55 comparisons.  Largest: the power of two at most ``high - low``
    (at least one lattice point in the bounds).
    """
    low, high = bounds
    big = max(abs(low), abs(high))
    smallest = math.ulp(big) if big > 0 else math.ulp(0.0)
    smallest = max(smallest, 2.0**-1022)  # normal numbers only
    return smallest, math.ldexp(1.0, _width_exponent(low, high))


def default_lattice(bounds: tuple[float, float]) -> float:
    """``2^(floor(log2(high - low)) - 20)``, raised to :func:`lattice_range`'s minimum.

    About a millionth of the data range: far below any useful noise level, yet
    a function of the public bounds only.
    """
    smallest, largest = lattice_range(bounds)
    step = math.ldexp(largest, -DEFAULT_LATTICE_BITS)
    return max(step, smallest)


def check_lattice(lattice: object, bounds: tuple[float, float]) -> float:
    """Validate a user lattice step: a power of two within :func:`lattice_range`.

    The check uses the public bounds only, so a step too fine to sample is
    refused before any data is read, the same way for every database.
    """
    smallest, largest = lattice_range(bounds)
    allowed = f"a power of two with {smallest:.6g} <= lattice <= {largest:.6g} for bounds {bounds}"
    if isinstance(lattice, bool) or not isinstance(lattice, (int, float, np.integer, np.floating)):
        raise TypeError(f"lattice must be {allowed}, got {type(lattice).__name__}")
    v = float(lattice)
    if not (math.isfinite(v) and v > 0 and math.frexp(v)[0] == 0.5):
        raise ValueError(f"lattice must be {allowed}, got {lattice!r}")
    if not (smallest <= v <= largest):
        raise ValueError(f"lattice must be {allowed}, got {lattice!r}")
    return v


# --------------------------------------------------------------------------- #
# random bits and the lazily refined uniform
# --------------------------------------------------------------------------- #
def bit_source(gen: np.random.Generator | None) -> Callable[[], int]:
    """64 fresh random bits per call: from ``gen``, or from OS entropy when ``gen`` is None."""
    if gen is None:
        return lambda: secrets.randbits(64)
    return lambda: int(gen.integers(0, 2**64, dtype=np.uint64))


class _LazyUniform:
    """U in [m / 2^bits, (m + 1) / 2^bits); more bits on demand (64 at a time)."""

    __slots__ = ("_draw", "_hi", "_lo", "bits", "m")

    def __init__(self, draw: Callable[[], int], bits: int) -> None:
        self._draw = draw
        self.m = 0
        self.bits = 0
        self.refine_to(bits)

    def refine_to(self, bits: int) -> None:
        while self.bits < bits:
            self.m = (self.m << 64) | self._draw()
            self.bits += 64
        self._lo = arb((self.m, -self.bits))  # exact dyadics (an arb from (mantissa, exponent) is exact)
        self._hi = arb((self.m + 1, -self.bits))

    def compare(self, f: arb) -> int:
        """+1 if certainly U >= f, -1 if certainly U < f, 0 if undecided (the ball meets U's interval)."""
        _EVALS[0] += 1
        if self._lo >= f:  # U >= U_lo >= every point of the ball
            return 1
        if self._hi <= f:  # U < U_hi <= every point of the ball
            return -1
        return 0


# --------------------------------------------------------------------------- #
# cdf enclosures (the tails are the families': NoiseFamily.tail_enclosure)
# --------------------------------------------------------------------------- #
def _cdf(tail: _Tail, shape: float, a: arb, sign: int) -> arb:
    """Ball containing F(a) for a ball ``a`` of the given exact sign (F(-a) = T(a))."""
    if sign == 0:
        return arb(0.5)
    return tail(-a, shape) if sign < 0 else 1 - tail(a, shape)


def _normal_cdf(y: arb, inv_sqrt2: arb | None = None) -> arb:
    """``Phi(y) = erfc(-y / sqrt 2) / 2`` (``inv_sqrt2``: a ball of ``1/sqrt 2``, to reuse)."""
    if inv_sqrt2 is None:
        inv_sqrt2 = arb(2).rsqrt()
    return (-y * inv_sqrt2).erfc() / 2


def _required_shape(family: str, shape: float | None) -> float:
    """The shape parameter of a family that has one (its alpha, d, c or sigma)."""
    if shape is None:
        raise ValueError(f"shape is required for family {family!r} (its alpha, d, c or sigma), got None")
    return shape


# --------------------------------------------------------------------------- #
# the sampler
# --------------------------------------------------------------------------- #
class _Problem:
    """One release: true value, noise scale, lattice, clamp range, family.

    The cell boundaries are ``a_j = N_j 2^e / s`` with the integer
    ``N_j = (2j - 1) A - B`` (``lattice / 2 = A 2^e``, ``true = B 2^e``), so
    their sign, and ``a_j = 0``, are known exactly.
    """

    def __init__(
        self, family: str, shape: float | None, true: float, scale: float, lattice: float, k_lo: int, k_hi: int
    ) -> None:
        self.noise = get_family(family)
        self.family = self.noise.name
        self.shape = 0.0 if self.noise.shape_name is None else _required_shape(self.family, shape)
        self.tail: _Tail = self.noise.tail_enclosure
        for name, v in (("true", true), ("scale", scale), ("lattice", lattice)):
            if not math.isfinite(v):
                raise ValueError(f"{name} must be finite, got {v!r}")
        if not (scale > 0 and lattice > 0):
            raise ValueError(f"scale and lattice must be > 0, got scale={scale!r}, lattice={lattice!r}")
        if not k_lo <= k_hi:
            raise ValueError(f"need k_lo <= k_hi, got {k_lo} > {k_hi}")
        if (k_hi - k_lo + 1).bit_length() > MAX_CELLS_LOG2:
            raise ValueError(
                f"lattice too fine: more than 2^{MAX_CELLS_LOG2} lattice points in the bounds "
                f"(a lattice must be at least ulp(max(|low|, |high|)))"
            )
        self.scale = arb(scale)  # a double: exact
        self.k_lo, self.k_hi = k_lo, k_hi
        half, t = Fraction(lattice) / 2, Fraction(true)
        den = max(half.denominator, t.denominator)  # both powers of two
        self.A = half.numerator * (den // half.denominator)
        self.B = t.numerator * (den // t.denominator)
        self.e = -(den.bit_length() - 1)

    def boundary(self, j: int) -> tuple[arb, int]:
        """Ball of ``a_j`` and its exact sign."""
        n = (2 * j - 1) * self.A - self.B
        sign = (n > 0) - (n < 0)
        return arb((n, self.e)) / self.scale, sign

    def bisect(self, u: _LazyUniform, factor: arb | None = None) -> int | None:
        """The cell of ``U`` by bisection over ``[k_lo, k_hi]`` (None if a comparison is undecided).

        Invariant: ``U >= F(a_lo)`` (or ``lo = k_lo``) and ``U < F(a_{hi+1})`` (or
        ``hi = k_hi``).  The boundaries visited are a function of the result.
        ``factor`` (Laplace-log-normal) is a ball of ``e^{-sigma Y}``.
        """
        lo, hi = self.k_lo, self.k_hi
        while lo < hi:
            mid = (lo + hi + 1) // 2  # the boundary between cells mid - 1 and mid
            a, sign = self.boundary(mid)
            if factor is not None:
                a = a * factor
            c = u.compare(_cdf(self.tail, self.shape, a, sign))
            if c > 0:
                lo = mid
            elif c < 0:
                hi = mid - 1
            else:
                return None
        return lo


def sample_cell(
    family: str,
    shape: float | None,
    true: float,
    scale: float,
    lattice: float,
    k_lo: int,
    k_hi: int,
    gen: np.random.Generator | None,
) -> int:
    """Draw ``k`` exactly from the law of ``clamp(round((true + scale * Z) / lattice), k_lo, k_hi)``.

    Parameters
    ----------
    family, shape : str, float or None
        The standardised noise Z (see the module docstring).
    true, scale, lattice : float
        Doubles, used exactly.  ``scale > 0``.
    k_lo, k_hi : int
        Clamp range (the lattice points inside the bounds), at most ``2^55`` cells.
    gen : numpy.random.Generator or None
        Source of random bits; None draws them from OS entropy.

    Returns
    -------
    int

    Notes
    -----
    Rounds ``r = 0, 1, ...`` use ``192 * 2^r`` bits of ``U`` and precision
    ``192 * 2^r + 32``; a round returns only when all its comparisons are
    decided (proven), else the next round starts afresh (see the module
    docstring for the termination argument and the work per release).

    References
    ----------
    Mironov, "On significance of the least significant bits for differential
    privacy", CCS 2012.  Johansson, "Arb: efficient arbitrary-precision
    midpoint-radius interval arithmetic", IEEE Trans. Computers 66 (2017).
    """
    prob = _Problem(family, shape, true, scale, lattice, k_lo, k_hi)
    draw = bit_source(gen)
    u = _LazyUniform(draw, _U_BITS0)
    mixture = prob.noise.log_normal_mixture
    v = _LazyUniform(draw, _v_bits(prob.shape, 0, u.bits)) if mixture else None
    r = 0
    with ARB_LOCK:
        while True:
            got: int | None = None
            factor: arb | None = None
            if v is not None:
                with _precision(v.bits + _GUARD):
                    factor = _mixture_factor(prob.shape, v, r, u.bits)
            if v is None or factor is not None:
                with _precision(u.bits + _GUARD):
                    got = prob.bisect(u, factor)
            if got is not None:
                return got
            r += 1
            u.refine_to(2 * u.bits)
            if v is not None:
                v.refine_to(max(2 * v.bits, _v_bits(prob.shape, r, u.bits)))


def _y_depth(sigma: float, r: int, u_bits: int) -> int:
    """Depth D of the Y grid in round r: ``sigma h / (2e) <= 2^-(u_bits + 4)`` for its step h."""
    extra = max(0, math.ceil(math.log2(sigma))) if sigma > 1 else 0
    return _Y_EXP0 + r + 5 + u_bits + extra


def _v_bits(sigma: float, r: int, u_bits: int) -> int:
    """Bits of V in round r: ``D + 136``, rounded up to 64 (so ``2^(D+1) 2^-bits < 2^-135``)."""
    need = _y_depth(sigma, r, u_bits) + _MARGIN
    return -(-need // 64) * 64


def _mixture_factor(sigma: float, v: _LazyUniform, r: int, u_bits: int) -> arb | None:
    """Ball of ``e^{-sigma Y}``, ``Y = Phi^{-1}(V)``, by a bisection of fixed depth (None if undecided).

    The grid ``y_j = -2^E + j h``, ``h = 2^(E + 1 - D)``, ``E = 4 + r``, has
    ``2^D - 1`` interior points and ``2^D`` cells; bisection over the cells
    takes exactly ``D`` comparisons of ``V`` with ``Phi(y_j)`` whatever ``V``
    is.  ``D = E + 5 + b + max(0, ceil(log2 sigma))`` (``b`` bits of U) makes
    ``sigma h / (2e) <= 2^-(b + 4)``, the spread of ``F(a e^{-sigma Y})`` over a
    cell.  Step ``t`` compares V with one of the ``2^(t-1)`` grid values
    of that depth; it is undecided only if V lies within ``2^-bits`` plus the
    ball's radius of it.  With ``bits >= D + 136`` and precision
    ``min(t + 172, bits + 32)`` at step ``t`` (a fixed schedule; radius about
    ``2^-(t + 172)``) the sum over the steps is below ``2^-130``.
    The two end cells are unbounded: the round is then undecided too.
    """
    E = _Y_EXP0 + r
    D = _y_depth(sigma, r, u_bits)
    lo, hi = 0, (1 << D) - 1
    decided = True
    top = ctx.prec  # the caller holds the precision lock (working_precision) for the whole draw
    inv_sqrt2 = arb(2).rsqrt()
    for step in range(1, D + 1):  # exactly D steps: the cells are a power of two
        # step t compares V with one of 2^(t-1) grid values: radius about 2^-(t + 172) keeps the union small
        ctx.prec = min(step + 172, top)
        mid = (lo + hi + 1) // 2
        # y_mid = -2^E + mid 2^(E + 1 - D) = (mid - 2^(D - 1)) 2^(E + 1 - D), exact
        c = v.compare(_normal_cdf(arb((mid - (1 << (D - 1)), E + 1 - D)), inv_sqrt2))
        if c > 0:
            lo = mid
        elif c < 0:
            hi = mid - 1
        else:  # keep the depth fixed: finish the descent, then report the round undecided
            decided = False
            lo = mid
    ctx.prec = top
    if not decided or lo == 0 or lo == (1 << D) - 1:
        return None
    y_lo = arb((lo - (1 << (D - 1)), E + 1 - D))
    y_hi = arb((lo + 1 - (1 << (D - 1)), E + 1 - D))
    return (-arb(sigma) * y_lo.union(y_hi)).exp()


# --------------------------------------------------------------------------- #
# exact cell probabilities (for tests and audits)
# --------------------------------------------------------------------------- #
def cell_probability(
    family: str,
    shape: float | None,
    true: float,
    scale: float,
    lattice: float,
    k: int,
    k_lo: int,
    k_hi: int,
    prec: int = 200,
) -> arb:
    """``P(K = k)`` for the clamped lattice law, as an Arb ball (a proven enclosure) at ``prec`` bits.

    Each family's :meth:`~.noise.base.NoiseFamily.cdf_enclosure`: the closed-form
    families use the sampler's tails; Laplace-log-normal the mixture
    ``F(a) = 1 - J(a) / 2`` (``a > 0``), ``J(|a|) / 2`` (``a < 0``) with
    :func:`.noise.laplace_log_normal.mixture_integral`.
    """
    prob = _Problem(family, shape, true, scale, lattice, k_lo, k_hi)
    with ARB_LOCK, _precision(prec):

        def F(j: int) -> arb:
            a, sign = prob.boundary(j)
            return prob.noise.cdf_enclosure(a, sign, prob.shape)

        lo = F(k) if k > k_lo else arb(0)
        hi = F(k + 1) if k < k_hi else arb(1)
        return hi - lo
