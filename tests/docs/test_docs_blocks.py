"""Every code block of the documentation runs as a reader copies it: the Python and magic blocks of
each page, in the page's order, in cells of a fresh kernel (one kernel per page), with nothing added
but what the page itself says to run.  Shell blocks are commands for a terminal and are not run here.
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: fences whose blocks are notebook cells (``text`` only when it starts with a magic)
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", flags=re.M | re.S)
_MAGIC = ("%%smoothdp", "%smoothdp", "%load_ext")


def markdown_blocks(text: str) -> list[str]:
    """The blocks of a Markdown page a reader runs in a notebook, in order."""
    blocks = []
    for lang, body in _FENCE.findall(text):
        if lang in ("python", "ipython", "py") or (lang in ("text", "") and body.lstrip().startswith(_MAGIC)):
            blocks.append(body)
    return blocks


def literal_blocks(rst: str) -> list[str]:
    """The literal blocks (after ``::``) of reST text, dedented, in order."""
    blocks, lines, i = [], rst.splitlines(), 0
    while i < len(lines):
        if lines[i].rstrip().endswith("::"):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            body = []
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith("    ")):
                body.append(lines[j])
                j += 1
            blocks.append(textwrap.dedent("\n".join(body)).strip() + "\n")
            i = j
        else:
            i += 1
    return blocks


#: pages whose blocks are a reference card of calls on the reader's own objects, not a session
#: to paste (docs/accounting.md lists ``sdp.dp_epsilon(mechanism, n, delta)`` for any mechanism)
REFERENCE_CARDS = ("docs/accounting.md",)


def pages() -> dict[str, list[str]]:
    out = {}
    for path in sorted(DOCS.glob("*.md")) + sorted((DOCS / "howto").glob("*.md")):
        if path.relative_to(ROOT).as_posix() in REFERENCE_CARDS:
            continue
        blocks = markdown_blocks(path.read_text(encoding="utf-8"))
        if blocks:
            out[path.relative_to(ROOT).as_posix()] = blocks
    from smoothdp_nb.magics import _MAGIC_DOC

    # docs/magic.rst renders the magic's docstring; its page says "%load_ext smoothdp_nb" first
    out["docs/magic.rst"] = ["%load_ext smoothdp_nb\n", *literal_blocks(_MAGIC_DOC)]
    return out


def test_the_block_readers_find_the_blocks():
    md = "x\n```python\na = 1\n```\n```bash\nls\n```\n```text\n%%smoothdp\nn = 1\n```\n```text\nplain\n```\n"
    assert markdown_blocks(md) == ["a = 1\n", "%%smoothdp\nn = 1\n"]
    assert literal_blocks("Run::\n\n    a = 1\n\n    b = 2\n\nthen::\n\n    c\n") == ["a = 1\n\nb = 2\n", "c\n"]


def test_no_block_mixes_python_and_a_cell_magic():
    """A cell magic must open its cell: a Python line above ``%%smoothdp`` is a UsageError when pasted."""
    for page, blocks in pages().items():
        for block in blocks:
            lines = [ln for ln in block.splitlines() if ln.strip()]
            magics = [i for i, ln in enumerate(lines) if ln.startswith("%%")]
            assert magics in ([], [0]), f"{page}: a block holds a cell magic not on its first line:\n{block}"


@pytest.mark.parametrize("page", sorted(pages()))
def test_every_block_runs_as_copied(page):
    cells = [nbformat.v4.new_code_cell(block) for block in pages()[page]]
    nb = nbformat.v4.new_notebook(cells=cells)
    env_path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this tree's package
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    for i, cell in enumerate(nb.cells):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{page}, block {i + 1}: {errors[0].ename}: {errors[0].evalue}\n{cell.source}"
