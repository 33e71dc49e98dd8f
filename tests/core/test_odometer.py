"""The curator's odometer: composition proven and tight, refusals before any data or randomness is touched.

Independent references: exact rationals for basic composition; the concentrated test of the
module docstring recomputed in 80-digit mpmath; and, as a lower bound that *any* valid
accounting must respect, the exact optimal composition of k pure eps-DP mechanisms (Kairouz, Oh
and Viswanath 2015, Theorem 3.3, as the hockey-stick divergence of k randomized responses in
exact rationals): an odometer whose spent (epsilon, delta) were below that curve would state a
false guarantee.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb.core.release.odometer import LAMBDAS

MP = mpmath.mp.clone()
MP.dps = 80

X = np.linspace(0.0, 100.0, 41)
BOUNDS = (0.0, 100.0)


class DataThatMustNotBeRead:
    """A database whose every access fails: a refused release must not touch it."""

    def _fail(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("the data was read")

    __array__ = __len__ = __iter__ = __getitem__ = _fail


class RngThatMustNotBeUsed:
    """A random source whose every use fails."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the random source was used ({name})")


def _optimal_pure_delta(k: int, eps: Fraction, eps_total: float) -> mpmath.mpf:
    """delta of the exact k-fold composition of eps-DP (randomized response pairs) at eps_total."""
    e = MP.exp(MP.mpf(eps.numerator) / eps.denominator)
    total = MP.mpf(0)
    for i in range(k + 1):  # i outputs agree with x': privacy loss (k - 2i) eps
        term = MP.binomial(k, i) * (e ** (k - i) - MP.exp(MP.mpf(eps_total)) * e**i)
        total += max(MP.mpf(0), term)
    return total / (1 + e) ** k


def _concentrated_ref(pure: list[Fraction], rho: Fraction, eps_a: Fraction, delta_z: float) -> mpmath.mpf:
    best = MP.inf
    K = len(LAMBDAS)
    for lam in LAMBDAS:
        L = MP.mpf(lam)
        c = MP.fsum(
            min(MP.mpf(e.numerator) / e.denominator, (L + 1) * (MP.mpf(e.numerator) / e.denominator) ** 2 / 2)
            for e in pure
        )
        c += (L + 1) * MP.mpf(rho.numerator) / rho.denominator
        best = min(best, MP.mpf(eps_a.numerator) / eps_a.denominator + c + MP.log(K / MP.mpf(delta_z)) / L)
    return best


def test_pure_releases_add_exactly_at_their_stated_decimals() -> None:
    odo = sdp.PrivacyOdometer(1.0)
    for eps in (0.1, 0.2, 0.7):  # 0.1 + 0.2 + 0.7 is above 1 in doubles, exactly 1 as stated decimals
        odo.release(X, "median", eps, bounds=BOUNDS, rng=0)
    assert odo.spent == (1.0, 0.0)
    assert odo.remaining == (0.0, 0.0)
    assert odo.test == "basic composition"
    with pytest.raises(sdp.BudgetExceeded, match=r"remaining ε=0, δ=0") as info:
        odo.release(X, "median", 0.01, bounds=BOUNDS, rng=0)
    assert "median" in info.value.request and "0.01-DP" in info.value.request
    assert info.value.remaining == (0.0, 0.0)
    assert len(odo) == 3


def test_a_refused_release_reads_no_data_and_draws_no_noise() -> None:
    odo = sdp.PrivacyOdometer(0.5)
    before = (odo.spent, odo.log)
    with pytest.raises(sdp.BudgetExceeded, match="before reading the data"):
        odo.release(DataThatMustNotBeRead(), "median", 0.6, bounds=BOUNDS, rng=RngThatMustNotBeUsed())
    odo.release(X, "mean", 0.4, bounds=BOUNDS, rng=1)
    with pytest.raises(sdp.BudgetExceeded):
        odo.release(DataThatMustNotBeRead(), "trimmed_mean", 0.2, trim=2, bounds=BOUNDS, rng=RngThatMustNotBeUsed())
    with pytest.raises(sdp.BudgetExceeded, match="delta > 0"):
        odo.release(DataThatMustNotBeRead(), "mean", 0.01, noise="laplace_log_normal", bounds=BOUNDS)
    with pytest.raises(sdp.BudgetExceeded, match="delta > 0"):
        odo.release(DataThatMustNotBeRead(), "mean", 0.01, noise="laplace", delta=1e-9, bounds=BOUNDS)
    assert before[0] == (0.0, 0.0) and before[1] == []
    assert odo.spent == (0.4, 0.0) and len(odo) == 1


