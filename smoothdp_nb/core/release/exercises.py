"""Exercises on the data-dependent releases, checked against the exact values without revealing them.

Each exercise asks for one number about a small public dataset (the probability that the inverse
sensitivity mechanism returns the true median, the notes' bound for unbiased mechanisms, the
refusal probability of propose-test-release, ...).  :func:`check` compares a student's answer with
the exact value computed by the package (relative tolerance 1e-3) and, when it is wrong, says which
classic slip it matches (a missing factor 1/2 in the exponent, the complement, the other side of the
bound), or only whether it is too high or too low: the exact value is never printed.

References
----------
Course notes "Differential Privacy for Machine Learning" (Master IASD): the exponential mechanism,
inverse sensitivity and the lower bound for unbiased mechanisms.  Dwork and Lei, "Differential
privacy and robust statistics", STOC 2009 (propose-test-release).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from smoothdp_nb.core.numerics.validation import as_real
from smoothdp_nb.core.release.compare import compare_releases
from smoothdp_nb.core.release.leak import local_sensitivity_leak

__all__ = ["EXERCISES", "Exercise", "CheckResult", "check", "exercise_text"]

#: relative tolerance of a correct answer
TOLERANCE = 1e-3


@dataclass(frozen=True)
class Exercise:
    """One question: its text, the exact answer, and the slips a wrong answer may come from."""

    name: str
    question: str
    answer: Callable[[], float]
    slips: Callable[[], dict[str, float]]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of :func:`check`: ``correct`` and an explanation that never contains the exact value."""

    name: str
    correct: bool
    message: str
    answered: bool = True

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        return self.message

    def _repr_markdown_(self) -> str:
        mark = "✅" if self.correct else ("❌" if self.answered else "✏️")
        return f"{mark} **{self.name}**: {self.message}"


_SMALL = [2.0, 3.0, 3.0, 5.0, 8.0, 9.0, 12.0]  # lattice 1, bounds (0, 15)
_BOUNDS = (0.0, 15.0)
_TIES = [4.0, 6.0, 6.0, 6.0, 6.0, 6.0, 11.0]
_EDGE = [4.0, 5.0, 6.0, 6.0, 6.0, 11.0, 12.0]  # LS = 0, but one replacement makes it 5


def _law_value(method: str, x: list[float], epsilon: float, value: float | str, delta: float | None = None) -> float:
    c = compare_releases(x, "median", epsilon, bounds=_BOUNDS, lattice=1.0, methods=[method], delta=delta)
    return float(c.law(method)[value])


def _bound(epsilon: float) -> float:
    c = compare_releases(_SMALL, "median", epsilon, bounds=_BOUNDS, lattice=1.0, methods=["exponential"])
    return c.unbiased_bound


