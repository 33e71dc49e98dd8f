"""Edges of a release's inputs: bounds too narrow for any lattice, infinite records, the line of a mis-shaped key."""

from __future__ import annotations

import math

import pytest

import smoothdp_nb as sdp
from smoothdp_nb.core.release import lattice as L
from smoothdp_nb.spec import SpecError, run_spec

HEAD = 'compute = "release"\nepsilon = 1.0\nbounds = [0, 100000]\n# a comment line\n'


@pytest.mark.parametrize("lattice", [None, 2.0**-1073, 2.0**-1022])
def test_bounds_narrower_than_every_lattice_are_refused_alike(lattice: float | None) -> None:
    """(-5e-324, 5e-324) has width 2^-1073 < 2^-1022: no lattice, default or explicit, is allowed."""
    with pytest.raises(ValueError, match="too narrow"):
        sdp.release([0.0], bounds=(-5e-324, 5e-324), lattice=lattice)


def test_the_narrowest_allowed_bounds_still_release() -> None:
    b = (0.0, 2.0**-1022)
    assert L.lattice_range(b) == (2.0**-1022, 2.0**-1022)
    r = sdp.release([0.0], bounds=b, rng=1)
    assert r.value in (0.0, 2.0**-1022)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_infinite_record_is_an_error_naming_its_position(sign: float) -> None:
    with pytest.raises(ValueError) as err:
        sdp.release([1.0, 2.0, sign * math.inf], bounds=(0, 10), rng=1)
    msg = str(err.value)
    assert msg.startswith("x[2] must be finite") and "clip_infinite=True" in msg
    assert "-inf" not in msg and "inf," not in msg  # not even the side it lies on


def test_clip_infinite_clips_to_the_bound() -> None:
    a = sdp.release([1.0, 2.0, math.inf], "median", bounds=(0, 10), rng=4, clip_infinite=True, reveal_true=True)
    b = sdp.release([1.0, 2.0, 10.0], "median", bounds=(0, 10), rng=4, reveal_true=True)
    assert (a.value, a.true_value) == (b.value, b.true_value)


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("values = {a = 1.5}\n", "values"),
        ("values.a = 1.5\nvalues.b = 2.5\n", "values"),
        ("[values]\na = 1.5\n", "values"),
        ("[[values]]\na = 1.5\n", "values[0]"),
    ],
)
def test_values_of_the_wrong_shape_are_reported_at_their_own_line(body: str, key: str) -> None:
    with pytest.raises(SpecError) as err:
        run_spec(HEAD + body, {})
    assert err.value.key == key
    assert err.value.line == 5, str(err.value)