def test_bad_parameters_are_refused_before_the_data_and_not_charged() -> None:
    odo = sdp.PrivacyOdometer(1.0)
    data, rng = DataThatMustNotBeRead(), RngThatMustNotBeUsed()
    with pytest.raises(ValueError, match="epsilon"):
        odo.release(data, "median", -1.0, bounds=BOUNDS, rng=rng)
    with pytest.raises(ValueError, match="family"):
        odo.release(data, "median", 0.1, noise="gaussian", bounds=BOUNDS, rng=rng)
    with pytest.raises(ValueError, match="query"):
        odo.release(data, "mode", 0.1, bounds=BOUNDS, rng=rng)
    with pytest.raises((TypeError, ValueError), match="bounds"):
        odo.release(data, "median", 0.1, rng=rng)
    with pytest.raises(TypeError, match="reveal_true"):
        odo.release(data, "median", 0.1, bounds=BOUNDS, rng=rng, reveal_true="yes")
    with pytest.raises(ValueError, match="gamma"):
        odo.release(data, "median", 0.1, gamma=0.5, bounds=BOUNDS, rng=rng)
    assert odo.spent == (0.0, 0.0) and odo.log == []
    with pytest.raises(ValueError, match="epsilon"):
        sdp.PrivacyOdometer(0.0)
    with pytest.raises(ValueError, match="delta"):
        sdp.PrivacyOdometer(1.0, 1.0)
    with pytest.raises(ValueError, match="concentrated_delta"):
        sdp.PrivacyOdometer(1.0, 1e-6, concentrated_delta=1e-5)


def test_a_release_that_fails_on_the_data_is_still_charged() -> None:
    odo = sdp.PrivacyOdometer(1.0)
    with pytest.raises(ValueError, match="finite"):
        odo.release([1.0, math.inf, 3.0], "median", 0.25, bounds=BOUNDS, rng=0)
    assert odo.spent == (0.25, 0.0)
    assert odo.log[0]["value"] is None and odo.log[0]["failed"] == "ValueError"


def test_the_log_holds_public_numbers_only() -> None:
    odo = sdp.PrivacyOdometer(2.0, 1e-6)
    rel = odo.release(X, "mean", 0.5, bounds=BOUNDS, rng=3, diagnostics=True, reveal_true=True)
    odo.release(X, "median", 0.5, noise="laplace", delta=1e-7, bounds=BOUNDS, rng=4)
    public = set(rel.to_dict()) - {"diagnostics"} | {"release", "spent_epsilon", "spent_delta"}
    for entry in odo.log:
        assert set(entry) <= public
    assert odo.log[0]["value"] == rel.value
    assert rel.diagnostics is not None and rel.true_value is not None  # given to the caller, not logged
    frame = odo.to_frame()
    assert list(frame["release"]) == [1, 2]
    assert not any("diagnostics" in c or "true" in c for c in frame.columns)
    assert "spent" in repr(odo) and "2 release(s)" in repr(odo)


def test_approximate_releases_share_delta_minus_the_reserved_part() -> None:
    odo = sdp.PrivacyOdometer(5.0, 1e-5)  # concentrated_delta = 5e-6 by default
    odo.release(X, "median", 0.5, noise="laplace", delta=3e-6, bounds=BOUNDS, rng=0)
    assert odo.spent == (0.5, 3e-6)
    assert odo.remaining.delta == pytest.approx(2e-6, rel=1e-12)
    assert odo.remaining.delta <= float(Fraction(1e-5) / 2 - Fraction("3e-6"))
    with pytest.raises(sdp.BudgetExceeded):
        odo.release(X, "median", 0.5, noise="laplace", delta=3e-6, bounds=BOUNDS, rng=0)
    odo.release(X, "median", 0.5, noise="laplace", delta=2e-6, bounds=BOUNDS, rng=0)
    all_in = sdp.PrivacyOdometer(5.0, 1e-5, concentrated_delta=0.0)
    all_in.release(X, "median", 0.5, noise="laplace", delta=9e-6, bounds=BOUNDS, rng=0)
    assert all_in.spent == (0.5, 9e-6)


