"""The data-dependent release methods side by side on one dataset: exact output laws and exact utility.

:func:`compare_releases` computes, for each method, its **exact** output law on ``x`` over the
lattice cells (and the refusal ⊥): no sampling.  For the methods of :mod:`.methods` it is their own
law (:func:`.methods.run.method_law`); for smooth sensitivity it is the noise family's probability
of each cell around the statistic, with the scale the release would use
(:func:`.smooth_sensitivity.release` with its diagnostics, on the same inputs).  From the laws come
the mean squared error (given a release), ``P(|error| <= t)``, the probability of returning the true
value and the refusal probability, beside the course notes' bound for unbiased mechanisms
``P(M(x) = f(x)) <= 1 / sum_y e^{-2 D_f(x, y) epsilon}``.

This is an analysis of a dataset, not a release: every number of a :class:`ReleaseComparison` is a
function of the data (the true value included).  Use it on public or synthetic data, to choose a
method, and release with :func:`.smooth_sensitivity.release`.

The errors are measured from the **true value on the lattice**: the lattice point nearest the
statistic (the statistic of the data rounded to the lattice, which the methods of :mod:`.methods`
release).  The smooth-sensitivity law's cell probabilities are floats from the family's scipy
distribution (each cell by the cdf or the survival function, whichever does not cancel); the
others' as in :class:`.methods.base.CellLaw`.

References
----------
Course notes "Differential Privacy for Machine Learning" (Master IASD): the lower bound for unbiased
mechanisms and the inverse sensitivity mechanism.  Wang, Lecture 14 ("Data-dependent DP algorithm
design").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.validation import as_bounds, as_positive
from smoothdp_nb.core.release import lattice as _lattice
from smoothdp_nb.core.release.methods.base import CellLaw
from smoothdp_nb.core.release.methods.inverse_sensitivity import unbiased_bound
from smoothdp_nb.core.release.methods.registry import DEFAULT_METHOD, METHODS, canonical_method, get_method
from smoothdp_nb.core.release.methods.run import check_inputs, lattice_data, method_law
from smoothdp_nb.core.release.noise import get_family
from smoothdp_nb.core.release.smooth_sensitivity import release
from smoothdp_nb.core.runtime import rendering
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget

__all__ = ["ReleaseComparison", "compare_releases", "noise_cell_probabilities"]


def noise_cell_probabilities(
    family: str, shape: float | None, true_value: float, scale: float, step: float, k_lo: int, k_hi: int
) -> FloatArray:
    """``P(K = k)`` for ``K = clamp(round((true + scale Z) / step))`` and every k, from the family's distribution.

    Floats: each cell is ``sf(a) - sf(b)`` above the true value, ``cdf(b) - cdf(a)`` below it and
    ``1 - cdf(a) - sf(b)`` around it, so nothing small is lost to cancellation.
    """
    dist = get_family(family).distribution(shape)
    k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
    a = ((k.astype(float) - 0.5) * step - true_value) / scale
    b = ((k.astype(float) + 0.5) * step - true_value) / scale
    cdf_a, cdf_b = np.asarray(dist.cdf(a), dtype=float), np.asarray(dist.cdf(b), dtype=float)
    sf_a, sf_b = np.asarray(dist.sf(a), dtype=float), np.asarray(dist.sf(b), dtype=float)
    p = np.where(a >= 0, sf_a - sf_b, np.where(b <= 0, cdf_b - cdf_a, 1.0 - cdf_a - sf_b))
    if k.size == 1:
        return np.ones(1)
    p[0] = cdf_b[0]
    p[-1] = sf_a[-1]
    return np.asarray(np.maximum(p, 0.0), dtype=float)


@dataclass(frozen=True)
class ReleaseComparison:
    """Exact laws and utility of several release methods on one dataset (data-dependent: not a release).

    Attributes
    ----------
    laws : dict
        Method name -> :class:`~.methods.base.CellLaw`.
    true_value : float
        The statistic on the lattice (the errors are measured from it).
    epsilon, delta : float
    tolerance : float
        The ``t`` of ``P(|error| <= t)``.
    unbiased_bound : float
        ``1 / sum_y e^{-2 D_f(x, y) epsilon}`` rounded up: no unbiased epsilon-DP mechanism returns the
        true value more often.
    guarantees : dict
        Method name -> its privacy statement.
    """

    laws: dict[str, CellLaw]
    true_value: float
    epsilon: float
    delta: float | None
    tolerance: float
    unbiased_bound: float
    guarantees: dict[str, str] = field(default_factory=dict)
    query: str = "median"
    step: float = 1.0

    @property
    def methods(self) -> list[str]:
        return list(self.laws)

    def law(self, method: str) -> pd.Series:
        """The exact law of ``method``: probabilities indexed by the released value, ``"refused"`` for ⊥."""
        name = canonical_method(method)
        if name not in self.laws:
            raise ValueError(f"method must be one of the compared methods {self.methods}, got {method!r}")
        return self.laws[name].to_series(name)

    def errors(self, method: str) -> pd.Series:
        """The law of the error ``M(x) - f(x)`` given a release (refusals left out, not renormalised)."""
        law = self.laws[canonical_method(method)]
        return pd.Series(law.probabilities, index=pd.Index(law.values - self.true_value, name="error"), name=method)

    def to_frame(self) -> pd.DataFrame:
        """One row per method: guarantee, MSE given a release, P(|error| <= t), P(true value), P(refused), bound."""
        rows = []
        for name, law in self.laws.items():
            err = law.values - self.true_value
            released = float(law.probabilities.sum())
            mse = float(np.dot(law.probabilities, err * err) / released) if released > 0 else math.nan
            within = float(law.probabilities[np.abs(err) <= self.tolerance].sum())
            hit = float(law.probabilities[err == 0].sum())
            rows.append(
                {
                    "method": name,
                    "guarantee": self.guarantees.get(name, ""),
                    "mse": mse,
                    "rmse": math.sqrt(mse) if math.isfinite(mse) else math.nan,
                    "p_within_t": within,
                    "p_true_value": hit,
                    "p_refused": law.refusal,
                    "unbiased_bound": self.unbiased_bound,
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "release-comparison",
            "query": self.query,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "tolerance": self.tolerance,
            "lattice": self.step,
            "unbiased_bound": self.unbiased_bound,
            "rows": self.to_frame().to_dict(orient="records"),
        }

    def __str__(self) -> str:
        d = f", delta = {self.delta:g}" if self.delta is not None else ""
        lines = [
            f"Exact comparison of {len(self.laws)} release methods ({self.query}, epsilon = {self.epsilon:g}{d}, "
            f"t = {self.tolerance:g}); data-dependent, not a release",
            f"no unbiased {self.epsilon:g}-DP mechanism returns the true value with probability above "
            f"{self.unbiased_bound:.4g}",
        ]
        for r in self.to_frame().itertuples(index=False):
            lines.append(
                f"  {r.method:<22} rmse = {r.rmse:<10.4g} P(|err| <= t) = {r.p_within_t:<8.4g} "
                f"P(true) = {r.p_true_value:<8.4g} P(refused) = {r.p_refused:.4g}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<ReleaseComparison {self.query}, epsilon={self.epsilon:g}: {', '.join(self.laws)}>"

    def chart(self) -> Any:
        """Altair chart: the law of the error of each method (refusal probabilities in the legend)."""
        return rendering.chart(self, "release-comparison")

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, Any]:
        return rendering.mimebundle(self, "release-comparison")


def compare_releases(
    x: npt.ArrayLike,
    query: str = "median",
    epsilon: float = 1.0,
    *,
    bounds: tuple[float, float] | None = None,
    lattice: float | None = None,
    methods: Sequence[str] | None = None,
    delta: float | None = None,
    quantile: float | None = None,
    proposal: float | None = None,
    noise: str = "polyplace",
    gamma: float | None = None,
    tolerance: float | None = None,
) -> ReleaseComparison:
    """Exact output laws and utility of release methods on one dataset, side by side.

    Parameters
    ----------
    x : array_like, 1-D
        The data (its laws are data-dependent: use public or synthetic data).
    query : {"median", "quantile"}
    epsilon : float
    bounds : (low, high)
    lattice : float, optional
        A power of two; the laws list every lattice cell, so a coarse lattice (a few thousand cells)
        keeps them small; a lattice with too many cells is refused up front with an estimate.
    methods : sequence of str, optional
        Default: all five (:data:`.methods.registry.METHODS`), smooth sensitivity only for the median.
    delta : float, optional
        For propose-test-release and the stability release (and Laplace smooth-sensitivity noise);
        default ``1e-6``.
    quantile, proposal : float, optional
        As in :func:`.smooth_sensitivity.release`.
    noise, gamma : optional
        The smooth-sensitivity release's noise family and smoothness.
    tolerance : float, optional
        The ``t`` of ``P(|error| <= t)``; default 1/100 of ``high - low``.

    Returns
    -------
    ReleaseComparison

    References
    ----------
    Course notes "Differential Privacy for Machine Learning" (Master IASD): the lower bound for
    unbiased mechanisms.  Wang, Lecture 14 ("Data-dependent DP algorithm design").
    """
    low, high = as_bounds(bounds)
    step = _lattice.default_lattice((low, high)) if lattice is None else _lattice.check_lattice(lattice, (low, high))
    cells = math.floor(high / step) - math.ceil(low / step) + 1
    check_budget(
        Estimate(seconds=cells * 1e-6, bytes=cells * 64.0 * 5),
        DEFAULT_BUDGET_SECONDS,
        f"the exact laws over {cells} lattice cells",
        "pass a coarser lattice= (a larger power of two)",
        parameter="lattice",
    )
    q = query.strip().lower() if isinstance(query, str) else query
    if methods is None:
        names = [m for m in METHODS if q == "median" or m != DEFAULT_METHOD]
    else:
        if isinstance(methods, str):
            raise TypeError("methods must be a sequence of method names, e.g. ['exponential', 'stability']")
        names = list(dict.fromkeys(canonical_method(m) for m in methods))
        if not names:
            raise ValueError(f"methods must name at least one of {METHODS}")
    d = 1e-6 if delta is None else delta
    t = (high - low) / 100 if tolerance is None else as_positive(tolerance, "tolerance")
    # the true value on the lattice, and the unbiased bound, from the ISM's lattice data
    inp = check_inputs("inverse-sensitivity", q, epsilon, bounds=(low, high), lattice=step, quantile=quantile)
    data = lattice_data(x, inp, False)
    true_value = data.true_cell * step
    laws: dict[str, CellLaw] = {}
    guarantees: dict[str, str] = {}
    for name in names:
        if name == DEFAULT_METHOD:
            if q != "median":
                raise ValueError("method 'smooth-sensitivity' compares the median only (query='median')")
            fam = get_family(noise)
            r = release(
                x,
                "median",
                epsilon,
                noise=noise,
                gamma=gamma,
                bounds=(low, high),
                lattice=step,
                delta=d if fam.needs_delta else None,
                diagnostics=True,
                reveal_true=True,
                rng=0,
            )
            assert r.diagnostics is not None and r.true_value is not None
            shape = None if fam.shape_name is None else r.shape
            probs = noise_cell_probabilities(
                fam.name, shape, r.true_value, r.diagnostics.noise_scale, step, data.k_lo, data.k_hi
            )
            cell_ids = np.arange(data.k_lo, data.k_hi + 1, dtype=np.int64)
            laws[name] = CellLaw(cell_ids, probs, 0.0, step, true_value)
            guarantees[name] = f"{r.guarantee} ({fam.name} noise)"
            continue
        kw: dict[str, Any] = {}
        if name in ("propose-test-release", "stability"):
            kw["delta"] = d
        if name == "propose-test-release":
            kw["proposal"] = proposal
        laws[name] = method_law(name, x, q, epsilon, bounds=(low, high), lattice=step, quantile=quantile, **kw)
        obj_inputs = check_inputs(name, q, epsilon, bounds=(low, high), lattice=step, quantile=quantile, **kw)
        guarantees[name] = get_method(name).guarantee(obj_inputs.epsilon, obj_inputs.delta)
    return ReleaseComparison(
        laws=laws,
        true_value=true_value,
        epsilon=float(epsilon),
        delta=d,
        tolerance=t,
        unbiased_bound=unbiased_bound(data, float(epsilon)),
        guarantees=guarantees,
        query=str(q),
        step=step,
    )
