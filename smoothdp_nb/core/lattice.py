"""Exact sampling of a noisy release on a power-of-two lattice.

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
the cell boundaries ``a_k = ((k - 1/2) lattice - true) / s``:  ``k`` is chosen
iff ``F(a_k) <= U < F(a_{k+1})``.  ``U`` is never rounded: its bits are drawn
64 at a time (from the numpy Generator, or from OS entropy), so only an
interval ``[U_lo, U_hi)`` of width ``2^-bits`` is known.  A float inverse cdf
proposes a candidate cell; then ``F`` at its two boundaries is enclosed in an
interval with mpmath (the boundary ``a_k`` is formed exactly from the doubles
``true``, ``s`` and ``lattice``, divided with outward rounding) and compared
with ``[U_lo, U_hi)``.  When the comparison is not certain (probability about
``2^-40`` per release) more bits of ``U`` are drawn and the precision is
raised, until it is.

Accuracy model: a tail ``P(Z > a)`` evaluated by mpmath with ``p + 24`` bits
of working precision is taken to be within a relative ``2^-p`` of the truth.
mpmath's elementary functions and its hypergeometric series (used by
``betainc``, which detects cancellation and raises its precision itself) are
designed to be accurate to nearly the working precision; the 24 guard bits
are the safety margin, and tests/test_noise.py checks every family against
independent evaluations at 300 bits.

The cdfs, as tails ``T(a) = P(Z > a)`` for ``a >= 0`` (all five families are
symmetric, ``F(-a) = T(a)``):

* Laplace: ``T(a) = e^{-a} / 2``.
* PolyPlace(1, alpha) (Hladik-Tetek Definition 6; antiderivatives of the
  proof of Lemma 7): ``1/2 - (alpha - 1)(1 - (1 - a)^alpha) / (2K)`` for
  ``a < 1/alpha`` and ``(alpha + 1)(1 - 1/alpha^2)^alpha (1 + a)^-alpha / (2K)``
  beyond, ``K = 2((alpha - 1)/alpha)^alpha + alpha - 1``.
* Student's t(d): ``T(a) = I_w(d/2, 1/2) / 2``, ``w = d / (d + a^2)``
  (regularised incomplete beta, mpmath's hypergeometric series with its own
  error control; the complement ``1/2 - I_{1-w}(1/2, d/2) / 2`` when ``w > 1/2``).
* Generalised Cauchy(c), density proportional to ``1/(1 + |x|^c)``:
  ``T(a) = I_w(1 - 1/c, 1/c) / 2``, ``w = 1 / (1 + a^c)`` (substituting
  ``u = 1/(1 + x^c)`` turns the tail integral into a beta integral).
* Laplace-log-normal(sigma) has no closed-form cdf; it is sampled through its
  mixture representation ``Z = X e^{sigma Y}`` (X standard Laplace, Y standard
  normal): a second lazily drawn uniform ``V`` gives ``Y = Phi^{-1}(V)``,
  enclosed in an interval certified by two evaluations of the normal cdf, and
  given ``Y`` the cell condition is a Laplace-cdf comparison of ``U`` at the
  boundaries divided by ``e^{sigma Y}`` (enclosed over the ``Y`` interval).
  Given the enclosure is certain, the pair (U, V) falls in the cell exactly
  with the probability ``P(k)``.
"""

from __future__ import annotations

import math
import secrets
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeAlias

import mpmath
import numpy as np
from scipy import special

from . import noise as _noise

__all__ = ["cell_probability", "check_lattice", "default_lattice", "lattice_range", "sample_cell"]

#: default lattice step: this many halvings below the largest power of two <= high - low
DEFAULT_LATTICE_BITS = 20

# mpmath ships no type information: its numbers and contexts are Any to mypy; the names say what they are
Mpf: TypeAlias = Any  # an mpmath.mpf
MpContext: TypeAlias = Any  # an mpmath.MPContext
_Tail: TypeAlias = Callable[[MpContext, Mpf, "float | None"], Mpf]  # P(Z > a) for a >= 0

_LOCAL = threading.local()  # one mpmath context per thread (creating one costs ~1.5 ms)


def _context() -> MpContext:
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        ctx = _LOCAL.ctx = mpmath.MPContext()
    return ctx


