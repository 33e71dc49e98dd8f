"""The tutorials' HTML reports (smoothdp_nb.reports), from synthetic notebooks: no kernel.

Expected HTML is written from what the Markdown/MathML/HTML standards say the
input means (a pipe table is a <table> with <th> cells, $\\delta$ is an <mi>
holding U+03B4, ...), not copied from the renderer's output.
"""

from __future__ import annotations

import base64
import html as h
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("markdown_it")
pytest.importorskip("mdit_py_plugins")
pytest.importorskip("latex2mathml")

from smoothdp_nb.reports import (
    Entry,
    RunInfo,
    headline_html,
    index_page,
    markdown_to_html,
    notebook_page,
    notebook_summary,
    notebook_title,
    render_output,
    tex_to_html,
)
from smoothdp_nb.reports.markdown import _MATHML_ELEMENTS
from smoothdp_nb.reports.outputs import LIVE_PANEL_NOTE, WIDGET_MIME, clean_stream

V4 = nbformat.v4
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
TQDM_TEXT = "settings x n:   0%|          | 0/15 [00:00<?, ?it/s]"


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of an HTML fragment."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def names(self) -> list[str]:
        return [t for t, _ in self.tags]


def img_payloads(fragment: str) -> list[tuple[str, bytes]]:
    """(MIME type, decoded bytes) of every data: <img> in ``fragment``."""
    found = []
    for tag, attrs in Tags(fragment).tags:
        if tag == "img":
            m = re.fullmatch(r"data:([\w/+.-]+);base64,([A-Za-z0-9+/=]+)", attrs["src"])
            assert m, attrs["src"][:80]
            found.append((m.group(1), base64.b64decode(m.group(2))))
    return found


# -- Markdown and math ------------------------------------------------------------------------
def test_markdown_headings_emphasis_code_and_pipe_tables():
    out = markdown_to_html("# 01 · Title\n\nSome **bold**, *it* and `code`.\n\n| ε | δ |\n|---|--:|\n| 0.5 | 1e-3 |\n")
    p = Tags(out)
    assert p.names()[:1] == ["h1"] and "01 · Title" in "".join(p.text)
    assert {"strong", "em", "code", "table", "thead", "th", "td"} <= set(p.names())
    assert re.search(r"<th>ε</th>\s*<th[^>]*>δ</th>", out)
    assert re.search(r'<td style="text-align:right">1e-3</td>', out)  # the --: column aligns right
    assert "# 01" not in out and "**" not in out and "|---" not in out


def test_inline_and_display_math_become_mathml():
    out = markdown_to_html(r"Here $\delta(x) \le e^{-n}$ and" "\n\n" r"$$\sum_{i=1}^n x_i$$" "\n")
    p = Tags(out)
    maths = [a for t, a in p.tags if t == "math"]
    assert [a.get("display") for a in maths] == ["inline", "block"]
    assert "<mi>δ</mi>" in out and "<mo>≤</mo>" in out and "<msup>" in out
    assert "<mo>∑</mo>" in out and "$" not in "".join(p.text)


def test_dollar_amounts_stay_text():
    out = markdown_to_html("It costs $5 and $10.")
    assert "<math" not in out and "$5 and $10" in out


def test_formula_opening_a_paragraph_that_ends_in_a_digit_is_math():
    # the plugin looked for a digit "before" an opening $ at position 0 in src[-1], the last character
    out = markdown_to_html("## $K$ steps against Proposition 5\n\n$x$ has 3\n\n$5 and $10 cost 3\n")
    p = Tags(out)
    assert [t for t in p.names() if t in ("h2", "p", "math")] == ["h2", "math", "p", "math", "p"]
    assert "<mi>K</mi>" in out and "<mi>x</mi>" in out and "$5 and $10 cost 3" in out


def test_formula_that_does_not_convert_keeps_its_source():
    out = tex_to_html(r"\frac{1}{")
    assert out == '<code class="tex">$\\frac{1}{$</code>'


