"""What a spec names: datasets, CSV files and the variables of the namespace.

Names are resolved when a spec runs, against the namespace the caller
passes (the notebook's user namespace in the ``%%smoothdp`` magic; the
command line has none).  Messages name the key, never a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from smoothdp_nb.core.data import datasets
from smoothdp_nb.core.numerics.array_types import IntArray
from smoothdp_nb.core.numerics.validation import as_float_array, position
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.spec.convert import close_hint
from smoothdp_nb.spec.errors import SpecError
from smoothdp_nb.spec.keys import PI_DATASETS

__all__ = ["election_hists", "pi_from", "release_data", "numeric_column", "resolve_mechanism"]

_NO_NAMESPACE = "this run has no namespace (the command line has none; the %%smoothdp magic has the notebook's)"


def _names(namespace: Mapping[str, object]) -> list[str]:
    return [k for k in namespace if not k.startswith("_")]


def resolve_mechanism(name: str, namespace: Mapping[str, object] | None) -> Mechanism:
    """The :class:`~smoothdp_nb.core.smoothed.mechanisms.Mechanism` a spec names, from the namespace.

    Any mechanism object works: a ``FiniteMechanism``, a ``postprocess(...)``
    or ``repeat(...)`` of one, a sampling histogram built in the notebook.
    A missing name, or one bound to something else, is a SpecError at
    ``mechanism``.
    """
    if not namespace:
        raise SpecError(
            f"{name!r} names a variable, but {_NO_NAMESPACE}: describe the mechanism as a table, "
            "e.g. mechanism = {eta = 0.998}",
            "mechanism",
        )
    if name not in namespace:
        mechanisms = [k for k in _names(namespace) if isinstance(namespace[k], Mechanism)]
        hint = close_hint(name, mechanisms, cutoff=0.5)
        raise SpecError(f"no variable {name!r} in the namespace{hint}", "mechanism")
    obj = namespace[name]
    if not isinstance(obj, Mechanism):
        raise SpecError(
            f"the variable {name!r} is a {type(obj).__name__}, not a Mechanism "
            "(e.g. FiniteMechanism(...), postprocess(...), repeat(...), SamplingHistogram(...))",
            "mechanism",
        )
    return obj


def election_hists(years: list[int] | None) -> tuple[IntArray, list[int]]:
    """Top-two vote histograms of the US presidential elections (all, or ``years``), with their years."""
    df = datasets.us_presidential_elections()
    if years is not None:
        missing = sorted(set(years) - set(df["year"]))
        if missing:
            raise SpecError(f"no US presidential election in {missing}; allowed: 1920, 1924, ..., 2020", "years")
        df = df[df["year"].isin(years)]
    return df[["winner_votes", "runner_up_votes"]].to_numpy(np.int64), df["year"].tolist()


def pi_from(name: str, namespace: Mapping[str, object]) -> Any:
    """The set Pi a name stands for: a dataset, else a variable of the namespace."""
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
    hint = close_hint(name, list(PI_DATASETS) + _names(namespace))
    raise SpecError(
        f"{name!r} is neither a dataset ({', '.join(repr(d) for d in PI_DATASETS)}) "
        f"nor a variable of the namespace{hint}",
        "pi",
    )


def release_data(p: Mapping[str, Any], namespace: Mapping[str, object], base: Path | None) -> tuple[Any, str]:
    """The column a release spec names (inline values, a CSV file or a variable) and its display name."""
    if "values" in p:
        return p["values"], "values"
    if "csv" in p:
        path = Path(p["csv"])
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise SpecError(f"file not found: {path}", "csv")
        failure = ""
        try:
            obj: Any = pd.read_csv(path)
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, empty or malformed
            failure = _read_failure(exc)
        if failure:
            # raised outside the handler, so that no __context__ carries the parser's exception: a
            # decoder's or parser's message can quote the file's bytes, a record among them
            raise SpecError(f"cannot read {path}: {failure}", "csv")
        name = path.name
    else:
        name = p["data"]
        if name not in namespace:
            hint = close_hint(name, _names(namespace))
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
        # a CSV file's header is not shown: in a file without one, pandas makes the first record the header
        shown = _shown_columns(obj, from_file="csv" in p)
        if col is None:
            raise SpecError(f"is required: {name} is a DataFrame {shown}", "column")
        if col not in obj.columns:
            names = [] if "csv" in p else [str(c) for c in obj.columns if not _looks_numeric(c)]
            hint = close_hint(str(col), names)
            raise SpecError(f"{name} has no column {col!r} {shown}{hint}", "column")
        column = numeric_column(obj[col].to_numpy(), f"{name}[{col!r}]", "column", from_text="csv" in p)
        return column, f"{name}[{col!r}]"
    if col is not None:
        raise SpecError(f"{name} is a {type(obj).__name__}, not a DataFrame: leave out column", "column")
    if isinstance(obj, pd.Series):
        return numeric_column(obj.to_numpy(), name, "data"), name
    return numeric_column(obj, name, "data"), name


def _read_failure(exc: BaseException) -> str:
    """What went wrong reading a file, in words that quote none of its content."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, pd.errors.EmptyDataError):
        return "the file is empty"
    if isinstance(exc, pd.errors.ParserError):
        return "malformed CSV (rows with different numbers of fields, or unbalanced quotes)"
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return f"not a readable CSV file ({type(exc).__name__})"


def _looks_numeric(name: object) -> bool:
    """A column name that is a number: in a file or frame without a header, it is a record."""
    try:
        float(str(name))
    except ValueError:
        return False
    return True


def _shown_columns(frame: pd.DataFrame, from_file: bool) -> str:
    """The columns as an error may show them: a CSV file's are counted only, a frame's numeric names hidden.

    A CSV file without a header row gets its first record as column names, so
    no name read from a file is ever printed; a notebook DataFrame's names are
    the user's own labels, shown unless they look like numbers (a frame read
    without a header, again).
    """
    count = f"{len(frame.columns)} column{'s' if len(frame.columns) != 1 else ''}"
    if from_file:
        return f"({count}; a file's header is not shown, as in a file without one it is the first record)"
    names = [str(c) for c in frame.columns if not _looks_numeric(c)]
    hidden = len(frame.columns) - len(names)
    listed = ", ".join(names) + (f", and {hidden} numeric name(s) not shown" if hidden else "")
    return f"({count}: {listed})" if names else f"({count}, numeric names not shown)"


def numeric_column(values: Any, name: str, key: str, from_text: bool = False) -> np.ndarray:
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
