"""Binomial laws for the two-vertex engines: log-pmf vectors, windows and small tables.

* :func:`log_binom_vector` -- ``log Bin(x; s, p)`` for every x, by term ratios from the mode.
* :class:`BinomialWeights` -- the window of ``log Bin(x; s, p)`` within a Hoeffding radius of
  ``s p``, for every ``s <= n`` from shared tables, and every small law at once
  (:meth:`BinomialWeights.table`) for the engines' advance and mixing matrices.
* :data:`ANCHOR_ERROR` -- the error of the window's fill-in between Loader anchors, which
  :func:`~smoothdp_nb.core.smoothed.engines.error_bound.engine_error` adds.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from smoothdp_nb.core.numerics import lpmf

__all__ = ["ANCHOR_ERROR", "ANCHOR_STEP", "BinomialWeights", "log_binom_vector"]

# log(2 / 1e-320): binomial weights beyond the Hoeffding radius for this level are skipped
_HOEFFDING_LOG = math.log(2.0) + 320 * math.log(10.0)


def log_binom_vector(s: int, p: float) -> np.ndarray:
    """log Bin(x; s, p) for x = 0..s, by term ratios from an exact mode value."""
    x = np.arange(s + 1, dtype=float)
    if p <= 0 or p >= 1 or s == 0:
        return lpmf.log_binom_pmf(x, s, p)
    mode = min(s, math.floor((s + 1) * p))
    out = np.empty(s + 1)
    out[mode] = float(lpmf.log_binom_pmf(mode, s, p))
    lr = math.log(p) - math.log1p(-p)
    # up: log P(x+1)/P(x) = log((s-x)/(x+1)) + log(p/q)
    up = np.log((s - x[mode:s]) / (x[mode:s] + 1.0)) + lr
    out[mode + 1 :] = out[mode] + np.cumsum(up)
    down = np.log((s - x[:mode]) / (x[:mode] + 1.0)) + lr
    out[:mode] = out[mode] - np.cumsum(down[::-1])[::-1]
    return out


class BinomialWeights:
    """log Bin(x; s, p) for x in a window, for every s <= n, from shared tables.

    Only x within the Hoeffding radius of s p is returned: by Hoeffding,
    P(|X - s p| >= t) <= 2 exp(-2 t^2 / s) < 1e-320 there, below anything
    float64 can add to a sum of positive terms.  The window's log-pmfs come
    from Loader's saddle-point formula (error relative to the probability,
    :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error`); the small tables
    from exact binomial coefficients.
    """

    def __init__(self, n: int, p: float):
        self.p = p
        self.lf = gammaln(np.arange(n + 1, dtype=float) + 1.0)  # lf[k] = log k!
        x = np.arange(n + 1, dtype=float)
        # a huge finite stand-in for log 0 keeps 0 * log 0 = 0
        self.xlp = x * (math.log(p) if p > 0 else -1e300)
        self.xlq = x * (math.log1p(-p) if p < 1 else -1e300)

    def table(self) -> np.ndarray:
        """Every law at once: row s holds Bin(x; s, p) for x = 0..s, zeros beyond.

        Exact binomial coefficients (Python integers, correctly rounded to
        float) times ``p^x q^(s-x)`` from two ``pow`` calls and one product:
        each entry is within ``u + 2 LIBM_REL + 2u`` relative of the exact law
        (the engines apply these tables once per block, so their error adds up
        block by block; see :func:`~smoothdp_nb.core.smoothed.engines.error_bound.engine_error`)."""
        n = len(self.lf) - 1
        s = np.arange(n + 1)[:, None]
        x = np.arange(n + 1)[None, :]
        y = np.maximum(s - x, 0)
        comb = np.array([[float(math.comb(i, j)) if j <= i else 0.0 for j in range(n + 1)] for i in range(n + 1)])
        q = 1.0 - self.p
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            pw = np.power(self.p, x.astype(float)) * np.power(q, y.astype(float))
        return np.where(x <= s, comb * pw, 0.0)

    def window(self, s: int, log_bound: float = _HOEFFDING_LOG, loader: bool = True) -> tuple[int, int, np.ndarray]:
        """(a, b, log Bin(x; s, p) for x = a..b): every x with P(|X - s p| >= |x - s p|)
        above ``exp(-log_bound)`` (Hoeffding: ``2 exp(-2 t^2 / s)``)."""
        if math.isinf(log_bound):
            a, b = 0, s
        else:
            t = math.sqrt(0.5 * s * log_bound) + 1.0
            a = max(0, math.floor(s * self.p - t))
            b = min(s, math.ceil(s * self.p + t))
        # Loader's saddle-point log-pmf: an error relative to the probability
        # (enclosures.lpmf_abs_error), where differences of log-factorials of size
        # n log n would lose ~n log n ulps
        if loader:
            return a, b, self._anchored(a, b, s)
        # (the per-composition fallback: log-factorial table, error ~3 LGAMMA_REL log n!)
        lf, k = self.lf, b - a + 1
        lw = (lf[s] - lf[a : b + 1]) - lf[s - a :: -1][:k] + self.xlp[a : b + 1] + self.xlq[s - a :: -1][:k]
        return a, b, lw

    def _anchored(self, a: int, b: int, s: int) -> np.ndarray:
        """log Bin(x; s, p), x = a .. b: Loader's log-pmf at every ``ANCHOR_STEP``-th x, in
        between its value plus the log of a running product of the term ratios
        ``(s - x) / (x + 1) * (p / q)``.  Against the exact law a ratio carries at most
        4 roundings (q = 1 - p, p / q, the quotient, the product; s - x and x + 1 are
        exact) and the running product one per step: a product of j < ``ANCHOR_STEP`` is
        within ``gamma_{5 j}`` (Higham, Lemma 3.1), its log within ``1.01 * 5 *
        ANCHOR_STEP * u`` plus ``LIBM_REL`` of its magnitude (<= Lmax, the largest |log
        weight|), the addition to the anchor ``u Lmax`` more: :data:`ANCHOR_ERROR`,
        added in :func:`~smoothdp_nb.core.smoothed.engines.error_bound.engine_error`.  Five array passes per value instead of
        Loader's thirty; products outside the normal range: Loader everywhere."""
        xs = np.arange(a, b + 1, dtype=float)
        if not 0.0 < self.p < 1.0 or b - a < 2 * ANCHOR_STEP:
            return lpmf.log_binom_pmf(xs, float(s), self.p)
        span, A = b - a + 1, ANCHOR_STEP
        rows = -(-span // A)
        anchors = lpmf.log_binom_pmf(xs[::A], float(s), self.p)  # (rows,)
        r = np.ones(rows * A)  # r[x - a + 1] = P(x + 1) / P(x); 1 at the anchors and the padding
        r[1:span] = (float(s) - xs[:-1]) / (xs[:-1] + 1.0) * (self.p / (1.0 - self.p))
        R = r.reshape(rows, A)
        R[:, 0] = 1.0
        prod = np.cumprod(R, axis=1)
        if not (np.all(prod > 1e-300) and np.all(prod < 1e300)):
            return lpmf.log_binom_pmf(xs, float(s), self.p)
        out: np.ndarray = (np.log(prod) + anchors[:, None]).ravel()[:span]
        out[::A] = anchors  # Loader's values at the anchors
        return out


#: positions between two Loader anchors of :meth:`BinomialWeights.window`
ANCHOR_STEP = 32
#: extra absolute error of a window log-weight filled in from its anchor (see BinomialWeights._anchored),
#: as (constant, factor of the largest |log weight|)
ANCHOR_ERROR = (5.0 * ANCHOR_STEP * 2.0**-53 * 1.01 + 2.0**-50, 2.0 * (8.0 + 2.0) * 2.0**-53)
