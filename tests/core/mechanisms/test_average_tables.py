"""The sampling average's count tables (core.mechanisms.average_profile) against
brute-force subset counts in Python integers: the flat skewed forward table in
every residue, the leave-one-out counts (whose float residue sums only the
terms its error bound needs) and the rows of R formed on demand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from smoothdp_nb.core.smoothed.mechanisms.sampling_average import count_tables as average_profile
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.count_tables import LeaveOneOutR, leave_one_out_counts
from tests import exact

_PRIME = 2**31 - 1


def _subset_counts(records: list[int], T: int, width: int) -> list[list[int]]:
    """rows[t][s] = number of t-subsets of ``records`` with sum s (t <= T, s < width), Python ints."""
    return [list(row) for row in exact.subset_sum_counts(records, T, width)]


@st.composite
def databases(draw: st.DrawFn, max_n: int = 40) -> tuple[np.ndarray, np.ndarray, int]:
    """(weights from 0, increasing; counts >= 1; T) of a small database."""
    m = draw(st.integers(1, 9))
    gaps = draw(st.lists(st.integers(1, 4), min_size=m - 1, max_size=m - 1))
    v = np.concatenate([[0], np.cumsum(gaps)]).astype(np.int64)
    c = np.array(draw(st.lists(st.integers(1, max(1, max_n // m)), min_size=m, max_size=m)), dtype=np.int64)
    T = draw(st.integers(1, int(c.sum())))
    return v, c, T


@settings(max_examples=60, deadline=None)
@given(databases())
def test_forward_table_in_every_residue(db):
    """uint64 is the count modulo 2^64, int64 modulo 2^31 - 1, and the floats are
    within n u of it (non-negative sums, one rounding per record)."""
    v, c, T = db
    W = T * int(v[-1]) + 1
    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    counts = _subset_counts(records, T, W)
    n = len(records)
    for dtype in (np.uint64, np.int64, np.float32, np.float64):
        got = average_profile._forward_table(v, c, T, W, dtype)
        assert got.shape == (T + 1, W) and got.dtype == dtype
        for t in range(T + 1):
            if dtype is np.uint64:
                assert [int(x) for x in got[t]] == [x % 2**64 for x in counts[t]]
            elif dtype is np.int64:
                assert [int(x) for x in got[t]] == [x % _PRIME for x in counts[t]]
            else:
                u = 2.0**-24 if dtype is np.float32 else 2.0**-53
                want = np.array([float(x) for x in counts[t]])
                assert np.all(np.abs(got[t].astype(float) - want) <= 1.01 * n * u * want)


@settings(max_examples=40, deadline=None)
@given(databases(max_n=60))
def test_leave_one_out_counts_against_brute_force(db):
    """R_i, S_i (one record of weight v_i removed) and P, within 2 ulp of the
    Python-integer counts; R rows formed on demand agree with the whole array."""
    v, c, T = db
    out = leave_one_out_counts(v, c, T)
    assert out is not None
    R, S, P = out
    assert isinstance(R, LeaveOneOutR)
    W = T * int(v[-1]) + 1
    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    full = _subset_counts(records, T, W)
    np.testing.assert_allclose(P, [float(x) for x in full[T]], rtol=4.5e-16, atol=0)
    whole = np.asarray(R)
    assert whole.shape == R.shape == S.shape == (v.size, W)
    for i, vi in enumerate(v.tolist()):
        others = list(records)
        others.remove(vi)
        rows = _subset_counts(others, T, W)
        np.testing.assert_allclose(R[i], [float(x) for x in rows[T]], rtol=4.5e-16, atol=0)
        np.testing.assert_allclose(S[i], [float(x) for x in rows[T - 1]], rtol=4.5e-16, atol=0)
        np.testing.assert_array_equal(whole[i], R[i])
    np.testing.assert_array_equal(R[1:], whole[1:])


@pytest.mark.parametrize("n,T,seed", [(225, 15, 0), (150, 40, 1)])
def test_float_residue_terms_and_counts_beyond_2_64(n, T, seed, monkeypatch):
    """Counts beyond 2^64 (C(225, 15) ~ 2^77.6, C(150, 40) ~ 2^126), where the
    float residue decides the high bits from fewer than T terms: the rows
    against Python integers (object arrays), and the number of terms that the
    error bound E(m) allows (float32 at n = 225)."""
    rng = np.random.default_rng(seed)
    hist = rng.multinomial(n, rng.dirichlet(np.ones(12)))
    v = np.flatnonzero(hist)
    c = hist[v]
    v = v - v[0]
    seen: list[tuple[float, int | None]] = []
    terms = average_profile._float_terms

    def spy(rows_max, n_, T_, unit, limit):
        m = terms(rows_max, n_, T_, unit, limit)
        seen.append((unit, m))
        return m

    monkeypatch.setattr(average_profile, "_float_terms", spy)
    R, S, P = leave_one_out_counts(v, c, T)
    used = [m for _, m in seen if m is not None][-1]
    assert 1 <= used < T
    if n == 225:  # float32 suffices (its bound E(m) < 2^61 with a few terms)
        assert len(seen) == 1 and seen[0][0] == 2.0**-24
    W = R.shape[1]

    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    full = exact.subset_sum_counts(records, T, W)
    assert max(full[T]) > 2**64
    np.testing.assert_allclose(P, full[T].astype(float), rtol=4.5e-16, atol=0)
    for i in (0, len(v) // 2, len(v) - 1):
        others = list(records)
        others.remove(int(v[i]))
        rows = exact.subset_sum_counts(others, T, W)
        np.testing.assert_allclose(R[i], rows[T].astype(float), rtol=4.5e-16, atol=0)
        np.testing.assert_allclose(S[i], rows[T - 1].astype(float), rtol=4.5e-16, atol=0)


@settings(max_examples=40, deadline=None)
@given(databases(max_n=60), st.data())
def test_grouped_rows_of_R_against_brute_force(db, data):
    """R's rows summed over groups of a padded axis (the rounded mean's
    grouping), formed in the residues before reconstruction: within 2 ulp of
    the exact group sums of the Python-integer counts."""
    v, c, T = db
    R, _, _ = leave_one_out_counts(v, c, T)
    W = R.shape[1]
    off = data.draw(st.integers(0, 5))
    L = off + W + data.draw(st.integers(0, 5))
    cuts = data.draw(st.sets(st.integers(1, L - 1), max_size=L - 1)) if L > 1 else set()
    starts = np.array(sorted({0} | cuts), dtype=np.int64)
    got = R.grouped(starts, off, L)
    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    bounds = list(starts) + [L]
    for i, vi in enumerate(v.tolist()):
        others = list(records)
        others.remove(vi)
        row = [0] * off + _subset_counts(others, T, W)[T] + [0] * (L - off - W)
        want = [float(sum(row[a:b])) for a, b in itertools.pairwise(bounds)]
        np.testing.assert_allclose(got[i], want, rtol=4.5e-16, atol=0)


def test_grouped_rows_beyond_2_64():
    """The same at n = 225, T = 15 (counts ~2^70 per output) with groups of 15
    outputs (the rounded mean's), against object-array integer counts."""
    rng = np.random.default_rng(3)
    hist = rng.multinomial(225, rng.dirichlet(np.ones(12)))
    v = np.flatnonzero(hist)
    c = hist[v]
    v = v - v[0]
    T = 15
    R, _, _ = leave_one_out_counts(v, c, T)
    A, W = R.shape
    off, L = 7, W + 20
    starts = np.arange(0, L, 15)
    table, n, T_, unit, limit = R.float_table
    assert average_profile._float_terms(table.max(axis=1).astype(float), n, T_, unit, limit, group=15) is not None
    got = R.grouped(starts, off, L)
    records = [int(x) for x, k in zip(v, c) for _ in range(k)]
    for i in (0, A // 2, A - 1):
        others = list(records)
        others.remove(int(v[i]))
        X = np.zeros((T + 1, W), dtype=object)
        X[0, 0] = 1
        for w in others:
            X[1:, w:] = X[1:, w:] + X[:-1, : W - w]
        row = np.zeros(L, dtype=object)
        row[off : off + W] = X[T]
        want = [float(sum(row[a : a + 15])) for a in starts]
        assert max(row) > 2**64
        np.testing.assert_allclose(got[i], want, rtol=4.5e-16, atol=0)
