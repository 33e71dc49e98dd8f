"""``python -m smoothdp_nb gallery``: every figure rendered offline, with an index page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vl_convert")

from smoothdp_nb.reports import gallery

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_builder_of_the_display_package_is_in_the_gallery(monkeypatch):
    """Build every gallery figure (no rendering) and record which public builders ran."""
    from smoothdp_nb import display

    called: set[str] = set()
    for name in [n for n in display.__all__ if n.endswith("_chart")]:
        fn = getattr(display, name)

        def spy(*args, _fn=fn, _name=name, **kwargs):
            called.add(_name)
            return _fn(*args, **kwargs)

        monkeypatch.setattr(display, name, spy)
        monkeypatch.setattr(sys.modules[fn.__module__], name, spy)
        if getattr(gallery, name, None) is fn:  # the gallery imported the builder by name
            monkeypatch.setattr(gallery, name, spy)
    for _, build in gallery.FIGURES.values():
        build()
    assert called == {n for n in display.__all__ if n.endswith("_chart")}


def test_gallery_command_writes_svg_png_and_index(tmp_path):
    out = tmp_path / "gallery"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "smoothdp_nb",
            "gallery",
            "--out",
            str(out),
            "--only",
            "release_empty",
            "noise_marker",
            "--scale",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("release_empty", "noise_marker"):
        svg = (out / f"{name}.svg").read_text(encoding="utf-8")
        assert svg.startswith("<svg") and "<script" not in svg
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count("<figure") == 2 and 'src="noise_marker.png"' in index
    assert "http" not in index.replace("http-equiv", "")  # nothing remote


def test_gallery_rejects_bad_arguments(tmp_path):
    run = [sys.executable, "-m", "smoothdp_nb", "gallery", "--out", str(tmp_path)]
    bad = subprocess.run(run + ["--only", "no_such_figure"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "unknown figure 'no_such_figure'" in bad.stderr
    bad = subprocess.run(run + ["--scale", "0"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "--scale must be > 0" in bad.stderr
