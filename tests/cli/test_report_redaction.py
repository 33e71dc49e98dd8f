"""Reports never print the private data of a spec.

The HTML and JSON reports of ``python -m smoothdp_nb run`` show the spec rendered from the parsed,
redacted dict (:attr:`Spec.text`), never from the spec's own text.  Each source below hides the
array of private values behind TOML syntax that a text-level redaction gets wrong: comments holding
brackets, strings and multi-line titles holding ``values = [``, quoted keys, inline tables, arrays
of tables.  The values carry seven-digit fingerprints; none of them may appear in a report.
"""

import json
import tomllib

import pytest
from hypothesis import given, settings, strategies as st

from smoothdp_nb.cli import main_run
from smoothdp_nb.spec import parse_spec, to_toml

VALUES = [11.4173921, 22.5821734, 33.6917452, 44.8263519, 55.9382647]
FINGERPRINTS = ["4173921", "5821734", "6917452", "8263519", "9382647"]
ARRAY = ", ".join(map(repr, VALUES))
TAIL = "epsilon = 1.0\nbounds = [0, 100]\nrng = 3\n"

SOURCES = {
    # a comment holding "]" inside the array: bracket counting stopped there and printed the rest
    "comment-bracket": f'compute = "release"\nvalues = [ {VALUES[0]}, {VALUES[1]}, # ] <- a bracket\n'
    f"  {VALUES[2]}, {VALUES[3]}, {VALUES[4]} ]\n{TAIL}",
    # a multi-line title that holds "values = [" before the real array
    "multiline-title": f'title = """A study\nvalues = [ is not the data\n"""\ncompute = "release"\n'
    f"values = [{ARRAY}]\n{TAIL}",
    "literal-multiline-title": f"title = '''\nvalues = []\n'''\ncompute = \"release\"\nvalues = [{ARRAY}]\n{TAIL}",
    "string-title": f'title = "values = [ 1 ]"\ncompute = "release"\nvalues = [{ARRAY}]\n{TAIL}',
    "quoted-key": f'compute = "release"\n"values" = [{ARRAY}]\n{TAIL}',
    "literal-quoted-key": f"compute = \"release\"\n'values' = [{ARRAY}]\n{TAIL}",
    "array-over-lines-with-comments": 'compute = "release"\nvalues = [\n'
    + "".join(f"  {v},  # record {i} ]]\n" for i, v in enumerate(VALUES))
    + f"]\n{TAIL}",
    "comment-holding-values": f'# values = [1, 2]\ncompute = "release"\nvalues = [{ARRAY}]  # ] [\n{TAIL}',
    "values-last": f'compute = "release"\n{TAIL}values = [{ARRAY}]\n',
    "one-line-with-semicolon-free-inline": f'compute = "release"\nvalues = [{ARRAY}]\n'
    f'title = "inline {{values = [9]}}"\n{TAIL}',
}


def _run(tmp_path, source):
    spec = tmp_path / "spec.toml"
    spec.write_text(source, encoding="utf-8")
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    status = main_run([str(spec), "--out", str(out), "--json", str(js), "--quiet"])
    return status, out, js


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_reports_hold_no_private_value(tmp_path, name):
    assert tomllib.loads(SOURCES[name])["values"] == VALUES  # the source really holds the data
    status, out, js = _run(tmp_path, SOURCES[name])
    assert status == 0
    for report in (out.read_text(encoding="utf-8"), js.read_text(encoding="utf-8")):
        leaked = [f for f in FINGERPRINTS if f in report]
        assert not leaked, f"{name}: {len(leaked)} of 5 values printed"
        assert "&lt;5 private values, not shown&gt;" in report or "<5 private values, not shown>" in report
    doc = json.loads(js.read_text(encoding="utf-8"))
    assert doc["spec"]["values"] == "<5 private values, not shown>"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_spec_section_is_the_parsed_spec_rewritten(name):
    """``Spec.text`` is TOML for exactly the redacted dict: parsing it gives ``raw`` back."""
    spec = parse_spec(SOURCES[name])
    assert tomllib.loads(spec.text) == spec.raw
    expected = {**tomllib.loads(SOURCES[name]), "values": "<5 private values, not shown>"}
    assert spec.raw == expected
    assert "#" not in spec.text.replace('"', "")  # comments of the source are not carried over


@pytest.mark.parametrize(
    "source",
    [
        # arrays of tables and inline tables where the data should be: refused, and the refusal
        # names the position and the type, not the record
        f'compute = "release"\n{TAIL}[[values]]\nx = {VALUES[0]}\n[[values]]\nx = {VALUES[1]}\n',
        f'compute = "release"\nvalues = [{VALUES[0]}, {{x = {VALUES[1]}}}, {VALUES[2]}]\n{TAIL}',
        f'compute = "release"\nvalues = [{VALUES[0]}, "{VALUES[1]}", {VALUES[2]}]\n{TAIL}',
        f'compute = "release"\nvalues = [{VALUES[0]}, [{VALUES[1]}], {VALUES[2]}]\n{TAIL}',
        f'compute = "release"\nvalues = {{a = {VALUES[0]}}}\n{TAIL}',
        f'compute = "release"\nvalues = "{ARRAY}"\n{TAIL}',
    ],
)
def test_refused_data_is_not_echoed(tmp_path, capsys, source):
    status, out, js = _run(tmp_path, source)
    err = capsys.readouterr().err
    assert status == 2 and not out.exists() and not js.exists()
    assert "values" in err
    assert not [f for f in FINGERPRINTS if f in err], err


def test_tables_and_inline_tables_round_trip():
    """Public specs with tables, inline tables and range tables keep every value in the report."""
    source = (
        'title = "a \\"quoted\\" title with a ] and a #"\ncompute = "sweep"\n'
        "n = {start = 100, stop = 1000, num = 3, log = true}\n"
        'pi = [[0.25, 0.75], [0.5, 0.5]]\nepsilon = [0.5, 1.0]\nmethod = "exact"\n'
        '[mechanism]\neta = "0.998"\n'
    )
    spec = parse_spec(source)
    assert tomllib.loads(spec.text) == tomllib.loads(source) == spec.raw
    assert "[mechanism]" in spec.text


_keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)
_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6))
def test_to_toml_round_trips_any_parsed_document(doc):
    """Any document tomllib can produce comes back unchanged (strings with quotes, newlines, control
    characters and brackets; quoted keys; nested tables and arrays of tables)."""
    assert tomllib.loads(to_toml(doc)) == doc


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60))
def test_any_title_keeps_the_values_out(title):
    source = f'title = {json.dumps(title)}\ncompute = "release"\nvalues = [{ARRAY}]\n{TAIL}'
    try:
        doc = tomllib.loads(source)
    except tomllib.TOMLDecodeError:
        return  # JSON escapes TOML does not know (none expected for these characters)
    spec = parse_spec(source)
    assert doc["title"] == title == tomllib.loads(spec.text)["title"]
    assert not [f for f in FINGERPRINTS if f in spec.text and f not in title]
