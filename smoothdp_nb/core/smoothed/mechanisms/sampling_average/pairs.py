"""The search over (removed value, replacement) pairs of the sampling average's exact privacy profile.

Rigorous linear-scale bounds on the exact leave-one-out counts of :mod:`.count_tables`
(Algorithm 3), so that only the pairs that can attain the maximum are recomputed in log space
(by the caller,
:meth:`smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism.SamplingAverage._log_profile_counts`).

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 3.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import LeaveOneOutR

__all__ = ["candidate_pairs"]

# Relative slack covering the rounding of every linear-scale input below: the
# counts (2 ulp), one product by e^eps or expm1(eps) and one addition (1 ulp
# each), and group sums of at most W non-negative terms (W ulp, W < 10^5).
_SLACK = 1e-10


def _hinge(a: np.ndarray, b: np.ndarray, upper: bool, axis: int = -1) -> np.ndarray:
    """sum [a - b]_+ with a, b known to relative ``_SLACK``: an upper or a lower bound.

    ``fl(x - y)`` is the exact difference to one rounding, so skewing the
    inputs by the slack and the result by 1e-9 (the relative error of a sum
    of non-negative terms) brackets the true value."""
    if upper:
        out = np.maximum(a * (1 + _SLACK) - b * (1 - _SLACK), 0.0).sum(axis=axis) * (1 + 1e-9)
    else:
        out = np.maximum(a * (1 - _SLACK) - b * (1 + _SLACK), 0.0).sum(axis=axis) * (1 - 1e-9)
    return np.asarray(out)


def candidate_pairs(
    R: LeaveOneOutR | np.ndarray,
    S: np.ndarray,
    P: np.ndarray,
    v: np.ndarray,
    shifts: np.ndarray,
    epsilon: np.ndarray,
    T: int,
    group: Callable[[int, int], np.ndarray] | None = None,
) -> list[tuple[int, np.ndarray]]:
    """Pairs (removed value i, replacements) among which every maximiser of the divergence lies.

    In count units (divide by C(n, T) for probabilities), replacing one record
    of local weight ``v[i]`` by one of local weight ``beta = shifts[b]`` turns
    the output law ``P`` into ``Q(u) = R_i(u) + S_i(u - beta)``, while
    ``P(u) = R_i(u) + S_i(u - v_i)``.  With ``c = e^eps - 1``:

    * ``d(Q, P) = sum_x [S_i(x) - Z_i(x + beta)]_+``, ``Z_i = c P + S_i(. - v_i)``
      (non-negative, zero outside the support of P);
    * ``d(P, Q) = sum_u [S_i(u - v_i) - c R_i(u) - e^eps S_i(u - beta)]_+
      <= U_i = sum_u [S_i(u - v_i) - c R_i(u)]_+`` (free of beta);
    * ``d(Q, P) <= g(beta) = sum_x [max_i S_i(x) - c P(x + beta)]_+`` (free of i).

    The exact values at the replacement with the largest block bound (usually
    an end of the grid) give a first lower bound on the maximum; a value of i (direction d(P, Q), all beta) or
    of beta (direction d(Q, P), all i) is evaluated only if its bound can
    reach the best lower bound so far.  Every evaluated pair whose upper
    value reaches the final lower bound is returned, so the maximising pairs
    are among them; the caller recomputes those in log space.  ``group``
    (start indices on the padded output axis, see below) post-processes both
    laws first (the rounded mean): the bounds above stay valid because
    post-processing cannot increase a divergence.

    The padded output axis runs over ``u`` from ``min(0, min(shifts))``; the
    caller's ``group(u0, L)`` returns the group starts for an axis of length
    L beginning at local sum u0.
    """
    A, W = R.shape
    E = epsilon.size
    span = int(v[-1])
    Ws = W - span  # support width of S (sums of T - 1 records)
    shifts = np.asarray(shifts, dtype=np.int64)
    u0 = min(0, int(shifts.min()))
    u1 = max(W - 1, Ws - 1 + int(shifts.max()))
    off = -u0
    L = u1 - u0 + 1
    starts = None if group is None else group(u0, L)

    def grp(x: np.ndarray) -> np.ndarray:
        return x if starts is None else np.add.reduceat(x, starts, axis=-1)

    Pp = np.zeros(L)
    Pp[off : off + W] = P

    def padded(X: np.ndarray) -> np.ndarray:  # rows of R on the padded output axis
        out = np.zeros((X.shape[0], L))
        out[:, off : off + W] = X
        return out

    Sz = S[:, :Ws]

    def own_rows(rows: np.ndarray, beta: int, width: int) -> np.ndarray:
        # (len(rows), width): S_i(x + beta - v_i), x < width, the records' own contribution
        # to P at output x + beta (one slice per row: no index arrays)
        out = np.zeros((rows.size, width))
        for j, i in enumerate(rows.tolist()):
            d = beta - int(v[i])
            x0, x1 = max(0, -d), min(width, Ws - d)
            if x0 < x1:
                out[j, x0:x1] = Sz[i, x0 + d : x1 + d]
        return out

    own = np.arange(A)
    ee = np.exp(epsilon)
    cc = np.expm1(epsilon)
    best = np.zeros(E)  # lower bounds on the maximum, per eps
    evaluated: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows i, shift index b, upper values (., E))

    def shifted_S(beta: int) -> np.ndarray:
        out = np.zeros((A, L))
        out[:, off + beta : off + beta + Ws] = Sz
        return out

    ratio = (1 + _SLACK) / (1 - _SLACK)
    Smax = np.zeros(-(-Ws // 16) * 16)  # max_i S_i(x), padded to whole blocks (below)
    Smax[:Ws] = Sz.max(axis=0)
    Smax_up = Smax[:Ws] * ratio
    if starts is not None:
        Rg = R.grouped(starts, off, L) if isinstance(R, LeaveOneOutR) else grp(padded(R))
        Pg = grp(Pp)

    def eval_beta(b: int) -> None:  # d(Q, P) for every i at one replacement
        beta = int(shifts[b])
        rows = own[v != beta]
        if rows.size == 0:
            return
        up = np.empty((rows.size, E))
        if starts is None:
            # sum_x [S_i(x) - c P(x + beta) - S_i(x + beta - v_i)]_+, skewed as in _hinge
            # columns x where even max_i S_i(x), skewed up, is at most c P(x + beta) for the
            # smallest c add an exact 0 for every i and epsilon (rounding is monotone): skip them
            Pb = Pp[off + beta : off + beta + Ws]
            pos = np.flatnonzero(Smax_up > cc.min() * Pb)
            if pos.size == 0:
                evaluated.append((rows, np.full(rows.size, b), np.zeros((rows.size, E))))
                return
            x0, x1 = int(pos[0]), int(pos[-1]) + 1
            Pb = Pb[x0:x1]
            Svb = own_rows(rows, beta + x0, x1 - x0)  # S_i(x + beta - v_i), x in [x0, x1)
            Sr = Sz[:, x0:x1] if rows.size == A else Sz[rows, x0:x1]
            Du = np.multiply(Sr, ratio)  # S skewed up by the slack (see _hinge)
            Du -= Svb
            buf = np.empty_like(Du)
            for k in range(E):
                cP = cc[k] * Pb
                np.subtract(Du, cP, out=buf)
                np.maximum(buf, 0.0, out=buf)
                up[:, k] = buf.sum(axis=1) * ((1 - _SLACK) * (1 + 1e-9))
                # a lower bound on the maximum: the row of the largest upper value, S skewed down
                j = int(np.argmax(up[:, k]))
                low = np.maximum(Sr[j] / ratio - Svb[j] - cP, 0.0).sum() * ((1 + _SLACK) * (1 - 1e-9))
                best[k] = max(best[k], float(low))
        else:
            Q = Rg[rows] + grp(shifted_S(beta)[rows])
            for k in range(E):
                ePg = ee[k] * Pg
                up[:, k] = _hinge(Q, ePg[None, :], upper=True)
                best[k] = max(best[k], float(_hinge(Q, ePg[None, :], upper=False).max()))
        evaluated.append((rows, np.full(rows.size, b), up))

    def eval_row(i: int, bs: np.ndarray) -> None:  # d(P, Q) for one i, replacements bs
        bs = bs[shifts[bs] != v[i]]
        if bs.size == 0:
            return
        Q = np.zeros((bs.size, L))
        cols = (off + shifts[bs])[:, None] + np.arange(Ws)[None, :]
        np.put_along_axis(Q, cols, np.broadcast_to(Sz[i], (bs.size, Ws)), axis=1)
        Ri = padded(R[i : i + 1])
        up = np.empty((bs.size, E))
        for k in range(E):
            if starts is None:
                a_, b_ = own_rows(np.array([i]), u0, L), cc[k] * Ri + ee[k] * Q
            else:
                a_, b_ = grp(Pp)[None, :], ee[k] * grp(Ri + Q)
            lo_ = _hinge(a_, b_, upper=False)
            up[:, k] = _hinge(a_, b_, upper=True)
            best[k] = max(best[k], float(lo_.max()))
        evaluated.append((np.full(bs.size, i), bs, up))

    m = shifts.size
    # d(Q, P), bounded first in blocks of K sums:
    # sum_{x in block} [S_i(x) - c P(x + beta)]_+ <= K [max_{i, x in block} S_i(x) - c min_{block} P(. + beta)]_+
    K = 16
    nblk = -(-Ws // K)
    Sblk = Smax.reshape(nblk, K).max(axis=1)
    Pmin = np.concatenate([Pp, np.zeros(nblk * K)])
    width = 1
    while width < K:  # Pmin[y] = min P[y .. y + K - 1]
        Pmin[:-width] = np.minimum(Pmin[:-width], Pmin[width:])
        width *= 2
    first = off + int(shifts.min())
    blkmin = np.ndarray(
        (m, nblk), dtype=float, buffer=Pmin, offset=first * Pmin.itemsize, strides=(Pmin.itemsize, K * Pmin.itemsize)
    )[off + shifts - first]
    coarse = np.stack([K * _hinge(Sblk[None, :], cc[k] * blkmin, upper=True) for k in range(E)], axis=1)
    # the replacement with the largest bound (usually a far end of the grid) gives a first best
    top = int(np.argmax(coarse.max(axis=1)))
    eval_beta(top)
    rest = np.nonzero(np.any(coarse >= best, axis=1))[0]
    rest = rest[rest != top]
    if rest.size:  # then the exact bound g(beta), sum by sum
        win = np.lib.stride_tricks.sliding_window_view(Pp, Ws)[off + shifts[rest]]  # (., Ws): P(x + beta)
        g = np.stack([_hinge(Smax[None, :Ws], cc[k] * win, upper=True) for k in range(E)], axis=1)
        for j in np.argsort(-g.max(axis=1)):
            if np.any(g[j] >= best):
                eval_beta(int(rest[j]))
    # d(P, Q): rows whose bound can reach the best
    # (first for all i at once: R_i >= min_i R_i, and S_i(u - v_i) = P - R_i)
    # a lower bound on min_i R_i(u) = P(u) - max_i S_i(u - v_i) without forming R:
    # P and S within 2 ulp (2^-51 relative), skewed by 2^-49 so that the
    # difference, rounded once, is at most min_i R_i (1 + 2^-53), which the
    # slack of _hinge covers
    Smax_own = np.zeros(W)
    for i, vi in enumerate(v.tolist()):
        np.maximum(Smax_own[vi : vi + Ws], Sz[i], out=Smax_own[vi : vi + Ws])
    Rmin = np.maximum(P * (1 - 2.0**-49) - Smax_own * (1 + 2.0**-49), 0.0)
    Ug = np.array([_hinge(P, ee[k] * Rmin, upper=True) for k in range(E)])
    if np.any(Ug >= best):
        Rp = padded(np.asarray(R))
        Sv = own_rows(own, u0, L)  # S_i(u - v_i) on the padded output axis
        U = np.stack([_hinge(Sv, cc[k] * Rp, upper=True) for k in range(E)], axis=1)  # (A, E)
        for i in np.argsort(-U.max(axis=1)):
            if np.any(U[i] >= best):
                eval_row(int(i), np.arange(m))
    out: dict[int, set[int]] = {}
    for rows, bs, up in evaluated:
        keep = np.any(up >= best[None, :], axis=1)
        for i, b in zip(rows[keep].tolist(), bs[keep].tolist()):
            out.setdefault(i, set()).add(b)
    return [(i, np.array(sorted(bs), dtype=np.int64)) for i, bs in sorted(out.items())]
