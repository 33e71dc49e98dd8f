"""Error messages never echo a record.

A refused record is named by its position and its type only: messages end up in curator logs, and
a record there is a leak.  Each surface below is fed a hostile record holding a recognisable secret.
"""

import numpy as np
import pandas as pd
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.spec import SpecError, run_spec

SECRET = "Alice Smith, 1962-04-01, HIV+"


def _hostile_inputs():
    return [
        ([1.0, SECRET, 3.0], "x[1]", "str"),
        ((1.0, 2.0, None), "x[2]", "NoneType"),
        ([1.0, 2.0, 3.0, 4.0 + 1j], "x[3]", "complex"),
        ([True, 2.0], "x[0]", "bool"),
        (np.array([1.0, SECRET], dtype=object), "x[1]", "str"),
        (pd.Series([1.0, 2.0, SECRET]), "x[2]", "str"),
        ([1.0, 2.0, float("nan")], "x[2]", "NaN"),
    ]


@pytest.mark.parametrize(("x", "where", "kind"), _hostile_inputs())
@pytest.mark.parametrize("surface", ["release", "smooth_sensitivity"])
def test_core_names_position_and_type_only(x, where, kind, surface):
    with pytest.raises((TypeError, ValueError)) as err:
        if surface == "release":
            sdp.release(x, "median", 1.0, bounds=(0, 10), rng=1)
        else:
            sdp.smooth_sensitivity(x, "median", 0.1, bounds=(0, 10))
    msg = str(err.value)
    assert msg.startswith(f"{where} must be a number, got {kind}"), msg
    assert SECRET not in msg and "Alice" not in msg


@pytest.mark.parametrize("x", [SECRET, np.array(["Alice", "Bob"]), pd.Series(["Alice", "Bob"])])
def test_string_data_is_not_echoed(x):
    with pytest.raises(TypeError) as err:
        sdp.release(x, "median", 1.0, bounds=(0, 10), rng=1)
    msg = str(err.value)
    assert "Alice" not in msg
    assert "must be an array of numbers" in msg or "must be a number" in msg
    assert "<U" not in msg  # not even the dtype, which tells the longest string's length


def test_histogram_entries_not_echoed():
    with pytest.raises(TypeError) as err:
        sdp.privacy_profile(sdp.SamplingHistogram(eta=0.5), [[3, 4], [5, SECRET]], 1.0)
    msg = str(err.value)
    assert "[1, 1] must be a number, got str" in msg and "Alice" not in msg


@pytest.mark.parametrize(
    ("values", "key", "kind"),
    [
        (f'[1.5, "{SECRET}", 3.0]', "values[1]", "str"),
        ('[1.5, 2.0, "23.75"]', "values[2]", "str"),
        ("[1.5, 2.0, nan]", "values[2]", "NaN"),
        ("[1.5, inf]", "values[1]", "an infinite float"),
        ("[1.5, true]", "values[1]", "bool"),
        ('[1.5, {name = "Alice"}]', "values[1]", "dict"),
        ('[1.5, ["Alice"]]', "values[1]", "list"),
        (f'"{SECRET}"', "values", "str"),
        ('{name = "Alice"}', "values", "dict"),
    ],
)
def test_spec_values_name_position_line_and_type(values, key, kind):
    text = f'compute = "release"\nvalues = {values}\nepsilon = 1\nbounds = [0, 100]\nrng = 1\n'
    with pytest.raises(SpecError) as err:
        run_spec(text)
    msg = str(err.value)
    assert err.value.key == key and err.value.line == 2, msg
    assert msg.startswith(f"{key} (line 2): must be a") and msg.endswith(f"got {kind}"), msg
    assert "Alice" not in msg and "23.75" not in msg


@pytest.mark.parametrize("source", ["data", "csv"])
def test_spec_columns_name_position_and_type(tmp_path, source):
    df = pd.DataFrame({"income": [10.5, 20.5, SECRET, 40.5]})
    if source == "csv":
        df.to_csv(tmp_path / "d.csv", index=False)
        text = 'compute = "release"\ncsv = "d.csv"\ncolumn = "income"\nepsilon = 1\nbounds = [0, 100]\n'
        ns = {}
    else:
        text = 'compute = "release"\ndata = "df"\ncolumn = "income"\nepsilon = 1\nbounds = [0, 100]\n'
        ns = {"df": df}
    with pytest.raises(SpecError) as err:
        run_spec(text, ns, base_dir=tmp_path)
    msg = str(err.value)
    expected = "got text that is not a number" if source == "csv" else "got str"
    assert f"['income'][2] must be a number, {expected}" in msg and "Alice" not in msg, msg


@pytest.mark.parametrize(
    ("histogram", "key", "expected"),
    [
        ('"1234 Alice"', "histogram", "got str"),
        ("{a = 1234}", "histogram", "got dict"),
        ('[[3, 4], [5, "Alice"]]', "histogram", "histogram[1, 1] must be a number, got str"),
    ],
)
def test_spec_histogram_counts_are_not_echoed(histogram, key, expected):
    """A profile's histogram is the database: a refused one is described, not printed."""
    text = f'compute = "profile"\nhistogram = {histogram}\nepsilon = 1\n[mechanism]\neta = 0.5\n'
    with pytest.raises(SpecError) as err:
        run_spec(text)
    msg = str(err.value)
    assert err.value.key == key and expected in msg, msg
    assert "Alice" not in msg and "1234" not in msg
