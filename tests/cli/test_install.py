"""Install and command line: light --help, the tutorials from the installed
package, helpful messages for a missing JupyterLab or an unknown notebook number."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "scipy", "pandas", "altair", "ipywidgets", "IPython", "matplotlib")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("command", [[], ["report"], ["run"], ["tutorials"], ["gallery"], ["docs"]])
def test_help_imports_nothing_heavy(command):
    """Every --help answers before numpy, scipy, pandas or Altair is imported (it took ~4 s)."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "smoothdp_nb", *command, "--help"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    seconds = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    assert "usage:" in out.stdout and "``" not in out.stdout  # plain text, no reST markup
    print(f"{' '.join(command) or '(none)'} --help: {seconds:.2f} s (load {os.getloadavg()[0]:.1f})")


def test_lazy_exports_resolve():
    """The package loads its names on first use; every exported name resolves to the object
    defined in the module its one table names."""
    import importlib

    import smoothdp_nb

    assert smoothdp_nb.__all__ == list(smoothdp_nb._WHERE)  # the lazy table: the TYPE_CHECKING block's imports
    assert "release" in smoothdp_nb.__all__ and "process_pool" not in smoothdp_nb.__all__  # no infrastructure
    for name, where in smoothdp_nb._WHERE.items():
        module = importlib.import_module(where)
        want = getattr(module, name) if hasattr(module, name) else importlib.import_module(f"{where}.{name}")
        assert getattr(smoothdp_nb, name) is want, name
    for name in smoothdp_nb.__all__:
        assert getattr(smoothdp_nb, name) is not None, name
    assert (
        callable(smoothdp_nb.release)
        and smoothdp_nb.release.__module__ == "smoothdp_nb.core.release.smooth_sensitivity"
    )
    assert smoothdp_nb.noise.__name__ == "smoothdp_nb.core.release.noise"
    with pytest.raises(AttributeError):
        smoothdp_nb.no_such_name  # noqa: B018
    namespace: dict[str, object] = {}
    exec("from smoothdp_nb import *", namespace)
    assert set(smoothdp_nb.__all__) <= set(namespace)


def test_lab_without_jupyterlab_says_how_to_install(monkeypatch, capsys):
    """A `jupyter` command on PATH (another environment's) does not send the run to
    `python -m jupyterlab` (which would fail with "No module named jupyterlab"): the message says how to install."""
    from smoothdp_nb.cli import tutorials

    # the test environment has JupyterLab (the browser tests use it): hide it from the check
    real = tutorials.has_module
    monkeypatch.setattr(tutorials, "has_module", lambda name: False if name == "jupyterlab" else real(name))
    monkeypatch.setattr(tutorials.shutil, "which", lambda name: f"/usr/local/bin/{name}")

    def no_launch(*args: object, **kwargs: object) -> int:
        raise AssertionError("JupyterLab must not be launched without the module")

    monkeypatch.setattr(tutorials.subprocess, "call", no_launch)
    assert tutorials.main(["--lab"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "smoothdp_nb[lab]"' in err and "No module named" not in err


def test_unknown_notebook_number_lists_the_available_ones(tmp_path, capsys):
    from smoothdp_nb.cli import tutorials

    assert tutorials.main(["--only", "99", "--out", str(tmp_path / "r")]) == 2
    assert "no notebook numbered 99; available: 01..09" in capsys.readouterr().err
    assert tutorials.main(["--only", "01", "42", "--out", str(tmp_path / "r")]) == 2
    assert "no notebook numbered 42; available: 01..09" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_default_notebooks_come_from_the_package():
    from importlib.resources import files

    from smoothdp_nb.reports import runner

    d = runner.shipped_notebooks()
    assert [p.name[:2] for p in runner.find_notebooks(d)] == ["01", "02", "03", "04", "05", "06", "07", "08", "09"]
    shipped = files("smoothdp_nb").joinpath("notebooks")
    if isinstance(shipped, Path) and shipped.is_dir():
        assert d == shipped


def test_sdist_and_wheel_carry_the_notebooks_and_the_spdx_license(tmp_path):
    """`python -m build` (the sdist, then the wheel built from it) in an isolated environment:
    both hold the eight notebooks, and the metadata states the license as an SPDX expression."""
    import tarfile
    import zipfile

    pytest.importorskip("build")
    out = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if out.returncode != 0 and "Could not find a version" in out.stdout + out.stderr:
        pytest.skip("no package index for the build requirements")
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    (wheel,) = tmp_path.glob("smoothdp_nb-*.whl")
    (sdist,) = tmp_path.glob("smoothdp_nb-*.tar.gz")
    notebooks = {f"{n}.ipynb" for n in ("01_quickstart", "06_smooth_sensitivity", "07_course_dp_basics")}
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("smoothdp_nb/notebooks/")}
    assert notebooks <= shipped and "README.md" in shipped and len([n for n in shipped if n.endswith(".ipynb")]) == 9
    assert "License-Expression: MIT" in metadata
    with tarfile.open(sdist) as t:
        members = t.getnames()
    assert sum(m.endswith(".ipynb") and "/smoothdp_nb/notebooks/" in m for m in members) == 9
