"""Tests of smoothdp_nb.panels."""
