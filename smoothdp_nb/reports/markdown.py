"""Markdown and TeX to HTML, offline: the text of the tutorial reports.

Markdown is rendered by ``markdown-it-py`` (CommonMark plus pipe tables and
strikethrough); ``$...$`` and ``$$...$$`` are turned into MathML by
``latex2mathml``, which Chromium, Firefox and Safari draw natively, so no
MathJax or KaTeX is fetched from a CDN.  A formula that does not convert is
kept as its TeX source in a styled ``<code class="tex">``.

The MathML is not pasted as ``latex2mathml`` wrote it: that library copies
``\\text{...}`` verbatim, markup included (``\\text{<b>}`` gives a ``<b>``
element).  Its output is parsed as XML, checked against a list of MathML
elements and attributes, and written out again with every text escaped; a
formula that fails the check falls back to its TeX source.
"""

from __future__ import annotations

import functools
import html
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

__all__ = ["first_heading", "inline_markdown_to_html", "markdown_to_html", "tex_to_html"]

MATHML_NS = "http://www.w3.org/1998/Math/MathML"

#: MathML Core's elements (and the presentation ones latex2mathml writes)
_MATHML_ELEMENTS = frozenset(
    [
        "math",
        "mrow",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "mfrac",
        "msqrt",
        "mroot",
        "mstyle",
        "merror",
        "mpadded",
        "mphantom",
        "msub",
        "msup",
        "msubsup",
        "munder",
        "mover",
        "munderover",
        "mmultiscripts",
        "mprescripts",
        "none",
        "mtable",
        "mtr",
        "mtd",
        "semantics",
        "annotation",
        "menclose",
    ]
)
_MATHML_ATTRIBUTES = frozenset(
    [
        "display",
        "displaystyle",
        "scriptlevel",
        "mathvariant",
        "stretchy",
        "fence",
        "separator",
        "lspace",
        "rspace",
        "minsize",
        "maxsize",
        "largeop",
        "movablelimits",
        "accent",
        "accentunder",
        "linethickness",
        "columnalign",
        "rowalign",
        "columnspacing",
        "rowspacing",
        "columnlines",
        "rowlines",
        "frame",
        "width",
        "height",
        "depth",
        "voffset",
        "notation",
        "encoding",
        "form",
        "symmetric",
        "class",
    ]
)


_BARE_AMP = re.compile(r"&(?!#\d+;|#x[0-9a-fA-F]+;|[A-Za-z]\w*;)")


class _UnsafeMathML(ValueError):
    """latex2mathml wrote an element or attribute outside the allow-list."""


def _serialize(elem: ET.Element, out: list[str]) -> None:
    tag = elem.tag.rsplit("}", 1)[-1]
    if tag not in _MATHML_ELEMENTS:
        raise _UnsafeMathML(tag)
    attrs = []
    for key, value in elem.attrib.items():
        if key not in _MATHML_ATTRIBUTES:
            raise _UnsafeMathML(key)
        attrs.append(f' {key}="{html.escape(value, quote=True)}"')
    if tag == "math":
        attrs.insert(0, f' xmlns="{MATHML_NS}"')
    out.append(f"<{tag}{''.join(attrs)}>")
    out.append(html.escape(elem.text or "", quote=False))
    for child in elem:
        _serialize(child, out)
        out.append(html.escape(child.tail or "", quote=False))
    out.append(f"</{tag}>")


@functools.lru_cache(maxsize=4096)
def tex_to_html(tex: str, display: bool = False) -> str:
    """One formula as MathML, or as escaped TeX when it does not convert.

    Parameters
    ----------
    tex : str
        The formula without its ``$`` delimiters.
    display : bool
        A display (block) formula rather than an inline one.

    Returns
    -------
    str
        ``<math ...>...</math>`` (only allow-listed MathML, every text
        escaped), or ``<code class="tex">`` holding the source.
    """
    try:
        from latex2mathml.converter import convert  # deferred: the tutorials extra, only for pages with maths

        mathml = convert(tex.strip(), display="block" if display else "inline")
        # a bare "&" copied from \text{...} is text, not the start of an entity
        root = ET.fromstring(_BARE_AMP.sub("&amp;", mathml))
        out: list[str] = []
        _serialize(root, out)
        return "".join(out)
    except Exception:
        cls = "tex display" if display else "tex"
        delim = "$$" if display else "$"
        return f'<code class="{cls}">{html.escape(delim + tex + delim)}</code>'


def _math_renderer(content: str, options: dict[str, Any]) -> str:
    # the plugin wraps the result in <span class="math inline"> or <div class="math block">
    return tex_to_html(content, display=bool(options.get("display_mode")))


def _inline_math_rule() -> Callable[[StateInline, bool], bool]:
    """The plugin's inline ``$...$`` rule, right at the start of a paragraph or heading.

    With ``allow_digits=False`` the plugin rejects a ``$`` preceded by a digit by reading
    ``src[pos - 1]``; at ``pos == 0`` that is ``src[-1]``, the *last* character, so a paragraph
    or heading that opens with a formula and ends with a digit ("$K$ steps ... Proposition 5")
    kept its TeX as text.  There is no character before position 0: there only the closing
    ``$`` is checked (no digit straight after it).
    """
    from mdit_py_plugins.dollarmath.index import math_inline_dollar  # deferred: the tutorials extra

    strict = math_inline_dollar(True, False, True)  # allow_space, allow_digits, allow_double
    at_start = math_inline_dollar(True, True, True)

    def rule(state: StateInline, silent: bool) -> bool:
        if state.pos > 0:
            return strict(state, silent)
        if not at_start(state, True):  # silent: only moves state.pos past the closing "$"
            return False
        after, state.pos = state.src[state.pos : state.pos + 1], 0
        return not after.isdigit() and at_start(state, silent)

    return rule


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # deferred: the tutorials extra, loaded with the first page rendered
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True, "typographer": False}).enable(["table", "strikethrough"])
    # allow_digits=False: "costs $5 and $10" stays text, as in Jupyter
    md.use(dollarmath_plugin, allow_digits=False, double_inline=True, renderer=_math_renderer)
    md.inline.ruler.at("math_inline", _inline_math_rule())
    # tables wider than the page scroll instead of overflowing it
    # (focusable, so that a keyboard can scroll it)
    md.add_render_rule(
        "table_open", lambda *a: '<div class="table-wrap" tabindex="0" role="region" aria-label="table"><table>\n'
    )
    md.add_render_rule("table_close", lambda *a: "</table></div>\n")
    return md


def markdown_to_html(text: str) -> str:
    """Render a Markdown cell (or a ``text/markdown`` output) to HTML."""
    return _parser().render(text)


def inline_markdown_to_html(text: str) -> str:
    """Render one line of Markdown (a title, a summary) without a ``<p>`` around it."""
    return _parser().renderInline(text)


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def first_heading(text: str) -> str | None:
    """The Markdown source of the first ATX heading in ``text`` (None when there is none)."""
    match = _HEADING.search(text)
    return match.group(1) if match else None
