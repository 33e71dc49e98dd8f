"""Tests of smoothdp_nb.display."""
