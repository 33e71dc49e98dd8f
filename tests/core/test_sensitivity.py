"""Tests for smoothdp_nb.core.release.sensitivity against brute force computations written here."""

import itertools
import math
from functools import cache

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from smoothdp_nb.core.release.sensitivity import (
    evaluate_query,
    local_sensitivity,
    sensitivity_at_distance,
    smooth_sensitivity,
)


# --------------------------------------------------------------------------- #
# independent brute force on a small integer domain {0, ..., L}
# --------------------------------------------------------------------------- #
def _stat(vecs, query, trim_m):
    s = np.sort(vecs, axis=1)
    n = vecs.shape[1]
    if query == "median":
        return s[:, (n + 1) // 2 - 1].astype(float)  # lower median for even n
    m = 0 if query == "mean" else trim_m
    return s[:, m : n - m].mean(axis=1)


@cache
def _all_databases(n, L, query, trim_m=0):
    """Every database in {0..L}^n, its query value and its local sensitivity,
    the latter by trying every single-record replacement."""
    base = L + 1
    vecs = np.array(list(itertools.product(range(base), repeat=n)))
    vals = _stat(vecs, query, trim_m)
    codes = vecs @ (base ** np.arange(n - 1, -1, -1))
    assert np.all(codes == np.arange(len(vecs)))
    ls = np.zeros(len(vecs))
    for pos in range(n):
        w = base ** (n - 1 - pos)
        for v in range(base):
            nb = codes + (v - vecs[:, pos]) * w
            ls = np.maximum(ls, np.abs(vals[nb] - vals))
    return vecs, ls


def brute_smooth(x, gamma, L, query, trim_m=0):
    vecs, ls = _all_databases(len(x), L, query, trim_m)
    d = (vecs != np.asarray(x)[None, :]).sum(axis=1)
    return float(np.max(ls * np.exp(-gamma * d)))


def brute_local(x, L, query, trim_m=0):
    _vecs, ls = _all_databases(len(x), L, query, trim_m)
    base = L + 1
    code = int(np.asarray(x) @ (base ** np.arange(len(x) - 1, -1, -1)))
    return float(ls[code])


def nrs_quadratic(x, gamma, lo, hi, query="median", trim_m=0):
    """Direct O(n^2) double loop over (k, t) of the NRS / Bun-Steinke formula."""
    xs = sorted(float(v) for v in x)
    n = len(xs)

    def X(i):  # 1-based, padded
        return lo if i <= 0 else hi if i >= n + 1 else xs[i - 1]

    best = 0.0
    for k in range(n + 1):
        ak = 0.0
        for t in range(k + 2):
            if query == "median":
                m = (n + 1) // 2
                ak = max(ak, X(m + t) - X(m + t - k - 1))
            else:
                ak = max(ak, (X(n - trim_m + 1 + k - t) - X(trim_m + 1 - t)) / (n - 2 * trim_m))
        best = max(best, math.exp(-k * gamma) * ak)
    return best


# --------------------------------------------------------------------------- #
# exactness
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n,L", [(5, 4), (4, 5), (6, 3), (3, 6), (1, 5), (2, 4)])
def test_median_matches_brute_force_all_databases(n, L):
    rng = np.random.default_rng(n * 100 + L)
    for _ in range(25):
        x = rng.integers(0, L + 1, size=n)
        gamma = float(rng.uniform(0.01, 2.0))
        got = smooth_sensitivity(x, "median", gamma, bounds=(0, L))
        assert got == pytest.approx(brute_smooth(x, gamma, L, "median"), rel=1e-12, abs=0)
        assert local_sensitivity(x, "median", bounds=(0, L)) == brute_local(x, L, "median")


@pytest.mark.parametrize("n,L,m", [(5, 4, 1), (6, 3, 1), (6, 3, 2), (4, 4, 0)])
def test_trimmed_mean_matches_brute_force(n, L, m):
    rng = np.random.default_rng(7 * n + L + m)
    for _ in range(20):
        x = rng.integers(0, L + 1, size=n)
        gamma = float(rng.uniform(0.01, 2.0))
        got = smooth_sensitivity(x, "trimmed_mean", gamma, bounds=(0, L), trim=m)
        assert got == pytest.approx(brute_smooth(x, gamma, L, "trimmed_mean", m), rel=1e-12)
        assert local_sensitivity(x, "trimmed_mean", bounds=(0, L), trim=m) == pytest.approx(
            brute_local(x, L, "trimmed_mean", m), rel=1e-12
        )


def test_mean_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(0, 5, size=4)
        g = float(rng.uniform(0.01, 2))
        assert smooth_sensitivity(x, "mean", g, bounds=(0, 4)) == pytest.approx(
            brute_smooth(x, g, 4, "mean"), rel=1e-12
        )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-5, 105, allow_nan=False), min_size=1, max_size=40),
    st.floats(0.001, 3.0),
    st.sampled_from(["median", "trimmed_mean", "mean"]),
)
def test_matches_quadratic_formula_on_real_data(data, gamma, query):
    x = np.clip(np.array(data), 0, 100)
    m = math.floor(0.2 * len(x)) if query == "trimmed_mean" else 0
    m = min(m, (len(x) - 1) // 2)
    got = smooth_sensitivity(x, query, gamma, bounds=(0, 100), trim=m)
    assert got == pytest.approx(nrs_quadratic(x, gamma, 0, 100, query, m), rel=1e-12, abs=1e-300)


def test_large_n_exponents_do_not_underflow():
    # e^{-gamma k} underflows for gamma k > 745 -- the log domain must not care
    x = np.full(20001, 5.0)
    x[:10000] = 0.0
    x[10001:] = 10.0
    # LS = 5; the only competitors are far away, so SS = LS
    assert smooth_sensitivity(x, "median", 1.0, bounds=(0, 10)) == 5.0
    y = np.full(4001, 3.0)
    # all equal: A(k) = 0 until k = 2000 changes, after which 10 - 3 = 7 appears
    g = 0.001
    got = smooth_sensitivity(y, "median", g, bounds=(0, 10))
    assert got == pytest.approx(7.0 * math.exp(-g * 2000), rel=1e-12)


def test_sensitivity_at_distance_matches_brute_force():
    rng = np.random.default_rng(11)
    L, n = 4, 5
    vecs, ls = _all_databases(n, L, "median")
    for _ in range(10):
        x = rng.integers(0, L + 1, size=n)
        d = (vecs != x[None, :]).sum(axis=1)
        for k in range(n + 1):
            assert sensitivity_at_distance(x, "median", k, bounds=(0, L)) == ls[d <= k].max()


# --------------------------------------------------------------------------- #
# properties
# --------------------------------------------------------------------------- #
data_st = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60)


