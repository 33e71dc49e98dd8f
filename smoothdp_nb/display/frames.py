"""Reducing tidy frames to what a chart draws (no numerical work beyond that).

Deltas may underflow float64, so every builder works with ``log10_delta``;
Altair embeds at most 5000 rows, so large grids are thinned evenly first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from smoothdp_nb.core.numerics.formatting import format_sci
from smoothdp_nb.display.style import MAX_ROWS

__all__ = ["delta_text", "finite", "first_dp_delta", "is_estimate", "max_per", "thin", "with_log10"]

_LN10 = math.log(10.0)


def with_log10(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with a ``log10_delta`` column, from ``log10_delta``, ``log_delta`` or ``delta``."""
    df = frame.copy()
    if "log10_delta" not in df:
        if "log_delta" in df:
            df["log10_delta"] = df["log_delta"] / _LN10
        elif "delta" in df:
            with np.errstate(divide="ignore"):
                df["log10_delta"] = np.log10(df["delta"].astype(float))
        else:
            raise ValueError("frame needs a 'log10_delta', 'log_delta' or 'delta' column")
    df["log10_delta"] = df["log10_delta"].astype(float)
    if "epsilon" in df and pd.api.types.is_float_dtype(df["epsilon"]):
        # grid arithmetic leaves 1.7999999999999998 in legends and tooltips
        df["epsilon"] = df["epsilon"].round(12)
    return df


def max_per(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Keep the row with the largest delta per key (the worst composition, Definition 3).

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3).
    """
    if not df.duplicated(list(keys)).any():
        return df
    idx = df.groupby(list(keys), sort=True)["log10_delta"].idxmax()
    return df.loc[idx.dropna().astype(int)].reset_index(drop=True)


def thin(df: pd.DataFrame, column: str, limit: int = MAX_ROWS) -> pd.DataFrame:
    """Keep evenly spaced values of ``column`` (always both ends) until rows <= ``limit``."""
    if len(df) <= limit:
        return df
    values = np.sort(df[column].unique())
    per_value = max(1, math.ceil(len(df) / len(values)))
    keep_n = max(2, limit // per_value)
    if keep_n >= len(values):
        return df.iloc[:limit]
    keep = values[np.unique(np.linspace(0, len(values) - 1, keep_n).round().astype(int))]
    out = df[df[column].isin(keep)]
    if len(out) > limit:  # very uneven groups: truncate, evenly
        out = out.iloc[np.linspace(0, len(out) - 1, limit).round().astype(int)]
    return out.reset_index(drop=True)


def finite(df: pd.DataFrame, column: str = "log10_delta") -> pd.DataFrame:
    """Rows with a finite ``column`` (delta = 0 has no place on a log axis; JSON has no inf)."""
    return df[np.isfinite(df[column].astype(float))].reset_index(drop=True)


def delta_text(log10_values: Sequence[float] | np.ndarray | pd.Series, *, upper: bool = True) -> list[str]:
    """Tooltip text of each delta, written from its logarithm (exact below 1e-308 too).

    ``upper`` (a certified result): ``"≤ 1.67·10⁻¹"``, the proven upper bound
    with its mantissa rounded up (never a figure rounded to nearest, which may
    lie below the truth); otherwise a Monte Carlo estimate, ``"≈ 1.65·10⁻¹"``.
    An exact zero is ``"0"``."""
    out = []
    for v in log10_values:
        x = float(v)
        if x == -math.inf:
            out.append("0")
        else:
            out.append(f"≤ {format_sci(x, up=True)}" if upper else f"≈ {format_sci(x)}")
    return out


def is_estimate(df: pd.DataFrame) -> bool:
    """A frame of Monte Carlo estimates (it carries an interval), not of proven upper bounds."""
    return {"ci_low", "ci_high"} <= set(df.columns)


def first_dp_delta(df: pd.DataFrame) -> float | None:
    """The largest DP delta of the frame, or None when it has none."""
    if "dp_delta" not in df or df["dp_delta"].isna().all():
        return None
    value = float(df["dp_delta"].dropna().max())
    return value if math.isfinite(value) and value > 0 else None