_GUARD = 24  # guard bits of every mpmath evaluation (see the accuracy model)
_P0 = 64  # first certification precision


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

    Smallest: ``ulp(max(|low|, |high|))``, so that every lattice point in the
    bounds is a double and ``k * lattice`` is exact; largest: the power of two
    at most ``high - low`` (at least one lattice point in the bounds).
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


def check_lattice(lattice: Any, bounds: tuple[float, float]) -> float:
    """Validate a user lattice step: a power of two within :func:`lattice_range`."""
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
    """U in [m / 2^bits, (m + 1) / 2^bits); more bits on demand."""

    __slots__ = ("_draw", "bits", "m")

    def __init__(self, draw: Callable[[], int]) -> None:
        self._draw = draw
        self.m = draw()
        self.bits = 64

    def refine(self) -> None:
        self.m = (self.m << 64) | self._draw()
        self.bits += 64

    def mid(self) -> float:
        return (self.m + 0.5) / 2.0**self.bits if self.bits <= 1000 else 0.0

    def below(self, f: Mpf) -> bool:
        """Certainly U < f (U_hi <= f)."""
        return _cmp_dyadic(self.m + 1, self.bits, f) <= 0

    def at_least(self, f: Mpf) -> bool:
        """Certainly U >= f (U_lo >= f)."""
        return _cmp_dyadic(self.m, self.bits, f) >= 0


def _cmp_dyadic(m: int, bits: int, f: Mpf) -> int:
    """Sign of ``m / 2^bits - f`` for an mpf ``f``, exactly (integer arithmetic)."""
    mpf_tuple: tuple[int, int, int, int] = f._mpf_  # (sign, mantissa, exponent, bit count)
    sign, man, exp, _ = mpf_tuple
    if not man:
        if exp:  # inf or nan: treated as +-inf
            raise ArithmeticError("non-finite probability bound")
        return 1 if m > 0 else 0
    fm = -man if sign else man
    e = min(-bits, exp)
    a = m << (-bits - e)
    b = fm << (exp - e)
    return (a > b) - (a < b)


# --------------------------------------------------------------------------- #
# tails P(Z > a), a >= 0, in mpmath
# --------------------------------------------------------------------------- #
def _tail_laplace(ctx: MpContext, a: Mpf, shape: float | None) -> Mpf:
    return ctx.exp(-a) / 2


def _tail_polyplace(ctx: MpContext, a: Mpf, alpha: float | None) -> Mpf:
    K = _polyplace_K(ctx, _required_shape("polyplace", alpha))
    al = ctx.mpf(alpha)
    if a * al < 1:
        return ctx.mpf(0.5) + (al - 1) * ctx.expm1(al * ctx.log1p(-a)) / (2 * K)
    return (al + 1) * ctx.exp(al * ctx.log1p(-1 / al**2) - al * ctx.log1p(a)) / (2 * K)


def _tail_student_t(ctx: MpContext, a: Mpf, d: float | None) -> Mpf:
    dm = ctx.mpf(_required_shape("student_t", d))
    den = dm + a * a
    w = dm / den
    if w <= 0.5:
        return ctx.betainc(dm / 2, ctx.mpf(0.5), 0, w, regularized=True) / 2
    return (1 - ctx.betainc(ctx.mpf(0.5), dm / 2, 0, a * a / den, regularized=True)) / 2


def _tail_cauchy(ctx: MpContext, a: Mpf, shape: float | None) -> Mpf:
    c = ctx.mpf(_required_shape("cauchy", shape))
    if a == 0:
        return ctx.mpf(0.5)
    lac = c * ctx.log(a)  # log a^c
    if lac >= 0:  # w = 1/(1 + a^c) <= 1/2
        w = ctx.exp(-lac) / (1 + ctx.exp(-lac))
        return ctx.betainc(1 - 1 / c, 1 / c, 0, w, regularized=True) / 2
    v = ctx.exp(lac) / (1 + ctx.exp(lac))  # 1 - w < 1/2
    return (1 - ctx.betainc(1 / c, 1 - 1 / c, 0, v, regularized=True)) / 2


