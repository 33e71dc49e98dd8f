"""Exact smoothed delta (Algorithm 1): the profile of every histogram, then the
expectation of every composition of the hull vertices by the engines of
:mod:`.binary` (two categories, at most two vertices) or :mod:`.general`.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 1.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import threading
import time
from typing import Any, NamedTuple

import numpy as np
from scipy.special import logsumexp

from smoothdp_nb.core.numerics import lpmf
from smoothdp_nb.core.numerics.enclosures import LGAMMA_REL, LIBM_REL, U, gamma, log_rel, lpmf_abs_error
from smoothdp_nb.core.numerics.hull import HullReduction
from smoothdp_nb.core.runtime.budget import Estimate, check_budget
from smoothdp_nb.core.runtime.parallel import engine_threads, helper_thread
from smoothdp_nb.core.runtime.progress import optional_progress_bar
from smoothdp_nb.core.smoothed.engines.binary import binary_plan, engine_error, exact_binary, window_log_bound
from smoothdp_nb.core.smoothed.engines.chunks import HELPER_MIN_N, profile_chunk_rows
from smoothdp_nb.core.smoothed.engines.estimate import estimate_exact_cost
from smoothdp_nb.core.smoothed.engines.general import all_histograms, exact_general
from smoothdp_nb.core.smoothed.engines.pruning import PRUNE_MIN_N, prune_plan, single_vertex_error
from smoothdp_nb.core.smoothed.engines.remote import remote_profile_table
from smoothdp_nb.core.smoothed.engines.results import SmoothedResult, assemble_result, dp_pair
from smoothdp_nb.core.smoothed.engines.window import WindowCertificate, windowed_smoothed

__all__ = ["smoothed_exact"]


def _distinct_columns(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct columns of a, index of each original column among them).

    Bit-identical columns are found by their bytes (np.unique(axis=1) sorts
    whole columns and costs far more than the smoothed delta itself).
    """
    seen: dict[bytes, int] = {}
    col = np.array([seen.setdefault(np.ascontiguousarray(a[:, j]).tobytes(), len(seen)) for j in range(a.shape[1])])
    first = np.unique(col, return_index=True)[1]
    return a[:, first], col


def _helper(n: int) -> cf.Executor | None:
    """One helper thread for a large two-category computation, where the
    process may use a second CPU (None otherwise).

    A thread, not a process: the shared work (profile chunks, the engine's
    BLAS products and correlations) releases the GIL, and a thread needs
    neither a fork of this (threaded) process nor pickling (see
    :mod:`smoothdp_nb.core.runtime.parallel`).
    """
    return helper_thread() if n >= HELPER_MIN_N else None


#: a profile whose enclosure is wider than this (``upper - lower`` in the log) is
#: left out of the refined lower bound (:func:`lower_offset`) instead of widening it
WIDE_PROFILE = 2.0**-20


class ProfileWidths(NamedTuple):
    """How wide the profiles' enclosures are, per epsilon (column).

    ``largest``: the largest ``upper - lower`` over all histograms (inf where
    some lower bound is 0); ``narrow``: the largest over the histograms with
    ``upper - lower <= WIDE_PROFILE``; ``log_wide``: the largest upper bound
    (log) among the others (-inf when there are none).
    """

    largest: np.ndarray
    narrow: np.ndarray
    log_wide: np.ndarray


def profile_widths(upper: np.ndarray, width: np.ndarray) -> ProfileWidths:
    """:class:`ProfileWidths` of a table of upper bounds (rows: histograms) and their widths."""
    wide = width > WIDE_PROFILE
    return ProfileWidths(
        width.max(axis=0),
        np.where(wide, 0.0, width).max(axis=0),
        np.where(wide, upper, -np.inf).max(axis=0),
    )


