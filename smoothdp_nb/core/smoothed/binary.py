"""Algorithm 1 for two categories and at most two hull vertices: O(n^2) exact engines.

The recursion (see :mod:`smoothdp_nb.core.smoothed`): with
``H_r(x) = E[delta(x + Bin(r, p2))]`` over histograms ``x = (k, n - r - k)``,
``E_r = sum_x Bin(x; n - r, p1) H_r(x)`` is the expectation for the
composition ``(n - r, r)``, and one more record of vertex 2 is one averaging
step ``H_{r+1}(x) = (1 - p2) H_r(x) + p2 H_r(x + 1)``.

* :func:`exact_binary` -- float64 scaled by the largest delta, 64 compositions
  per BLAS product; exact to rounding for expectations above 1e-250 of the scale.
* :func:`exact_binary_blocks` -- block floating point, exact at every magnitude.
* :func:`exact_binary_shift` -- the degenerate vertex p2 = 1.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from .. import _lpmf

__all__ = ["BinomialWeights", "log_binom_vector", "exact_binary", "exact_binary_blocks", "exact_binary_shift"]

# Below this fraction of the scale, float64 may have dropped contributions.
_FLOAT_SAFE = 1e-250
# block size of the block-floating-point averaging (see exact_binary_blocks)
_BLOCK = 256
# compositions per block of the float64 path (see exact_binary)
_DP_STEPS = 64
# log(2 / 1e-320): binomial weights beyond the Hoeffding radius for this level are skipped
_HOEFFDING_LOG = math.log(2.0) + 320 * math.log(10.0)


def log_binom_vector(s: int, p: float) -> np.ndarray:
    """log Bin(x; s, p) for x = 0..s, by term ratios from an exact mode value."""
    x = np.arange(s + 1, dtype=float)
    if p <= 0 or p >= 1 or s == 0:
        return _lpmf.log_binom_pmf(x, s, p)
    mode = min(s, int(math.floor((s + 1) * p)))
    out = np.empty(s + 1)
    out[mode] = float(_lpmf.log_binom_pmf(mode, s, p))
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
    float64 can add to a sum of positive terms.  log-factorials come from
    lgamma (accurate to an ulp: relative pmf error ~1e-11 at n = 1e5).
    """

    def __init__(self, n: int, p: float):
        self.p = p
        self.lf = gammaln(np.arange(n + 1, dtype=float) + 1.0)  # lf[k] = log k!
        x = np.arange(n + 1, dtype=float)
        # a huge finite stand-in for log 0 keeps 0 * log 0 = 0
        self.xlp = x * (math.log(p) if p > 0 else -1e300)
        self.xlq = x * (math.log1p(-p) if p < 1 else -1e300)

    def table(self) -> np.ndarray:
        """Every law at once: row s holds Bin(x; s, p) for x = 0..s, zeros beyond."""
        n = len(self.lf) - 1
        s = np.arange(n + 1)[:, None]
        x = np.arange(n + 1)[None, :]
        y = np.maximum(s - x, 0)
        logp = self.lf[s] - self.lf[x] - self.lf[y] + self.xlp[x] + self.xlq[y]
        return np.where(x <= s, np.exp(logp), 0.0)

    def window(self, s: int) -> tuple[int, int, np.ndarray]:
        """(a, b, log Bin(x; s, p) for x = a..b)."""
        t = math.sqrt(0.5 * s * _HOEFFDING_LOG) + 1.0
        a = max(0, int(math.floor(s * self.p - t)))
        b = min(s, int(math.ceil(s * self.p + t)))
        lf, k = self.lf, b - a + 1
        lw = (lf[s] - lf[a : b + 1]) - lf[s - a :: -1][:k] + self.xlp[a : b + 1] + self.xlq[s - a :: -1][:k]
        return a, b, lw


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


