"""python -m smoothdp_nb run: HTML and JSON reports, errors."""

import json
from pathlib import Path

import pytest

from smoothdp_nb.cli import main_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SPEC = """title = "tiny profile"
compute = "profile"
histogram = [[60, 40], [80, 20]]
labels = ["a", "b"]
epsilon = [0.25, 0.5, 1.0]

[mechanism]
eta = 0.5
"""


def test_html_and_json_report(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out, js = tmp_path / "report.html", tmp_path / "out.json"
    assert main_run([str(spec), "--out", str(out), "--json", str(js), "--quiet"]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "<script" not in page.lower() and "http://" not in page.split("<svg", 1)[0]
    assert "tiny profile" in page and "histogram = [[60, 40], [80, 20]]" in page
    doc = json.loads(js.read_text())
    assert doc["compute"] == "profile" and doc["result"]["labels"] == ["a", "b"]
    assert len(doc["result"]["log10_delta"]) == 2


def test_text_output(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('compute = "noise"\nepsilon = 1\ngamma = 0.1\nfamilies = ["polyplace"]\n')
    assert main_run([str(spec)]) == 0
    assert "polyplace" in capsys.readouterr().out


def test_bad_spec_exit_2_names_key(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text('compute = "noise"\nepsilon = 1\ngamma = 0.1\nfamilys = ["cauchy"]\n')
    assert main_run([str(spec), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "familys" in err and "line 4" in err and "did you mean 'families'" in err
    assert not (tmp_path / "r.html").exists()


def test_missing_file_exit_2(tmp_path, capsys):
    assert main_run([str(tmp_path / "nope.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["release_median.toml", "monte_carlo.toml"])
def test_examples_run(tmp_path, name):
    js = tmp_path / "o.json"
    assert main_run([str(EXAMPLES / name), "--json", str(js), "--quiet"]) == 0
    assert json.loads(js.read_text())["result"]


def test_examples_all_validate():
    from smoothdp_nb.spec import parse_spec

    files = sorted(EXAMPLES.glob("*.toml"))
    assert len(files) >= 5
    for f in files:
        parse_spec(f.read_text())


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["report", "--help"], ["tutorials", "--help"]])
def test_help_is_plain_text(argv, capsys):
    from smoothdp_nb.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "usage:" in text
    for markup in ("``", ":func:", ":class:", ":mod:", ":meth:"):
        assert markup not in text, (argv, markup)
