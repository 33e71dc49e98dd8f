"""The release's smallest gamma: 2**-29 is accepted; below it the error names the user's gamma
and the allowed range (not the internal, rescaled value)."""

import pytest

import smoothdp_nb as sdp


@pytest.mark.parametrize("gamma", [2.0**-30, 1e-12, 2.0**-29 * 0.999])
def test_too_small_gamma_names_the_users_gamma_and_range(gamma):
    with pytest.raises(ValueError) as err:
        sdp.release([1.0, 2.0, 3.0], "median", 1.0, gamma=gamma, bounds=(0, 10), rng=1)
    msg = str(err.value)
    assert msg.startswith("gamma must be >= 2**-29") and repr(gamma) in msg, msg
    assert "-" + "3." not in msg.split("got", 1)[1]  # not the internal, negative gamma_s


def test_smallest_gamma_is_accepted():
    r = sdp.release([1.0, 2.0, 3.0], "median", 1.0, gamma=2.0**-29, noise="cauchy", bounds=(0, 10), rng=1)
    assert r.gamma == 2.0**-29
