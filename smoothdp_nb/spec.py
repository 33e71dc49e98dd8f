"""One computation described in TOML: validation and execution.

The ``%%smoothdp`` magic and ``python -m smoothdp_nb run`` both go through
:func:`run_spec`, so a spec that works in a notebook works in a script and
its errors read the same in both places.

A spec is a TOML document (or the equivalent dict) with a ``compute`` key
naming the computation and flat keys for its parameters; the mechanism is a
table (``[mechanism]`` section or inline ``mechanism = {eta = 0.998}``).

Computations
------------
``compute = "profile"``
    Privacy profile delta_eps(x) of a mechanism on one or several databases.
    Keys: ``mechanism``, ``epsilon``, and either ``histogram`` (counts, or a
    list of count lists) with optional ``labels``, or ``dataset``
    (``"us-elections"``: every election's top-2 votes, labels = years,
    optional ``years`` filter; ``"us-2020-districts"``: Biden/Trump votes
    per unit, labels = districts).  ``target_delta`` (a number or list in
    (0, 1]): the epsilon grid also holds, per database, the smallest epsilon
    whose delta meets each target (:func:`~smoothdp_nb.profile_epsilon`;
    ``epsilon`` may then be left out).  Result: :class:`~smoothdp_nb.core.results.ProfileResult`.
``compute = "smoothed"``
    Smoothed delta over a set Pi (Definition 3).  Keys: ``mechanism``,
    ``n`` (one integer), ``pi`` (inline list of probability vectors, a
    dataset ``"us-2020-districts"`` / ``"us-elections-history"``, or the name
    of a variable of the notebook), ``epsilon``, ``method`` (``"exact"`` or
    ``"monte-carlo"``), Monte Carlo: ``trials``, ``confidence``,
    ``candidates``, ``rng``; exact: ``budget`` (seconds).  Where the work
    runs: ``executor = "dask"`` (with ``scheduler = "tcp://host:8786"`` for an
    existing cluster, else a local cluster of ``workers`` processes),
    ``"processes"`` or ``"threads"`` (``workers``, default 2); results are the
    same on every executor.  Result: :class:`~smoothdp_nb.core.smoothed.SmoothedResult`.
``compute = "sweep"``
    The same over several database sizes: ``n`` is a list or a range
    ``{start = 100, stop = 100000, num = 25, log = true}`` (rounded to
    integers, duplicates dropped).  Result:
    :class:`~smoothdp_nb.core.smoothed.SmoothedCurve` with exponential fits.
``compute = "release"``
    Smooth-sensitivity release of a column.  Keys: the data as ``data``
    (name of a DataFrame, Series or array in the namespace) with
    ``column``, or ``values`` (inline list), or ``csv`` (a file) with
    ``column``; ``query`` (median, trimmed_mean, mean), ``epsilon``,
    ``gamma`` (default: data-independent), ``noise`` (polyplace, cauchy,
    student_t, laplace, laplace_log_normal), ``bounds = [low, high]``
    (required), ``delta``, ``shape``, ``trim``, ``rng`` (leave out for real
    releases), ``lattice`` (output step, a power of two), ``diagnostics``
    (true: add the data-dependent, non-private diagnostics).  Inline
    ``values`` are never echoed: reports show only their count (a hash would let a reader confirm
    a guessed dataset).
    Result: :class:`~smoothdp_nb.core.results.ReleaseReport`.
``compute = "noise"``
    Noise std per unit of smooth sensitivity for several families
    (Hladik-Tetek Figure 1).  Keys: ``epsilon``, ``gamma`` (number, list or
    range), ``delta`` (for laplace), ``families``, ``reference``.  Result:
    :class:`~smoothdp_nb.core.results.NoiseComparison`.

Common keys: ``title`` (for reports).  Every ``epsilon``/``gamma`` may be a
number, a list, or a range table ``{start, stop, num, log}``.

Numbers are numbers: strings (even ``"0.5"``), bools, NaN and infinities are
refused wherever a number is expected; the one string form is the exact
sampling rate ``eta = "0.998"`` (plain ASCII decimal digits).  Values are
checked with the core's own validators (:mod:`smoothdp_nb.core.validation`,
the noise calibration, the mechanism's ``T <= n``), so a spec that validates
does not fail in the core on a value it let through.  ``budget`` (seconds) is
finite; ``workers`` is at most the CPUs this process may use unless ``scheduler`` names
an external cluster.  Every computation that can be large is estimated (time
and memory) before it starts and refused over budget; a refusal, a value the
core rejects, or an unreadable file is a :class:`SpecError` at the key it
concerns.  When
``compute`` is left out it is inferred from the other keys if that is
unambiguous.  Unknown keys are errors (:class:`SpecError`, which names the
key, the allowed values, the closest valid key and the line).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import datetime as dt
import difflib
import re
import tomllib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .core.array_types import FloatArray, IntArray
from .core.budget import ComputationTooLarge, cap_workers
from .core.hull import reduce_to_vertices
from .core.validation import (
    _is_real,
    as_bounds,
    as_decimal_text,
    as_float_array,
    as_histograms,
    as_int,
    as_real,
    kind_of,
    position,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .core.mechanisms import Mechanism
    from .core.results import NoiseComparison, ProfileResult, ReleaseReport
    from .core.smoothed import SmoothedCurve, SmoothedResult

__all__ = ["SpecError", "Spec", "parse_spec", "run_spec", "COMPUTATIONS", "PI_DATASETS", "PROFILE_DATASETS"]

COMPUTATIONS = ("profile", "smoothed", "sweep", "release", "noise")
PROFILE_DATASETS = ("us-elections", "us-2020-districts")
PI_DATASETS = ("us-2020-districts", "us-elections-history")
METHODS = ("exact", "monte-carlo")
MECHANISM_KINDS = ("sampling", "noisy-sampling")
QUERIES = ("median", "trimmed_mean", "mean")

#: Largest number of grid points a range table may produce.
MAX_RANGE = 10_000


class SpecError(ValueError):
    """A key or value of a spec is invalid.

    Attributes
    ----------
    key : str or None
        The dotted key (``"mechanism.eta"``), when the error is about one key.
    line : int or None
        1-based line of the key in the TOML text, when known.
    """

    def __init__(self, message: str, key: str | None = None, line: int | None = None, near: str | None = None):
        self.key = key
        self.line = line
        self.near = near  # a key whose line to show when ``key`` itself is missing from the spec
        self.message = message
        super().__init__(self._text())

    def _text(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        prefix = f"{self.key}{where}: " if self.key else (f"line {self.line}: " if self.line else "")
        return prefix + self.message

    def with_line(self, line: int | None) -> SpecError:
        """The same error, located at ``line``."""
        self.line = line
        self.args = (self._text(),)
        return self


# --------------------------------------------------------------------------
# value checkers: (key, value) -> converted value, or SpecError
# --------------------------------------------------------------------------


def _core(key: str | None, check: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a core validator (or constructor); its TypeError/ValueError becomes a SpecError at ``key``.

    The spec layer checks values with the core's own validators
    (:mod:`smoothdp_nb.core.validation`), so that nothing passes the spec only to
    fail in the core.
    """
    try:
        return check(*args, **kwargs)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError(_without_name(str(exc), key), key) from None


