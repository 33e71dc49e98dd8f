"""``python -m smoothdp_nb docs``: build the documentation site, or say where the built one is.

``docs --out DIR`` builds the HTML site with Sphinx from the ``docs/`` folder of
a source checkout (or ``--source DIR``) into DIR; ``--strict`` turns warnings
into errors, as the CI does.  Without ``--out``, the command prints where the
built site's ``index.html`` is (``docs/_build/html``, where the CI builds it);
``--open`` opens it in the web browser.  Building needs the ``docs`` extra
(``pip install "smoothdp_nb[docs]"``); the message names it when a part is
missing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from smoothdp_nb.cli.command import Command, has_module, source_root

__all__ = ["COMMAND", "DOCS_EXTRA", "main"]

#: modules of the ``docs`` extra that the Sphinx configuration loads
DOCS_EXTRA = (
    "sphinx",
    "pydata_sphinx_theme",
    "numpydoc",
    "myst_nb",
    "jupyter_cache",
    "sphinx-mathjax-offline",
    "sphinx_copybutton",
    "nbclient",
    "nbformat",
    "ipykernel",
)


def _source(args: argparse.Namespace) -> Path | None:
    if args.source is not None:
        return Path(args.source).resolve()
    root = source_root()
    return root / "docs" if root is not None else None


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, metavar="DIR", help="build the HTML site into DIR (with Sphinx)")
    parser.add_argument(
        "--source",
        type=Path,
        metavar="DIR",
        help="the documentation sources (default: docs/ of the source checkout this package runs from)",
    )
    parser.add_argument("--strict", action="store_true", help="with --out: warnings are errors (as in CI)")
    parser.add_argument("--open", action="store_true", help="open the built site in the web browser")


def _build(source: Path, out: Path, strict: bool) -> int:
    missing = [m for m in DOCS_EXTRA if not has_module(m)]
    if missing:
        print(
            f'building the documentation needs the "docs" extra (missing {", ".join(missing)}): '
            'pip install "smoothdp_nb[docs]"',
            file=sys.stderr,
        )
        return 2
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", *(["-W", "--keep-going"] if strict else [])]
    # Sphinx in its own process: the build executes the tutorials and renders the gallery
    status = subprocess.call([*cmd, str(source), str(out)])
    if status != 0:
        print(f"sphinx-build failed (exit status {status})", file=sys.stderr)
        return 1
    return 0


def handle(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> int:
    """Build the site (``--out``) or print where the built one is; ``--open`` opens it."""
    source = _source(args)
    if args.out is not None:
        if source is None or not (source / "conf.py").is_file():
            where = source if source is not None else "this installation (the sources are in the repository)"
            print(f"no documentation sources (docs/conf.py) in {where}: pass --source DIR", file=sys.stderr)
            return 2
        status = _build(source, args.out.resolve(), args.strict)
        if status:
            return status
        site = args.out.resolve()
    elif source is not None:
        site = source / "_build" / "html"
    else:
        print("no built documentation here: build it with --out DIR from a source checkout", file=sys.stderr)
        return 2
    index = site / "index.html"
    if not index.is_file():
        print(f"the documentation is not built yet ({index} is missing): build it with --out {site}", file=sys.stderr)
        return 1
    print(index)
    if args.open:
        import webbrowser  # deferred: loads the platform's browser launchers, only for --open

        webbrowser.open(index.as_uri())
    return 0


COMMAND = Command(
    name="docs",
    help="build the documentation site with Sphinx (--out DIR) or print where the built site is (--open)",
    description="Build the documentation site (HTML, offline) with Sphinx into DIR, or print where the "
    'built site is and open it. Building needs the "docs" extra: pip install "smoothdp_nb[docs]".',
    configure=_configure,
    handle=handle,
)
main = COMMAND.main