EXERCISES: dict[str, Exercise] = {
    e.name: e
    for e in (
        Exercise(
            "ism-exact",
            "x = [2, 3, 3, 5, 8, 9, 12] on the integers 0..15, epsilon = 1: the probability that the inverse "
            "sensitivity mechanism returns the median 5 exactly.",
            lambda: _law_value("inverse-sensitivity", _SMALL, 1.0, 5.0),
            lambda: {
                "the weights e^{-D epsilon} of the two-output variant (here |Y| = 16, so the exponent is "
                "-D epsilon / 2)": 1.0 / _weights_sum(_SMALL, 1.0),
                "the complement (the probability of NOT returning the median)": 1.0
                - _law_value("inverse-sensitivity", _SMALL, 1.0, 5.0),
            },
        ),
        Exercise(
            "exponential-exact",
            "Same x and epsilon: the probability that the exponential mechanism with the rank utility "
            "u(y) = -|#{x_i <= y} - m| returns 5 exactly.",
            lambda: _law_value("exponential", _SMALL, 1.0, 5.0),
            lambda: {
                "the inverse sensitivity mechanism's probability (the rank utility is zero on the whole gap "
                "from 5 up to 8, not only at 5)": _law_value("inverse-sensitivity", _SMALL, 1.0, 5.0),
            },
        ),
        Exercise(
            "unbiased-bound",
            "Same x, epsilon = 1: the course notes' upper bound 1 / sum_y e^{-2 D_f(x, y) epsilon} on "
            "P(M(x) = f(x)) for every unbiased epsilon-DP mechanism.",
            lambda: _bound(1.0),
            lambda: {
                "the ISM's own probability 1 / sum_y e^{-D_f epsilon / 2} (the bound has 2 D_f epsilon in "
                "the exponent)": 1.0 / _weights_sum(_SMALL, 0.5),
            },
        ),
        Exercise(
            "stability-release",
            "x = [4, 6, 6, 6, 6, 6, 11], epsilon = 1, delta = 1e-3: the probability that the stability-based "
            "release returns the exact median (not ⊥).",
            lambda: _law_value("stability", _TIES, 1.0, 6.0, delta=1e-3),
            lambda: {
                "the refusal probability (the complement)": _law_value("stability", _TIES, 1.0, "refused", delta=1e-3),
                "the distance to instability counted as the number of replacements that change the median "
                "(it is that number minus one)": _stability_off_by_one(),
            },
        ),
        Exercise(
            "leak-delta",
            "x = [4, 5, 6, 6, 6, 11, 12] on the integers 0..15: Laplace noise of scale LS(x) / epsilon with "
            "epsilon = 1; the delta at the claimed epsilon against the worst neighbour.",
            lambda: local_sensitivity_leak(_EDGE, "median", 1.0, bounds=_BOUNDS, lattice=1.0).delta_at_claimed,
            lambda: {
                "zero: LS(x) = 0 makes the release the median itself, but a neighbour with LS(x') > 0 spreads "
                "its mass over other values, and that difference is the delta": 0.0,
            },
        ),
    )
}


def _weights_sum(x: list[float], theta: float) -> float:
    """``sum_y e^{-theta D_f(x, y)}`` over the 16 integers (for the slips only)."""
    xs = sorted(x)
    n, m = len(xs), (len(xs) + 1) // 2
    total = 0.0
    for y in range(16):
        below = sum(1 for v in xs if v < y)
        above = sum(1 for v in xs if v > y)
        total += math.exp(-theta * max(below - (m - 1), above - (n - m), 0))
    return total


def _stability_off_by_one() -> float:
    """The pass probability with d = (replacements to change the median) instead of that minus one."""
    delta, eps = 1e-3, 1.0
    xs = sorted(_TIES)
    m = (len(xs) + 1) // 2
    c = xs[m - 1]
    below, equal = sum(1 for v in xs if v < c), sum(1 for v in xs if v == c)
    d = min(m - below, below + equal - m + 1)
    t = delta * math.exp(d * eps)
    return t if t <= 0.5 else 1 - 1 / (4 * t)


def exercise_text(name: str) -> str:
    """The question of exercise ``name``."""
    return _get(name).question


def _get(name: str) -> Exercise:
    if name not in EXERCISES:
        raise ValueError(f"name must be one of {list(EXERCISES)}, got {name!r}")
    return EXERCISES[name]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def check(name: str, answer: float | None) -> CheckResult:
    """Compare ``answer`` with the exact value of exercise ``name``; explain a wrong one without giving the value.

    Returns
    -------
    CheckResult
        Truthy when correct; its message names the slip a wrong answer matches, or says whether it is
        too high or too low.
    """
    ex = _get(name)
    if answer is None:
        return CheckResult(name, False, "no answer yet: put your number in the cell and run it again.", answered=False)
    value = as_real(answer, "answer")
    exact = ex.answer()
    if _close(value, exact):
        return CheckResult(name, True, "correct (within 0.1% of the exact value).")
    for slip, wrong in ex.slips().items():
        if _close(value, wrong) and not _close(wrong, exact):
            return CheckResult(name, False, f"not quite: your number matches {slip}.")
    if not 0.0 <= value <= 1.0:
        return CheckResult(name, False, "a probability is between 0 and 1.")
    side = "too high" if value > exact else "too low"
    factor = max(value, exact) / min(value, exact) if min(value, exact) > 0 else math.inf
    how = "by more than a factor 2" if factor > 2 else "by less than a factor 2"
    return CheckResult(name, False, f"{side}, {how}. Recount the cells and their weights.")
