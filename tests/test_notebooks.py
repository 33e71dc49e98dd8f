"""Execute every tutorial notebook top to bottom in a fresh kernel (issue 7).

* The kernel is the interpreter running pytest (a temporary kernelspec that
  points at ``sys.executable``), so the notebooks see the package under test.
* ``SMOOTHDP_CI=1`` is set in the kernel's environment: every notebook's
  ``parameters`` cell reads it and switches to small sizes.
* nbmake/nbval can miss a magic's ``UsageError`` (execution stops, the test
  passes); here every code cell must have an ``execution_count`` (1, 2, 3, ...
  in order) and no cell may carry an ``error`` output or a ``UsageError`` on
  stderr.
* The notebooks are stored without outputs (checked below).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
EXPECTED = [
    "01_quickstart.ipynb",
    "02_elections_figure1.ipynb",
    "03_smoothed_dp_figure2.ipynb",
    "04_quantized_sgd.ipynb",
    "05_properties.ipynb",
    "06_smooth_sensitivity.ipynb",
    "07_course_dp_basics.ipynb",
]
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
KERNEL_NAME = "smoothdp-test-python"
#: per-cell timeout (seconds) in CI mode
CELL_TIMEOUT = 300


def make_kernelspec(directory: Path, python: str = sys.executable, name: str = KERNEL_NAME) -> Path:
    """Write a kernelspec for ``python`` under ``directory/kernels/name``; return ``directory``."""
    spec = directory / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": f"smoothdp test ({Path(python).name})",
                "language": "python",
            }
        )
    )
    return directory


def execute_notebook(path: Path, kernel_dir: Path, timeout: int = CELL_TIMEOUT, env: dict | None = None):
    """Run ``path`` in a fresh kernel from ``kernel_dir``; return the executed notebook."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    nb = nbformat.read(path, as_version=4)
    ksm = KernelSpecManager(kernel_dirs=[str(kernel_dir / "kernels")], ensure_native_kernel=False)
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=ksm)
    kernel_env = dict(os.environ)
    kernel_env.update(env or {})
    client = nbclient.NotebookClient(
        nb,
        km=km,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    # the kernel inherits this environment (SMOOTHDP_CI for the parameters cell)
    try:
        client.execute(env=kernel_env)
    finally:
        # nbclient leaves running a kernel whose manager it was given: stop it here
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return nb


def assert_all_cells_ran(nb, name: str) -> int:
    """Every code cell executed, in order, without error outputs; returns the count."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name}: no code cells"
    counts = [c.get("execution_count") for c in code]
    missing = [i for i, n in enumerate(counts) if n is None]
    assert not missing, f"{name}: code cells {missing} did not run (execution stopped early?)"
    assert counts == list(range(1, len(code) + 1)), f"{name}: execution counts {counts}"
    for i, c in enumerate(code):
        for out in c.get("outputs", []):
            assert out.get("output_type") != "error", f"{name}: cell {i} raised {out.get('ename')}: {out.get('evalue')}"
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                assert "UsageError" not in out.get("text", ""), f"{name}: cell {i}: {out['text']}"
    return len(code)


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return make_kernelspec(tmp_path_factory.mktemp("kernelspec"))


def test_all_notebooks_present():
    assert [p.name for p in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stripped(path):
    """Notebooks are committed without outputs, execution counts or widget state."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code":
            assert c.get("outputs") == [], f"{path.name}: cell {i} has outputs"
            assert c.get("execution_count") is None, f"{path.name}: cell {i} has an execution count"
    assert "widgets" not in nb.metadata, f"{path.name}: widget state saved in the notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_has_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: expected one cell tagged 'parameters'"
    assert "SMOOTHDP_CI" in tagged[0].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, kernel_dir):
    t0 = time.perf_counter()
    nb = execute_notebook(path, kernel_dir, env={"SMOOTHDP_CI": "1"})
    n = assert_all_cells_ran(nb, path.name)
    print(f"{path.name}: {n} code cells in {time.perf_counter() - t0:.1f} s")


