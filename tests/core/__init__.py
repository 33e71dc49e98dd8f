"""Tests of the numerical core (smoothdp_nb.core): noise, lattice, release, sensitivity, profiles, sweeps."""
