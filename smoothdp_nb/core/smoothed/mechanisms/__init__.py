"""Mechanisms: the public protocol :class:`Mechanism` and its implementations.

* :mod:`.base` -- the protocol (abstract base class) and its generic code;
* :mod:`.sampling` -- :class:`SamplingHistogram` (Algorithm 2, Appendix F);
* :mod:`.noisy` -- :class:`NoisySamplingHistogram` (Algorithm 4);
* :mod:`.finite` -- :class:`FiniteMechanism`, a user's output law;
* :mod:`.sampled_winner` -- the winner of a sampled election in closed form;
* :mod:`.average` -- :class:`SamplingAverage` (Algorithm 3), its tables in
  :mod:`.average_sums` and :mod:`.average_profile`;
* :mod:`.postprocess` -- :func:`postprocess` and :data:`winner` (Proposition 4);
* :mod:`.composed` -- :func:`~.composed.repeat` and :func:`~.composed.joint`.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 2, Algorithm 4, Algorithm 3, Proposition 4.
"""

from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.core.smoothed.mechanisms.base import MAX_CELLS, Mechanism, compositions, count_histograms
from smoothdp_nb.core.smoothed.mechanisms.finite import FiniteMechanism
from smoothdp_nb.core.smoothed.mechanisms.postprocess import PostProcessing, postprocess, winner
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism import SamplingAverage
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism import SamplingHistogram
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.noisy import NoisySamplingHistogram
from smoothdp_nb.core.smoothed.mechanisms.size import sampling_size_spec

__all__ = [
    "MAX_CELLS",
    "ComputationTooLarge",
    "FiniteMechanism",
    "Mechanism",
    "NoisySamplingHistogram",
    "PostProcessing",
    "SamplingAverage",
    "SamplingHistogram",
    "compositions",
    "count_histograms",
    "postprocess",
    "sampling_size_spec",
    "winner",
]