def exact_binary(logdelta: np.ndarray, p1: float, p2: float, bar, block: int = _DP_STEPS) -> np.ndarray:
    """log E for every composition (c1 = n - r, r) of two vertices, m = 2.

    ``logdelta``: (n+1, E) log delta of histogram (k, n-k).  Returns (n+1, E)
    indexed by r = number of records following vertex 2.

    The recurrence: with ``H_r(x) = E[delta(x + Bin(r, p2))]``,
    ``E_r = sum_x Bin(x; n - r, p1) H_r(x)`` and one more record from vertex
    2 is one averaging step ``H_{r+1}(x) = (1 - p2) H_r(x) + p2 H_r(x + 1)``.
    Rather than one Python-level step per composition, compositions are
    taken ``K = block`` at a time, as matrix products (the O(n^2) work is the
    same, but at BLAS speed and with n/K instead of n interpreter round trips):

    * all K expectations of a block come from K lags of one correlation of
      ``H_{r0}`` with the binomial weights of the block's base, mixed by
      :func:`_block_mixing`;
    * ``H`` advances K steps at once by a banded Toeplitz product, computed on
      a chunked layout by :func:`_advance_matrices`.

    Every quantity is a sum of non-negative terms, so there is no
    cancellation; plain float64 scaled by the largest delta.  A contribution
    can only be lost to underflow below 1e-308 of that scale, so
    expectations above 1e-250 of it are exact to rounding; epsilon columns with
    any smaller expectation are recomputed with the block-floating-point
    path, which is exact at every magnitude.
    """
    n = logdelta.shape[0] - 1
    E = logdelta.shape[1]
    scale = logdelta.max(axis=0)  # per epsilon
    finite_scale = np.where(np.isfinite(scale), scale, 0.0)
    finite_col = np.isfinite(scale)
    K = block
    Q = K + 1
    chunks = (n + 1) // Q + 2  # one spare chunk: the advance reads "the next chunk"
    M = np.zeros((E, chunks, Q))
    flat = M.reshape(E, chunks * Q)  # a view: H_r(x) of column e is flat[e, x]
    flat[:, : n + 1] = np.exp(logdelta - finite_scale).T
    # Bin(., p) for up to K records: small sizes, so log-gamma is accurate to ~1e-14
    t1, t2 = BinomialWeights(K, p1).table(), BinomialWeights(K, p2).table()
    B0, B1 = _advance_matrices(K, t2)
    mixing = {K: _block_mixing(K, t1, t2)}
    scaled = np.zeros((n + 1, E))
    weights = BinomialWeights(n, p1)
    low = np.zeros(E, dtype=bool)
    for r0 in range(0, n + 1, K):
        r1 = min(r0 + K, n + 1) - 1
        k = r1 - r0 + 1
        a, b, lw = weights.window(n - r1)  # the block's base: n - r1 records of vertex 1
        w = np.exp(lw)
        # lags[e, t] = sum_x w(x) H_{r0}(a + x + t), t = 0 .. k-1
        lags = np.stack([np.correlate(flat[e, a : b + k], w, "valid") for e in range(E)])
        if k not in mixing:
            mixing[k] = _block_mixing(k, t1, t2)
        vals = lags @ mixing[k]  # (E, k): E_{r0 + j}, relative to the scale
        scaled[r0 : r1 + 1] = vals.T
        low |= (vals.min(axis=1) < _FLOAT_SAFE) & finite_col
        if low.all():
            break  # every column needs the block path anyway: stop wasting time here
        if r1 < n:
            # H_{r0+K}(x) for x = 0 .. n - r0 - K lies in the first c chunks
            c = (n - r0 - K) // Q + 1
            M[:, :c] = M[:, :c] @ B0 + M[:, 1 : c + 1] @ B1
        if bar is not None:
            bar.update(k)
    with np.errstate(divide="ignore"):
        out = np.log(scaled) + finite_scale
    if np.any(low):
        if bar is not None:  # the slower exact pass starts over
            bar.reset(total=n + 1)
            bar.set_description("compositions (block floating point)")
        out[:, low] = exact_binary_blocks(logdelta[:, low], p1, p2, bar=bar)
    return out


