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


# ---------------------------------------------------------------- the cli package: one parser, fast --help

_HEAVY = ("numpy", "scipy", "pandas", "altair", "ipywidgets", "IPython", "vl_convert", "pygments")
_PROBE = """
import contextlib, io, json, sys
from smoothdp_nb.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main(sys.argv[1:] + ["--help"])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "help": out.getvalue(), "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("command", ["", "report", "run", "tutorials", "gallery", "docs"])
def test_help_of_every_subcommand_loads_no_heavy_module(command):
    """`--help` is answered before numpy, pandas, Altair (or pygments, the page writer's) is imported:
    checked on sys.modules of a fresh interpreter, not by timing."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    argv = [command] if command else []
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    seen = json.loads(proc.stdout)
    assert seen["code"] == 0 and seen["help"].startswith("usage: python -m smoothdp_nb")
    loaded = {m.split(".", 1)[0] for m in seen["modules"]}
    assert not loaded & set(_HEAVY), sorted(loaded & set(_HEAVY))


def test_no_subcommand_is_the_report_with_its_defaults(monkeypatch, capsys):
    from smoothdp_nb.cli import main, report

    calls = []
    monkeypatch.setattr(report, "election_report", lambda lost, t: calls.append((lost, t)) or f"{lost}")
    assert main([]) == 0
    assert calls == [(0.002, 0.51), (0.0001, 0.51)]
    assert main(["report", "--lost", "0.01", "--threshold", "0.6"]) == 0
    assert calls[-1] == (0.01, 0.6)
    with pytest.raises(SystemExit) as info:
        main(["report", "--lost", "1.5"])
    assert info.value.code == 2 and "--lost must be a fraction in (0, 1), got 1.5" in capsys.readouterr().err


def test_run_help_ends_with_the_epilog_hook(monkeypatch, capsys):
    """`run --help` carries whatever cli.run.run_epilog returns (the spec's key table joins there)."""
    from smoothdp_nb.cli import main, run

    monkeypatch.setattr(run, "_EXIT_STATUS", "KEY-TABLE-MARKER exit status")
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert capsys.readouterr().out.rstrip().endswith("KEY-TABLE-MARKER exit status")


def test_docs_without_the_extra_names_it(monkeypatch, tmp_path, capsys):
    from smoothdp_nb.cli import docs, main

    monkeypatch.setattr(docs, "has_module", lambda name: name != "sphinx")
    assert main(["docs", "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert '"docs" extra' in err and 'pip install "smoothdp_nb[docs]"' in err and "sphinx" in err
    assert not (tmp_path / "site").exists()


def test_docs_prints_where_the_built_site_is(tmp_path, capsys):
    from smoothdp_nb.cli import main

    source = tmp_path / "docs"
    (source / "_build" / "html").mkdir(parents=True)
    assert main(["docs", "--source", str(source)]) == 1  # not built yet
    assert "not built yet" in capsys.readouterr().err
    (source / "_build" / "html" / "index.html").write_text("<!DOCTYPE html>")
    assert main(["docs", "--source", str(source)]) == 0
    assert capsys.readouterr().out.strip() == str(source.resolve() / "_build" / "html" / "index.html")
    assert main(["docs", "--source", str(source), "--out", str(tmp_path / "site")]) == 2  # no conf.py there
    assert "no documentation sources" in capsys.readouterr().err


def test_every_page_comes_from_the_one_writer(tmp_path):
    """The run report and the gallery index are written by reports.page.document: its policy
    (no script, no request) and its style sheet, no second copy of either."""
    from smoothdp_nb.reports import gallery, page

    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "report.html"
    assert main_run([str(spec), "--out", str(out), "--quiet"]) == 0
    report = out.read_text()
    assert f'content="{page.CSP}"' in report and "--accent:" in report  # report.css, inlined
    index = gallery.index_page([{"name": "a_chart", "caption": "A <b> chart", "seconds": 1.0}])
    assert f'content="{page.CSP_LOCAL_IMAGES}"' in index and "--accent:" in index
    assert "script-src" not in page.CSP_LOCAL_IMAGES and "default-src 'none'" in page.CSP_LOCAL_IMAGES
    assert 'src="a_chart.png"' in index and "A &lt;b&gt; chart" in index


def test_docs_builds_a_site_with_sphinx(tmp_path, capsys):
    """`docs --out DIR --source SRC` runs Sphinx (a two-file site here, not the package's docs)."""
    pytest.importorskip("sphinx")
    from smoothdp_nb.cli import docs, main

    if not all(docs.has_module(m) for m in docs.DOCS_EXTRA):
        pytest.skip("the docs extra is not installed")
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('project = "tiny"\n')
    (source / "index.rst").write_text("Tiny\n====\n\nA page built by the docs subcommand.\n")
    site = tmp_path / "site"
    assert main(["docs", "--source", str(source), "--out", str(site), "--strict"]) == 0
    assert capsys.readouterr().out.strip() == str(site.resolve() / "index.html")
    assert "A page built by the docs subcommand." in (site / "index.html").read_text(encoding="utf-8")
    (source / "index.rst").write_text("Tiny\n==\n\n.. no-such-directive::\n")  # a warning: an error with --strict
    assert main(["docs", "--source", str(source), "--out", str(tmp_path / "site2"), "--strict"]) == 1
    assert "sphinx-build failed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv0", "usage"), [("/venv/bin/smoothdp", "usage: smoothdp "), ("-m", "usage: python -m smoothdp_nb ")]
)
def test_usage_names_the_command_the_user_typed(argv0, usage, monkeypatch, capsys):
    """The installed ``smoothdp`` script says ``usage: smoothdp``; ``python -m smoothdp_nb`` says that,
    for the top-level parser and for each subcommand's."""
    import sys

    from smoothdp_nb.cli import main

    monkeypatch.setattr(sys, "argv", [argv0])
    for argv in (["--help"], ["run", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert capsys.readouterr().out.startswith(usage + ("run " if argv[0] == "run" else "")), argv