def _polyplace_K(ctx: MpContext, alpha: float) -> Mpf:
    """``K = 2((alpha - 1)/alpha)^alpha + alpha - 1``, cached per (alpha, precision)."""
    key = (alpha, ctx.prec)
    cache = ctx.__dict__.setdefault("_smoothdp_K", {})
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        a = ctx.mpf(alpha)
        cache[key] = 2 * ctx.exp(a * ctx.log1p(-1 / a)) + a - 1
    return cache[key]


_TAILS: dict[str, _Tail] = {
    "laplace": _tail_laplace,
    "polyplace": _tail_polyplace,
    "student_t": _tail_student_t,
    "cauchy": _tail_cauchy,
    "laplace_log_normal": _tail_laplace,  # the Laplace factor of the mixture
}


def _density_bound(family: str, shape: float | None) -> float:
    """An upper bound on the standard density (all five are unimodal at 0).

    Laplace 1/2; Cauchy(c) ``c sin(pi/c) / (2 pi) < 1/2``; Student's t below
    ``1/sqrt(2 pi) < 1/2``; PolyPlace ``alpha (alpha - 1) / (2K) <= alpha / 2``
    since ``K >= alpha - 1``.
    """
    return 0.5 * _required_shape(family, shape) if family == "polyplace" else 0.5


def _required_shape(family: str, shape: float | None) -> float:
    """The shape parameter of a family that has one (its alpha, d, c or sigma)."""
    if shape is None:
        raise ValueError(f"shape is required for family {family!r} (its alpha, d, c or sigma), got None")
    return shape


def _cdf_bounds(
    ctx: MpContext, tail: _Tail, shape: float | None, a_lo: Mpf, a_hi: Mpf, p: int, f_max: float
) -> tuple[Mpf, Mpf]:
    """Enclosure [F_lo, F_hi] of F(a) for every a in [a_lo, a_hi] (F increasing).

    One tail evaluation at the midpoint, with relative error ``2^-p``, widened
    by ``f_max * (a_hi - a_lo)`` (F is Lipschitz with constant ``f_max``).
    """
    rel = ctx.ldexp(1, -p)
    a = (a_lo + a_hi) / 2
    spread = f_max * (a_hi - a_lo)
    if a < 0:
        t = tail(ctx, -a, shape)
        return t * (1 - rel) - spread, t * (1 + rel) + spread
    t = tail(ctx, a, shape)
    return 1 - t * (1 + rel) - spread, 1 - t * (1 - rel) + spread


# --------------------------------------------------------------------------- #
# the sampler
# --------------------------------------------------------------------------- #
class _Problem:
    """One release: true value, noise scale, lattice, clamp range, family."""

    def __init__(
        self, family: str, shape: float | None, true: float, scale: float, lattice: float, k_lo: int, k_hi: int
    ) -> None:
        if family != "laplace":  # every other family has a shape: refuse None before any arithmetic
            _required_shape(family, shape)
        self.family, self.shape = family, shape
        self.tail = _TAILS[family]
        self.true, self.scale, self.lattice = true, scale, lattice
        self.k_lo, self.k_hi = k_lo, k_hi
        self.f_max = _density_bound(family, shape)
        self.ctx = _context()

    def numerator(self, k: int) -> Mpf:
        """(k - 1/2) lattice - true, exactly (the lower boundary of cell k, times s)."""
        ctx = self.ctx
        left = ctx.fmul(2 * k - 1, ctx.mpf(self.lattice) / 2, exact=True)
        return ctx.fsub(left, ctx.mpf(self.true), exact=True)

    def boundary(self, k: int, p: int, factor: tuple[Mpf, Mpf] | None = None) -> tuple[Mpf, Mpf]:
        """Enclosure of a_k = numerator / (s * factor) with ``factor`` an mpf interval or None."""
        ctx = self.ctx
        num = self.numerator(k)
        if not num:
            return ctx.mpf(0), ctx.mpf(0)
        ctx.prec = p + _GUARD
        if factor is None:  # directed rounding: a rigorous enclosure
            return ctx.fdiv(num, self.scale, rounding="f"), ctx.fdiv(num, self.scale, rounding="c")
        f_lo, f_hi = factor  # 0 < f_lo <= f_hi, enclosing e^{sigma Y}
        ends = (num / (self.scale * f_lo), num / (self.scale * f_hi))
        lo, hi = min(ends), max(ends)
        rel = ctx.ldexp(1, -p)  # the two rounded operations above are far inside this margin
        lo = lo * (1 - rel) if lo > 0 else lo * (1 + rel)
        hi = hi * (1 + rel) if hi > 0 else hi * (1 - rel)
        return lo, hi

    def cdf_at(self, k: int, p: int, factor: tuple[Mpf, Mpf] | None = None) -> tuple[Mpf, Mpf]:
        """Enclosure of F(a_k)."""
        a_lo, a_hi = self.boundary(k, p, factor)
        self.ctx.prec = p + _GUARD
        return _cdf_bounds(self.ctx, self.tail, self.shape, a_lo, a_hi, p, self.f_max)

    def candidate(self, z: float) -> int:
        v = (self.true + self.scale * z) / self.lattice if math.isfinite(z) else z
        if not math.isfinite(v):
            return self.k_hi if v > 0 else self.k_lo
        return int(min(max(round(v), self.k_lo), self.k_hi))


