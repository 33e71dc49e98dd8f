"""One subcommand of ``python -m smoothdp_nb``: its name, texts, arguments and handler.

Every subcommand module defines a :class:`Command`; the top-level parser
(:func:`smoothdp_nb.cli.build_parser`) adds each as an argparse subparser, and
:meth:`Command.main` runs one on its own (``smoothdp_nb.cli.run.main_run``,
``smoothdp_nb.cli.tutorials.main``).  The modules import nothing heavy at
import time: ``--help`` answers before numpy, pandas or Altair is loaded.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["PROG", "Command", "Subparsers", "has_module", "source_root"]

PROG = "python -m smoothdp_nb"

#: a handler gets the parsed arguments and the parser that read them (for ``parser.error``)
Handler = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


class Subparsers(Protocol):
    """What :meth:`Command.add_to` needs of the object ``ArgumentParser.add_subparsers()`` returns
    (argparse gives that class no public name)."""

    def add_parser(
        self,
        name: str,
        *,
        help: str | None = ...,
        description: str | None = ...,
        epilog: str | None = ...,
        formatter_class: type[argparse.HelpFormatter] = ...,
    ) -> argparse.ArgumentParser: ...


@dataclass(frozen=True)
class Command:
    """A subcommand: ``configure`` adds its arguments, ``handle`` runs it and returns the exit status.

    ``epilog`` is called when the parser is built (the text after the options in ``--help``);
    with ``raw_epilog`` its line breaks are kept as written.
    """

    name: str
    help: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    handle: Handler
    epilog: Callable[[], str] | None = None
    raw_epilog: bool = False

    def _options(self) -> dict[str, object]:
        options: dict[str, object] = {"description": self.description}
        if self.epilog is not None:
            options["epilog"] = self.epilog()
        if self.raw_epilog:
            options["formatter_class"] = argparse.RawDescriptionHelpFormatter
        return options

    def add_to(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        """Add this command to the subparsers of the top-level parser."""
        parser = subparsers.add_parser(self.name, help=self.help, **self._options())  # type: ignore[arg-type]
        self.configure(parser)
        parser.set_defaults(handler=self.handle, command_parser=parser)
        return parser

    def parser(self) -> argparse.ArgumentParser:
        """A parser for this command alone (``prog``: ``python -m smoothdp_nb NAME``)."""
        parser = argparse.ArgumentParser(prog=f"{PROG} {self.name}", **self._options())  # type: ignore[arg-type]
        self.configure(parser)
        return parser

    def main(self, argv: Sequence[str] | None = None) -> int:
        """Parse ``argv`` (the arguments after the subcommand's name) and run; returns the exit status."""
        parser = self.parser()
        args = parser.parse_args(list(argv) if argv is not None else sys.argv[2:])
        return self.handle(args, parser)


def has_module(name: str) -> bool:
    """True when ``name`` can be imported in this environment (without importing it)."""
    return importlib.util.find_spec(name) is not None


def source_root() -> Path | None:
    """The repository root when the package runs from a clone (editable install or PYTHONPATH), else None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None
