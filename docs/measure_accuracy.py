"""Measure the certified enclosures against exact arithmetic.

Every delta the package reports is a proven upper bound, and
``privacy_profile_enclosure(...)`` / ``SmoothedResult.delta_lower``
give the proven lower bound beside it.  This script checks both
sides against exact references and measures the enclosure widths
``upper / lower - 1``.

Run: ``python docs/measure_accuracy.py`` (about a minute on 2 cores).  The
"How exact is it?" page (docs/accuracy.md) quotes its output.  The references
are computed here from the definitions, independently of the package:

* ``privacy_profile`` of the sampling histogram (Definition 2, Algorithm 2):
  hypergeometric laws of the kept count, hockey-stick divergences against both
  neighbours in both directions, with ``fractions.Fraction`` probabilities and
  60-digit mpmath for ``e^eps``;
* ``smoothed_delta`` for the 2020 districts at n = 5000 (Definition 3): the
  expectation of delta(x) over x ~ Binomial(n, p_DC) at the DC vertex, a lower
  bound of the smoothed delta (the maximum over compositions), with 60-digit
  binomial weights from the float share taken exactly.
"""

from __future__ import annotations

import time
from fractions import Fraction
from math import comb

import mpmath as mp
import numpy as np

import smoothdp_nb as sdp

mp.mp.dps = 60


def kept_law(n: int, a: int, T: int) -> dict[int, Fraction]:
    """Law of the number of category-A records among T drawn without replacement."""
    total = comb(n, T)
    lo, hi = max(0, T - (n - a)), min(a, T)
    return {k: Fraction(comb(a, k) * comb(n - a, T - k), total) for k in range(lo, hi + 1)}


def hockey(P: dict[int, mp.mpf], Q: dict[int, mp.mpf], e: mp.mpf) -> mp.mpf:
    return mp.fsum(max(mp.mpf(0), P.get(k, 0) - e * Q.get(k, 0)) for k in set(P) | set(Q))


def exact_profile(n: int, a: int, T: int, eps: float) -> mp.mpf:
    def to_mp(law):
        return {k: mp.mpf(v.numerator) / v.denominator for k, v in law.items()}

    P = to_mp(kept_law(n, a, T))
    e = mp.exp(mp.mpf(eps))
    best = mp.mpf(0)
    for a2 in (a - 1, a + 1):
        if 0 <= a2 <= n:
            Q = to_mp(kept_law(n, a2, T))
            best = max(best, hockey(P, Q, e), hockey(Q, P, e))
    return best


def profiles() -> list[tuple[int, str, int, float, float, bool]]:
    rows = []
    for n in (20, 200, 2000):
        for eta in ("0.5", "0.9", "0.998"):
            mech = sdp.SamplingHistogram(eta=eta)
            T = mech.sample_size(n)
            for a in sorted({1, n // 10, n // 3, n // 2}):
                for eps in (0.1, 0.5, 1.0, 2.0):
                    ex = exact_profile(n, a, T, eps)
                    if ex == 0:
                        continue
                    enc = sdp.privacy_profile_enclosure(mech, [a, n - a], eps)
                    ok = mp.mpf(float(enc.upper)) >= mp.log(ex) >= mp.mpf(float(enc.lower))
                    rows.append((n, eta, a, eps, float(enc.width), ok))
    return rows


def figure1() -> np.ndarray:
    """Enclosure widths of Figure 1: 26 elections x 3 epsilon (n up to 1.55e8)."""
    import math

    mech = sdp.SamplingHistogram(eta=0.998)
    el = sdp.datasets.us_presidential_elections()
    H = np.array([sdp.datasets.election_histogram(int(y)) for y in el["year"]])
    enc = sdp.privacy_profile_enclosure(mech, H, [math.log(0.51 / 0.49), 0.5, 1.0])
    return np.asarray(enc.width)


def districts(n: int = 5000, eta: str = "0.998", eps: float = 0.5) -> tuple[float, float, mp.mpf]:
    mech = sdp.SamplingHistogram(eta=eta)
    T = mech.sample_size(n)
    pi = sdp.datasets.us_2020_district_shares()
    res = sdp.smoothed_delta(mech, n, pi, [eps])
    got = float(np.atleast_1d(res.delta)[0])
    lower = float(np.atleast_1d(res.delta_lower)[0])
    p = mp.mpf(float(pi.loc["DC", "biden"]))
    q = 1 - p
    laws: dict[int, dict[int, mp.mpf]] = {}

    def law(a: int) -> dict[int, mp.mpf]:
        if a not in laws:
            laws[a] = {k: mp.mpf(v.numerator) / v.denominator for k, v in kept_law(n, a, T).items()}
        return laws[a]

    e = mp.exp(mp.mpf(eps))
    total, w = mp.mpf(0), q**n
    for a in range(n + 1):
        if a:
            w = w * (n - a + 1) / a * p / q
        d = mp.mpf(0)
        for a2 in (a - 1, a + 1):
            if 0 <= a2 <= n:
                d = max(d, hockey(law(a), law(a2), e), hockey(law(a2), law(a), e))
        total += w * d
    return got, lower, total


def main() -> None:
    t0 = time.time()
    rows = profiles()
    w = np.array([r[4] for r in rows])
    held = sum(r[5] for r in rows)
    print(f"privacy_profile, {len(rows)} cases (n = 20, 200, 2000; eta = 0.5, 0.9, 0.998; 4 databases; 4 epsilon):")
    print(f"  exact value inside [lower, upper]: {held} of {len(rows)}")
    print(f"  enclosure width upper/lower - 1: max {w.max():.1e}, median {np.median(w):.1e}")
    f1 = figure1()
    print(f"Figure 1 (26 elections x 3 epsilon, n up to 1.55e8): width max {f1.max():.1e}, median {np.median(f1):.1e}")
    got, lower, bound = districts()
    print("smoothed_delta, 2020 districts, n = 5000, eta = 0.998, epsilon = 0.5:")
    print(f"  reported (upper bound) {got!r}")
    print(f"  proven lower bound     {lower!r}  (width {got / lower - 1:.1e})")
    print(f"  exact lower bound      {mp.nstr(bound, 20)}  (DC vertex alone)")
    print(f"  upper >= exact bound:  {mp.mpf(got) >= bound}")
    print(f"total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