def _standard_ppf(family: str, shape: float | None, q: float) -> float:
    """Float inverse cdf of the standard noise (only proposes a candidate cell)."""
    q = min(max(q, 1e-300), 1.0 - 2.0**-60)
    with np.errstate(all="ignore"):
        if family in ("laplace", "laplace_log_normal"):
            return math.log(2.0 * q) if q < 0.5 else -math.log(2.0 * (1.0 - q))
        if family == "polyplace":
            return float(_noise._polyplace._ppf(np.asarray(q), np.asarray(shape)))
        if family == "student_t":
            return float(special.stdtrit(shape, q))
        return float(_noise._gencauchy._ppf(np.asarray(q), np.asarray(shape)))


def _search(prob: _Problem, u: _LazyUniform, k: int, p: int, factor: tuple[Mpf, Mpf] | None = None) -> int | None:
    """The cell of U if certain at precision ``p`` (None if undecided).

    Walks a few cells from the float candidate (almost always right or one
    off); a candidate further off (a poor float quantile far in a tail)
    falls back to bisection over the clamp range, about 60 cdf enclosures.
    """
    cache: dict[int, tuple[Mpf, Mpf]] = {}

    def F(j: int) -> tuple[Mpf, Mpf]:
        if j not in cache:
            cache[j] = prob.cdf_at(j, p, factor)
        return cache[j]

    for _ in range(8):
        low_ok = high_ok = True
        if k > prob.k_lo:
            f_lo, f_hi = F(k)
            if u.below(f_lo):
                k -= 1
                continue
            low_ok = u.at_least(f_hi)
        if k < prob.k_hi:
            g_lo, g_hi = F(k + 1)
            if u.at_least(g_hi):
                k += 1
                continue
            high_ok = u.below(g_lo)
        return k if (low_ok and high_ok) else None
    # bisection: invariant U >= F(a_lo) (or lo = k_lo) and U < F(a_{hi+1}) (or hi = k_hi)
    lo, hi = prob.k_lo, prob.k_hi
    while lo < hi:
        mid = (lo + hi + 1) // 2  # lo < mid <= hi: the boundary a_mid between cells mid - 1 and mid
        f_lo, f_hi = F(mid)
        if u.at_least(f_hi):
            lo = mid
        elif u.below(f_lo):
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
    family, shape : the standardised noise Z (see the module docstring).
    true, scale, lattice : float
        Doubles, used exactly.  ``scale > 0``.
    k_lo, k_hi : int
        Clamp range (the lattice points inside the bounds).
    gen : numpy.random.Generator or None
        Source of random bits; None draws them from OS entropy.

    Returns
    -------
    int
    """
    prob = _Problem(family, shape, true, scale, lattice, k_lo, k_hi)
    draw = bit_source(gen)
    u = _LazyUniform(draw)
    if family == "laplace_log_normal":
        return _sample_mixture(prob, u, _LazyUniform(draw))
    p = _P0
    while True:
        k = prob.candidate(_standard_ppf(family, shape, u.mid()))
        got = _search(prob, u, k, p)
        if got is not None:
            return got
        u.refine()
        p = u.bits + 32


# Laplace-log-normal: Z = X exp(sigma Y)
def _normal_interval(ctx: MpContext, v: _LazyUniform, p: int) -> tuple[Mpf, Mpf] | None:
    """Certified [y_lo, y_hi] containing Phi^{-1}(V), or None if V's interval touches 0 or 1."""
    if v.m == 0 or v.m + 1 == 1 << v.bits:
        return None
    ctx.prec = p + _GUARD
    rel = ctx.ldexp(1, -p)
    lo_q = v.m / 2.0**v.bits if v.bits <= 1000 else 0.0
    y_c = float(special.ndtri(lo_q)) if lo_q > 0 else -40.0
    y_d = float(special.ndtri(min((v.m + 1) / 2.0**v.bits, 1.0 - 2.0**-60)))
    delta = 2.0 ** -(min(p, 1000) - 16) * (1.0 + abs(y_c)) + 1e-300

    def phi_hi(y: Mpf) -> Mpf:  # upper bound of Phi(y)
        return ctx.ncdf(y) * (1 + rel) if y < 0 else 1 - ctx.ncdf(-y) * (1 - rel)

    def phi_lo(y: Mpf) -> Mpf:
        return ctx.ncdf(y) * (1 - rel) if y < 0 else 1 - ctx.ncdf(-y) * (1 + rel)

    y_lo = y_hi = None
    for _ in range(40):
        cand = ctx.mpf(y_c) - delta
        if _cmp_dyadic(v.m, v.bits, phi_hi(cand)) >= 0:  # Phi(cand) <= V_lo
            y_lo = cand
            break
        delta *= 16.0
    delta = 2.0 ** -(min(p, 1000) - 16) * (1.0 + abs(y_d)) + 1e-300
    for _ in range(40):
        cand = ctx.mpf(y_d) + delta
        if _cmp_dyadic(v.m + 1, v.bits, phi_lo(cand)) <= 0:  # Phi(cand) >= V_hi
            y_hi = cand
            break
        delta *= 16.0
    if y_lo is None or y_hi is None:
        return None
    return y_lo, y_hi


