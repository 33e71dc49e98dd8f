"""Benchmark: Algorithm 1, exact smoothed delta, against its targets.

Run on demand:  python benchmarks/bench_smoothed.py [--quick | --big | --calibrate]

``--big`` runs only the large-n scaling (two vertices up to n = 10^6, the
authors' voting configuration at 2x10^5, 5x10^5 and 10^6), each beside the
cost model's estimate (``core/smoothed/cost.py``).  ``--calibrate`` fits the
cost model's per-unit costs to measured CPU times (run it with
``OPENBLAS_NUM_THREADS=1``) and compares the whole estimate with the whole run.

Includes a *literal* implementation of Algorithm 1 as written in the paper
(enumerate the compositions, convolve the two binomial laws of each, take
the expectation of delta) as the baseline, measured in the same run.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

import smoothdp_nb as sdp


def literal_algorithm1(mech, n, p1, p2, epsilon):
    """Algorithm 1 as written: for every composition, convolve and average."""
    hists = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    delta = sdp.privacy_profile(mech, hists, epsilon)  # Step 3 ("same as DP")
    best = 0.0
    for c in range(n + 1):  # compositions: c records follow vertex 1
        law = np.convolve(binom.pmf(np.arange(c + 1), c, p1), binom.pmf(np.arange(n - c + 1), n - c, p2))
        best = max(best, float(law @ delta))
    return best


def literal_algorithm1_lean(mech, n, p1, p2, epsilon):
    """The same literal algorithm, but with every binomial pmf taken from one
    shared table of log-factorials instead of scipy.stats (whose per-call
    overhead is most of the time of :func:`literal_algorithm1` at n = 2000):
    what remains is the enumeration and the convolutions themselves."""
    hists = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    delta = sdp.privacy_profile(mech, hists, epsilon)
    lf = gammaln(np.arange(n + 2, dtype=float))  # lf[k + 1] = log k!
    l1, q1, l2, q2 = math.log(p1), math.log1p(-p1), math.log(p2), math.log1p(-p2)

    def pmf(s, lp, lq):
        x = np.arange(s + 1)
        return np.exp(lf[s + 1] - lf[x + 1] - lf[s - x + 1] + x * lp + (s - x) * lq)

    best = 0.0
    for c in range(n + 1):
        law = np.convolve(pmf(c, l1, q1), pmf(n - c, l2, q2))
        best = max(best, float(law @ delta))
    return best


def literal_algorithm1_exact(mech, n, p1, p2, epsilon):
    """The same literal algorithm with exact (log-space) convolutions, so that,
    like ours, it does not underflow for expectations below 1e-308."""
    from scipy.special import logsumexp

    hists = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
    logdelta = sdp.privacy_profile(mech, hists, epsilon, log=True)
    best = -np.inf
    for c in range(n + 1):
        a = binom.logpmf(np.arange(c + 1), c, p1)
        b = binom.logpmf(np.arange(n - c + 1), n - c, p2)
        # log-space convolution: law[k] = logsumexp_j a[j] + b[k - j]
        outer = a[:, None] + b[None, :]
        idx = np.arange(c + 1)[:, None] + np.arange(n - c + 1)[None, :]
        law = np.full(n + 1, -np.inf)
        np.logaddexp.at(law, idx.ravel(), outer.ravel())
        best = max(best, float(logsumexp(law + logdelta)))
    return float(np.exp(best))


def timed(fn):
    """Wall time (what the targets are about); CPU time is printed too, as it
    is less disturbed when other jobs share the machine, and the load average."""
    t, c, k = time.perf_counter(), time.process_time(), os.times()
    out = fn()
    wall, cpu, k1 = time.perf_counter() - t, time.process_time() - c, os.times()
    helper = (k1.children_user + k1.children_system) - (k.children_user + k.children_system)
    print(
        f"    [wall {wall:.3f} s, cpu {cpu:.3f} s + helper process {helper:.3f} s, load average {os.getloadavg()[0]:.1f}]"
    )
    return wall, out


def history_config():
    """The authors' voting configuration: Pi = the 26 national winner shares, eta = 0.998, 21 epsilon."""
    el = sdp.datasets.us_presidential_elections()
    pi = np.stack([el.winner_share, 1 - el.winner_share], axis=1)
    epsilon = [0.1] + [0.5 * k for k in range(1, 21)]
    return sdp.SamplingHistogram(eta=0.998), pi, epsilon


