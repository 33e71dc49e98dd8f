"""Algorithm 1 at the size of an electorate: the profiles of only the databases that can carry
the expectation, and a proof of which composition holds the maximum.

For two categories and at most two hull vertices the smoothed delta is the largest
``E_j = E[delta(X_j)]``, ``X_j ~ Bin(n - j, pa) + Bin(j, pb)`` (j records from vertex b, the
others from vertex a).  When the mechanism bounds its profile over whole ranges of histograms
in O(1) per range (``_log_profile_range_upper``, e.g. the sampling histogram:
:mod:`~smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.tail_bound`), no table of n + 1
profiles is needed:

1. **The end composition, exactly.**  Cut 0 .. n into pieces; on piece i the profile is at most
   ``b_i`` (the range bound) and ``P(X_0 in piece i)`` at most a Chernoff bound ``c_i``.  The
   profiles are computed (proven enclosures) only on the window W of pieces whose ``b_i c_i``
   comes within e^-120 of the largest; ``E_0`` is enclosed by the log-sum-exp over W (the
   binomial weights of :func:`~smoothdp_nb.core.numerics.lpmf.log_binom_pmf` with their proven
   error, :func:`_log_weights` and :func:`_window_rel`), and the sum
   of ``b_i c_i`` outside W is added to the upper bound (checked to be below 2^-40 of it).
2. **Far compositions, pruned.**  For a piece and a tilt ``beta`` of the right sign, Chernoff
   gives ``E[delta(X_j) 1{X_j in piece}] <= b_i exp(-beta m + (n - j) t_a(beta) + j t_b(beta))``
   (m the piece's nearer end), log-linear in j for a fixed beta; so over an interval of j,
   with one beta per piece, each term is monotone in j and its largest value is at one of the
   interval's ends.  A second bound sums by parts about a pivot piece: the rises of b times the
   tails of X_j beyond them (:func:`_interval_bounds`); where delta is nearly flat it is off by
   hundredths of a nat where the first is off by nats.  Every interval of compositions whose
   bound is at most the upper bound ``U`` of ``E_0`` is proven not to exceed it; the failing
   ones are bisected.  Where a column fails far from both ends, the range bounds are too loose
   for the expectations they separate (a small epsilon: delta moves by a few nats between the
   vertices); the profiles between the vertices are then computed and reduced to one maximum
   per piece as they come (:func:`_refine_middle`), and step 2 runs again.
3. **Near compositions, by induction.**  For the compositions 1 .. R that step 2 cannot prune:
   with S the ``n - 1`` records compositions j and j + 1 share,
   ``E_{j+1} = sum_s P(S = s) delta(s) (1 - pb + pb u(s))`` and
   ``E_j = sum_s P(S = s) delta(s) (1 - pa + pa u(s))``, ``u(s) = delta(s + 1) / delta(s)``.
   On a range A of s where the enclosures prove ``u(s)`` in ``[u_lo, u_hi]``, every term
   ratio is at most ``f = max f(u)``, ``f(u) = (1 - pb + pb u) / (1 - pa + pa u)`` (monotone in
   u, so taken at ``u_lo`` and ``u_hi``); outside A the terms sum to at most
   ``tau = sum_pieces b'_i P(S in piece i, outside A)``, whose probabilities are largest at
   j = 0 or j = R (S_j decreases stochastically in j when pb < pa, increases when pb > pa).
   So ``E_{j+1} <= f E_j + tau``, and if ``f < 1`` and ``tau <= (1 - f) L`` (L the lower
   bound of ``E_0``), ``E_j <= U`` gives ``E_{j+1} <= f U + (1 - f) U = U``.

Then every composition's expectation is at most U and ``E_0 >= L``: the smoothed delta lies in
[L, U].  The work is the profiles of W and A (their size grows like sqrt(n) times the spread of
log delta that matters, not like n) and O(pieces x intervals) for the certificate; a nearly flat
column adds the profiles between the vertices, O(n |pb - pa|) streamed; no O(n) table is held.  When any check fails the caller falls back to the full engine (when the
second end is the larger, a middle composition that exceeds the first end's expectation makes
it enclose the second end before giving up).  :func:`planned_profiles` tells the cost model,
before any work, how many histograms the certificate is expected to profile.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Algorithm 1, Proposition 7).
Chernoff. *A measure of asymptotic efficiency for tests of a hypothesis based on the sum of observations*, Ann. Math. Statist. 23 (1952).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from scipy.special import logsumexp

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U as UNIT, gamma, log_rel, lpmf_abs_error
from smoothdp_nb.core.numerics.weighted_log_sum import log_weighted_sum_enclosure
from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.core.smoothed.engines.pruning import tilt_to

__all__ = [
    "WINDOW_MAX_N",
    "WINDOW_MIN_N",
    "WINDOW_ROWS",
    "PlannedProfiles",
    "WindowCertificate",
    "planned_profiles",
    "window_may_apply",
    "windowed_smoothed",
]

#: records from which the exact engine first tries the windowed certificate
WINDOW_MIN_N = 3_000_000
#: records up to which it is tried (the sizes its certificate is tested at, the 2020 electorate
#: of 1.58e8 included); above, the exact engine's arithmetic floor refuses at once
WINDOW_MAX_N = 2**28
# relative slack on every Chernoff bound: far above the rounding of its few operations
_SLACK = 1e-9
# the window keeps the pieces whose bound is within e^-_KEEP of the largest
_KEEP = 120.0
#: rows of profiles per call of the mechanism (bounded temporaries)
WINDOW_ROWS = 1 << 16
_ROWS = WINDOW_ROWS
# the first chunk of profiles, and the time a chunk is sized to (the deadline is checked between them)
_FIRST_ROWS = 16
_CHUNK_SECONDS = 0.1


class PlannedProfiles(NamedTuple):
    """What :func:`planned_profiles` expects the certificate to profile: ``held`` histograms whose
    profiles it keeps (the ends' windows and the induction's range) and ``streamed`` ones reduced
    to one maximum per piece as they are computed (the middle, :func:`_refine_middle`), in the
    epsilon columns ``streamed_columns``."""

    held: int
    streamed: int
    streamed_columns: np.ndarray


class WindowCertificate(NamedTuple):
    """What :func:`windowed_smoothed` proved, per epsilon: ``upper`` and ``lower`` (logs) enclose
    the smoothed delta, attained within them at the composition with all ``n`` records at
    vertex ``end`` (per epsilon); ``profiles`` histograms had their profile computed; ``near`` compositions
    were covered by the induction, the others by the interval bounds; ``middle`` of the profiled
    histograms lay between the vertices (a nearly flat column, :func:`_refine_middle`)."""

    upper: np.ndarray
    lower: np.ndarray
    end: np.ndarray
    profiles: int
    near: int
    middle: int = 0


def _log_chernoff(n1: np.ndarray, n2: np.ndarray, pa: float, pb: float, beta: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``-beta m + log E[exp(beta X)]``, X = Bin(n1, pa) + Bin(n2, pb), raised by a slack far
    above its rounding and capped at 0: a proven bound on ``P(X >= m)`` (beta >= 0) or
    ``P(X <= m)`` (beta <= 0)."""
    ta = np.logaddexp(math.log1p(-pa), math.log(pa) + beta)
    tb = np.logaddexp(math.log1p(-pb), math.log(pb) + beta)
    K = n1 * ta + n2 * tb
    val = -beta * m + K
    slack = _SLACK * (np.abs(beta * m) + np.abs(K) + 1.0) + 1e-14 * (n1 + n2) * (1.0 + np.abs(beta))
    out: np.ndarray = np.minimum(val + slack, 0.0)
    return out