def lower_offset(best: np.ndarray, up: np.ndarray, widths: ProfileWidths) -> np.ndarray:
    """``down`` per epsilon such that ``best - down`` is a proven lower bound
    on the largest expectation, whose engine value (from the profiles' upper
    bounds) is ``best`` (log), exact within ``up >= log(1 + rel)`` in the log (per epsilon).

    Two bounds, the better one taken.  (1) Every profile's lower bound is at
    least its upper bound times ``e^-largest``, so every expectation's is too:
    ``down = largest + up``; one histogram whose lower bound is 0 makes
    this inf (a lower bound of 0).  (2) Leave the wide profiles out: with ``w(x)`` the
    composition's weights (a probability law, so ``sum w <= 1``) and ``B`` the
    largest upper bound among the wide profiles, ``sum_wide w(x) delta_up(x)
    <= B``, and every narrow profile is at least ``delta_up e^-narrow``, so
    ``E >= e^-narrow (E_up - B) >= e^-narrow (e^(best - up) - B)``, i.e.
    ``down = narrow + up - log(1 - B e^(up - best))`` when ``B < e^(best - up)``.
    """
    lr = np.asarray(up, dtype=float)
    first = widths.largest + lr
    top = best - lr
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = widths.log_wide - top  # log(B / (e^best / (1 + rel)))
        second = np.where(gap < 0, widths.narrow + lr - np.log1p(-np.exp(gap)), np.inf)
    # log1p and exp carry a few ulps each: 1e-15 relative more, rounded up
    second = second * (1.0 + 1e-15) + 1e-300
    out: np.ndarray = np.minimum(first, np.where(np.isfinite(best), second, np.inf))
    return out


def _profile_chunk(mech: Any, hists: np.ndarray, e: np.ndarray) -> np.ndarray:
    """(rows, 2E): the proven upper bounds on log delta, then ``upper - lower``
    (0 for an exact zero, inf where the lower bound is 0)."""
    enc = mech._profile(np.asarray(hists, dtype=np.int64), e)  # the hook: smoothed_delta validated the input
    hi = np.reshape(enc.upper, (-1, e.size))
    lo = np.reshape(enc.lower, (-1, e.size))
    with np.errstate(invalid="ignore"):
        width = np.where(np.isneginf(hi), 0.0, hi - lo)
    return np.concatenate([hi, width], axis=1)


def _profile_table(
    mech: Any,
    hists: np.ndarray,
    e: np.ndarray,
    helper: cf.Executor | None = None,
    executor: cf.Executor | None = None,
) -> tuple[np.ndarray, ProfileWidths]:
    """(proven upper bounds on log delta of every histogram (rows) at every
    epsilon (columns), their :class:`ProfileWidths`), in fixed chunks of rows.

    With a helper, this thread and the helper take the next chunk from one
    shared queue until none is left: on a shared CPU the thread the scheduler
    runs more does more chunks, where a fixed half each left the faster one
    idle while the slower finished.  The chunks are the same either
    way, so the table is bit-identical to the serial one; a chunk the helper
    took but did not finish (it failed) is computed here.  With an ``executor``
    (a pool, a Dask cluster) the same chunks run there instead
    (:func:`~.remote.remote_profile_table`), bit-identical too.
    """
    rows = profile_chunk_rows(e.size)
    if executor is not None:
        table = remote_profile_table(executor, _profile_chunk, mech, hists, e, rows)
        return table[:, : e.size], profile_widths(table[:, : e.size], table[:, e.size :])
    out = np.empty((len(hists), 2 * e.size))
    starts = list(range(0, len(hists), rows))
    done = np.zeros(len(starts), dtype=bool)
    queue = iter(range(len(starts)))
    gate = threading.Lock()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            with gate:
                k = next(queue, None)
            if k is None:
                return
            i = starts[k]
            out[i : i + rows] = _profile_chunk(mech, hists[i : i + rows], e)
            done[k] = True

    fut = helper.submit(work) if helper is not None and len(starts) > 1 else None
    try:
        work()
    finally:
        stop.set()  # after an interrupt here, the helper takes no further chunk
    if fut is not None:
        try:
            fut.result()
        except Exception:  # it failed there: its unfinished chunk is computed below
            pass
    for k in np.flatnonzero(~done):
        i = starts[k]
        out[i : i + rows] = _profile_chunk(mech, hists[i : i + rows], e)
    return out[:, : e.size], profile_widths(out[:, : e.size], out[:, e.size :])


