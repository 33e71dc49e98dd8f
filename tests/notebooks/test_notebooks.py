"""Execute every tutorial notebook top to bottom in a fresh kernel.

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

import ast
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

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "smoothdp_nb" / "notebooks"
EXPECTED = [
    "01_quickstart.ipynb",
    "02_elections_figure1.ipynb",
    "03_smoothed_dp_figure2.ipynb",
    "04_quantized_sgd.ipynb",
    "05_properties.ipynb",
    "06_smooth_sensitivity.ipynb",
    "07_course_dp_basics.ipynb",
    "08_composition_accounting.ipynb",
    "09_data_dependent_releases.ipynb",
    "10_noisy_pipelines.ipynb",
    "11_privacy_budget.ipynb",
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
    """python -m smoothdp_nb tutorials executes notebooks into HTML reports (one small notebook here)."""
    from smoothdp_nb.cli import tutorials

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
    from smoothdp_nb.cli import tutorials

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
    from smoothdp_nb.cli import tutorials

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
    err = capsys.readouterr().err
    assert "no notebook numbered 99; available: 01" in err and NOTEBOOKS[-1].name[:2] in err


def test_run_all_rejects_bad_jobs_and_timeout(tmp_path):
    from smoothdp_nb.reports import runner

    nbs = runner.find_notebooks(NOTEBOOK_DIR, ["07"])
    with pytest.raises(ValueError, match="jobs must be an integer >= 1, got 0"):
        runner.run_all(nbs, tmp_path, jobs=0)
    with pytest.raises(TypeError, match="timeout must be an integer >= 1, got float"):
        runner.run_all(nbs, tmp_path, timeout=1.5)
    assert not any(tmp_path.iterdir())  # refused before anything was written


# --- static checks on the stored notebooks (no kernel) ----------------------------------------------------------

#: the package attributes a notebook may use: the public names, plus the notebook layers the package
#: loads lazily on first use (``sdp.panels``, ``sdp.display``)
PUBLIC_LAZY_LAYERS = {"panels", "display"}


def _code_cells(path: Path) -> list[tuple[int, ast.Module]]:
    """Parse every code cell; IPython magics are not Python and are dropped (a ``%%`` cell entirely)."""
    nb = nbformat.read(path, as_version=4)
    parsed = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or cell.source.lstrip().startswith("%%"):
            continue
        lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines()]
        parsed.append((i, ast.parse("\n".join(lines), filename=f"{path.name}[{i}]")))
    return parsed


def _is_computed_fstring(node: ast.AST) -> bool:
    """An f-string with at least one interpolated value (numbers computed, not typed)."""
    return isinstance(node, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) for v in node.values)


def _markdown_calls(tree: ast.Module) -> list[ast.Call]:
    """Calls ``say(...)`` or ``Markdown(...)`` in the notebooks' headline style."""
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("say", "Markdown")
    ]


def _headline_problems(path: Path) -> list[str]:
    """Why ``path`` has no computed headline: the contents page shows the code cells tagged ``headline``,
    whose Markdown must be an f-string, so that every number in it comes from the notebook's variables."""
    nb = nbformat.read(path, as_version=4)
    tagged = [(i, c) for i, c in enumerate(nb.cells) if "headline" in c.get("metadata", {}).get("tags", [])]
    if not tagged:
        return ["no cell tagged 'headline'"]
    problems = []
    for i, cell in tagged:
        if cell.cell_type != "code":
            problems.append(f"cell {i}: tagged 'headline' but {cell.cell_type}")
            continue
        calls = _markdown_calls(ast.parse(cell.source))
        if not calls:
            problems.append(f"cell {i}: displays no Markdown (say(...) or Markdown(...))")
        problems += [
            f"cell {i}: the Markdown is not an f-string with computed values"
            for call in calls
            if not (call.args and _is_computed_fstring(call.args[0]))
        ]
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_has_computed_headline(path):
    assert _headline_problems(path) == []


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (nbformat.v4.new_code_cell('say(f"delta = {d:.2e}")', metadata={"tags": ["headline"]}), []),
        (nbformat.v4.new_code_cell('say(f"delta = {d:.2e}")'), ["no cell tagged 'headline'"]),
        (
            nbformat.v4.new_code_cell('say("delta = 1.2e-32")', metadata={"tags": ["headline"]}),
            ["cell 0: the Markdown is not an f-string with computed values"],
        ),
        (
            nbformat.v4.new_code_cell('say(f"delta = 1.2e-32")', metadata={"tags": ["headline"]}),
            ["cell 0: the Markdown is not an f-string with computed values"],
        ),
        (
            nbformat.v4.new_code_cell("print(d)", metadata={"tags": ["headline"]}),
            ["cell 0: displays no Markdown (say(...) or Markdown(...))"],
        ),
        (
            nbformat.v4.new_markdown_cell("delta = 1.2e-32", metadata={"tags": ["headline"]}),
            ["cell 0: tagged 'headline' but markdown"],
        ),
    ],
)
def test_headline_check_catches_typed_numbers(tmp_path, cell, expected):
    """The checker above refuses a missing tag and a headline whose numbers are typed by hand."""
    path = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    assert _headline_problems(path) == expected


