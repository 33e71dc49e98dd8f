"""The grid of a sweep and its table of results: :func:`grid_points`, :func:`as_record`, :class:`SweepResult`."""

from __future__ import annotations

import dataclasses
import itertools
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SweepResult", "as_record", "grid_points"]


def grid_points(grid: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Normalise ``grid`` into (parameter names, list of parameter dicts).

    A dict ``{name: values}`` gives the cartesian product (the last name varies fastest), a
    list of dicts or a DataFrame the points themselves; TypeError/ValueError naming ``grid``
    otherwise.
    """
    if isinstance(grid, pd.DataFrame):
        if grid.shape[0] == 0 or grid.shape[1] == 0:
            raise ValueError("grid: the DataFrame has no rows or no columns")
        names = list(grid.columns)
        points = grid.to_dict(orient="records")
    elif isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid must name at least one parameter, got an empty dict")
        names = list(grid)
        axes = []
        for name, values in grid.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(
                    f"grid[{name!r}] must be a sequence of values, got {type(values).__name__}"
                    " (wrap a single value in a list)"
                )
            values = list(values)
            if not values:
                raise ValueError(f"grid[{name!r}] is empty: every parameter needs a value")
            axes.append(values)
        points = [dict(zip(names, combo)) for combo in itertools.product(*axes)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        if len(grid) == 0:
            raise ValueError("grid is an empty list: there is nothing to sweep")
        names = []
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise TypeError(f"grid[{i}] must be a dict of parameter values, got {type(point).__name__}")
            for name in point:
                if name not in names:
                    names.append(name)
            points.append(dict(point))
    else:
        raise TypeError(
            "grid must be a dict of parameter -> values, a list of dicts or a pandas "
            f"DataFrame, got {type(grid).__name__}"
        )
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"grid: parameter names must be strings, got {name!r}")
    return names, points


def as_record(value: Any) -> dict[str, Any]:
    """Turn one return value of ``fn`` into a dict of result columns."""
    if isinstance(value, (numbers.Number, np.number, np.bool_)):
        return {"value": value}
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return {"value": value.item()}
    if isinstance(value, Mapping):
        return dict(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        record = to_dict()
        if isinstance(record, Mapping):
            return dict(record)
    raise TypeError(
        f"fn must return a number, a dict of numbers or an object with to_dict(); got {type(value).__name__}"
    )


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """Outcome of :func:`~smoothdp_nb.core.sweeps.sweep`.

    Attributes
    ----------
    parameters : tuple of str
        Parameter names, in grid order.
    points : tuple of dict
        Every grid point, in grid order.
    records : tuple of (dict or None)
        Result columns of each point; ``None`` where the point failed or was not run.
    failures : tuple of (int, str)
        ``(point index, repr of the exception)`` for every failed point.
    partial : bool
        True when the sweep was interrupted (KeyboardInterrupt) before every point ran.
    elapsed : float
        Wall-clock seconds.
    n_tasks : int
        Number of tasks (chunks of grid points) the work was split into.
    """

    parameters: tuple[str, ...]
    points: tuple[dict[str, object], ...]
    records: tuple[dict[str, object] | None, ...]
    failures: tuple[tuple[int, str], ...] = ()
    partial: bool = False
    elapsed: float = 0.0
    n_tasks: int = 0

    @property
    def n_points(self) -> int:
        """Number of grid points."""
        return len(self.points)

    @property
    def n_done(self) -> int:
        """Number of grid points evaluated successfully."""
        return sum(record is not None for record in self.records)

    @property
    def complete(self) -> bool:
        """True when every grid point was evaluated successfully."""
        return not self.partial and not self.failures and self.n_done == self.n_points

    @property
    def errors(self) -> list[tuple[dict[str, object], str]]:
        """``(parameters, exception repr)`` of every failed point, in grid order."""
        return [(dict(self.points[i]), message) for i, message in self.failures]

    def to_frame(self, include_missing: bool = False) -> pd.DataFrame:
        """Tidy table: one row per grid point, parameter columns then result columns.

        Parameters
        ----------
        include_missing : bool, default False
            If False, only the points evaluated successfully appear (in grid order). If
            True, every grid point appears, with missing results (failed or not run)
            as NaN.

        Returns
        -------
        pandas.DataFrame
            A result column whose name clashes with a parameter is suffixed ``_result``.
        """
        result_columns: list[str] = []
        for record in self.records:
            if record is not None:
                for key in record:
                    if key not in result_columns:
                        result_columns.append(key)
        rename = {c: (f"{c}_result" if c in self.parameters else c) for c in result_columns}
        rows = []
        for params, record in zip(self.points, self.records):
            if record is None and not include_missing:
                continue
            row = {name: params.get(name, np.nan) for name in self.parameters}
            for key in result_columns:
                row[rename[key]] = np.nan if record is None else record.get(key, np.nan)
            rows.append(row)
        columns = list(self.parameters) + [rename[c] for c in result_columns]
        return pd.DataFrame(rows, columns=columns)
