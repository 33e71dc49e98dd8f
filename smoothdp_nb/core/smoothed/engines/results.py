"""Result objects of the smoothed delta: one n (:class:`SmoothedResult`) and a
curve over n with exponential fits (:class:`SmoothedCurve`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, overload

import numpy as np
from numpy.typing import ArrayLike

from smoothdp_nb.core.numerics.array_types import FloatOrArray
from smoothdp_nb.core.numerics.enclosures import exp_down, exp_up, log10_up, next_down, next_up
from smoothdp_nb.core.numerics.formatting import format_delta_upper, format_log, format_param, format_sci, format_upper
from smoothdp_nb.core.numerics.hull import HullReduction
from smoothdp_nb.core.runtime import rendering

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import Unpack

    from smoothdp_nb.core.smoothed.engines.options import SmoothedEpsilonOptions
    from smoothdp_nb.core.smoothed.mechanisms import Mechanism

__all__ = ["SmoothedCurve", "SmoothedResult", "assemble_result", "dp_pair", "fit_exponential"]


@dataclass(frozen=True)
class SmoothedResult:
    """The smoothed delta of a mechanism for Pi (Definition 3).

    Attributes
    ----------
    delta, log_delta : float or ndarray over epsilon
        ``max`` over compositions of ``E[delta_eps(x)]`` and its natural log
        (finite even when delta underflows): exact method, a proven **upper
        bound** (the profiles' upper bounds averaged by the engine, plus the
        engine's proven rounding error; :mod:`smoothdp_nb.core.numerics.enclosures`).
    delta_lower, log_delta_lower : float or ndarray over epsilon, or None
        Exact method: a proven lower bound (``delta / delta_lower - 1`` is the
        enclosure width, about 1e-10 on the published cases); None for Monte Carlo.
    epsilon : ndarray
    n : int
    vertices : ndarray (l*, m)
        The convex-hull vertices of Pi actually used (Proposition 7).
    vertex_labels, dropped : list
        Labels of the vertices kept and of the distributions dropped.
    worst_composition : ndarray of int (l*,) or (E, l*)
        Number of records following each vertex at the maximum.
    table : pandas.DataFrame
        One row per composition and epsilon: ``epsilon``, one count column per
        vertex, ``delta`` and ``log_delta`` (Monte Carlo: also the interval).
        Exact, two vertices, from 20 000 records: compositions proven below
        the largest are not computed; a boolean ``pruned`` column marks them
        and their ``delta`` is that proven upper bound, not the expectation
        (:mod:`~smoothdp_nb.core.smoothed.engines.pruning`; ``notes`` says how many).
    dp_delta : float or ndarray over epsilon
        The worst case over all databases of n records, for comparison (per
        epsilon, like ``delta``; NaN when too large to compute, see ``notes``).
        ``delta`` never exceeds it: both are clipped where the mathematics
        says they are (E[delta(x)] <= max delta(x)).
    method : {"exact", "monte-carlo"}
    ci_low, ci_high : ndarray or None
        Monte Carlo only: the confidence interval (see ``interval``).  It is
        one for the smoothed delta itself (the maximum over every
        composition) when ``notes`` says "Monte Carlo interval covers all ...
        compositions"; otherwise only for the largest mean over the
        candidate compositions, and ``interval`` says so.

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 3, Proposition 7).
    """

    #: the inverse of the exact smoothed delta, ``(mechanism, n, vertices, delta, **kwargs) -> epsilon``
    #: (:func:`smoothdp_nb.core.smoothed.delta.smoothed_epsilon`): installed by the package
    #: :mod:`smoothdp_nb.core.smoothed.delta`, which sits above this module and is imported before
    #: any of its modules (so before any result exists); this module imports no engine
    epsilon_solver: ClassVar[Callable[..., FloatOrArray] | None] = None

    mechanism: Mechanism
    n: int
    epsilon: np.ndarray
    log_delta_values: np.ndarray
    vertices: np.ndarray
    vertex_labels: list[object]
    dropped: list[object]
    worst_composition_values: np.ndarray
    table_columns: dict[str, np.ndarray] = field(repr=False)  # the table's columns; the DataFrame is built on first use
    dp_delta_values: np.ndarray
    method: str
    scalar_epsilon: bool = False
    ci_low_values: np.ndarray | None = None
    ci_high_values: np.ndarray | None = None
    confidence: float | None = None
    trials: int | None = None
    interval: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    log_delta_lower_values: np.ndarray | None = None

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per epsilon and composition (see the class docstring)."""
        import pandas as pd  # deferred: a smoothed delta needs no data frame until one is asked for

        return pd.DataFrame(self.table_columns)

    @overload
    def _shape(self, arr: np.ndarray) -> FloatOrArray: ...
    @overload
    def _shape(self, arr: None) -> None: ...
    def _shape(self, arr: np.ndarray | None) -> FloatOrArray | None:
        if arr is None:
            return None
        return float(arr[0]) if self.scalar_epsilon else arr

    @property
    def log_delta(self) -> FloatOrArray:
        return self._shape(self.log_delta_values)

    @property
    def delta(self) -> FloatOrArray:
        return self._shape(self._delta_values())

    @property
    def log_delta_lower(self) -> FloatOrArray | None:
        return self._shape(self.log_delta_lower_values)

    @property
    def delta_lower(self) -> FloatOrArray | None:
        if self.log_delta_lower_values is None:
            return None
        return self._shape(exp_down(self.log_delta_lower_values))

    def _delta_values(self) -> np.ndarray:
        """exp(log delta) rounded up, at most the DP delta (itself rounded up)."""
        d = exp_up(self.log_delta_values)
        out: np.ndarray = np.where(np.isnan(self.dp_delta_values), d, np.minimum(d, self.dp_delta_values))
        return out

    def epsilon_for(self, delta: ArrayLike, **kwargs: Unpack[SmoothedEpsilonOptions]) -> FloatOrArray:
        """The smallest epsilon whose smoothed delta is at most ``delta`` (exact results only):
        :func:`~smoothdp_nb.smoothed_epsilon` for this mechanism, n and hull vertices --
        certified and within 1e-6 relative of the infimum.  ``kwargs`` go to it."""
        if self.method != "exact":
            raise ValueError("epsilon_for needs an exact smoothed delta (a Monte Carlo estimate is not a proven bound)")
        solver = SmoothedResult.epsilon_solver
        assert (
            solver is not None
        )  # installed when smoothdp_nb.core.smoothed.delta is imported, before any result exists
        return solver(self.mechanism, self.n, self.vertices, delta, **kwargs)

    @property
    def dp_delta(self) -> FloatOrArray:
        return self._shape(self.dp_delta_values)

    @property
    def ci_low(self) -> FloatOrArray | None:
        return self._shape(self.ci_low_values)

    @property
    def ci_high(self) -> FloatOrArray | None:
        return self._shape(self.ci_high_values)

    @property
    def worst_composition(self) -> np.ndarray:
        w = self.worst_composition_values
        return w[0] if self.scalar_epsilon else w

    def to_frame(self) -> pd.DataFrame:
        """One row per epsilon: delta, log10 delta, DP delta, worst composition (and CI)."""
        import pandas as pd  # deferred: a smoothed delta needs no data frame until one is asked for

        df = pd.DataFrame(
            {
                "epsilon": self.epsilon,
                "delta": self._delta_values(),
                "log10_delta": log10_up(self.log_delta_values),  # rounded up, like delta
                "dp_delta": self.dp_delta_values,
            }
        )
        if self.ci_low_values is not None:
            df["ci_low"] = self.ci_low_values
            df["ci_high"] = self.ci_high_values
        for j, lab in enumerate(self.vertex_labels):
            df[f"n_{lab}"] = self.worst_composition_values[:, j]
        return df

    def to_dict(self) -> dict[str, object]:
        return {
            "method": self.method,
            "mechanism": repr(self.mechanism),
            "n": self.n,
            "epsilon": self.epsilon.tolist(),
            "delta": self._delta_values().tolist(),
            "log_delta": self.log_delta_values.tolist(),
            "dp_delta": self.dp_delta_values.tolist(),
            "vertices": self.vertices.tolist(),
            "vertex_labels": [str(v) for v in self.vertex_labels],
            "dropped": [str(v) for v in self.dropped],
            "worst_composition": self.worst_composition_values.tolist(),
            "ci_low": None if self.ci_low_values is None else self.ci_low_values.tolist(),
            "ci_high": None if self.ci_high_values is None else self.ci_high_values.tolist(),
            "confidence": self.confidence,
            "trials": self.trials,
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        head = (
            f"Smoothed DP of {self.mechanism!r}, n = {self.n}, {self.method} "
            f"({len(self.vertex_labels)} hull vertices: {', '.join(map(str, self.vertex_labels))}"
            + (f"; {len(self.dropped)} dropped" if self.dropped else "")
            + ")"
        )
        dp = self.dp_delta_values
        same = bool(np.all(dp == dp[0]))
        lines = [head] + ([f"DP δ (worst case) {_dp_bound(dp[0])}"] if same else [])
        # a Monte Carlo mean is an estimate, not a bound: only the upper end of an interval that
        # covers every composition is written "δ ≤" (rounded up), with its confidence
        covers_all = any(note.startswith("Monte Carlo interval covers all") for note in self.notes)
        for i, e in enumerate(self.epsilon):
            ld = self.log_delta_values[i]
            if self.ci_low_values is None or self.ci_high_values is None:
                txt = f"  ε = {format_param(float(e))}: {format_delta_upper(ld)}"
            else:
                lo, hi = float(self.ci_low_values[i]), float(self.ci_high_values[i])
                hi_text = format_delta_upper(math.log(hi) if hi > 0 else -math.inf)
                if covers_all:
                    txt = (
                        f"  ε = {format_param(float(e))}: {hi_text} with {self.confidence:.0%} confidence "
                        f"(estimate {format_log(ld)}"
                    )
                    txt += f", interval from {format_sci(math.log10(lo)) if lo > 0 else '0'})"
                else:
                    txt = (
                        f"  ε = {format_param(float(e))}: estimate {format_log(ld)}, {self.confidence:.0%} interval "
                        f"[{format_sci(math.log10(lo)) if lo > 0 else '0'}, {hi_text[4:]}] for the largest candidate composition only"
                    )
            if not same:
                txt += f" (DP δ {_dp_bound(dp[i])})"
            txt += f"  at composition {tuple(int(c) for c in self.worst_composition_values[i])}"
            lines.append(txt)
        if self.method == "monte-carlo" and self.interval:
            lines.append(f"  interval: {self.interval}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<SmoothedResult {self.method}: "
            + "; ".join(f"epsilon={e:g} delta{rel}{text}" for e, rel, text in self._delta_texts())
            + ">"
        )

    def _delta_texts(self) -> list[tuple[float, str, str]]:
        """(epsilon, relation, delta) for the repr: an exact delta is a proven upper bound
        ("≤", rounded up), a Monte Carlo mean an estimate ("≈")."""
        if self.method == "exact":
            return [
                (
                    float(e),
                    "=" if ld == -math.inf else "≤",
                    "0" if ld == -math.inf else format_sci(ld / math.log(10.0), up=True),
                )
                for e, ld in zip(self.epsilon, self.log_delta_values)
            ]
        return [(float(e), "≈", format_log(ld)) for e, ld in zip(self.epsilon, self.log_delta_values)]

    def chart(self) -> Any:
        """Altair chart: smoothed delta against epsilon (Figure 2, right)."""
        return rendering.chart(self, "smoothed")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return rendering.mimebundle(self, "smoothed")


def _dp_bound(value: float) -> str:
    """A DP delta as the proven upper bound it is: ``"≤ 9.98·10⁻¹"`` (the mantissa rounded up)."""
    v = float(value)
    if not math.isfinite(v):
        return "not computed"
    return format_upper(v, "").lstrip()


def assemble_result(
    mech: Any,
    n: int,
    red: HullReduction,
    e: np.ndarray,
    comps: np.ndarray,
    vals: np.ndarray,
    method: str,
    t0: float,
    dp: tuple[np.ndarray, np.ndarray],
    lo: np.ndarray | None = None,
    hi: np.ndarray | None = None,
    extra_notes: Sequence[str] = (),
    log_err: tuple[np.ndarray, np.ndarray] | None = None,
    bound_only: np.ndarray | None = None,
    **extra: Any,
) -> SmoothedResult:
    """The result object; ``dp`` = (log, linear) DP delta per epsilon (NaN: unknown).
    Every expectation is clipped to the DP delta, which bounds it.  ``log_err``
    = (up, down) per epsilon: ``vals + up`` is a proven upper bound on every
    expectation, and the largest ``vals - down`` a proven lower bound on the
    largest (rounded outward here; only that maximum is reported).  ``bound_only``
    (per composition and epsilon): rows whose value is only a proven upper bound (pruned
    compositions, :mod:`~smoothdp_nb.core.smoothed.engines.pruning`): they get no
    lower bound, the table marks them in a ``pruned`` column and a note says so."""
    log_dp, lin_dp = (np.asarray(v, dtype=float) for v in dp)
    lower_vals = None
    if log_err is not None:
        up, down = (np.asarray(v, dtype=float) for v in log_err)
        with np.errstate(invalid="ignore"):
            lower_vals = np.where(np.isneginf(vals), -np.inf, next_down(vals - down[None, :]))
            vals = np.where(np.isneginf(vals), -np.inf, next_up(vals + up[None, :]))
        lower_vals = np.where(np.isnan(lower_vals), -np.inf, lower_vals)
        if bound_only is not None:
            lower_vals = np.where(bound_only, -np.inf, lower_vals)
    vals = np.where(np.isnan(log_dp)[None, :], vals, np.minimum(vals, log_dp[None, :]))
    best = np.argmax(vals, axis=0)
    labels = [str(v) for v in red.vertex_labels]
    # one row per (epsilon, composition), epsilon-major; built column by column in one go
    C, E = comps.shape[0], e.size
    columns = {"epsilon": np.repeat(e, C)}
    for i, lab in enumerate(labels):
        columns[f"n_{lab}"] = np.tile(comps[:, i], E)
    flat = vals.T.ravel()
    columns["delta"] = exp_up(flat)
    if not np.any(np.isnan(lin_dp)):
        columns["delta"] = np.minimum(columns["delta"], np.repeat(lin_dp, C))
    columns["log_delta"] = flat
    notes = [red.message, *extra_notes]
    if bound_only is not None and np.any(bound_only):
        columns["pruned"] = bound_only.T.ravel()
        counts = sorted({int(c) for c in bound_only.sum(axis=0)})
        notes.append(
            f"{'/'.join(map(str, counts))} of {C} compositions pruned per epsilon (proven below the "
            "largest): their rows give a proven upper bound, not the expectation (column 'pruned')"
        )
    if lo is not None and hi is not None:
        columns["ci_low"] = lo.T.ravel()
        columns["ci_high"] = hi.T.ravel()
    ci_low = None if lo is None else lo.max(axis=0)
    ci_high = None if hi is None else hi.max(axis=0)
    return SmoothedResult(
        mechanism=mech,
        n=n,
        epsilon=e,
        log_delta_values=vals[best, np.arange(e.size)],
        log_delta_lower_values=None
        if lower_vals is None
        else np.minimum(lower_vals.max(axis=0), vals[best, np.arange(e.size)]),
        vertices=red.vertices,
        vertex_labels=list(red.vertex_labels),
        dropped=list(red.dropped_labels),
        worst_composition_values=comps[best],
        table_columns=columns,
        dp_delta_values=lin_dp,
        method=method,
        ci_low_values=ci_low,
        ci_high_values=ci_high,
        seconds=time.perf_counter() - t0,
        notes=notes,
        **extra,
    )


def dp_pair(
    mech: Any, n: int, e: np.ndarray, m: int, all_profiles: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(log, linear) DP delta per epsilon: the linear value straight from the
    mechanism's closed form when it has one (e.g. T/n, correctly rounded),
    else from the log value, capped by the mechanism's bound."""
    log_dp = mech._dp_delta(n, e, categories=m, log=True, all_profiles=all_profiles)
    if not mech.dp_delta_depends_on_epsilon:
        return log_dp, mech._dp_delta(n, e, categories=m)
    return log_dp, np.minimum(exp_up(log_dp), mech._delta_upper_bound(n, e))


def fit_exponential(n: ArrayLike, log_delta: ArrayLike) -> dict[str, float]:
    """Least-squares fit ``log delta = a + b n`` (delta ~ C exp(b n)).

    Returns a dict with ``slope`` (b, per record), ``intercept`` (a),
    ``r2`` and ``log10_slope`` (b / ln 10: decades per record).  Points with
    delta = 0 (log = -inf) are ignored.
    """
    x = np.asarray(n, dtype=float)
    y = np.asarray(log_delta, dtype=float)
    ok = np.isfinite(y)
    if ok.sum() < 2:
        return {"slope": math.nan, "intercept": math.nan, "r2": math.nan, "log10_slope": math.nan}
    b, a = np.polyfit(x[ok], y[ok], 1)
    resid = y[ok] - (a + b * x[ok])
    ss = np.sum((y[ok] - y[ok].mean()) ** 2)
    r2 = 1.0 - np.sum(resid**2) / ss if ss > 0 else 1.0
    return {"slope": float(b), "intercept": float(a), "r2": float(r2), "log10_slope": float(b / math.log(10))}


@dataclass(frozen=True)
class SmoothedCurve:
    """Smoothed delta as a function of n (Figure 2 left / Figure 4)."""

    results: list[SmoothedResult]
    table: pd.DataFrame
    fits: pd.DataFrame

    @classmethod
    def from_results(cls, results: list[SmoothedResult]) -> SmoothedCurve:
        """Assemble the curve (table over n and epsilon, exponential fit per epsilon)
        from :class:`SmoothedResult` objects computed for several n."""
        import pandas as pd  # deferred: a smoothed delta needs no data frame until one is asked for

        if not results:
            raise ValueError("results must contain at least one SmoothedResult")
        rows = []
        for r in results:
            df = r.to_frame()
            df.insert(0, "n", r.n)
            df["log_delta"] = r.log_delta_values  # the proven bounds themselves (not log10 * ln 10, an ulp off)
            rows.append(df)
        table = pd.concat(rows, ignore_index=True)
        fits = []
        for ev, g in table.groupby("epsilon", sort=True):
            f = fit_exponential(g["n"], g["log_delta"])
            f["epsilon"] = ev
            fits.append(f)
        cols = ["epsilon", "slope", "intercept", "r2", "log10_slope"]
        return cls(results=list(results), table=table, fits=pd.DataFrame(fits)[cols])

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, object]:
        return {"table": self.table.to_dict(orient="list"), "fits": self.fits.to_dict(orient="list")}

    def __str__(self) -> str:
        lines = ["Smoothed delta vs n (exponential fit log delta = a + b n):"]
        for row in self.fits.itertuples():
            lines.append(f"  epsilon = {row.epsilon:g}: b = {row.slope:.4g} per record (R^2 = {row.r2:.4f})")
        return "\n".join(lines)

    def chart(self) -> Any:
        """Altair chart: smoothed delta against n with the exponential fits (Figure 2, left)."""
        return rendering.chart(self, "smoothed-curve")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return rendering.mimebundle(self, "smoothed-curve")