def _sample_mixture(prob: _Problem, u: _LazyUniform, v: _LazyUniform) -> int:
    sigma = _required_shape(prob.family, prob.shape)
    ctx = prob.ctx
    p = _P0
    while True:
        ys = _normal_interval(ctx, v, p)
        if ys is not None:
            ctx.prec = p + _GUARD
            rel = ctx.ldexp(1, -p)
            f_lo = ctx.exp(sigma * ys[0]) * (1 - rel)
            f_hi = ctx.exp(sigma * ys[1]) * (1 + rel)
            y_mid = float((ys[0] + ys[1]) / 2)
            x = _standard_ppf("laplace", None, u.mid())
            with np.errstate(all="ignore"):
                z = x * math.exp(min(sigma * y_mid, 700.0))
            k = prob.candidate(z)
            got = _search(prob, u, k, p, factor=(f_lo, f_hi))
            if got is not None:
                return got
        u.refine()
        v.refine()
        p = max(u.bits, v.bits) + 32


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
) -> Any:
    """``P(K = k)`` for the clamped lattice law, as an mpmath number at ``prec`` bits.

    Laplace-log-normal uses the mixture over Y by mpmath quadrature on
    ``|Y| <= 12`` (the normal mass beyond is below ``4e-33``, added to the
    reported value's error); the other families use their tails.
    """
    ctx = _context()
    ctx.prec = prec
    tail = _TAILS[family]

    def F(j: int) -> Mpf:  # F(a_j): P(true + scale Z < (j - 1/2) lattice)
        a = (ctx.mpf(2 * j - 1) * ctx.mpf(lattice) / 2 - ctx.mpf(true)) / ctx.mpf(scale)
        if family == "laplace_log_normal":
            s = ctx.mpf(shape)

            def g(y: Mpf) -> Mpf:
                b = a * ctx.exp(-s * y)
                f = tail(ctx, -b, None) if b < 0 else 1 - tail(ctx, b, None)
                return ctx.npdf(y) * f

            return ctx.quad(g, ctx.linspace(-12, 12, 13))
        return tail(ctx, -a, shape) if a < 0 else 1 - tail(ctx, a, shape)

    lo = F(k) if k > k_lo else ctx.mpf(0)
    hi = F(k + 1) if k < k_hi else ctx.mpf(1)
    return hi - lo
