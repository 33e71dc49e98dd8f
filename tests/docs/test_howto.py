"""The how-to pages run: every ```python block of a page, in order, in one namespace.

Each page checks its own numbers against an exact computation (its asserts), so a page whose
code or claims drift from the package fails here."""

import re
from pathlib import Path

import pytest

HOWTO = Path(__file__).resolve().parents[2] / "docs" / "howto"
PAGES = ["mechanism.md", "noise_family.md"]


def code_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


@pytest.mark.parametrize("page", PAGES)
def test_the_page_runs_and_its_checks_hold(page):
    from smoothdp_nb.core.release.noise.registry import family_names, unregister_family

    blocks = code_blocks(HOWTO / page)
    assert len(blocks) >= 3  # the code, its use and its check
    assert any("assert" in block for block in blocks)
    before = family_names()
    namespace = {"__name__": f"howto_{page[:-3]}"}
    try:
        for block in blocks:
            exec(compile(block, str(HOWTO / page), "exec"), namespace)
    finally:
        for name in set(family_names()) - set(before):  # a page that failed midway leaves no family behind
            unregister_family(name)
    assert family_names() == before


def test_the_mechanism_page_implements_only_the_required_members():
    source = code_blocks(HOWTO / "mechanism.md")[0]
    cls = source[source.index("class FlippedCount") :]
    assert re.findall(r"^    def (\w+)", cls, flags=re.M) == ["log_output_pmf"]
    assert re.findall(r"^    (\w+) = ", cls, flags=re.M) == ["categories"]
    assert len(cls.strip().splitlines()) <= 15  # the whole class, blank lines included


def test_the_pages_are_in_the_docs_tree():
    index = (HOWTO / "index.md").read_text(encoding="utf-8")
    assert all(page[:-3] in index for page in PAGES)
    assert "howto/index" in (HOWTO.parent / "index.md").read_text(encoding="utf-8")