def _mirrored_profile_table(
    mech: Any, hists: np.ndarray, e: np.ndarray, helper: cf.Executor | None, executor: cf.Executor | None = None
) -> tuple[np.ndarray, ProfileWidths]:
    """:func:`_profile_table` of the two-category histograms ``(k, n - k)``, k = 0 .. n.

    For a ``label_symmetric`` mechanism delta(k, n - k) = delta(n - k, k)
    exactly (swapping the categories maps the mechanism's laws at x and at
    each neighbour onto its laws at the swapped histograms, and a hockey-stick
    divergence does not change when both laws' outputs are relabelled), so
    the proven bounds of one histogram of each mirror pair are proven bounds
    of the other: only k <= n / 2 is computed, half the profiles.
    """
    n = len(hists) - 1
    if not (mech.label_symmetric and n >= 2 and np.array_equal(hists[:, 0], np.arange(n + 1))):
        return _profile_table(mech, hists, e, helper, executor)
    h = n // 2
    half, widths = _profile_table(mech, hists[: h + 1], e, helper, executor)
    return np.concatenate([half, half[: n - h][::-1]]), widths


def _two_vertex_engine(
    logdelta: np.ndarray,
    p1: float,
    p2: float,
    bar: Any,
    helper: cf.Executor | None,
    stats: dict[str, float],
    stop: int | None = None,
) -> np.ndarray:
    """:func:`exact_binary` on all columns (compositions 0 .. ``stop``).  From ``HELPER_MIN_N`` records on,
    with two columns or more, always in two halves of columns with the plan of
    all of them (so the result does not depend on whether a helper ran one).
    ``stats`` receives what the error bound needs from both halves (the
    largest of each figure; the fallback if either half took it)."""
    n, E = logdelta.shape[0] - 1, logdelta.shape[1]
    if n < HELPER_MIN_N or E < 2:
        return exact_binary(logdelta, p1, p2, bar, stats=stats, stop=stop)
    plan = binary_plan(logdelta, p1, p2)
    halves = [np.arange(0, E, 2), np.arange(1, E, 2)]
    out = np.empty_like(logdelta)
    fut = None
    other: dict[str, float] = {}
    if helper is not None:
        fut = helper.submit(
            exact_binary, np.ascontiguousarray(logdelta[:, halves[1]]), p1, p2, None, plan=plan, stats=other, stop=stop
        )
    out[:, halves[0]] = exact_binary(
        np.ascontiguousarray(logdelta[:, halves[0]]), p1, p2, bar, plan=plan, stats=stats, stop=stop
    )
    try:
        if fut is None:
            raise RuntimeError("no helper process")
        out[:, halves[1]] = fut.result()
    except Exception:  # no helper, or it failed: the same half here
        if bar is not None:
            bar.reset(total=n + 1)
        other = {}
        out[:, halves[1]] = exact_binary(
            np.ascontiguousarray(logdelta[:, halves[1]]), p1, p2, bar, plan=plan, stats=other, stop=stop
        )
    for key, value in other.items():  # every figure is a maximum (the fallback flag 0 or 1)
        stats[key] = max(stats.get(key, value), value)
    return out


def smoothed_exact(
    mech: Any,
    n: int,
    red: HullReduction,
    e: np.ndarray,
    progress: bool | None,
    budget: float,
    executor: cf.Executor | None = None,
) -> SmoothedResult:
    """Algorithm 1, exact and certified; the profile chunks on ``executor`` when one is given
    (the windowed certificate and the averaging engines run in this process).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 1.
    """
    # each output law once: the estimate's probes, every chunk of profiles and the DP delta share them
    with mech._law_scope():
        return _smoothed_exact(mech, n, red, e, progress, budget, executor)


