"""The Binder environment: binder/requirements.txt pins a consistent, complete environment.

repo2docker copies the repository into the image and, because a ``binder/``
folder exists, ignores the root ``pyproject.toml`` and runs
``pip install -r binder/requirements.txt`` from the repository root (so the
final ``.`` line installs the package itself).

Fast checks (default run, well under a minute):

* the pins are exact, cover every runtime dependency and satisfy the version
  ranges of ``pyproject.toml``;
* pip's own resolver, run by a Python matching ``binder/runtime.txt`` (3.12)
  when one is installed, accepts the whole file, ``.`` included, with
  ``--dry-run --report`` (package metadata only, nothing installed): the pins
  are mutually consistent and nothing else gets pulled in at another version.
  Needs the package index, like repo2docker itself.

The full rehearsal -- a fresh venv from the file, then
``smoothdp_nb/notebooks/01_quickstart.ipynb`` executed inside it -- takes minutes (mostly
downloads): it is marked ``slow`` and runs in CI's second step
(``pytest -m slow``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
_PIN = re.compile(r"^[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-!]+$")
_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv*",
    "venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
    "reports",
    "_build",  # docs/_build: HTML, MathJax and the notebook cache
    "generated",
)


def _requirements(path: Path = BINDER / "requirements.txt") -> list[str]:
    """The requirement lines, with ``-r file`` includes expanded in place (relative to the file, as pip does)."""
    lines = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("-r "):
            lines += _requirements(path.parent / line[3:].strip())
        elif line:
            lines.append(line)
    return lines


def _top_level(lock: Path) -> set[str]:
    """Packages the lock says it holds because pyproject.toml asks for them (uv's ``# via`` notes)."""
    names, current = set(), None
    for raw in lock.read_text().splitlines():
        if raw and not raw.startswith((" ", "#")):
            current = _name(raw)
        elif current and "smoothdp-nb (pyproject.toml)" in raw:
            names.add(current)
    return names


def _runtime_python() -> tuple[str, str]:
    """(path, note): a Python matching binder/runtime.txt, or the running one."""
    want = (BINDER / "runtime.txt").read_text().strip()  # e.g. "python-3.12"
    version = want.split("-", 1)[1]
    candidates = [shutil.which(f"python{version}")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(str(p) for p in pyenv_root.glob(f"versions/{version}*/bin/python{version}"))
    for c in candidates:
        if not c:
            continue
        try:
            out = subprocess.run(
                [c, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == version:
            return c, f"Python {version} ({c}) as in binder/runtime.txt"
    return sys.executable, (
        f"Python {version} not found: built with the running Python "
        f"{sys.version_info.major}.{sys.version_info.minor} instead"
    )


def test_runtime_pins_python_312():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.12"


def test_requirements_are_exact_pins_and_install_the_repo():
    reqs = _requirements()
    assert reqs[-1] == ".", "the last requirement must be '.' (the package, from the repo root)"
    pinned = reqs[:-1]
    bad = [r for r in pinned if not _PIN.match(r)]
    assert not bad, f"not exact pins: {bad}"
    names = {re.split(r"[=\[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in pinned}
    # every runtime dependency of pyproject.toml, plus the front end
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower().replace("_", "-") for d in deps}
    missing = sorted(wanted - names)
    assert not missing, f"binder/requirements.txt lacks runtime dependencies {missing}"
    assert {"jupyterlab", "ipykernel"} <= names


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower().replace("_", "-")


def test_lock_holds_exactly_what_pyproject_asks_for():
    """The lock's top-level set is pyproject.toml's runtime dependencies plus the `lab` extra, and it
    pins the whole environment (far more than the top level: every transitive dependency)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(d) for d in project["dependencies"] + project["optional-dependencies"]["lab"]}
    lock = BINDER / "requirements.lock"
    assert _top_level(lock) == wanted, "binder/requirements.lock is stale: run python binder/lock.py"
    pins = _requirements(lock)
    assert all(_PIN.match(p) for p in pins) and len(pins) > 3 * len(wanted)


def test_lock_is_current(tmp_path):
    """Re-resolving pyproject.toml with the committed pins as preferences (what `python binder/lock.py`
    does) reproduces the lock byte for byte: any change to the dependencies shows up here.
    Needs uv (the lint extra) and the package index, like repo2docker."""
    pytest.importorskip("uv")
    sys.path.insert(0, str(BINDER))
    try:
        import lock
    finally:
        sys.path.remove(str(BINDER))
    out = tmp_path / "requirements.lock"
    shutil.copy(BINDER / "requirements.lock", out)
    run = subprocess.run(lock.command(out), cwd=ROOT, capture_output=True, text=True, timeout=300)
    if run.returncode != 0 and ("Failed to fetch" in run.stderr or "network" in run.stderr.lower()):
        pytest.skip(f"no package index: {run.stderr.strip()[-300:]}")
    assert run.returncode == 0, run.stderr[-3000:]
    assert out.read_text() == (BINDER / "requirements.lock").read_text(), (
        "binder/requirements.lock is not what pyproject.toml resolves to: run python binder/lock.py"
    )


def test_pins_satisfy_the_pyproject_ranges():
    import tomllib

    from packaging.requirements import Requirement

    pins = {_name(r): r.split("==", 1)[1] for r in _requirements()[:-1]}
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    outside = []
    for dep in map(Requirement, deps):
        version = pins.get(dep.name.lower().replace("_", "-"))
        if version is not None and not dep.specifier.contains(version, prereleases=True):
            outside.append(f"{dep.name}=={version} not in {dep.specifier}")
    assert not outside, f"binder pins outside pyproject.toml's ranges: {outside}"


def test_pip_resolves_the_pins_together(tmp_path):
    python, note = _runtime_python()
    print(note)
    # what pip reads for '.' (the build metadata, the readme, the package) and the requirements, copied
    # so that building the metadata leaves the tree alone
    repo = tmp_path / "repo"
    for name in ("binder", "smoothdp_nb"):
        shutil.copytree(ROOT / name, repo / name, ignore=_IGNORE)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, repo / name)
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    out = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "-r",
            "binder/requirements.txt",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, f"pip cannot resolve binder/requirements.txt ({note}):\n{out.stderr[-3000:]}"
    installed = {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    pins = {_name(r): r.split("==", 1)[1] for r in _requirements()[:-1]}
    wrong = {k: (v, installed.get(k)) for k, v in pins.items() if installed.get(k) != v}
    assert not wrong, f"pip would not install the pinned versions (pin, resolved): {wrong}"
    assert installed.get("smoothdp-nb") == _package_version(), installed.get("smoothdp-nb")
    # Not an assertion (the test environment floats with new releases), but worth reading in -rA
    # output: pins that the notebook tests of this environment did not exercise.
    drift = {}
    for k, v in pins.items():
        try:
            have = importlib.metadata.version(k)
        except importlib.metadata.PackageNotFoundError:
            have = None
        if have != v:
            drift[k] = (v, have)
    print("pins differing from the test environment (pin, here):", drift or "none")


def _package_version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


_RUNNER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import nbformat, nbclient
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    path, kdir = Path(sys.argv[1]), sys.argv[2]
    spec = Path(kdir) / "kernels" / "binder-venv"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "binder venv", "language": "python"}))
    ksm = KernelSpecManager(kernel_dirs=[str(Path(kdir) / "kernels")], ensure_native_kernel=False)
    km = KernelManager(kernel_name="binder-venv", kernel_spec_manager=ksm)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, km=km, kernel_name="binder-venv", timeout=600,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), counts
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    import smoothdp_nb
    print("OK", len(code), "cells;", "smoothdp_nb from", smoothdp_nb.__file__)
    """
)


@pytest.mark.slow
def test_binder_environment_runs_quickstart(tmp_path):
    python, note = _runtime_python()
    print(note)
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=_IGNORE)
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    vpy = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    pip = subprocess.run(
        [vpy, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", "binder/requirements.txt"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert pip.returncode == 0, (
        f"pip install -r binder/requirements.txt failed:\n{pip.stdout[-3000:]}\n{pip.stderr[-3000:]}"
    )
    check = subprocess.run([vpy, "-m", "pip", "check"], env=env, capture_output=True, text=True)
    assert check.returncode == 0, f"inconsistent pins:\n{check.stdout}{check.stderr}"
    runner = tmp_path / "run_quickstart.py"
    runner.write_text(_RUNNER)
    env["SMOOTHDP_CI"] = "1"
    out = subprocess.run(
        [vpy, str(runner), str(repo / "smoothdp_nb" / "notebooks" / "01_quickstart.ipynb"), str(tmp_path / "kernels")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, (
        f"quickstart failed in the Binder venv ({note}):\n{out.stdout[-3000:]}\n{out.stderr[-4000:]}"
    )
    assert "OK" in out.stdout
    # the package came from the copy of the repository (the '.' line), not from elsewhere
    assert str(venv) in out.stdout, out.stdout
