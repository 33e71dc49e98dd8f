"""smoothdp_nb: smoothed differential privacy and smooth-sensitivity releases, for notebooks.

The public API of the numerical core (:mod:`smoothdp_nb.core`) is declared once, by the
imports in the ``TYPE_CHECKING`` block below: type checkers and IDEs read them as imports, and at
run time the same lines are the table of a lazy loader (PEP 562). Every name, and the notebook
layers (:mod:`.display` for charts, :mod:`.panels`, the magic), are imported on first use, so that
``import smoothdp_nb`` costs no numpy, scipy or Altair import (the command line's ``--help``
answers at once), a call loads only the modules it uses, and the package works without a notebook.  The core's result objects find their charts through the renderer
registry :mod:`smoothdp_nb.core.runtime.rendering`, whose loader, installed here,
imports :mod:`.display` the first time a chart or rich display is needed.

What lives here: :mod:`.core` (the numerics and both halves), and above it :mod:`.display`
(charts), :mod:`.panels` (live widgets), :mod:`.magics` (``%%smoothdp``), :mod:`.spec` (TOML
specs), :mod:`.reports` (static HTML) and :mod:`.cli` (the command line, run by
:mod:`.__main__`).  May import: every folder, on first use only; at import time nothing but
the renderer registry of the runtime.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from smoothdp_nb.core.runtime import rendering as _rendering

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

if TYPE_CHECKING:  # the public API, declared once (module docstring), by folder; `X as X` marks a re-export
    from smoothdp_nb.core.data import (
        datasets as datasets,
    )
    from smoothdp_nb.core.numerics.enclosures import (
        LogEnclosure as LogEnclosure,
    )
    from smoothdp_nb.core.numerics.hull import (
        HullReduction as HullReduction,
        reduce_to_vertices as reduce_to_vertices,
    )
    from smoothdp_nb.core.numerics.intervals import (
        betting_interval as betting_interval,
        empirical_bernstein_interval as empirical_bernstein_interval,
    )
    from smoothdp_nb.core.release import (
        exercises as exercises,
        noise as noise,
    )
    from smoothdp_nb.core.release.compare import (
        ReleaseComparison as ReleaseComparison,
        compare_releases as compare_releases,
    )
    from smoothdp_nb.core.release.leak import (
        LocalSensitivityLeak as LocalSensitivityLeak,
        local_sensitivity_leak as local_sensitivity_leak,
    )
    from smoothdp_nb.core.release.noise import (
        calibrate as calibrate,
        noise_std as noise_std,
        optimal_shape as optimal_shape,
    )
    from smoothdp_nb.core.release.odometer import (
        BudgetExceeded as BudgetExceeded,
        PrivacyBudget as PrivacyBudget,
        PrivacyOdometer as PrivacyOdometer,
    )
    from smoothdp_nb.core.release.sensitivity import (
        evaluate_query as evaluate_query,
        local_sensitivity as local_sensitivity,
        sensitivity_at_distance as sensitivity_at_distance,
        smooth_sensitivity as smooth_sensitivity,
    )
    from smoothdp_nb.core.release.smooth_sensitivity import (
        MethodRelease as MethodRelease,
        Release as Release,
        compare_noise as compare_noise,
        default_gamma as default_gamma,
        release as release,
    )
    from smoothdp_nb.core.runtime.budget import (
        ComputationTooLarge as ComputationTooLarge,
    )
    from smoothdp_nb.core.runtime.sweeps import (
        SweepResult as SweepResult,
        monte_carlo_map as monte_carlo_map,
        sweep as sweep,
    )
    from smoothdp_nb.core.smoothed.accounting.conversions import (
        gdp_epsilon as gdp_epsilon,
        gdp_to_dp as gdp_to_dp,
        renyi_epsilon as renyi_epsilon,
        renyi_to_dp as renyi_to_dp,
        zcdp_to_dp as zcdp_to_dp,
    )
    from smoothdp_nb.core.smoothed.accounting.export import (
        PrivacyLossDistribution as PrivacyLossDistribution,
        privacy_loss_distribution as privacy_loss_distribution,
    )
    from smoothdp_nb.core.smoothed.accounting.inverse import (
        dp_epsilon as dp_epsilon,
        profile_epsilon as profile_epsilon,
    )
    from smoothdp_nb.core.smoothed.accounting.renyi import (
        RenyiEnclosure as RenyiEnclosure,
        SmoothedRenyi as SmoothedRenyi,
        renyi_profile as renyi_profile,
        renyi_profile_enclosure as renyi_profile_enclosure,
        smoothed_renyi as smoothed_renyi,
    )
    from smoothdp_nb.core.smoothed.delta import (
        SmoothedCurve as SmoothedCurve,
        SmoothedResult as SmoothedResult,
        fit_exponential as fit_exponential,
        smoothed_delta as smoothed_delta,
        smoothed_delta_curve as smoothed_delta_curve,
        smoothed_epsilon as smoothed_epsilon,
    )
    from smoothdp_nb.core.smoothed.engines.monte_carlo import (
        composition_deltas as composition_deltas,
    )
    from smoothdp_nb.core.smoothed.mechanisms import (
        FiniteMechanism as FiniteMechanism,
        Mechanism as Mechanism,
        NoisySamplingHistogram as NoisySamplingHistogram,
        SamplingAverage as SamplingAverage,
        SamplingHistogram as SamplingHistogram,
        postprocess as postprocess,
        winner as winner,
    )
    from smoothdp_nb.core.smoothed.mechanisms.composed import (
        Joint as Joint,
        Repeat as Repeat,
        joint as joint,
        repeat as repeat,
    )
    from smoothdp_nb.core.smoothed.mechanisms.noisy import (
        NoisyCount as NoisyCount,
        noisy_count as noisy_count,
    )
    from smoothdp_nb.core.smoothed.mechanisms.relations import (
        with_neighbours as with_neighbours,
    )
    from smoothdp_nb.core.smoothed.mechanisms.subsample import (
        Subsampled as Subsampled,
        subsample as subsample,
    )
    from smoothdp_nb.core.smoothed.profiles import (
        Composition as Composition,
        adjusted_utility as adjusted_utility,
        compose as compose,
        dp_delta as dp_delta,
        dp_delta_enclosure as dp_delta_enclosure,
        privacy_profile as privacy_profile,
        privacy_profile_enclosure as privacy_profile_enclosure,
        remark8_bound as remark8_bound,
    )
    from smoothdp_nb.core.smoothed.quantized import (
        QuantizedLaw as QuantizedLaw,
        continuous_limit_profile as continuous_limit_profile,
        quantized_gaussian as quantized_gaussian,
        quantized_laplace as quantized_laplace,
    )


def _declared() -> dict[str, str]:
    """Public name -> the module it is imported from: the ``smoothdp_nb`` imports of the
    ``TYPE_CHECKING`` block above (read once, at import: a few milliseconds, no numpy)."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: node.module
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module is not None and node.module.startswith("smoothdp_nb.")
        for alias in node.names
    }


