"""Exact leave-one-out count tables for the sampling average (Algorithm 3), fast.

For a database of n records on an evenly spaced grid (integer weights ``v``
relative to the smallest occupied value), the privacy profile of the
sampling average needs, for every occupied value a, the counts

    R_a(u) = #{T-subsets of the other n - 1 records with weight sum u},
    S_a(u) = #{(T-1)-subsets of the other n - 1 records with weight sum u}

(:mod:`smoothdp_nb.core.average`, module docstring).  With ``A_t(u)`` the
t-subset counts of all n records (the coefficients of
``prod_j (1 + z y^(v_j))^(c_j)``), removing one record of weight v divides by
``(1 + z y^v)``:

    S_a(u) = sum_{k=0}^{T-1} (-1)^k A_{T-1-k}(u - k v_a),   R_a(u) = A_T(u) - S_a(u - v_a).

The alternating sums cancel catastrophically in floating point exactly where
it matters (sums reached almost only through the removed record), so they are
evaluated in exact integer arithmetic, in two residues:

* modulo 2^64, in ``uint64`` arithmetic (wrap-around is the reduction, so the
  forward table and the alternating sums are exact modulo 2^64);
* approximately in float64, which only has to locate the integer to within
  2^62.

Reconstruction: the true count is ``V = L + 2^64 h`` with ``L = V mod 2^64``
and an integer ``h >= 0``.  If the float64 value ``F`` satisfies
``|F - V| < 2^62``, then ``(F - L) / 2^64`` lies within 1/4 (plus the
rounding of ``L`` to float, < 2^-52 relative) of h, so ``h = round((F - L) /
2^64)`` is exact and ``float(V) = h 2^64 + float(L)`` is within 2 ulp of V.

Error bound for F (the condition checked before this path is used): every
``A_t(u) <= B = max_{t <= T} C(n, t)``.  The forward table adds non-negative
numbers only, n steps of one rounding each, so its relative error is at most
``n u`` (u = 2^-53, to first order).  Each alternating sum has at most T + 1
terms, each ``<= B``, with one rounding per addition, so

    |F - V| <= (T + 1) B ((n + 1) u + (T + 1) u) + (a final subtraction) <= (n + T + 4)(T + 2) u B.

Two residues are used when ``(n + T + 4)(T + 2) u B < 2^61`` (a factor two of
margin).  At the authors' setting (n = 225, T = 15) ``B = C(225, 15) ~ 2^77.6``
and the bound is ~2^37.  Up to 2^92 a third residue, modulo the prime
``p = 2^31 - 1`` (int64 arithmetic, reduced every 30 additions so nothing
overflows), pins V modulo ``2^64 p`` by the Chinese remainder theorem and the
float64 value then only has to be within 2^93 (Figure 5 at n = 484, T = 22:
``B ~ 2^125.6``, bound ~2^87).  Beyond that :func:`leave_one_out_counts`
returns None and the caller uses the divide-and-conquer tables.

A sharper bound after the fact, from the float64 table itself.  Each of its
entries is a sum of non-negative terms rounded at most n times, so with
``M_t = max_u F_t(u)``, ``A_t(u) <= M_t / (1 - n u)``.  The alternating sum for
S adds at most one entry of each row t < T, the one for R also one of row T,
so the sum of the absolute values of the terms is at most ``sum_t M_t / (1 -
n u)``; each term carries a relative error of at most ``n u / (1 - n u)`` and
recursive summation of T + 1 terms adds at most ``(T + 1) u / (1 - (T + 1) u)``
times the same sum, whence

    |F - V| <= (n + T + 4) u (sum_{t <= T} M_t) (1 + 4 n u)

(the factor ``1 + 4 n u`` absorbing the denominators).  The row maxima sit far
below ``C(n, T)`` (the counts spread over ~T span sums, and ``M_t`` falls by a
factor ~n/t per row below T), so :func:`leave_one_out_counts` computes the
float64 table first and drops the third residue when this bound is below
2^61 (Figure 5 at n = 400, T = 20: ~2^58 instead of the a-priori ~2^70).

Float32, and fewer terms.  The same argument holds for a float32 table with
``u = 2^-24`` (an overflow past 2^128 makes the bound infinite, and float64
is used).  And the float residue need not add all T terms.  With ``L_t`` the
t-subset counts of the other n - 1 records, ``A_t(x) = L_t(x) + L_{t-1}(x -
v_a)`` exactly, so after m terms

    S_a(u) = sum_{k<m} (-1)^k A_{T-1-k}(u - k v_a) + (-1)^m L_{T-1-m}(u - m v_a),

with ``0 <= L_{T-1-m} <= A_{T-1-m} <= M_{T-1-m} / (1 - n u)``.  The m-term
sum in floating point is therefore within

    E(m) = (n + m + 4) u (M_T + sum_{k<m} M_{T-1-k}) (1 + 4 n u) + M_{T-1-m} (1 + 4 n u)

of S_a(u), and ``R_a = A_T - S_a(. - v_a)`` formed from it with one more
rounding within the same E(m) (``M_{-1} = 0``: E(T) is the bound above).  The
row maxima fall by a factor ~t/n per row below T, so a few terms suffice:
:func:`_float_terms` takes the fewest m with ``E(m) < 2^61`` (``2^92`` with
three residues), float32 first and float64 when float32 cannot reach it.  At
the authors' setting that is float32 with m = 1 (the float residue of S_a is
row T - 1 itself: ~2^54 + 2^58), at n = 484, T = 22 float64 with m = 5 and
three residues.  The exact residues need all T terms.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 3.
"""