def _smoothed_exact(
    mech: Any,
    n: int,
    red: HullReduction,
    e: np.ndarray,
    progress: bool | None,
    budget: float,
    executor: cf.Executor | None = None,
) -> SmoothedResult:
    t0 = time.perf_counter()
    V = red.vertices
    l, m = V.shape
    cert = windowed_smoothed(mech, n, V, e, budget)
    if cert is not None:
        return window_result(mech, n, red, e, cert, t0)
    est = Estimate(*estimate_exact_cost(mech, n, V, e.size, e, window=False))  # the certificate failed
    check_budget(
        est,
        budget,
        f"the exact smoothed delta for n={n}, m={m}, {l} hull vertices and {e.size} epsilon values",
        "use method='monte-carlo' or fewer epsilon values",
        parameter="n",
    )
    show = (est.seconds > 2.0) if progress is None else bool(progress)
    hists = all_histograms(n, m)
    # one BLAS thread per worker (this thread and the helper), the caller's limits restored after
    with engine_threads():
        helper = _helper(n) if m == 2 and l <= 2 else None
        try:
            return _exact_with(mech, n, red, e, show, hists, helper, t0, executor)
        finally:
            if helper is not None:
                # nothing runs there after a normal return; after an interrupt, do not wait for it
                helper.shutdown(wait=False, cancel_futures=True)


def _exact_with(
    mech: Any,
    n: int,
    red: HullReduction,
    e: np.ndarray,
    show: bool,
    hists: np.ndarray,
    helper: cf.Executor | None,
    t0: float,
    executor: cf.Executor | None = None,
) -> SmoothedResult:
    V = red.vertices
    l, m = V.shape
    if m == 2:
        full, widths = _mirrored_profile_table(mech, hists, e, helper, executor)
    else:
        full, widths = _profile_table(mech, hists, e, helper, executor)
    # the worst case over every database of n records: the same enumeration (Theorem 1)
    dp = dp_pair(mech, n, e, m, all_profiles=full)
    # Several epsilon often give bit-identical profiles (e.g. when only outputs
    # impossible under the neighbour count matter): average each distinct one once.
    logdelta, col = _distinct_columns(full)
    bound_only = None
    rel: float | np.ndarray
    if m == 2 and l <= 2:
        p1 = float(V[0, 0])
        if l == 1:
            comps = np.array([[n]])
            lw = lpmf.log_binom_pmf(np.arange(n + 1, dtype=float), float(n), p1)
            vals = logsumexp(lw[:, None] + logdelta, axis=0)[None, :]
            rel = single_vertex_error(n, lw, logdelta)
        else:
            vals, bound_only, rel = _two_vertex(logdelta, p1, float(V[1, 0]), show, helper)
            r = np.arange(n + 1)
            comps = np.stack([n - r, r], axis=1)
    else:
        bar = optional_progress_bar(math.comb(n + l - 1, l - 1), show, "compositions")
        comps, vals = exact_general(logdelta, n, m, V, bar)
        if bar is not None:
            bar.close()
        rel = general_error(n, m, l, logdelta, V)
    vals = vals[:, col]
    # the engines ran on the profiles' upper bounds: the expectations' upper
    # bounds are theirs times 1 + rel; the lower bound of the largest (the
    # smoothed delta's) from the profiles' widths (lower_offset), at the
    # largest value that is not only a bound (a pruned composition's)
    up = np.broadcast_to(np.asarray(log_rel(rel), dtype=float), (logdelta.shape[1],))[col]
    if bound_only is not None:
        bound_only = bound_only[:, col]
    best = (vals if bound_only is None else np.where(bound_only, -np.inf, vals)).max(axis=0)
    down = lower_offset(best, up, widths)
    return assemble_result(mech, n, red, e, comps, vals, "exact", t0, dp, log_err=(up, down), bound_only=bound_only)


