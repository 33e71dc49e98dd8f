"""Hypothesis fuzz of the spec layer (``parse_spec``/``run_spec``, the TOML text, the magic's line form).

Invalid specs must raise :class:`SpecError` only (a ValueError naming a key and a
line inside the text); specs that validate must run without any other exception.
``SMOOTHDP_FUZZ_EXAMPLES`` sets the examples per target (default 300 with CI=1, 100 locally).
"""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from smoothdp_nb.spec import KEYS, MECHANISM_KEYS, SpecError, parse_spec, run_spec

EXAMPLES = int(os.environ.get("SMOOTHDP_FUZZ_EXAMPLES", "300" if os.environ.get("CI") else "100"))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)

ALL_KEYS = sorted({k for keys in KEYS.values() for k in keys})
# TOML-representable values, hostile and plausible
toml_scalars = st.one_of(
    st.booleans(),
    st.integers(-3, 60),
    st.sampled_from([0, 10**7, 10**12, 2**62]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(0.0, 1.0),
    st.sampled_from(
        [
            "profile",
            "smoothed",
            "sweep",
            "release",
            "noise",
            "exact",
            "monte-carlo",
            "median",
            "cauchy",
            "laplace",
            "us-elections",
            "us-2020-districts",
            "0.5",
            "0.5_0",
            "\u0660.\u0665",
            " 0.5 ",
            "np",
            "df",
            "",
            "threads",
            "processes",
        ]
    ),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["start", "stop", "num", "log", "eta", "T", "kind", "replace", "noise_epsilon"]),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=6,
)
docs = st.dictionaries(st.sampled_from(ALL_KEYS + ["epsilom", "mechanism"]), toml_values, max_size=7)
mechanism_tables = st.dictionaries(st.sampled_from(list(MECHANISM_KEYS)), toml_scalars, min_size=1, max_size=3)
NAMESPACE = {"df": __import__("pandas").DataFrame({"x": np.linspace(0, 1, 9)}), "np": np}


def _run(doc_or_text):
    """parse, then run; only SpecError may escape."""
    try:
        spec = parse_spec(doc_or_text)
    except SpecError as err:
        return err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run_spec(spec, NAMESPACE, progress=False)
        except SpecError as err:
            return err
    return None


def _toml(value) -> str:
    """A minimal TOML writer for the generated values (inline arrays and tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value == math.inf else "-inf" if value == -math.inf else repr(value))
        )
    if isinstance(value, str):
        return json.dumps(value)  # a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"


@FUZZ
@given(doc=docs, mech=st.one_of(st.none(), mechanism_tables))
def test_spec_dicts_raise_spec_errors_only(doc, mech):
    if mech is not None:
        doc = dict(doc, mechanism=mech)
    err = _run(doc)
    assert err is None or isinstance(err, SpecError)


@FUZZ
@given(doc=docs)
def test_spec_text_errors_name_a_line_of_the_text(doc):
    text = "\n".join(f"{k} = {_toml(v)}" for k, v in doc.items())
    err = _run(text)
    if err is not None and err.line is not None:
        assert 1 <= err.line <= max(1, len(text.splitlines()))


# ---------------------------------------------------------------- valid specs run, with the invariants

valid_eps = st.lists(st.floats(0.0, 5.0), min_size=1, max_size=3)
valid_mech = st.one_of(
    st.builds(lambda e: {"eta": e}, st.floats(0.05, 1.0)),
    st.builds(lambda t: {"T": t}, st.integers(1, 3)),
    st.sampled_from([{"eta": "0.998"}, {"eta": "0.5"}, {"T": 2, "noise_epsilon": 1.0}]),
)


@FUZZ
@given(
    mech=valid_mech,
    eps=valid_eps,
    hists=st.lists(st.tuples(st.integers(0, 30), st.integers(3, 30)), min_size=1, max_size=3),
)
def test_valid_profile_specs_run(mech, eps, hists):
    r = run_spec({"compute": "profile", "mechanism": mech, "epsilon": eps, "histogram": [list(h) for h in hists]})
    d = np.exp(np.asarray(r.log_delta))
    assert np.all((d >= 0) & (d <= 1))


@FUZZ
@given(
    mech=valid_mech.filter(lambda m: "noise_epsilon" not in m),
    eps=valid_eps,
    n=st.integers(3, 30),
    p=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=3),
    mc=st.booleans(),
)
def test_valid_smoothed_specs_run(mech, eps, n, p, mc):
    doc = {"compute": "smoothed", "mechanism": mech, "epsilon": eps, "n": n, "pi": [[q, 1.0 - q] for q in p]}
    if mc:
        doc.update(method="monte-carlo", trials=50, candidates=2, rng=1)
    r = run_spec(doc)
    d = np.atleast_1d(r.delta)
    assert np.all((d >= 0) & (d <= r.dp_delta * (1 + 1e-12)))


@FUZZ
@given(
    eps=st.floats(0.05, 5.0),
    values=st.lists(st.floats(0, 10), min_size=1, max_size=8),
    noise=st.sampled_from(["polyplace", "cauchy", "student_t", "laplace_log_normal"]),
    rng=st.integers(0, 99),
)
def test_valid_release_specs_run(eps, values, noise, rng):
    r = run_spec(
        {"compute": "release", "values": values, "epsilon": eps, "bounds": [0, 10], "noise": noise, "rng": rng}
    )
    assert math.isfinite(r.release.value if hasattr(r, "release") else r.to_dict()["value"])


# ---------------------------------------------------------------- the magic's line form


@pytest.fixture(scope="module")
def ip(ipython_shell):
    shell = ipython_shell
    shell.run_line_magic("load_ext", "smoothdp_nb.magics")
    return shell


line_texts = st.lists(
    st.one_of(
        st.sampled_from(
            [
                'compute = "noise"',
                "epsilon = 1",
                "gamma = 0.1",
                "delta = 1e-5",
                'families = ["cauchy"]',
                'title = "a\\"; b"',
                "gamma = [0.1,",
                "{compute = 'noise'",
                "epsilon = '1'",
                "-o",
                "--bogus",
                ";",
            ]
        ),
        st.text(max_size=8),
    ),
    max_size=6,
).map("; ".join)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(line=line_texts)
def test_line_magic_raises_usage_errors_only(ip, line):
    from IPython.core.error import UsageError

    try:
        ip.run_line_magic("smoothdp", "--no-chart " + line)
    except UsageError as err:  # any other exception fails the test
        assert str(err).strip(), "a UsageError without a message"