def _tilts(
    n1: np.ndarray, n2: np.ndarray, pa: float, pb: float, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(beta, m) for ``P(X in [lo, hi])``: tilted toward the nearer end when the mean lies
    outside the range (beta of the sign that makes the bound valid), 0 inside."""
    mean = n1 * pa + n2 * pb
    below, above = mean < lo, mean > hi
    target = np.where(below, lo, np.where(above, hi, mean)).astype(float)
    beta = tilt_to(n1, n2, pa, pb, target, steps=2)
    beta = np.where(below, np.maximum(beta, 0.0), np.where(above, np.minimum(beta, 0.0), 0.0))
    m = np.where(below, lo, np.where(above, hi, 0)).astype(float)
    return beta, m


def _log_range_prob(N: int, j: np.ndarray, pa: float, pb: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Proven upper bound on ``log P(X_j in [lo, hi])`` (rows j, columns ranges),
    ``X_j = Bin(N - j, pa) + Bin(j, pb)``."""
    n1 = (N - j).astype(float)[:, None]
    n2 = j.astype(float)[:, None]
    beta, m = _tilts(n1, n2, pa, pb, lo[None, :], hi[None, :])
    return _log_chernoff(n1, n2, pa, pb, beta, m)


def _log_tail(N: int, j: np.ndarray, pa: float, pb: float, t: np.ndarray, upper: bool) -> np.ndarray:
    """Proven upper bound on ``log P(X_j >= t)`` (``upper``) or ``log P(X_j <= t)``, rows j."""
    n1 = (N - j).astype(float)[:, None]
    n2 = j.astype(float)[:, None]
    tt = np.asarray(t, dtype=float)[None, :]
    mean = n1 * pa + n2 * pb
    use = (mean < tt) if upper else (mean > tt)
    return np.where(use, _log_chernoff(n1, n2, pa, pb, _tail_tilts(n1, n2, pa, pb, tt, upper), tt), 0.0)


def _partition(n: int, centers: list[float], sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Pieces ``[lo_i, hi_i]`` partitioning 0 .. n: about 4096 equal ones, and finer ones (a
    quarter of a standard deviation, at most 2048 per center) around each of ``centers``."""
    parts = [np.linspace(0, n + 1, 4097).round().astype(np.int64), np.array([n + 1])]
    span = max(64.0 * sd, 0.02 * n)
    for c in centers:
        a, b = max(0, int(c - span)), min(n + 1, int(c + span) + 1)
        w = max(1, int(sd / 4), -(-(b - a) // 2048))
        parts += [np.arange(a, b, w), np.array([b])]
    bounds = np.unique(np.concatenate(parts))
    return bounds[:-1], bounds[1:] - 1


def _profile_chunks(
    mech: Any, n: int, x0: int, x1: int, e: np.ndarray, deadline: float = math.inf
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(x, upper, lower): proven bounds on log delta of histograms (x, n - x), x = x0 .. x1, in
    consecutive chunks (rows, E) of bounded size.

    The profiles are the certificate's work; past ``deadline`` (``time.perf_counter``) it stops
    with :class:`ComputationTooLarge` instead of running on (how long the certificate takes is not
    known before it runs: the windows grow where the range bounds are loose)."""
    # the deadline is checked between chunks: they start small and grow to about a tenth of a
    # second each (a profile near epsilon = 0 at n = 10^8 takes ~35 ms: _ROWS of them, hours)
    rows = _FIRST_ROWS
    i = x0
    while i <= x1:
        if time.perf_counter() > deadline:
            raise ComputationTooLarge(
                f"the windowed certificate of the exact smoothed delta for n={n} reached its time budget "
                "(no estimate of its time exists before it runs: "
                "it stops at the budget instead); give a larger budget= or use method='monte-carlo'",
                "budget",
            )
        xs = np.arange(i, min(x1, i + rows - 1) + 1, dtype=np.int64)
        t0 = time.perf_counter()
        enc = mech._profile(np.stack([xs, n - xs], axis=1), e)
        took = time.perf_counter() - t0
        yield xs, np.reshape(enc.upper, (-1, e.size)), np.reshape(enc.lower, (-1, e.size))
        i += xs.size
        rows = int(min(_ROWS, max(_FIRST_ROWS, rows * min(8.0, _CHUNK_SECONDS / max(took, 1e-6)))))


def _profiles(
    mech: Any, n: int, x0: int, x1: int, e: np.ndarray, deadline: float = math.inf
) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) proven bounds on log delta of histograms (x, n - x), x = x0 .. x1: (rows, E)
    (:func:`_profile_chunks`, gathered)."""
    up = np.empty((max(0, x1 - x0 + 1), e.size))
    lo = np.empty_like(up)
    for xs, u, l_ in _profile_chunks(mech, n, x0, x1, e, deadline):
        up[xs - x0], lo[xs - x0] = u, l_
    return up, lo


class _Profiles:
    """The profiles computed so far, on one contiguous range of x (grown on demand)."""

    def __init__(self, mech: Any, n: int, e: np.ndarray, deadline: float = math.inf) -> None:
        self.mech, self.n, self.e, self.deadline = mech, n, e, deadline
        self.x0, self.x1 = 0, -1
        self.up = np.empty((0, e.size))
        self.lo = np.empty((0, e.size))

    def cover(self, x0: int, x1: int) -> None:
        x0, x1 = max(0, x0), min(self.n, x1)
        if self.x1 < self.x0:
            self.up, self.lo = _profiles(self.mech, self.n, x0, x1, self.e, self.deadline)
            self.x0, self.x1 = x0, x1
            return
        if x0 < self.x0:
            u, l_ = _profiles(self.mech, self.n, x0, self.x0 - 1, self.e, self.deadline)
            self.up, self.lo = np.concatenate([u, self.up]), np.concatenate([l_, self.lo])
            self.x0 = x0
        if x1 > self.x1:
            u, l_ = _profiles(self.mech, self.n, self.x1 + 1, x1, self.e, self.deadline)
            self.up, self.lo = np.concatenate([self.up, u]), np.concatenate([self.lo, l_])
            self.x1 = x1

    def rows(self, x0: int, x1: int) -> tuple[np.ndarray, np.ndarray]:
        return self.up[x0 - self.x0 : x1 - self.x0 + 1], self.lo[x0 - self.x0 : x1 - self.x0 + 1]


def _log_weights(y: np.ndarray, n: int, p: float) -> tuple[np.ndarray, float]:
    """(log Bin(y; n, p), a proven bound on their absolute error) without the ``u n`` of a
    rounded ``q = 1 - p``.

    Loader's formula with ``q_hi = fl(1 - p)`` is ``log C + y log p + (n - y) log q_hi + n q_lo``
    (``q_lo = 1 - p - q_hi``, exact: it is off by ``n (p + q_hi - 1)``); the true value has
    ``(n - y) log(q_hi + q_lo)``.  Their difference is ``q_lo (n - y - n q_hi) / q_hi`` (added
    here: it is small where the weights matter) up to ``n t^2``, ``t = q_lo / q_hi``.

    Loader's formula is evaluated in double-word arithmetic
    (:func:`~smoothdp_nb.core.numerics.lpmf.log_binom_pmf_dd`, its bound about 1e-13, where the
    float64 one of :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error` is ``2100 u`` of
    the value: 3e-9 at the tilted weights of 1.58e8 records) at every 64th y of a contiguous
    range, and in between from its anchor by the running product of the formula's exact term
    ratios ``(n - y) / (y + 1) * (p / q_hi)``: three roundings each (``s - x`` and ``x + 1`` are
    exact) and one per step of the product, so a product of ``j < 64`` ratios is within
    ``gamma_(4j)`` (Higham, Lemma 3.1), its log within ``1.01 * 4 * 64 u`` plus ``LIBM_REL`` of
    its size (at most 700, the products being normal floats, else every y is an anchor).  The
    anchor's low word, the correction and the log are added first (``4u`` of their sizes), the
    anchor's high word last (``u`` of the result).  The ends ``y = 0, n`` keep the a-priori
    bound."""
    q_hi = 1.0 - p
    q_lo = float(Fraction(1) - Fraction(p) - Fraction(q_hi))
    y = np.asarray(y, dtype=float)
    corr = q_lo * (n - y - n * q_hi) / q_hi
    t = abs(q_lo / q_hi)
    inner = (y > 0) & (y < n)
    step = 64
    span = y.size
    contiguous = span >= 2 * step and bool(np.all(inner)) and bool(np.all(np.diff(y) == 1.0))
    if contiguous:
        rows = -(-span // step)
        ah, al, ae = lpmf.log_binom_pmf_dd(y[::step], float(n), p, q_hi)
        r = np.ones(rows * step)
        r[1:span] = (float(n) - y[:-1]) / (y[:-1] + 1.0) * (p / q_hi)
        R = r.reshape(rows, step)
        R[:, 0] = 1.0
        prod = np.cumprod(R, axis=1)
        contiguous = bool(np.all(prod > 1e-300) and np.all(prod < 1e300))
    if contiguous:
        lp = np.log(prod)
        small = (lp + al[:, None]).ravel()[:span] + corr
        lw = small + np.repeat(ah, step)[:span]
        sizes = float(np.max(np.abs(lp))) + float(np.max(np.abs(al))) + float(np.max(np.abs(corr), initial=0.0))
        err = float(np.max(ae)) + 1.01 * 4 * step * UNIT + LIBM_REL * float(np.max(np.abs(lp))) + 4 * UNIT * sizes
        err += 1.01 * UNIT * float(np.max(np.abs(lw)))
        return lw, err + 2 * n * t * t + 4 * UNIT * t * n
    hi, lo, err_dd = lpmf.log_binom_pmf_dd(y[inner], float(n), p, q_hi)
    lw = lpmf.log_binom_pmf(y, float(n), p, q_hi) if not np.all(inner) else np.empty(y.shape)
    lw[inner] = hi + (lo + corr[inner])
    ends = lw[~inner] + corr[~inner]
    lw[~inner] = ends
    err = float(np.max(err_dd, initial=0.0)) + 2.0 * UNIT * float(np.max(np.abs(lw[np.isfinite(lw)]), initial=0.0))
    fin = ends[np.isfinite(ends)]
    if fin.size:
        err = max(err, float(lpmf_abs_error(float(np.max(-fin)), n, 1)))
    err += 4 * UNIT * float(np.max(np.abs(corr), initial=0.0)) + 2 * n * t * t + 4 * UNIT * t * n
    return lw, err


def _window_rel(lw_err: float, lw: np.ndarray, ld: np.ndarray) -> float:
    """Proven relative error of ``logsumexp(lw + ld)`` over the window's terms.

    With ``a = fl(lw + ld)`` (``u |lw + ld|`` each) the log-sum-exp is ``a_max + log sum
    exp(a - a_max)``: the differences ``a - a_max`` carry ``u`` of the spread of a, the exps
    ``LIBM_REL``, the sum of the non-negative terms ``gamma`` of their number, its log
    ``LIBM_REL`` of at most ``log K`` and the last addition ``u`` of the result; with the weights'
    absolute error ``lw_err`` that is at most ``lw_err + 2.02 u amax + u spread + 2 LIBM_REL
    (1 + log K)`` in the log (``amax`` the largest ``|lw + ld|``, the result's size included), a
    relative error of its ``expm1``, plus ``gamma`` and ``LIBM_REL`` of the sums."""
    fin = np.isfinite(lw)[:, None] & np.isfinite(ld)
    a = np.where(fin, lw[:, None] + np.where(fin, ld, 0.0), np.nan)
    amax = float(np.nanmax(np.abs(a), initial=0.0)) if a.size else 0.0
    spread = float(np.nanmax(a) - np.nanmin(a)) if np.any(fin) else 0.0
    lse = 2.02 * UNIT * amax + 1.01 * UNIT * spread + 2 * LIBM_REL * (1 + math.log(lw.size + 1.0))
    return math.expm1((lw_err + lse) * 1.01) + float(gamma(lw.size + 8)) + 4 * LIBM_REL


def _end_enclosure(
    prof: _Profiles, n: int, pa: float, plo: np.ndarray, phi: np.ndarray, lb: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """(U, L) per epsilon enclosing ``log E[delta(Bin(n, pa))]`` (step 1 of the module docstring):
    the window grows (the pieces within e^-120, e^-300, e^-700 of the largest bound) until what
    it leaves out is below 2^-40 of the value (the range bound can be hundreds of nats above the
    profile, so the largest piece bound overstates the value by as much)."""
    piece = _log_range_prob(n, np.array([0]), pa, 0.5, plo, phi)[0][:, None] + lb  # (J, E)
    for keep_nats in (_KEEP, 2.5 * _KEEP, 6 * _KEEP):
        got = _end_window(prof, n, pa, plo, phi, piece, keep_nats)
        if got is not None:
            return got
    return None


def _end_window(
    prof: _Profiles, n: int, pa: float, plo: np.ndarray, phi: np.ndarray, piece: np.ndarray, keep_nats: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_end_enclosure` with the pieces within ``e^-keep_nats`` of the largest bound, or None."""
    top = piece.max(axis=0)
    keep = np.flatnonzero(np.any(piece >= top[None, :] - keep_nats, axis=1))
    if keep.size == 0 or not np.all(np.isfinite(top)):
        return None
    i0, i1 = max(0, int(keep[0]) - 1), min(plo.size - 1, int(keep[-1]) + 1)
    x0, x1 = int(plo[i0]), int(phi[i1])
    prof.cover(x0, x1)
    up, lo = prof.rows(x0, x1)
    lw, lw_err = _log_weights(np.arange(x0, x1 + 1, dtype=float), n, pa)
    outside = np.concatenate([piece[:i0], piece[i1 + 1 :]])
    trunc = logsumexp(outside, axis=0) if outside.size else np.full(up.shape[1], -np.inf)
    # the weighted sum enclosed with its rounding followed term by term, then rounded outward
    # once (a fixed 1e-15 of |log delta| would be 4 ulps at the electorate's size)
    U, L = log_weighted_sum_enclosure(lw, lw_err, up, lo, trunc)
    if not np.all(np.isfinite(U)) or np.any(trunc > U - 40 * math.log(2.0)):
        return None
    return U, L


def _far_failures(
    n: int, pa: float, pb: float, plo: np.ndarray, phi: np.ndarray, lb: np.ndarray, U: np.ndarray
) -> tuple[tuple[int, int] | None, np.ndarray]:
    """Step 2: ``((R0, Rn), middle)``: the interval bounds prove ``E_j <= U`` in every column
    for every j in ``(R0, n - Rn)`` (j: records at vertex b); or ``(None, middle)`` when a
    composition they cannot prune lies in the middle, too far from both ends for the induction,
    in the columns ``middle`` (a boolean per column)."""
    g = np.geomspace(64, max(65.0, n / 2), 384).round()
    bounds = np.unique(np.concatenate([np.arange(1, 65), g, n + 1 - g, n + 1 - np.arange(0, 64), [n + 1]]))
    bounds = bounds[(bounds >= 1) & (bounds <= n + 1)].astype(np.int64)
    ja, jb = bounds[:-1], bounds[1:] - 1
    worst = _interval_bounds(n, pa, pb, plo, phi, lb, ja, jb, U)
    fail_cols = worst > U[None, :]
    fail = np.any(fail_cols, axis=1)
    low = jb <= n // 2
    in_middle = (~low & (ja < n - n // 4)) | (low & (jb > n // 4))
    middle = np.any(fail_cols & in_middle[:, None], axis=0)
    if np.any(middle):
        return None, middle
    # only the last failing interval from each end matters (the induction covers the ones
    # before it): bisect it until its failing part is a single composition
    ends = []
    for side in (low, ~low):
        f = np.flatnonzero(fail & side)
        if f.size == 0:
            ends.append(0)
            continue
        a, b = (int(ja[f.max()]), int(jb[f.max()])) if side is low else (int(ja[f.min()]), int(jb[f.min()]))
        while a < b:
            mid = (a + b) // 2
            # the half farther from the end first: if it fails, the other need not be looked at
            far_half, near_half = ((mid + 1, b), (a, mid)) if side is low else ((a, mid), (mid + 1, b))
            w = _interval_bounds(n, pa, pb, plo, phi, lb, np.array([far_half[0]]), np.array([far_half[1]]), U)
            a, b = far_half if np.any(w > U[None, :]) else near_half
        ends.append(b if side is low else n - a)
    return (ends[0], ends[1]), middle


#: standard deviations of the widest composition law around the vertices' means over which
#: :func:`_refine_middle` profiles every histogram
_MIDDLE_SDS = 40.0


def _middle_span(n: int, p: list[float], plo: np.ndarray, phi: np.ndarray) -> tuple[int, int]:
    """(i0, i1): the pieces :func:`_refine_middle` profiles, those inside
    ``[n min p - 40 sd, n max p + 40 sd]`` (sd of the widest law)."""
    sd = max(math.sqrt(n * q * (1.0 - q)) for q in p) + 1.0
    x_lo, x_hi = n * min(p) - _MIDDLE_SDS * sd, n * max(p) + _MIDDLE_SDS * sd
    i0 = int(np.searchsorted(plo, x_lo, "left"))
    i1 = int(np.searchsorted(phi, x_hi, "right")) - 1
    return i0, i1


def _refine_middle(
    mech: Any,
    n: int,
    p: list[float],
    plo: np.ndarray,
    phi: np.ndarray,
    lb: np.ndarray,
    cols: np.ndarray,
    e: np.ndarray,
    deadline: float,
) -> tuple[np.ndarray, int]:
    """(``lb`` lowered, in the columns ``cols``, to the largest upper profile of every piece
    between the two vertices (:func:`_middle_span`).

    For a small epsilon delta can be nearly flat between the vertices (the authors' election
    history at epsilon = 0.1: within 3 nats from n/2 to 0.65 n), so every composition's
    expectation lies within the range bounds' few nats of slack of the largest: only the
    profiles themselves can separate them.  They are computed in chunks and reduced to one
    maximum per piece at once: no table of rows is held.  The second value is the number of
    histograms profiled."""
    i0, i1 = _middle_span(n, p, plo, phi)
    if i1 < i0:
        return lb, 0
    out = lb.copy()
    best = np.full((i1 - i0 + 1, cols.size), -np.inf)
    for xs, up, _ in _profile_chunks(mech, n, int(plo[i0]), int(phi[i1]), e[cols], deadline):
        piece = np.searchsorted(plo, xs, "right") - 1 - i0
        starts = np.flatnonzero(np.r_[True, piece[1:] != piece[:-1]])
        top = np.maximum.reduceat(up, starts, axis=0)
        best[piece[starts]] = np.maximum(best[piece[starts]], top)
    out[i0 : i1 + 1, cols] = np.minimum(lb[i0 : i1 + 1][:, cols], best)
    return out, int(phi[i1] - plo[i0] + 1)


def _tail_tilts(n1: np.ndarray, n2: np.ndarray, pa: float, pb: float, t: np.ndarray, upper: bool) -> np.ndarray:
    """beta for ``P(X >= t)`` (``upper``, beta >= 0) or ``P(X <= t)`` (beta <= 0), tilted toward t
    when the mean lies on the other side, 0 otherwise (the bound is then 1)."""
    mean = n1 * pa + n2 * pb
    beta = tilt_to(n1, n2, pa, pb, np.broadcast_to(t, np.broadcast_shapes(mean.shape, t.shape)).astype(float), steps=2)
    if upper:
        out: np.ndarray = np.where(mean < t, np.maximum(beta, 0.0), 0.0)
    else:
        out = np.where(mean > t, np.minimum(beta, 0.0), 0.0)
    return out


def _log_rise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log (e^a - e^b)^+`` rounded up (-inf where ``a <= b``): the difference carries u of
    itself, ``expm1`` and ``log`` their libm error and the last addition u of ``|a|``, all far
    below the 1e-12 added."""
    with np.errstate(invalid="ignore"):
        d = a - b
        rise = np.where(d > 0, a + np.log(-np.expm1(-np.where(d > 0, d, 1.0))), -np.inf)
    fin = np.isfinite(rise)
    out: np.ndarray = np.where(fin, rise + 1e-12 + 4 * UNIT * np.abs(np.where(fin, a, 0.0)), rise)
    return out


def _interval_bounds(
    n: int,
    pa: float,
    pb: float,
    plo: np.ndarray,
    phi: np.ndarray,
    lb: np.ndarray,
    ja: np.ndarray,
    jb: np.ndarray,
    target: np.ndarray | None = None,
) -> np.ndarray:
    """Proven upper bounds on ``log E_j`` over every ``j in [ja_k, jb_k]``: (intervals, E), the
    smaller of two bounds (the second only in the columns where the first exceeds ``target``,
    when given) (step 2 of the module docstring), both with one tilt per piece from the
    interval's middle.

    * **Pieces**: ``E_j <= sum_i b_i P(X_j in piece i)`` (b_i = e^lb_i).
    * **Rises** (summation by parts about a pivot piece ``i*``):
      ``sum_{i >= i*} b_i P(X in piece i) = b_i* T_i* + sum_{i > i*} (b_i - b_{i-1}) T_i``,
      ``T_i = P(X >= lo_i)``, and on the left the same with ``L_i = P(X <= hi_i)``; dropping the
      negative differences and bounding the tails by Chernoff gives
      ``E_j <= b_i* T_i* + b_(i*-1) L_(i*-1) + sum_{i > i*} (b_i - b_{i-1})^+ T_i
      + sum_{i < i*-1} (b_i - b_{i+1})^+ L_i`` for every pivot; the smallest over all pivots is
      taken (prefix and suffix sums).  Where delta is nearly flat over the range of the
      compositions (a small epsilon) the first bound is off by the number of pieces the law
      spreads over; this one only by the rises of delta within a few standard deviations
      (hundredths of a nat instead of nats).

    Every term of either sum is one Chernoff bound, ``min(0, c + j s)`` in the log for a fixed
    tilt: monotone in j, so its largest value over the interval is at one of its ends; each term
    is taken at its own larger end before the sums (:func:`_best_pivot`)."""
    out = np.full((ja.size, lb.shape[1]), -np.inf)
    E = lb.shape[1]
    none = np.full((1, E), -np.inf)
    rise_r = _log_rise(lb, np.vstack([none, lb[:-1]]))  # (b_i - b_(i-1))^+, the right of a pivot
    rise_l = _log_rise(lb, np.vstack([lb[1:], none]))  # (b_i - b_(i+1))^+, the left
    lo_f, hi_f = plo.astype(float)[None, :], phi.astype(float)[None, :]
    rounding = 8 * lb.shape[0] * UNIT + 8 * LIBM_REL
    for s in range(0, ja.size, 32):
        a, b = ja[s : s + 32], jb[s : s + 32]
        mid = (a + b) // 2
        n1, n2 = (n - mid).astype(float)[:, None], mid.astype(float)[:, None]
        beta, m = _tilts(n1, n2, pa, pb, lo_f, hi_f)
        ends = [((n - r).astype(float)[:, None], r.astype(float)[:, None]) for r in (a, b)]
        piece = np.maximum(*(_log_chernoff(r1, r2, pa, pb, beta, m) for r1, r2 in ends))
        by_piece = logsumexp(piece[:, :, None] + lb[None, :, :], axis=1)
        cols = np.arange(E) if target is None else np.flatnonzero(np.any(by_piece > target[None, :], axis=0))
        out[s : s + 32] = by_piece
        if cols.size:
            bt, bl = _tail_tilts(n1, n2, pa, pb, lo_f, True), _tail_tilts(n1, n2, pa, pb, hi_f, False)
            lt = np.maximum(*(_log_chernoff(r1, r2, pa, pb, bt, lo_f) for r1, r2 in ends))
            ll = np.maximum(*(_log_chernoff(r1, r2, pa, pb, bl, hi_f) for r1, r2 in ends))
            by_rise = _best_pivot(rise_r[:, cols], rise_l[:, cols], lb[:, cols], lt, ll, rounding)
            out[s : s + 32, cols] = np.minimum(by_piece[:, cols], by_rise)
    return out


def _best_pivot(
    rise_r: np.ndarray, rise_l: np.ndarray, lb: np.ndarray, lt: np.ndarray, ll: np.ndarray, rounding: float
) -> np.ndarray:
    """The bound by rises of :func:`_interval_bounds` at its best pivot: (intervals, columns), from
    the log rises ``rise_r``, ``rise_l`` and bounds ``lb`` (pieces, columns) and the log tails
    ``lt``, ``ll`` (intervals, pieces).

    For every pivot at once: suffix sums of the right's terms and prefix sums of the left's, in
    linear scale below each row's largest term M (exponents below -700 are raised to -700, which
    only adds).  Each sum of at most P + 2 non-negative terms carries at most (P + 2) u of
    relative rounding, each exp and the log ``LIBM_REL``: ``rounding`` (8 P u + 8 LIBM_REL) of
    the value's magnitude is added."""
    tr = rise_r[None] + lt[:, :, None]  # (I, P, C): (b_i - b_(i-1))^+ T_i
    tl = rise_l[None] + ll[:, :, None]  # (b_i - b_(i+1))^+ L_i
    own = lb[None] + lt[:, :, None]  # b_i* T_i*
    prev = lb[None] + ll[:, :, None]  # b_(i*-1) L_(i*-1), shifted by one below
    M = np.max(np.stack([tr.max(axis=1), tl.max(axis=1), own.max(axis=1), prev.max(axis=1)]), axis=0)  # (I, C)
    M = np.where(np.isfinite(M), M, 0.0)[:, None, :]

    def lin(v: np.ndarray) -> np.ndarray:
        return np.where(np.isneginf(v), 0.0, np.exp(np.maximum(v - M, -700.0)))

    right = np.cumsum(lin(tr)[:, ::-1], axis=1)[:, ::-1]
    left = np.cumsum(lin(tl), axis=1)
    zero = np.zeros((tr.shape[0], 2, tr.shape[2]))
    total = (
        np.concatenate([right[:, 1:], zero[:, :1]], axis=1)  # sum over i > i*
        + np.concatenate([zero, left[:, :-2]], axis=1)  # sum over i < i* - 1
        + lin(own)
        + np.concatenate([zero[:, :1], lin(prev)[:, :-1]], axis=1)
    )
    with np.errstate(divide="ignore"):
        best = np.log(np.min(total, axis=1)) + M[:, 0, :]
    out: np.ndarray = best + rounding * (1.0 + np.abs(best))
    return out


def _refine(lb: np.ndarray, plo: np.ndarray, phi: np.ndarray, prof: _Profiles) -> np.ndarray:
    """``lb`` lowered to the largest computed upper profile on every piece inside the profiled range."""
    inside = np.flatnonzero((plo >= prof.x0) & (phi <= prof.x1))
    if inside.size == 0:
        return lb
    out = lb.copy()
    top = np.maximum.reduceat(prof.up, plo[inside] - prof.x0, axis=0)
    # reduceat runs each segment to the next start: the last inside piece ends at its phi
    top[-1] = prof.up[plo[inside[-1]] - prof.x0 : phi[inside[-1]] - prof.x0 + 1].max(axis=0)
    out[inside] = np.minimum(lb[inside], top)
    return out


def _spread(lb: np.ndarray, plo: np.ndarray, phi: np.ndarray, k: int) -> np.ndarray:
    """Per piece i, the largest ``lb`` over the pieces meeting ``[plo_i, phi_i + k]``."""
    out = lb.copy()
    for t in range(1, lb.shape[0]):
        reach = plo[t:] <= phi[:-t] + k
        if not np.any(reach):
            break
        out[:-t] = np.where(reach[:, None], np.maximum(out[:-t], lb[t:]), out[:-t])
    return out


def _outside_mass(
    laws: list[tuple[int, int]],
    pa: float,
    pb: float,
    plo: np.ndarray,
    phi: np.ndarray,
    lbk: np.ndarray,
    x0: int,
    x1: int,
) -> np.ndarray:
    """Proven upper bound (log, per column) on ``sum_i lbk_i P(X in piece i, X outside [x0, x1])``
    for every law X between the two ``laws`` (N, j): ``X = Bin(N - j, pa) + Bin(j, pb)``.  The
    laws in between differ by records moved from pa to pb (or removed), each step moving X
    stochastically one way, so each tail is at most the larger at the two ends."""
    out = np.full(lbk.shape[1], -np.inf)
    for sel, cl, cu in (
        (plo < x0, plo, np.minimum(phi, x0 - 1)),
        (phi > x1, np.maximum(plo, x1 + 1), phi),
    ):
        if not np.any(sel):
            continue
        ut = np.max([_log_tail(N, np.array([j]), pa, pb, cl[sel], True)[0] for N, j in laws], axis=0)
        lt = np.max([_log_tail(N, np.array([j]), pa, pb, cu[sel], False)[0] for N, j in laws], axis=0)
        prob = np.minimum(ut, lt)
        out = np.logaddexp(out, logsumexp(prob[:, None] + lbk[sel], axis=0))
    return out


#: the largest number of steps the induction of :func:`_near_certified` takes at once
_K_MAX = 4096


def _near_certified(
    prof: _Profiles,
    n: int,
    pa: float,
    pb: float,
    R: int,
    plo: np.ndarray,
    phi: np.ndarray,
    lb: np.ndarray,
    U: np.ndarray,
) -> bool:
    """Step 3 from vertex a's end: every ``E_j <= U`` for ``j <= R`` (U: the upper bound of the
    largest, ``E_0 <= U``).

    In k steps: with S the ``n - k`` records compositions j and j + k share,
    ``E_{j+k} = E[H^b_k(S)]`` and ``E_j = E[H^a_k(S)]``, ``H^p_k(s) = E[delta(s + Bin(k, p))]``.
    On the range where the profiles are known, ``H^b_k <= f_k H^a_k`` (f_k the largest ratio,
    from the upper profiles over the lower ones); outside it ``H^b_k(s)`` is at most the range
    bound over ``[s, s + k]``, which gives tau.  k = 1 needs log delta monotone; a profile with
    steps (a threshold that moves by whole outputs) needs the k whose shift ``k |pb - pa|``
    spans them: k doubles from 1 until ``f_k < 1``.  The first k compositions (the base of the
    induction) are computed: ``E_i = sum_y Bin(y; n - i, pa) H^b_i(y)`` over the end's window
    (the weights from ``Bin(y; n, pa)`` by the exact ratios ``(n - i - y) / ((n - i)(1 - pa))``),
    plus the range bounds outside it.  All of it runs on ``h = H e^-c``, c linear in x
    through the profile's ends, so every value is a normal float64 (checked).
    """
    if R <= 0:
        return True
    w0, w1 = prof.x0, prof.x1
    shift = R * (pb - pa)  # the mean of S moves by pb - pa per composition
    prof.cover(math.floor(min(w0, w0 + shift)), math.ceil(max(w1, w1 + shift)) + _K_MAX)
    a0, a1 = prof.x0, prof.x1
    up, lo = prof.rows(a0, a1)
    if not (np.all(np.isfinite(up)) and np.all(np.isfinite(lo))):
        return False
    x = np.arange(a0, a1 + 1, dtype=float)
    sig = (up[-1] - up[0]) / max(1, a1 - a0)
    c = up[0][None, :] + (x - a0)[:, None] * sig[None, :]
    if max(float(np.abs(up - c).max()), float(np.abs(lo - c).max())) > 600.0:
        return False
    hb_all = np.exp(up - c)  # delta (upper), scaled by e^-c
    ha_all = np.exp(lo - c)  # delta (lower), scaled
    hrange = float(np.log(hb_all.max() / ha_all.min()))
    # the k-step ratio f_k per column, k doubling (each column keeps its own smallest k)
    ks = np.zeros(up.shape[1], dtype=np.int64)
    lfs = np.zeros(up.shape[1])
    k = 1
    while k <= _K_MAX and np.any(ks == 0):
        for col in np.flatnonzero(ks == 0):
            lf = _step_ratio(hb_all[:, col], ha_all[:, col], float(sig[col]), pa, pb, k, hrange)
            if lf < 0:
                lbk = _spread(lb[:, col : col + 1], plo, phi, k)
                tau = _outside_mass([(n - k, 0), (n - k, R)], pa, pb, plo, phi, lbk, a0, a1 - k)[0]
                gap = math.log(-math.expm1(lf)) - 1e-9
                if tau <= U[col] + gap - 1e-9 * (abs(U[col]) + 1.0):
                    ks[col], lfs[col] = k, lf
        k *= 2
    if np.any(ks == 0):
        return False
    return _bases_below(int(ks.max()), n, pa, pb, w0, w1, a0, up, c, sig, plo, phi, lb, U)


def _step_ratio(hb: np.ndarray, ha: np.ndarray, sig: float, pa: float, pb: float, k: int, hrange: float) -> float:
    """Proven upper bound on ``log max_s H^b_k(s) / H^a_k(s)`` over the s whose k-step average
    is inside the profiled range: ``H^p_k(s) e^-c(s) = sum_t Bin(t; k, p) e^(sig t) h(s + t)``,
    a correlation with a kernel of k + 1 weights (direct sums of non-negative terms, relative
    error ``gamma_(k+1)`` plus the kernel's).  Kernel weights below ``e^-600`` of the largest
    are left out of the numerator's kernel only after adding what they can carry: at most
    ``(k + 1) e^-600`` of its largest weight times the largest h, i.e. ``(k + 1)
    e^(hrange - 600)`` of any term (``hrange`` the log of largest over smallest h)."""
    t = np.arange(k + 1, dtype=float)
    out = []
    for p in (pb, pa):
        lk = lpmf.log_binom_pmf(t, float(k), p) + sig * t
        kern = np.exp(lk - lk.max())
        out.append((kern, float(lk.max())))
    (kb, mb), (ka, ma) = out
    num = np.correlate(hb, kb, "valid")
    den = np.correlate(ha, ka, "valid")
    if not np.all(den > 0):
        return math.inf
    lost = (k + 1) * math.exp(min(hrange - 600.0, 0.0)) if hrange < 600.0 else math.inf
    kern_err = float(lpmf_abs_error(float(np.max(-lpmf.log_binom_pmf(t, float(k), pb))), k, 1))
    err = 2 * kern_err + 2 * float(gamma(k + 2)) + 4 * LIBM_REL + lost + 4 * UNIT * (abs(mb) + abs(ma) + 1)
    return float(np.log((num / den).max())) + mb - ma + err * 1.01


def _bases_below(
    K: int,
    n: int,
    pa: float,
    pb: float,
    w0: int,
    w1: int,
    a0: int,
    up: np.ndarray,
    c: np.ndarray,
    sig: np.ndarray,
    plo: np.ndarray,
    phi: np.ndarray,
    lb: np.ndarray,
    U: np.ndarray,
) -> bool:
    """The base of the induction: ``E_i <= U`` for i = 1 .. K - 1, each computed as
    ``sum_y Bin(y; n - i, pa) H^b_i(y)`` over the end's window (``H^b`` by one averaging step
    per composition on the window's rows, scaled by ``e^-c``; the weights from ``Bin(y; n, pa)``
    by the exact ratios), plus the range bounds of what lies outside the window."""
    rows = slice(w0 - a0, w1 - a0 + K + 1)
    hb = np.exp(up[rows] - c[rows])
    y = np.arange(w0, w1 + 1, dtype=float)
    lw0, lw0_err = _log_weights(y, n, pa)
    ob = lw0[:, None] + c[w0 - a0 : w1 - a0 + 1]
    M = ob.max(axis=0)
    bw = np.exp(ob - M[None, :])
    ratio = np.ones(y.size)
    mags = float(np.abs(lw0).max() + np.abs(c).max() + np.abs(up).max() + np.abs(M).max())
    # rounding of the logs that cancel between bw and h, of the exps, and the weights' own error
    base_err = 8e-16 * mags + 4e-15 + float(log_rel(_window_rel(lw0_err, lw0, up[w0 - a0 : w1 - a0 + 1])))
    # Y ~ Bin(n - i, pa), i = 0 .. K, outside the window: H_i(y) <= the bound over [y, y + i]
    lbk = _spread(lb, plo, phi, K)
    trunc = _outside_mass([(n, 0), (n - K, 0)], pa, pb, plo, phi, lbk, w0, w1)
    eb = np.exp(sig) * pb
    qb, qa = 1.0 - pb, 1.0 - pa
    for i in range(1, K):
        # one more step: H_i(x) = (1 - pb) H_{i-1}(x) + pb H_{i-1}(x + 1), scaled by e^-c
        ratio *= (n - i + 1 - y) / ((n - i + 1) * qa)
        hb = qb * hb[:-1] + eb[None, :] * hb[1:]
        with np.errstate(divide="ignore"):
            val = np.log((bw * (ratio[:, None] * hb[: y.size])).sum(axis=0)) + M
        rel = 1e-15 * (6 * i + 8)  # the i averaging steps and i weight ratios, a dot product
        val = np.logaddexp(val + base_err + float(log_rel(rel + 1e-15 * y.size)), trunc)
        if np.any(val > U):
            return False
    return True


def _certify(mech: Any, n: int, p: list[float], e: np.ndarray, deadline: float = math.inf) -> WindowCertificate | None:
    """Steps 1-3 for the vertices ``p`` (their category-0 probabilities), or None."""
    sds = [math.sqrt(n * q * (1.0 - q)) + 1.0 for q in p]
    plo, phi = _partition(n, [n * q for q in p], max(sds))
    lb = mech._log_profile_range_upper(plo, phi, n, e)
    if lb is None:
        return None
    profs = [_Profiles(mech, n, e, deadline) for _ in p]
    # the more lopsided end first (its profiles are the larger); the other only if needed
    order = sorted(range(len(p)), key=lambda i: -abs(p[i] - 0.5))
    encs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    first = _end_enclosure(profs[order[0]], n, p[order[0]], plo, phi, lb)
    if first is None:
        return None
    encs[order[0]] = first
    lb = _refine(lb, plo, phi, profs[order[0]])
    near = middle_rows = 0
    far = (0, 0)
    if len(p) == 2:
        middle_done = False
        while True:
            U = np.max([u for u, _ in encs.values()], axis=0)
            got_far, middle = _far_failures(n, p[0], p[1], plo, phi, lb, U)
            if got_far is None:
                # a composition in the middle may exceed the first end's expectation but not
                # the other end's (the larger): enclose that end too, then try again; then
                # profile the middle in the columns where it fails, then try again
                need = [i for i in range(2) if i not in encs]
                if not need:
                    if middle_done:
                        return None
                    lb, middle_rows = _refine_middle(mech, n, p, plo, phi, lb, np.flatnonzero(middle), e, deadline)
                    middle_done = True
                    continue
            else:
                far = got_far
                need = [i for i, r in enumerate(far) if r > 0 and i not in encs]
                if not need:
                    break
            got = _end_enclosure(profs[need[0]], n, p[need[0]], plo, phi, lb)
            if got is None:
                return None
            encs[need[0]] = got
            lb = _refine(lb, plo, phi, profs[need[0]])
        for i, r in enumerate(far):
            if r > 0 and not _near_certified(profs[i], n, p[i], p[1 - i], r, plo, phi, lb, U):
                return None
        near = sum(far)
    U = np.max([u for u, _ in encs.values()], axis=0)
    lows = {i: lo for i, (_, lo) in encs.items()}
    end_of = np.array([max(lows, key=lambda i: lows[i][k]) for k in range(e.size)])
    L = np.max(list(lows.values()), axis=0)
    count = sum(pr.up.shape[0] for pr in profs) + middle_rows
    return WindowCertificate(U, L, end_of, count, near, middle_rows)


def window_may_apply(mech: Any, n: int, vertices: np.ndarray, e: np.ndarray) -> bool:
    """Whether :func:`windowed_smoothed` is tried for this case: two categories, at most two hull
    vertices inside the simplex, ``WINDOW_MIN_N <= n <= WINDOW_MAX_N``, and a mechanism that
    bounds its profile over a range of histograms (one O(1) call of its hook tells)."""
    l, m = vertices.shape
    if m != 2 or l > 2 or not WINDOW_MIN_N <= n <= WINDOW_MAX_N:
        return False
    if not all(0.0 < float(vertices[i, 0]) < 1.0 for i in range(l)):
        return False
    probe = mech._log_profile_range_upper(np.array([0]), np.array([n]), n, e)
    return probe is not None


def windowed_smoothed(
    mech: Any, n: int, vertices: np.ndarray, e: np.ndarray, budget: float = math.inf
) -> WindowCertificate | None:
    """The smoothed delta of two categories and at most two hull vertices without the table of
    n + 1 profiles (module docstring), or None when it does not apply or a check fails (the
    caller then runs the full engine, after its own estimate). Raises
    :class:`ComputationTooLarge` when its profiles have taken ``budget`` seconds."""
    if not window_may_apply(mech, n, vertices, e):
        return None
    l = vertices.shape[0]
    p = [float(vertices[i, 0]) for i in range(l)]
    return _certify(mech, n, p, e, time.perf_counter() + budget)


#: nats by which the interval bounds of step 2 exceed the expectations next to an end (their
#: Chernoff slack, measured 6-12 nats at 3e6 .. 1e7 records): the cost model's guess of how many
#: compositions the induction covers
_NEAR_SLACK = 10.0
#: nats between the two ends' expectations (in one column) below which the cost model expects the
#: certificate to profile the middle (measured: 2.9 nats at epsilon = 0.1 and 107 nats at 0.5 for
#: the authors' election history at 10^7 records; only the first needs the middle)
_FLAT_NATS = 20.0


def planned_profiles(mech: Any, n: int, vertices: np.ndarray, e: np.ndarray) -> PlannedProfiles | None:
    """How many histograms :func:`windowed_smoothed` is expected to profile: an estimate for the
    cost model, before any work (a few profiles and O(pieces) arithmetic, no table).

    Per end: the window of step 1 is the span of the pieces whose bound is within the kept nats
    of the largest, with the kept nats that the gap between the range bound and the profile at
    the largest piece (one profile) calls for; the induction of step 3 adds the shift of the
    compositions it covers, ``R |pb - pa|``, and ``_K_MAX`` rows, with ``R`` the compositions
    over which the expectation falls by ``_NEAR_SLACK`` nats at the one-step ratio of the end
    (the slope of log delta at the end's mean, two profiles).  The other end counts when its
    expectation (the largest piece bound less the gap) is within ``_NEAR_SLACK`` of the first's.
    When the two ends' expectations lie within ``_FLAT_NATS`` of each other in some column, delta
    is expected to be nearly flat between the vertices there: both ends and the middle
    (:func:`_refine_middle`) are counted.
    None when the certificate is expected to fail: the gap is beyond the widest window's reach
    (a profile so steep that the expectation sits in the coarse pieces) or no range bound exists."""
    p = [float(vertices[i, 0]) for i in range(vertices.shape[0])]
    sds = [math.sqrt(n * q * (1.0 - q)) + 1.0 for q in p]
    plo, phi = _partition(n, [n * q for q in p], max(sds))
    lb = mech._log_profile_range_upper(plo, phi, n, e)
    if lb is None:
        return None
    cols = np.arange(e.size)
    widths: list[int] = []
    level: list[np.ndarray] = []
    slopes: list[np.ndarray] = []
    for i, pa in enumerate(p):
        piece = _log_range_prob(n, np.array([0]), pa, 0.5, plo, phi)[0][:, None] + lb
        top, it = piece.max(axis=0), piece.argmax(axis=0)
        xm = (plo[it] + phi[it]) // 2
        prof = np.reshape(mech._profile(np.stack([xm, n - xm], axis=1), e).upper, (-1, e.size))[cols, cols]
        gap = np.where(np.isfinite(prof), lb[it, cols] - prof, 6 * _KEEP)
        keep = next((k for k in (_KEEP, 2.5 * _KEEP, 6 * _KEEP) if k >= float(gap.max()) + 40.0), None)
        if keep is None:
            return None
        sel = np.flatnonzero(np.any(piece >= top[None, :] - keep, axis=1))
        i0, i1 = max(0, int(sel[0]) - 1), min(plo.size - 1, int(sel[-1]) + 1)
        widths.append(int(phi[i1] - plo[i0] + 1))
        level.append(top - gap)
        if len(p) == 2:
            pb = p[1 - i]
            x0, h = int(n * pa), max(1, int(sds[i]))
            two = mech._profile(np.array([[x0 - h, n - x0 + h], [x0 + h, n - x0 - h]]), e).upper
            sig = np.nan_to_num((np.reshape(two, (2, -1))[1] - np.reshape(two, (2, -1))[0]) / (2.0 * h))
            lf = np.logaddexp(math.log1p(-pb), math.log(pb) + sig) - np.logaddexp(math.log1p(-pa), math.log(pa) + sig)
            slopes.append(-lf)
    best = np.max(level, axis=0)
    counted = [bool(np.any(lv >= best - _NEAR_SLACK)) for lv in level]
    if len(p) == 1:
        return PlannedProfiles(widths[0], 0, np.zeros(0, dtype=np.int64))
    # a column nearly flat between the vertices: both ends and the middle are profiled, and the
    # induction's reach is set by the other columns
    flat = np.abs(level[0] - level[1]) < _FLAT_NATS
    held = 0
    for i in range(2):
        if not (counted[i] or np.any(flat)):
            continue
        g = float(np.min(slopes[i][~flat])) if np.any(~flat) else float(np.min(slopes[i]))
        R = n // 4 if g <= 0 else min(n // 4, int(_NEAR_SLACK / g))
        held += widths[i] + (int(R * abs(p[1] - p[0])) + _K_MAX if counted[i] else 0)
    if np.any(flat):
        i0, i1 = _middle_span(n, p, plo, phi)
        return PlannedProfiles(held, max(0, int(phi[i1] - plo[i0] + 1)), np.flatnonzero(flat))
    return PlannedProfiles(held, 0, np.zeros(0, dtype=np.int64))
