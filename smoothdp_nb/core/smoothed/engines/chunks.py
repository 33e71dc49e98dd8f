"""How the exact smoothed delta cuts its work: the histograms per call of the privacy profile, and
the size from which a helper thread shares it.

Read by the engine (:mod:`.exact`) and by the up-front estimates (:mod:`.estimate`)."""

from __future__ import annotations

__all__ = ["HELPER_MIN_N", "PROFILE_CHUNK", "profile_chunk_rows"]

# (histogram, epsilon) pairs per call of privacy_profile: its working arrays are
# several hundred bytes per pair (1.4 GB at once for the authors' 21 epsilon at
# n = 10^5), and chunks of this size are no slower (benchmarks/README.md)
PROFILE_CHUNK = 65536

# records from which the two-category exact path shares its work with a helper thread
HELPER_MIN_N = 50_000


def profile_chunk_rows(n_epsilon: int) -> int:
    """Histograms per call of privacy_profile in the exact method."""
    return max(512, PROFILE_CHUNK // max(1, n_epsilon))
