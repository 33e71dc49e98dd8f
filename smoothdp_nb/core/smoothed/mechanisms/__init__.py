"""Mechanisms: the public protocol :class:`Mechanism` and its implementations.

* :mod:`.base` -- the protocol (abstract base class) and the code every mechanism inherits,
  with :mod:`.generic` (the privacy profile from every neighbour's output law),
  :mod:`.enumeration` (every histogram of n records), :mod:`.outputs` (which outputs are the
  same output) and :mod:`.rounding` (the small outward-rounded pieces of its templates);
* :mod:`.sampling_histogram` -- :class:`SamplingHistogram` (Algorithm 2, Appendix F), its
  noisy variant :class:`NoisySamplingHistogram` (Algorithm 4) and the sampled winner;
* :mod:`.sampling_average` -- :class:`SamplingAverage` (Algorithm 3) and its count tables;
* :mod:`.size` -- the sample size of both sampling mechanisms (a rate eta or a fixed T);
* :mod:`.finite` -- :class:`FiniteMechanism`, a user's output law;
* :mod:`.postprocess` -- :func:`postprocess` and :data:`winner` (Proposition 4), on the maps of
  :mod:`.output_maps`;
* :mod:`.composed` -- :func:`~.composed.repeat` and :func:`~.composed.joint`;
* :mod:`.noisy` -- :class:`~.noisy.NoisyCount`, the count of one category plus Gaussian,
  Laplace, discrete Gaussian or discrete Laplace noise (closed-form profile and loss laws);
* :mod:`.subsample` -- :func:`~.subsample.subsample`, a mechanism on a Poisson or
  without-replacement sample of the records (:class:`~.subsample.Subsampled`);
* :mod:`.relations` -- the neighbouring relations ``"replace"`` and ``"add-remove"``
  (:func:`~.relations.with_neighbours`).

May import: the numerics and the runtime; nothing else of the smoothed half (the profiles, the
engines and the accounting build on the mechanisms, not the other way round).

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
