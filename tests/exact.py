"""Independent exact reference computations, written for the tests only.

Everything here enumerates outputs with ``fractions.Fraction`` or sums with
mpmath at 60 digits; none of it calls the package's numerical code.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath as mp
import numpy as np

mp.mp.dps = 60


def pmf_without_replacement(h, T):
    """Multivariate hypergeometric pmf of the sampled histogram, exactly."""
    n = sum(h)
    res = {}
    for o in itertools.product(*[range(min(c, T) + 1) for c in h]):  # a sample holds <= T of each
        if sum(o) == T:
            res[o] = Fraction(math.prod(math.comb(c, k) for c, k in zip(h, o)), math.comb(n, T))
    return res


def pmf_with_replacement(h, T):
    """Multinomial pmf of the sampled histogram, exactly."""
    n = sum(h)
    res = {}
    for o in itertools.product(range(T + 1), repeat=len(h)):
        if sum(o) == T:
            p = Fraction(math.factorial(T))
            for c, k in zip(h, o):
                p *= Fraction(c, n) ** k / math.factorial(k)
            if p:
                res[o] = p
    return res


def to_mp(fr):
    return mp.mpf(fr.numerator) / fr.denominator


def hockey(P, Q, epsilon):
    """sum_o max(0, P(o) - e^epsilon Q(o)) at 60 digits."""
    E = mp.e ** mp.mpf(epsilon)
    s = mp.mpf(0)
    for o in set(P) | set(Q):
        d = to_mp(P.get(o, Fraction(0))) - E * to_mp(Q.get(o, Fraction(0)))
        if d > 0:
            s += d
    return s


def neighbours(h):
    for a in range(len(h)):
        if h[a] == 0:
            continue
        for b in range(len(h)):
            if a != b:
                x = list(h)
                x[a] -= 1
                x[b] += 1
                yield tuple(x)


def profile(h, T, epsilon, replace=False):
    """delta_eps(x) of Definition 2, by enumerating every output of every neighbour."""
    f = pmf_with_replacement if replace else pmf_without_replacement
    P = f(h, T)
    best = mp.mpf(0)
    for x in neighbours(h):
        Q = f(x, T)
        best = max(best, hockey(P, Q, epsilon), hockey(Q, P, epsilon))
    return best


def utility(c, T, t, replace=False):
    """Adjusted utility, eq. (3), uniform prior, from the definition."""
    f = pmf_with_replacement if replace else pmf_without_replacement
    m = len(c)
    pmfs = []
    for j in range(m):
        x = list(c)
        x[j] += 1
        pmfs.append(f(tuple(x), T))
    outs = set().union(*pmfs)
    t = Fraction(t).limit_denominator(10**12) if not isinstance(t, Fraction) else t
    best = Fraction(0)
    for i in range(m):
        s = Fraction(0)
        for o in outs:
            ps = [p.get(o, Fraction(0)) for p in pmfs]
            tot = sum(ps)
            post = max(ps) / tot
            s += pmfs[i].get(o, Fraction(0)) * max(Fraction(0), post - t)
        best = max(best, s)
    return best / (1 - t)


def log_hypergeom_mp(k, good, bad, draws):
    return (
        mp.loggamma(good + 1)
        - mp.loggamma(k + 1)
        - mp.loggamma(good - k + 1)
        + mp.loggamma(bad + 1)
        - mp.loggamma(draws - k + 1)
        - mp.loggamma(bad - draws + k + 1)
        - mp.loggamma(good + bad + 1)
        + mp.loggamma(draws + 1)
        + mp.loggamma(good + bad - draws + 1)
    )


def forward_divergence_binary_mp(u, v, T, epsilon):
    """log d(x, x') for two categories and huge n, at 60 digits.

    x has u+1 records of a and v of b; x' moves that record to b.  The first
    K where P(K) > e^epsilon Q(K) is found by bisection on the (monotone)
    condition, evaluated with log-gamma at 60 digits; the positive terms
    are then summed upward until they fall below 1e-40 of the total.
    """
    lo, hi = max(0, T - v), min(u + 1, T)
    epsilon = mp.mpf(epsilon)

    def positive(k):
        if k > u:  # Q(K) = 0 there
            return True
        return log_hypergeom_mp(k, u + 1, v, T) - log_hypergeom_mp(k, u, v + 1, T) > epsilon

    if not positive(hi):
        return -mp.inf
    a, b = lo, hi  # find the smallest positive k
    if positive(a):
        b = a
    while b - a > 1:
        mid = (a + b) // 2
        if positive(mid):
            b = mid
        else:
            a = mid
    total = mp.mpf(0)
    E = mp.e**epsilon
    for k in range(b, hi + 1):
        p = mp.e ** log_hypergeom_mp(k, u + 1, v, T)
        q = mp.e ** log_hypergeom_mp(k, u, v + 1, T) if k <= u else mp.mpf(0)
        term = p - E * q
        total += term
        if term < total * mp.mpf("1e-40"):
            break
    return mp.log(total)


def composition_expectations_log(logdelta, p1, p2):
    """Algorithm 1's expectation for every two-vertex composition, plainly:
    ``E_r = sum_x Bin(x; n - r, p1) H_r(x)`` with one averaging step
    ``H_{r+1}(x) = p2 H_r(x+1) + (1-p2) H_r(x)`` per record, every operation
    in log space (slow and simple; shares nothing with the package's paths)."""
    from scipy.special import logsumexp
    from scipy.stats import binom

    n = logdelta.shape[0] - 1
    H = logdelta.copy()
    out = np.empty_like(logdelta)
    with np.errstate(divide="ignore"):
        lp2, lq2 = np.log(p2), np.log1p(-p2)
        for r in range(n + 1):
            s = n - r
            lw = binom.logpmf(np.arange(s + 1), s, p1)
            out[r] = logsumexp(lw[:, None] + H[: s + 1], axis=0)
            if r < n:
                H = np.logaddexp(lp2 + H[1 : s + 1], lq2 + H[:s])
    return out


# ---------------------------------------------------------------------------
# any finite mechanism, from its law on the records (Fractions, mpmath hockey)
# ---------------------------------------------------------------------------
def all_hists(n, m):
    """Every histogram of n records on m categories (tuples)."""
    return [h for h in itertools.product(range(n + 1), repeat=m) if sum(h) == n]


def profile_of_law(law, h, epsilon):
    """delta_eps(x) of Definition 2 for a mechanism given by ``law(hist) -> {output: Fraction}``."""
    P = law(h)
    best = mp.mpf(0)
    for x in neighbours(h):
        Q = law(x)
        best = max(best, hockey(P, Q, epsilon), hockey(Q, P, epsilon))
    return best


def smoothed_of_law(law, pi, n, epsilon):
    """Definition 3 literally: max over every assignment of a distribution of Pi
    to each record of E[delta(x)], x enumerated in X^n (pi: rows of Fractions)."""
    m = len(pi[0])
    cache = {}
    best = mp.mpf(0)
    for assign in itertools.combinations_with_replacement(range(len(pi)), n):
        s = Fraction(0)
        acc = mp.mpf(0)
        for x in itertools.product(range(m), repeat=n):
            p = Fraction(1)
            for i, xi in enumerate(x):
                p *= pi[assign[i]][xi]
            if p:
                h = tuple(x.count(j) for j in range(m))
                if h not in cache:
                    cache[h] = profile_of_law(law, h, epsilon)
                acc += to_mp(p) * cache[h]
            s += p
        assert s == 1
        best = max(best, acc)
    return best


def randomized_response_law(h, keep):
    """Each record's category is kept with probability ``keep`` and otherwise
    replaced by one of the other m - 1 categories uniformly; the histogram of
    the reports is published.  Enumerates every record's report (X^n)."""
    m = len(h)
    records = [j for j, c in enumerate(h) for _ in range(c)]
    other = (1 - keep) / (m - 1)
    law = {}
    for reports in itertools.product(range(m), repeat=len(records)):
        p = Fraction(1)
        for r, y in zip(records, reports):
            p *= keep if r == y else other
        o = tuple(reports.count(j) for j in range(m))
        law[o] = law.get(o, Fraction(0)) + p
    return law


def sampling_average_law(h, values, T):
    """Sum of T of the records drawn without replacement (values: Fractions),
    by enumerating every T-subset of record positions."""
    records = [values[j] for j, c in enumerate(h) for _ in range(c)]
    subsets = list(itertools.combinations(range(len(records)), T))
    law = {}
    for s in subsets:
        v = sum((records[i] for i in s), Fraction(0))
        law[v] = law.get(v, Fraction(0)) + Fraction(1, len(subsets))
    return law


def winner_law(h, T):
    """The winner of a sample of T records drawn without replacement (ties split evenly)."""
    law = {}
    for o, p in pmf_without_replacement(h, T).items():
        top = [j for j, c in enumerate(o) if c == max(o)]
        for j in top:
            law[j] = law.get(j, Fraction(0)) + p / len(top)
    return law


def hypergeom_tail_mp(good, bad, T, k, upper):
    """P(K >= k) (upper) or P(K < k) of the hypergeometric law, at 60 digits: the
    side away from the mode summed term by term until the terms fall below
    1e-40 of the sum, the other side as its complement."""
    lo, hi = max(0, T - bad), min(good, T)
    mode = (T + 1) * (good + 1) // (good + bad + 2)

    def pmf(j):
        return mp.e ** log_hypergeom_mp(j, good, bad, T) if lo <= j <= hi else mp.mpf(0)

    def run(start, step):  # sum outward from start (away from the mode)
        total, j = mp.mpf(0), start
        while lo <= j <= hi:
            term = pmf(j)
            total += term
            if term < total * mp.mpf("1e-40"):
                break
            j += step
        return total

    if k > mode:
        ge = run(k, 1)
        return ge if upper else 1 - ge
    lt = run(k - 1, -1)
    return 1 - lt if upper else lt


def winner_profile_mp(h, T, epsilon):
    """log delta_eps(x) of the announced winner (two categories, sampling without
    replacement, ties split evenly) from the hypergeometric laws at 60 digits:
    max over both moves and both directions of the divergence over {a wins, b wins}."""
    h[0] + h[1]
    E = mp.e ** mp.mpf(epsilon)
    best = mp.mpf(0)
    k_lo, k_hi = (T + 1) // 2, T // 2 + 1
    for a in (0, 1):
        if h[a] == 0:
            continue
        u, v = h[a] - 1, h[1 - a]

        def wins(good, bad):
            return (hypergeom_tail_mp(good, bad, T, k_lo, True) + hypergeom_tail_mp(good, bad, T, k_hi, True)) / 2

        def loses(good, bad):
            return (hypergeom_tail_mp(good, bad, T, k_lo, False) + hypergeom_tail_mp(good, bad, T, k_hi, False)) / 2

        P = (wins(u + 1, v), loses(u + 1, v))  # a wins / b wins under x
        Q = (wins(u, v + 1), loses(u, v + 1))  # under the neighbour
        for A, B in ((P, Q), (Q, P)):
            best = max(best, sum(max(mp.mpf(0), p - E * q) for p, q in zip(A, B)))
    return mp.log(best) if best > 0 else -mp.inf


def subset_sum_counts(records, T, W):
    """``A[t, s]``: how many t-element subsets (by position) of the integer records sum to s,
    for t <= T and s < W, as Python integers (the sampling average's count tables, plainly)."""
    A = np.zeros((T + 1, W), dtype=object)
    A[0, 0] = 1
    for w in records:
        A[1:, w:] = A[1:, w:] + A[:-1, : W - w]
    return A
