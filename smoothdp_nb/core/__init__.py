"""The numerical core of smoothdp_nb.

Imports only numpy, scipy and pandas (never IPython, ipywidgets or Altair), so
it can be used from scripts, tests and other libraries.
"""

from . import datasets
from .average import QuantizedLaw, SamplingAverage, continuous_limit_profile, quantized_gaussian, quantized_laplace
from .budget import ComputationTooLarge
from .enclosures import LogEnclosure
from .mechanisms import FiniteMechanism, Mechanism, NoisySamplingHistogram, SamplingHistogram, postprocess, winner
from .profiles import Composition, adjusted_utility, compose, dp_delta, privacy_profile, remark8_bound

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
]

from .hull import HullReduction, reduce_to_vertices
from .intervals import betting_interval, empirical_bernstein_interval
from .smoothed import SmoothedCurve, SmoothedResult, fit_exponential, smoothed_delta, smoothed_delta_curve

__all__ += [
    "HullReduction",
    "reduce_to_vertices",
    "SmoothedResult",
    "SmoothedCurve",
    "smoothed_delta",
    "smoothed_delta_curve",
    "fit_exponential",
    "empirical_bernstein_interval",
    "betting_interval",
]

from .sweeps import SweepResult, monte_carlo_map, sweep

__all__ += ["sweep", "monte_carlo_map", "SweepResult"]

from . import noise
from .noise import calibrate, noise_std, optimal_shape
from .release import Release, compare_noise, default_gamma
from .sensitivity import evaluate_query, local_sensitivity, sensitivity_at_distance, smooth_sensitivity

# ``release`` (the function) is exported by the top-level package only: here the
# name belongs to the submodule smoothdp_nb.core.release.
__all__ += [
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
]
