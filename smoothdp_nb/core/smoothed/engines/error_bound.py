"""The proven error bound of the two-vertex engines (:mod:`smoothdp_nb.core.smoothed.engines.binary`)."""

from __future__ import annotations

import math

from smoothdp_nb.core.numerics.enclosures import LGAMMA_REL, LIBM_REL, U, gamma, lpmf_abs_error
from smoothdp_nb.core.smoothed.engines.binomial import ANCHOR_ERROR

__all__ = ["engine_error"]


def engine_error(
    n: int,
    K: int,
    log_weight_max: float,
    fallback: bool = False,
    p1: float = 0.5,
    log_delta_max: float = 0.0,
    log_scale_max: float = math.inf,
    log_bound: float = math.inf,
) -> float:
    """Proven bound on the relative error of every expectation of the two-vertex
    engines (:func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary`, :func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary_blocks`), given exact profile values.

    Every quantity is a sum of products of non-negative numbers, so each
    floating-point operation adds a relative error of at most u (Higham,
    eq. (3.4)) and relative errors add along the chain:

    * an advance of K steps is a dot product of at most ``Q = K + 1`` terms
      split over two triangular products and their sum (``2Q + 2``
      roundings) with table entries within ``u + 2 LIBM_REL + 2u`` of the
      exact law (:meth:`~smoothdp_nb.core.smoothed.engines.binomial.BinomialWeights.table`),
      and there are at most ``n/K + 2`` advances; a one-step advance of the
      fallback, ``fl(1 - p2) H(x) + p2 H(x + 1)``, takes 4 roundings (with
      that of ``1 - p2``), at most n + 1 of them, counted only if the
      fallback ran; an expectation is a correlation and a mixing product (at
      most ``n + 2K`` roundings);
    * a weight of Loader's log-pmf is within
      :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error` of its value
      (``|log w| <= log_weight_max``; :data:`~smoothdp_nb.core.smoothed.engines.binomial.ANCHOR_ERROR`
      more between the anchors of :meth:`~smoothdp_nb.core.smoothed.engines.binomial.BinomialWeights.window`;
      the per-composition fallback's log-factorial weights carry
      ``3 LGAMMA_REL log n! + 4u`` of their terms instead).  Truncations
      (Hoeffding and the dropped chunks) are below ``2^-60`` relative
      (:func:`~smoothdp_nb.core.smoothed.engines.binary.exact_binary`).

    The weights' error grows with ``|log w|``, but the smallest weights carry
    almost none of an expectation.  With ``log_bound`` =
    :func:`~smoothdp_nb.core.smoothed.engines.schedule.window_log_bound` of the
    profile (``log 2^61 + log(max delta / min delta)``, finite when every
    delta > 0) and ``cut = log_bound + log(n + 1)``: the weights computed
    below ``e^-cut`` are, exactly, below ``e^(-cut + eps)`` (``eps`` the
    weight error at ``log_weight_max``), at most n + 1 of them, times H <=
    max delta, while the truncated expectation is at least ``(1 - 2^-60) min
    delta``; so they carry at most ``2^-60 e^eps`` of it and add at most that
    times ``expm1(eps)``.  Every other weight has ``|log w| <= cut``, and its
    error is that at ``cut``.

    Scales.  H is kept as float64 mantissas times ``2^e`` with an int64
    exponent ``e`` per chunk (or block).  Two chunks are aligned by a
    multiplication by ``2^d`` with ``d`` an exponent difference, and a chunk
    is renormalised by ``frexp`` and a multiplication by ``2^-e``: both are
    exact on normal float64 numbers (IEEE 754: the significand is unchanged),
    which the range checks guarantee, and the exponents are added as
    integers (exactly).  So, unlike a running float log scale, the scales
    accumulate no error over the advances.  What remains are a bounded
    number of conversions per value or per expectation:

    * a profile value becomes ``exp(lg - e fl(ln 2)) 2^e`` once
      (``e = floor(lg_max / ln 2) + 1``): ``LIBM_REL`` of exp, ``u |lg - e ln
      2| <= 745 u`` of the subtraction (a nonzero normal result is at least
      ``2^-1074``), and ``2u |e| ln 2 <= 2u (log_delta_max + 1)`` of the
      product with ``fl(ln 2)`` (within ``u/4`` relative of ln 2) and its
      rounding; a weight is brought to its segment's scale the same way
      (``745 u + LIBM_REL``);
    * an expectation converts each exponent once, ``e * fl(ln 2)`` (``2u |e
      ln 2|``), and then adds and subtracts natural logs in a log-sum-exp
      over segments (or blocks) and the mixing step: at most 10 roundings of
      magnitude at most ``A = log_scale_max + 750 + log(n + 1)``
      (``log_scale_max``: the largest ``|e ln 2|`` plus the weight scale the
      engine converted, recorded as it runs; a log of a partial sum of
      products of normal numbers below 1 adds at most 745 + log(n + 1)),
      so ``12 u A`` with the two of the conversion; and ``exp``/``log`` of
      arguments at most ``750 + log(n+1)`` (a segment's correlation) and
      ``350`` (the mixing), ``LIBM_REL`` relative each: ``LIBM_REL (1100 + 2
      log(n + 1))`` with the two ``exp`` of relative quantities.

    ``log_scale_max`` not given (``inf``): no bound (``inf``).
    """
    Q = K + 1
    advances = n // max(K, 1) + 2
    chain = advances * (2 * Q + 2) + n + 2 * K + 64 + (4 * (n + 1) if fallback else 0)
    table = advances * (2 * LIBM_REL + 3 * U)

    # (+ 3u n: q = 1 - p is rounded, and Loader's formula then carries e^(-n (p + q - 1)))
    # (+ the fill-in between Loader anchors, BinomialWeights._anchored)
    def loader(lw: float) -> float:
        return float(lpmf_abs_error(lw, n, 1)) + 3.03 * U * n + ANCHOR_ERROR[0] + ANCHOR_ERROR[1] * lw

    cut = log_bound + math.log(n + 1.0)
    full = loader(log_weight_max)
    if full > 700.0:  # the weights' log error alone exceeds any useful bound (and exp would overflow)
        return math.inf
    if cut < log_weight_max:  # the weights below e^-cut: at most 2^-60 e^full of the expectation
        weights = math.expm1(loader(cut)) * 1.01 + 2.0**-60 * math.exp(full) * math.expm1(full) * 1.01
    else:
        weights = math.expm1(full) * 1.01
    if fallback:
        lfn = math.lgamma(n + 1.0)
        lpq = abs(math.log(p1)) + abs(math.log1p(-p1)) if 0 < p1 < 1 else 0.0
        w = (3 * LGAMMA_REL + 8 * U) * (3 * lfn + log_weight_max + n * lpq) + 3e-15
        weights = max(weights, math.expm1(w) * 1.01)
    logn = math.log(n + 1.0)
    values = (2.0 * (log_delta_max + 1.0) + 745.0) * U + LIBM_REL + 745.0 * U + LIBM_REL
    per_expectation = 12.0 * U * (log_scale_max + 750.0 + logn) + LIBM_REL * (1100.0 + 2.0 * logn)
    return float(gamma(chain)) + table + values + per_expectation + weights + 2.0**-59
