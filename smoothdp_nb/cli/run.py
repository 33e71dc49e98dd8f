"""``python -m smoothdp_nb run spec.toml``: the headless twin of ``%%smoothdp``.

Runs the same TOML spec as the magic (through :func:`smoothdp_nb.spec.run_spec`)
and writes

* ``--out report.html``: a self-contained HTML report
  (:func:`smoothdp_nb.reports.run_report.html_report`: title, the spec, the
  summary table, the chart as inline SVG, the text form; no script and no
  remote resource);
* ``--json out.json``: the result's ``to_dict()`` with the spec, for scripts;
* without either, the text form on standard output.

Exit status: 0 on success; 2 with one line on standard error for every user
error -- an invalid spec or option, a value the computation rejects, a
computation refused before it starts (estimated time or memory over budget),
an unreadable spec or data file, a report that cannot be written (the message
names the key and the line, as in the notebook); a genuine bug exits 1 with
its traceback.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from smoothdp_nb.cli.command import Command
from smoothdp_nb.core.runtime.parallel import process_pool
from smoothdp_nb.spec.reference import keys_help

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from smoothdp_nb.reports.run_report import ReportableResult
    from smoothdp_nb.spec import Spec

__all__ = ["COMMAND", "build_parser", "main_run", "run_epilog"]

_EXIT_STATUS = (
    "Without --out or --json the text summary goes to standard output. Exit status: 0 on "
    "success, 2 for an invalid spec or options (the message names the key and the line), 1 when "
    "the computation fails."
)


def run_epilog() -> str:
    """The text after the options in ``run --help``: the spec keys, where the output goes, the exit status.

    The key table is rendered by :func:`smoothdp_nb.spec.reference.keys_help` from its one home
    (:mod:`smoothdp_nb.spec.keys`); ``registries=False`` names the function that lists the noise
    families instead of importing them, so building the parser stays free of numpy and scipy.
    """
    width = max(40, shutil.get_terminal_size().columns - 2)
    # the raw epilog keeps its line breaks: wrap the exit status as argparse wraps the rest of the help
    return keys_help(registries=False, width=width) + "\n\n" + textwrap.fill(_EXIT_STATUS, width=width)


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="path of the TOML spec ('-' reads standard input)")
    p.add_argument("--out", metavar="REPORT.html", help="write a self-contained HTML report")
    p.add_argument("--json", metavar="OUT.json", help="write the result as JSON")
    p.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="run Monte Carlo chunks and sweep points on N worker processes (default: in-process)",
    )
    p.add_argument("--quiet", action="store_true", help="do not print the text summary")


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _read_spec(name: str) -> tuple[str, Path]:
    """The spec's text and the directory its relative data paths start from (OSError, UnicodeDecodeError)."""
    if name == "-":
        return sys.stdin.read(), Path.cwd()
    path = Path(name)
    return path.read_text(encoding="utf-8"), path.resolve().parent


def _write(args: argparse.Namespace, result: ReportableResult, spec: Spec, source: str) -> None:
    from smoothdp_nb.reports.run_report import html_report, json_report  # deferred: numpy, after --help

    if args.out:
        Path(args.out).write_text(html_report(result, spec, source), encoding="utf-8")
    if args.json:
        document = json_report(result, spec)
        Path(args.json).write_text(json.dumps(document, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def handle(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> int:
    """Run the spec of ``args``; returns the exit status (2 with one line on stderr for user errors)."""
    # deferred: the computation's numpy, scipy and pandas only now, --help answers without them
    from smoothdp_nb.core.runtime.budget import cap_workers
    from smoothdp_nb.spec.errors import SpecError
    from smoothdp_nb.spec.parsing import parse_spec
    from smoothdp_nb.spec.running import run_spec

    source = "<stdin>" if args.spec == "-" else str(args.spec)
    try:
        text, base = _read_spec(args.spec)
    except UnicodeDecodeError as exc:
        return _fail(f"cannot read spec {source}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        return _fail(f"cannot read spec {source}: {exc.strerror or exc}")
    try:
        workers = cap_workers(args.workers, "--workers") if args.workers else 0
    except ValueError as exc:
        return _fail(f"{exc} (the CPUs this process may use: affinity and cgroup quota)")
    for flag, target in (("--out", args.out), ("--json", args.json)):
        # refuse before computing, not after
        if target and not Path(target).resolve().parent.is_dir():
            return _fail(f"{flag} {target}: the directory {Path(target).resolve().parent} does not exist")
    try:
        spec = parse_spec(text)
    except SpecError as err:
        return _fail(f"{source}: {err}")
    executor: Executor | None = None
    try:
        if workers > 0:
            executor = process_pool(workers)  # forkserver/spawn: never a fork of this process
        result = run_spec(spec, {}, executor=executor, progress=False, base_dir=base)
    except SpecError as err:  # invalid values, refusals and unreadable files, at their key and line
        return _fail(f"{source}: {err}")
    finally:
        if executor is not None:
            executor.shutdown()
    try:
        _write(args, result, spec, source)
    except OSError as exc:
        return _fail(f"cannot write {exc.filename or 'the report'}: {exc.strerror or exc}")
    if not args.quiet:
        print(str(result))
        for label, target in (("report", args.out), ("json", args.json)):
            if target:
                print(f"{label}: {target}")
    return 0


COMMAND = Command(
    name="run",
    help="run a TOML spec (like a %%%%smoothdp cell): run spec.toml [--out report.html] [--json out.json]",
    description="Run a smoothdp TOML spec (the same as a %%smoothdp cell) and write a report.",
    configure=_configure,
    handle=handle,
    epilog=run_epilog,
    raw_epilog=True,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``run`` subcommand alone."""
    return COMMAND.parser()


def main_run(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m smoothdp_nb run``; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``run`` (default: ``sys.argv[2:]``).
    """
    return COMMAND.main(argv)