def window_result(
    mech: Any, n: int, red: HullReduction, e: np.ndarray, cert: WindowCertificate, t0: float
) -> SmoothedResult:
    """The result of :func:`~smoothdp_nb.core.smoothed.engines.window.windowed_smoothed`: one row
    per epsilon, the end composition that attains the lower bound, its value the proven upper
    bound on every composition's expectation; no table of n + 1 compositions is held."""
    l = red.vertices.shape[0]
    comps = np.zeros((l, l), dtype=np.int64)
    comps[np.arange(l), np.arange(l)] = n
    vals = np.full((l, e.size), -np.inf)
    vals[cert.end, np.arange(e.size)] = cert.upper
    down = np.where(np.isfinite(cert.lower), cert.upper - cert.lower, np.inf)
    bound_only = None
    if l == 2:  # the other end: only a proven upper bound (every composition is below cert.upper)
        bound_only = np.zeros((l, e.size), dtype=bool)
        bound_only[1 - cert.end, np.arange(e.size)] = True
        vals[1 - cert.end, np.arange(e.size)] = cert.upper
    note = (
        f"windowed certificate: profiles of {cert.profiles} histograms, the {cert.near} compositions next to "
        "the ends by induction and the others by Chernoff bounds on ranges of databases"
        + (
            f" ({cert.middle} of the histograms between the vertices, where delta is nearly flat)"
            if cert.middle
            else ""
        )
        + "; every composition's expectation is proven at most the upper bound"
    )
    return assemble_result(
        mech,
        n,
        red,
        e,
        comps,
        vals,
        "exact",
        t0,
        dp_pair(mech, n, e, red.vertices.shape[1]),
        extra_notes=[note],
        log_err=(np.zeros(e.size), down),
        bound_only=bound_only,
    )


