"""The generic path of the mechanism protocol: the output laws of many histograms on
their common output space, and the privacy profile from every neighbour's law.

Used by :class:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism` for every mechanism
without a closed form (:class:`~smoothdp_nb.core.smoothed.mechanisms.finite.FiniteMechanism`,
post-processing, compositions).  The work is vectorised over histograms and outputs;
the only per-histogram Python work is the call of each law.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.divergence import log_hockey_stick_enclosure
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, LogEnclosure, U, next_up
from smoothdp_nb.core.numerics.privacy_loss.law import probability_ball
from smoothdp_nb.core.smoothed.mechanisms.enumeration import PAIR_CHUNK_CELLS
from smoothdp_nb.core.smoothed.mechanisms.outputs import factorize_outputs

__all__ = [
    "MEMO_OUTPUTS",
    "NEIGHBOURS",
    "LawBatch",
    "LawMemo",
    "active_memo",
    "gather_laws",
    "law_scope",
    "law_table",
    "neighbour_moves",
    "neighbour_profile_enclosure",
]

#: the laws of a batch of histograms, flat: (outputs in one or more parts, in order;
#: their log-probabilities; how many outputs each histogram's law has)
LawBatch = tuple[list[np.ndarray], FloatArray, IntArray]

#: outputs (over all laws) a :class:`LawMemo` keeps at most: about 16 bytes each
#: (a log-probability and a reference), 128 MiB at the bound
MEMO_OUTPUTS = 2**23


class LawMemo:
    """The output laws computed during one engine operation, by histogram (a tuple
    of counts): (outputs, log-probabilities).  Filled up to :data:`MEMO_OUTPUTS`
    outputs, then left as it is; dropped when the operation ends, so a law is
    never reused after the user's function may have changed."""

    def __init__(self) -> None:
        self.laws: dict[tuple[int, ...], tuple[np.ndarray, FloatArray]] = {}
        self.outputs = 0
        self.depth = 0


class LawSource(Protocol):
    """What the generic path asks of a mechanism: its output laws, in batches, and their error.

    :class:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism` satisfies it; naming the two
    methods here, rather than the class, keeps this module below the protocol that uses it.
    """

    def _log_output_pmfs(self, hists: IntArray) -> LawBatch: ...

    def log_output_pmf_error(self, hist: IntArray, log_p: FloatArray) -> FloatArray | float: ...


# the instance attribute holding the memo of the current scope
_MEMO_ATTRIBUTE = "_law_memo_active"


@contextmanager
def law_scope(mech: LawSource) -> Iterator[None]:
    """Within it (nested scopes are one), the generic path of ``mech`` computes
    each histogram's output law at most once (:class:`LawMemo`, kept on the
    instance); the memo is dropped when the outermost scope ends.  A mechanism
    with ``__slots__`` and no ``__dict__`` is not memoised."""
    store = getattr(mech, "__dict__", None)
    if store is None:
        yield
        return
    memo = store.setdefault(_MEMO_ATTRIBUTE, LawMemo())
    memo.depth += 1
    try:
        yield
    finally:
        memo.depth -= 1
        if memo.depth == 0:
            store.pop(_MEMO_ATTRIBUTE, None)


def active_memo(mech: LawSource) -> LawMemo | None:
    """The memo of ``mech``'s current :func:`law_scope`, if any."""
    store = getattr(mech, "__dict__", None)
    memo = None if store is None else store.get(_MEMO_ATTRIBUTE)
    return memo if isinstance(memo, LawMemo) else None


def gather_laws(mech: LawSource, hists: IntArray, memo: LawMemo | None) -> LawBatch:
    """The laws of the histograms (:meth:`Mechanism._log_output_pmfs`), each
    computed at most once while ``memo`` lives: the known ones are taken from
    it, the others computed in one batch and kept (within its bound)."""
    if memo is None:
        return mech._log_output_pmfs(hists)
    keys = [tuple(h) for h in np.asarray(hists).tolist()]
    known = memo.laws
    miss = [i for i, key in enumerate(keys) if key not in known]
    if miss:
        parts, logp, sizes = mech._log_output_pmfs(hists[miss])
        if len(parts) == len(miss):  # one array of outputs per law
            outs = parts
        else:
            flat = parts[0] if len(parts) == 1 else np.concatenate(parts)
            cuts = np.cumsum(sizes)[:-1]
            outs = np.split(flat, cuts)
        fresh = dict(zip((keys[i] for i in miss), zip(outs, np.split(logp, np.cumsum(sizes)[:-1]))))
        if memo.outputs + int(sizes.sum()) <= MEMO_OUTPUTS:
            known.update(fresh)
            memo.outputs += int(sizes.sum())
        if len(miss) == len(keys):
            return parts, logp, sizes
        laws = [known[key] if key in known else fresh[key] for key in keys]
    else:
        laws = [known[key] for key in keys]
    sizes_all = np.array([lp.size for _, lp in laws], dtype=np.int64)
    return [o for o, _ in laws], np.concatenate([lp for _, lp in laws]), sizes_all


