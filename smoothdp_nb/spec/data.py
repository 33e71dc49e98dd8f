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
        try:
            obj: Any = pd.read_csv(path)
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, empty or malformed
            raise SpecError(f"cannot read {path}: {type(exc).__name__}: {exc}", "csv") from None
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
        if col is None:
            raise SpecError(
                f"is required: {name} is a DataFrame (columns: {', '.join(map(str, obj.columns))})", "column"
            )
        if col not in obj.columns:
            hint = close_hint(str(col), [str(c) for c in obj.columns])
            raise SpecError(
                f"{name} has no column {col!r} (columns: {', '.join(map(str, obj.columns))}){hint}", "column"
            )
        column = numeric_column(obj[col].to_numpy(), f"{name}[{col!r}]", "column", from_text="csv" in p)
        return column, f"{name}[{col!r}]"
    if col is not None:
        raise SpecError(f"{name} is a {type(obj).__name__}, not a DataFrame: leave out column", "column")
    if isinstance(obj, pd.Series):
        return numeric_column(obj.to_numpy(), name, "data"), name
    return numeric_column(obj, name, "data"), name


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
