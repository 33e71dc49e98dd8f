"""IPython magics ``%%smoothdp`` and ``%smoothdp``: a TOML spec in, a result object out.

The magic is thin: it parses its options, hands the TOML to
:func:`smoothdp_nb.spec.run_spec` together with the user namespace, and
displays the result.  Load it with ``%load_ext smoothdp_nb`` (or
``%load_ext smoothdp_nb.magics``).
"""

from __future__ import annotations

import concurrent.futures as cf
import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from smoothdp_nb.spec import SpecError, keys_rst, parse_toml, run_spec

__all__ = ["SmoothDPMagics", "load_ipython_extension", "unload_ipython_extension", "line_to_toml"]

P = ParamSpec("P")
R = TypeVar("R")

# Where the spec starts on a magic line: the first ``key =`` (bare, dotted or quoted) or an inline table.
_SPEC_START = re.compile(r"""(^|\s)(\{|[A-Za-z_][A-Za-z0-9_.-]*\s*=|(?:"[^"\n]*"|'[^'\n]*')\s*[.=])""")


def _split_top_level(text: str, sep: str = ";") -> list[str]:
    """Split at ``sep`` outside quotes, brackets and braces.

    Follows TOML's strings: in a basic string ("...") a backslash escapes the
    next character (``"a\\"; b"`` is one string); a literal string ('...') has
    no escapes.
    """
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def line_to_toml(text: str) -> str:
    """Turn the one-line form into TOML.

    ``key = value; key = value`` becomes one key per line; an inline table
    ``{key = value, ...}`` becomes its keys.

    Examples
    --------
    >>> print(line_to_toml('compute = "noise"; epsilon = 1; gamma = [0.1, 0.2]'))
    compute = "noise"
    epsilon = 1
    gamma = [0.1, 0.2]
    """
    s = text.strip()
    if s.startswith("{"):
        return f"__spec__ = {s}"
    return "\n".join(_split_top_level(s))


_MAGIC_DOC = """Run one smoothed-DP computation described in TOML and display the result.

Cell form: options on the magic line, the TOML spec in the cell::

    %%smoothdp -o prof
    compute = "profile"
    dataset = "us-elections"      # every election 1920-2020, labels = years
    epsilon = [0.04, 0.1]
    [mechanism]
    eta = "0.998"                 # sampling rate (a string keeps it exact)

Line form: ``key = value`` pairs separated by ``;`` (or one inline
table ``{...}``) after the options::

    %smoothdp -o nc compute = "noise"; epsilon = 1; gamma = {start = 0.01, stop = 0.5, num = 50}; delta = 1e-5

The result is displayed as a summary table with an Altair chart
(rendered offline as SVG); ``-o NAME`` keeps the object
(``.to_frame()``, ``.to_dict()``, ``.chart()``).  Names in the spec
(``mechanism``, ``pi``, ``data``) refer to the notebook's variables, so
any mechanism object works (a ``FiniteMechanism``, ``postprocess(...)``,
``repeat(...)``).  Define it in a Python cell::

    import smoothdp_nb as sdp

    mech = sdp.postprocess(sdp.SamplingHistogram(eta=0.5), lambda h: h[0] > h[1])

and name it in the next cell::

    %%smoothdp
    compute = "smoothed"
    mechanism = "mech"
    n = 60
    pi = [[0.4, 0.6], [0.6, 0.4]]
    epsilon = [0.5, 1.0]

The smoothed delta over a range of sizes (a sweep) on the 2020 districts::

    %%smoothdp
    compute = "sweep"
    pi = "us-2020-districts"
    n = {start = 100, stop = 2000, num = 8, log = true}
    epsilon = [0.5, 1.0]
    mechanism = {eta = 0.5}

A Monte Carlo estimate, its chunks run by an executor of the notebook::

    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(2)

and in the next cell::

    %%smoothdp --executor pool -o mc
    compute = "smoothed"
    method = "monte-carlo"
    trials = 2000
    rng = 1
    n = 1000
    pi = [[0.45, 0.55], [0.55, 0.45]]
    epsilon = 0.5
    mechanism = {eta = 0.9}

A private release of a column of a DataFrame of the notebook::

    import numpy as np
    import pandas as pd

    df = pd.DataFrame({"income": np.random.default_rng(0).lognormal(10.5, 0.8, 1001)})

and in the next cell::

    %smoothdp compute = "release"; data = "df"; column = "income"; bounds = [0, 500000]; epsilon = 1

Every error caused by the spec -- unknown keys, values out of range,
TOML syntax, a value the computation rejects, a computation refused
because its estimated time or memory is over budget, an unreadable
file -- is reported as one line naming the key and its line (no
traceback); only genuine bugs show a traceback.  The same spec runs headless with
``python -m smoothdp_nb run spec.toml --out report.html``.

The keys below are generated from the spec's key table
(:mod:`smoothdp_nb.spec.keys`).

"""