_WHERE = _declared()
#: the notebook layers, loaded on first use like the core's names
_LAYERS = ("panels", "display", "magics", "spec")

__version__ = "0.1.0"
__all__ = list(_WHERE)


def load_ipython_extension(ip: InteractiveShell) -> None:
    """``%load_ext smoothdp_nb``: register the ``%%smoothdp`` / ``%smoothdp`` magics."""
    from smoothdp_nb.magics import load_ipython_extension as _load  # deferred: IPython, only in a notebook

    _load(ip)


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext smoothdp_nb``: remove the magics."""
    from smoothdp_nb.magics import unload_ipython_extension as _unload  # deferred: IPython

    _unload(ip)


def _load_display() -> None:
    """Import the display package, which registers the result charts (needs Altair)."""
    # deferred: Altair, with the first chart; imported for its side effect (registering the renderers)
    from smoothdp_nb import display  # noqa: F401


_rendering.renderers.set_loader(_load_display)


def __getattr__(name: str) -> object:
    # Everything is loaded on first use: the core's names (numpy, scipy, pandas) and the notebook
    # layers (Altair, ipywidgets).  `python -m smoothdp_nb ... --help` then imports none of them.
    value: object
    if name in _LAYERS:
        value = importlib.import_module(f".{name}", __name__)
    elif name in _WHERE:
        module = importlib.import_module(_WHERE[name])
        # a name defined in the module, or a submodule exported under its own name (noise, datasets)
        value = getattr(module, name) if hasattr(module, name) else importlib.import_module(f"{module.__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
