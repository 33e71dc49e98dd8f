"""The guards that replaced None arithmetic and untyped conversions when the package became
mypy-clean: each refuses with a message naming the parameter, and the typed
conversions give the same values as before."""

from fractions import Fraction

import numpy as np
import pytest
from IPython.core.error import UsageError

from smoothdp_nb.core.numerics.validation import as_int, as_rng, as_seed_sequence
from smoothdp_nb.core.release import lattice, noise
from smoothdp_nb.core.smoothed.mechanisms import SamplingHistogram
from smoothdp_nb.magics import SmoothDPMagics


@pytest.mark.parametrize("family", ["polyplace", "student_t", "cauchy", "laplace_log_normal"])
def test_lattice_sampler_names_a_missing_shape(family):
    with pytest.raises(ValueError, match=f"shape is required for family '{family}'"):
        lattice.sample_cell(family, None, 0.0, 1.0, 0.5, -8, 8, np.random.default_rng(0))


def test_cell_probability_names_a_missing_shape():
    with pytest.raises(ValueError, match="shape is required for family 'cauchy'"):
        lattice.cell_probability("cauchy", None, 0.0, 1.0, 0.5, 0, -8, 8)


def test_laplace_calibration_without_delta_names_delta():
    # calibrate() validates once, before the cached calibration, and names the missing delta
    with pytest.raises(ValueError, match="delta is required for family 'laplace'"):
        noise.get_family("laplace").calibrate(1.0, 0.1)
    with pytest.raises(ValueError, match="delta is required for family 'laplace'"):
        noise.calibrate("laplace", 1.0, 0.1)
    assert noise.laplace.log_two_over_delta(0.5) == pytest.approx(np.log(4.0), rel=1e-15)


def test_fixed_size_mechanism_has_no_rate():
    mech = SamplingHistogram(T=5)
    assert repr(mech) == "SamplingHistogram(T=5)"
    assert mech.sample_size(9) == 5
    with pytest.raises(ValueError, match="fixed sample size T, not a rate eta"):
        mech._rate_fraction()
    # a rate gives the exact ceiling: 998/1000 * 1001 = 998.998 -> 999
    assert SamplingHistogram(eta="0.998").sample_size(1001) == 999


def test_magic_without_a_shell_is_a_usage_error():
    with pytest.raises(UsageError, match="runs inside IPython"):
        SmoothDPMagics(shell=None).smoothdp('compute = "noise"; epsilon = 1; gamma = 0.1')


def test_integer_conversions():
    assert as_int(Fraction(6, 2), "n") == 3  # a non-Integral real holding an integer
    assert as_int(np.float64(7.0), "n") == 7
    big = 2**60 + 1  # an exact int above 2**53 stays exact
    assert as_int(big, "n") == big
    with pytest.raises(ValueError, match="n must be an integer"):
        as_int(Fraction(1, 3), "n")


def test_numpy_integer_seeds_give_the_int_streams():
    assert as_rng(np.int64(5)).integers(0, 2**62) == np.random.default_rng(5).integers(0, 2**62)
    assert as_seed_sequence(np.uint8(3)).entropy == 3
    with pytest.raises(ValueError, match="negative seed"):
        as_rng(np.int32(-1))
