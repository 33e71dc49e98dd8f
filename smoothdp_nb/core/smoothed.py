"""Smoothed DP (Definition 3): Algorithm 1, exactly and fast, and Monte Carlo.

The smoothed delta of an anonymous mechanism M for a set of distributions Pi is

    delta_SDP(eps) = max over pi_1..pi_n in Pi of  E_{x ~ (pi_1..pi_n)} [delta_eps(x)].

By Proposition 7 only the l* vertices of the convex hull of Pi matter, and as
M is anonymous only the *composition* (how many records follow each vertex)
does: Algorithm 1 enumerates the compositions and takes the largest
expectation.

How we compute every expectation at once
----------------------------------------
Write ``H_r(x) = E[delta(x + Mult(r, pi_l))]`` for histograms x of n - r
records.  Then ``H_0 = delta`` and

    H_{r+1}(x) = sum_j pi_l[j] H_r(x + e_j),

one averaging step per record drawn from the last vertex.  Repeating the
construction vertex by vertex, the expectation for a composition
``(c_1, ..., c_l)`` is a single dot product of ``Mult(c_1, pi_1)`` with the
function obtained after ``c_l, ..., c_2`` steps.  For two categories each step
is two shifted vector operations, so all n + 1 compositions cost O(n^2)
work in total -- instead of O(n^(2m + l* - 3)) for the literal algorithm
(Theorem 2) -- and every eps is carried along in the same pass, because the
composition laws do not depend on eps.  The two-vertex float path takes the
compositions 64 at a time as BLAS matrix products (see :func:`_exact_binary`).

Exactness: the averaging is a convex combination of positive numbers (no
cancellation).  The two-category path runs in float64 scaled by the largest
delta; a contribution can only be lost to underflow if it is below 2^-1022 of
that scale, so every expectation above 1e-250 of the scale is exact to
rounding.  Columns with smaller expectations are recomputed in block floating
point (one scale per block of 256 histograms), which is exact at every
magnitude.  The general path (m > 2 or l* > 2) runs in log space throughout.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import gammaln, logsumexp

from . import _lpmf
from ._format import format_log
from ._validate import as_eps, as_int, as_open_unit, as_rng
from .hull import HullReduction, reduce_to_vertices
from .mechanisms import ComputationTooLarge, SamplingHistogram, _compositions
from .profiles import dp_delta, privacy_profile
from .sweeps import monte_carlo_map

__all__ = [
    "SmoothedResult",
    "SmoothedCurve",
    "smoothed_delta",
    "smoothed_delta_curve",
    "fit_exponential",
    "empirical_bernstein_interval",
    "betting_interval",
]

#: default limit on the estimated run time of an exact computation (seconds)
DEFAULT_BUDGET_SECONDS = 600.0
# Below this fraction of the scale, float64 may have dropped contributions.
_FLOAT_SAFE = 1e-250
# block size of the block-floating-point averaging (see _exact_binary_blocks)
_BLOCK = 256
# compositions per block of the float64 path (see _exact_binary)
_DP_STEPS = 64
# log(2 / 1e-320): binomial weights beyond the Hoeffding radius for this level are skipped
_HOEFFDING_LOG = math.log(2.0) + 320 * math.log(10.0)
# Rough costs used for the up-front estimate (seconds per elementary cell),
# measured on the 2-core reference machine (see benchmarks/README.md).
_COST_FLOAT = 2.5e-9
_COST_LOG = 2.5e-8


@dataclass(frozen=True)
class SmoothedResult:
    """The smoothed delta of a mechanism for Pi (Definition 3).

    Attributes
    ----------
    delta, log_delta : float or ndarray over eps
        ``max`` over compositions of ``E[delta_eps(x)]`` and its natural log
        (finite even when delta underflows).
    eps : ndarray
    n : int
    vertices : ndarray (l*, m)
        The convex-hull vertices of Pi actually used (Proposition 7).
    vertex_labels, dropped : list
        Labels of the vertices kept and of the distributions dropped.
    worst_composition : ndarray of int (l*,) or (E, l*)
        Number of records following each vertex at the maximum.
    table : pandas.DataFrame
        One row per composition and eps: ``eps``, one count column per
        vertex, ``delta`` and ``log_delta`` (Monte Carlo: also the interval).
    dp_delta : float
        The worst case over all databases, for comparison.
    method : {"exact", "monte-carlo"}
    ci_low, ci_high : ndarray or None
        Monte Carlo only: the confidence interval (see ``interval``).
    """

    mechanism: Any
    n: int
    eps: np.ndarray
    log_delta_values: np.ndarray
    vertices: np.ndarray
    vertex_labels: list
    dropped: list
    worst_composition_values: np.ndarray
    table_columns: dict = field(repr=False)  # the table's columns; the DataFrame is built on first use
    dp_delta: float
    method: str
    scalar_eps: bool = False
    ci_low_values: np.ndarray | None = None
    ci_high_values: np.ndarray | None = None
    confidence: float | None = None
    trials: int | None = None
    interval: str | None = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per eps and composition (see the class docstring)."""
        return pd.DataFrame(self.table_columns)

    def _shape(self, arr):
        if arr is None:
            return None
        return float(arr[0]) if self.scalar_eps else arr

    @property
    def log_delta(self):
        return self._shape(self.log_delta_values)

    @property
    def delta(self):
        return self._shape(np.exp(self.log_delta_values))

    @property
    def ci_low(self):
        return self._shape(self.ci_low_values)

    @property
    def ci_high(self):
        return self._shape(self.ci_high_values)

    @property
    def worst_composition(self):
        w = self.worst_composition_values
        return w[0] if self.scalar_eps else w

    def to_frame(self) -> pd.DataFrame:
        """One row per eps: delta, log10 delta, DP delta, worst composition (and CI)."""
        df = pd.DataFrame(
            {
                "eps": self.eps,
                "delta": np.exp(self.log_delta_values),
                "log10_delta": self.log_delta_values / math.log(10),
                "dp_delta": self.dp_delta,
            }
        )
        if self.ci_low_values is not None:
            df["ci_low"] = self.ci_low_values
            df["ci_high"] = self.ci_high_values
        for j, lab in enumerate(self.vertex_labels):
            df[f"n_{lab}"] = self.worst_composition_values[:, j]
        return df

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "mechanism": repr(self.mechanism),
            "n": self.n,
            "eps": self.eps.tolist(),
            "delta": np.exp(self.log_delta_values).tolist(),
            "log_delta": self.log_delta_values.tolist(),
            "dp_delta": self.dp_delta,
            "vertices": self.vertices.tolist(),
            "vertex_labels": [str(v) for v in self.vertex_labels],
            "dropped": [str(v) for v in self.dropped],
            "worst_composition": self.worst_composition_values.tolist(),
            "ci_low": None if self.ci_low_values is None else self.ci_low_values.tolist(),
            "ci_high": None if self.ci_high_values is None else self.ci_high_values.tolist(),
            "confidence": self.confidence,
            "trials": self.trials,
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        head = (
            f"Smoothed DP of {self.mechanism!r}, n = {self.n}, {self.method} "
            f"({len(self.vertex_labels)} hull vertices: {', '.join(map(str, self.vertex_labels))}"
            + (f"; {len(self.dropped)} dropped" if self.dropped else "")
            + ")"
        )
        lines = [head, f"DP delta (worst case) = {self.dp_delta:.4g}"]
        for i, e in enumerate(self.eps):
            ld = self.log_delta_values[i]
            txt = f"  eps = {e:g}: delta = {format_log(ld)}"
            if self.ci_low_values is not None:
                txt += f"  [{self.ci_low_values[i]:.3g}, {self.ci_high_values[i]:.3g}] ({self.confidence:.0%})"
            txt += f"  at composition {tuple(int(c) for c in self.worst_composition_values[i])}"
            lines.append(txt)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SmoothedResult {self.method}: " + "; ".join(
            f"eps={e:g} delta={format_log(ld)}" for e, ld in zip(self.eps, self.log_delta_values)
        ) + ">"

    def chart(self):
        """Altair chart of the result (requires the notebook extras)."""
        from .. import charts

        return charts.smoothed_chart(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from .. import charts

        return charts.mimebundle(self)


def _progress_bar(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from ._progress import progress_bar

    return progress_bar(total, desc, leave=False)


# --------------------------------------------------------------------------
# exact
# --------------------------------------------------------------------------


def _all_histograms(n: int, m: int) -> np.ndarray:
    if m == 2:
        k = np.arange(n + 1)
        return np.stack([k, n - k], axis=1)
    return _compositions(n, m)


def _estimate_exact_seconds(n: int, m: int, l: int, E: int) -> float:
    if m == 2 and l <= 2:
        return _COST_FLOAT * E * (n + 1) ** 2 / 2 + 2e-6 * n
    # sum over compositions of the remaining counts of #histograms * m
    hists = math.comb(n + m - 1, m - 1)
    comps = math.comb(n + l - 1, l - 1)
    return _COST_LOG * E * m * hists * comps / max(1, l)


def _log_binom_vector(s: int, p: float) -> np.ndarray:
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


class _BinomialWeights:
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
    from the tables ``t1``, ``t2`` of :meth:`_BinomialWeights.table` (size >= K-1).

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


def _exact_binary(logdelta: np.ndarray, p1: float, p2: float, bar, block: int = _DP_STEPS) -> np.ndarray:
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
    expectations above 1e-250 of it are exact to rounding; eps columns with
    any smaller expectation are recomputed with the block-floating-point
    path, which is exact at every magnitude.
    """
    n = logdelta.shape[0] - 1
    E = logdelta.shape[1]
    scale = logdelta.max(axis=0)  # per eps
    finite_scale = np.where(np.isfinite(scale), scale, 0.0)
    finite_col = np.isfinite(scale)
    K = block
    Q = K + 1
    chunks = (n + 1) // Q + 2  # one spare chunk: the advance reads "the next chunk"
    M = np.zeros((E, chunks, Q))
    flat = M.reshape(E, chunks * Q)  # a view: H_r(x) of column e is flat[e, x]
    flat[:, : n + 1] = np.exp(logdelta - finite_scale).T
    # Bin(., p) for up to K records: small sizes, so log-gamma is accurate to ~1e-14
    t1, t2 = _BinomialWeights(K, p1).table(), _BinomialWeights(K, p2).table()
    B0, B1 = _advance_matrices(K, t2)
    mixing = {K: _block_mixing(K, t1, t2)}
    scaled = np.zeros((n + 1, E))
    weights = _BinomialWeights(n, p1)
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
        out[:, low] = _exact_binary_blocks(logdelta[:, low], p1, p2, bar=bar)
    return out


def _exact_binary_blocks(logdelta: np.ndarray, p1: float, p2: float, block: int = _BLOCK, bar=None) -> np.ndarray:
    """log E for every composition (c1 = n - r, r) of two vertices, m = 2.

    ``logdelta``: (n+1, E) log delta of histogram (k, n-k).  Returns (n+1, E)
    indexed by r = number of records following vertex 2.

    Block floating point: H is stored as float64 values times one scale
    ``exp(scale[b])`` per block of ``block`` consecutive x (and per eps).  The
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
    weights = _BinomialWeights(n, p1)
    q2 = 1.0 - p2
    if q2 == 0.0:  # every record from vertex 2 is category 0: H shifts by one per step
        return _exact_binary_blocks_shift(logdelta, p1)
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


def _exact_binary_blocks_shift(logdelta: np.ndarray, p1: float) -> np.ndarray:
    """p2 = 1: the r records of vertex 2 are all category 0, so
    E_r = E[delta(Bin(n - r, p1) + r)] -- a log-space dot product per r."""
    n = logdelta.shape[0] - 1
    out = np.empty_like(logdelta)
    for r in range(n + 1):
        lw = _log_binom_vector(n - r, p1)
        out[r] = logsumexp(lw[:, None] + logdelta[r:], axis=0)
    return out


def _exact_general(logdelta: np.ndarray, n: int, m: int, V: np.ndarray, bar) -> tuple[np.ndarray, np.ndarray]:
    """Log space DP for any m and l* (see module docstring).

    Returns (compositions (C, l), log E (C, E))."""
    l = V.shape[0]
    hists = {n: _all_histograms(n, m)}
    index: dict[int, dict] = {}

    def hist_index(s):
        if s not in index:
            hs = hists.setdefault(s, _all_histograms(s, m))
            index[s] = {tuple(h): i for i, h in enumerate(hs.tolist())}
        return index[s]

    # up[s][j] = indices in size s+1 of (x + e_j) for every x of size s
    up: dict[int, np.ndarray] = {}

    def up_map(s):
        if s not in up:
            hs = hists.setdefault(s, _all_histograms(s, m))
            idx = hist_index(s + 1)
            eye = np.eye(m, dtype=np.int64)
            up[s] = np.array([[idx[tuple(h + eye[j])] for h in hs] for j in range(m)], dtype=np.int64)
        return up[s]

    with np.errstate(divide="ignore"):
        logV = np.log(V)
    comps: list[tuple] = []
    vals: list[np.ndarray] = []

    def log_mult(s, v):
        hs = hists.setdefault(s, _all_histograms(s, m))
        from scipy.special import gammaln

        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(hs > 0, hs * logV[v][None, :], 0.0)
        return gammaln(s + 1.0) - gammaln(hs + 1.0).sum(axis=1) + terms.sum(axis=1)

    def descend(G, size, level, counts):
        if level == 0:
            lw = log_mult(size, 0)
            comps.append((size,) + counts)
            vals.append(logsumexp(lw[:, None] + G, axis=0))
            if bar is not None:
                bar.update(1)
            return
        for r in range(size + 1):
            descend(G, size - r, level - 1, (r,) + counts)
            if r < size:
                s = size - r - 1
                mp_ = up_map(s)
                G = logsumexp(logV[level][:, None, None] + G[mp_], axis=0)

    descend(logdelta, n, l - 1, ())
    return np.array(comps, dtype=np.int64), np.array(vals)


def smoothed_delta(
    mechanism,
    n: int,
    pi,
    eps,
    method: str = "exact",
    *,
    progress: bool | None = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
    trials: int = 10**4,
    rng=None,
    confidence: float = 0.99,
    candidates: int = 16,
    executor=None,
    chunk: int = 10_000,
    interval: str = "betting",
) -> SmoothedResult:
    """Smoothed delta (Definition 3) of a sampling mechanism for the set Pi.

    Parameters
    ----------
    mechanism : SamplingHistogram or NoisySamplingHistogram
    n : int >= 1, database size
    pi : array_like (l, m) or DataFrame
        The set Pi of distributions over the m categories (rows sum to 1).
        Only the convex-hull vertices are used (Proposition 7).
    eps : float or 1-D array
    method : {"exact", "monte-carlo"}
        "exact" is Algorithm 1 over every composition (see module docstring).
        "monte-carlo" samples databases from candidate compositions (all
        vertex-pure compositions and an even grid, at most ``candidates``)
        and evaluates delta(x) exactly for each sample.
    progress : bool or None
        Show a tqdm progress bar; None shows one when the estimated run time
        exceeds two seconds.
    budget : float
        Refuse (before any work) exact computations estimated to take longer
        than this many seconds, suggesting method="monte-carlo".
    trials : int >= 1, Monte Carlo samples per candidate composition
    rng : None, int or Generator, Monte Carlo randomness
    confidence : float in (0, 1), Monte Carlo interval level
    candidates : int, Monte Carlo: at most this many candidate compositions
    executor : concurrent.futures.Executor or None
        Monte Carlo: where the chunks of trials run (any Executor, e.g. a
        ProcessPoolExecutor or ``dask.distributed.Client().get_executor()``);
        results are identical for every executor (per-chunk seeds from
        ``SeedSequence.spawn``, chunk boundaries fixed by ``chunk``).
    chunk : int, Monte Carlo trials per task
    interval : {"betting", "bernstein"}
        Monte Carlo: the confidence interval of each candidate's mean delta,
        valid for any law on [0, T/n] (the DP bound on delta(x)), Bonferroni
        over the candidates.  "betting" (default): :func:`betting_interval`,
        the hedged-capital interval of Waudby-Smith & Ramdas, much narrower at
        small trial counts and small deltas; "bernstein":
        :func:`empirical_bernstein_interval` (Maurer & Pontil).

    Returns
    -------
    SmoothedResult
    """
    if not (isinstance(mechanism, SamplingHistogram) or hasattr(mechanism, "_log_profile_batch")):
        raise TypeError(f"mechanism must be a mechanism of this package, got {type(mechanism).__name__}")
    if hasattr(mechanism, "grid") and method == "exact":
        raise ValueError(
            "method='exact' enumerates every histogram and is available for the sampling-histogram "
            "mechanisms; use method='monte-carlo' for the sampling-average mechanism"
        )
    n = as_int(n, "n", minimum=1)
    e, scalar = as_eps(eps)
    if method not in ("exact", "monte-carlo"):
        raise ValueError(f"method must be 'exact' or 'monte-carlo', got {method!r}")
    red = reduce_to_vertices(pi)
    mechanism.sample_size(n)  # T <= n check
    if method == "exact":
        res = _smoothed_exact(mechanism, n, red, e, progress, budget)
    else:
        trials = as_int(trials, "trials", minimum=1)
        confidence = as_open_unit(confidence, "confidence")
        candidates = as_int(candidates, "candidates", minimum=1)
        if interval not in _INTERVALS:
            raise ValueError(f"interval must be one of {sorted(_INTERVALS)}, got {interval!r}")
        res = _smoothed_monte_carlo(
            mechanism, n, red, e, trials, rng, confidence, candidates, progress, executor,
            as_int(chunk, "chunk", minimum=1), interval,
        )
    object.__setattr__(res, "scalar_eps", scalar)
    return res


def _distinct_columns(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct columns of a, index of each original column among them).

    Bit-identical columns are found by their bytes (np.unique(axis=1) sorts
    whole columns and costs far more than the smoothed delta itself).
    """
    seen: dict[bytes, int] = {}
    col = np.array([seen.setdefault(np.ascontiguousarray(a[:, j]).tobytes(), len(seen)) for j in range(a.shape[1])])
    first = np.unique(col, return_index=True)[1]
    return a[:, first], col


def _smoothed_exact(mech, n, red: HullReduction, e, progress, budget) -> SmoothedResult:
    t0 = time.perf_counter()
    V = red.vertices
    l, m = V.shape
    est = _estimate_exact_seconds(n, m, l, e.size)
    if est > budget:
        raise ComputationTooLarge(
            f"the exact smoothed delta for n={n}, m={m}, {l} hull vertices and {e.size} eps values "
            f"is estimated to take ~{est:.3g} s (budget {budget:g} s); use method='monte-carlo', "
            "fewer eps values, or raise budget="
        )
    show = (est > 2.0) if progress is None else bool(progress)
    hists = _all_histograms(n, m)
    full = privacy_profile(mech, hists, e, log=True).reshape(len(hists), e.size)
    # Several eps often give bit-identical profiles (e.g. when only outputs
    # impossible under the neighbour count matter): average each distinct one once.
    logdelta, col = _distinct_columns(full)
    if m == 2 and l <= 2:
        p1 = float(V[0, 0])
        if l == 1:
            comps = np.array([[n]])
            lw = _log_binom_vector(n, p1)
            vals = logsumexp(lw[:, None] + logdelta, axis=0)[None, :]
        else:
            p2 = float(V[1, 0])
            bar = _progress_bar(n + 1, show, "compositions")
            vals = _exact_binary(logdelta, p1, p2, bar)
            if bar is not None:
                bar.close()
            r = np.arange(n + 1)
            comps = np.stack([n - r, r], axis=1)
    else:
        bar = _progress_bar(math.comb(n + l - 1, l - 1), show, "compositions")
        comps, vals = _exact_general(logdelta, n, m, V, bar)
        if bar is not None:
            bar.close()
    vals = vals[:, col]
    return _assemble(mech, n, red, e, comps, vals, "exact", t0)


def _assemble(mech, n, red, e, comps, vals, method, t0, lo=None, hi=None, **extra) -> SmoothedResult:
    best = np.argmax(vals, axis=0)
    labels = [str(v) for v in red.vertex_labels]
    # one row per (eps, composition), eps-major; built column by column in one go
    C, E = comps.shape[0], e.size
    columns = {"eps": np.repeat(e, C)}
    for i, lab in enumerate(labels):
        columns[f"n_{lab}"] = np.tile(comps[:, i], E)
    flat = vals.T.ravel()
    columns["delta"] = np.exp(flat)
    columns["log_delta"] = flat
    if lo is not None:
        columns["ci_low"] = lo.T.ravel()
        columns["ci_high"] = hi.T.ravel()
    ci_low = None if lo is None else lo.max(axis=0)
    ci_high = None if hi is None else hi.max(axis=0)
    return SmoothedResult(
        mechanism=mech,
        n=n,
        eps=e,
        log_delta_values=vals[best, np.arange(e.size)],
        vertices=red.vertices,
        vertex_labels=list(red.vertex_labels),
        dropped=list(red.dropped_labels),
        worst_composition_values=comps[best],
        table_columns=columns,
        dp_delta=float(dp_delta(mech, n, e[0] if _needs_eps(mech) else None, categories=red.vertices.shape[1])),
        method=method,
        ci_low_values=ci_low,
        ci_high_values=ci_high,
        seconds=time.perf_counter() - t0,
        notes=[red.message],
        **extra,
    )


def _needs_eps(mech) -> bool:
    from .mechanisms import NoisySamplingHistogram

    return isinstance(mech, NoisySamplingHistogram)


# --------------------------------------------------------------------------
# Monte Carlo
# --------------------------------------------------------------------------


def empirical_bernstein_interval(values: np.ndarray, alpha: float, bound: float = 1.0, axis: int = 0):
    """Two-sided empirical Bernstein interval for the mean of [0, bound] samples.

    Maurer & Pontil (2009), Theorem 4, applied to each side with alpha/2:
    with probability >= 1 - alpha the mean lies within
    ``sqrt(2 V log(4/alpha) / N) + 7 bound log(4/alpha) / (3 (N - 1))`` of the
    sample mean (V the unbiased sample variance).  Valid for any distribution
    on [0, bound]; conservative.  Returns (mean, low, high), clipped to [0, bound].
    """
    v = np.asarray(values, dtype=float)
    N = v.shape[axis]
    mean = v.mean(axis=axis)
    if N < 2:
        return mean, np.zeros_like(mean), np.full_like(mean, bound)
    var = v.var(axis=axis, ddof=1)
    L = math.log(4.0 / alpha)
    half = np.sqrt(2.0 * var * L / N) + 7.0 * bound * L / (3.0 * (N - 1))
    return mean, np.clip(mean - half, 0.0, bound), np.clip(mean + half, 0.0, bound)


def betting_interval(
    values: np.ndarray,
    alpha: float,
    bound: float = 1.0,
    axis: int = 0,
    *,
    c: float = 0.75,
    theta: float = 0.5,
    iterations: int = 48,
):
    """Two-sided "hedged capital" betting confidence interval for the mean of [0, bound] samples.

    Waudby-Smith & Ramdas (2024), *Estimating means of bounded random variables
    by betting*, JRSS-B 86(1), Theorem 3 and Section 5 (fixed-sample CI).  With
    ``x_i = values_i / bound`` in [0, 1] and a candidate mean m, two gamblers bet
    for and against m:

        K+_t(m) = prod_{i<=t} (1 + min(lam_i, c/m)     (x_i - m))
        K-_t(m) = prod_{i<=t} (1 - min(lam_i, c/(1-m)) (x_i - m))

    with the predictable plug-in bets ``lam_i = sqrt(2 log(2/alpha) / (N s2_{i-1}))``,
    ``s2_t = (1/4 + sum_{j<=t} (x_j - mu_j)^2) / (t+1)``,
    ``mu_t = (1/2 + sum_{j<=t} x_j) / (t+1)`` (``s2_0 = 1/4``).  Under the true
    mean both are non-negative martingales, so by Ville's inequality the hedged
    capital ``max(theta K+, (1-theta) K-)`` ever reaches ``1/alpha`` with
    probability <= alpha.  The interval is the set of m where it does not, over
    all t <= N (the running intersection, still valid):
    ``[inf{m: theta max_t K+_t(m) < 1/alpha}, sup{m: (1-theta) max_t K-_t(m) < 1/alpha}]``.
    K+ is non-increasing and K- non-decreasing in m, so each endpoint is found
    by a vectorised bisection in log(m) (resp. log(1-m)), ``iterations`` steps,
    rounded outwards.

    Valid for any distribution on [0, bound] (i.i.d. samples, taken in the
    given order), at every sample size; typically much narrower than
    :func:`empirical_bernstein_interval`, above all when the mean and the
    variance are small against ``bound``.  Vectorised over the other axes.
    Returns (mean, low, high), in the units of ``values``.
    """
    alpha, c, theta = (as_open_unit(x, name) for x, name in ((alpha, "alpha"), (c, "c"), (theta, "theta")))
    v = np.asarray(values, dtype=float)
    mean = v.mean(axis=axis)
    x = np.clip(np.moveaxis(v, axis, 0) / bound, 0.0, 1.0)
    N = x.shape[0]
    shape = x.shape[1:]
    x = x.reshape(N, -1)
    t = np.arange(1, N + 1, dtype=float)[:, None]
    mu = (0.5 + np.cumsum(x, axis=0)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=0)) / (t + 1)
    s2_prev = np.vstack([np.full((1, x.shape[1]), 0.25), s2[:-1]])
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (N * s2_prev))
    thr_plus = math.log(1.0 / (theta * alpha))
    thr_minus = math.log(1.0 / ((1.0 - theta) * alpha))

    def rejected_plus(m):  # theta max_t K+_t(m) >= 1/alpha ; m of shape (cols,)
        with np.errstate(divide="ignore"):
            bet = np.minimum(lam, c / m)
        logk = np.cumsum(np.log1p(bet * (x - m)), axis=0)
        return logk.max(axis=0) >= thr_plus

    def rejected_minus(m):  # (1 - theta) max_t K-_t(m) >= 1/alpha
        with np.errstate(divide="ignore"):
            bet = np.minimum(lam, c / (1.0 - m))
        logk = np.cumsum(np.log1p(-bet * (x - m)), axis=0)
        return logk.max(axis=0) >= thr_minus

    def boundary(rejected, to_m):
        # bisection on u = log(m) (lower end) or log(1 - m) (upper end) in [log(tiny), 0]:
        # rejected(to_m(lo)) is True, rejected(to_m(hi)) is False
        cols = x.shape[1]
        lo = np.full(cols, math.log(1e-300))
        hi = np.zeros(cols)
        at_edge = ~rejected(to_m(lo))  # nothing rejected: the interval reaches the edge
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            r = rejected(to_m(mid))
            lo = np.where(r, mid, lo)
            hi = np.where(r, hi, mid)
        return lo, at_edge

    if N == 0:
        raise ValueError("values must contain at least one sample")
    u, edge = boundary(rejected_plus, np.exp)
    low = np.where(edge, 0.0, np.exp(u))
    u, edge = boundary(rejected_minus, lambda u: -np.expm1(u))
    high = np.where(edge, 1.0, -np.expm1(u))
    low = low.reshape(shape) * bound
    high = high.reshape(shape) * bound
    return mean, low, high


_INTERVALS = {
    "betting": (betting_interval, "hedged-capital betting (Waudby-Smith & Ramdas)"),
    "bernstein": (empirical_bernstein_interval, "empirical Bernstein (Maurer-Pontil)"),
}


def _candidate_compositions(n: int, l: int, k: int) -> np.ndarray:
    if l == 1:
        return np.array([[n]])
    total = math.comb(n + l - 1, l - 1)
    if total <= k:
        return _compositions(n, l)
    # an even grid on the simplex of compositions, vertex-pure ones included
    g = 1
    while math.comb(g + 1 + l - 1, l - 1) <= k:
        g += 1
    grid = _compositions(g, l)
    comps = np.floor(grid * n / g).astype(np.int64)
    comps[:, -1] = n - comps[:, :-1].sum(axis=1)
    return np.unique(comps, axis=0)


def _mc_trials(size, rng, mech, counts, vertices, eps):
    """``size`` databases drawn from a composition, and their exact delta (size, E).

    Module-level so that process pools and Dask can pickle it."""
    m = vertices.shape[1]
    hist = np.zeros((size, m), dtype=np.int64)
    for v, c in enumerate(counts):
        if c:
            hist += rng.multinomial(int(c), vertices[v], size=size)
    # delta depends on the histogram only: evaluate each distinct one once
    uniq, inv = np.unique(hist, axis=0, return_inverse=True)
    return privacy_profile(mech, uniq, eps).reshape(len(uniq), eps.size)[inv.ravel()]


def _smoothed_monte_carlo(mech, n, red, e, trials, rng, confidence, k, progress, executor, chunk, interval="betting") -> SmoothedResult:
    t0 = time.perf_counter()
    V = red.vertices
    l, m = V.shape
    comps = _candidate_compositions(n, l, k)
    seeds = np.random.SeedSequence(as_rng(rng).integers(2**63)).spawn(len(comps))
    alpha = (1.0 - confidence) / len(comps)  # Bonferroni over the candidates
    bound = float(dp_delta(mech, n, e[0] if _needs_eps(mech) else None, categories=m))
    means = np.empty((len(comps), e.size))
    lows = np.empty_like(means)
    highs = np.empty_like(means)
    bar = _progress_bar(len(comps), bool(progress), "candidate compositions")
    ci_fn, ci_name = _INTERVALS[interval]
    for i, (c, seed) in enumerate(zip(comps, seeds)):
        d = monte_carlo_map(
            _mc_trials, trials, seed, executor=executor, chunk=chunk, progress=False,
            kwargs={"mech": mech, "counts": c, "vertices": V, "eps": e},
        )
        means[i], lows[i], highs[i] = ci_fn(d, alpha, bound)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    with np.errstate(divide="ignore"):
        vals = np.log(means)
    return _assemble(
        mech, n, red, e, comps, vals, "monte-carlo", t0, lo=lows, hi=highs,
        confidence=confidence, trials=trials,
        interval=f"{ci_name}, Bonferroni over {len(comps)} candidate compositions",
    )


# --------------------------------------------------------------------------
# curves over n and the exponential fit
# --------------------------------------------------------------------------


def fit_exponential(n, log_delta) -> dict:
    """Least-squares fit ``log delta = a + b n`` (delta ~ C exp(b n)).

    Returns a dict with ``slope`` (b, per record), ``intercept`` (a),
    ``r2`` and ``log10_slope`` (b / ln 10: decades per record).  Points with
    delta = 0 (log = -inf) are ignored.
    """
    x = np.asarray(n, dtype=float)
    y = np.asarray(log_delta, dtype=float)
    ok = np.isfinite(y)
    if ok.sum() < 2:
        return {"slope": math.nan, "intercept": math.nan, "r2": math.nan, "log10_slope": math.nan}
    b, a = np.polyfit(x[ok], y[ok], 1)
    resid = y[ok] - (a + b * x[ok])
    ss = np.sum((y[ok] - y[ok].mean()) ** 2)
    r2 = 1.0 - np.sum(resid**2) / ss if ss > 0 else 1.0
    return {"slope": float(b), "intercept": float(a), "r2": float(r2), "log10_slope": float(b / math.log(10))}


@dataclass(frozen=True)
class SmoothedCurve:
    """Smoothed delta as a function of n (Figure 2 left / Figure 4)."""

    results: list
    table: pd.DataFrame
    fits: pd.DataFrame

    @classmethod
    def from_results(cls, results: list) -> "SmoothedCurve":
        """Assemble the curve (table over n and eps, exponential fit per eps)
        from :class:`SmoothedResult` objects computed for several n."""
        if not results:
            raise ValueError("results must contain at least one SmoothedResult")
        rows = []
        for r in results:
            df = r.to_frame()
            df.insert(0, "n", r.n)
            rows.append(df)
        table = pd.concat(rows, ignore_index=True)
        table["log_delta"] = table["log10_delta"] * math.log(10)
        fits = []
        for ev, g in table.groupby("eps", sort=True):
            f = fit_exponential(g["n"], g["log_delta"])
            f["eps"] = ev
            fits.append(f)
        cols = ["eps", "slope", "intercept", "r2", "log10_slope"]
        return cls(results=list(results), table=table, fits=pd.DataFrame(fits)[cols])

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict:
        return {"table": self.table.to_dict(orient="list"), "fits": self.fits.to_dict(orient="list")}

    def __str__(self) -> str:
        lines = ["Smoothed delta vs n (exponential fit log delta = a + b n):"]
        for row in self.fits.itertuples():
            lines.append(f"  eps = {row.eps:g}: b = {row.slope:.4g} per record (R^2 = {row.r2:.4f})")
        return "\n".join(lines)

    def chart(self):
        from .. import charts

        return charts.curve_chart(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from .. import charts

        return charts.mimebundle(self)


def smoothed_delta_curve(mechanism, ns, pi, eps, method: str = "exact", **kwargs) -> SmoothedCurve:
    """Run :func:`smoothed_delta` for every n in ``ns`` and fit exp(a + b n) per eps."""
    ns = [as_int(v, "ns", minimum=1) for v in np.atleast_1d(ns)]
    if not ns:
        raise ValueError("ns must contain at least one database size")
    results = [smoothed_delta(mechanism, n, pi, eps, method=method, **kwargs) for n in ns]
    return SmoothedCurve.from_results(results)
