"""Tests of the smoothed delta (smoothdp_nb.core.smoothed): Algorithm 1, Monte Carlo, estimates."""