from __future__ import annotations

import ctypes
import math
import os
import sys

import numpy as np

__all__ = ["LeaveOneOutR", "leave_one_out_counts", "exact_path_applies", "profile_work_units", "profile_seconds"]

_TWO64 = 2.0**64
_UNIT = 2.0**-53
_UNIT32 = 2.0**-24  # the unit roundoff of float32
_PRIME = 2**31 - 1  # third residue when counts exceed what two can locate
_INV_TWO64 = pow(2**64 % _PRIME, -1, _PRIME)


_MALLOC_TUNED = False


def _keep_freed_memory() -> None:
    """Ask glibc's malloc to keep freed memory for reuse (once per process; Linux only).

    One profile allocates and frees arrays of 0.1-5 MB by the dozen.  By default
    glibc returns such blocks to the kernel (``munmap``, or trimming the heap)
    and the next array faults its pages back in: ~10^4 page faults per
    database at Figure 5's sizes, measured as about 40 % of the run time
    (benchmarks/README.md).  Raising the trim threshold to 64 MB and the mmap
    threshold to 32 MB (``mallopt``) keeps them in the process: the cost is up
    to 64 MB of freed heap held by the process, not returned to the system.
    The setting is process-wide, so it can be declined: ``SMOOTHDP_MALLOC_TUNING=0``
    in the environment leaves the allocator alone (same results, slower).
    """
    global _MALLOC_TUNED
    if _MALLOC_TUNED:
        return
    _MALLOC_TUNED = True
    if not sys.platform.startswith("linux") or os.environ.get("SMOOTHDP_MALLOC_TUNING", "1") == "0":
        return
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return
    mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD


def _log2_max_count(n: int, T: int) -> float:
    """log2 of max_{t <= T} C(n, t), the largest possible subset count in the tables."""
    t = min(T, n // 2)
    return (math.lgamma(n + 1) - math.lgamma(t + 1) - math.lgamma(n - t + 1)) / math.log(2)


def _residues_needed(n: int, T: int) -> int:
    """2 (mod 2^64 and float64), 3 (also mod the prime 2^31 - 1), or 0 (beyond the error bound)."""
    if T < 1 or T > n:
        return 0
    log2_err = math.log2((n + T + 4) * (T + 2) * _UNIT) + _log2_max_count(n, T)
    if log2_err < 61.0:
        return 2
    if log2_err < 92.0:
        return 3
    return 0


def exact_path_applies(n: int, T: int) -> bool:
    """True when the float64 residue is accurate enough for the reconstruction (module docstring)."""
    return _residues_needed(n, T) > 0


# Run time of one profile on this path = work units x _UNIT_SECONDS + _PROFILE_SECONDS,
# calibrated on the reference machine (benchmarks/README.md, sampling average): the
# least-squares fit over 15 settings, times 1.5, so that the estimate lies within x0.8 to
# x2.5 of the measured CPU time in every one of them on the quiet machine (typically x1.1-x1.7
# above: an estimate that refuses should err high, but not by x3).
_UNIT_SECONDS = 4.95e-10
_PROFILE_SECONDS = 3.75e-3


def profile_work_units(n: int, T: int, grid_size: int, span: int, occupied: int, n_epsilon: int) -> float:
    """Work units of one profile on the exact-count path, from its sizes alone (no data).

    One unit is one cell of one residue's table touched once:

    * forward table: n records, each one flat addition over rows 1..T of
      the current layout, ``(T + 1)`` times the range of the records so far
      (from the median outwards: ~0.4 span on average for data spread over the
      occupied range, with the layout's growth): about ``n T (T span / 2 + 1)``
      per residue;
    * division by ``(1 + z y^v)``: one strided sum of T rows of ``W + v``
      per occupied value and residue, ``W = T span + 1`` (an upper count:
      the float residue sums only the terms its error bound needs, often one);
    * reconstruction and bounds of the pair search: about 8 passes over the
      ``2 occupied W`` entries of R and S, and one more per epsilon (an upper
      count for ``output="sum"``, which forms only a few rows of R);
    * the pairs recomputed in log space: ``grid_size W`` per epsilon, with a
      weight of 1.6 (measured; how many pairs survive the bounds depends on
      the data, which this model does not see).

    The residues are counted a priori (:func:`_residues_needed`), so a table
    that needs fewer after the fact is over-estimated, never under.
    """
    nres = _residues_needed(n, T)
    W = T * span + 1
    forward = n * T * (T * span / 2 + 1)
    division = occupied * T * (W + span / 2)
    entries = 2 * occupied * W * (8 + n_epsilon)
    return float(nres * (forward + division) + entries + 1.6 * grid_size * W * n_epsilon)


def profile_seconds(n: int, T: int, grid_size: int, span: int, occupied: int, n_epsilon: int) -> float:
    """Estimated run time of one profile on this path (see :func:`profile_work_units`)."""
    return profile_work_units(n, T, grid_size, span, occupied, n_epsilon) * _UNIT_SECONDS + _PROFILE_SECONDS


def _float_terms(rows_max: np.ndarray, n: int, T: int, unit: float, limit: float, group: int = 1) -> int | None:
    """The fewest terms m of the float residue's alternating sums whose error
    bound ``E(m)`` (module docstring) is below ``2^limit``, or None.

    ``rows_max[t]`` is the largest computed entry of row t of the float table.
    With ``group = g > 1`` the bound is for sums of up to g entries of R in
    the float's own arithmetic: ``g E(m)`` for the entries plus ``g^2 u (M_T +
    2^limit)`` for the g - 1 roundings of terms each at most ``M_T + E(m)``.
    """
    F = rows_max * (1 + 4 * n * unit)  # bounds on the exact row maxima
    if not np.all(np.isfinite(F)):
        return None
    extra = group * group * unit * (float(F[T]) + 2.0**limit) if group > 1 else 0.0
    for m in range(1, T + 1):
        rest = float(F[T - 1 - m]) if m < T else 0.0
        if group * ((n + m + 4) * unit * float(F[T] + F[T - m : T].sum()) + rest) + extra < 2.0**limit:
            return m
    return None


def _division_layout(rows: np.ndarray, T: int, k: int, Ws: int, Wp: int) -> np.ndarray:
    """G = (A_{T-1}, -A_{T-2}, ...), k rows of stride Wp (see leave_one_out_counts)."""
    G = np.zeros(k * Wp, dtype=rows.dtype)
    body = G.reshape(k, Wp)
    body[:, :Ws] = rows[T - 1 : T - 1 - k : -1, :Ws] if k < T else rows[T - 1 :: -1, :Ws]
    body[1::2, :Ws] *= np.uint64(2**64 - 1) if rows.dtype == np.uint64 else rows.dtype.type(-1)
    return G


def _divide(G: np.ndarray, k: int, Wp: int, weights: list[int], out: np.ndarray) -> None:
    """out[j] = the k-term alternating sum for weights[j]: one strided sum each."""
    item = G.itemsize
    Ws = out.shape[1]
    for j, vi in enumerate(weights):
        view = np.ndarray((k, Ws), dtype=G.dtype, buffer=G, strides=((Wp - vi) * item, item))
        np.add.reduce(view, axis=0, out=out[j])


def leave_one_out_counts(
    weights: np.ndarray, counts: np.ndarray, T: int
) -> tuple[LeaveOneOutR, np.ndarray, np.ndarray] | None:
    """R_a and S_a (see the module docstring) for every occupied value, as float64.

    Parameters
    ----------
    weights : int array (A,)
        Distinct weights of the occupied values, increasing, the first one 0.
    counts : int array (A,)
        Number of records at each weight (all >= 1), n = counts.sum().
    T : int
        Sample size, 1 <= T <= n.

    Returns
    -------
    tuple or None
        ``(R, S, P)`` of shapes (A, W), (A, W) and (W,), W = T * weights[-1] + 1:
        ``R[i, u]`` and ``S[i, u]`` for the records of weight ``weights[i]``
        (R a :class:`LeaveOneOutR`, whose rows are formed when read; S, P float64 arrays),
        and ``P[u] = A_T(u)`` (all n records), each within 2 ulp of the exact
        integer count; or None when the size is beyond the error bound of the
        module docstring.
    """
    v = np.asarray(weights, dtype=np.int64)
    c = np.asarray(counts, dtype=np.int64)
    n = int(c.sum())
    nres = _residues_needed(n, T)
    if nres == 0:
        return None
    _keep_freed_memory()
    span = int(v[-1])
    W = T * span + 1  # row width: sums of up to T records
    # the float residue: float32 when its a-posteriori bound allows (half the
    # memory traffic of float64), otherwise float64 with the bounds above; and
    # only the first m terms of its alternating sums (module docstring)
    with np.errstate(over="ignore", invalid="ignore"):
        approx = _forward_table(v, c, T, W, np.float32)
        m = _float_terms(approx.max(axis=1).astype(np.float64), n, T, _UNIT32, 61.0)
    if m is not None:
        nres = 2
    else:
        approx = _forward_table(v, c, T, W, np.float64)
        rows_max = approx.max(axis=1)
        m = _float_terms(rows_max, n, T, _UNIT, 61.0)
        if m is not None:
            nres = 2
        else:  # three residues (the a-priori bound holds for the full sums: m = T at worst)
            nres = 3
            m = _float_terms(rows_max, n, T, _UNIT, 92.0) or T
    exact = [_forward_table(v, c, T, W, dtype) for dtype in [np.uint64] + ([np.int64] if nres == 3 else [])]
    tabs = [exact[0], approx] + exact[1:]  # the order _combine takes: mod 2^64, float, mod p
    terms = [T, m] + [T] * (nres - 2)  # terms of the alternating sums, per residue
    # Division by (1 + z y^v) as strided sums.  Lay the rows out as
    # G = (A_{T-1}, -A_{T-2}, A_{T-3}, ...) with row stride Wp = Ws + (T - 1) span
    # (zeros after each row), so that (-1)^k A_{T-1-k}(y - k v) = G[y + k (Wp - v)]
    # (a negative column falls into the zeros of the row before): for every
    # record weight v one strided view of shape (terms, Ws) summed over its first
    # axis gives S(y), y < Ws = (T - 1) span + 1 (S is zero beyond).
    Ws = W - span
    Wp = Ws + (T - 1) * span
    Gs = [_division_layout(rows, T, k, Ws, Wp) for rows, k in zip(tabs, terms)]
    # (one term: the float residue of S is row T - 1 itself, the same for every value)
    S_res = [
        np.broadcast_to(rows[T - 1, :Ws], (v.size, Ws)) if k == 1 else np.empty((v.size, Ws), dtype=rows.dtype)
        for rows, k in zip(tabs, terms)
    ]
    S = np.zeros((v.size, W))
    # a few values at a time, so that the residues and their reconstruction
    # (about ten passes) stay in the cache
    step = max(1, 2**15 // W)
    for start in range(0, v.size, step):
        block = v[start : start + step].tolist()
        for rows, G, res, k in zip(tabs, Gs, S_res, terms):
            if k == 1:
                continue
            _divide(G, k, Wp, block, res[start : start + len(block)])
            if rows.dtype == np.int64:
                np.remainder(res[start : start + len(block)], _PRIME, out=res[start : start + len(block)])
        S[start : start + len(block), :Ws] = _combine(*[res[start : start + len(block)] for res in S_res])
    P = _combine(*[rows[T] for rows in tabs])
    limit = 92.0 if nres == 3 else 61.0
    R = LeaveOneOutR([rows[T] for rows in tabs], S_res, v)
    R.float_table = (approx, n, T, _UNIT32 if approx.dtype == np.float32 else _UNIT, limit)
    return R, S, P


class LeaveOneOutR:
    """``R[i, u] = A_T(u) - S_i(u - v_i)`` (samples avoiding one record of weight
    ``v_i``), reconstructed row by row on demand from the residues.

    The search over pairs reads only a few rows of R (the whole array only on
    its rarer paths, through ``np.asarray``), so the rows are formed when asked
    for: in each residue, ``A_T - S_i`` moved by ``v_i`` (the same arithmetic as
    the alternating sum with the ``A_T`` term added last, so the error bound
    of the module docstring covers the float residue), then reconstructed by
    :func:`_combine`.  Rows are float64, within 2 ulp of the exact counts.
    """

    def __init__(self, top: list[np.ndarray], S_res: list[np.ndarray], v: np.ndarray) -> None:
        self._top = top  # A_T in each residue, (W,)
        self._S = S_res  # S_i in each residue, (A, Ws)
        self._v = v
        #: (float table, n, T, its unit roundoff, log2 of the error allowed) for :meth:`grouped`
        self.float_table: tuple[np.ndarray, int, int, float, float] | None = None
        self.shape = (int(v.size), int(top[0].size))
        self.size = self.shape[0] * self.shape[1]
        self.ndim = 2

    def __len__(self) -> int:
        return self.shape[0]

    def rows(self, which: np.ndarray) -> np.ndarray:
        """The rows ``which`` (int array), shape (len(which), W)."""
        which = np.asarray(which, dtype=np.int64).reshape(-1)
        parts = []
        for top, res in zip(self._top, self._S):
            out = np.empty((which.size, top.size), dtype=top.dtype)
            out[:] = top
            Ws = res.shape[1]
            for j, i in enumerate(which.tolist()):
                vi = int(self._v[i])
                out[j, vi : vi + Ws] -= res[i]  # uint64 wraps: exact modulo 2^64
            if top.dtype == np.int64:
                np.remainder(out, _PRIME, out=out)
            parts.append(out)
        rows: np.ndarray = _combine(*parts)
        return rows

    def grouped(self, starts: np.ndarray, off: int, L: int) -> np.ndarray:
        """Sums of every row over groups of a padded output axis, within 2 ulp of the exact sums.

        The rows sit at ``[off, off + W)`` of an axis of length L (zeros
        elsewhere), grouped from ``starts`` (``np.add.reduceat``).  The group
        sums are formed in each residue before the reconstruction (one per
        group instead of one per output): exact modulo 2^64 and 2^31 - 1, and
        for the float residue with as many terms of S as its error bound for
        sums of the largest group needs (:func:`_float_terms` with ``group``).
        Without the float table, or beyond that bound, the rows are formed
        first and summed in float64 (the bounds' slack covers W ulp).
        """
        A, W = self.shape
        g = int(np.diff(np.append(starts, L)).max())
        m = None
        if self.float_table is not None:
            table, n, T, unit, limit = self.float_table
            with np.errstate(over="ignore", invalid="ignore"):
                m = _float_terms(table.max(axis=1).astype(np.float64), n, T, unit, limit, group=g)
        if m is None:
            X = np.zeros((A, L))
            X[:, off : off + W] = np.asarray(self)
            return np.asarray(np.add.reduceat(X, starts, axis=1))
        span = (W - 1) // T
        Ws = W - span
        Wp = Ws + (T - 1) * span
        Sf = np.empty((A, Ws), dtype=table.dtype)
        _divide(_division_layout(table, T, m, Ws, Wp), m, Wp, self._v.tolist(), Sf)
        parts = []
        for idx, (top, res) in enumerate(zip(self._top, self._S)):
            res = Sf if idx == 1 else res
            X = np.zeros((A, L), dtype=top.dtype)
            X[:, off : off + W] = top
            for i, vi in enumerate(self._v.tolist()):
                X[i, off + vi : off + vi + Ws] -= res[i]  # uint64 wraps: exact modulo 2^64
            Y = np.add.reduceat(X, starts, axis=1)  # int64: |sum| < g p, no overflow
            if top.dtype == np.int64:
                np.remainder(Y, _PRIME, out=Y)
            parts.append(Y)
        out: np.ndarray = _combine(*parts)
        return out

    def __getitem__(self, key: int | slice) -> np.ndarray:
        if isinstance(key, slice):
            return self.rows(np.arange(self.shape[0])[key])
        return np.asarray(self.rows(np.array([int(key)]))[0])

    def __array__(self, dtype: np.dtype[np.float64] | None = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.rows(np.arange(self.shape[0])), dtype=dtype)


def _forward_table(v: np.ndarray, c: np.ndarray, T: int, W: int, dtype: type) -> np.ndarray:
    """The subset counts ``A_t(u)``, t = 0..T, u < W, of all records, in ``dtype`` arithmetic.

    uint64 wraps (exact modulo 2^64), floats round, int64 is reduced modulo
    ``_PRIME`` every 30 records (each record at most doubles the values, so
    they stay below 2^(31 + 30)).  One record of weight w multiplies the
    generating function by ``(1 + z y^w)``: rows 1..T gain rows 0..T-1 moved by w.

    Layout (why it is fast): the table is one flat array, row after row, and
    each record is one contiguous addition over the flat array (numpy's
    fastest loop, ~3x faster per cell than a 2-D slice).  To keep the rows
    short, the records are taken from the median weight outwards, and row t
    is stored skewed, column ``u - t c + off`` for the median weight c: then
    moving row t to row t + 1 by w is one flat offset ``Wr + w - c`` for every
    row, and after records within weights ``[lo, hi]`` row t lives in columns
    ``[off - t (c - lo), off + t (hi - c)]``.  With ``off = pad_l + T (c -
    lo)``, ``pad_l = c - lo``, ``pad_r = hi - c`` and row stride ``Wr = pad_l
    + T (hi - lo) + 1 + pad_r``, a read one row back by ``Wr + w - c`` either
    lands in the row before inside its columns, or outside every live column
    (in the pads), where the table is zero: so the dead columns stay zero.
    When a record falls outside ``[lo, hi]`` the bounds grow (by a quarter of
    the range at least) and the table is copied to the wider layout (every
    row moves by the same column offset).  Rows beyond the number of records
    so far are zero and skipped.  Finally the live part of each row is copied
    out, unskewed, to the (T + 1, W) result.
    """
    span = int(v[-1])
    w_rec = np.repeat(np.asarray(v, dtype=np.int64), np.asarray(c, dtype=np.int64))
    cw = int(w_rec[(w_rec.size - 1) // 2])  # the median weight
    order = np.argsort(np.abs(w_rec - cw), kind="stable")
    w_rec = w_rec[order]
    lo = hi = cw
    Wr = 1
    X: np.ndarray = np.zeros((T + 3) * Wr, dtype=dtype)
    off = 0
    X[Wr + off] = 1  # the empty subset (row 0 starts at flat Wr: one zero row in front)
    Y = X.copy()
    for steps, w in enumerate(w_rec.tolist()):
        if w < lo or w > hi:  # widen the layout
            g = max(1, (hi - lo) // 4)
            lo2 = max(0, min(w, lo - g))
            hi2 = min(span, max(w, hi + g))
            Wr2 = (T + 1) * (hi2 - lo2) + 1
            off2 = (cw - lo2) + T * (cw - lo2)
            X2: np.ndarray = np.zeros((T + 3) * Wr2, dtype=dtype)
            d = off2 - off
            X2.reshape(T + 3, Wr2)[1 : T + 2, d : d + Wr] = X.reshape(T + 3, Wr)[1 : T + 2]
            X, Y = X2, X2.copy()
            lo, hi, Wr, off = lo2, hi2, Wr2, off2
        r = min(steps + 1, T)  # rows 1..r can change
        sh = Wr + w - cw
        np.add(X[2 * Wr : (r + 2) * Wr], X[2 * Wr - sh : (r + 2) * Wr - sh], out=Y[2 * Wr : (r + 2) * Wr])
        X, Y = Y, X
        if dtype is np.int64 and (steps + 1) % 30 == 0:  # values < 2^(31 + 30): reduce
            np.remainder(X, _PRIME, out=X)
    if dtype is np.int64:
        np.remainder(X, _PRIME, out=X)
    out: np.ndarray = np.zeros((T + 1, W), dtype=dtype)
    X2d = X.reshape(T + 3, Wr)
    for t in range(T + 1):  # row t: sums u = 0 .. t span at columns u - t c + off
        start = off - t * cw
        out[t, : t * span + 1] = X2d[t + 1, start : start + t * span + 1]
    return out


def _mod_prime(x: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """x mod p, in place, for int64 ``0 <= x < 2^62``, without a division: p = 2^31 - 1
    is a Mersenne prime, so ``2^31 = 1 (mod p)`` and two folds of the high bits
    onto the low ones leave ``x <= p + 1``; one conditional subtraction finishes.
    ``tmp`` is scratch space of x's shape (in-place work avoids fresh pages)."""
    for _ in range(2):
        np.right_shift(x, 31, out=tmp)
        np.bitwise_and(x, _PRIME, out=x)
        x += tmp
    np.subtract(x, _PRIME, out=x, where=x >= _PRIME)
    return x


def _combine(L: np.ndarray, F: np.ndarray, r: np.ndarray | None = None) -> np.ndarray:
    """float(V) from V mod 2^64 (uint64), a float64 value F near V and optionally V mod p (int64).

    Two residues: ``V = L + 2^64 h`` with ``h = round((F - L) / 2^64)``, exact
    when ``|F - V| < 2^62``.  Three: ``V = L + 2^64 k + 2^64 p h`` with
    ``k = (r - L) 2^-64 mod p`` (Chinese remainders) and ``h = round((F - L - 2^64 k)
    / (2^64 p))``, exact when ``|F - V| < 2^93``; then ``float(V) = float(h p + k)
    2^64 + float(L)``, h p + k computed exactly in int64.

    ``L`` is split into 32-bit halves ``L = 2^32 hi + lo``: ``float(L)`` is then
    one correctly rounded addition of two exact terms (numpy's own uint64 to
    float conversion is ~15x slower), and ``L mod p = (2 hi + lo) mod p``
    because ``2^32 = 2 (mod p)``.
    """
    hi = np.right_shift(L, np.uint64(32)).view(np.int64)
    lo = np.bitwise_and(L, np.uint64(0xFFFFFFFF)).view(np.int64)
    Lf = hi.astype(np.float64)
    Lf *= 2.0**32
    Lf += lo  # exact terms, one rounding
    h: np.ndarray = np.subtract(F, Lf)
    h *= 1.0 / _TWO64
    if r is None:
        np.rint(h, out=h)
        h *= _TWO64  # exact: h is a small integer
        h += Lf
        return h
    hi += hi
    hi += lo
    k = _mod_prime(hi, lo)  # L mod p (2^32 = 2 mod p)
    np.subtract(r, k, out=k)  # V - L mod p, in (-p, p)
    np.add(k, _PRIME, out=k, where=k < 0)
    k *= _INV_TWO64
    k = _mod_prime(k, lo)  # 0 <= k < p: V = L + 2^64 k mod 2^64 p
    h -= k
    h *= 1.0 / _PRIME
    np.rint(h, out=h)
    H = h.astype(np.int64)
    H *= _PRIME
    H += k  # < 2^62: exact
    out: np.ndarray = H.astype(np.float64)
    out *= _TWO64
    out += Lf
    return out
