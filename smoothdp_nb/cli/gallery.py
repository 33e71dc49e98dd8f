"""``python -m smoothdp_nb gallery --out DIR``: every chart builder on example data, as SVG and PNG.

The figures and the index page are :mod:`smoothdp_nb.reports.gallery`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from smoothdp_nb.cli.command import Command

__all__ = ["COMMAND", "main"]


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, type=Path, help="directory for the SVG, PNG and index.html files")
    # the figure names live beside their builders, which load numpy and Altair: --help does not list them,
    # an unknown name does (with every choice)
    parser.add_argument("--only", nargs="*", metavar="NAME", help="render only these figures (default: all)")
    parser.add_argument("--scale", type=float, default=2.0, help="PNG pixels per chart pixel (default 2)")


def handle(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Render the gallery into ``args.out``; a bad ``--scale`` or figure name is a usage error (exit 2)."""
    from smoothdp_nb.reports.gallery import build  # deferred: the figures load numpy and Altair; --help does not

    if args.scale <= 0:
        parser.error(f"--scale must be > 0, got {args.scale}")
    try:
        records = build(args.out, args.only, args.scale)
    except ValueError as err:
        parser.error(str(err))
    print(f"{len(records)} figures in {args.out / 'index.html'}")
    return 0


COMMAND = Command(
    name="gallery",
    help="render every chart builder to SVG and PNG with an index page: gallery --out DIR",
    # plain text: the module docstring is reST and would print its markup
    description="Render every chart builder of the package on small example data, as SVG and PNG "
    "(offline, by vl-convert), with an index page DIR/index.html showing them all.",
    configure=_configure,
    handle=handle,
)
main = COMMAND.main
