"""A stopwatch learns nothing: the wall time of a release, given its output, does not tell neighbours apart.

Crafted neighbour pairs (x, x') for all five families at extreme allowed
shapes put a cell boundary of the sampler where the cost of the Arb
evaluation changes: for Student's t with d = 1000 on either side of the
argument 11.9605 where Arb's incomplete beta switches algorithm (about 0.3 ms
below, 16-50 ms above, at the first round's 224 bits); for the others, one
database puts the boundary exactly on the true value (the exact tie ``a = 0``,
whose cdf value 1/2 needs no evaluation) and its neighbour one record away.
Releases of x and x' are interleaved with the same seeds (alternating which
goes first, so a load change hits both alike), and for every output value seen
at least :data:`MIN_GROUP` times under both databases the two samples of wall
times are compared with a two-sample Kolmogorov-Smirnov test; the test fails
if any p-value is below :data:`ALPHA` = 1e-4.  With 30 pairs per setting a
separation needs a KS distance above about 0.57, while the unpadded sampler
gives distance 1 on the Student's t pair (checked below by
``test_the_statistic_sees_the_unpadded_channel``, which removes the padding):
the test has the power to see the channel, and a loaded machine slows both
databases alike.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats

import smoothdp_nb as sdp
from smoothdp_nb.core.release import lattice as L, timing
from smoothdp_nb.core.release.noise import get_family

ALPHA = 1e-4
MIN_GROUP = 8
PAIRS = 30
N = 200
#: Student's t pair: large enough that the switch's argument is reached inside the bounds (s is about 160 / n)
N_SWITCH = 6000
#: Arb's incomplete beta for Student's t (d = 1000) at 224 bits, on a ball argument a = N 2^e / s as the sampler forms it, is cheap below this argument and slow above
STUDENT_SWITCH = 11.9604975

COMMON = {"query": "mean", "epsilon": 1.0, "bounds": (0.0, 1.0), "lattice": 1.0}

# (family settings, how the pair is crafted)
SETTINGS = [
    ({"noise": "student_t", "shape": 1000.0, "gamma": 0.9 / 1001}, "switch"),
    ({"noise": "cauchy", "shape": 1.0001}, "tie"),
    ({"noise": "cauchy", "shape": 1e6, "gamma": 5e-7}, "tie"),
    ({"noise": "laplace_log_normal", "shape": 1e-4, "gamma": 5e-5}, "tie"),
    ({"noise": "laplace_log_normal", "shape": 20.0}, "tie"),
    ({"noise": "polyplace"}, "tie"),
    ({"noise": "laplace", "delta": 1e-6}, "tie"),
]


def _pair(settings: dict[str, object], how: str) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours differing in the last record (1 in x, 0 in x'); both have smooth sensitivity 1/n."""
    if how == "tie":  # mean exactly 1/2 = the boundary between the cells 0 and 1 of lattice 1
        x = np.r_[np.zeros(N // 2), np.ones(N // 2)]
    else:  # the boundary's argument (1/2 - mean) / s sits 1/(2 n s) below the switch for x, above for x'
        n = N_SWITCH
        probe = np.r_[np.zeros(n // 2), np.ones(n // 2)]
        diag = sdp.release(probe, rng=0, diagnostics=True, **COMMON, **settings).diagnostics
        assert diag is not None
        s = diag.noise_scale
        mean = 0.5 - (STUDENT_SWITCH - 1.0 / (2 * n * s)) * s
        assert 0.0 < mean < 0.5
        x = np.full(n, (n * mean - 1.0) / (n - 1))
        x[-1] = 1.0
    x2 = x.copy()
    x2[-1] = 0.0
    return x, x2


def _timed_pairs(x: np.ndarray, x2: np.ndarray, kw: dict[str, object], pairs: int) -> list[list[tuple[float, float]]]:
    sdp.release(x, rng=0, **kw)  # public one-off work (calibration) before the clock matters
    out: list[list[tuple[float, float]]] = [[], []]
    for seed in range(pairs):
        for which in (0, 1) if seed % 2 == 0 else (1, 0):
            data = (x, x2)[which]
            t0 = time.perf_counter()
            r = sdp.release(data, rng=seed, **kw)
            out[which].append((r.value, time.perf_counter() - t0))
    return out


def _smallest_p(out: list[list[tuple[float, float]]]) -> tuple[float, int]:
    """Smallest KS p-value over the output values seen >= MIN_GROUP times under both databases."""
    p_min, groups = 1.0, 0
    for value in {v for v, _ in out[0]} & {v for v, _ in out[1]}:
        a = [t for v, t in out[0] if v == value]
        b = [t for v, t in out[1] if v == value]
        if min(len(a), len(b)) >= MIN_GROUP:
            groups += 1
            p_min = min(p_min, float(stats.ks_2samp(a, b).pvalue))
    return p_min, groups


@pytest.mark.parametrize(("settings", "how"), SETTINGS, ids=[f"{s['noise']}-{s.get('shape')}" for s, _ in SETTINGS])
def test_wall_time_given_the_output_does_not_separate_neighbours(settings: dict[str, object], how: str) -> None:
    x, x2 = _pair(settings, how)
    kw = {**COMMON, **settings}
    p, groups = _smallest_p(_timed_pairs(x, x2, kw, PAIRS))
    assert groups >= 1, "no output value was seen often enough under both databases"
    assert p >= ALPHA, f"wall times separate the neighbours (KS p = {p:.3g} < {ALPHA})"


def test_the_statistic_sees_the_unpadded_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the padding the Student's t pair is told apart: the test above can fail."""
    settings, how = SETTINGS[0]
    x, x2 = _pair(settings, how)
    monkeypatch.setattr(timing, "wait_until", lambda start, deadline: None)
    p, groups = _smallest_p(_timed_pairs(x, x2, {**COMMON, **settings}, 20))
    assert groups >= 1
    assert p < ALPHA


def test_every_boundary_costs_one_evaluation_counted_where_arb_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """Median, bounds (0, 1): a boundary exactly on the true value is evaluated like any other.

    x = [0.1, 0.5 - 2^-21, 0.9] has its median on a cell boundary of the
    default lattice 2^-20; x' = [0.1, 0.3, 0.9] does not.  The tail
    evaluations are counted by wrapping the family's ``tail_enclosure`` (the
    Arb call), independently of the sampler's own counter, and must equal the
    bisection path of the output, for both databases.
    """
    fam = type(get_family("polyplace"))
    calls = [0]
    original = fam.tail_enclosure

    def counted(self: object, a: object, shape: float) -> object:
        calls[0] += 1
        return original(self, a, shape)  # type: ignore[arg-type]

    monkeypatch.setattr(fam, "tail_enclosure", counted)
    monkeypatch.setattr(timing, "wait_until", lambda start, deadline: None)  # counts, not times, here
    step = L.default_lattice((0.0, 1.0))
    k_lo, k_hi = 0, int(1.0 / step)
    seen: dict[float, set[int]] = {}
    for data in ([0.1, 0.5 - 2.0**-21, 0.9], [0.1, 0.3, 0.9]):
        for seed in range(60):
            calls[0] = 0
            r = sdp.release(data, query="median", epsilon=1.0, bounds=(0.0, 1.0), rng=seed)
            k = round(r.value / step)
            expected = _path_length(k, k_lo, k_hi)
            assert calls[0] == expected, (data, r.value, calls[0], expected)
            seen.setdefault(r.value, set()).add(calls[0])
    assert all(len(counts) == 1 for counts in seen.values())


def _path_length(k: int, k_lo: int, k_hi: int) -> int:
    """Comparisons of a bisection over [k_lo, k_hi] ending at k (written independently of the sampler)."""
    n, lo, hi = 0, k_lo, k_hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if k >= mid else (lo, mid - 1)
        n += 1
    return n


def test_a_phase_that_overruns_waits_to_the_next_public_step() -> None:
    """wait_until never returns before the deadline, and after an overrun returns at deadline * 2^j."""
    start = time.perf_counter()
    timing.wait_until(start, 0.02)
    assert time.perf_counter() - start >= 0.02
    misses = timing.deadline_misses()
    start = time.perf_counter() - 0.05  # the phase took 50 ms against a 20 ms deadline: next step is 80 ms
    timing.wait_until(start, 0.02)
    assert time.perf_counter() - start >= 0.08
    assert timing.deadline_misses() == misses + 1
