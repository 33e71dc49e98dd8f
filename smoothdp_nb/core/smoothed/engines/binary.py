"""Algorithm 1 for two categories and at most two hull vertices: O(n^2) exact engines.

The recursion (see :mod:`smoothdp_nb.core.smoothed.delta`): with
``H_r(x) = E[delta(x + Bin(r, p2))]`` over histograms ``x = (k, n - r - k)``,
``E_r = sum_x Bin(x; n - r, p1) H_r(x)`` is the expectation for the
composition ``(n - r, r)``, and one more record of vertex 2 is one averaging
step ``H_{r+1}(x) = (1 - p2) H_r(x) + p2 H_r(x + 1)``.

* :func:`exact_binary` -- block floating point in chunks of K + 1 values, K = 128
  compositions per pair of triangular BLAS products, only the chunks of H
  that can still matter advanced (:func:`block_schedule`), exact at every
  magnitude (the argument, with what is left out, is in its docstring;
  checked as it runs).
* :func:`exact_binary_blocks` -- block floating point, one averaging step per
  composition: the fallback for data that fail those checks.
* :func:`exact_binary_shift` -- the degenerate vertex p2 = 1.

The binomial laws are in :mod:`~smoothdp_nb.core.smoothed.engines.binomial`, the block plan and
schedule in :mod:`~smoothdp_nb.core.smoothed.engines.schedule`, the proven error bound in
:mod:`~smoothdp_nb.core.smoothed.engines.error_bound`; their names are importable from here too.

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Algorithm 1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.linalg.blas import dtrmm
from scipy.special import logsumexp

from smoothdp_nb.core.smoothed.engines.binomial import ANCHOR_ERROR, ANCHOR_STEP, BinomialWeights, log_binom_vector
from smoothdp_nb.core.smoothed.engines.error_bound import engine_error
from smoothdp_nb.core.smoothed.engines.schedule import (
    ADVANCE_RANGE,
    BLOCK_STEPS,
    BinaryPlan,
    binary_plan,
    block_at,
    block_schedule,
    block_steps,
    log_slope,
    truncation_level,
    window_log_bound,
)

__all__ = [
    "ANCHOR_ERROR",
    "ANCHOR_STEP",
    "BinomialWeights",
    "BinaryPlan",
    "binary_plan",
    "block_at",
    "block_schedule",
    "block_steps",
    "engine_error",
    "log_binom_vector",
    "log_slope",
    "truncation_level",
    "window_log_bound",
    "exact_binary",
    "exact_binary_blocks",
    "exact_binary_shift",
]

# block size of the block-floating-point averaging (see exact_binary_blocks)
_BLOCK = 256

# Ranges (natural logs) that keep every product of the blocked path a normal
# float64 (> 2^-1022 = e^-708): operands of the advance >= e^-500 of their
# scale (schedule.ADVANCE_RANGE) times kernel weights >= 2^-250 = e^-173;
# correlation operands >= e^-340 (weights) and e^-340 (H) of their scales;
# lags >= e^-340 times mixing weights >= 2^-500 = e^-347.
_SEG_RANGE = 340.0
_NORMAL_RANGE = 700.0  # e^-700 > 2^-1022: the smallest normal float64 is e^-708.4
_SEGMENT = 8  # at most this many chunks per segment of the correlation

# H is kept as float64 mantissas times 2^e with e an int64 per chunk (or block):
# the exponent of an all-zero chunk, below every real one (|e| < 2^31 for any
# float64 log), so a difference with it is hugely negative and 2^d of it is 0
_ZERO_EXP = -(2**40)
_LN2 = math.log(2.0)


def _block_mixing(K: int, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """(K, K) matrix whose column j is the law of Bin(K-1-j, p1) + Bin(j, p2),
    from the tables ``t1``, ``t2`` of :meth:`BinomialWeights.table` (size >= K-1).

    Inside a block of K compositions r0 .. r0+K-1, composition r0+j differs
    from the block's base (n - r0 - K + 1 records of vertex 1, r0 of vertex 2)
    by K-1-j more records of vertex 1 and j more of vertex 2.
    """
    return np.stack([np.convolve(t1[K - 1 - j, : K - j], t2[j, : j + 1]) for j in range(K)], axis=1)


def _advance_matrices(K: int, t2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B0, B1) such that K averaging steps on H stored in chunks of Q = K+1
    values are ``chunk @ B0 + next_chunk @ B1`` (a banded Toeplitz product
    split across two chunks); ``t2`` is the table of Bin(., p2) up to size K."""
    Q = K + 1
    kern = t2[K]  # H_{r+K}(x) = sum_i kern[i] H_r(x + i)
    t = np.arange(Q)
    diff = t[:, None] - t[None, :]  # source offset tau' - tau within a chunk
    B0 = np.where((diff >= 0) & (diff <= K), kern[np.clip(diff, 0, K)], 0.0)
    diff1 = diff + Q  # source in the next chunk
    B1 = np.where((diff1 >= 0) & (diff1 <= K), kern[np.clip(diff1, 0, K)], 0.0)
    return B0, B1