def _two_vertex(
    logdelta: np.ndarray, p1: float, p2: float, show: bool, helper: cf.Executor | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(log E per composition and column, the compositions pruned per column or
    None, the proven relative error per column) for two vertices.

    Compositions that provably cannot hold the maximum are not computed
    (:func:`~smoothdp_nb.core.smoothed.engines.pruning.prune_plan`): their rows are
    the proven upper bounds; the others come from :func:`exact_binary` with
    ``stop``, one run per group of columns (:meth:`PrunePlan.groups`), each
    with its own plan and error bound; from ``PRUNE_MIN_N`` records a group
    that needs every composition is computed from both ends
    (:func:`_from_both_ends`)."""
    n, E = logdelta.shape[0] - 1, logdelta.shape[1]
    if p2 >= 1.0:  # the shift engine: per composition, log weights summed from the mode
        bar = optional_progress_bar(n + 1, show, "compositions")
        vals = _two_vertex_engine(logdelta, p1, p2, bar, helper, {})
        if bar is not None:
            bar.close()
        return vals, None, np.full(E, shift_error(n, p1))
    pp = prune_plan(logdelta, p1, p2) if n >= PRUNE_MIN_N else None
    groups = [(np.arange(E), False, None)] if pp is None else pp.groups()
    bar = optional_progress_bar(sum(n + 1 if s is None else s + 1 for _, _, s in groups), show, "compositions")
    ldmax = float(np.max(np.abs(logdelta[np.isfinite(logdelta)]), initial=0.0))
    vals = np.empty((n + 1, E))
    rel = np.empty(E)
    bound = np.zeros((n + 1, E), dtype=bool)
    r = np.arange(n + 1)
    for cols, swapped, stop in groups:
        q1, q2 = (p2, p1) if swapped else (p1, p2)
        part = np.ascontiguousarray(logdelta[:, cols])
        K = binary_plan(part, q1, q2).K
        if stop is None and n >= PRUNE_MIN_N:
            v, rel[cols] = _from_both_ends(part, p1, p2, bar, helper, ldmax)
            vals[:, cols] = v
            continue
        stats: dict[str, float] = {}
        v = _two_vertex_engine(part, q1, q2, bar, helper, stats, stop=stop)
        rel[cols] = _error(n, K, stats, q1, ldmax, part)
        # composition r of the swapped pair is composition n - r
        vals[:, cols] = v[::-1] if swapped else v
        if stop is not None:
            bound[:, cols] = ((r < n - stop) if swapped else (r > stop))[:, None]
    if bar is not None:
        bar.close()
    if pp is None or not bound.any():
        return vals, None, rel
    return np.where(bound, pp.upper, vals), bound, rel


def _error(n: int, K: int, stats: dict[str, float], p1: float, ldmax: float, part: np.ndarray) -> float:
    """:func:`engine_error` of one run of :func:`exact_binary` on the columns ``part``, from the
    figures the run recorded in ``stats`` (an absent scale figure makes the bound inf)."""
    return engine_error(
        n,
        K,
        stats.get("log_weight_max", 0.0),
        stats.get("fallback", 0.0) > 0,
        p1,
        ldmax,
        stats.get("log_scale_max", math.inf),
        window_log_bound(part),
    )


def _from_both_ends(
    part: np.ndarray, p1: float, p2: float, bar: Any, helper: cf.Executor | None, ldmax: float
) -> tuple[np.ndarray, float]:
    """Every composition of these columns, in two runs of :func:`exact_binary`
    that stop half way: r = 0 .. n // 2 with the vertices (p1, p2), and
    r = n // 2 + 1 .. n as the compositions 0 .. n - n // 2 - 1 of (p2, p1),
    the second on the helper thread when there is one.  Each run's windows
    serve only its own half (``stop``), so together they do about half the
    advance work of one run over all n + 1 (the windows' spread
    ``(stop - r)|p2 - p1|`` halves), on two CPUs.  Both use the plan of
    these columns (it is symmetric in p1, p2): the result does not depend on
    where the second ran.  Returns the values and the larger of the two runs'
    proven error bounds."""
    n = part.shape[0] - 1
    h = n // 2
    plan = binary_plan(part, p1, p2)
    s_fwd: dict[str, float] = {}
    s_bwd: dict[str, float] = {}
    fut = None
    if helper is not None:
        fut = helper.submit(exact_binary, part, p2, p1, None, plan=plan, stats=s_bwd, stop=n - h - 1)
    fwd = exact_binary(part, p1, p2, bar, plan=plan, stats=s_fwd, stop=h)
    try:
        if fut is None:
            raise RuntimeError("no helper")
        bwd = fut.result()
        if bar is not None:
            bar.update(n - h)
    except Exception:  # no helper, or it failed: the same run here
        s_bwd = {}
        bwd = exact_binary(part, p2, p1, bar, plan=plan, stats=s_bwd, stop=n - h - 1)
    out = fwd
    out[h + 1 :] = bwd[::-1][h + 1 :]  # composition r of (p2, p1) is composition n - r
    rel = max(_error(n, plan.K, st, q, ldmax, part) for st, q in ((s_fwd, p1), (s_bwd, p2)))
    return out, rel


def shift_error(n: int, p1: float) -> float:
    """Relative error bound of :func:`exact_binary_shift` (log weights summed from
    the mode: ``n`` log-ratios with ``LIBM_REL`` each and a running sum with
    ``gamma_n`` of the magnitudes, which are at most ``n |log min(p, q)|``;
    the mode's Loader value; the log-sum-exp)."""
    lpq = max(abs(math.log(p1)), abs(math.log1p(-p1))) if 0 < p1 < 1 else 0.0
    mag = n * (lpq + math.log(n + 1.0)) + 1.0
    err = float(lpmf_abs_error(mag, n, 1)) + (LIBM_REL + float(gamma(n + 2))) * mag * (n + 1)
    return math.expm1(err) * 1.01 + float(gamma(n + 8)) + 4 * LIBM_REL


def general_error(n: int, m: int, l: int, logdelta: np.ndarray, V: np.ndarray) -> float:
    """Relative error bound of :func:`exact_general` (log space): n averaging
    levels per vertex, each a log-sum-exp of m terms (``4u`` of the largest
    magnitude plus ``2 LIBM_REL (1 + log m) + gamma_m``), and multinomial
    log-weights from lgamma (``LGAMMA_REL`` of log n! and the products' ``u``)."""
    fin = logdelta[np.isfinite(logdelta)]
    with np.errstate(divide="ignore"):
        lv = np.log(V[V > 0])
    mag = (
        float(np.max(np.abs(fin), initial=0.0)) + n * float(np.max(np.abs(lv), initial=0.0)) + 2 * math.lgamma(n + 1.0)
    )
    per = 4 * U * mag + 2 * LIBM_REL * (1 + math.log(m + 1)) + float(gamma(m + 1))
    err = n * l * per + (2 * LGAMMA_REL + 8 * U) * mag + 1e-15 * (m + 1)
    return math.expm1(err) * 1.01
