"""``python -m smoothdp_nb tutorials``: the tutorial notebooks, headless into HTML reports or in JupyterLab.

``--out DIR`` executes every ``NN_*.ipynb`` notebook shipped in the package
(found with :mod:`importlib.resources`, so from any directory) and writes the
handouts and their contents page (:func:`smoothdp_nb.reports.runner.run_all`);
``--ci`` sets ``SMOOTHDP_CI=1`` (each notebook's ``parameters`` cell then uses
small sizes).  ``--lab`` launches JupyterLab on the notebooks instead (the
``lab`` extra); from an installed package it opens copies in
``./smoothdp-tutorials``.  Needs the ``tutorials`` extra.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from smoothdp_nb.cli.command import Command, has_module, source_root

__all__ = ["COMMAND", "main"]

_TUTORIALS_EXTRA = ("nbclient", "nbformat", "ipykernel", "markdown_it", "mdit_py_plugins", "latex2mathml")


def _numbers(notebooks: list[Path]) -> str:
    """``01..07`` (a run of consecutive numbers) or ``01, 03, 07``."""
    nums = sorted({p.name[:2] for p in notebooks})
    if not nums:
        return "none"
    consecutive = [int(n) for n in nums] == list(range(int(nums[0]), int(nums[0]) + len(nums)))
    return f"{nums[0]}..{nums[-1]}" if consecutive and len(nums) > 2 else ", ".join(nums)


def _selected(args: argparse.Namespace) -> list[Path] | str:
    """The notebooks ``--only`` picks from ``--notebooks``, or the message saying why there are none."""
    from smoothdp_nb.reports.runner import find_notebooks  # deferred: asyncio and the notebook runner, after --help

    every = find_notebooks(args.notebooks)
    if not every:
        return f"no notebooks NN_*.ipynb in {args.notebooks}"
    nbs = find_notebooks(args.notebooks, args.only)
    unknown = [o for o in args.only or [] if not find_notebooks(args.notebooks, [o])]
    if unknown or not nbs:
        which = ", ".join(unknown) if unknown else " ".join(args.only or [])
        return f"no notebook numbered {which}; available: {_numbers(every)} (e.g. --only {every[0].name[:2]})"
    return nbs


def _run(args: argparse.Namespace) -> int:
    missing = [m for m in _TUTORIALS_EXTRA if not has_module(m)]
    if missing:
        print(f'missing {", ".join(missing)}: pip install "smoothdp_nb[tutorials]"', file=sys.stderr)
        return 2
    if Path(args.out).exists() and not Path(args.out).is_dir():
        print(f"--out must be a directory, got the file {args.out}", file=sys.stderr)
        return 2
    nbs = _selected(args)
    if isinstance(nbs, str):
        print(nbs, file=sys.stderr)
        return 2
    from smoothdp_nb.reports.runner import run_all  # deferred: asyncio and the notebook runner, after --help

    try:
        failed = run_all(nbs, Path(args.out), ci=args.ci, timeout=args.timeout, jobs=args.jobs)
    except KeyboardInterrupt:
        print(f"interrupted; the reports finished so far are in {Path(args.out).resolve()}", file=sys.stderr)
        return 130
    return 1 if failed else 0


def _lab(args: argparse.Namespace) -> int:
    from smoothdp_nb.reports.runner import find_notebooks  # deferred: asyncio and the notebook runner, after --help

    # JupyterLab runs as `python -m jupyterlab` of this interpreter: a `jupyter` command elsewhere
    # on PATH does not count (it left "No module named jupyterlab" in an activated venv)
    if not has_module("jupyterlab"):
        print(
            "JupyterLab is not installed in this environment "
            f'({sys.prefix}): pip install "smoothdp_nb[lab]" (or pip install jupyterlab)',
            file=sys.stderr,
        )
        return 2
    where = Path(args.notebooks)
    if args.shipped and source_root() is None:
        # the installed copies stay pristine: open (and edit) a copy in the working directory
        where = Path(args.workdir).resolve()
        where.mkdir(parents=True, exist_ok=True)
        for nb in find_notebooks(args.notebooks):
            if not (where / nb.name).exists():
                shutil.copy2(nb, where / nb.name)
        print(f"the tutorials are in {where} (copies; existing files are kept)", file=sys.stderr)
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={where}"]
    nbs = find_notebooks(where)
    if nbs:
        cmd.append(str(nbs[0].name))
    return subprocess.call(cmd, cwd=where)


def _positive_int(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer (>= 1), got {value}")
        return value

    return parse


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="reports", help="directory for the HTML reports (default: reports/)")
    parser.add_argument(
        "--notebooks",
        type=Path,
        default=None,
        help="notebook directory (default: the notebooks installed with the package)",
    )
    parser.add_argument(
        "--workdir",
        default="smoothdp-tutorials",
        help="--lab on an installed package: where the notebooks are copied to be opened "
        "(default: ./smoothdp-tutorials)",
    )
    parser.add_argument("--only", nargs="*", help="notebook prefixes to run, e.g. 01 03")
    parser.add_argument("--ci", action="store_true", help="small parameters (sets SMOOTHDP_CI=1)")
    parser.add_argument("--timeout", type=_positive_int("--timeout"), default=1800, help="per-cell timeout in seconds")
    parser.add_argument(
        "--jobs",
        type=_positive_int("--jobs"),
        default=None,
        help="notebooks executed at once, each in its own kernel (default: the CPUs this process may use)",
    )
    parser.add_argument("--lab", action="store_true", help="launch JupyterLab on the notebooks instead")


def handle(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> int:
    """Run the notebooks into reports, or open JupyterLab (``--lab``); returns the exit status."""
    from smoothdp_nb.reports.runner import shipped_notebooks  # deferred: asyncio and the notebook runner, after --help

    args.shipped = args.notebooks is None
    args.notebooks = Path(args.notebooks or shipped_notebooks()).resolve()
    return _lab(args) if args.lab else _run(args)


COMMAND = Command(
    name="tutorials",
    help="execute the tutorial notebooks into HTML reports (--out DIR, --ci, --jobs N) or open JupyterLab (--lab)",
    description="Run the tutorial notebooks shipped with the package: headless into HTML reports, "
    "or open them in JupyterLab (--lab).",
    configure=_configure,
    handle=handle,
)
main = COMMAND.main