def test_zcdp_releases_add_in_rho_and_convert() -> None:
    odo = sdp.PrivacyOdometer(3.0, 1e-6)
    for _ in range(3):
        odo.release(X, "mean", 0.2, noise="laplace_log_normal", bounds=BOUNDS, rng=0)
    rho = 3 * Fraction("0.2") ** 2 / 2
    ref = _concentrated_ref([], rho, Fraction(0), 5e-7)
    assert ref <= odo.spent.epsilon <= ref + 1e-12
    assert odo.spent.delta == 5e-7
    assert odo.test.startswith("concentrated")
    # a proven conversion of the same rho-zCDP total at the same delta is smaller: the price of adaptivity
    assert sdp.zcdp_to_dp(float(rho), 5e-7) < odo.spent.epsilon


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["0.01", "0.02", "0.05", "0.1", "0.3"]), min_size=1, max_size=120))
def test_pure_series_spent_is_the_smaller_test_and_above_optimal_composition(epsilons: list[str]) -> None:
    odo = sdp.PrivacyOdometer(1e6, 1e-6)  # a budget nothing reaches: spent is what the tests give
    charges = [Fraction(float(e)) for e in epsilons]  # spend() takes the doubles as they are
    for e in epsilons:
        odo.spend(float(e))  # the accounting alone: no release per example
    basic = sum(charges, Fraction(0))
    conc = _concentrated_ref(charges, Fraction(0), Fraction(0), 5e-7)
    ref = min(MP.mpf(basic.numerator) / basic.denominator, conc)
    spent = odo.spent
    assert ref <= spent.epsilon <= ref + 1e-12
    assert spent.delta == (0.0 if ref == basic else 5e-7)
    if len(set(epsilons)) == 1:  # k equal releases: no valid accounting is below the optimal one
        # (1e-60: the 80-digit rounding of a delta that is exactly 0 when spent is the plain sum)
        assert _optimal_pure_delta(len(charges), charges[0], spent.epsilon) <= spent.delta + 1e-60


def test_many_small_pure_releases_fit_more_than_basic_composition() -> None:
    odo = sdp.PrivacyOdometer(1.0, 1e-6)
    count = 0
    while odo.would_spend(0.02) is not None:
        odo.spend(0.02)  # the accounting of a release, without its data work
        count += 1
    assert count > 50  # basic composition stops at 50
    with pytest.raises(sdp.BudgetExceeded):
        odo.release(DataThatMustNotBeRead(), "median", 0.02, bounds=BOUNDS, rng=RngThatMustNotBeUsed())
    assert odo.spent.epsilon <= 1.0 and odo.spent.delta == 5e-7


def test_would_spend_says_what_release_would_do() -> None:
    odo = sdp.PrivacyOdometer(1.0)
    assert odo.would_spend(0.4) == (0.4, 0.0)
    odo.release(X, "median", 0.7, bounds=BOUNDS, rng=0)
    assert odo.would_spend(0.4) is None
    assert odo.would_spend(0.3) == (1.0, 0.0)


def test_spend_charges_a_release_made_elsewhere() -> None:
    odo = sdp.PrivacyOdometer(1.0, 1e-6)
    assert odo.spend(0.25) == (0.25, 0.0)
    assert odo.spend(0.25, 1e-7) == (0.5, 1e-7)
    spent = odo.spend(rho=0.001)
    assert spent.delta == pytest.approx(1e-7 + 5e-7) and odo.test.startswith("concentrated")
    assert odo.log[-1] == {
        "release": 3,
        "query": "external",
        "guarantee": "0.001-zCDP",
        "spent_epsilon": spent.epsilon,
        "spent_delta": spent.delta,
    }
    with pytest.raises(sdp.BudgetExceeded, match="made elsewhere"):
        odo.spend(0.9)
    with pytest.raises(ValueError, match="not both"):
        odo.spend(0.1, rho=0.1)
    with pytest.raises(ValueError, match="required"):
        odo.spend()
    assert len(odo) == 3


def test_a_method_release_is_charged_by_its_own_guarantee():
    """Exponential releases are pure epsilon-DP, propose-test-release (epsilon, delta)-DP: each is
    charged so, before the data is read."""
    odo = sdp.PrivacyOdometer(1.0, delta=1e-6)
    x = np.linspace(0.0, 1.0, 41)
    odo.release(x, "median", 0.25, method="exponential", bounds=(0, 1), lattice=2**-6, rng=1)
    assert odo.spent.epsilon == pytest.approx(0.25, rel=1e-12) and odo.spent.delta == 0.0
    assert odo.log[-1]["method"] == "exponential"
    odo.release(x, "median", 0.25, method="propose-test-release", delta=1e-7, bounds=(0, 1), lattice=2**-6, rng=2)
    assert odo.spent.epsilon == pytest.approx(0.5, rel=1e-12) and odo.spent.delta == pytest.approx(1e-7, rel=1e-9)
    with pytest.raises(sdp.BudgetExceeded):
        odo.release(
            DataThatMustNotBeRead(), "median", 0.75, method="exponential", bounds=(0, 1), rng=RngThatMustNotBeUsed()
        )
