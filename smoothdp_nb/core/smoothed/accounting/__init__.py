"""Privacy accounting read off the mechanisms: inverse curves, privacy-loss distributions, Renyi views.

:mod:`.inverse` finds the smallest epsilon whose delta meets a target; :mod:`.export` is the
privacy-loss distribution of one neighbouring pair as a result object, and its export to
dp_accounting; :mod:`.renyi` the Renyi view per database and averaged over Pi; :mod:`.conversions`
the certified conversions of zCDP, Renyi DP and Gaussian DP to (epsilon, delta), and a mechanism's
epsilon by the Renyi route.  The laws
themselves live in :mod:`smoothdp_nb.core.numerics.privacy_loss`, re-exported here.

May import: the mechanisms, the profiles and the engines of the smoothed half, the numerics and
the runtime; ``dp_accounting`` (the optional extra) only inside the export.
"""

from smoothdp_nb.core.numerics.privacy_loss.pld import ComposedLoss, LossDistribution

__all__ = ["ComposedLoss", "LossDistribution"]
