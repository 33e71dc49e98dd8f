"""Tests of the mechanisms (smoothdp_nb.core.mechanisms): the protocol, user mechanisms, composition, post-processing."""
