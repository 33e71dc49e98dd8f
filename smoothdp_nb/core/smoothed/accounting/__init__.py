"""Privacy accounting: privacy-loss distributions of neighbouring pairs and their
composition (:mod:`.pld`), inverse curves (epsilon for a target delta), the
export to dp_accounting, and the Renyi view.

This package's ``__init__`` imports only :mod:`.pld` (which the composed
mechanisms need); the user-facing functions live in :mod:`.inverse`,
:mod:`.export` and :mod:`.renyi`, re-exported by :mod:`smoothdp_nb.core`.
"""

from smoothdp_nb.core.numerics.privacy_loss.pld import ComposedLoss, LossDistribution

__all__ = ["ComposedLoss", "LossDistribution"]
