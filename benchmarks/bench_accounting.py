"""Benchmark: k-fold composition side by side with Google's dp_accounting.

Run on demand:  python benchmarks/bench_accounting.py [max_k] [max_k_dp_accounting] [max_k_dp_accounting_shm]

(dp_accounting is run up to the second argument, default 10^4, on the lattice mechanisms --
at 10^4 runs it already takes about a minute per mechanism on a shared 2-core machine,
growing about linearly in k -- and up to the third, default ten times the second, on the
sampling histogram, whose losses span a narrower range.)

For randomized response (p = 3/4), a three-output mechanism with likelihood ratios 3, 1,
1/3, and the two-category sampling histogram (eta = 0.5, x = [20, 10] against [19, 11]),
and k = 10 ... 10^6 runs, at an epsilon where delta is small: the pair's privacy profile
``max(d_eps(P, Q), d_eps(Q, P))``

* ours: the proven upper bound and the proven lower bound (both directions), the method
  (exact / lattice / grid), the wall time of the upper bound (both directions: the like of
  dp_accounting's pessimistic value) and of both bounds;
* dp_accounting: ``from_two_probability_mass_functions`` (pessimistic, value
  discretization interval 1e-4), ``self_compose(k)``, ``get_delta_for_epsilon``, and its
  wall time (pmf construction and composition);
* for randomized response and the three-output mechanism, the exact value from the binomial
  (trinomial) sum in float64 log space (scipy's gammaln), as a reference column.

Each run prints one line per case, with the machine and load average; the figures of a
run are recorded in benchmarks/ACCOUNTING.md.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time

import numpy as np
from scipy.special import gammaln, logsumexp

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms.composed import pair_loss


def rr() -> sdp.FiniteMechanism:
    return sdp.FiniteMechanism(lambda h: {0: 0.75, 1: 0.25} if h[0] == 1 else {0: 0.25, 1: 0.75}, categories=2)


def three() -> sdp.FiniteMechanism:
    p = {0: 0.375, 1: 0.5, 2: 0.125}
    q = {0: 0.125, 1: 0.5, 2: 0.375}
    return sdp.FiniteMechanism(lambda h: p if h[0] == 1 else q, categories=2)


def exact_rr(k: int, eps: float) -> float:
    j = np.arange(k + 1)
    s = (2 * j - k) * math.log(3)
    lw = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + j * math.log(0.75) + (k - j) * math.log(0.25)
    keep = s > eps
    if not keep.any():
        return -math.inf
    return float(logsumexp(lw[keep] + np.log(-np.expm1(eps - s[keep]))))


def exact_three(k: int, eps: float) -> float:
    """Loss (a - c) log 3: sum over t = a - c of the trinomial mass (float64 log space)."""
    if k > 20000:
        return math.nan
    out = []
    t_min = math.floor(eps / math.log(3)) + 1
    for t in range(max(t_min, -k), k + 1):
        c = np.arange(0, (k - t) // 2 + 1)
        a = c + t
        b = k - a - c
        ok = (a >= 0) & (b >= 0)
        a, b, c = a[ok], b[ok], c[ok]
        if a.size == 0:
            continue
        lw = gammaln(k + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(c + 1)
        lw = lw + a * math.log(0.375) + b * math.log(0.5) + c * math.log(0.125)
        out.append(float(logsumexp(lw)) + math.log(-math.expm1(eps - t * math.log(3))))
    return float(logsumexp(out)) if out else -math.inf


def pmf_dict(mech: sdp.Mechanism, h: np.ndarray) -> dict[object, float]:
    df = mech.output_pmf(h)
    cols = [c for c in df.columns if c.startswith("c")] or ["output"]
    keys = [tuple(r) for r in df[cols].to_numpy().tolist()]
    return dict(zip(keys, df["log_probability"]))


def dp_accounting_delta(mech: sdp.Mechanism, x: np.ndarray, x2: np.ndarray, k: int, eps: float) -> tuple[float, float]:
    from dp_accounting.pld import privacy_loss_distribution as dpl

    t0 = time.perf_counter()
    p, q = pmf_dict(mech, x), pmf_dict(mech, x2)
    one = dpl.from_two_probability_mass_functions(q, p, pessimistic_estimate=True, value_discretization_interval=1e-4)
    other = dpl.from_two_probability_mass_functions(p, q, pessimistic_estimate=True, value_discretization_interval=1e-4)
    deltas = []
    for d in (one, other):
        comp = d.self_compose(k) if k > 1 else d
        deltas.append(comp.get_delta_for_epsilon(eps))
    return max(deltas), time.perf_counter() - t0


def ours(
    mech: sdp.Mechanism, x: np.ndarray, x2: np.ndarray, k: int, eps: float
) -> tuple[float, float, str, float, float]:
    """(upper, lower, method, seconds of the upper bound, seconds of both bounds): both
    directions each, from the pair's laws (built afresh, so nothing is cached between the
    two timings)."""
    e = np.array([eps])
    t0 = time.perf_counter()
    f, b = pair_loss(sdp.repeat(mech, k), x, x2)
    up = max(float(f.log_delta(e)[0]), float(b.log_delta(e)[0]))
    t_up = time.perf_counter() - t0
    f, b = pair_loss(sdp.repeat(mech, k), x, x2)
    t0 = time.perf_counter()
    up2 = max(float(f.log_delta(e)[0]), float(b.log_delta(e)[0]))
    lo = max(float(f.log_delta(e, upper=False)[0]), float(b.log_delta(e, upper=False)[0]))
    t_both = time.perf_counter() - t0
    assert up2 == up
    return up, lo, f.method(), t_up, t_both


def main() -> None:
    max_k = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**6
    max_k_dpa = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10**4
    # the sampling histogram's losses spread over a narrower range: dp_accounting reaches further there
    max_k_dpa_shm = int(float(sys.argv[3])) if len(sys.argv) > 3 else 10 * max_k_dpa
    print(f"machine: {platform.node()} {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()}")
    print("date:", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), " load average before:", os.getloadavg())
    x, x2 = np.array([1, 0]), np.array([0, 1])
    shm = sdp.SamplingHistogram(eta=0.5)
    xs, xs2 = np.array([20, 10]), np.array([19, 11])
    cases = [
        ("randomized response", rr(), x, x2, 0.5 * math.log(3), 0.87, exact_rr),
        ("three outputs", three(), x, x2, 0.25 * math.log(3), 0.76, exact_three),
        ("sampling histogram", shm, xs, xs2, None, None, None),
    ]
    print(
        f"{'mechanism':<20} {'k':>8} {'eps':>10} {'ours up':>14} {'ours low':>14} {'method':>8} {'t up':>7}"
        f" {'t both':>7} {'dp_acc 1e-4':>14} {'t dp_acc':>9} {'exact':>14}   (log delta)"
    )
    for name, mech, a, b, mean, sd, exact in cases:
        if mean is None:  # the sampling histogram: the mean and sd of its loss from the pair itself
            f, _ = pair_loss(mech, a, b)
            d = f.parts[0][0]
            w = np.exp(d.log_mass)
            mean = float(np.dot(w, d.losses))
            sd = float(np.sqrt(np.dot(w, (d.losses - mean) ** 2)))
        for k in (1, 10, 100, 10**3, 10**4, 10**5, 10**6):
            if k > max_k:
                break
            eps = k * mean + 5.0 * sd * math.sqrt(k)
            up, lo, how, t_up, t_both = ours(mech, a, b, k, eps)
            reach = max_k_dpa_shm if exact is None else max_k_dpa
            dpa, t_dpa = dp_accounting_delta(mech, a, b, k, eps) if k <= reach else (math.nan, math.nan)
            ref = exact(k, eps) if exact is not None else math.nan
            ldpa = math.log(dpa) if dpa > 0 else (dpa if math.isnan(dpa) else -math.inf)
            print(
                f"{name:<20} {k:>8} {eps:>10.4g} {up:>14.8f} {lo:>14.8f} {how:>8} {t_up:>6.2f}s {t_both:>6.2f}s"
                f" {ldpa:>14.8f} {t_dpa:>8.2f}s {ref:>14.8f}",
                flush=True,
            )
    print("load average after:", os.getloadavg())


if __name__ == "__main__":
    main()