def _without_name(message: str, key: str | None) -> str:
    """Drop the leading parameter name of a core message (the SpecError prefix names the key)."""
    if key and message.startswith(key + " "):
        return message[len(key) + 1 :]
    return message


def _number(
    key: str, v: Any, *, lo: float | None = None, hi: float | None = None, lo_open: bool = False, hi_open: bool = False
) -> float:
    """A finite number in a range (no strings, no bools): :func:`~smoothdp_nb.core.validation.as_real`."""
    return _core(key, as_real, v, key, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def _integer(key: str, v: Any, *, lo: int = 1, hi: int | None = None) -> int:
    """An integer >= lo (integral floats such as 1e3 accepted): :func:`~smoothdp_nb.core.validation.as_int`."""
    return _core(key, as_int, v, key, minimum=lo, maximum=hi)


def _boolean(key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise SpecError(f"must be true or false, got {v!r}", key)
    return v


def _choice(key: str, v: Any, allowed: tuple[str, ...], aliases: Mapping[str, str] | None = None) -> str:
    if isinstance(v, str):
        norm = v.strip().lower()
        norm = (aliases or {}).get(norm, norm)
        if norm in allowed:
            return norm
    close = difflib.get_close_matches(str(v).lower(), allowed, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise SpecError(f"must be one of {', '.join(repr(a) for a in allowed)}, got {v!r}{hint}", key)


def _range_table(key: str, v: Mapping[str, Any]) -> FloatArray:
    """``{start, stop, num, log}`` -> evenly spaced values (geometric when log = true)."""
    allowed = ("start", "stop", "num", "log")
    _check_keys(key, v, allowed)
    for req in ("start", "stop", "num"):
        if req not in v:
            raise SpecError(f"a range needs start, stop and num (optional: log); {req!r} is missing", key)
    log = _boolean(f"{key}.log", v.get("log", False))
    lo = 0.0 if log else None
    start = _number(f"{key}.start", v["start"], lo=lo, lo_open=log)
    stop = _number(f"{key}.stop", v["stop"], lo=lo, lo_open=log)
    num = _integer(f"{key}.num", v["num"], lo=1, hi=MAX_RANGE)
    return np.geomspace(start, stop, num) if log else np.linspace(start, stop, num)


def _values(key: str, v: Any, *, lo: float = 0.0, lo_open: bool = False) -> FloatArray:
    """A number, a list of numbers or a range table -> 1-D array of finite floats >= lo (> lo if lo_open)."""
    if isinstance(v, Mapping):
        arr = _range_table(key, v)
        low = float(arr.min())
        if low < lo or (lo_open and low == lo):
            raise SpecError(f"every value must be {'>' if lo_open else '>='} {lo:g}, got a range down to {low!r}", key)
        return arr
    if isinstance(v, (list, tuple)):
        if not v:
            raise SpecError("must not be an empty list", key)
        return np.array([_number(f"{key}[{i}]", x, lo=lo, lo_open=lo_open) for i, x in enumerate(v)], dtype=float)
    if isinstance(v, (str, bool)) or not isinstance(v, (int, float)):
        raise SpecError(f"must be a number, a list of numbers or a range {{start, stop, num, log}}, got {v!r}", key)
    return np.array([_number(key, v, lo=lo, lo_open=lo_open)])


def _sizes(key: str, v: Any) -> list[int]:
    """Database sizes: an integer, a list or a range, rounded to integers, unique, sorted."""
    if isinstance(v, Mapping):
        arr = _range_table(key, v)
        out = sorted({round(x) for x in arr})
    elif isinstance(v, (list, tuple)):
        if not v:
            raise SpecError("must not be an empty list", key)
        out = sorted({_integer(f"{key}[{i}]", x) for i, x in enumerate(v)})
    else:
        out = [_integer(key, v)]
    if out[0] < 1:
        raise SpecError(f"database sizes must be >= 1, got {out[0]}", key)
    return out


def _check_keys(where: str | None, table: Mapping[str, Any], allowed: tuple[str, ...], context: str = "") -> None:
    for k in table:
        if k not in allowed:
            close = difflib.get_close_matches(k, allowed, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            full = f"{where}.{k}" if where else k
            ctx = f" {context}" if context else ""
            raise SpecError(f"unknown key{ctx}; allowed: {', '.join(allowed)}{hint}", full)


# --------------------------------------------------------------------------
# the schema
# --------------------------------------------------------------------------

_COMMON = ("compute", "title")
_SMOOTHED = (
    "mechanism",
    "n",
    "pi",
    "epsilon",
    "method",
    "trials",
    "confidence",
    "candidates",
    "rng",
    "budget",
    "executor",
    "scheduler",
    "workers",
)
#: ``executor = ...`` values: where Monte Carlo chunks and sweep points run
EXECUTORS = ("dask", "processes", "threads")
KEYS: dict[str, tuple[str, ...]] = {
    "profile": _COMMON + ("mechanism", "epsilon", "histogram", "labels", "dataset", "years", "target_delta"),
    "smoothed": _COMMON + _SMOOTHED,
    "sweep": _COMMON + _SMOOTHED,
    "release": _COMMON
    + (
        "data",
        "column",
        "values",
        "csv",
        "query",
        "epsilon",
        "gamma",
        "noise",
        "bounds",
        "delta",
        "shape",
        "trim",
        "rng",
        "lattice",
        "diagnostics",
    ),
    "noise": _COMMON + ("epsilon", "gamma", "delta", "families", "reference"),
}
MECHANISM_KEYS = ("kind", "eta", "T", "replace", "noise_epsilon", "repeat")


@dataclass(frozen=True)
class Spec:
    """A validated spec: the computation and its converted parameters.

    Attributes
    ----------
    compute : str
        One of :data:`COMPUTATIONS`.
    params : dict
        Validated, converted parameters (numpy arrays for grids, a mechanism
        object, ...); names that refer to the namespace stay strings until
        :func:`run_spec` resolves them.
    title : str
    raw : dict
        The parsed spec with every private field (:data:`PRIVATE_KEYS`: inline
        release data, ``values``) replaced by a placeholder that gives only its
        count (:func:`data_placeholder`).  Reports echo ``raw`` or ``text``.
    text : str
        ``raw`` written out as TOML (:func:`to_toml`): what reports show as the
        spec.  It is rendered from the parsed, redacted dict, never from the
        spec's own text, so no comment, string or layout of the source can
        carry a private value into a report.
    lines : dict
        1-based line in the source text of every top-level key and of every
        key of a table (``"mechanism.eta"``); empty for a dict.  Errors found
        while running name their line from it: the source text itself is not
        kept.
    """

    compute: str
    params: dict
    title: str
    raw: dict = field(repr=False)
    text: str = field(default="", repr=False)
    lines: dict = field(default_factory=dict, repr=False)


def _infer_compute(doc: Mapping[str, Any]) -> str:
    if "histogram" in doc or "dataset" in doc:
        return "profile"
    if "pi" in doc:
        n = doc.get("n")
        return "sweep" if isinstance(n, (list, tuple, Mapping)) else "smoothed"
    if any(k in doc for k in ("column", "values", "csv", "data", "bounds", "query")):
        return "release"
    if "families" in doc or ("gamma" in doc and "epsilon" in doc):
        return "noise"
    raise SpecError(f"is required: one of {', '.join(repr(c) for c in COMPUTATIONS)}", "compute")


def _mechanism(v: Any) -> Mechanism:
    from .core.mechanisms import NoisySamplingHistogram, SamplingHistogram

    if not isinstance(v, Mapping):
        raise SpecError(
            "must be a table, e.g. [mechanism] eta = 0.998, or mechanism = {eta = 0.998} "
            f"(keys: {', '.join(MECHANISM_KEYS)}), got {v!r}",
            "mechanism",
        )
    _check_keys("mechanism", v, MECHANISM_KEYS)
    kind = _choice(
        "mechanism.kind",
        v.get("kind", "noisy-sampling" if "noise_epsilon" in v else "sampling"),
        MECHANISM_KINDS,
        {"noisy": "noisy-sampling", "sampling-histogram": "sampling", "noisy-sampling-histogram": "noisy-sampling"},
    )
    if ("eta" in v) == ("T" in v):
        raise SpecError("give exactly one of eta (a sampling rate in (0, 1]) or T (a sample size >= 1)", "mechanism")
    kw: dict[str, Any] = {}
    if "eta" in v:
        eta = v["eta"]
        if isinstance(eta, str):  # exact decimal text, e.g. "0.998": plain ASCII decimals only
            rate = _core("mechanism.eta", as_decimal_text, eta, "mechanism.eta")
            if not 0 < rate <= 1:
                raise SpecError(f"must be a sampling rate with 0 < eta <= 1, got {eta!r}", "mechanism.eta")
        else:
            _number("mechanism.eta", eta, lo=0.0, hi=1.0, lo_open=True)
        kw["eta"] = eta
    else:
        kw["T"] = _integer("mechanism.T", v["T"], lo=1)
    if kind == "noisy-sampling":
        if "noise_epsilon" not in v:
            raise SpecError(
                "is required for kind = 'noisy-sampling' (a number > 0)", "mechanism.noise_epsilon", near="mechanism"
            )
        if "replace" in v:
            raise SpecError(
                "is not available for kind = 'noisy-sampling' (it samples without replacement)", "mechanism.replace"
            )
        ne = _number("mechanism.noise_epsilon", v["noise_epsilon"], lo=0.0, lo_open=True)
        return _repeated(v, _core("mechanism", NoisySamplingHistogram, kw.get("eta"), T=kw.get("T"), noise_epsilon=ne))
    if "noise_epsilon" in v:
        raise SpecError("is only for kind = 'noisy-sampling'", "mechanism.noise_epsilon")
    replace = _boolean("mechanism.replace", v.get("replace", False))
    return _repeated(v, _core("mechanism", SamplingHistogram, kw.get("eta"), T=kw.get("T"), replace=replace))


def _repeated(v: Mapping[str, Any], mech: Mechanism) -> Mechanism:
    """``repeat = k``: k independent runs of the mechanism on the same database (:func:`~smoothdp_nb.repeat`)."""
    if "repeat" not in v:
        return mech
    from .core.mechanisms.composed import repeat

    return repeat(mech, _integer("mechanism.repeat", v["repeat"], lo=1, hi=10**6))


def _require(doc: Mapping[str, Any], key: str, compute: str, what: str) -> Any:
    if key not in doc:
        raise SpecError(f"is required for compute = {compute!r}: {what}", key, near="compute")
    return doc[key]


def _validate(doc: Mapping[str, Any]) -> tuple[str, dict]:
    compute = (
        _choice(
            "compute",
            doc["compute"],
            COMPUTATIONS,
            {"smoothed-delta": "smoothed", "noise-comparison": "noise", "privacy-profile": "profile"},
        )
        if "compute" in doc
        else _infer_compute(doc)
    )
    _check_keys(None, doc, KEYS[compute], context=f"for compute = {compute!r}")
    if "title" in doc and not isinstance(doc["title"], str):
        raise SpecError(f"must be a string, got {doc['title']!r}", "title")
    p: dict[str, Any] = {}
    if compute in ("profile", "smoothed", "sweep"):
        p["mechanism"] = _mechanism(_require(doc, "mechanism", compute, "a table with eta or T"))
        if compute == "profile" and "target_delta" in doc and "epsilon" not in doc:
            p["epsilon"] = np.empty(0)
        else:
            p["epsilon"] = _values("epsilon", _require(doc, "epsilon", compute, "a number >= 0, a list or a range"))
    if compute == "profile":
        _validate_profile(doc, p)
    elif compute in ("smoothed", "sweep"):
        _validate_smoothed(doc, p, compute)
    elif compute == "release":
        _validate_release(doc, p)
    else:
        _validate_noise(doc, p)
    return compute, p


def _validate_profile(doc: Mapping[str, Any], p: dict) -> None:
    if "target_delta" in doc:
        td = _values("target_delta", doc["target_delta"], lo=0.0, lo_open=True)
        if np.any(td > 1):
            raise SpecError(f"must be in (0, 1] (a target delta), got {doc['target_delta']!r}", "target_delta")
        p["target_delta"] = td
    if ("histogram" in doc) == ("dataset" in doc):
        raise SpecError(
            "give exactly one of histogram (counts like [60, 40] or [[60, 40], [55, 45]]) "
            f"or dataset (one of {', '.join(repr(d) for d in PROFILE_DATASETS)})",
            "histogram" if "histogram" in doc else "dataset",
        )
    if "histogram" in doc:
        h = doc["histogram"]
        if not isinstance(h, list) or not h:
            got = "an empty list" if isinstance(h, list) else kind_of(h)  # the counts are data: not echoed
            raise SpecError(f"must be a list of counts or a list of lists of counts, got {got}", "histogram")
        hists, _ = _core("histogram", as_histograms, h, "histogram")
        for size in np.unique(hists.sum(axis=1)):
            _core("histogram", p["mechanism"].sample_size, int(size))  # e.g. T <= n
        clean = hists
        p["hists"] = hists
        p["source"] = "inline"
        if "labels" in doc:
            lab = doc["labels"]
            if not isinstance(lab, list) or len(lab) != len(clean):
                raise SpecError(f"must be a list of {len(clean)} label(s), one per histogram, got {lab!r}", "labels")
            p["labels"] = list(lab)
        if "years" in doc:
            raise SpecError("is only for dataset = 'us-elections'", "years")
        return
    ds = _choice("dataset", doc["dataset"], PROFILE_DATASETS, {"us-elections-history": "us-elections"})
    if "labels" in doc:
        raise SpecError("is only for inline histograms (a dataset brings its own labels)", "labels")
    p["dataset"] = ds
    p["source"] = ds
    if "years" in doc:
        if ds != "us-elections":
            raise SpecError("is only for dataset = 'us-elections'", "years")
        ys = doc["years"]
        ys = ys if isinstance(ys, list) else [ys]
        p["years"] = [_integer(f"years[{i}]", y, lo=1920, hi=2020) for i, y in enumerate(ys)]


def _validate_smoothed(doc: Mapping[str, Any], p: dict, compute: str) -> None:
    n = _require(doc, "n", compute, "the database size" + (" (list or range)" if compute == "sweep" else ""))
    if compute == "smoothed":
        if isinstance(n, (list, Mapping)):
            raise SpecError(
                "must be one integer >= 1 for compute = 'smoothed'; use compute = 'sweep' for several n", "n"
            )
        p["n"] = _integer("n", n)
    else:
        p["ns"] = _sizes("n", n)
    for size in p.get("ns", [p.get("n")]):
        _core("n", p["mechanism"].sample_size, size)  # e.g. T <= n
    pi = _require(
        doc,
        "pi",
        compute,
        f"a list of probability vectors, a dataset ({', '.join(PI_DATASETS)}) or the name of a variable",
    )
    if isinstance(pi, str):
        p["pi"] = pi.strip()  # a dataset or a namespace name: resolved in run_spec
    elif isinstance(pi, list) and pi:
        rows = pi if isinstance(pi[0], list) else [pi]
        arr = []
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) < 2:
                raise SpecError(f"every distribution needs >= 2 probabilities, got {row!r}", f"pi[{i}]")
            vals = [_number(f"pi[{i}]", x, lo=0.0, hi=1.0) for x in row]
            if abs(sum(vals) - 1.0) > 1e-9:
                raise SpecError(f"probabilities must sum to 1, got sum {sum(vals):.12g}", f"pi[{i}]")
            arr.append(vals)
        if len({len(r) for r in arr}) != 1:
            raise SpecError("all distributions must have the same number of categories", "pi")
        p["pi"] = np.array(arr, dtype=float)
        _core("pi", reduce_to_vertices, p["pi"])  # the core's own checks of Pi
    else:
        raise SpecError(
            f"must be a list of probability vectors, a dataset ({', '.join(repr(d) for d in PI_DATASETS)}) "
            f"or the name of a variable, got {pi!r}",
            "pi",
        )
    p["method"] = _choice(
        "method",
        doc.get("method", "exact"),
        METHODS,
        {"monte_carlo": "monte-carlo", "mc": "monte-carlo", "montecarlo": "monte-carlo"},
    )
    mc_only = [k for k in ("trials", "confidence", "candidates", "rng") if k in doc]
    if p["method"] == "exact" and mc_only:
        raise SpecError("is only used with method = 'monte-carlo'", mc_only[0])
    if p["method"] == "monte-carlo" and "budget" in doc:
        raise SpecError("is only used with method = 'exact'", "budget")
    kw: dict[str, Any] = {}
    if "trials" in doc:
        kw["trials"] = _integer("trials", doc["trials"])
    if "confidence" in doc:
        kw["confidence"] = _number("confidence", doc["confidence"], lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if "candidates" in doc:
        kw["candidates"] = _integer("candidates", doc["candidates"])
    if "rng" in doc:
        kw["rng"] = _integer("rng", doc["rng"], lo=0)
    if "budget" in doc:
        kw["budget"] = _number("budget", doc["budget"], lo=0.0, lo_open=True)  # finite: no budget = inf
    p["options"] = kw
    if "executor" in doc:
        p["executor"] = _choice("executor", doc["executor"], EXECUTORS)
    for key in ("scheduler", "workers"):
        if key in doc and "executor" not in doc:
            raise SpecError("needs executor = 'dask', 'processes' or 'threads'", key)
    if "scheduler" in doc:
        if p["executor"] != "dask":
            raise SpecError("is only used with executor = 'dask'", "scheduler")
        p["scheduler"] = _scheduler_address(doc["scheduler"])
    if "workers" in doc:
        # a local pool gets at most the CPUs this process may use; an external scheduler places work itself
        p["workers"] = _core("workers", cap_workers, doc["workers"], "workers", external="scheduler" in doc)


_SCHEDULER = re.compile(
    r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r":(?P<port>[0-9]{1,5})/?"
)
#: schemes of a Dask scheduler reachable over TCP (checked before a client is made)
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")


def _scheduler_address(v: Any) -> str:
    """``[scheme://]host:port`` with a TCP scheme and a port in 1..65535, else a SpecError at ``scheduler``."""
    example = "e.g. 'tcp://127.0.0.1:8786'"
    if not isinstance(v, str) or not v.strip():
        raise SpecError(f"must be a scheduler address, {example}, got {v!r}", "scheduler")
    m = _SCHEDULER.fullmatch(v.strip())
    if m is None:
        raise SpecError(f"must be an address [scheme://]host:port, {example}, got {v.strip()!r}", "scheduler")
    scheme = (m["scheme"] or "tcp").lower()
    if scheme not in SCHEDULER_SCHEMES:
        raise SpecError(
            f"scheme must be one of {', '.join(SCHEDULER_SCHEMES)}, got {scheme!r} ({example})", "scheduler"
        )
    if not 1 <= int(m["port"]) <= 65535:
        raise SpecError(f"port must be in 1..65535, got {m['port']} ({example})", "scheduler")
    return f"{scheme}://{m['host']}:{int(m['port'])}"


def _reachable(address: str, timeout: float) -> None:
    """Open and close a TCP connection to the scheduler, else a SpecError at ``scheduler``.

    Checked before a Dask client is made: a client that fails to connect keeps its IO loop thread,
    and after a few of them in one process distributed's loop runner fails with a bare assertion.
    """
    import socket

    m = _SCHEDULER.fullmatch(address)
    assert m is not None  # validated by _scheduler_address
    host = m["host"].strip("[]")
    try:
        with socket.create_connection((host, int(m["port"])), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SpecError(f"cannot reach the Dask scheduler at {address}: {reason}", "scheduler") from None


def _validate_release(doc: Mapping[str, Any], p: dict) -> None:
    sources = [k for k in ("data", "values", "csv") if k in doc]
    if len(sources) != 1:
        raise SpecError(
            "give exactly one data source: data (a variable name) with column, values (a list of numbers) "
            "or csv (a file path) with column",
            sources[1] if len(sources) > 1 else "data",
        )
    src = sources[0]
    if src == "values":
        vals = doc["values"]
        # the records are never echoed, not even a refused one: messages give position and type
        if not isinstance(vals, list) or not vals:
            got = "an empty list" if isinstance(vals, list) else kind_of(vals)
            raise SpecError(f"must be a non-empty list of numbers, got {got}", "values")
        for i, v in enumerate(vals):
            if not _is_real(v) or not np.isfinite(float(v)):
                raise SpecError(f"must be a finite number, got {kind_of(v)}", f"values[{i}]")
        p["values"] = np.array(vals, dtype=float)
        if "column" in doc:
            raise SpecError("is only used with data or csv", "column")
    else:
        if not isinstance(doc[src], str) or not doc[src].strip():
            raise SpecError(
                f"must be a {'variable name' if src == 'data' else 'file path'} (a string), got {doc[src]!r}", src
            )
        p[src] = doc[src].strip()
        if "column" in doc:
            if not isinstance(doc["column"], (str, int)) or isinstance(doc["column"], bool):
                raise SpecError(f"must be a column name, got {doc['column']!r}", "column")
            p["column"] = doc["column"]
        elif src == "csv":
            raise SpecError("is required with csv: the column to release", "column", near="csv")
    p["query"] = _choice(
        "query", doc.get("query", "median"), QUERIES, {"trimmed-mean": "trimmed_mean", "trimmed": "trimmed_mean"}
    )
    p["epsilon"] = _number("epsilon", _require(doc, "epsilon", "release", "a number > 0"), lo=0.0, lo_open=True)
    from .core.noise import family_aliases, family_names  # the registry, at call time (scipy loads lazily)

    p["noise"] = _choice("noise", doc.get("noise", "polyplace"), family_names(), family_aliases())
    b = _require(doc, "bounds", "release", "[low, high], data-independent limits of the data")
    if not isinstance(b, list) or len(b) != 2:
        raise SpecError(f"must be [low, high] with finite low < high, got {b!r}", "bounds")
    p["bounds"] = _core("bounds", as_bounds, b, "bounds")
    if "gamma" in doc:
        p["gamma"] = _number("gamma", doc["gamma"], lo=0.0, lo_open=True)
    if "delta" in doc:
        p["delta"] = _number("delta", doc["delta"], lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    elif p["noise"] == "laplace":
        raise SpecError("is required for noise = 'laplace' (0 < delta < 1)", "delta", near="noise")
    if "shape" in doc:
        p["shape"] = _number("shape", doc["shape"], lo=0.0, lo_open=True)
    # the core's calibration checks gamma's range for the family, the shape and delta
    from .core.noise import calibrate
    from .core.release import default_gamma

    delta = p.get("delta") if p["noise"] == "laplace" else None
    gamma = p["gamma"] if "gamma" in p else _core("epsilon", default_gamma, p["noise"], p["epsilon"], delta)
    try:
        calibrate(p["noise"], p["epsilon"], gamma, delta=delta, shape=p.get("shape"))
    except (TypeError, ValueError) as exc:
        name = str(exc).split(" ", 1)[0]
        key = (
            name if name in ("gamma", "shape", "delta") and name in doc else ("gamma" if "gamma" in doc else "epsilon")
        )
        raise SpecError(_without_name(str(exc), name), key) from None
    if "trim" in doc:
        t = doc["trim"]
        if p["query"] != "trimmed_mean":
            raise SpecError("is only used with query = 'trimmed_mean'", "trim")
        if isinstance(t, int) and not isinstance(t, bool):
            p["trim"] = _integer("trim", t, lo=0)  # a count (at most (n - 1) / 2, checked with the data)
        else:
            p["trim"] = _number("trim", t, lo=0.0, hi=0.5, hi_open=True)  # a fraction
    if "rng" in doc:
        p["rng"] = _integer("rng", doc["rng"], lo=0)
    if "lattice" in doc:  # a power of two in the bounds' range: checked by the core's check_lattice
        from .core.lattice import check_lattice

        try:
            p["lattice"] = check_lattice(doc["lattice"], p["bounds"])
        except (TypeError, ValueError) as err:
            raise SpecError(str(err).removeprefix("lattice "), "lattice") from None
    if "diagnostics" in doc:
        if not isinstance(doc["diagnostics"], bool):
            raise SpecError(
                f"must be true or false (data-dependent diagnostics, not private), got {doc['diagnostics']!r}",
                "diagnostics",
            )
        p["diagnostics"] = doc["diagnostics"]


def _validate_noise(doc: Mapping[str, Any], p: dict) -> None:
    from .core.noise import family_aliases, family_names  # the registry, at call time (scipy loads lazily)

    p["epsilon"] = _number("epsilon", _require(doc, "epsilon", "noise", "a number > 0"), lo=0.0, lo_open=True)
    p["gamma"] = _values(
        "gamma", _require(doc, "gamma", "noise", "a number, list or range of values > 0"), lo=0.0, lo_open=True
    )
    fams = doc.get("families", ["polyplace", "student_t", "cauchy", "laplace"])
    if not isinstance(fams, list) or not fams:
        raise SpecError(f"must be a non-empty list of {', '.join(family_names())}, got {fams!r}", "families")
    p["families"] = [_choice("families", f, family_names(), family_aliases()) for f in fams]
    if "delta" in doc:
        p["delta"] = _number("delta", doc["delta"], lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    elif "laplace" in p["families"]:
        raise SpecError(
            "is required when 'laplace' is among the families (0 < delta < 1, e.g. 1e-5)", "delta", near="families"
        )
    p["reference"] = _boolean("reference", doc.get("reference", False))


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------


def _line_of(text: str | None, key: str | None) -> int | None:
    """Best-effort 1-based line where ``key`` (dotted; last part searched) is assigned."""
    if not text or not key:
        return None
    parts = [re.sub(r"\[\d+\]$", "", part) for part in key.split(".")]
    name = parts[-1]
    q = "[\"']?"  # a key may be spelled quoted: "values" = [...]
    pat = re.compile(r"(^|[\s{,;])" + q + re.escape(name) + q + r"\s*=")
    section = parts[0] if len(parts) > 1 else None
    in_section = section is None
    lines = text.splitlines()
    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if section is not None and s.startswith("["):
            in_section = s.strip("[] ") == section
        if section is not None and not in_section and not re.search(re.escape(section) + r"\s*=", ln):
            continue
        if pat.search(ln):
            return i
    if section is not None:  # the table itself, e.g. a missing key inside it
        for i, ln in enumerate(lines, 1):
            if re.search(r"^\s*\[\s*" + re.escape(section) + r"\s*\]|" + re.escape(section) + r"\s*=", ln):
                return i
    return None


def _locate(text: str | None, err: SpecError) -> int | None:
    """The line of an error's key, else of the key it is near, else of ``compute``."""
    for key in (err.key, err.near, "compute"):
        line = _line_of(text, key)
        if line is not None:
            return line
    return None


def parse_toml(text: str) -> dict:
    """Parse TOML text; syntax errors become :class:`SpecError` with the line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"line (\d+)", msg)
        # "at end of document": the last non-blank line
        last = max((i for i, ln in enumerate(text.splitlines(), 1) if ln.strip()), default=1)
        raise SpecError(f"invalid TOML: {msg}", None, int(m.group(1)) if m else last) from None


def parse_spec(spec: str | Mapping[str, Any]) -> Spec:
    """Validate a spec (TOML text or dict) without running it.

    Parameters
    ----------
    spec : str or mapping
        TOML text or the equivalent dict.

    Returns
    -------
    Spec

    Raises
    ------
    SpecError
        For invalid TOML, unknown keys and invalid values (with key and line).
    """
    if isinstance(spec, str):
        text: str | None = spec
        doc = parse_toml(spec)
    elif isinstance(spec, Mapping):
        text, doc = None, dict(spec)
    else:
        raise SpecError(f"a spec must be TOML text or a dict, got {type(spec).__name__}")
    if not doc:
        raise SpecError(
            f"the spec is empty: start with compute = one of {', '.join(repr(c) for c in COMPUTATIONS)}", "compute"
        )
    try:
        compute, params = _validate(doc)
    except SpecError as err:
        if err.line is None:
            err.with_line(_locate(text, err))
        raise
    title = doc.get("title") or _default_title(compute, params)
    lines = _key_lines(text, doc)
    raw = redact(doc, compute, params)
    return Spec(compute=compute, params=params, title=title, raw=raw, text=to_toml(raw), lines=lines)


#: The keys of each computation that hold the private data.  Reports show a placeholder instead.
PRIVATE_KEYS: dict[str, tuple[str, ...]] = {"release": ("values",)}


def redact(doc: Mapping[str, Any], compute: str, params: Mapping[str, Any]) -> dict:
    """``doc`` with every private key of ``compute`` (:data:`PRIVATE_KEYS`) replaced by its placeholder."""
    out = dict(doc)
    for key in PRIVATE_KEYS.get(compute, ()):
        if key in out:
            out[key] = data_placeholder(params[key] if key in params else out[key])
    return out


def _key_lines(text: str | None, doc: Mapping[str, Any]) -> dict[str, int]:
    """Line of every top-level key and of every key of a table, in the source text."""
    if text is None:
        return {}
    keys = [k for k in doc] + [f"{k}.{sub}" for k, v in doc.items() if isinstance(v, Mapping) for sub in v]
    return {k: ln for k in keys if (ln := _line_of(text, k)) is not None}


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(s: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    out = []
    for ch in s:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(k: object) -> str:
    k = str(k)
    return k if _BARE_KEY.fullmatch(k) else _toml_string(k)


def _toml_value(v: object) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        return "nan" if x != x else ("inf" if x == np.inf else ("-inf" if x == -np.inf else repr(x)))
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, np.ndarray):
        return _toml_value(v.tolist())
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    # an object handed over in a dict spec: its type only (its text could hold anything)
    return _toml_string(f"<{type(v).__name__}>")


def to_toml(doc: Mapping[str, Any]) -> str:
    """``doc`` written out as TOML: plain keys first, then one ``[table]`` per table.

    Everything is rendered from the values, so the output holds exactly what ``doc`` holds (strings
    are escaped, tables and arrays of tables are written inline); ``tomllib.loads(to_toml(doc))``
    gives ``doc`` back for every parsed spec.
    """
    plain = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, Mapping)]
    tables = [
        f"\n[{_toml_key(k)}]\n" + "\n".join(f"{_toml_key(sk)} = {_toml_value(sv)}" for sk, sv in v.items())
        for k, v in doc.items()
        if isinstance(v, Mapping)
    ]
    return "\n".join(plain + tables).lstrip("\n") + "\n"


def data_placeholder(values: Any) -> str:
    """``"<n private values, not shown>"``: what reports echo for inline release data.

    Only the count is kept.  n is public here: the releases' neighbouring databases differ in the
    value of one record (Hamming distance 1 at fixed n, as in Nissim, Raskhodnikova and Smith's
    smooth sensitivity), so every neighbour has the same n and the release itself reports it.
    Under add/remove neighbours n would be private and this placeholder would have to go.  No hash
    or other function of the values: a deterministic digest would let anyone who sees the report
    confirm a guessed dataset.
    """
    return f"<{np.asarray(values).size} private values, not shown>"


def _default_title(compute: str, p: dict) -> str:
    if compute == "profile":
        return f"Privacy profile of {p['mechanism']!r} ({p['source']})"
    if compute == "smoothed":
        return f"Smoothed delta of {p['mechanism']!r}, n = {p['n']}"
    if compute == "sweep":
        return f"Smoothed delta of {p['mechanism']!r} over n = {p['ns'][0]}..{p['ns'][-1]}"
    if compute == "release":
        return f"Smooth-sensitivity release ({p['query']}, epsilon = {p['epsilon']:g})"
    return f"Noise comparison at epsilon = {p['epsilon']:g}"


# --------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------


def _election_hists(years: list[int] | None) -> tuple[IntArray, list[int]]:
    from .core import datasets

    df = datasets.us_presidential_elections()
    if years is not None:
        missing = sorted(set(years) - set(df["year"]))
        if missing:
            raise SpecError(f"no US presidential election in {missing}; allowed: 1920, 1924, ..., 2020", "years")
        df = df[df["year"].isin(years)]
    return df[["winner_votes", "runner_up_votes"]].to_numpy(np.int64), df["year"].tolist()


def _pi_from(name: str, namespace: Mapping[str, Any]) -> Any:
    from .core import datasets

    if name == "us-2020-districts":
        return datasets.us_2020_district_shares()
    if name == "us-elections-history":
        df = datasets.us_presidential_elections()
        dem = np.where(df["winner_party"] == "Democratic", df["winner_votes"], df["runner_up_votes"])
        top2 = df["top2_total"].to_numpy(dtype=float)
        return pd.DataFrame(
            {"democratic": dem / top2, "republican": 1.0 - dem / top2},
            index=pd.Index(df["year"].to_numpy(), name="year"),
        )
    if name in namespace:
        obj = namespace[name]
        if not isinstance(obj, (pd.DataFrame, np.ndarray, list, tuple)):
            raise SpecError(
                f"the variable {name!r} is a {type(obj).__name__}; pi needs a DataFrame, an array or a "
                "list of probability vectors",
                "pi",
            )
        return obj
    close = difflib.get_close_matches(name, list(PI_DATASETS) + [k for k in namespace if not k.startswith("_")], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise SpecError(
        f"{name!r} is neither a dataset ({', '.join(repr(d) for d in PI_DATASETS)}) "
        f"nor a variable of the namespace{hint}",
        "pi",
    )


def _release_data(p: dict, namespace: Mapping[str, Any], base: Path | None) -> tuple[Any, str]:
    if "values" in p:
        return p["values"], "values"
    if "csv" in p:
        path = Path(p["csv"])
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise SpecError(f"file not found: {path}", "csv")
        try:
            obj: Any = pd.read_csv(path)
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, empty or malformed
            raise SpecError(f"cannot read {path}: {type(exc).__name__}: {exc}", "csv") from None
        name = path.name
    else:
        name = p["data"]
        if name not in namespace:
            close = difflib.get_close_matches(name, [k for k in namespace if not k.startswith("_")], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(f"no variable {name!r} in the namespace{hint}", "data")
        obj = namespace[name]
        if not isinstance(obj, (pd.DataFrame, pd.Series, np.ndarray, list, tuple)):
            raise SpecError(
                f"the variable {name!r} is a {type(obj).__name__}; data needs a DataFrame, a Series, "
                "an array or a list of numbers",
                "data",
            )
    col = p.get("column")
    if isinstance(obj, pd.DataFrame):
        if col is None:
            raise SpecError(
                f"is required: {name} is a DataFrame (columns: {', '.join(map(str, obj.columns))})", "column"
            )
        if col not in obj.columns:
            close = difflib.get_close_matches(str(col), [str(c) for c in obj.columns], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(
                f"{name} has no column {col!r} (columns: {', '.join(map(str, obj.columns))}){hint}", "column"
            )
        column = _numeric_column(obj[col].to_numpy(), f"{name}[{col!r}]", "column", from_text="csv" in p)
        return column, f"{name}[{col!r}]"
    if col is not None:
        raise SpecError(f"{name} is a {type(obj).__name__}, not a DataFrame: leave out column", "column")
    if isinstance(obj, pd.Series):
        return _numeric_column(obj.to_numpy(), name, "data"), name
    return _numeric_column(obj, name, "data"), name


def _numeric_column(values: Any, name: str, key: str, from_text: bool = False) -> np.ndarray:
    """The released column must hold numbers (no strings, no bools, no objects).

    ``from_text``: the column was read from a CSV file, where one cell that is not a number turns
    the whole column into text; the first such cell is the one named.
    """
    arr = np.asarray(values)
    if from_text and arr.dtype == object:
        parsed = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy()
        bad = np.flatnonzero(np.isnan(parsed) & pd.notna(arr))
        if bad.size:  # the row of the cell, not its text
            raise SpecError(f"{position(bad[0], name)} must be a number, got text that is not a number", key)
    if arr.dtype.kind not in "iuf":
        # position and type of the first non-number, never the record
        try:
            as_float_array(arr, name)
        except (TypeError, ValueError) as exc:
            raise SpecError(str(exc), key) from None
        raise SpecError(f"{name} must hold numbers, got an array of {arr.dtype.type.__name__}", key)
    return arr


def _smoothed_at(
    n: int, mechanism: Any, pi: Any, epsilon: FloatArray, method: str, options: dict[str, Any]
) -> dict[str, Any]:
    """One point of an exact sweep (top level, so process pools can pickle it)."""
    from .core.smoothed import smoothed_delta

    return {"result": smoothed_delta(mechanism, n, pi, epsilon, method=method, progress=False, **options)}


def run_spec(
    spec: str | Mapping[str, Any] | Spec,
    namespace: Mapping[str, Any] | None = None,
    *,
    executor: Any = None,
    progress: bool | None = None,
    base_dir: str | Path | None = None,
) -> Any:
    """Validate and run one spec; return its result object.

    Parameters
    ----------
    spec : str, mapping or Spec
        TOML text, the equivalent dict, or a :class:`Spec` from :func:`parse_spec`.
    namespace : mapping, optional
        Variables that ``data = "..."`` and ``pi = "..."`` may name (the
        notebook's user namespace in the magic).
    executor : concurrent.futures.Executor, optional
        Runs Monte Carlo chunks, and the points of an exact sweep.
    progress : bool or None
        Progress bars of the core (None: only for long computations).
    base_dir : path, optional
        Directory against which a relative ``csv`` path is resolved.

    Returns
    -------
    ProfileResult, SmoothedResult, SmoothedCurve, ReleaseReport or NoiseComparison

    Raises
    ------
    SpecError
        For an invalid spec (the key, the allowed values and the line).
        Errors of the core computations propagate with their own messages.

    Examples
    --------
    >>> r = run_spec('compute = "profile"\\nhistogram = [60, 40]\\nepsilon = 0.5\\nmechanism = {T = 10}')
    >>> r.to_frame()["label"].tolist()
    [0]
    """
    parsed = spec if isinstance(spec, Spec) else parse_spec(spec)
    ns: Mapping[str, Any] = namespace if namespace is not None else {}
    try:
        with _spec_executor(parsed.params, executor) as ex:
            return _RUNNERS[parsed.compute](
                parsed.params, ns, ex, progress, Path(base_dir) if base_dir is not None else None
            )
    except SpecError as err:
        if err.line is None:
            err.with_line(_spec_line(parsed, err.key, err.near))
        raise
    except OSError as exc:  # I/O: an unreachable scheduler, a file that cannot be read
        key = next((k for k in ("scheduler", "csv", "executor") if k in parsed.raw), None)
        raise SpecError(f"{type(exc).__name__}: {exc}", key, _spec_line(parsed, key)) from exc
    except (TypeError, ValueError, MemoryError) as exc:
        # the core refused a value or a size: a user error, reported at the key it concerns
        key = _key_of_core_error(exc, parsed)
        raise SpecError(_core_message(exc), key, _spec_line(parsed, key)) from exc


def _spec_line(spec: Spec, *keys: str | None) -> int | None:
    """Line of the first of ``keys`` (the key itself, else its top-level part) in the source, else of compute."""
    for key in (*keys, "compute"):
        if not key:
            continue
        plain = re.sub(r"\[\d+\]", "", key)
        for candidate in (plain, plain.split(".")[0]):
            if candidate in spec.lines:
                return int(spec.lines[candidate])
    return None


#: the core's parameter names -> spec keys (where they differ)
_PARAM_KEYS = {
    "hist": "histogram",
    "ns": "n",
    "T": "mechanism.T",
    "eta": "mechanism.eta",
    "noise_epsilon": "mechanism.noise_epsilon",
    "mechanism": "mechanism",
    "family": "noise",
    "alpha": "gamma",
    "s": "gamma",
    "c": "shape",
    "d": "shape",
    "sigma": "shape",
    "lattice": "bounds",
}


def _key_of_core_error(exc: BaseException, spec: Spec) -> str | None:
    """The spec key a core error is about: the parameter it names (or a refusal's ``parameter``)."""
    doc = spec.raw
    name = getattr(exc, "parameter", None)
    if name is None:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", str(exc))
        name = m.group(1) if m else None
    if name == "x":  # the released data
        return next((k for k in ("data", "values", "csv") if k in doc), None)
    key = _PARAM_KEYS.get(name or "", name)
    if key and (key in doc or key.split(".")[0] in doc):
        return key
    if isinstance(exc, (ComputationTooLarge, MemoryError)):  # the key that sets the size of the computation
        size = next((k for k in ("n", "histogram", "dataset", "values", "data", "csv", "gamma") if k in doc), None)
        if size is not None:
            return size
    return "compute" if "compute" in doc else None


def _core_message(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return f"the computation ran out of memory ({exc or 'MemoryError'}); use smaller sizes"
    if isinstance(exc, ComputationTooLarge):
        return f"refused before starting: {exc}"
    return f"{exc}"


@contextlib.contextmanager
def _spec_executor(p: Mapping[str, Any], given: Any) -> Iterator[Any]:
    """The executor a spec asks for (``executor = "dask"`` and so on), closed afterwards.

    An executor passed by the caller (``--executor NAME`` in the magic) wins.
    """
    kind = p.get("executor")
    if given is not None or kind is None:
        yield given
        return
    workers = p.get("workers", 2)
    if kind == "threads":
        with cf.ThreadPoolExecutor(workers) as ex:
            yield ex
    elif kind == "processes":
        from .core.parallel import process_pool

        with process_pool(workers) as ex:  # forkserver/spawn: never a fork of this (threaded) process
            yield ex
    else:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise SpecError("executor = 'dask' needs dask: pip install 'smoothdp_nb[dask]'", "executor") from None
        if "scheduler" in p:
            import dask.config
            from dask.utils import parse_timedelta

            timeout = float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s"))
            _reachable(p["scheduler"], timeout)
            try:
                client = Client(p["scheduler"], timeout=timeout)
            except Exception as exc:  # an address that answers but is no scheduler, a handshake that fails
                raise SpecError(
                    f"cannot connect to the Dask scheduler at {p['scheduler']}: {type(exc).__name__}: {exc}",
                    "scheduler",
                ) from None
            cluster = None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        try:
            # pure=False: identical tasks must be recomputed, not served from Dask's cache
            yield client.get_executor(pure=False)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _run_profile(
    p: dict[str, Any], ns: Mapping[str, Any], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> ProfileResult:
    from .core.results import profile

    labels: Sequence[Hashable] | None
    if "dataset" in p:
        if p["dataset"] == "us-elections":
            hists, labels = _election_hists(p.get("years"))
        else:
            from .core import datasets

            df = datasets.us_2020_districts()
            hists, labels = df[["biden_votes", "trump_votes"]].to_numpy(np.int64), df["district"].tolist()
    else:
        hists, labels = p["hists"], p.get("labels")
    eps = p["epsilon"]
    if "target_delta" in p:  # add every database's smallest epsilon meeting each target
        from .core.accounting.inverse import profile_epsilon

        found = np.asarray(profile_epsilon(p["mechanism"], hists, p["target_delta"]), dtype=float)
        eps = np.unique(np.concatenate([eps, found[np.isfinite(found)]]))
        if eps.size == 0:
            raise SpecError("no epsilon up to 512 meets it at any database", "target_delta")
    return profile(p["mechanism"], hists, eps, labels=labels, source=p["source"])


def _resolve_pi(p: dict[str, Any], ns: Mapping[str, Any]) -> Any:
    return _pi_from(p["pi"], ns) if isinstance(p["pi"], str) else p["pi"]


def _run_smoothed(
    p: dict[str, Any], ns: Mapping[str, Any], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> SmoothedResult:
    from .core.smoothed import smoothed_delta

    kw = dict(p["options"])
    if p["method"] == "monte-carlo" and executor is not None:
        kw["executor"] = executor
    return smoothed_delta(
        p["mechanism"], p["n"], _resolve_pi(p, ns), p["epsilon"], method=p["method"], progress=progress, **kw
    )


def _run_sweep(
    p: dict[str, Any], ns: Mapping[str, Any], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> SmoothedCurve:
    from .core.smoothed import smoothed_delta_curve
    from .core.sweeps import sweep

    pi = _resolve_pi(p, ns)
    kw = dict(p["options"])
    if p["method"] == "exact" and executor is not None and len(p["ns"]) > 1:
        from .core.budget import DEFAULT_BUDGET_SECONDS, check_budget
        from .core.smoothed import estimate_smoothed

        # every point estimated before the first starts (in turn: the executor may have one worker)
        check_budget(
            estimate_smoothed(p["mechanism"], p["ns"], pi, p["epsilon"], "exact"),
            kw.get("budget", DEFAULT_BUDGET_SECONDS),
            f"the sweep over {len(p['ns'])} values of n",
            "use fewer or smaller n, or method = 'monte-carlo'",
            parameter="n",
        )
        res = sweep(
            _smoothed_at,
            {"n": p["ns"]},
            executor,
            progress=progress,
            fixed={"mechanism": p["mechanism"], "pi": pi, "epsilon": p["epsilon"], "method": "exact", "options": kw},
        )
        if res.failures:
            i, msg = res.failures[0]
            raise RuntimeError(f"sweep point n = {res.points[i]['n']} failed: {msg}")
        from .core.smoothed import SmoothedCurve

        done = [rec["result"] for rec in res.records if rec is not None]
        if res.partial:
            if not done:
                raise KeyboardInterrupt("sweep interrupted before any point finished")
            # interrupted: keep what was computed, and say so
            curve = SmoothedCurve.from_results(done)
            print(f"sweep interrupted: {len(done)} of {len(res.points)} values of n computed")
            return curve
        return SmoothedCurve.from_results(done)
    if p["method"] == "monte-carlo" and executor is not None:
        kw["executor"] = executor
    return smoothed_delta_curve(p["mechanism"], p["ns"], pi, p["epsilon"], method=p["method"], progress=progress, **kw)


def _run_release(
    p: dict[str, Any], ns: Mapping[str, Any], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> ReleaseReport:
    from .core.release import release
    from .core.results import ReleaseReport

    x, name = _release_data(p, ns, base)
    kw = {k: p[k] for k in ("gamma", "delta", "shape", "trim", "rng", "lattice", "diagnostics") if k in p}
    rel = release(x, query=p["query"], epsilon=p["epsilon"], noise=p["noise"], bounds=p["bounds"], **kw)
    notes = ("seeded noise: for experiments only, not for a real release",) if "rng" in p else ()
    return ReleaseReport(rel, name=name, notes=notes)


def _run_noise(
    p: dict[str, Any], ns: Mapping[str, Any], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> NoiseComparison:
    from .core.release import compare_noise
    from .core.results import NoiseComparison

    table = compare_noise(
        p["epsilon"], p["gamma"], delta=p.get("delta"), families=p["families"], reference=p["reference"]
    )
    return NoiseComparison(table=table, epsilon=p["epsilon"], delta=p.get("delta"))


_RUNNERS: dict[str, Callable[..., Any]] = {
    "profile": _run_profile,
    "smoothed": _run_smoothed,
    "sweep": _run_sweep,
    "release": _run_release,
    "noise": _run_noise,
}
