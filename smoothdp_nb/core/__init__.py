"""The numerical core of smoothdp_nb.

Imports only numpy, scipy and pandas (never IPython, ipywidgets or Altair), so
it can be used from scripts, tests and other libraries.

The public names below are loaded on first use (PEP 562): importing the
package, or one of its light modules such as :mod:`.rendering`, costs no
numpy/scipy import, so that ``python -m smoothdp_nb ... --help`` answers at
once.  ``from smoothdp_nb.core import X`` and ``smoothdp_nb.core.X`` work as
for eagerly imported names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same names, eagerly, for type checkers and IDEs
    from . import datasets, noise
    from .accounting.export import PrivacyLossDistribution, privacy_loss_distribution
    from .accounting.inverse import dp_epsilon, profile_epsilon
    from .accounting.renyi import SmoothedRenyi, renyi_profile, smoothed_renyi
    from .budget import ComputationTooLarge
    from .enclosures import LogEnclosure
    from .hull import HullReduction, reduce_to_vertices
    from .intervals import betting_interval, empirical_bernstein_interval
    from .mechanisms import FiniteMechanism, Mechanism, NoisySamplingHistogram, SamplingAverage, SamplingHistogram
    from .mechanisms.composed import Joint, Repeat, joint, repeat
    from .mechanisms.postprocess import postprocess, winner
    from .noise import calibrate, noise_std, optimal_shape
    from .parallel import available_cpus, process_pool
    from .profiles import Composition, adjusted_utility, compose, dp_delta, privacy_profile, remark8_bound
    from .quantized import QuantizedLaw, continuous_limit_profile, quantized_gaussian, quantized_laplace
    from .release import Release, compare_noise, default_gamma
    from .sensitivity import evaluate_query, local_sensitivity, sensitivity_at_distance, smooth_sensitivity
    from .smoothed import (
        SmoothedCurve,
        SmoothedResult,
        fit_exponential,
        smoothed_delta,
        smoothed_delta_curve,
        smoothed_epsilon,
    )
    from .smoothed.monte_carlo import composition_deltas
    from .sweeps import SweepResult, monte_carlo_map, sweep

#: public name -> the submodule that defines it ("" for a submodule exported under its own name)
_WHERE: dict[str, str] = {
    "datasets": "",
    "SamplingAverage": "mechanisms",
    "QuantizedLaw": "quantized",
    "quantized_gaussian": "quantized",
    "quantized_laplace": "quantized",
    "continuous_limit_profile": "quantized",
    "Mechanism": "mechanisms",
    "SamplingHistogram": "mechanisms",
    "NoisySamplingHistogram": "mechanisms",
    "FiniteMechanism": "mechanisms",
    "postprocess": "mechanisms",
    "winner": "mechanisms",
    "ComputationTooLarge": "budget",
    "privacy_profile": "profiles",
    "dp_delta": "profiles",
    "remark8_bound": "profiles",
    "adjusted_utility": "profiles",
    "compose": "profiles",
    "Composition": "profiles",
    "LogEnclosure": "enclosures",
    "HullReduction": "hull",
    "reduce_to_vertices": "hull",
    "SmoothedResult": "smoothed",
    "SmoothedCurve": "smoothed",
    "smoothed_delta": "smoothed",
    "smoothed_delta_curve": "smoothed",
    "fit_exponential": "smoothed",
    "empirical_bernstein_interval": "intervals",
    "betting_interval": "intervals",
    "sweep": "sweeps",
    "monte_carlo_map": "sweeps",
    "SweepResult": "sweeps",
    "available_cpus": "parallel",
    "process_pool": "parallel",
    "composition_deltas": "smoothed.monte_carlo",
    # ``release`` (the function) is exported by the top-level package only: here the
    # name belongs to the submodule smoothdp_nb.core.release.
    "noise": "",
    "noise_std": "noise",
    "calibrate": "noise",
    "optimal_shape": "noise",
    "Release": "release",
    "compare_noise": "release",
    "default_gamma": "release",
    "local_sensitivity": "sensitivity",
    "smooth_sensitivity": "sensitivity",
    "sensitivity_at_distance": "sensitivity",
    "evaluate_query": "sensitivity",
    # composition and accounting (issue 24)
    "repeat": "mechanisms.composed",
    "joint": "mechanisms.composed",
    "Repeat": "mechanisms.composed",
    "Joint": "mechanisms.composed",
    "profile_epsilon": "accounting.inverse",
    "dp_epsilon": "accounting.inverse",
    "smoothed_epsilon": "smoothed",
    "privacy_loss_distribution": "accounting.export",
    "PrivacyLossDistribution": "accounting.export",
    "renyi_profile": "accounting.renyi",
    "smoothed_renyi": "accounting.renyi",
    "SmoothedRenyi": "accounting.renyi",
}

# spelled out (not list(_WHERE)) so that type checkers see the exports; a test checks the two agree
__all__ = [
    "datasets",
    "SamplingAverage",
    "QuantizedLaw",
    "quantized_gaussian",
    "quantized_laplace",
    "continuous_limit_profile",
    "Mechanism",
    "SamplingHistogram",
    "NoisySamplingHistogram",
    "FiniteMechanism",
    "postprocess",
    "winner",
    "ComputationTooLarge",
    "privacy_profile",
    "dp_delta",
    "remark8_bound",
    "adjusted_utility",
    "compose",
    "Composition",
    "LogEnclosure",
    "HullReduction",
    "reduce_to_vertices",
    "SmoothedResult",
    "SmoothedCurve",
    "smoothed_delta",
    "smoothed_delta_curve",
    "fit_exponential",
    "empirical_bernstein_interval",
    "betting_interval",
    "sweep",
    "monte_carlo_map",
    "SweepResult",
    "available_cpus",
    "process_pool",
    "composition_deltas",
    "noise",
    "noise_std",
    "calibrate",
    "optimal_shape",
    "Release",
    "compare_noise",
    "default_gamma",
    "local_sensitivity",
    "smooth_sensitivity",
    "sensitivity_at_distance",
    "evaluate_query",
    "repeat",
    "joint",
    "Repeat",
    "Joint",
    "profile_epsilon",
    "dp_epsilon",
    "smoothed_epsilon",
    "privacy_loss_distribution",
    "PrivacyLossDistribution",
    "renyi_profile",
    "smoothed_renyi",
    "SmoothedRenyi",
]


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f".{where or name}", __name__)
    value = module if not where else getattr(module, name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
