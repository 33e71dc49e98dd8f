"""Independent brute-force references for the data-dependent release methods (not used by the package).

Datasets are multisets of lattice cells ``0 .. K`` (lattice 1, bounds (0, K)); a neighbour replaces
one record by any cell.  Every distance (inverse sensitivity, distance to an unsafe database,
distance to instability) is found by breadth-first search over all multisets, the local
sensitivity by trying every neighbour, and the laws are written from the textbook definitions
with mpmath at 60 digits.
"""

import itertools
import math
from functools import cache

import mpmath as _mpmath

mpmath = _mpmath.MPContext()  # a private 60-digit context: the global mpmath precision is left alone
mpmath.dps = 60


def multisets(n, K):
    return [tuple(c) for c in itertools.combinations_with_replacement(range(K + 1), n)]


def neighbours(t, K):
    out = set()
    for i in range(len(t)):
        rest = t[:i] + t[i + 1 :]
        for v in range(K + 1):
            out.add(tuple(sorted(rest + (v,))))
    out.discard(t)
    return out


def rank(n, quantile=None):
    if quantile is None:
        return (n + 1) // 2
    return min(n, max(1, math.ceil(mpmath.mpf(quantile) * n - mpmath.mpf(10) ** -40)))


def f(t, m):
    return sorted(t)[m - 1]


@cache
def distances(t, K):
    """BFS distance from t to every multiset of the same size."""
    dist = {t: 0}
    frontier = [t]
    while frontier:
        nxt = []
        for s in frontier:
            for u in neighbours(s, K):
                if u not in dist:
                    dist[u] = dist[s] + 1
                    nxt.append(u)
        frontier = nxt
    return dist


def local_sensitivity(t, K, m):
    return max((abs(f(u, m) - f(t, m)) for u in neighbours(t, K)), default=0)


def exponential_law(t, K, m, eps):
    eps = mpmath.mpf(eps)
    w = [mpmath.exp(-eps * abs(sum(1 for v in t if v <= y) - m) / 2) for y in range(K + 1)]
    z = sum(w)
    return {y: w[y] / z for y in range(K + 1)}


def inverse_sensitivity(t, K, m):
    d = distances(t, K)
    return {y: min(k for s, k in d.items() if f(s, m) == y) for y in range(K + 1)}


def ism_law(t, K, m, eps):
    D = inverse_sensitivity(t, K, m)
    theta = mpmath.mpf(eps) if K + 1 == 2 else mpmath.mpf(eps) / 2
    w = {y: mpmath.exp(-theta * D[y]) for y in D}
    z = sum(w.values())
    return {y: w[y] / z for y in w}


def unbiased_bound(t, K, m, eps):
    D = inverse_sensitivity(t, K, m)
    return 1 / sum(mpmath.exp(-2 * mpmath.mpf(eps) * D[y]) for y in D)


def laplace_sf(z):
    """P(Lap(1) > z)."""
    z = mpmath.mpf(z)
    return mpmath.exp(-z) / 2 if z >= 0 else 1 - mpmath.exp(z) / 2


def laplace_cells(true, scale, K):
    """Clamped, rounded (half up) Laplace on cells 0..K."""
    s = mpmath.mpf(scale)

    def F(b):
        return 1 - laplace_sf((mpmath.mpf(b) - true) / s)

    out = {}
    for k in range(K + 1):
        lo = F(k - mpmath.mpf(0.5)) if k > 0 else mpmath.mpf(0)
        hi = F(k + mpmath.mpf(0.5)) if k < K else mpmath.mpf(1)
        out[k] = hi - lo
    return out


def ptr_distance(t, K, m, beta):
    d = distances(t, K)
    unsafe = [k for s, k in d.items() if local_sensitivity(s, K, m) > beta]
    return min(unsafe) if unsafe else None


def ptr_law(t, K, m, eps, delta, beta):
    eps = mpmath.mpf(eps)
    b = 2 / eps
    T = b * mpmath.log(1 / (2 * mpmath.mpf(delta)))
    dist = ptr_distance(t, K, m, beta)
    p = mpmath.mpf(1) if dist is None else laplace_sf((T - dist) / b)
    scale = math.nextafter(2.0 * beta / float(eps), math.inf)
    law = {k: p * v for k, v in laplace_cells(f(t, m), scale, K).items()}
    law["refused"] = 1 - p
    return law


def instability_distance(t, K, m):
    d = distances(t, K)
    changed = [k for s, k in d.items() if f(s, m) != f(t, m)]
    return min(changed) - 1 if changed else None


def stability_law(t, K, m, eps, delta):
    eps = mpmath.mpf(eps)
    T = mpmath.log(1 / (2 * mpmath.mpf(delta))) / eps
    dist = instability_distance(t, K, m)
    p = mpmath.mpf(1) if dist is None else laplace_sf((T - dist) * eps)
    law = {k: mpmath.mpf(0) for k in range(K + 1)}
    law[f(t, m)] = p
    law["refused"] = 1 - p
    return law


def max_ratio(P, Q):
    worst = mpmath.mpf(0)
    for y in P:
        if P[y] == 0 and Q[y] == 0:
            continue
        if Q[y] == 0:
            return mpmath.inf
        worst = max(worst, P[y] / Q[y])
    return worst


def hockey(P, Q, eps):
    """delta(eps) = sum_y max(0, P(y) - e^eps Q(y))."""
    e = mpmath.exp(mpmath.mpf(eps))
    return sum(max(mpmath.mpf(0), P[y] - e * Q[y]) for y in P)
