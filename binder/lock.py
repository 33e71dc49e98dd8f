"""Regenerate ``binder/requirements.lock``: the full Binder environment, resolved from pyproject.toml.

The lock holds every package repo2docker installs (the runtime dependencies of pyproject.toml,
the ``lab`` extra and everything they pull in), each pinned exactly, resolved by uv for
Python 3.12 on Linux (``binder/runtime.txt``).  ``binder/requirements.txt`` installs it and
then the package itself.

    python binder/lock.py              # after editing pyproject.toml: keeps the pins it can
    python binder/lock.py --upgrade    # every pin to the newest release the ranges allow

uv keeps the versions already in the output file unless pyproject.toml asks otherwise, so the
same command re-run on an unchanged pyproject.toml reproduces the file byte for byte: the test
``tests/notebooks/test_binder.py::test_lock_is_current`` re-runs it into a copy and compares.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "binder" / "requirements.lock"
#: the extras Binder needs beside the runtime dependencies (JupyterLab and a kernel)
EXTRAS = ("lab",)
PYTHON = "3.12"  # binder/runtime.txt
PLATFORM = "x86_64-unknown-linux-gnu"  # repo2docker images


def command(output: Path, upgrade: bool = False) -> list[str]:
    """The uv command that writes the lock to ``output``."""
    cmd = [sys.executable, "-m", "uv", "pip", "compile", str(ROOT / "pyproject.toml")]
    for extra in EXTRAS:
        cmd += ["--extra", extra]
    cmd += [
        "--python-version",
        PYTHON,
        "--python-platform",
        PLATFORM,
        "--custom-compile-command",
        "python binder/lock.py",
        "--quiet",
        "--output-file",
        str(output),
    ]
    return cmd + (["--upgrade"] if upgrade else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate binder/requirements.lock from pyproject.toml (uv).")
    parser.add_argument("--output", type=Path, default=LOCK, help="where to write (default: binder/requirements.lock)")
    parser.add_argument("--upgrade", action="store_true", help="move every pin to the newest allowed release")
    args = parser.parse_args(argv)
    return subprocess.call(command(args.output, args.upgrade), cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
