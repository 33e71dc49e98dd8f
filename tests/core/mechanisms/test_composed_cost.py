"""The up-front cost model of repeat and joint: its arithmetic and its refusals (never timings)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution
from smoothdp_nb.core.numerics.privacy_loss.pld import ComposedLoss
from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.core.smoothed.mechanisms import composed as C


def _law(losses: list[float]) -> LossDistribution:
    """Equal masses on the given losses."""
    L = np.array(sorted(losses), dtype=float)
    return LossDistribution(L, np.full(L.size, -math.log(L.size)))


def test_one_run_alone_is_read_not_composed() -> None:
    d = _law([-0.3, 0.1, 0.7])
    once, per = C.evaluation_seconds(ComposedLoss([(d, 1)]))
    assert once == 0.0
    assert per == pytest.approx(C._EXACT_EVAL_SECONDS + 3 * C._EXACT_EVAL_ATOM_SECONDS)


def test_one_exact_step_is_priced_by_its_table() -> None:
    """Two runs of three losses (no common step): one outer-sum table of 9 cells."""
    a, b = _law([-0.3, 0.1, 0.7]), _law([-math.sqrt(2) / 10, math.e / 10, math.pi / 10])
    once, per = C.evaluation_seconds(ComposedLoss([(a, 1), (b, 1)]))
    assert once == pytest.approx(C._EXACT_STEP_SECONDS + C._EXACT_CELL_SECONDS * 9 * math.log2(9))
    assert per == pytest.approx(C._EXACT_EVAL_SECONDS + 9 * C._EXACT_EVAL_ATOM_SECONDS)


def test_a_table_beyond_the_exact_limit_costs_nothing_and_falls_to_the_grid() -> None:
    """4096 x 4096 > 2^23 cells: compose_exact gives up before any table, so only the grid is paid."""
    rng = np.random.default_rng(3)
    a, b = _law(list(rng.normal(size=4096))), _law(list(rng.normal(size=4096)))
    loss = ComposedLoss([(a, 1), (b, 1)])
    once, per = C.evaluation_seconds(loss, upper=False)
    assert once == 0.0
    assert per == pytest.approx(C.grid_seconds([(a, 1), (b, 1)], loss.cells, False))
    assert loss.method(False) == "grid"  # the path priced is the path taken


def test_grid_seconds_follows_its_formula_on_a_lattice() -> None:
    """On a lattice of step g the cells are the composed range over g (window permitting)."""
    g = 0.01
    d = LossDistribution(np.array([-3 * g, 0.0, 5 * g]), np.log(np.array([0.25, 0.5, 0.25])))
    k = 1000
    reach = k * 8 * g
    # the untilted variance of the law, by hand
    mean = 0.25 * (-3 * g) + 0.25 * (5 * g)
    var = 0.25 * (-3 * g - mean) ** 2 + 0.5 * mean**2 + 0.25 * (5 * g - mean) ** 2
    width = 20.0 * math.sqrt(k * var)
    cells = min(reach / g, (width + 8 * g) / g) + 1.0
    convolutions = (k.bit_length() - 1) + bin(k).count("1")
    expected = (
        C._GRID_BASE_SECONDS
        + C._GRID_PART_SECONDS
        + 3 * C._GRID_ATOM_SECONDS
        + cells * (C._GRID_CELL_SECONDS + convolutions * math.log2(cells) * C._GRID_CONVOLUTION_SECONDS)
    )
    assert C.grid_seconds([(d, k)], 2**18, True, step=g) == pytest.approx(expected)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 10**9))
def test_convolutions_count_the_squarings_and_products(k: int) -> None:
    squarings, products, power = 0, 0, k
    while power:
        products += power & 1
        power >>= 1
        squarings += power > 0
    assert C._convolutions(k) == squarings + products


@pytest.mark.parametrize("m", [2, 3])
@pytest.mark.parametrize("relation", ["replace", "add-remove"])
def test_a_profile_counts_each_shared_neighbour_pair_once(m: int, relation: str) -> None:
    n = 5
    hists = np.array([h for h in itertools.product(range(n + 1), repeat=m) if sum(h) == n], dtype=np.int64)
    expected = set()
    for h in hists.tolist():
        for x2 in C.neighbours(np.array(h), relation):
            expected.add(frozenset([tuple(h), tuple(x2.tolist())]))
    assert C._distinct_pairs(hists, relation) == len(expected)
    single = C._distinct_pairs(hists[:1], relation)
    assert single == sum(1 for _ in C.neighbours(hists[0], relation))


def test_the_build_prices_runs_by_how_their_losses_are_built() -> None:
    sh, count = sdp.SamplingHistogram(eta=0.5), sdp.noisy_count(0, 3.0)
    n = 1000
    atoms = sh.sample_size(n) + 1
    got = C.build_estimate(sdp.joint(sh, count, sdp.repeat(sh, 10**6)), n, 2, 7).seconds
    # the repeat builds its run once, whatever k; the count's law is its own (one atom where unknown)
    own = C._BUILD_SECONDS_PER_OWN_RUN + C._BUILD_SECONDS_PER_ATOM
    per_pair = 2 * (C._BUILD_SECONDS_PER_RUN + atoms * C._BUILD_SECONDS_PER_ATOM) + own
    assert got == pytest.approx(7 * per_pair)


def test_the_pipeline_of_a_histogram_and_a_count_is_priced_in_seconds_not_hours() -> None:
    """joint(SamplingHistogram, noisy_count) at n = 16: its costliest pair, 4 epsilons, both
    directions and bounds, runs in well under a second; the model must not price it in minutes."""
    mech = sdp.joint(sdp.SamplingHistogram(eta=0.5), sdp.noisy_count(0, 3.0))
    losses = C.pair_loss(mech, np.array([8, 8]), np.array([7, 9]))
    assert losses[0].method(True) == "grid"
    assert C.pair_seconds(losses, 4) < 5.0


def test_a_composition_over_the_budget_is_refused_with_its_estimate() -> None:
    mech = sdp.repeat(sdp.SamplingHistogram(eta=0.5), 10**5)
    with pytest.raises(ComputationTooLarge, match="estimated") as info:
        sdp.privacy_profile(mech, [3, 2], [0.5, 1.0], budget=0.05)
    assert info.value.parameter == "k"


def test_many_mechanisms_are_refused_by_their_build() -> None:
    mech = sdp.joint(*[sdp.SamplingHistogram(eta=0.5)] * 2000)
    with pytest.raises(ComputationTooLarge, match="building the privacy losses of 2e\\+03 runs") as info:
        sdp.privacy_profile(mech, [3, 2], 1.0, budget=1.0)
    assert info.value.parameter == "mechanisms"


def test_the_up_front_estimate_times_one_pair_once_and_counts_shared_pairs_once() -> None:
    """n = 16 on two categories: each histogram has 2 moves, valid for 16/17 of them; 17
    histograms share their pairs (17 priced, not 32), one histogram alone has its 2."""
    mech = sdp.joint(sdp.SamplingHistogram(eta=0.5), sdp.noisy_count(0, 3.0))
    whole = mech.profile_cost(16, 2, 17, 4)
    again = mech.profile_cost(16, 2, 17, 4)
    one = mech.profile_cost(16, 2, 1, 4)
    assert again.seconds == whole.seconds  # the timed pair is remembered
    assert whole.seconds / one.seconds == pytest.approx(17 / 2)
