"""The spec's one key table and what it generates: validators, help, the magic's docstring, the docs page."""

import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import pytest

from smoothdp_nb.spec import KEYS, MECHANISM_KEYS, PRIVATE_KEYS, TABLE, SpecError, keys_help, keys_markdown, parse_spec
from smoothdp_nb.spec.keys import COMPUTATIONS, EXECUTORS, METHODS, QUERIES, keys_of

ROOT = Path(__file__).resolve().parents[2]

BASE = {
    "profile": {"compute": "profile", "histogram": [6, 4], "epsilon": 0.5, "mechanism": {"eta": 0.5}},
    "smoothed": {"compute": "smoothed", "n": 10, "pi": [[0.4, 0.6]], "epsilon": 0.5, "mechanism": {"eta": 0.5}},
    "sweep": {"compute": "sweep", "n": [10, 20], "pi": [[0.4, 0.6]], "epsilon": 0.5, "mechanism": {"eta": 0.5}},
    "release": {"compute": "release", "values": [1.0, 2.0, 3.0], "bounds": [0, 10], "epsilon": 1.0},
    "noise": {"compute": "noise", "epsilon": 1.0, "gamma": 0.1, "families": ["cauchy"]},
}


def _light(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.strip()


def test_key_table_and_its_help_import_neither_numpy_nor_pandas():
    code = (
        "import sys; from smoothdp_nb.spec import keys_help; text = keys_help(registries=False); "
        "print([m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules], 'mechanism' in text)"
    )
    assert _light(code) == "[] True"


def test_keys_and_mechanism_keys_come_from_the_table():
    for compute in COMPUTATIONS:
        assert set(KEYS[compute]) == {k.name for k in TABLE if compute in k.computes and not k.table}
    assert set(MECHANISM_KEYS) == {k.name for k in TABLE if k.table == "mechanism"}
    assert PRIVATE_KEYS == {"release": ("values",)}


def _doc_with(key, value):
    compute = key.computes[0]
    doc = {**BASE[compute], "mechanism": dict(BASE[compute].get("mechanism", {}))}
    if key.table == "mechanism":
        mech = {key.name: value} if key.name in ("eta", "T") else {**doc["mechanism"], key.name: value}
        if key.only_with is not None:
            mech[key.only_with[0]] = key.only_with[1][0]
        doc["mechanism"] = mech
        return doc
    if "mechanism" not in BASE[compute]:
        del doc["mechanism"]
    if key.table == "budget":
        doc["budget"] = {"epsilon": 1.0, key.name: value}
        return doc
    if key.only_with is not None:
        doc[key.only_with[0]] = key.only_with[1][0]
    doc[key.name] = value
    return doc


RANGED = [k for k in TABLE if k.kind in ("number", "integer", "values", "sizes") and k.lo is not None]


@pytest.mark.parametrize("key", RANGED, ids=lambda k: f"{k.computes[0]}-{k.dotted}")
def test_every_range_of_the_table_is_enforced_at_its_key(key):
    """Just outside a row's range is a SpecError at that key; a closed end is accepted."""
    outside = [key.lo if key.lo_open else key.lo - 1]
    if key.hi is not None:
        outside.append(key.hi if key.hi_open else key.hi + 1)
    for bad in outside:
        with pytest.raises(SpecError) as info:
            parse_spec(_doc_with(key, bad))
        assert info.value.key is not None and info.value.key.startswith(key.dotted), (bad, info.value)
    if not key.lo_open and key.name != "n":  # n = lo = 1 would be below the mechanism's sample size
        parse_spec(_doc_with(key, key.lo))


def test_only_with_conditions_come_from_the_table():
    for key in (k for k in TABLE if k.only_with is not None and not k.table):
        other, allowed = key.only_with
        compute = key.computes[0]
        valid = {"method": METHODS, "query": QUERIES, "executor": EXECUTORS}[other]
        wrong = next((v for v in valid if v not in allowed), None)
        doc = {**BASE[compute], key.name: 1}
        if wrong is not None:  # a valid value the key is not used with; else the other key is left out
            doc[other] = wrong
        with pytest.raises(SpecError) as info:
            parse_spec(doc)
        assert info.value.key == key.name and other in str(info.value)


def test_help_lists_every_key_with_its_facts():
    text = keys_help()
    for key in TABLE:
        assert f"  {key.name}{'*' if key.required else ''} " in text
    one = keys_help("noise")
    assert 'compute = "noise"' in one and 'compute = "release"' not in one and "bounds" not in one
    assert "polyplace" in one and "default polyplace, student_t, cauchy, laplace" in one
    assert "Mechanism keys" in keys_help("profile") and "Mechanism keys" not in one
    with pytest.raises(ValueError, match="compute must be"):
        keys_help("smoothd")


def test_noise_vocabulary_is_asked_of_the_registry_at_call_time():
    from smoothdp_nb.core.release import noise
    from smoothdp_nb.core.release.noise.cauchy import CauchyFamily

    class Sixth(CauchyFamily):  # a family registered after the spec package was imported
        name = "sixth"
        label = "sixth family"
        aliases = ("6th",)

    noise.register_family(Sixth())
    try:
        spec = parse_spec({**BASE["noise"], "families": ["6th", "lln", "Generalized-Cauchy"]})
        assert spec.params["families"] == ["sixth", "laplace_log_normal", "cauchy"]
        assert "sixth" in keys_help("noise")
        import smoothdp_nb.spec as spec_pkg

        assert "sixth" in spec_pkg.NOISE_FAMILIES
    finally:
        noise.unregister_family("sixth")
    with pytest.raises(SpecError, match="families"):
        parse_spec({**BASE["noise"], "families": ["6th"]})


def test_magic_docstring_is_rendered_from_the_table():
    import docutils.core

    from smoothdp_nb.magics import SmoothDPMagics
    from smoothdp_nb.spec import keys_rst

    doc = SmoothDPMagics.smoothdp.__doc__
    assert keys_rst() in doc
    for compute in COMPUTATIONS:
        assert f'``compute = "{compute}"``' in doc
        for key in keys_of(compute):
            assert f"``{key.name}``" in doc
    warnings = io.StringIO()
    docutils.core.publish_doctree(keys_rst(), settings_overrides={"warning_stream": warnings, "report_level": 1})
    assert warnings.getvalue() == ""


def test_docs_page_of_spec_keys_is_generated_from_the_table(tmp_path):
    spec = importlib.util.spec_from_file_location("smoothdp_docs", ROOT / "docs" / "_ext" / "smoothdp_docs.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    page = tmp_path / "spec.md"
    ext.write_spec_page(page)
    text = page.read_text()
    assert text == keys_markdown()
    for key in TABLE:
        assert f"| `{key.name}`" in text
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert 'write_spec_page(DOCS / "spec.md")' in conf
    assert "\nspec\n" in (ROOT / "docs" / "index.md").read_text()
