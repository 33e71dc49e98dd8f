"""Headless twin of ``%%smoothdp``: ``python -m smoothdp_nb run spec.toml``.

Runs the same TOML spec as the magic (through :func:`smoothdp_nb.spec.run_spec`)
and writes

* ``--out report.html``: a self-contained HTML report (title, the spec, the
  summary table, the chart as inline SVG rendered by ``vl_convert``, the text
  form); it loads no script and no remote resource, so it can be archived as
  a CI artefact or mailed;
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
import datetime as _dt
import html
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .spec import Spec

__all__ = ["main_run", "build_parser", "html_report", "json_report"]

_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
pre { background: #f6f6f6; padding: 0.75rem; overflow-x: auto; font-size: 0.85rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { padding: 0.2rem 0.6rem; text-align: right; border-bottom: 1px solid #ddd; }
th { background: #f0f0f0; }
.meta { color: #666; font-size: 0.85rem; }
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``run`` subcommand."""
    p = argparse.ArgumentParser(
        prog="python -m smoothdp_nb run",
        description="Run a smoothdp TOML spec (the same as a %%smoothdp cell) and write a report.",
        epilog="Without --out or --json the text summary goes to standard output. Exit status: 0 on "
        "success, 2 for an invalid spec or options (the message names the key and the line), 1 when "
        "the computation fails.",
    )
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
    return p


def _jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, non-finite floats (-> None) and other objects for json."""
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (_dt.date, _dt.time)):
        return obj.isoformat()
    return str(obj)


def json_report(result: Any, spec: Spec) -> dict:
    """The JSON document: title, computation, spec and ``result.to_dict()``."""
    from . import __version__

    return _jsonable(
        {
            "title": spec.title,
            "compute": spec.compute,
            "spec": spec.raw,
            "result": result.to_dict(),
            "summary": str(result),
            "smoothdp_nb_version": __version__,
        }
    )


def html_report(result: Any, spec: Spec, source: str = "") -> str:
    """A self-contained HTML page for one result (no scripts, no remote resources).

    Parameters
    ----------
    result : result object
        Anything with ``_repr_mimebundle_`` (summary and inline SVG chart) and ``str``.
    spec : Spec
        The validated spec: its title, and its TOML as :attr:`Spec.text` (re-written from the parsed
        spec with the private data replaced by a placeholder; comments and layout of the source are
        not kept, so nothing in them can reach the report).
    source : str
        Where the spec came from (shown in the header).

    Returns
    -------
    str
    """
    from . import __version__

    bundle = result._repr_mimebundle_()
    body = bundle.get("text/html") or f"<pre>{html.escape(str(result))}</pre>"
    # rendered from the parsed spec with its private fields replaced (Spec.text), never from the source
    spec_text = spec.text
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = html.escape(spec.title)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{title}</title>",
            f"<style>{_CSS}</style></head><body>",
            f"<h1>{title}</h1>",
            f'<p class="meta">computation: {html.escape(spec.compute)}'
            + (f" · spec: {html.escape(source)}" if source else "")
            + f" · smoothdp_nb {html.escape(__version__)} · {stamp}</p>",
            "<h2>Result</h2>",
            body,
            "<h2>Summary</h2>",
            f"<pre>{html.escape(str(result))}</pre>",
            "<h2>Spec</h2>",
            f"<pre>{html.escape(spec_text)}</pre>",
            "</body></html>",
        ]
    )


def main_run(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m smoothdp_nb run``; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``run`` (default: ``sys.argv[2:]``).
    """
    args = build_parser().parse_args(list(argv) if argv is not None else sys.argv[2:])
    # the computation's imports (numpy, scipy, pandas) only now: --help answers without them
    from .core.budget import cap_workers
    from .spec import SpecError, parse_spec, run_spec

    source = "<stdin>" if args.spec == "-" else str(args.spec)

    def fail(message: str) -> int:
        print(f"error: {message}", file=sys.stderr)
        return 2

    try:
        if args.spec == "-":
            text, base = sys.stdin.read(), Path.cwd()
        else:
            path = Path(args.spec)
            text = path.read_text(encoding="utf-8")
            base = path.resolve().parent
    except UnicodeDecodeError as exc:
        return fail(f"cannot read spec {source}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        return fail(f"cannot read spec {source}: {exc.strerror or exc}")
    try:
        workers = cap_workers(args.workers, "--workers") if args.workers else 0
    except ValueError as exc:
        return fail(f"{exc} (the CPUs this process may use: affinity and cgroup quota)")
    for flag, target in (("--out", args.out), ("--json", args.json)):
        # refuse before computing, not after
        if target and not Path(target).resolve().parent.is_dir():
            return fail(f"{flag} {target}: the directory {Path(target).resolve().parent} does not exist")
    try:
        spec = parse_spec(text)
    except SpecError as err:
        return fail(f"{source}: {err}")
    executor = None
    try:
        if workers > 0:
            from .core.parallel import process_pool

            executor = process_pool(workers)  # forkserver/spawn: never a fork of this process
        result = run_spec(spec, {}, executor=executor, progress=False, base_dir=base)
    except SpecError as err:  # invalid values, refusals and unreadable files, at their key and line
        return fail(f"{source}: {err}")
    finally:
        if executor is not None:
            executor.shutdown()
    try:
        if args.out:
            Path(args.out).write_text(html_report(result, spec, source), encoding="utf-8")
        if args.json:
            Path(args.json).write_text(
                json.dumps(json_report(result, spec), indent=2, allow_nan=False) + "\n", encoding="utf-8"
            )
    except OSError as exc:
        return fail(f"cannot write {exc.filename or 'the report'}: {exc.strerror or exc}")
    if not args.quiet:
        print(str(result))
        for label, target in (("report", args.out), ("json", args.json)):
            if target:
                print(f"{label}: {target}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_run(sys.argv[1:]))
