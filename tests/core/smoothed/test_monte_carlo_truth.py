"""Monte Carlo tells the truth: the upper end of its interval is an
upper confidence bound on the smoothed delta over *every* composition, or the result
says what it covers; estimates stay in log space; notebook 04's control variate
survives delta(x) = 0."""

import itertools
import json
import math
import pathlib
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.engines.results import SmoothedResult
from tests import exact

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_interval_contains_the_smoothed_delta_off_the_candidate_grid(seed):
    """A reported case, verbatim: the worst composition (4, 4, 4) is off the candidate grid;
    the exact smoothed delta 0.166623 must lie in the interval."""
    M = sdp.postprocess(sdp.SamplingHistogram(T=8), sdp.winner)
    Pi = [[0.75, 0.125, 0.125], [0.125, 0.75, 0.125], [0.125, 0.125, 0.75]]
    r = sdp.smoothed_delta(M, 12, Pi, 0.5, method="monte-carlo", trials=2000, rng=seed)
    assert r.ci_low <= 0.166623 <= r.ci_high
    assert any("covers all 91 compositions" in note for note in r.notes)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 4), st.integers(1, 30))
def test_cells_cover_every_composition(n, l, k):
    """Every composition of n into l parts is >= the base of some cell (the bound's premise),
    each cell's candidate is a composition of n, and there are at most max(k, 1) cells."""
    from smoothdp_nb.core.smoothed.engines.monte_carlo import composition_cells

    base, extra, _ = composition_cells(n, l, k)
    assert len(base) <= k
    cand = base + extra
    assert np.all(extra >= 0) and np.all(cand.sum(axis=1) == n)
    for c in itertools.product(range(n + 1), repeat=l):
        if sum(c) == n:
            assert np.any(np.all(np.array(c) >= base, axis=1)), c


def _smoothed_per_composition(T, n, V, epsilon):
    """f(c) = E_c[delta(x)] for two vertices and two categories, every c, exactly (Fractions / mpmath)."""
    prof = {h: exact.profile(h, T, epsilon) for h in exact.all_hists(n, 2)}

    def law(counts):
        out = {(0, 0): Fraction(1)}
        for v, cnt in enumerate(counts):
            for _ in range(cnt):
                new = {}
                for (a, b), p in out.items():
                    new[(a + 1, b)] = new.get((a + 1, b), Fraction(0)) + p * V[v][0]
                    new[(a, b + 1)] = new.get((a, b + 1), Fraction(0)) + p * V[v][1]
                out = new
        return out

    return {r: sum(exact.to_mp(p) * prof[h] for h, p in law((n - r, r)).items()) for r in range(n + 1)}, prof, law


def test_cell_bound_against_exact_values():
    """The cells' argument with exact numbers: for each cell, E[max_z delta(Y + z)] (Y from the
    base, z every histogram of the D extra records) is >= f(c) of every composition c of the cell."""
    T, n, eps = 3, 9, 0.3
    V = [[Fraction(1, 5), Fraction(4, 5)], [Fraction(7, 10), Fraction(3, 10)]]
    from smoothdp_nb.core.smoothed.engines.monte_carlo import composition_cells

    f, prof, law = _smoothed_per_composition(T, n, V, eps)
    base, _, _ = composition_cells(n, 2, 3)
    covered = set()
    for s in base:
        D = n - int(s.sum())
        upper = sum(
            exact.to_mp(p) * max(prof[(h[0] + k, h[1] + D - k)] for k in range(D + 1)) for h, p in law(tuple(s)).items()
        )
        for r in range(n + 1):
            if n - r >= s[0] and r >= s[1]:
                covered.add(r)
                assert upper >= f[r] - mp.mpf(10) ** -40
    assert covered == set(range(n + 1))


def test_monte_carlo_interval_covers_the_exact_smoothed_delta_two_vertices():
    """Off-grid worst composition, two categories: the interval (over every composition, by cells)
    contains the exact value computed by enumeration."""
    T, n, eps = 3, 9, 0.3
    V = [[Fraction(1, 5), Fraction(4, 5)], [Fraction(7, 10), Fraction(3, 10)]]
    f, _, _ = _smoothed_per_composition(T, n, V, eps)
    truth = float(max(f.values()))
    pi = [[float(p) for p in row] for row in V]
    r = sdp.smoothed_delta(
        sdp.SamplingHistogram(T=T), n, pi, eps, method="monte-carlo", trials=3000, candidates=3, rng=1
    )
    assert r.ci_low <= truth <= r.ci_high
    assert any("covers all 10 compositions" in note for note in r.notes)


def _candidates_only() -> SmoothedResult:
    """Monte Carlo at n = 3000 whose cells' bound would enumerate too much: an interval over 4 candidates only."""
    return sdp.smoothed_delta(
        sdp.SamplingHistogram(eta=0.5),
        3000,
        [[0.4, 0.6], [0.6, 0.4]],
        1.0,
        method="monte-carlo",
        trials=50,
        candidates=4,
        rng=1,
    )