def kernels_of_this_process() -> list[int]:
    """Pids of live ipykernel processes started by this process (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"ipykernel_launcher" in cmd:
            found.append(int(stat.parent.name))
    return found


def test_tutorials_headless_html(tmp_path, capfd):
    """smoothdp_nb.tutorials executes notebooks into HTML reports (one small notebook here)."""
    from smoothdp_nb import tutorials

    out = tmp_path / "reports"
    assert tutorials.main(["--ci", "--only", "07", "--out", str(out), "--notebooks", str(NOTEBOOK_DIR)]) == 0
    page = (out / "07_course_dp_basics.html").read_text(encoding="utf-8")
    # the charts are embedded offline as data: pictures; never a remote script
    assert "data:image/svg+xml;base64," in page and "Randomized response" in page
    assert "<script" not in page and "cdn.jsdelivr" not in page
    # Markdown is rendered, not shown as source
    assert "<h1>07 · DP basics" in page and "\n# 07" not in page
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "href='07_course_dp_basics.html'" in index and "1 of 1 notebooks" in index
    err = capfd.readouterr().err
    assert "07_course_dp_basics.ipynb" in err and " ok" in err
    assert "running over TCP" not in err and "[IPKernelApp]" not in err
    assert kernels_of_this_process() == []


def _write_notebook(path: Path, cells: list) -> None:
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_runner_end_to_end_on_synthetic_notebooks(tmp_path, capfd):
    """Two notebooks at once: progress residue, a live panel, a headline, kernel noise, a failure."""
    from smoothdp_nb import tutorials

    v4 = nbformat.v4
    src = tmp_path / "nbs"
    src.mkdir()
    _write_notebook(
        src / "01_tiny.ipynb",
        [
            v4.new_markdown_cell("# 01 · Tiny\n\nA summary with $\\delta$."),
            v4.new_code_cell('import os\nCI = os.environ.get("SMOOTHDP_CI") == "1"', metadata={"tags": ["parameters"]}),
            v4.new_code_cell(
                'import sys\nprint("overwritten\\rkept")\nprint("kernel-noise", file=sys.__stderr__, flush=True)'
            ),
            v4.new_code_cell("from tqdm.auto import tqdm\nfor _ in tqdm(range(3), desc='loop'):\n    pass"),
            v4.new_code_cell(
                "import altair as alt, ipywidgets as W, pandas as pd\n"
                "ch = alt.Chart(pd.DataFrame({'x': [1, 2], 'y': [1, 4]})).mark_line().encode(x='x', y='y')\n"
                "W.VBox([W.HTML('<b>Tiny panel</b>'), W.IntSlider(value=3, description='n'), alt.JupyterChart(ch)])"
            ),
            v4.new_code_cell(
                'from IPython.display import Markdown\nMarkdown(f"CI = {CI}, answer **{6 * 7}**")',
                metadata={"tags": ["headline"]},
            ),
        ],
    )
    _write_notebook(
        src / "02_broken.ipynb",
        [
            v4.new_markdown_cell("# 02 · Broken"),
            v4.new_code_cell('raise ValueError("boom")'),
            v4.new_code_cell('print("never printed")'),
        ],
    )
    out = tmp_path / "reports"
    assert tutorials.main(["--ci", "--jobs", "2", "--out", str(out), "--notebooks", str(src)]) == 1
    assert kernels_of_this_process() == []
    err = capfd.readouterr().err
    assert "running over TCP" not in err and "kernel-noise" not in err
    assert re.search(r"01_tiny\.ipynb .* ok", err) and "02_broken.ipynb" in err and "FAILED: ValueError: boom" in err

    tiny = (out / "01_tiny.html").read_text(encoding="utf-8")
    streams = re.findall(r'<pre class="stream stdout">(.*?)</pre>', tiny, re.DOTALL)
    assert streams == ["kept\n"]  # the overwritten part of the line is gone
    assert "loop:" not in tiny and "3/3" not in tiny  # tqdm's widget bar is dropped
    assert "VBox(" not in tiny and "Tiny panel" in tiny and "n = 3" in tiny
    panel = tiny[tiny.index('<figure class="live-panel">') :].split("</figure>")[0]
    assert panel.count("data:image/svg+xml;base64,") == 1 and "open the notebook in Jupyter" in panel
    broken = (out / "02_broken.html").read_text(encoding="utf-8")
    assert "did not run to the end" in broken and re.search(r'<pre class="error">.*ValueError: boom', broken, re.DOTALL)
    assert '<pre class="stream' not in broken and "not run" in broken  # the cell after the error

    index = (out / "index.html").read_text(encoding="utf-8")
    assert "1 of 2 notebooks" in index and "CI = True, answer <strong>42</strong>" in index
    assert "ran</span>" in index and "failed</span>" in index and "<mi>δ</mi>" in index


def test_runner_rejects_bad_arguments(tmp_path, capsys):
    from smoothdp_nb import tutorials

    for bad in (["--jobs", "0"], ["--timeout", "-5"], ["--jobs", "two"]):
        with pytest.raises(SystemExit) as info:
            tutorials.main(bad)
        assert info.value.code == 2
        assert f"{bad[0]} must be a positive integer" in capsys.readouterr().err
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert tutorials.main(["--out", str(a_file)]) == 2
    assert "--out must be a directory" in capsys.readouterr().err
    assert tutorials.main(["--only", "99", "--out", str(tmp_path / "r"), "--notebooks", str(NOTEBOOK_DIR)]) == 2
    assert "no notebooks" in capsys.readouterr().err


def test_run_all_rejects_bad_jobs_and_timeout(tmp_path):
    from smoothdp_nb import tutorials

    nbs = tutorials.find_notebooks(NOTEBOOK_DIR, ["07"])
    with pytest.raises(ValueError, match="jobs must be an integer >= 1, got 0"):
        tutorials.run_all(nbs, tmp_path, jobs=0)
    with pytest.raises(TypeError, match="timeout must be an integer >= 1, got float"):
        tutorials.run_all(nbs, tmp_path, timeout=1.5)
    assert not any(tmp_path.iterdir())  # refused before anything was written
