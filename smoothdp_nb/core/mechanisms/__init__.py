"""Mechanisms: the public protocol :class:`Mechanism` and its implementations.

* :mod:`.base` -- the protocol (abstract base class) and its generic code;
* :mod:`.sampling` -- :class:`SamplingHistogram` (Algorithm 2, Appendix F);
* :mod:`.noisy` -- :class:`NoisySamplingHistogram` (Algorithm 4);
* :mod:`.finite` -- :class:`FiniteMechanism`, a user's output law;
* :mod:`.postprocess` -- :func:`postprocess` and :data:`winner` (Proposition 4).

The sampling average (Algorithm 3) lives in :mod:`smoothdp_nb.core.average`.
"""

from ..budget import ComputationTooLarge
from .base import MAX_CELLS, Mechanism, compositions, count_histograms
from .finite import FiniteMechanism
from .noisy import NoisySamplingHistogram
from .postprocess import PostProcessing, postprocess, winner
from .sampling import SamplingHistogram
from .size import sampling_size_spec

__all__ = [
    "MAX_CELLS",
    "ComputationTooLarge",
    "FiniteMechanism",
    "Mechanism",
    "NoisySamplingHistogram",
    "PostProcessing",
    "SamplingHistogram",
    "compositions",
    "count_histograms",
    "postprocess",
    "sampling_size_spec",
    "winner",
]