def scaling(sizes_two, sizes_history) -> None:
    """Algorithm 1 at large n, with the cost model's estimate beside each measurement."""
    from smoothdp_nb.core.numerics.hull import reduce_to_vertices
    from smoothdp_nb.core.smoothed.engines.estimate import estimate_exact_cost

    two = [[0.3, 0.7], [0.6, 0.4]]
    m = sdp.SamplingHistogram(eta=0.9)
    print("m = 2, two vertices (0.3, 0.6), eta = 0.9, epsilon = 1:")
    for n in sizes_two:
        est = estimate_exact_cost(m, n, two, 1, np.array([1.0]))[0]
        t, r = timed(lambda: sdp.smoothed_delta(m, n, two, 1.0, progress=False, budget=1e9))
        print(
            f"  n = {n:>7}: {t:8.2f} s (model {est:8.2f} s, measured/model {t / est:4.2f})   "
            f"log10 delta = {r.log_delta / math.log(10):.2f}"
        )
    mm, pi, epsilon = history_config()
    V = reduce_to_vertices(pi).vertices
    print("authors' configuration (history Pi, eta = 0.998, 21 epsilon):")
    for n in sizes_history:
        est = estimate_exact_cost(mm, n, V, len(epsilon), np.asarray(epsilon))[0]
        t, r = timed(lambda: sdp.smoothed_delta(mm, n, pi, epsilon, progress=False, budget=1e9))
        print(
            f"  n = {n:>7}: {t:8.2f} s (model {est:8.2f} s, measured/model {t / est:4.2f})   "
            f"log10 delta at epsilon = 0.1, 1, 5, 10: "
            + ", ".join(f"{v / math.log(10):.2f}" for v in r.log_delta[[0, 2, 10, 20]])
        )


def cpu(fn):
    """(CPU seconds, result) of one call, with the CPU of the helper process (if one ran)."""
    c, k = time.process_time(), os.times()
    out = fn()
    k1 = os.times()
    helper = (k1.children_user + k1.children_system) - (k.children_user + k.children_system)
    return time.process_time() - c + helper, out


