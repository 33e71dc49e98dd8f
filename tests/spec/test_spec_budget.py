"""The ``[budget]`` table charges a spec's release to a curator's budget, refused before the data is read."""

from __future__ import annotations

import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.spec import SpecError, keys_markdown, run_spec

SPEC = """
compute = "release"
data = "incomes"
bounds = [0, 100]
epsilon = 0.6
rng = 1
[budget]
odometer = "odo"
"""


class DataThatMustNotBeRead:
    def _fail(self, *args: object) -> None:
        raise AssertionError("the data was read")

    __array__ = __len__ = __iter__ = __getitem__ = _fail


def test_a_named_odometer_is_charged_and_shown() -> None:
    odo = sdp.PrivacyOdometer(1.0)
    ns = {"odo": odo, "incomes": np.linspace(0, 100, 51)}
    report = run_spec(SPEC, ns)
    assert odo.spent == (0.6, 0.0) and len(odo) == 1
    assert (report.budget, report.spent, report.remaining) == ((1.0, 0.0), (0.6, 0.0), (0.4, 0.0))
    assert "spent ε=0.6, δ=0, remaining ε=0.4" in str(report)
    d = report.to_dict()
    assert d["spent_epsilon"] == 0.6 and d["remaining_epsilon"] == 0.4 and d["budget_epsilon"] == 1.0
    assert odo.log[0]["value"] == report.value
    # the second release would exceed the budget: refused before the data is loaded or read
    ns["incomes"] = DataThatMustNotBeRead()
    with pytest.raises(SpecError, match="release refused before reading the data") as err:
        run_spec(SPEC, ns)
    assert err.value.key == "budget"
    assert odo.spent == (0.6, 0.0) and len(odo) == 1


def test_a_new_budget_from_the_table() -> None:
    spec = SPEC.replace('odometer = "odo"', "epsilon = 0.5")
    with pytest.raises(SpecError, match=r"remaining ε=0\.5"):
        run_spec(spec, {"incomes": DataThatMustNotBeRead()})
    report = run_spec(spec.replace("epsilon = 0.5", "epsilon = 2.0\ndelta = 1e-6"), {"incomes": [1.0, 2.0, 3.0]})
    assert report.budget == (2.0, 1e-6) and report.spent == (0.6, 0.0)


@pytest.mark.parametrize(
    ("table", "key", "message"),
    [
        ("odometer = 3", "budget.odometer", "must be the name of a PrivacyOdometer"),
        ('epsilon = 1\nodometer = "odo"', "budget", "exactly one of odometer"),
        ("delta = 0.1", "budget", "exactly one of odometer"),
        ('odometer = "nope"', "budget.odometer", "must name a PrivacyOdometer"),
        ('odometer = "incomes"', "budget.odometer", "got a ndarray"),
        ('odometer = "odo"\ndelta = 0.1', "budget.delta", "only used with epsilon"),
        ("epsilon = 1\ndelta = 1e-6\nconcentrated_delta = 1e-5", "budget.concentrated_delta", "at most budget.delta"),
        ("epsilon = -1", "budget.epsilon", "epsilon"),
        ("epsilon = 1\ncolour = 2", "budget.colour", "unknown key"),
    ],
)
def test_bad_budget_tables_name_their_key(table: str, key: str, message: str) -> None:
    ns = {"odo": sdp.PrivacyOdometer(1.0), "incomes": np.linspace(0, 100, 51)}
    with pytest.raises(SpecError, match=message) as err:
        run_spec(SPEC.replace('odometer = "odo"', table), ns)
    assert err.value.key == key
    assert len(ns["odo"]) == 0


def test_the_budget_table_is_in_the_reference() -> None:
    page = keys_markdown()
    assert "## Budget table" in page and "| `odometer` |" in page and "| `concentrated_delta` |" in page
