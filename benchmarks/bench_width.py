"""Where the enclosure width of the electorate's smoothed delta comes from, and what the sharp
log-pmfs cost.

    python benchmarks/bench_width.py breakdown 1.58e8 [eta] [eps]   # the width's parts
    python benchmarks/bench_width.py breakdown 1.58e8 0.9 1 --sharp # with the end window's sum
                                                                    # rounded once
    python benchmarks/bench_width.py hot 1e7 [eta]                  # 4096 contiguous profiles

``breakdown`` runs ``smoothed_delta(SamplingHistogram(eta), n, [[0.3, 0.7], [0.6, 0.4]], [eps])``
and, for the end composition's window of the windowed certificate, prints the profile
enclosure's width (upper - lower of log delta) at the term that carries the expectation, the
binomial weights' error bound, the window's log-sum-exp error bound (``_window_rel``), the
``1e-15 |U|`` the end window adds on each side, the end window's U - L and the result's width.
``--sharp`` replaces the end window's float64 log-sum-exp by
:func:`~smoothdp_nb.core.numerics.weighted_log_sum.log_weighted_sum_enclosure` (the same
window, profiles and weights; the sum relative to its largest term, rounded once), to show the
width that change reaches.  ``hot`` times ``m._profile`` of 4096 contiguous histograms (seven
runs, CPU seconds, the minimum and the median) at three places of the range.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time

import numpy as np
from scipy.special import logsumexp

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.enclosures import log_rel
from smoothdp_nb.core.smoothed.engines import window as W


def _window_rows(plo: np.ndarray, phi: np.ndarray, piece: np.ndarray, keep_nats: float) -> tuple[int, int] | None:
    top = piece.max(axis=0)
    keep = np.flatnonzero(np.any(piece >= top[None, :] - keep_nats, axis=1))
    if keep.size == 0 or not np.all(np.isfinite(top)):
        return None
    i0, i1 = max(0, int(keep[0]) - 1), min(plo.size - 1, int(keep[-1]) + 1)
    return i0, i1


def _sharp_end_window(prof, n, pa, plo, phi, piece, keep_nats):  # type: ignore[no-untyped-def]
    """The end window of the certificate with its sum rounded once (the proposed form)."""
    from smoothdp_nb.core.numerics.weighted_log_sum import (
        log_weighted_sum_enclosure,
    )  # deferred: so `hot` runs on older trees

    rows = _window_rows(plo, phi, piece, keep_nats)
    if rows is None:
        return None
    i0, i1 = rows
    x0, x1 = int(plo[i0]), int(phi[i1])
    prof.cover(x0, x1)
    up, lo = prof.rows(x0, x1)
    lw, lw_err = W._log_weights(np.arange(x0, x1 + 1, dtype=float), n, pa)
    outside = np.concatenate([piece[:i0], piece[i1 + 1 :]])
    trunc = logsumexp(outside, axis=0) if outside.size else np.full(up.shape[1], -np.inf)
    U, L = log_weighted_sum_enclosure(lw, lw_err, up, lo, trunc)
    if not np.all(np.isfinite(U)) or np.any(trunc > U - 40 * math.log(2.0)):
        return None
    return U, L


def breakdown(n: int, eta: float, eps: float, sharp: bool) -> None:
    original = W._end_window
    inner = _sharp_end_window if sharp else original

    def traced(prof, n_, pa, plo, phi, piece, keep_nats):  # type: ignore[no-untyped-def]
        out = inner(prof, n_, pa, plo, phi, piece, keep_nats)
        if out is None:
            return out
        i0, i1 = _window_rows(plo, phi, piece, keep_nats)  # type: ignore[misc]
        x0, x1 = int(plo[i0]), int(phi[i1])
        up, lo = prof.rows(x0, x1)
        lw, lw_err = W._log_weights(np.arange(x0, x1 + 1, dtype=float), n_, pa)
        j = np.argmax(lw[:, None] + up, axis=0)
        cols = np.arange(up.shape[1])
        rel = W._window_rel(lw_err, lw, up)
        print(f"  end vertex {pa}: window of {x1 - x0 + 1} histograms, log delta at the largest term {up[j, cols]}")
        print(f"    profile width (upper - lower) at the largest term: {(up - lo)[j, cols]}")
        print(f"    binomial weights' error bound: {lw_err:.3g}")
        print(f"    window log-sum-exp bound (per side): {float(log_rel(rel)):.3g}")
        print(f"    1e-15 (|U| + 1) per side (float64 assembly): {1e-15 * (np.abs(out[0]) + 1.0)}")
        print(f"    end window U - L: {out[0] - out[1]}")
        return out

    W._end_window = traced
    try:
        c0 = time.process_time()
        res = sdp.smoothed_delta(
            sdp.SamplingHistogram(eta=eta), n, [[0.3, 0.7], [0.6, 0.4]], [eps], budget=float("inf"), progress=False
        )
        cpu = time.process_time() - c0
    finally:
        W._end_window = original
    hi = np.asarray(res.log_delta_values, dtype=float)
    lo = np.asarray(res.log_delta_lower_values, dtype=float)
    print(f"  result: log delta {hi}, width {hi - lo}, {cpu:.2f} s CPU (tracing included)")


def hot(n: int, eta: float) -> None:
    m = sdp.SamplingHistogram(eta=eta)
    eps = np.array([1.0])
    for frac in (0.3, 0.6, 0.2):
        x0 = int(frac * n)
        xs = np.arange(x0, x0 + 4096)
        h = np.stack([xs, n - xs], axis=1)
        m._profile(h, eps)
        ts = []
        for _ in range(7):
            c0 = time.process_time()
            enc = m._profile(h, eps)
            ts.append(time.process_time() - c0)
        up, lo = np.asarray(enc.upper), np.asarray(enc.lower)
        print(
            f"  x0 = {x0}: min {min(ts) * 1e3:.1f} ms, median {sorted(ts)[3] * 1e3:.1f} ms; "
            f"largest width {np.max(up - lo):.3g} (relative to |log delta|: {np.max((up - lo) / np.abs(up)):.2g})"
        )


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    what, n = args[0], int(float(args[1]))
    eta = float(args[2]) if len(args) > 2 else 0.9
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, load {os.getloadavg()[0]:.1f}")
    print(f"package: {sdp.__file__}")
    if what == "hot":
        hot(n, eta)
    else:
        breakdown(n, eta, float(args[3]) if len(args) > 3 else 1.0, "--sharp" in sys.argv)


if __name__ == "__main__":
    main()