@settings(max_examples=80, deadline=None)
@given(data_st, st.floats(0.001, 5.0), st.floats(0.001, 5.0), st.sampled_from(["median", "trimmed_mean", "mean"]))
def test_properties(data, g1, g2, query):
    x = np.array(data)
    lo_g, hi_g = min(g1, g2), max(g1, g2)
    ls = local_sensitivity(x, query, bounds=(0, 1), trim=0.1)
    s_lo = smooth_sensitivity(x, query, lo_g, bounds=(0, 1), trim=0.1)
    s_hi = smooth_sensitivity(x, query, hi_g, bounds=(0, 1), trim=0.1)
    n = len(x)
    m = min(math.floor(0.1 * n), (n - 1) // 2) if query == "trimmed_mean" else 0
    gs = 1.0 / (n - 2 * m) if query != "median" else 1.0
    assert ls <= s_hi * (1 + 1e-12) + 1e-300
    assert s_hi <= s_lo * (1 + 1e-12) + 1e-300  # non-increasing in gamma
    assert s_lo <= gs * (1 + 1e-12)  # never above the global sensitivity


@settings(max_examples=80, deadline=None)
@given(data_st, st.floats(0.01, 3.0), st.integers(0, 59), st.floats(0, 1), st.sampled_from(["median", "trimmed_mean"]))
def test_smoothness_between_neighbours(data, gamma, pos, newval, query):
    # the defining property: SS(x) <= e^gamma SS(x') for neighbours x ~ x'
    x = np.array(data)
    y = x.copy()
    y[pos % len(x)] = newval
    sx = smooth_sensitivity(x, query, gamma, bounds=(0, 1), trim=1 if len(x) >= 3 else 0)
    sy = smooth_sensitivity(y, query, gamma, bounds=(0, 1), trim=1 if len(x) >= 3 else 0)
    assert sx <= math.exp(gamma) * sy * (1 + 1e-12) + 1e-300
    assert sy <= math.exp(gamma) * sx * (1 + 1e-12) + 1e-300


def test_callable_generic_path():
    x = np.array([1.0, 2.0, 2.5, 7.0, 9.0])

    def A(k):
        return sensitivity_at_distance(x, "median", min(k, 10), bounds=(0, 10))

    for g in (0.05, 0.5, 2.0):
        assert smooth_sensitivity(x, A, g) == pytest.approx(
            smooth_sensitivity(x, "median", g, bounds=(0, 10)), rel=1e-12
        )
        assert smooth_sensitivity(x, A, g, global_sensitivity=10) == pytest.approx(
            smooth_sensitivity(x, "median", g, bounds=(0, 10)), rel=1e-12
        )
    assert local_sensitivity(x, A) == 4.5
    # constant A -> SS = A(0)
    assert smooth_sensitivity(100, lambda k: 2.0, 0.3) == 2.0


def test_even_n_convention_is_lower_median():
    x = [1.0, 2.0, 8.0, 9.0]
    assert evaluate_query(x, "median", bounds=(0, 10)) == 2.0
    assert local_sensitivity(x, "median", bounds=(0, 10)) == 6.0  # max(2-1, 8-2)


def test_evaluate_query():
    x = np.arange(10.0)
    assert evaluate_query(x, "mean", bounds=(0, 9)) == 4.5
    assert evaluate_query(x, "trimmed_mean", bounds=(0, 9), trim=2) == np.mean(np.arange(2, 8))
    assert evaluate_query(x, "median", bounds=(0, 9)) == 4.0


def test_clipping_warns():
    with pytest.warns(UserWarning, match="clipped"):
        s = smooth_sensitivity([-5.0, 1.0, 20.0], "median", 0.1, bounds=(0, 10))
    assert s == pytest.approx(smooth_sensitivity([0.0, 1.0, 10.0], "median", 0.1, bounds=(0, 10)))


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(x=[], bounds=(0, 1)), "non-empty"),
        (dict(x=[0.1, float("nan")], bounds=(0, 1)), "NaN"),
        (dict(x=[0.1], bounds=(1, 1)), "low < high"),
        (dict(x=[0.1], bounds=(2, 1)), "low < high"),
        (dict(x=[0.1], bounds=None), "bounds"),
        (dict(x=[0.1], bounds=(0, 1), query="mode"), "query must be one of"),
        (dict(x=[0.1], bounds=(0, 1), gamma=0.0), "0 < gamma"),
        (dict(x=[0.1], bounds=(0, 1), gamma=-1.0), "0 < gamma"),
        (dict(x=[0.1, 0.2], bounds=(0, 1), query="trimmed_mean", trim=0.5), "trim"),
        (dict(x=[0.1, 0.2], bounds=(0, 1), query="trimmed_mean", trim=1), "trim"),
    ],
)
def test_bad_input(kwargs, match):
    kwargs = dict(kwargs)
    kwargs.setdefault("gamma", 0.1)
    kwargs.setdefault("query", "median")
    with pytest.raises(ValueError, match=match):
        smooth_sensitivity(**kwargs)


