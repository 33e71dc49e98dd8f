"""Privacy-loss distributions of one neighbouring pair, and their composition, outward-rounded.

:mod:`.law` holds the loss law of a pair (:class:`~.law.LossDistribution`), :mod:`.pld` its
exact composition, :mod:`.grid` the pessimistic
grid path for compositions too large to compose exactly, :mod:`.rounding` the outward-rounded
log-domain arithmetic both use. Mechanisms build these laws; the accounting of the smoothed half
reads privacy numbers off them.

May import: numpy, scipy and :mod:`smoothdp_nb.core.numerics`.
"""