def law_table(
    mech: LawSource, hists: IntArray, with_error: bool, own_error: bool, memo: LawMemo | None = None
) -> tuple[FloatArray, FloatArray | None]:
    """(len(hists), K): the laws of ``mech`` on the histograms placed on the union of
    their outputs (one factorization of all outputs at once), normalised, and with
    ``with_error`` a proven bound on the absolute error of each value (see
    :meth:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism._aligned_log_pmfs` for the
    argument); None without it.  ``own_error``: the mechanism states its own
    :meth:`~smoothdp_nb.core.smoothed.mechanisms.base.Mechanism.log_output_pmf_error`
    (called once per law), else that bound is 0.  ``memo``: see :func:`gather_laws`."""
    D = len(hists)
    parts, logp, sizes = gather_laws(mech, hists, memo)
    codes_parts, K = factorize_outputs(parts)
    codes = np.concatenate(codes_parts) if codes_parts else np.zeros(0, dtype=np.int64)
    del codes_parts
    flat = np.repeat(np.arange(D, dtype=np.int64), sizes)  # the row of each output, then its cell
    flat *= K
    flat += codes
    L: FloatArray = np.full(D * K, -np.inf)
    L[flat] = logp
    own: FloatArray = np.zeros(D * K)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    if with_error and own_error:  # the mechanism's own bound: one call per law (its hook)
        errs = [
            np.broadcast_to(
                np.asarray(mech.log_output_pmf_error(hists[r], logp[starts[r] : starts[r + 1]]), dtype=float),
                (int(sizes[r]),),
            )
            for r in range(D)
        ]
        err_flat = np.concatenate(errs) if errs else np.zeros(0)
        own[flat] = err_flat
    else:
        err_flat = np.zeros(flat.size)
    L = L.reshape(D, K)
    own = own.reshape(D, K)
    # laws listing one output several times (e.g. two NaN keys): their masses add
    hits = np.bincount(flat, minlength=D * K).reshape(D, K)
    for r in np.flatnonzero((hits > 1).any(axis=1)).tolist():
        c, lp, er = (
            codes[starts[r] : starts[r + 1]],
            logp[starts[r] : starts[r + 1]],
            err_flat[starts[r] : starts[r + 1]],
        )
        L[r] = -np.inf
        own[r] = 0.0
        np.logaddexp.at(L[r], c, lp)
        # a sum of positive terms keeps the largest relative error of its terms, plus
        # one log-add-exp rounding per term (u of its operands, LIBM_REL of its log1p)
        top = float(np.max(np.abs(lp[np.isfinite(lp)]), initial=0.0))
        np.maximum.at(own[r], c, er)
        own[r] += hits[r] * (4.0 * U * (top + 1.0) + LIBM_REL)
    del hits, flat, codes, err_flat  # (the table's peak memory is in what follows: 4.1e6 cells at n = 200)
    # each law sums to 1 up to rounding: make it exact to rounding, so equal
    # laws (e.g. a point mass reached by different sums) compare equal
    with np.errstate(invalid="ignore"):
        total: FloatArray = np.logaddexp.reduce(L, axis=1, keepdims=True)  # ufunc.reduce is typed Any
        out: FloatArray = L - total
    if not with_error:
        return out, None
    fin = np.isfinite(L)
    Lf = np.where(fin, L, 0.0)
    # the reduction: K log-add-exp steps, each off by u of its partial result and
    # LIBM_REL of a log1p term below log 2; none where the total is exactly 0
    top_all = np.max(np.abs(Lf), axis=1, keepdims=True, initial=0.0)
    red = np.where(total == 0.0, 0.0, K * (2.0 * U * (top_all + np.abs(total)) + LIBM_REL))
    # LIBM_REL |L| + u |out| + red + own, summed in this order, in place
    raw = np.abs(Lf)
    del Lf
    raw *= LIBM_REL
    tmp = np.where(fin, out, 0.0)
    np.abs(tmp, out=tmp)
    tmp *= U
    raw += tmp
    del tmp
    raw += red
    raw += own
    del own
    err = np.where(raw > 0, next_up(raw), 0.0)  # an exact 0 (log 1, as reported) stays exact
    del raw
    return out, np.where(fin, err, 0.0)


#: the neighbouring relations: one record replaced by another (the paper's), or one record added or removed
NEIGHBOURS = ("replace", "add-remove")


def neighbour_moves(m: int, neighbours: str = "replace") -> IntArray:
    """The moves that take a histogram of m categories to its neighbours, (M, m) int64:
    ``e_b - e_a`` for every a != b (``"replace"``: one record of a becomes one of b),
    or ``-e_a`` and ``+e_a`` for every a (``"add-remove"``: one record removed or added)."""
    eye = np.eye(m, dtype=np.int64)
    if neighbours == "add-remove":
        return np.concatenate([-eye, eye])
    a_idx, b_idx = np.nonzero(~np.eye(m, dtype=bool))
    out: IntArray = eye[b_idx] - eye[a_idx]
    return out


