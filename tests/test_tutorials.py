"""The tutorials runner's scheduling (smoothdp_nb.tutorials.run_all), without kernels."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import nbformat
import pytest

from smoothdp_nb import tutorials


def _notebook(path: Path, expected: float | None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"), nbformat.v4.new_code_cell("1 + 1")]
    if expected is not None:
        nb.metadata["smoothdp"] = {"expected_seconds": expected}
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("jobs", [1, 2])
def test_longest_notebook_starts_first_and_reports_keep_contents_order(tmp_path, monkeypatch, jobs):
    paths = [
        _notebook(tmp_path / "01_a.ipynb", None),
        _notebook(tmp_path / "02_b.ipynb", 5),
        _notebook(tmp_path / "03_c.ipynb", None),
        _notebook(tmp_path / "04_d.ipynb", 300),
    ]
    started: list[str] = []

    async def fake_execute(path, kernel_dir, kernel_name, **kw):
        started.append(path.stem)
        await asyncio.sleep(0.01)
        nb = nbformat.read(path, as_version=4)
        nb.cells[1].execution_count = 1
        return nb

    monkeypatch.setattr(tutorials, "_execute_async", fake_execute)
    out = tmp_path / "reports"
    failed = tutorials.run_all(paths, out, jobs=jobs, progress=False, stream=io.StringIO())
    assert failed == 0
    assert started == ["04_d", "02_b", "01_a", "03_c"]  # by expected seconds, then contents order
    index = (out / "index.html").read_text(encoding="utf-8")
    positions = [index.index(p.stem) for p in paths]
    assert positions == sorted(positions)  # the contents page lists them in contents order