def _api_violations(path: Path) -> list[str]:
    """Imports of smoothdp_nb other than the package, smoothdp_nb.display and the runtime's CPU
    tools (infrastructure, kept out of the top level), and attributes of these that are not part
    of their public namespace."""
    import smoothdp_nb
    import smoothdp_nb.core.runtime.parallel
    import smoothdp_nb.display

    public = {
        "smoothdp_nb": set(smoothdp_nb.__all__) | PUBLIC_LAZY_LAYERS,
        "smoothdp_nb.display": set(smoothdp_nb.display.__all__),
        "smoothdp_nb.core.runtime.parallel": set(smoothdp_nb.core.runtime.parallel.__all__),
    }
    found = []
    for i, tree in _code_cells(path):
        aliases: dict[str, str] = {}  # local name -> public module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] != "smoothdp_nb":
                        continue
                    if a.name not in public:
                        found.append(f"cell {i}: import {a.name}")
                    elif a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases["smoothdp_nb"] = "smoothdp_nb"  # `import smoothdp_nb.display` binds the package
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "smoothdp_nb":
                if node.module not in public:
                    found.append(f"cell {i}: from {node.module} import ...")
                    continue
                for a in node.names:
                    if a.name not in public[node.module]:
                        found.append(f"cell {i}: from {node.module} import {a.name}")
                    elif f"{node.module}.{a.name}" in public:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                module = aliases[node.value.id]
                if node.attr not in public[module]:
                    found.append(f"cell {i}: {node.value.id}.{node.attr} ({module}.{node.attr} is not public)")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_uses_public_api_only(path):
    """Tutorials teach the public API: ``smoothdp_nb`` and ``smoothdp_nb.display`` (and their public
    names), never ``smoothdp_nb.core`` or another submodule."""
    assert _api_violations(path) == []
    # the notebook does use the package (otherwise the check above would pass vacuously)
    assert any(
        isinstance(n, (ast.Import, ast.ImportFrom))
        and any((getattr(n, "module", None) or a.name).startswith("smoothdp_nb") for a in n.names)
        for _, tree in _code_cells(path)
        for n in ast.walk(tree)
    ), f"{path.name}: does not import smoothdp_nb"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import smoothdp_nb as sdp\nsdp.release", []),
        ("from smoothdp_nb import display as charts\ncharts.render_svg", []),
        ("import smoothdp_nb.core.smoothed.delta as s", ["cell 0: import smoothdp_nb.core.smoothed.delta"]),
        ("from smoothdp_nb.core import privacy_profile", ["cell 0: from smoothdp_nb.core import ..."]),
        ("from smoothdp_nb import core", ["cell 0: from smoothdp_nb import core"]),
        ("import smoothdp_nb as sdp\nsdp.core.x", ["cell 0: sdp.core (smoothdp_nb.core is not public)"]),
        ("from smoothdp_nb import display as d\nd._svg", ["cell 0: d._svg (smoothdp_nb.display._svg is not public)"]),
        ("%load_ext smoothdp_nb\nimport smoothdp_nb.magics", ["cell 0: import smoothdp_nb.magics"]),
    ],
)
def test_public_api_check_catches_private_use(tmp_path, source, expected):
    """The checker above flags each way of reaching past the public API (and only those)."""
    path = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), path)
    assert _api_violations(path) == expected
