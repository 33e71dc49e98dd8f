"""The exercises' checker: right answers from independent formulas pass, wrong ones are explained without the value."""

import math

import pytest

from smoothdp_nb import exercises
from tests import methods_reference as ref


def _independent(name):
    small = (2, 3, 3, 5, 8, 9, 12)
    if name == "exponential-exact":
        return float(ref.exponential_law(small, 15, 4, 1.0)[5])
    if name == "stability-release":
        return 1e-3 * math.exp(2.0)  # d = 3 replacements - 1, t = delta e^{d eps} <= 1/2
    if name == "leak-delta":
        # x: point mass at 6.  One replacement keeps the median at 6 and makes LS at most 5 (e.g. a 6 -> 12);
        # Q = Laplace(6, 5) on the lattice puts Q(6) = 1 - e^{-1/10} on the cell [5.5, 6.5], and the worse
        # direction is delta(Q || P) = 1 - Q(6) = e^{-1/10} (the other, 1 - e Q(6), is smaller)
        return math.exp(-0.1)
    return None


@pytest.mark.parametrize("name", list(exercises.EXERCISES))
def test_right_and_wrong_answers(name):
    exact = _independent(name)
    if exact is not None:
        assert exercises.check(name, exact).correct
    value = exercises.EXERCISES[name].answer()
    assert exercises.check(name, value * (1 + 5e-4)).correct
    for wrong in (value * 1.3, value * 0.5 + 0.01, 1.7):
        result = exercises.check(name, wrong)
        assert not result.correct
        for digits in (3, 4, 6):
            assert f"{value:.{digits}g}" not in str(result), (name, str(result))


def test_slips_are_named():
    e = exercises.EXERCISES["stability-release"]
    refused = 1 - e.answer()
    assert "complement" in str(exercises.check("stability-release", refused))
    assert "zero" in str(exercises.check("leak-delta", 0.0))


def test_unknown_exercise_is_named():
    with pytest.raises(ValueError, match="name must be one of"):
        exercises.check("nope", 0.1)