def test_markup_in_text_of_a_formula_is_never_markup():
    # latex2mathml copies \text{...} verbatim: the allow-list check must catch it
    out = tex_to_html(r"\text{<img src=x onerror=alert(1)>}")
    assert "<img" not in out and "&lt;img" in out


def test_special_characters_of_a_formula_are_escaped():
    out = tex_to_html(r"a < b \text{ & } c")
    assert out.startswith("<math") and "<mo>&lt;</mo>" in out and "&amp;" in out
    assert set(Tags(out).names()) <= _MATHML_ELEMENTS


TEX = st.lists(
    st.sampled_from(list("abxyz019 _^{}\\<>&\"'$()[]=+-") + ["\\frac", "\\text", "\\sum", "\\delta", "\\le"]),
    max_size=20,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(TEX, st.booleans())
def test_any_formula_gives_only_mathml_or_escaped_source(tex, display):
    out = tex_to_html(tex, display)
    p = Tags(out)
    if out.startswith("<math"):
        assert set(p.names()) <= _MATHML_ELEMENTS
        assert all(not k.startswith("on") and k not in ("href", "src", "style") for _, a in p.tags for k in a)
    else:
        assert p.names() == ["code"]
        delim = "$$" if display else "$"
        assert "".join(p.text) == delim + tex + delim


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(list("ab 1%|/[]\r\n") + ["\x1b[0;31m", "0/15 [", "%|##|", "\r\n"]), max_size=30).map(
        "".join
    )
)
def test_clean_stream_leaves_no_carriage_return_or_colour_code(text):
    out = clean_stream(text)
    assert "\r" not in out and not re.search(r"\x1b\[[0-9;?]*[ -/]*[@-~]", out)
    assert out.count("\n") <= text.count("\n")


def test_clean_stream_keeps_what_a_terminal_shows():
    text = "start\n 10%|#  | 1/10 [00:01<00:09]\r 100%|###| 10/10 [00:10<00:00]\ndone\rDONE\n\x1b[31mred\x1b[0m\n"
    assert clean_stream(text) == "start\nDONE\nred\n"


# -- outputs -----------------------------------------------------------------------------------
def stream(text, name="stdout"):
    return V4.new_output("stream", name=name, text=text)


def display(data, metadata=None):
    return V4.new_output("display_data", data=data, metadata=metadata or {})


def widget(text, model_id="a" * 32, extra=None, metadata=None):
    data = {WIDGET_MIME: {"model_id": model_id, "version_major": 2, "version_minor": 0}, "text/plain": text}
    data.update(extra or {})
    return display(data, metadata)


def test_rich_outputs_prefer_pictures_then_html_then_markdown_then_text():
    both = render_output(display({"image/svg+xml": SVG, "text/html": "<b>x</b>", "text/plain": "p"}))
    assert img_payloads(both) == [("image/svg+xml", SVG.encode())] and "<b>x</b>" not in both
    png = render_output(display({"image/png": PNG_B64, "text/plain": "p"}))
    assert img_payloads(png) == [("image/png", base64.b64decode(PNG_B64))]
    assert "<table><tr><td>1" in render_output(
        display({"text/html": "<table><tr><td>1</td></tr></table>", "text/markdown": "no", "text/plain": "no"})
    )
    md = render_output(display({"text/markdown": "δ = **1.2e-3**", "text/plain": "<IPython.core.display.Markdown>"}))
    assert "<strong>1.2e-3</strong>" in md and "IPython" not in md
    plain = render_output(display({"text/plain": "a < b " + "x" * 300}))
    assert plain.startswith("<pre") and "a &lt; b" in plain


def test_vega_lite_output_is_drawn_offline_to_svg():
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "data": {"values": [{"a": 1, "b": 2}]},
        "mark": "point",
        "encoding": {"x": {"field": "a", "type": "quantitative"}},
    }
    out = render_output(display({"application/vnd.vegalite.v5+json": spec, "text/plain": "chart"}))
    [(mime, body)] = img_payloads(out)
    assert mime == "image/svg+xml" and body.startswith(b"<svg")