def neighbour_pairs(hists: IntArray, neighbours: str = "replace") -> tuple[IntArray, IntArray, IntArray, int]:
    """The neighbours of every row (:func:`neighbour_moves`; a histogram with a negative
    count, or an empty one, is no database): (distinct histograms among the rows and
    their neighbours, index of each row among them, (row, neighbour) pairs as (row
    number, index), count).

    The pairs are in row order (a row's pairs are contiguous)."""
    h = np.asarray(hists, dtype=np.int64)
    k, m = h.shape
    nb = h[:, None, :] + neighbour_moves(m, neighbours)[None]  # (k, M, m)
    ok = (nb >= 0).all(axis=2) & (nb.sum(axis=2) >= 1)
    rows, mv = np.nonzero(ok)
    every = np.concatenate([h, nb[rows, mv]])
    distinct, inv = np.unique(every, axis=0, return_inverse=True)
    inv = inv.ravel()
    return distinct, inv[:k], np.stack([rows, inv[k:]], axis=1), int(rows.size)


def _distinct_rows(*arrays: FloatArray) -> IntArray:
    """Index of each row among the distinct rows of the arrays side by side (equal
    when bit-identical): one hash pass (pandas), no sort of whole rows."""
    import pandas as pd  # deferred: only generic mechanisms dedupe rows; a first profile does without

    both = np.ascontiguousarray(np.concatenate(arrays, axis=1))
    keys = both.view(np.dtype((np.void, both.shape[1] * both.itemsize))).ravel()
    codes, _ = pd.factorize(keys.astype(object))
    return np.asarray(codes, dtype=np.int64)


def neighbour_profile_enclosure(
    mech: LawSource,
    hists: IntArray,
    epsilon: FloatArray,
    own_error: bool,
    memo: LawMemo | None = None,
    neighbours: str = "replace",
) -> LogEnclosure:
    """Proven bounds on log delta_eps(x) (Definition 2) for the rows: the largest
    hockey-stick divergence, both directions, between each row's law and each of
    its neighbours' laws (``neighbours``: the relation, :data:`NEIGHBOURS`).

    Every law is computed once (:func:`law_table`, with its error bounds), and the
    kernel (:func:`~smoothdp_nb.core.numerics.divergence.log_hockey_stick_enclosure`) runs
    once per *distinct* unordered pair of laws: the value a row needs from a
    neighbour is ``max(d(P, Q), d(Q, P))``, symmetric in the two laws, and a
    deterministic function of the two laws with their error bounds -- so pairs
    reached twice (a row and its neighbour both among the rows) or whose laws are
    bit-identical to those of another pair (mechanisms that read only some of the
    counts) share one evaluation, with the same enclosure as their own.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 2.
    """
    distinct, row_at, pairs, count = neighbour_pairs(hists, neighbours)
    k = len(hists)
    L, err = law_table(mech, distinct, True, own_error, memo)
    if err is None:  # (with_error=True always returns the bounds)
        raise RuntimeError("law_table returned no error bounds")
    # each law sums to 1: a mass alone in its law is exactly 1, so equal point masses
    # give delta_0 = 0 exactly, not the error of their logs
    L, err = probability_ball(L, err)
    law = _distinct_rows(L, err)
    a, b = law[row_at[pairs[:, 0]]], law[pairs[:, 1]]
    lo_l, hi_l = np.minimum(a, b), np.maximum(a, b)
    _, first = np.unique(law, return_index=True)  # a row of the table for each distinct law
    D = max(1, first.size)
    upairs, which = np.unique(lo_l * D + hi_l, return_inverse=True)
    i_all, j_all = first[upairs // D], first[upairs % D]
    E = epsilon.size
    K = L.shape[1]
    dlo = np.empty((upairs.size, E))
    dhi = np.empty((upairs.size, E))
    step = max(1, PAIR_CHUNK_CELLS // max(1, K * E))
    for s in range(0, upairs.size, step):
        i, j = i_all[s : s + step], j_all[s : s + step]
        d = log_hockey_stick_enclosure(L[i], L[j], epsilon, err[i], err[j]).maximum(
            log_hockey_stick_enclosure(L[j], L[i], epsilon, err[j], err[i])
        )
        dlo[s : s + step] = np.reshape(d.lower, (i.size, E))
        dhi[s : s + step] = np.reshape(d.upper, (i.size, E))
    lo: FloatArray = np.full((k, E), -np.inf)
    hi: FloatArray = np.full((k, E), -np.inf)
    if count:
        np.maximum.at(lo, pairs[:, 0], dlo[which.ravel()])
        np.maximum.at(hi, pairs[:, 0], dhi[which.ravel()])
    return LogEnclosure(np.minimum(lo, 0.0), np.minimum(hi, 0.0))
