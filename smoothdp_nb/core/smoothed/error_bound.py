"""The proven error bound of the two-vertex engines (:mod:`smoothdp_nb.core.smoothed.binary`)."""

from __future__ import annotations

import math

from .binomial import ANCHOR_ERROR
from .schedule import ADVANCE_RANGE

__all__ = ["engine_error"]


def engine_error(
    n: int, K: int, log_weight_max: float, fallback: bool = False, p1: float = 0.5, log_delta_max: float = 0.0
) -> float:
    """Proven bound on the relative error of every expectation of the two-vertex
    engines (:func:`~smoothdp_nb.core.smoothed.binary.exact_binary`, :func:`~smoothdp_nb.core.smoothed.binary.exact_binary_blocks`), given exact profile values.

    Every quantity is a sum of products of non-negative numbers, so each
    floating-point operation adds a relative error of at most u (Higham,
    eq. (3.4)) and relative errors add along the chain: an advance of K steps
    is a dot product of length at most 2Q (``2Q`` roundings) with table entries
    within ``u + 2 LIBM_REL + 2u`` of the exact law (:meth:`~smoothdp_nb.core.smoothed.binomial.BinomialWeights.table`),
    and there are at most ``n/K + 2`` advances; one-step advances
    (the fallback) take 4 roundings each, at most n of them; an expectation is
    a correlation and a mixing product (at most ``n + 2K`` roundings), its
    rescalings ``exp``/``log`` (``8 LIBM_REL``), and a weight of Loader's
    log-pmf within :func:`~smoothdp_nb.core.enclosures.lpmf_abs_error` of
    its value (``|log w| <= log_weight_max``; :data:`~smoothdp_nb.core.smoothed.binomial.ANCHOR_ERROR` more between
    the anchors of :meth:`~smoothdp_nb.core.smoothed.binomial.BinomialWeights.window`; the per-composition fallback's
    log-factorial weights carry ``3 LGAMMA_REL log n! + 4u`` of their terms
    instead).  Truncations (Hoeffding and the dropped chunks) are below
    ``2^-60`` relative (module docstring).

    The engines keep H as values times a log scale per chunk, and every advance
    sets a chunk's new scale to ``old scale + log(max)``: the scale is a running
    sum over the ``n/K + 2`` advances.  Each addition rounds with an absolute
    error of at most u times its magnitude, which is at most
    ``M = log_delta_max + log_weight_max + log(n+1) + 1`` (H is an average of
    profile values, a partial expectation a sum of at most n + 1 weights times
    them), and each ``log(max)`` (``max >= e^-500``, checked) is within
    ``LIBM_REL * 500`` absolute; the segments and the mixing add a bounded number
    (16) of further additions.  Together they move an expectation by a factor
    within ``exp((2 (n/K + 2) + 16) u M + (n/K + 2) LIBM_REL 500)``: that term is
    added.
    """
    from ..enclosures import LGAMMA_REL, LIBM_REL, U, gamma, lpmf_abs_error

    Q = K + 1
    chain = (n // max(K, 1) + 2) * (2 * Q + 24) + 4 * (n + 1) + n + 2 * K + 64
    table = (n // max(K, 1) + 2) * (2 * LIBM_REL + 3 * U)
    # (+ 3u n: q = 1 - p is rounded, and Loader's formula then carries e^(-n (p + q - 1)))
    w = float(lpmf_abs_error(log_weight_max, n, 1)) + 3.03 * U * n
    # (+ the fill-in between Loader anchors, BinomialWeights._anchored)
    w += ANCHOR_ERROR[0] + ANCHOR_ERROR[1] * log_weight_max
    if fallback:
        lfn = math.lgamma(n + 1.0)
        lpq = abs(math.log(p1)) + abs(math.log1p(-p1)) if 0 < p1 < 1 else 0.0
        w = max(w, (3 * LGAMMA_REL + 8 * U) * (3 * lfn + log_weight_max + n * lpq) + 3e-15)
    magnitude = log_delta_max + log_weight_max + math.log(n + 1.0) + 1.0
    advances = n // max(K, 1) + 2
    scales = math.expm1((2 * advances + 16) * U * magnitude + advances * LIBM_REL * ADVANCE_RANGE) * 1.01
    return float(gamma(chain)) + table + 8 * LIBM_REL + math.expm1(w) * 1.01 + scales + 2.0**-59