def test_bad_types():
    with pytest.raises(TypeError):
        smooth_sensitivity([1.0], "median", "0.1", bounds=(0, 1))
    with pytest.raises(TypeError):
        smooth_sensitivity([1.0], 3, 0.1, bounds=(0, 1))


# --------------------------------------------------------------------------- #
# the grid of the sensitivity bound, the float mean, huge bounds
# --------------------------------------------------------------------------- #
def test_grid_rounding_is_the_smallest_grid_point_above():
    from smoothdp_nb.core.release.sensitivity import grid_value, round_up_to_grid, sensitivity_grid

    ctx = mp.MPContext()
    ctx.prec = 200
    rng = np.random.default_rng(4)
    for v in np.concatenate(
        [
            rng.uniform(1e-3, 1e3, 50),
            2.0 ** rng.integers(-40, 40, 20).astype(float),
            [1.0, 2.0 ** (1 / 64), 5e-300, 1e300],
        ]
    ):
        j, g = round_up_to_grid(v, 64)
        exact_j = ctx.mpf(2) ** (ctx.mpf(j) / 64)
        assert exact_j <= g <= exact_j * (1 + ctx.mpf(2) ** -50)  # G_j brackets 2^(j/64)
        assert g >= v and grid_value(j - 1, 64) < v  # smallest grid point >= v
        assert ctx.mpf(2) ** (ctx.mpf(j - 1) / 64) < v  # so 2^(j/64) < 2^(1/64) v
    assert sensitivity_grid(0.1) == 64 and sensitivity_grid(0.0216) == 128 and sensitivity_grid(0.002) == 1024
    with pytest.raises(ValueError, match="0 < value"):
        round_up_to_grid(0.0, 64)


def test_mean_is_correctly_rounded():
    from fractions import Fraction

    from smoothdp_nb.core.release.sensitivity import evaluate_query

    x = np.array([1e16, 1.0, -1e16, 3.0, 0.1] * 7)  # naive summation loses the small terms
    exact = sum(Fraction(float(v)) for v in x) / len(x)
    got = evaluate_query(x, "mean", bounds=(-1e16, 1e16))
    # fsum then one division: within one ulp of the result (np.mean is off by ~1 here), far inside
    # the allowance of 4 ulp(max |bound|) that release() adds to the sensitivity
    assert abs(Fraction(got) - exact) <= Fraction(math.ulp(float(exact)))
    assert abs(float(np.mean(x)) - float(exact)) > math.ulp(float(exact))  # the naive float mean would fail


def test_bounds_whose_width_overflows_are_refused():
    with pytest.raises(ValueError, match=r"high - low < 1\.798e"):
        smooth_sensitivity([1.0], "median", 0.1, bounds=(-1.7e308, 1.7e308))
