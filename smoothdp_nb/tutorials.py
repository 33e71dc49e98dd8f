"""Run the tutorial notebooks: headless into HTML reports, or open them in JupyterLab.

``python -m smoothdp_nb.tutorials --out reports/`` (or, once hooked into
``python -m smoothdp_nb tutorials --out reports/``) executes every
``notebooks/NN_*.ipynb`` top to bottom in a fresh kernel of the running
interpreter and writes ``reports/NN_*.html`` plus ``reports/index.html``.
``--ci`` sets ``SMOOTHDP_CI=1`` (each notebook's ``parameters`` cell then uses
small sizes).  ``--lab`` launches JupyterLab on the notebooks instead (the
``lab`` extra: ``pip install "smoothdp_nb[lab]"``).

Needs ``nbclient``, ``nbformat`` and ``ipykernel``.  HTML is written by a
small built-in renderer rather than nbconvert, whose default template loads
require.js and MathJax from a CDN: the reports must open offline, and the
charts are static SVG in the outputs.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main", "find_notebooks", "execute", "to_html"]


def _default_dir() -> Path:
    """notebooks/ beside the package (a source checkout), else ./notebooks."""
    here = Path(__file__).resolve().parents[1] / "notebooks"
    return here if here.is_dir() else Path.cwd() / "notebooks"


def find_notebooks(directory: Path, only: list[str] | None = None) -> list[Path]:
    nbs = sorted(Path(directory).glob("[0-9][0-9]_*.ipynb"))
    if only:
        nbs = [p for p in nbs if any(p.name.startswith(o) or p.stem == o for o in only)]
    return nbs


def _kernel_dir() -> tuple[Path, str]:
    """A temporary kernelspec pointing at this interpreter (so the notebooks see this install)."""
    d = Path(tempfile.mkdtemp(prefix="smoothdp-kernel-"))
    name = "smoothdp-tutorials"
    spec = d / "kernels" / name
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "smoothdp tutorials", "language": "python",
    }))
    return d, name


def execute(path: Path, kernel_dir: Path, kernel_name: str, timeout: int = 1800, env: dict | None = None):
    """Execute one notebook in a fresh kernel; returns the executed notebook (raises on error)."""
    import nbclient
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    nb = nbformat.read(path, as_version=4)
    ksm = KernelSpecManager(kernel_dirs=[str(kernel_dir / "kernels")], ensure_native_kernel=False)
    km = KernelManager(kernel_name=kernel_name, kernel_spec_manager=ksm)
    client = nbclient.NotebookClient(nb, km=km, kernel_name=kernel_name, timeout=timeout,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute(env={**os.environ, **(env or {})})
    code = [c for c in nb.cells if c.cell_type == "code"]
    missing = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    if missing:
        raise RuntimeError(f"{path.name}: code cells {missing} did not run")
    return nb


def _render_output(out) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return f"<pre class='stream'>{html.escape(out.get('text', ''))}</pre>"
    if kind == "error":
        return f"<pre class='error'>{html.escape(out.get('ename', ''))}: {html.escape(out.get('evalue', ''))}</pre>"
    data = out.get("data", {})
    if "image/svg+xml" in data:
        return f"<div>{data['image/svg+xml']}</div>"
    if "text/html" in data:
        return f"<div>{data['text/html']}</div>"
    if "text/markdown" in data:
        return f"<pre class='md'>{html.escape(data['text/markdown'])}</pre>"
    if "text/plain" in data:
        return f"<pre>{html.escape(data['text/plain'])}</pre>"
    return ""


def _simple_html(nb, title: str) -> str:
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
             "pre{background:#f6f6f6;padding:.5em;overflow-x:auto}.src{border-left:3px solid #4c78a8}</style>"]
    for c in nb.cells:
        if c.cell_type == "markdown":
            parts.append(f"<pre class='md'>{html.escape(c.source)}</pre>")
        elif c.cell_type == "code":
            parts.append(f"<pre class='src'>{html.escape(c.source)}</pre>")
            parts.extend(_render_output(o) for o in c.get("outputs", []))
    return "\n".join(parts)


def to_html(nb, title: str) -> str:
    """Self-contained HTML of an executed notebook (no remote scripts or styles)."""
    return _simple_html(nb, title)


def _run(args) -> int:
    try:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
        import ipykernel  # noqa: F401
    except ImportError as exc:
        print(f"missing {exc.name}: pip install nbclient nbformat ipykernel (or the 'lab' extra)", file=sys.stderr)
        return 2
    nbs = find_notebooks(args.notebooks, args.only)
    if not nbs:
        print(f"no notebooks NN_*.ipynb in {args.notebooks}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kdir, kname = _kernel_dir()
    env = {"SMOOTHDP_CI": "1"} if args.ci else {}
    rows, failed = [], 0
    try:
        for p in nbs:
            t0 = time.perf_counter()
            try:
                nb = execute(p, kdir, kname, timeout=args.timeout, env=env)
                (out / f"{p.stem}.html").write_text(to_html(nb, p.stem), encoding="utf-8")
                status = "ok"
            except Exception as exc:  # report and continue with the next notebook
                failed += 1
                status = f"FAILED: {type(exc).__name__}: {str(exc).splitlines()[-1] if str(exc) else ''}"
            dt = time.perf_counter() - t0
            print(f"{p.name:<32} {dt:7.1f} s  {status}", flush=True)
            rows.append((p.stem, dt, status))
    finally:
        shutil.rmtree(kdir, ignore_errors=True)
    items = "".join(
        f"<li><a href='{html.escape(s)}.html'>{html.escape(s)}</a> — {dt:.1f} s — {html.escape(st)}</li>"
        for s, dt, st in rows
    )
    (out / "index.html").write_text(
        f"<!doctype html><meta charset='utf-8'><title>smoothdp_nb tutorials</title><h1>smoothdp_nb tutorials</h1><ul>{items}</ul>",
        encoding="utf-8",
    )
    print(f"reports in {out.resolve()}/index.html")
    return 1 if failed else 0


def _lab(args) -> int:
    if shutil.which("jupyter") is None and not _has_module("jupyterlab"):
        print('JupyterLab is not installed: pip install "smoothdp_nb[lab]" (or pip install jupyterlab)', file=sys.stderr)
        return 2
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={args.notebooks}"]
    nbs = find_notebooks(args.notebooks)
    if nbs:
        cmd.append(str(nbs[0].name))
    return subprocess.call(cmd, cwd=args.notebooks)


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m smoothdp_nb tutorials", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports", help="directory for the HTML reports (default: reports/)")
    parser.add_argument("--notebooks", type=Path, default=None, help="notebook directory (default: the repository's notebooks/)")
    parser.add_argument("--only", nargs="*", help="notebook prefixes to run, e.g. 01 03")
    parser.add_argument("--ci", action="store_true", help="small parameters (sets SMOOTHDP_CI=1)")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    parser.add_argument("--lab", action="store_true", help="launch JupyterLab on the notebooks instead")
    args = parser.parse_args(argv)
    args.notebooks = Path(args.notebooks or _default_dir()).resolve()
    return _lab(args) if args.lab else _run(args)


if __name__ == "__main__":
    sys.exit(main())
