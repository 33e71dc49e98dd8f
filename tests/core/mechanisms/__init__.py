"""Tests of the mechanisms (smoothdp_nb.core.smoothed.mechanisms): the protocol, user mechanisms, composition, post-processing."""