def _documented(func: Callable[P, R]) -> Callable[P, R]:
    """The magic's docstring: the prose above and the key reference rendered from the key table.

    Rendered once, when the magic is defined: a noise family registered later
    is accepted by the spec but listed here only after a reload.
    """
    func.__doc__ = _MAGIC_DOC + keys_rst()
    return func


@magics_class
class SmoothDPMagics(Magics):
    """The ``smoothdp`` line and cell magics."""

    @magic_arguments()
    @argument("-o", "--output", metavar="NAME", help="store the result object in the user namespace as NAME")
    @argument("--no-chart", action="store_true", help="display the text and summary table only")
    @argument("--table", action="store_true", help="also display the full tidy table (result.to_frame())")
    @argument(
        "--executor",
        metavar="NAME",
        help="a concurrent.futures.Executor in the user namespace; runs Monte Carlo chunks and sweep points",
    )
    @_documented
    @line_cell_magic
    def smoothdp(self, line: str = "", cell: str | None = None) -> None:
        shell = self.shell
        if shell is None:  # the magics are registered on a shell; a bare Magics() has none
            raise UsageError("%smoothdp runs inside IPython (load it with %load_ext smoothdp_nb)")
        if cell is None:
            m = _SPEC_START.search(line)
            opts_text, spec_text = (line[: m.start()], line[m.start() :]) if m else (line, "")
            if not spec_text.strip():
                raise UsageError(
                    "%smoothdp needs a spec after the options, e.g. "
                    '%smoothdp compute = "noise"; epsilon = 1; gamma = 0.1; delta = 1e-5 '
                    "(see %smoothdp? for the reference)"
                )
            toml_text = line_to_toml(spec_text)
        else:
            opts_text, toml_text = line, cell
        args = None
        try:
            args = parse_argstring(self.smoothdp, opts_text)
        except (UsageError, SystemExit, ValueError):  # argparse's errors; shlex on unbalanced quotes
            pass
        if args is None:
            # never the text, and raised outside the handler so that no __context__ carries argparse's
            # message: when the spec's start is not recognised, the "options" are the spec, records included
            raise UsageError(
                "%smoothdp: invalid options before the spec (allowed: -o NAME, --no-chart, --table, "
                "--executor NAME; the spec starts at its first key = value; see %smoothdp?)"
            )
        executor = None
        if args.executor:
            if args.executor not in shell.user_ns:
                raise UsageError(f"--executor: no variable {args.executor!r} in the notebook")
            executor = shell.user_ns[args.executor]
            if not isinstance(executor, cf.Executor):
                hint = " (for a Dask client use client.get_executor())" if hasattr(executor, "get_executor") else ""
                raise UsageError(
                    f"--executor: {args.executor!r} is a {type(executor).__name__}, "
                    f"not a concurrent.futures.Executor{hint}"
                )
        spec: Any = toml_text
        if cell is None and toml_text.startswith("__spec__ = "):
            try:
                spec = parse_toml(toml_text)["__spec__"]
            except SpecError as err:
                raise UsageError(f"%smoothdp: {err}") from None
        try:
            result = run_spec(spec, shell.user_ns, executor=executor)
        except SpecError as err:
            raise UsageError(f"%smoothdp: {err}") from None
        if args.output:
            shell.user_ns[args.output] = result
        _show(result, chart=not args.no_chart, table=args.table)


def _show(result: Any, chart: bool, table: bool) -> None:
    """Display a result: rich (chart and summary), or summary only, plus the table."""
    from smoothdp_nb.display import summary_bundle  # deferred: Altair, with the first result shown

    if chart:
        display(result)
    else:
        display(summary_bundle(result), raw=True)
    if table:
        display(result.to_frame())


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register ``%smoothdp`` / ``%%smoothdp`` (called by ``%load_ext``)."""
    ipython.register_magics(SmoothDPMagics)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """Remove the magics again (``%unload_ext``)."""
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("smoothdp", None)