def test_progress_bars_are_dropped():
    assert render_output(widget(TQDM_TEXT)) == ""
    state = {
        "b" * 32: {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_" + "c" * 32]}},
        "c" * 32: {"model_name": "FloatProgressModel", "state": {}},
    }
    assert render_output(widget("HBox(children=(...))", model_id="b" * 32), state) == ""
    assert render_output(stream(" 40%|####      | 6/15 [00:01<00:02, 3.9it/s]\r")) == ""


def test_live_panel_shows_its_snapshot_and_a_note_not_its_repr():
    snap = widget(
        "VBox(children=(HTML(value='<b>Smoothed DP…",
        extra={"image/svg+xml": SVG},
        metadata={"smoothdp_snapshot": {"title": "Smoothed DP <panel>", "controls": ["n = 2000"]}},
    )
    out = render_output(snap)
    assert "VBox(" not in out and img_payloads(out) == [("image/svg+xml", SVG.encode())]
    assert LIVE_PANEL_NOTE in out and "Static snapshot" in out and "n = 2000" in out
    assert "Smoothed DP &lt;panel&gt;" in out  # the title is text, not markup
    bare = render_output(widget("VBox(children=(HTML(value='<b>x</b>'),))"))
    assert LIVE_PANEL_NOTE in bare and "VBox(" not in bare and "<img" not in bare and "Static" not in bare


def test_error_and_stderr_outputs():
    err = V4.new_output("error", ename="ValueError", evalue="bad", traceback=["\x1b[31mValueError\x1b[0m: bad <x>"])
    out = render_output(err)
    assert 'class="error"' in out and "ValueError: bad &lt;x&gt;" in out and "\x1b" not in out
    assert 'class="stream stderr"' in render_output(stream("warning\n", "stderr"))


# -- pages -------------------------------------------------------------------------------------
def synthetic_notebook():
    nb = V4.new_notebook()
    nb.cells = [
        V4.new_markdown_cell("# 09 · A *small* notebook\n\nIt shows $\\eta$ and **one** table.\n\n## Part 1"),
        V4.new_code_cell(
            "x = 1\nprint(x)",
            execution_count=1,
            outputs=[stream("1\n")],
            metadata={
                "execution": {
                    "iopub.execute_input": "2026-01-01T00:00:00.000Z",
                    "shell.execute_reply": "2026-01-01T00:00:03.500Z",
                }
            },
        ),
        V4.new_code_cell(
            "secret_setup()", execution_count=2, metadata={"tags": ["remove-cell"]}, outputs=[stream("hidden-cell\n")]
        ),
        V4.new_code_cell(
            "say(headline)",
            execution_count=3,
            metadata={"tags": ["headline", "remove-input"]},
            outputs=[display({"text/markdown": "δ(x) = **1.2e-32** (paper: 1e-32)", "text/plain": ""})],
        ),
        V4.new_code_cell("for i in tqdm(...): pass", execution_count=4, outputs=[widget(TQDM_TEXT)]),
    ]
    return nb


def test_notebook_page_is_offline_and_complete():
    page = notebook_page(
        synthetic_notebook(), "09_small", run=RunInfo(mode="ci"), neighbours=("08_a", None), seconds=125.0
    )
    p = Tags(page)
    csp = [a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0] and "script-src" not in csp[0]
    assert "script" not in p.names() and "link" not in p.names()
    assert all(a.get("src", "data:").startswith("data:") for _, a in p.tags)
    assert all(a["href"].endswith(".html") for t, a in p.tags if t == "a")
    assert "<title>09 · A small notebook</title>" in page
    assert "<mi>η</mi>" in page and "3.5 s" in page  # the cell's run time from its metadata
    assert "hidden-cell" not in page and "secret_setup" not in page  # remove-cell
    assert "say(headline)" not in page and "<strong>1.2e-32</strong>" in page  # remove-input keeps the output
    assert "0/15" not in page and "08_a.html" in page and "small CI parameters" in page
    assert "Executed in 2 min 05 s" in page


def test_failed_notebook_page_has_a_banner():
    page = notebook_page(synthetic_notebook(), "09_small", error="ValueError: n must be >= 1")
    assert "did not run to the end" in page and "ValueError: n must be &gt;= 1" in page


def test_title_summary_and_headline_conventions():
    nb = synthetic_notebook()
    assert notebook_title(nb, "fallback") == "09 · A *small* notebook"
    assert notebook_summary(nb) == "It shows $\\eta$ and **one** table."
    assert "<strong>1.2e-32</strong>" in headline_html(nb)
    bare = V4.new_notebook(cells=[V4.new_code_cell("1")])
    assert notebook_title(bare, "07_x") == "07_x" and notebook_summary(bare) == "" and headline_html(bare) is None


def test_long_summary_is_cut_at_a_sentence():
    nb = V4.new_notebook(cells=[V4.new_markdown_cell("# T\n\n" + "A sentence of words here. " * 30)])
    text = notebook_summary(nb)
    assert 80 < len(text) <= 360 and text.endswith("here.")


def test_index_page_lists_status_time_and_headlines():
    entries = [
        Entry("01_a", "01 · First", "About **it**.", "ok", 12.34, None, "<p>δ = 1e-3</p>", True),
        Entry("02_b", "02 · Second", "", "failed", 75.0, "ValueError: <bad>", None, True),
        Entry("03_c", "03 · Third", "", "ok", 1.0, None, None, True),
        Entry("04_d", "04 · Fourth"),
    ]
    page = index_page(entries, RunInfo(mode="full", total_seconds=100.0))
    p = Tags(page)
    links = [a["href"] for t, a in p.tags if t == "a"]
    assert links == ["01_a.html", "02_b.html", "03_c.html"]  # no page yet for 04: no link
    text = " ".join(p.text)
    assert "12.3 s" in text and "1 min 15 s" in text and "1 min 40 s" in text
    assert "2 of 4 notebooks" in text and "δ = 1e-3" in text and "ValueError: <bad>" in text
    assert "not run yet" in text and page.count("class='headline'") == 1  # only 01 declares one
    assert "<strong>it</strong>" in page and "script" not in p.names()


def test_stream_chunks_are_merged_before_carriage_returns_apply():
    from smoothdp_nb.reports.outputs import render_outputs

    chunks = [
        stream("a\n"),
        stream("b\n"),
        stream("  0%|   | 0/3 [00:00<?, ?it/s]", "stderr"),
        stream("\r100%|###| 3/3 [00:01<00:00]", "stderr"),
        stream("\rdone\n", "stderr"),
        stream("c\n"),
    ]
    out = render_outputs(chunks)
    assert re.findall(r'<pre class="stream (\w+)">(.*?)</pre>', out, re.DOTALL) == [
        ("stdout", "a\nb\n"),
        ("stderr", "done\n"),
        ("stdout", "c\n"),
    ]


# -- alt text of charts ------------------------------------------------------------


def _alt_texts(html_text: str) -> list[str]:
    return [h.unescape(a) for a in re.findall(r'<img [^>]*alt="([^"]*)"', html_text)]


def test_chart_picture_is_described_by_its_title_and_axes_not_by_a_repr():
    alt = pytest.importorskip("altair")
    pytest.importorskip("vl_convert")
    from smoothdp_nb.display import render_svg

    chart = (
        alt.Chart(alt.Data(values=[{"n": 10, "d": 0.1}, {"n": 100, "d": 0.01}]))
        .mark_line()
        .encode(x=alt.X("n:Q", title="records n"), y=alt.Y("d:Q", title="smoothed δ"))
        .properties(title=alt.Title("δ against n", subtitle="η = 0.998"))
    )
    # what IPython.display.SVG(...) leaves in a notebook: the picture and a repr
    out = render_output(
        V4.new_output(
            "display_data",
            data={"image/svg+xml": render_svg(chart), "text/plain": "<IPython.core.display.SVG object>"},
        )
    )
    (text,) = _alt_texts(out)
    assert "IPython" not in text and "object" not in text
    assert text == "Chart: δ against n. η = 0.998. X axis: records n; Y axis: smoothed δ."


def test_picture_without_labels_gets_a_kind_not_a_repr():
    out = render_output(
        V4.new_output("display_data", data={"image/svg+xml": SVG, "text/plain": "<IPython.core.display.SVG object>"})
    )
    assert _alt_texts(out) == ["Chart (no title)"]
    described = render_output(V4.new_output("display_data", data={"image/png": PNG_B64, "text/plain": "A histogram"}))
    assert _alt_texts(described) == ["A histogram"]


# -- the tutorials' mathematics ----------------------------------------------------

_ROOT = Path(__file__).resolve().parents[2]
# the tutorials live inside the package, smoothdp_nb/notebooks/; notebooks/ may be a link to it (counted once)
_TUTORIALS = sorted(
    {
        p.resolve()
        for d in (_ROOT / "notebooks", _ROOT / "smoothdp_nb" / "notebooks")
        for p in d.glob("[0-9][0-9]_*.ipynb")
    }
)


class _ProseText(HTMLParser):
    """The text a reader sees outside formulas, code and pictures; counts <math> and TeX fallbacks."""

    SKIP = frozenset({"math", "code", "pre", "style", "script", "title"})

    def __init__(self) -> None:
        super().__init__()
        self.depth, self.parts, self.maths, self.fallbacks = 0, [], 0, 0

    def handle_starttag(self, tag, attrs):
        self.maths += tag == "math"
        self.fallbacks += tag == "code" and "tex" in (dict(attrs).get("class") or "").split()
        self.depth += tag in self.SKIP

    def handle_endtag(self, tag):
        self.depth -= tag in self.SKIP

    def handle_data(self, data):
        if self.depth == 0:
            self.parts.append(data)


@pytest.mark.parametrize("path", _TUTORIALS, ids=[p.stem for p in _TUTORIALS])
def test_tutorial_handout_typesets_every_formula(path):
    nb = nbformat.read(path, as_version=4)
    parser = _ProseText()
    parser.feed(notebook_page(nb, path.stem))
    prose = "".join(parser.parts)
    assert parser.maths >= 10, f"{path.name}: only {parser.maths} <math> elements"
    assert parser.fallbacks == 0, f"{path.name}: a formula did not convert to MathML"
    for raw in ("$", "_{", "^{", "\\"):  # TeX left as text, or Markdown that ate a subscript
        assert raw not in prose, (
            f"{path.name}: {raw!r} in the text: {prose[prose.find(raw) - 60 : prose.find(raw) + 40]!r}"
        )


def test_tutorials_were_found():
    assert len(_TUTORIALS) == 9


def test_inline_chart_of_an_html_output_becomes_a_described_picture():
    alt = pytest.importorskip("altair")
    pytest.importorskip("vl_convert")
    from smoothdp_nb.display import render_svg

    chart = alt.Chart(alt.Data(values=[{"e": 1, "d": 0.5}])).mark_point().encode(x="e:Q", y="d:Q")
    svg = render_svg(chart.properties(title="Smoothed δ against ε"))
    out = render_output(
        V4.new_output("display_data", data={"text/html": f"<div><b>summary</b>{svg}{svg}</div>", "text/plain": "r"})
    )
    assert "<svg" not in out and "<b>summary</b>" in out
    assert _alt_texts(out) == ["Chart: Smoothed δ against ε. X axis: e; Y axis: d."] * 2
    assert [m for m, _ in img_payloads(out)] == ["image/svg+xml"] * 2


def test_starred_subscripted_symbol_in_a_formula_is_never_emphasis():
    # "S*_{q,γ}(x) = max_k ..." as plain Markdown lost its subscript to <em>; inside $...$ it is
    # S with subscript q,γ and superscript * (msubsup), and the text around it is untouched
    out = markdown_to_html("The smooth sensitivity $S^*_{q,\\gamma}(x) = \\max_k e^{-k\\gamma} A_k$ of *the* median.")
    assert "<em>the</em>" in out and out.count("<em>") == 1
    assert "<msubsup><mi>S</mi>" in out and "<mo>*</mo>" in out.split("<msubsup>", 1)[1]
    assert "_{" not in out and "$" not in out
