"""Privacy-loss distributions of one neighbouring pair, and their composition, outward-rounded.

:mod:`.law` holds the loss law of a pair (:class:`~.law.LossDistribution`), :mod:`.pld` its
exact composition, :mod:`.lattice` composition by counting when every loss is a multiple of
one step, :mod:`.grid` the pessimistic grid path for compositions too large to compose exactly,
:mod:`.renyi` proven Rényi divergences of a law (the KL limit included), :mod:`.noise` the
closed-form curves and outward-discretised loss laws of the usual additive noises, :mod:`.rounding` the
outward-rounded log-domain arithmetic they use. Mechanisms build these laws; the accounting of the smoothed half
reads privacy numbers off them.

May import: numpy, scipy and :mod:`smoothdp_nb.core.numerics`.
"""