def test_candidates_only_is_said_so():
    """When the cells' bound would enumerate too much, the interval is not called one for the smoothed delta."""
    r = _candidates_only()
    assert any("covers 4 of 3001 compositions" in note for note in r.notes)
    assert "not for the smoothed delta" in r.interval


def test_monte_carlo_estimate_stays_in_log_space():
    """delta(x) far below the float range: the Monte Carlo estimate is finite, not log(0)
    (one vertex: the only composition, so both estimate the same mean)."""
    M = sdp.SamplingHistogram(eta=0.5)
    pi = [[0.2, 0.8]]
    n, eps = 10000, 3.0
    ex = sdp.smoothed_delta(M, n, pi, eps)
    assert ex.log_delta < -750  # below the smallest float64 (exp(-745))
    mc = sdp.smoothed_delta(M, n, pi, eps, method="monte-carlo", trials=400, rng=2)
    # finite (main: -inf, the mean of underflowed zeros); a mean of a heavy-tailed law from 400 draws
    # is usually below the true mean, never far above it
    assert np.isfinite(mc.log_delta)
    assert ex.log_delta - 700 < mc.log_delta < ex.log_delta + 5
    assert mc.ci_low <= math.exp(ex.log_delta) <= mc.ci_high


def _notebook_control():
    """The control-variate functions of notebook 04's Monte Carlo cell, executed on their own."""
    nb = json.loads((ROOT / "notebooks" / "04_quantized_sgd.ipynb").read_text())
    src = next("".join(c["source"]) for c in nb["cells"] if "def control(" in "".join(c["source"]))
    start = src.index("def control_value(")
    end = src.index("\nz = stats.norm")
    ns = {"np": np, "math": math}
    exec(src[start:end], ns)  # the notebook's own code, read from the repository
    return ns["control_value"], ns["control"]


@pytest.mark.parametrize(
    "deltas",
    [
        [0.0, 0.0, 1e-3, 0.0, 0.0, 0.0],  # one positive value
        [0.0, 2e-4, 1e-3, 0.0, 0.0, 0.0],  # two: a fit through them, zeros elsewhere
        [0.0] * 6,  # all zero
        [1e-5, 2e-5, 0.0, 4e-5, 0.0, 1e-4],
    ],
)
def test_notebook04_control_variate_survives_zero_deltas(deltas):
    """delta(x) = 0 (2-bit grids) gave +-1e117 or NaN: the control is now finite, at most T/n,
    and the estimator's mean on the pilot itself stays within the range of the deltas."""
    control_value, control = _notebook_control()
    v = np.array([0.1, 0.3, 0.2, 5.0, 7.0, 0.05])
    d = np.array(deltas)
    cap = math.log(4 / 16)
    ((a, g, b),) = control(np.column_stack([d, v]), cap)
    C = control_value(a, g, v, cap)
    assert np.all(np.isfinite(C)) and np.all(C <= 4 / 16) and math.isfinite(b)
    r = d - b * (C - C.mean())
    assert np.all(np.isfinite(r)) and r.mean() == pytest.approx(d.mean(), abs=1e-15)


def _printed_upper_bounds(text):
    """Every number the text calls an upper bound of the smoothed delta ("δ ≤ x", not "DP δ ≤ x")."""
    import re

    from smoothdp_nb.core.numerics.formatting import parse_number

    return [parse_number(v) for v in re.findall(r"(?<!DP )δ ≤ ([0-9.]+(?:·10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?)", text)]


def test_monte_carlo_summary_calls_no_estimate_an_upper_bound():
    """A Monte Carlo point estimate is not a bound: the off-grid case's estimate (0.16547 at seed 5) lies
    below the smoothed delta 0.166623, yet the summary printed "δ ≤ 1.65469555e-01".  Every
    "δ ≤" in the summary must be >= the exact value (a certified lower bound of it), and the
    interval's upper end is printed rounded up."""
    M = sdp.postprocess(sdp.SamplingHistogram(T=8), sdp.winner)
    Pi = [[0.75, 0.125, 0.125], [0.125, 0.75, 0.125], [0.125, 0.125, 0.75]]
    truth = sdp.smoothed_delta(M, 12, Pi, 0.5).delta_lower
    r = sdp.smoothed_delta(M, 12, Pi, 0.5, method="monte-carlo", trials=2000, rng=5)
    assert r.delta < truth  # the estimate itself is below the truth here: the case that matters
    bounds = _printed_upper_bounds(str(r))
    assert bounds and all(b >= truth for b in bounds)
    assert all(b >= r.ci_high for b in bounds)


def test_monte_carlo_summary_on_candidates_only_states_no_bound():
    """An interval over the candidate compositions only is no bound on the smoothed delta:
    the summary prints no "δ ≤" for it."""
    r = _candidates_only()
    text = str(r)
    assert not _printed_upper_bounds(text) and "candidate" in text
