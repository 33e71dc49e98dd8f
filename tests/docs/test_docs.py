"""The documentation's generators (docs/_ext/smoothdp_docs.py): fast checks without a Sphinx build.

The build itself (``python -m sphinx -W --keep-going -b html docs docs/_build/html``)
runs in .ci/run; these tests pin what the generated pages must contain.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

pytest.importorskip("sphinx")  # the `docs` extra; .ci/run installs it

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ext():
    spec = importlib.util.spec_from_file_location("smoothdp_docs", ROOT / "docs" / "_ext" / "smoothdp_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_page_lists_every_public_name_once(ext, tmp_path):
    import smoothdp_nb

    page = tmp_path / "reference.rst"
    ext.write_api_page(page)
    text = page.read_text()
    entries = re.findall(r"^   (smoothdp_nb\.[\w.]+)$", text, flags=re.M)
    objects = {n: getattr(smoothdp_nb, n) for n in smoothdp_nb.__all__}
    modules = [o.__name__ for o in objects.values() if inspect.ismodule(o)]  # listed by their real name
    names = [f"smoothdp_nb.{n}" for n, o in objects.items() if not inspect.ismodule(o)]
    assert sorted(entries) == sorted(names + modules)
    assert len(entries) == len(set(entries))


def test_copy_notebooks_mirrors_the_tutorials(ext, tmp_path):
    src, dest = tmp_path / "nb", tmp_path / "docs"
    src.mkdir()
    (src / "01_a.ipynb").write_text("{}")
    (src / "notes.ipynb").write_text("{}")  # not a tutorial: NN_ prefix only
    dest.mkdir()
    (dest / "09_stale.ipynb").write_text("{}")
    ext.copy_notebooks(src, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["01_a.ipynb"]
    (src / "01_a.ipynb").write_text('{"changed": 1}')
    ext.copy_notebooks(src, dest)
    assert (dest / "01_a.ipynb").read_text() == '{"changed": 1}'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("m : int >= 2, number of categories |X|", r"m : int >= 2, number of categories \|X\|"),
        ("``Pr[X_j | a, x]`` and |y|", r"``Pr[X_j | a, x]`` and \|y\|"),  # literals untouched
        ("see |ref|_ for more", "see |ref|_ for more"),  # a reference stays a reference
        ("| a line block", "| a line block"),
    ],
)
def test_escape_bars(ext, line, expected):
    lines = [line]
    ext.escape_bars(None, "function", "f", None, None, lines)
    assert lines == [expected]


def test_magic_reference_is_the_docstring_that_the_question_mark_shows():
    # the directive renders SmoothDPMagics.smoothdp.__doc__; %%smoothdp? prints the same attribute
    from smoothdp_nb.magics import SmoothDPMagics

    doc = SmoothDPMagics.smoothdp.__doc__
    assert doc and "--output" in doc and "compute" in doc


def _magic_cells(text: str) -> list[str]:
    """The TOML bodies of the fenced ``%%smoothdp`` cells of a Markdown text."""
    bodies = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.M | re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("%%smoothdp"):
            bodies.append(rest)
    return bodies


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md"])
def test_magic_cells_in_the_docs_are_valid_specs(page):
    from smoothdp_nb.spec import parse_spec

    bodies = _magic_cells((ROOT / page).read_text())
    assert bodies, f"{page} shows no %%smoothdp cell"
    for body in bodies:
        parse_spec(body)


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("https://github.com/someone/smoothdp_nb.git", "someone/smoothdp_nb"),
        ("git@github.com:a-fork/smooth.dp.git", "a-fork/smooth.dp"),
        ("https://github.com/someone/smoothdp_nb", "someone/smoothdp_nb"),
        ("https://gitlab.com/someone/smoothdp_nb.git", None),  # Binder's gh/ provider: GitHub only
        (None, None),  # no origin remote
    ],
)
def test_repository_slug_comes_from_the_origin_remote(ext, tmp_path, monkeypatch, remote, expected):
    import subprocess

    monkeypatch.delenv("SMOOTHDP_REPOSITORY", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", remote], check=True)
    assert ext.repository_slug(tmp_path) == expected
    monkeypatch.setenv("SMOOTHDP_REPOSITORY", "owner/name")  # an explicit setting wins
    assert ext.repository_slug(tmp_path) == "owner/name"
    monkeypatch.setenv("SMOOTHDP_REPOSITORY", "not a slug")
    assert ext.repository_slug(tmp_path) is None


def test_binder_url_opens_the_notebook_in_jupyterlab(ext):
    # mybinder.org's documented form: /v2/gh/<owner>/<repo>/<ref>?labpath=<path, URL-encoded>
    assert (
        ext.binder_url("o/r", "notebooks/01_quickstart.ipynb")
        == "https://mybinder.org/v2/gh/o/r/HEAD?labpath=notebooks%2F01_quickstart.ipynb"
    )


def test_widget_repr_becomes_the_panel_screenshot(ext):
    from docutils import nodes

    def cell(source: str, output: str) -> nodes.container:
        box = nodes.container(classes=["cell"])
        code = nodes.container(classes=["cell_input"])
        code += nodes.literal_block(source, source)
        out = nodes.container(classes=["cell_output"])
        out += nodes.literal_block(output, output)
        box += [code, out]
        return box

    doc = nodes.document(None, None)
    doc += cell("panel = sdp.panels.release(s, bounds=(0, 1))\npanel", "VBox(children=(HTML(value='x'),))")
    doc += cell("w = make()\nw", "HBox(children=())")
    doc += cell("print(1)", "1")
    ext.replace_widget_reprs(None, doc, "tutorials/06_x")
    raws = [r.astext() for r in doc.findall(nodes.raw)]
    assert len(raws) == 1 and 'src="../_static/panels/release.png"' in raws[0] and 'alt="Screenshot of' in raws[0]
    assert len(list(doc.findall(nodes.note))) == 2  # the unknown widget gets the plain note
    assert [b.astext() for b in doc.findall(nodes.literal_block)][-1] == "1"
    for name in ext.PANEL_SHOTS:
        assert (ROOT / "docs" / "_static" / "panels" / f"{name}.png").exists()


def test_binder_link_comes_from_the_public_repository_url_when_origin_is_elsewhere(ext, tmp_path, monkeypatch):
    """A checkout whose origin is a local path or a mirror still links its tutorials to Binder, from
    the repository URL of pyproject.toml ([project.urls])."""
    import subprocess

    monkeypatch.delenv("SMOOTHDP_REPOSITORY", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "/srv/git/smoothdp_nb.git"], check=True)
    assert ext.repository_slug(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.urls]\nRepository = "https://github.com/someone/smoothdp_nb"\n'
    )
    assert ext.repository_slug(tmp_path) == "someone/smoothdp_nb"
    monkeypatch.setenv("SMOOTHDP_REPOSITORY", "https://github.com/fork/smoothdp_nb.git")  # a URL works too
    assert ext.repository_slug(tmp_path) == "fork/smoothdp_nb"
