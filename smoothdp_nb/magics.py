"""IPython magics ``%%smoothdp`` and ``%smoothdp``: a TOML spec in, a result object out.

The magic is thin: it parses its options, hands the TOML to
:func:`smoothdp_nb.spec.run_spec` together with the user namespace, and
displays the result.  Load it with ``%load_ext smoothdp_nb`` (or
``%load_ext smoothdp_nb.magics``).
"""

from __future__ import annotations

import concurrent.futures as cf
import re
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from .spec import SpecError, run_spec

__all__ = ["SmoothDPMagics", "load_ipython_extension", "unload_ipython_extension", "line_to_toml"]

# Where the spec starts on a magic line: the first ``key =`` or an inline table.
_SPEC_START = re.compile(r"(^|\s)(\{|[A-Za-z_][A-Za-z0-9_.-]*\s*=)")


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
    @line_cell_magic
    def smoothdp(self, line: str = "", cell: str | None = None) -> None:
        """Run one smoothed-DP computation described in TOML and display the result.

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
        (``.to_frame()``, ``.to_dict()``, ``.chart()``).

        Computations (``compute = ...``)
        --------------------------------
        ``"profile"``: privacy profile delta_eps(x) of a mechanism.
            ``mechanism``, ``epsilon``; ``histogram = [60, 40]`` or
            ``[[60, 40], [55, 45]]`` with optional ``labels``, or
            ``dataset = "us-elections"`` (optional ``years = [2016, 2020]``)
            or ``dataset = "us-2020-districts"``.
        ``"smoothed"``: smoothed delta over Pi (Definition 3).
            ``mechanism``, ``n`` (integer), ``epsilon``, ``pi`` (inline
            ``[[0.4, 0.6], [0.6, 0.4]]``, ``"us-2020-districts"``,
            ``"us-elections-history"`` or the name of a notebook variable),
            ``method = "exact"`` (``budget`` seconds) or ``"monte-carlo"``
            (``trials``, ``confidence``, ``candidates``, ``rng``).
            ``executor = "dask"`` (``scheduler = "tcp://127.0.0.1:8786"`` for
            a running cluster, else a local one with ``workers`` processes),
            ``"processes"`` or ``"threads"``: where the work runs (same results).
        ``"sweep"``: the same for several n, with exponential fits.
            ``n = [100, 200]`` or ``n = {start = 100, stop = 100000, num = 25, log = true}``
            (rounded to integers, duplicates dropped).
        ``"release"``: smooth-sensitivity release of a column.
            ``data = "df"`` and ``column = "income"`` (a DataFrame in the
            notebook; a Series or array without ``column``), or
            ``values = [...]``, or ``csv = "file.csv"`` with ``column``;
            ``bounds = [low, high]`` (required), ``epsilon``, ``query``
            (median, trimmed_mean, mean), ``noise`` (polyplace, cauchy,
            student_t, laplace, laplace_log_normal), optional ``gamma``,
            ``delta`` (laplace), ``shape``, ``trim``, ``rng`` (experiments
            only: leave it out for real releases).
        ``"noise"``: noise std per unit of smooth sensitivity (Hladik-Tetek Fig. 1).
            ``epsilon``, ``gamma`` (number, list or range), ``families``,
            ``delta`` (needed for laplace), ``reference = true`` adds the
            global-sensitivity Laplace line.

        Numbers are numbers (no ``"0.5"``, no ``true``, no ``inf``): the one
        string form is an exact rate ``eta = "0.998"`` (plain ASCII decimals).
        ``budget`` (seconds, finite) limits exact computations; every
        computation is estimated (time and memory) before it starts and
        refused when over budget.  ``workers`` is at most the CPUs the kernel may use
        (unless ``scheduler`` names an external Dask cluster).

        Mechanism table: ``eta`` (rate in (0, 1]) or ``T`` (sample size),
        ``replace = true`` (with replacement), or ``noise_epsilon`` for the
        noisy sampling histogram (``kind = "noisy-sampling"`` is then implied).
        ``epsilon`` and ``gamma`` take a number, a list or ``{start, stop, num, log}``.
        ``title`` names the result in reports.  ``compute`` may be left out
        when the other keys make it unambiguous.

        More examples::

            %%smoothdp
            compute = "sweep"
            pi = "us-2020-districts"
            n = {start = 100, stop = 2000, num = 8, log = true}
            epsilon = [0.5, 1.0]
            mechanism = {eta = 0.5}

            %%smoothdp --executor pool -o mc
            compute = "smoothed"
            method = "monte-carlo"
            trials = 10000
            rng = 1
            n = 1000
            pi = [[0.45, 0.55], [0.55, 0.45]]
            epsilon = 0.5
            mechanism = {eta = 0.9}

            %smoothdp compute = "release"; data = "df"; column = "income"; bounds = [0, 500000]; epsilon = 1

        Every error caused by the spec -- unknown keys, values out of range,
        TOML syntax, a value the computation rejects, a computation refused
        because its estimated time or memory is over budget, an unreadable
        file -- is reported as one line naming the key and its line (no
        traceback); only genuine bugs show a traceback.  The same spec runs headless with
        ``python -m smoothdp_nb run spec.toml --out report.html``.
        """
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
        try:
            args = parse_argstring(self.smoothdp, opts_text)
        except UsageError:
            raise
        except (SystemExit, ValueError):  # argparse exits on unknown options; shlex on unbalanced quotes
            raise UsageError(f"%smoothdp: invalid options {opts_text.strip()!r} (see %smoothdp?)") from None
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
            from .spec import parse_toml

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
        return None


def _show(result: Any, chart: bool, table: bool) -> None:
    """Display a result: rich (chart and summary), or summary only, plus the table."""
    from .display import summary_bundle

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
