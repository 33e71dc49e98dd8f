"""The command line: ``python -m smoothdp_nb [report | run | gallery | tutorials | docs]``.

One argparse parser with a subcommand per module (:mod:`.report`, :mod:`.run`,
:mod:`.gallery`, :mod:`.tutorials`, :mod:`.docs`); without a subcommand, the
election report; :mod:`.command` is what a subcommand is.  Nothing heavy is imported before the
arguments are parsed, so every ``--help`` answers at once.

May import: everything below it (the spec, the reports, the core, the top-level package); numpy
and the rest only inside a command's handler.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from smoothdp_nb.cli import docs, gallery, report, run, tutorials
from smoothdp_nb.cli.command import PROG
from smoothdp_nb.cli.run import main_run

__all__ = ["build_parser", "main", "main_run", "program_name"]

_COMMANDS = (report.COMMAND, run.COMMAND, tutorials.COMMAND, gallery.COMMAND, docs.COMMAND)


def program_name(argv0: str | None = None) -> str:
    """How the user called the command line: ``smoothdp`` (the installed script) or ``python -m smoothdp_nb``.

    Usage lines and errors name the command the user typed (``usage: smoothdp ...``).
    """
    name = Path(sys.argv[0] if argv0 is None else argv0).name
    return "smoothdp" if name in ("smoothdp", "smoothdp.exe", "smoothdp-script.py") else PROG


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The parser of ``python -m smoothdp_nb`` (or ``prog``) with every subcommand."""
    parser = argparse.ArgumentParser(
        prog=prog,
        # plain text: the module docstrings are reST and would print their markup
        description="Smoothed differential privacy from the command line. Without a subcommand: the "
        "election privacy report (Figure 1 of Smoothed Differential Privacy).",
    )
    sub = parser.add_subparsers(dest="command")
    for command in _COMMANDS:
        command.add_to(sub)
    # no subcommand: the report with its defaults
    parser.set_defaults(handler=report.handle, command_parser=parser, lost=None, threshold=0.51)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m smoothdp_nb`` and of the ``smoothdp`` script; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).
    """
    args = build_parser(program_name()).parse_args(list(sys.argv[1:] if argv is None else argv))
    status: int = args.handler(args, args.command_parser)
    return status