def exact_binary_blocks(logdelta: np.ndarray, p1: float, p2: float, block: int = _BLOCK, bar=None) -> np.ndarray:
    """log E for every composition (c1 = n - r, r) of two vertices, m = 2.

    ``logdelta``: (n+1, E) log delta of histogram (k, n-k).  Returns (n+1, E)
    indexed by r = number of records following vertex 2.

    Block floating point: H is stored as float64 values times one scale
    ``exp(scale[b])`` per block of ``block`` consecutive x (and per epsilon).  The
    averaging step only mixes x with x + 1, so a value crosses into the
    neighbouring block one entry per step and only the entries at block
    boundaries need the ratio of the two scales.  Blocks are renormalised
    often enough that nothing overflows; a term can only be lost to underflow
    if it is below 2^-1022 of its block's largest term, which is itself part
    of the expectation -- so every expectation is exact to rounding, however
    small (1e-5000 included), at float64 speed.
    """
    n = logdelta.shape[0] - 1
    E = logdelta.shape[1]
    B = block
    nb = n // B + 1  # blocks cover x = 0 .. nb*B - 1 >= n
    L = nb * B
    lg = np.full((L, E), -np.inf)
    lg[: n + 1] = logdelta
    scale = lg.reshape(nb, B, E).max(axis=1)  # (nb, E)
    scale = np.where(np.isfinite(scale), scale, 0.0)
    H = np.exp(lg - np.repeat(scale, B, axis=0))  # (L, E), 0 beyond x = n
    H3 = H.reshape(nb, B, E)
    tmp = np.empty_like(H)
    out = np.full((n + 1, E), -np.inf)
    weights = BinomialWeights(n, p1)
    q2 = 1.0 - p2
    if q2 == 0.0:  # every record from vertex 2 is category 0: H shifts by one per step
        return exact_binary_shift(logdelta, p1)
    rho = p2 / q2
    log_q2 = math.log(q2)
    ends = np.arange(B - 1, L - 1, B)  # last x of each block but the final one
    since = 0
    for r in range(n + 1):
        s = n - r
        a, b, lw_ab = weights.window(s)
        ba, bb = a // B, b // B
        lw = np.full(((bb - ba + 1) * B,), -np.inf)  # padded to whole blocks
        lw[a - ba * B : b - ba * B + 1] = lw_ab
        lw = lw.reshape(-1, B)
        top = lw.max(axis=1)  # (blocks,)
        dots = np.matmul(np.exp(lw - top[:, None])[:, None, :], H3[ba : bb + 1])[:, 0, :]
        with np.errstate(divide="ignore"):
            v = np.log(dots) + top[:, None] + scale[ba : bb + 1]
        vmax = v.max(axis=0)
        safe = np.where(np.isfinite(vmax), vmax, 0.0)
        with np.errstate(divide="ignore"):
            out[r] = np.log(np.exp(v - safe).sum(axis=0)) + safe
        if bar is not None and r % 64 == 63:
            bar.update(64)
        if r < n:
            # H_{r+1}(x) = (1 - p2) H_r(x) + p2 H_r(x + 1): one more record from vertex 2.
            # Written as q2 (H(x) + rho H(x + 1)) with the factor q2 moved into
            # every block's scale, it costs two passes instead of three.  At a
            # block's last x, H_r(x + 1) is in the next block's scale.
            np.multiply(H[1 : s + 1], rho, out=tmp[:s])
            nbi = s // B  # blocks 0 .. nbi-1 end at some x <= s - 1 (their next x is <= s)
            if nbi:
                jump = scale[1 : nbi + 1] - scale[:nbi]
                tmp[ends[:nbi]] *= np.exp(np.minimum(jump, 700.0))
                big = jump.max() > 300.0
            else:
                big = False
            H[:s] += tmp[:s]
            H[s] = 0.0
            scale += log_q2
            since += 1
            if big or since >= 8:
                # renormalise: each block's largest value back to 1
                m_ = H3.max(axis=1)
                ok = m_ > 0
                with np.errstate(divide="ignore"):
                    scale = np.where(ok, scale + np.log(np.where(ok, m_, 1.0)), scale)
                H3 /= np.where(ok, m_, 1.0)[:, None, :]
                since = 0
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