def calibrate() -> None:
    """The exact cost model (core/smoothed/cost.py) against measured CPU time.

    Engine alone: work units counted by the engine and its CPU time, for a
    least-squares fit of the per-unit costs (two-vertex engine on shallow
    data -- every delta far above 1e-250 -- and on deep data, down to
    1e-1000; general engine for m = 3).  Then the whole estimate
    (profiles + engine, before any work) against the whole computation.
    """
    from scipy.optimize import nnls

    from smoothdp_nb.core.numerics.hull import reduce_to_vertices
    from smoothdp_nb.core.numerics.validation import as_epsilon
    from smoothdp_nb.core.smoothed.engines import binary as B, general as G
    from smoothdp_nb.core.smoothed.engines.cost import general_work_units
    from smoothdp_nb.core.smoothed.engines.estimate import estimate_exact_cost
    from smoothdp_nb.core.smoothed.engines.exact import _distinct_columns

    mm, hpi, heps = history_config()
    shallow = (sdp.SamplingHistogram(eta=0.5), [[0.4, 0.6], [0.6, 0.4]])
    deep = (sdp.SamplingHistogram(eta=0.9), [[0.3, 0.7], [0.6, 0.4]])
    cases = [
        ("shallow", *shallow, 10**4, list(np.linspace(0.02, 0.05, 1))),
        ("shallow", *shallow, 3 * 10**4, list(np.linspace(0.02, 0.05, 2))),
        ("shallow", *shallow, 10**5, [0.02, 0.03, 0.04, 0.05]),
        ("deep", *deep, 3 * 10**4, [1.0]),
        ("deep", *deep, 10**5, [1.0]),
        ("deep", *deep, 3 * 10**5, [1.0]),
        ("authors", mm, hpi, 3 * 10**4, heps),
        ("authors", mm, hpi, 10**5, heps),
        ("authors", mm, hpi, 2 * 10**5, heps),
    ]
    rows, fit_a, fit_b = [], [], []
    for name, mech, pi, n, eps in cases:
        V = reduce_to_vertices(pi).vertices
        e, _ = as_epsilon(eps)
        est = estimate_exact_cost(mech, n, V, e.size, e)[0]
        hists = np.stack([np.arange(n + 1), n - np.arange(n + 1)], axis=1)
        t_prof, full = cpu(lambda: sdp.privacy_profile(mech, hists, e, log=True).reshape(n + 1, e.size))
        ld = _distinct_columns(full)[0]
        work: dict = {}
        t_eng, _ = cpu(lambda: B.exact_binary(ld, float(V[0, 0]), float(V[1, 0]), None, work=work))
        t_all, _ = cpu(lambda: sdp.smoothed_delta(mech, n, pi, eps, progress=False, budget=1e9))
        E = ld.shape[1]
        fit_a.append([work["advance"], work["correlation"], work["segments"] * E, work["blocks"]])
        fit_b.append(t_eng)
        print(f"  {name} n={n}: units {fit_a[-1]}, engine CPU {t_eng:.3f} s", flush=True)
        rows.append((f"{name} m=2 n={n} E={e.size} ({E} distinct)", est, t_all, t_prof, t_eng))
    three = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]
    four = three + [[0.3, 0.5, 0.2]]
    gen_a, gen_b = [], []
    for pi, n, T, E in [(three, 40, 3, 1), (three, 80, 3, 1), (three, 120, 3, 2), (four, 15, 2, 1), (four, 25, 2, 2)]:
        mech = sdp.SamplingHistogram(T=T)
        V = np.asarray(pi)
        eps = list(np.linspace(0.5, 1.0, E))
        e, _ = as_epsilon(eps)
        est = estimate_exact_cost(mech, n, V, E, e)[0]
        hists = G.all_histograms(n, 3)
        ld = sdp.privacy_profile(mech, hists, e, log=True).reshape(len(hists), E)
        t_eng, _ = cpu(lambda: G.exact_general(ld, n, 3, V, None))
        t_all, _ = cpu(lambda: sdp.smoothed_delta(mech, n, pi, eps, progress=False, budget=1e9))
        g = general_work_units(n, 3, len(pi))
        gen_a.append([g["compositions"], g["terms"] * E, g["index_rows"] * 3])
        gen_b.append(t_eng)
        rows.append((f"general m=3 l={len(pi)} n={n} T={T} E={E}", est, t_all, float("nan"), t_eng))
    # per-unit costs: least squares on the relative error (each row weighted by 1 / its time)
    for label, A, b, names in [
        ("two-vertex engine", fit_a, fit_b, ["advance", "correlation", "segment x column", "block"]),
        ("general engine", gen_a, gen_b, ["composition", "log term", "index row x category"]),
    ]:
        A_, b_ = np.asarray(A, float), np.asarray(b, float)
        coef = nnls(A_ / b_[:, None], np.ones(len(b_)))[0]
        print(f"{label}: per-unit CPU seconds " + ", ".join(f"{k} {c:.3g}" for k, c in zip(names, coef)))
        print("   fitted / measured per case: " + ", ".join(f"{v:.2f}" for v in (A_ @ coef) / b_))
    print(f"load average {os.getloadavg()}")
    print("| case | model (s) | measured CPU (s) | measured / model | of which profiles | engine |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, est, t_all, t_prof, t_eng in rows:
        print(f"| {name} | {est:.3g} | {t_all:.3g} | {t_all / est:.2f} | {t_prof:.3g} | {t_eng:.3g} |", flush=True)


def main(quick: bool = False, big: bool = False) -> None:
    two = [[0.3, 0.7], [0.6, 0.4]]
    m = sdp.SamplingHistogram(eta=0.9)
    sizes_two = [10**3, 10**4, 3 * 10**4] if quick else [10**3, 10**4, 3 * 10**4, 10**5]
    sizes_history = [10**4, 3 * 10**4] if quick else [10**4, 3 * 10**4, 10**5]
    if big:
        sizes_two, sizes_history = [10**5, 3 * 10**5, 10**6], [2 * 10**5, 5 * 10**5, 10**6]
    scaling(sizes_two, sizes_history)
    if big:
        return
    n = 2000
    # Interleaved rounds, so that both sides see the same machine state (a
    # shared 2-core VM drifts by tens of per cent between minutes): each round
    # times the literal algorithm once and ours as the best of 10 calls.
    rounds = 3 if quick else 5
    lits, news, ratios = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        lit = literal_algorithm1(m, n, 0.3, 0.6, 1.0)
        t_lit = time.perf_counter() - t0
        best = math.inf
        for _ in range(10):
            t0 = time.perf_counter()
            new = sdp.smoothed_delta(m, n, two, 1.0, progress=False)
            best = min(best, time.perf_counter() - t0)
        lits.append(t_lit)
        news.append(best)
        ratios.append(t_lit / best)
    t_new = min(news)
    print(
        f"n = 2000, {rounds} interleaved rounds: literal Algorithm 1 (float convolutions) "
        f"{min(lits):.3f}-{max(lits):.3f} s, ours {min(news) * 1e3:.2f}-{max(news) * 1e3:.2f} ms; "
        f"speed-up per round x{min(ratios):.0f}-x{max(ratios):.0f} (median x{np.median(ratios):.0f}); "
        f"values {lit:.12g} vs {new.delta:.12g}"
    )
    t_ll, lean = timed(lambda: literal_algorithm1_lean(m, n, 0.3, 0.6, 1.0))
    print(
        f"n = 2000: literal Algorithm 1 with pmfs from a shared log-factorial table {t_ll:.3f} s, "
        f"speed-up x{t_ll / t_new:.0f} (against the best of ours); value {lean:.12g}"
    )
    t_lx, litx = timed(lambda: literal_algorithm1_exact(m, n, 0.3, 0.6, 1.0))
    print(
        f"n = 2000: literal Algorithm 1 (exact log-space convolutions) {t_lx:.2f} s, "
        f"speed-up x{t_lx / t_new:.0f}; value {litx:.12g}"
    )
    three = [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.5, 0.2]]
    t, r = timed(lambda: sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 60, three, 1.0, progress=False))
    print(f"m = 3, three vertices, n = 60: {t:.2f} s (delta = {r.delta:.4g})")
    mm = history_config()[0]
    pid = sdp.datasets.us_2020_district_shares()
    t, r = timed(lambda: sdp.smoothed_delta(mm, 10**4, pid, [0.5, 1, 2, 7], progress=False))
    print(f"2020 districts (DC, NE-3), 4 epsilon, n = 10^4: {t:.2f} s")


if __name__ == "__main__":
    if "--calibrate" in sys.argv:
        calibrate()
    else:
        main(quick="--quick" in sys.argv, big="--big" in sys.argv)