def _pow2(d: np.ndarray) -> np.ndarray:
    """2^d for integer d <= 1020 (float64; 0 or subnormal below -1022, used only
    where the operand is zero or a range check fails)."""
    out: np.ndarray = np.ldexp(1.0, np.maximum(d, -1100))
    return out


def _exponents(mx: np.ndarray) -> np.ndarray:
    """int64 e with mx = f 2^e, 1/2 <= f < 1 (0 for mx = 0), at least -1020:
    dividing by 2^e is exact on normal floats and brings the largest value to
    [1/2, 1) (below 2^-1021, only part of the way, so that 2^-e stays finite)."""
    out: np.ndarray = np.maximum(np.frexp(mx)[1].astype(np.int64), -1020)
    return out


def _to_pow2(lg: np.ndarray, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mantissas, int64 exponents): ``exp(lg)`` (..., Q) as ``M 2^e`` per group
    of the last axis, ``top`` its largest log (-inf: all zero, exponent
    ``_ZERO_EXP``).  ``e = floor(top / ln 2) + 1``, so every ``M <= 1 + 2u``;
    ``M = exp(lg - e ln 2)`` carries ``LIBM_REL`` of exp, ``u |lg - e ln 2|``
    of the subtraction and ``2u |e| ln 2`` of the product ``e * fl(ln 2)``
    (see :func:`~smoothdp_nb.core.smoothed.engines.error_bound.engine_error`)."""
    ok = np.isfinite(top)
    e = np.where(ok, np.floor(np.where(ok, top, 0.0) / _LN2) + 1.0, 0.0)
    M: np.ndarray = np.exp(lg - (e * _LN2)[..., None])
    return M, np.where(ok, e.astype(np.int64), _ZERO_EXP)


def _log_min_nonzero(X: np.ndarray) -> np.ndarray:
    """log of the smallest nonzero entry along the last axis (0 when all are zero)."""
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.log(np.where(X > 0, X, 1.0).min(axis=-1))
    return out


def exact_binary(
    logdelta: np.ndarray,
    p1: float,
    p2: float,
    bar: Any,
    block: int = BLOCK_STEPS,
    work: dict[str, int] | None = None,
    plan: BinaryPlan | None = None,
    stats: dict[str, float] | None = None,
    stop: int | None = None,
) -> np.ndarray:
    """log E for every composition (c1 = n - r, r) of two vertices, m = 2, exact at every magnitude.

    ``logdelta``: (n+1, E) log delta of histogram (k, n-k).  Returns (n+1, E)
    indexed by r = number of records following vertex 2.

    The recurrence: with ``H_r(x) = E[delta(x + Bin(r, p2))]``,
    ``E_r = sum_x Bin(x; n - r, p1) H_r(x)`` and one more record from vertex
    2 is one averaging step ``H_{r+1}(x) = (1 - p2) H_r(x) + p2 H_r(x + 1)``.
    Compositions are taken ``K`` at a time (K <= ``block``), as matrix
    products: the O(n^2) work at BLAS speed, n/K interpreter round trips.

    * ``H`` is stored in chunks of ``Q = K + 1`` values, each chunk as float64
      values (largest in [1/2, 1)) times its own scale ``2^sc``, ``sc`` an
      int64 exponent (block floating point).  K averaging steps are one
      banded Toeplitz product with the law of Bin(K, p2), split across a
      chunk and the next (:func:`_advance_matrices`), after bringing the two
      chunks to the larger of their exponents; the result is renormalised
      by ``frexp``.  Both are multiplications by powers of two, exact on the
      normal numbers the checks below guarantee, and the exponents add as
      integers: the scales carry no rounding however many advances run (the
      one conversion to a natural log per expectation is in
      :func:`~smoothdp_nb.core.smoothed.engines.error_bound.engine_error`; ``stats``
      receives the largest converted log scale, ``"log_scale_max"``).
    * The K expectations of a block come from K lags of the correlation of
      ``H_{r0}`` with the binomial weights of the block's base (in segments,
      each with its own scale for H and for the weights, combined in log
      space), mixed by :func:`_block_mixing`.
    * Only the chunks of ``H_r`` that can still matter are advanced
      (:func:`block_schedule`): the values ``x`` within the Hoeffding radius
      of ``[(n - r) min(p1, p2), (n - r) max(p1, p2)]``; the others are set to 0.

    Why no term is lost.  Every quantity is a sum of products of non-negative
    numbers, so the only way to lose a term is underflow.  K is chosen so
    that every nonzero binomial weight of up to K records (advance kernel,
    mixing matrix) is >= 2^-250 and a chunk pair spans less than e^-240 of
    range at the largest slope of log delta; segments likewise.  The path
    then checks, as it goes, the quantities the argument needs: every
    nonzero operand of an advance is >= e^-500 of the pair's scale, every
    nonzero value of H brought to a correlation segment's scale >= e^-700
    (so none vanishes on the way), every nonzero weight and H value of a
    segment >= e^-340 of the segment's scales, every nonzero lag (checked
    in log space) >= e^-340 of the largest.  Near the edges of the advanced
    range (below) H can be steeper than delta; the checks, not the slope
    bound, are what the argument rests on.  Then every
    product is >= e^-687 > 2^-1022: all arithmetic is on normal float64
    numbers, so each result carries only the relative rounding error of sums
    of non-negative terms (a few ulp per operation, as in float64 without
    underflow), and a zero is produced only from exact zeros.

    What is left out, on purpose.  Order the n - r' records of vertex 1 and
    the r' of vertex 2 of composition r' so that the latter come in the order
    the recursion adds them: ``X1 ~ Bin(n - r', p1)`` and ``Y_r`` the count of
    vertex-2 records added after step r.  Setting ``H_r`` to 0 outside
    ``[L_r, U_r]`` and weighting only ``x`` in ``[a, b]`` gives exactly
    ``E[delta(X1 + X2) 1_A]`` with ``A = {X1 in [a, b]} and {X1 + Y_r in
    [L_r, U_r] at every truncation r <= r'}`` (by induction on the blocks:
    every operation is a sum over the same non-negative terms).  X1 and
    ``X1 + Y_r`` are sums of ``n - r'`` and ``n - r`` independent Bernoulli
    variables whose means lie in those intervals' centres (``[a, b]``) or
    between ``(n - r) min(p1, p2)`` and ``(n - r) max(p1, p2)`` (``[L_r, U_r]``),
    each widened by the Hoeffding radius ``sqrt(level (n - r) / 2)``, so by
    Hoeffding each event fails with probability at most ``2 exp(-level)``.
    With ``level`` = :func:`window_log_bound` + log(blocks + 1), the union
    over the at most ``blocks + 1`` events is below ``2^-60 min delta /
    max delta``, so the terms left out are below ``2^-60`` of every
    expectation (which is at least min delta).  If some delta(x) = 0 nothing
    is left out.

    An epsilon column whose values fail a range check is recomputed by
    :func:`exact_binary_blocks`, one averaging step per composition.

    ``work``, if given, receives the counts of work units (multiply-adds of
    the advance and of the correlation, correlation segments, blocks) that
    :func:`smoothdp_nb.core.smoothed.engines.cost.binary_work_units` predicts.
    ``plan`` (:func:`binary_plan` of a superset of the columns) makes a
    call on some columns do exactly what a call on all of them does.
    ``stop`` (default n): compute compositions 0 .. stop only (the others
    are -inf), with H's windows sized for those
    (:func:`~smoothdp_nb.core.smoothed.engines.schedule.block_at`; the argument
    above holds with r' <= stop).
    """
    n = logdelta.shape[0] - 1
    E = logdelta.shape[1]
    if p2 >= 1.0:  # every record from vertex 2 is category 0: H shifts by one per step
        return exact_binary_shift(logdelta, p1)
    K, level, slope = binary_plan(logdelta, p1, p2, block) if plan is None else plan
    Q = K + 1
    C = (n + 1) // Q + 2  # one spare chunk: the advance reads "the next chunk"
    lg = np.full((E, C * Q), -np.inf)
    lg[:, : n + 1] = logdelta.T
    lg3 = lg.reshape(E, C, Q)
    M, sc = _to_pow2(lg3, lg3.max(axis=2))  # H = M 2^sc, sc (E, C) int64
    lmin = _log_min_nonzero(M)  # (E, C)
    failed = np.zeros(E, dtype=bool)
    # Bin(., p) for up to K records: small sizes, so log-gamma is accurate to ~1e-14
    t1, t2 = BinomialWeights(K, p1).table(), BinomialWeights(K, p2).table()
    B0, B1 = _advance_matrices(K, t2)
    mixing = {K: _block_mixing(K, t1, t2)}
    out = np.full((n + 1, E), -np.inf)
    weights = BinomialWeights(n, p1)
    g_h = int(_SEG_RANGE / slope) if slope > 0 else _SEGMENT * Q  # H spans < e^-340 over g_h values
    units = dict(advance=0, correlation=0, segments=0, blocks=0) if work is None else work
    for key in ("advance", "correlation", "segments", "blocks"):
        units.setdefault(key, 0)
    live_lo, live_hi = 0, n // Q  # chunks that may hold nonzero values; zeros elsewhere
    for r0, k, a, b, lo, hi in block_schedule(n, K, p1, p2, level, stop):
        r1 = r0 + k - 1
        lw = weights.window(n - r1, level)[2]
        if stats is not None:  # for the error bound (engine_error): the smallest weight used
            fin = lw[np.isfinite(lw)]
            stats["log_weight_max"] = max(stats.get("log_weight_max", 0.0), float(np.max(-fin, initial=0.0)))
        slope_w = float(np.abs(np.diff(lw)).max()) if lw.size > 1 else 0.0
        G = min(_SEGMENT * Q, g_h - k + 1, int(0.9 * _SEG_RANGE / slope_w) if slope_w > 0 else _SEGMENT * Q)
        G = max(1, G)
        lags, seg_failed, n_x, mag = _block_lags(lw, a, b, k, G, Q, M, sc, lmin)
        failed |= seg_failed
        if stats is not None:  # for the error bound: the largest log scale converted
            stats["log_scale_max"] = max(stats.get("log_scale_max", 0.0), mag)
        units["segments"] += -(-n_x // G)
        units["correlation"] += E * n_x * k
        if k not in mixing:
            mixing[k] = _block_mixing(k, t1, t2)
        top = lags.max(axis=1)
        ftop = np.where(np.isfinite(top), top, 0.0)
        ln = np.exp(lags - ftop[:, None])
        with np.errstate(invalid="ignore"):  # checked on the logs: a lag that underflows in exp is caught too
            failed |= np.where(np.isfinite(lags), lags - ftop[:, None], 0.0).min(axis=1) < -_SEG_RANGE
        vals = ln @ mixing[k]  # (E, k): E_{r0 + j} relative to exp(top)
        with np.errstate(divide="ignore"):
            out[r0 : r1 + 1] = (np.log(vals) + ftop[:, None]).T
        if hi >= lo:
            # H_{r0+K} on chunks lo .. hi, from chunks lo .. hi + 1 of H_{r0};
            # each pair of chunks (c, c+1) is brought to the larger exponent first
            # (a multiplication by 2^d, d <= 0: exact, every operand staying normal)
            s0, s1 = sc[:, lo : hi + 1], sc[:, lo + 1 : hi + 2]
            top2 = np.maximum(s0, s1)
            d0, d1 = s0 - top2, s1 - top2
            low0 = np.where(s0 > _ZERO_EXP, lmin[:, lo : hi + 1] + d0 * _LN2, 0.0)
            low1 = np.where(s1 > _ZERO_EXP, lmin[:, lo + 1 : hi + 2] + d1 * _LN2, 0.0)
            failed |= np.minimum(low0, low1).min(axis=1) < -ADVANCE_RANGE
            f0, f1 = _pow2(d0), _pow2(d1)
            # B0 is lower triangular and B1 strictly upper: triangular products (BLAS
            # trmm) skip the zero halves, on the transposed (Fortran-order) views
            c = hi - lo + 1
            Y0 = (M[:, lo : hi + 1] * f0[:, :, None]).reshape(-1, Q)
            Y1 = (M[:, lo + 1 : hi + 2] * f1[:, :, None]).reshape(-1, Q)
            X = dtrmm(1.0, B0, Y0.T, side=0, lower=1, trans_a=1, overwrite_b=1).T
            X += dtrmm(1.0, B1, Y1.T, side=0, lower=0, trans_a=1, overwrite_b=1).T
            X = X.reshape(E, c, Q)
            units["advance"] += E * c * Q * Q  # the nonzero halves of B0 and B1
            mx = X.max(axis=2)  # (E, c)
            ex = _exponents(mx)
            X *= _pow2(-ex)[:, :, None]  # exact: largest value to [1/2, 1)
            sc[:, lo : hi + 1] = np.where(mx > 0, top2 + ex, _ZERO_EXP)
            M[:, lo : hi + 1] = X
            lmin[:, lo : hi + 1] = _log_min_nonzero(X)
            # the chunks that were live and are not any more: zero (left out, see above)
            for z0, z1 in ((live_lo, lo), (hi + 1, live_hi + 1)):
                if z1 > z0:
                    M[:, z0:z1] = 0.0
                    sc[:, z0:z1] = _ZERO_EXP
            live_lo, live_hi = lo, hi
        units["blocks"] += 1
        if bar is not None:
            bar.update(k)
    if np.any(failed):
        if bar is not None:  # the slower exact pass starts over
            bar.reset(total=n + 1)
            bar.set_description("compositions (one step per composition)")
        out[:, failed] = exact_binary_blocks(logdelta[:, failed], p1, p2, bar=bar, stats=stats)
        if stats is not None:
            stats["fallback"] = 1.0
    return out


def _block_lags(
    lw: np.ndarray,
    a: int,
    b: int,
    k: int,
    G: int,
    Q: int,
    M: np.ndarray,
    sc: np.ndarray,
    lmin: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int, float]:
    """``log lags[e, t] = log sum_x w(x) H_{r0}(x + t)``, t = 0 .. k-1, x = a .. b,
    for every column e at once: all the correlation segments of a block in one pass.

    The window's log weights ``lw`` are cut into segments of G values, each
    with its own scale for the weights and for H (the largest of its chunks'
    scales, then the segment's own largest value), exactly as the segment
    checks of :func:`exact_binary` require, all prepared in one pass; the
    correlations are one ``np.correlate`` per segment and column, and the segments are combined
    in log space (one ``exp`` per term, a sum of non-negative terms, one
    ``log``).  H is stored in chunks of Q values: ``M`` (E, C, Q) times
    ``2^sc`` with ``sc`` (E, C) int64 exponents, ``lmin`` the log of each
    chunk's smallest nonzero value.  Every change of exponent is a
    multiplication by a power of two (exact); the only rounding of a scale is
    the one conversion ``sh * fl(ln 2)`` of each segment's exponent.  Returns
    the (E, k) log lags, the columns that failed a range check, the number of
    segments that did work, and the largest ``|sh ln 2| + |log weight scale|``
    among live segments (for the error bound).
    """
    E = M.shape[0]
    span = b - a + 1
    S = -(-span // G)
    flat = np.full(S * G, -np.inf)
    flat[:span] = lw
    LW = flat.reshape(S, G)
    x0 = a + G * np.arange(S)
    x1 = np.minimum(x0 + G, b + 1)  # segment s weighs x0[s] .. x1[s] - 1
    sw = LW.max(axis=1)  # (S,)
    seg_ok = np.isfinite(sw)
    fsw = np.where(seg_ok, sw, 0.0)
    wn = np.exp(LW - fsw[:, None])  # 0 on the padding
    pad = np.arange(G)[None, :] >= (x1 - x0)[:, None]
    w_low = np.where(pad, np.inf, LW).min(axis=1) - fsw < -_SEG_RANGE
    # chunks c0 .. c1 hold H(x0 .. x1 + k - 2); the segment's H scale is their largest
    c0, c1 = x0 // Q, (x1 + k - 2) // Q
    ncm = int((c1 - c0).max()) + 1
    cidx = np.minimum(c0[:, None] + np.arange(ncm)[None, :], c1[:, None])  # (S, ncm), the last repeated
    seg_sc = sc[:, cidx]  # (E, S, ncm)
    shs = seg_sc.max(axis=2)  # (E, S)
    dseg = seg_sc - shs[:, :, None]  # <= 0
    # every nonzero value brought to the segment's scale stays a normal number (none
    # vanishes): its chunk's smallest nonzero value times the factor is >= e^-700
    low = np.where(seg_sc > _ZERO_EXP, lmin[:, cidx] + dseg * _LN2, 0.0).min(axis=2)
    failed = np.any((low < -_NORMAL_RANGE) & seg_ok[None, :], axis=1)
    # H(x0 + j), j = 0 .. G + k - 2, in the segment's scale (0 past the segment's end)
    X = x0[:, None] + np.arange(G + k - 1)[None, :]  # (S, G + k - 1)
    inside = X <= (x1 + k - 2)[:, None]
    Xc = np.minimum(X, M.shape[1] * Q - 1)
    Mf = M.reshape(E, -1)
    # each chunk's factor to the segment's scale (0 for all-zero chunks), spread over its values
    fac_c = _pow2(dseg)  # (E, S, ncm)
    rel = np.minimum(Xc // Q - c0[:, None], ncm - 1)  # (S, G + k - 1): chunk within the segment
    fac = np.take_along_axis(fac_c, np.broadcast_to(rel[None], (E,) + rel.shape), axis=2)
    Hs = np.where(inside[None], Mf[:, Xc] * fac, 0.0)
    hm = Hs.max(axis=2)  # the segment's own largest value (its chunks' may lie outside it)
    live = (hm > 0) & seg_ok[None, :]
    eh = _exponents(hm)
    Hs *= _pow2(-eh)[:, :, None]  # exact: the largest value to [1/2, 1)
    sh = np.where(live, (shs + eh) * _LN2, -np.inf)  # the one conversion to a natural log
    worked = np.any(live, axis=0)  # segments with some live column (the others do nothing)
    with np.errstate(divide="ignore"):
        hlow = np.log(np.where(Hs > 0, Hs, 1.0).min(axis=2))
    failed |= np.any(((hlow < -_SEG_RANGE) | w_low[None, :]) & worked[None, :], axis=1)
    # part[e, s, t] = sum_j Hs[e, s, t + j] wn[s, j]: np.correlate (BLAS dots; einsum over a sliding view is 2-3x slower)
    part = np.zeros((E, S, k))
    for e, j in zip(*np.nonzero(live)):
        part[e, j] = np.correlate(Hs[e, j], wn[j], "valid")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.log(part) + fsw[None, :, None] + sh[:, :, None]  # (E, S, k)
    terms = np.where(live[:, :, None], terms, -np.inf)
    top = terms.max(axis=1)  # (E, k)
    ftop = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        lags = np.log(np.exp(terms - ftop[:, None, :]).sum(axis=1)) + ftop
    mag = float(np.max(np.abs(sh[live]), initial=0.0)) + float(np.max(np.abs(fsw[seg_ok]), initial=0.0))
    return lags, failed, int((x1 - x0)[worked].sum()), mag


def _fill_zero_blocks(e: np.ndarray) -> np.ndarray:
    """Exponents (nb, E) with every all-zero block's (``_ZERO_EXP``) replaced by
    that of the nearest nonzero block above it (0 if none): an averaging step
    moves values down one x, so what a zero block receives arrives in the
    scale of the block above and stays a normal number."""
    nb = e.shape[0]
    idx = np.where(e > _ZERO_EXP, np.arange(nb)[:, None], nb)
    nxt = np.minimum.accumulate(idx[::-1], axis=0)[::-1]
    ext = np.concatenate([e, np.zeros((1, e.shape[1]), dtype=np.int64)])
    out: np.ndarray = np.take_along_axis(ext, nxt, axis=0)
    return out


def exact_binary_blocks(
    logdelta: np.ndarray,
    p1: float,
    p2: float,
    block: int = _BLOCK,
    bar: Any = None,
    stats: dict[str, float] | None = None,
) -> np.ndarray:
    """log E for every composition (c1 = n - r, r) of two vertices, m = 2.

    ``logdelta``: (n+1, E) log delta of histogram (k, n-k).  Returns (n+1, E)
    indexed by r = number of records following vertex 2.

    Block floating point: H is stored as float64 values times ``2^e[b]``, one
    int64 exponent per block of ``block`` consecutive x (and per epsilon).
    The averaging step ``(1 - p2) H(x) + p2 H(x + 1)`` only mixes x with
    x + 1, so a value crosses into the neighbouring block one entry per step
    and only the entries at block boundaries need the ratio of the two
    scales, a power of two (an exact multiplication).  Every 8 steps, or
    after a large jump between neighbours, each block's largest value is
    brought back to [1/2, 1) by a power of two (exact; the exponent changes
    by an integer).  A term can only be lost to underflow if it is below
    2^-1022 of its block's largest term, which is itself part of the
    expectation -- so every expectation is exact to rounding, however small
    (1e-5000 included), at float64 speed.  The one rounding of a scale is
    the conversion ``e * fl(ln 2)`` when an expectation is formed; ``stats``,
    if given, receives the largest ``|e ln 2|`` plus weight scale so
    converted (``"log_scale_max"``) and the largest ``-log`` of a window
    weight (``"log_weight_max"``), for the error bound.
    """
    n = logdelta.shape[0] - 1
    E = logdelta.shape[1]
    q2 = 1.0 - p2
    if q2 == 0.0:  # every record from vertex 2 is category 0: H shifts by one per step
        return exact_binary_shift(logdelta, p1)
    B = block
    nb = n // B + 1  # blocks cover x = 0 .. nb*B - 1 >= n
    L = nb * B
    lg_x = np.full((L, E), -np.inf)
    lg_x[: n + 1] = logdelta
    lgb = lg_x.reshape(nb, B, E).transpose(0, 2, 1)  # (nb, E, B)
    Mb, scale = _to_pow2(lgb, lgb.max(axis=2))  # (nb, E, B), (nb, E) int64
    scale = _fill_zero_blocks(scale)
    H = np.ascontiguousarray(Mb.transpose(0, 2, 1)).reshape(L, E)  # (L, E), 0 beyond x = n
    H3 = H.reshape(nb, B, E)
    tmp = np.empty_like(H)
    out = np.full((n + 1, E), -np.inf)
    weights = BinomialWeights(n, p1)
    ends = np.arange(B - 1, L - 1, B)  # last x of each block but the final one
    since = 0
    mag = lwm = 0.0
    log_bound = window_log_bound(logdelta)
    for r in range(n + 1):
        s = n - r
        a, b, lw_ab = weights.window(s, log_bound, loader=False)
        ba, bb = a // B, b // B
        lw_flat = np.full(((bb - ba + 1) * B,), -np.inf)  # padded to whole blocks
        lw_flat[a - ba * B : b - ba * B + 1] = lw_ab
        lw = lw_flat.reshape(-1, B)
        top = lw.max(axis=1)  # (blocks,)
        ew = np.exp(lw - top[:, None])
        dots = np.matmul(ew[:, None, :], H3[ba : bb + 1])[:, 0, :]
        sc_nat = scale[ba : bb + 1] * _LN2  # the one conversion of an exponent to a natural log
        live = dots > 0
        if stats is not None:
            mag = max(mag, float(np.max(np.abs(sc_nat[live]), initial=0.0)) + float(np.max(np.abs(top))))
            # only the weights that enter a product (one that underflows to 0 is a lost term)
            lwm = max(lwm, float(np.max(-lw[ew > 0], initial=0.0)))
        with np.errstate(divide="ignore"):
            v = np.log(dots) + top[:, None] + sc_nat
        vmax = v.max(axis=0)
        safe = np.where(np.isfinite(vmax), vmax, 0.0)
        with np.errstate(divide="ignore"):
            out[r] = np.log(np.exp(v - safe).sum(axis=0)) + safe
        if bar is not None and r % 64 == 63:
            bar.update(64)
        if r < n:
            # H_{r+1}(x) = (1 - p2) H_r(x) + p2 H_r(x + 1): one more record from vertex 2.
            # At a block's last x, H_r(x + 1) is in the next block's scale.
            nbi = s // B  # blocks 0 .. nbi-1 end at some x <= s - 1 (their next x is <= s)
            jump = scale[1 : nbi + 1] - scale[:nbi]
            while nbi and jump.max() > 1000:
                # 2^jump could overflow: such a block first takes its neighbour's exponent
                # (what underflows is below 2^-1074 of that scale); rare, so a loop
                far = np.where(jump > 1000, jump, 0)
                H3[:nbi] = np.ldexp(H3[:nbi], -far[:, None, :])
                scale[:nbi] += far
                jump = scale[1 : nbi + 1] - scale[:nbi]
            np.multiply(H[1 : s + 1], p2, out=tmp[:s])
            if nbi:
                tmp[ends[:nbi]] *= _pow2(jump)
                big = jump.max() > 400
            else:
                big = False
            H[:s] *= q2
            H[:s] += tmp[:s]
            H[s] = 0.0
            since += 1
            if big or since >= 8:
                # renormalise: each block's largest value back to [1/2, 1), exactly
                mx = H3.max(axis=1)  # (nb, E)
                ex = _exponents(mx)
                H3 *= _pow2(-ex)[:, None, :]
                scale = _fill_zero_blocks(np.where(mx > 0, scale + ex, _ZERO_EXP))
                since = 0
    if stats is not None:
        stats["log_scale_max"] = max(stats.get("log_scale_max", 0.0), mag)
        stats["log_weight_max"] = max(stats.get("log_weight_max", 0.0), lwm)
    return out


def exact_binary_shift(logdelta: np.ndarray, p1: float) -> np.ndarray:
    """p2 = 1: the r records of vertex 2 are all category 0, so
    E_r = E[delta(Bin(n - r, p1) + r)] -- a log-space dot product per r."""
    n = logdelta.shape[0] - 1
    out = np.empty_like(logdelta)
    for r in range(n + 1):
        lw = log_binom_vector(n - r, p1)
        out[r] = logsumexp(lw[:, None] + logdelta[r:], axis=0)
    return out
